"""The real model's figures in README*.md and docs/ are written from dskit/tooling/bench/cassettes.json,
which ``dskit bench cassettes --record`` writes by replaying tests/cassettes/; ``gen --check`` fails when
a page differs from it or a cassette is no longer the one it was replayed from. Every figure has what
a model that answers nothing scores beside it (``dskit eval --answers-nothing``).

The replay itself is slow: tests/test_eval_cassettes.py replays every run and compares with the record.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from dskit.tooling import docfigures, generated
from dskit.tooling.bench import cassettes as bench_cassettes
from dskit.tooling.cli import main

ROOT = Path(__file__).resolve().parents[1]
RECORD = json.loads((ROOT / docfigures.CASSETTE_RECORD).read_text(encoding="utf-8"))


def _root_with_cassettes(tmp: Path) -> Path:
    """The pages, the records and the cassettes: enough for the figures generator and its checks."""
    for name in ("README.md", "README_zh.md"):
        shutil.copy(ROOT / name, tmp / name)
    shutil.copytree(ROOT / "docs", tmp / "docs", ignore=shutil.ignore_patterns("*.png"))
    (tmp / "dskit/tooling/bench").mkdir(parents=True)
    for record in (docfigures.CONTEXT_RECORD, docfigures.FLOW_RECORD, docfigures.CASSETTE_RECORD):
        shutil.copy(ROOT / record, tmp / record)
    shutil.copytree(ROOT / docfigures.CASSETTE_DIR, tmp / docfigures.CASSETTE_DIR)
    return tmp


# ---------------------------------------------------------------- the record


def test_the_record_holds_every_run_with_its_baseline() -> None:
    assert list(RECORD["runs"]) == [run.name for run in bench_cassettes.RUNS]
    for run in bench_cassettes.RUNS:
        entry = RECORD["runs"][run.name]
        assert entry["command"] == run.command() and entry["cassette"] == run.cassette
        if run.kind == "eval":  # beside every eval run, the same run answering nothing
            nothing = entry["answers_nothing"]
            # with no command the engine may still open a task the message plainly asks for and run it
            # after the user's yes (issue 40's plain request). On the held-out conversations one such run is
            # wrongful (left open, reported with issue 40): a ceiling, never more
            assert nothing["turns"] == entry["model"]["turns"] and nothing["wrongful"] <= 1
            assert nothing["not_recorded"] == 0
        else:  # a CrossWOZ replay scores the baseline itself, turn by turn
            assert 0 <= entry["model"]["baseline_right"] <= entry["model"]["turns"]


def test_a_replay_in_which_every_turn_failed_is_never_recorded(monkeypatch, tmp_path, capsys) -> None:
    """A stale plugin made every held-out turn of the plugin layout fail (0/31): such figures must not
    reach the docs. `--record` refuses, names the run and leaves cassettes.json as it was."""
    import copy

    record = copy.deepcopy(RECORD)
    assert bench_cassettes.broken_runs(record) == []
    record["runs"]["heldout_plugin"]["model"].update(failed_turns=31, turns=31, turns_right=0)
    assert [line.split(":")[0] for line in bench_cassettes.broken_runs(record)] == ["heldout_plugin"]
    target = tmp_path / "cassettes.json"
    target.write_text("as it was", encoding="utf-8")
    monkeypatch.setattr(bench_cassettes, "RECORD", target)
    monkeypatch.setattr(bench_cassettes, "measure", lambda *_a, **_k: record)
    monkeypatch.setattr(bench_cassettes, "CROSSWOZ_DATA", tmp_path / "val.json.zip")
    (tmp_path / "val.json.zip").write_bytes(b"")
    code = main(["bench", "cassettes", "--record", "--crosswoz", str(tmp_path / "val.json.zip")])
    assert code == 1 and target.read_text(encoding="utf-8") == "as it was"
    assert "heldout_plugin: every one of its 31 turns failed" in capsys.readouterr().err


def test_the_record_names_each_cassette_as_it_is_now() -> None:
    """A cassette re-recorded without `dskit bench cassettes --record` after it fails here (and gen --check)."""
    assert set(RECORD["cassettes"]) == {run.cassette for run in bench_cassettes.RUNS}
    for name, digest in RECORD["cassettes"].items():
        assert bench_cassettes.digest(ROOT / "tests" / "cassettes" / name) == digest, \
            f"{name} changed: run `dskit bench cassettes --record`, then `dskit gen`"


def test_the_pages_mark_the_real_model_figures() -> None:
    marked = {name for page in docfigures.pages(ROOT)
              for name, _ in docfigures.FIGURE.findall(page.read_text(encoding="utf-8"))}
    assert {"real.summary_table", "real.layouts_table", "real.engine.turns_right", "real.engine.nothing.turns_right",
            "real.engine.jga_pct", "real.engine.nothing.jga_pct", "real.heldout_fast.jga_right",
            "real.heldout_fast.nothing.jga_right", "real.crosswoz_teacher_forced.jga_pct",
            "real.crosswoz_teacher_forced.nothing.jga_pct", "real.crosswoz_carried.jga_pct",
            "real.crosswoz_carried.nothing.jga_pct"} <= marked
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    readme_zh = (ROOT / "README_zh.md").read_text(encoding="utf-8")
    for text in (readme, readme_zh):  # the README figures each with its baseline
        for name in ("real.engine.turns_right", "real.engine.jga_pct", "real.heldout_fast.jga_right",
                     "real.crosswoz_teacher_forced.jga_pct", "real.crosswoz_carried.jga_pct"):
            stem, key = name.rsplit(".", 1)
            assert f"fig:{name} -->" in text and f"fig:{stem}.nothing.{key} -->" in text, name


def test_the_summary_table_shows_each_figure_beside_answering_nothing() -> None:
    table = docfigures.figures(ROOT)["real.summary_table"].splitlines()
    assert table[0] == "| run | Qwen2.5-Coder-1.5B Q4 | answers nothing |"
    engine = RECORD["runs"]["engine"]
    right = f"| engine target, shipped suites: turns right | {engine['model']['turns_right']}/74 | " \
            f"{engine['answers_nothing']['turns_right']}/74 |"
    assert right in table
    assert all(row.count("|") == 4 for row in table if row.startswith("|"))


def test_gen_check_fails_when_a_recorded_real_figure_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture) -> None:
    root = _root_with_cassettes(tmp_path)
    monkeypatch.setattr(generated, "GENERATORS", [docfigures.generate_doc_figures])
    assert main(["gen", "--check", "--root", str(root)]) == 0
    capsys.readouterr()
    record = json.loads((root / docfigures.CASSETTE_RECORD).read_text(encoding="utf-8"))
    record["runs"]["crosswoz_carried"]["model"]["jga_right"] += 20  # re-recorded: the carried run moved on
    (root / docfigures.CASSETTE_RECORD).write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    assert main(["gen", "--check", "--root", str(root)]) == 1
    err = capsys.readouterr().err
    assert "README.md" in err and "README_zh.md" in err and "docs/eval.md" in err
    assert "fig:real.crosswoz_carried.jga_pct" in err and "fig:real.summary_table" in err
    assert main(["gen", "--root", str(root)]) == 0  # `dskit gen` writes the new figures where they are marked
    assert main(["gen", "--check", "--root", str(root)]) == 0


def test_gen_check_fails_when_a_cassette_is_re_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture) -> None:
    """Without replaying anything: the record names each cassette's digest, and a new recording differs."""
    root = _root_with_cassettes(tmp_path)
    monkeypatch.setattr(generated, "GENERATORS", [docfigures.generate_doc_figures])
    cassette = root / docfigures.CASSETTE_DIR / bench_cassettes.CROSSWOZ
    lines = gzip.decompress(cassette.read_bytes()).decode("utf-8").splitlines()
    cassette.write_bytes(gzip.compress(("\n".join(lines[:-1]) + "\n").encode("utf-8")))  # one answer less
    assert main(["gen", "--check", "--root", str(root)]) == 1
    err = capsys.readouterr().err
    assert f"{bench_cassettes.CROSSWOZ} changed since its figures were replayed" in err
    assert "dskit bench cassettes --record" in err
    # `dskit gen` cannot fix that (it never replays): it says so and fails
    assert main(["gen", "--root", str(root)]) == 1
    assert "dskit bench cassettes --record" in capsys.readouterr().err


def test_a_note_stands_beside_a_figure_with_requests_not_recorded() -> None:
    """The carried CrossWOZ run is being re-recorded: until then its figure is a floor, and says so."""
    figures = docfigures._real_figures(RECORD)  # noqa: SLF001 - the generator's own derivation
    carried = RECORD["runs"]["crosswoz_carried"]["model"]
    if carried["not_recorded"]:
        assert str(carried["not_recorded"]) in figures["real.crosswoz_carried.unrecorded_en"]
        assert str(carried["not_recorded"]) in figures["real.crosswoz_carried.unrecorded_zh"]
    done = json.loads(json.dumps(RECORD))
    done["runs"]["crosswoz_carried"]["model"]["not_recorded"] = 0
    figures = docfigures._real_figures(done)  # noqa: SLF001
    assert figures["real.crosswoz_carried.unrecorded_en"] == "" == figures["real.crosswoz_carried.unrecorded_zh"]
    assert "*" not in figures["real.summary_table"].split("CrossWOZ carried")[1].splitlines()[0]
