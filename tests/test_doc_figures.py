"""Figures in README*.md and docs/ come from what the benches recorded; a stale one fails `gen --check`.

Also: nothing a user reads names the project's private source documents ("seed 000"), and the
bench that fails on purpose says so instead of printing an alarming log line.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from dskit.tooling import docfigures, generated
from dskit.tooling.bench import flow as bench_flow
from dskit.tooling.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
SEED_JARGON = re.compile(r"seeds? ?\d{3}|seed\d{3}|种子(文章)? ?\d{3}", re.I)


def _copy_pages(tmp: Path) -> Path:
    """A root with the pages, the recorded figures and the cassettes (enough for the figures generator)."""
    for name in ("README.md", "README_zh.md"):
        shutil.copy(ROOT / name, tmp / name)
    shutil.copytree(ROOT / "docs", tmp / "docs", ignore=shutil.ignore_patterns("*.png"))
    (tmp / "dskit/tooling/bench").mkdir(parents=True)
    for record in (docfigures.CONTEXT_RECORD, docfigures.FLOW_RECORD, docfigures.CASSETTE_RECORD):
        shutil.copy(ROOT / record, tmp / record)
    shutil.copytree(ROOT / docfigures.CASSETTE_DIR, tmp / docfigures.CASSETTE_DIR)  # their digests are checked
    return tmp


def test_every_marked_figure_matches_its_recorded_source() -> None:
    assert list(docfigures.differences(ROOT)) == []


def test_the_pages_carry_the_bench_figures() -> None:
    """The figures the issue found stale are marked, so they are checked from now on."""
    marked = {name for page in docfigures.pages(ROOT)
              for name, _ in docfigures.FIGURE.findall(page.read_text(encoding="utf-8"))}
    assert {"context.table", "context.ratio_30", "context.growth_10_50", "context.window10_visible_30",
            "context.budget_table", "flow.fast.llm_calls", "flow.ratio.prompt_chars"} <= marked
    assert "<!-- help -->" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_gen_check_fails_when_a_recorded_figure_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture) -> None:
    root = _copy_pages(tmp_path)
    monkeypatch.setattr(generated, "GENERATORS", [docfigures.generate_doc_figures])
    assert main(["gen", "--check", "--root", str(root)]) == 0
    capsys.readouterr()
    record = json.loads((root / docfigures.CONTEXT_RECORD).read_text(encoding="utf-8"))
    record["default"]["full"][record["default"]["turns"].index(30)] += 500  # the bench moved on
    (root / docfigures.CONTEXT_RECORD).write_text(json.dumps(record), encoding="utf-8")
    assert main(["gen", "--check", "--root", str(root)]) == 1
    err = capsys.readouterr().err
    assert "README.md" in err and "docs/context.md" in err and "fig:context.ratio_30" in err
    # and `dskit gen` writes the new figure where it is marked
    assert main(["gen", "--root", str(root)]) == 0
    assert main(["gen", "--check", "--root", str(root)]) == 0


def test_gen_check_fails_when_a_page_is_edited_by_hand(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture) -> None:
    root = _copy_pages(tmp_path)
    monkeypatch.setattr(generated, "GENERATORS", [docfigures.generate_doc_figures])
    page = root / "docs" / "context.md"
    text = page.read_text(encoding="utf-8")
    shown = docfigures.figures(root)["context.ratio_30"]
    page.write_text(text.replace(f"<!-- fig:context.ratio_30 -->{shown}<!--", "<!-- fig:context.ratio_30 -->4.2x<!--"),
                    encoding="utf-8")
    assert main(["gen", "--check", "--root", str(root)]) == 1
    assert f"shows '4.2x', recorded '{shown}'" in capsys.readouterr().err


def test_a_mark_naming_no_recorded_figure_is_an_error(tmp_path: Path) -> None:
    root = _copy_pages(tmp_path)
    page = root / "docs" / "tokens.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n<!-- fig:context.no_such -->1<!-- /fig -->\n",
                    encoding="utf-8")
    assert any("fig:context.no_such is no recorded figure" in line for line in docfigures.differences(root))


def test_the_readme_help_block_is_dskit_help(tmp_path: Path) -> None:
    root = _copy_pages(tmp_path)
    assert list(docfigures.differences(root)) == []
    lines = list(docfigures.differences(root, help_source=lambda: "usage: dskit [-h]\n  new   a command\n"))
    assert lines == ["README.md: the `dskit --help` block differs from `dskit --help`"]
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert docfigures.help_text() in text


def _helps(parser=None) -> list[str]:  # noqa: ANN001 - argparse parsers of every level
    """The help text of ``dskit`` and of every command and sub-command."""
    import argparse

    parser = parser or build_parser()
    texts = [parser.format_help()]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                texts += _helps(sub)
    return texts


@pytest.mark.parametrize("page", docfigures.pages(ROOT), ids=lambda p: p.name)
def test_no_page_a_user_reads_names_a_seed_document(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    if page.name == "README.md":  # the help block is checked against `dskit --help` below
        text = docfigures.HELP_BLOCK.sub("", text)
    assert not SEED_JARGON.findall(text), [m.group(0) for m in SEED_JARGON.finditer(text)]


def test_no_help_text_names_a_seed_document() -> None:
    found = [m.group(0) for text in _helps() for m in SEED_JARGON.finditer(text)]
    assert not found


def test_the_deliberate_failure_of_bench_flow_is_labelled_expected() -> None:
    from dskit.tooling.dslrun.scenarios import SCENARIO_DIR, load_scenarios

    names = {s.name for s in load_scenarios(SCENARIO_DIR)}
    assert set(bench_flow.EXPECTED_FAILURES) <= names  # a renamed scenario would lose its label
    lines = bench_flow.log_report([
        ("task_api_unreachable", "fast", "http request node call_api failed to run: Server disconnected"),
        ("task_api_unreachable", "fast", "http request node call_api failed to run: Server disconnected"),
        ("rollback", "classic", "something else went wrong"),
    ])
    assert len(lines) == 2
    assert lines[0].startswith("expected, from scenario task_api_unreachable") and "on purpose" in lines[0]
    assert lines[1].startswith("graphon log, scenario rollback (classic)")


def test_graphon_warnings_are_collected_not_printed(capsys: pytest.CaptureFixture) -> None:
    import logging

    with bench_flow.collected_graphon_logs() as logs:
        logs.where = ("task_api_unreachable", "fast")
        logging.getLogger("graphon.nodes.http_request.node").warning("http request node %s failed", "call_api")
    assert logs.lines == [("task_api_unreachable", "fast", "http request node call_api failed")]
    assert "failed" not in capsys.readouterr().err


@pytest.mark.slow
def test_the_recorded_context_figures_are_what_the_bench_measures_today() -> None:
    """The engine changed since the record? Then `dskit bench context --record` and `dskit gen`."""
    from dskit.tooling.bench.context import run_bench

    recorded = json.loads((ROOT / docfigures.CONTEXT_RECORD).read_text(encoding="utf-8"))["default"]
    fresh = run_bench()
    assert {k: fresh[k] for k in ("turns", "full", "window10", "dskit", "slots_visible", "confirmed_slots")} == \
        {k: recorded[k] for k in ("turns", "full", "window10", "dskit", "slots_visible", "confirmed_slots")}
