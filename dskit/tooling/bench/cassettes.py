"""``dskit bench cassettes``: the real-model figures, replayed from the answers recorded in tests/cassettes/.

The cassettes hold a real model's answer to every request of a run (``dskit eval`` / ``dskit replay
--from llm`` with ``--record``; tests/test_eval_cassettes.py says which model and how). Replaying one
runs today's engine and Chatflows on those answers offline. This bench replays every run the docs
quote (:data:`RUNS`) and, beside each ``dskit eval`` run, the same run with a model that answers
nothing (``--answers-nothing``; a CrossWOZ replay computes that baseline itself). ``--record`` writes
the figures and the digest of each cassette to ``cassettes.json``, from which ``dskit gen`` writes the
marked real-model figures of README*.md and docs/ (:mod:`dskit.tooling.docfigures`).

So after re-recording a cassette, or an engine change that moves a figure::

    .venv/bin/dskit bench cassettes --record && .venv/bin/dskit gen

``dskit gen --check`` fails while ``cassettes.json`` names another digest than a cassette has (it
reads the files, it never replays), and the slow test tests/test_eval_cassettes.py replays every run
and fails when what it gets differs from ``cassettes.json``. A run takes from seconds (the engine
target) to minutes (the Chatflows in graphon), so a progress line on stderr names the run.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
RECORD = Path(__file__).resolve().parent / "cassettes.json"
CASSETTE_DIR = "tests/cassettes"
CROSSWOZ_DATA = ROOT.parent / "shared" / "data" / "crosswoz" / "val.json.zip"  # docs/replay.md#getting-the-data
MODEL = "qwen-1.5b"
HELDOUT = "examples/eval/heldout"
HELDOUT2 = "examples/eval/heldout2"  # issue 40: written before any model-side tuning
NOT_RECORDED = "not in the cassette"
DATA = "{crosswoz}"  # stands for the CrossWOZ file in a run's arguments


@dataclass(frozen=True)
class Run:
    """One recorded run: the ``dskit`` arguments it replays with (before the model options)."""

    name: str
    cassette: str
    args: tuple[str, ...]

    @property
    def kind(self) -> str:
        return "eval" if self.args[0] == "eval" else "crosswoz"

    def command(self) -> str:
        """The command line as a user types it (the docs show it)."""
        args = ["val.json.zip" if a == DATA else a for a in self.args]
        return " ".join(["dskit", *args, "--model", MODEL, "--replay", f"{CASSETTE_DIR}/{self.cassette}"])


ENGINE = "engine_qwen-1.5b.jsonl"
HELDOUT_CASSETTE = "heldout_qwen-1.5b.jsonl"
HELDOUT2_CASSETTE = "heldout2_qwen-1.5b.jsonl"
CROSSWOZ = "crosswoz_qwen-1.5b.jsonl.gz"
_CROSSWOZ_LLM = ("replay", "crosswoz", DATA, "--from", "llm")
RUNS: tuple[Run, ...] = (
    Run("engine", ENGINE, ("eval",)),
    Run("heldout_fast", HELDOUT_CASSETTE, ("eval", "--target", "flow", "--layout", "fast", HELDOUT)),
    Run("heldout_classic", HELDOUT_CASSETTE, ("eval", "--target", "flow", "--layout", "classic", HELDOUT)),
    Run("heldout_plugin", HELDOUT_CASSETTE, ("eval", "--target", "flow", "--layout", "plugin", HELDOUT)),
    Run("heldout_ask", HELDOUT_CASSETTE, ("eval", "--target", "flow", "--layout", "fast", "--ungrounded", "ask",
                                          HELDOUT)),
    Run("heldout2_fast", HELDOUT2_CASSETTE, ("eval", "--target", "flow", "--layout", "fast", HELDOUT2)),
    Run("crosswoz_teacher_forced", CROSSWOZ, (*_CROSSWOZ_LLM, "--limit", "8", "--teacher-forcing")),
    Run("crosswoz_carried", CROSSWOZ, (*_CROSSWOZ_LLM, "--limit", "3")),
    Run("crosswoz_typo", CROSSWOZ, (*_CROSSWOZ_LLM, "--limit", "2", "--teacher-forcing", "--noise", "typo",
                                    "--seed", "0")),
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "cassettes",
        help="the real-model figures: replay the recorded model answers (tests/cassettes), beside a model "
             "that answers nothing",
        description="Replay every recorded real-model run (tests/cassettes/) through today's engine and "
                    "Chatflows, offline, with the baseline of a model that answers nothing beside each. "
                    "--record writes the figures to dskit/tooling/bench/cassettes.json, from which `dskit gen` "
                    "writes the real-model figures in README*.md and docs/.")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--record", action="store_true",
                        help="also write the figures to dskit/tooling/bench/cassettes.json (then run `dskit gen`)")
    parser.add_argument("--crosswoz", type=Path, default=CROSSWOZ_DATA, metavar="PATH",
                        help="the CrossWOZ validation set, val.json.zip (docs/replay.md#getting-the-data; "
                             "default ../shared/data/crosswoz/val.json.zip)")
    parser.set_defaults(func=run)


def digest(path: Path) -> str:
    """sha256 of a cassette's bytes: the record names the answers its figures come from."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


NOTES: dict[str, None] = {}  # what the replays said on stderr (a cassette's cut answers), each line once


def _dskit_json(argv: list[str]) -> tuple[int, dict[str, Any]]:
    """Run ``dskit ARGV --json`` in this process: (exit status, the JSON it printed). Its stderr lines
    are kept in :data:`NOTES` (every run of a cassette warns alike) and printed once at the end."""
    from dskit.tooling.parser import run_command  # noqa: PLC0415 - it imports every command

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run_command([*argv, "--json"])
    NOTES.update(dict.fromkeys(line for line in err.getvalue().splitlines() if line.strip()))
    text = out.getvalue()
    if not text.strip():
        raise RuntimeError(f"`dskit {' '.join(argv)} --json` printed nothing (exit status {code})")
    return code, json.loads(text)


def _rate_count(rate: float | None, total: int) -> int:
    return round((rate or 0) * total)


def eval_figures(figures: dict[str, Any], errors: list[str]) -> dict[str, Any]:
    """The figures of one ``dskit eval`` run as the docs state them: counts, with their totals."""
    return {
        "turns": figures["turns"],
        "turns_right": _rate_count(figures["turn_accuracy"], figures["turns"]),
        "jga_right": _rate_count(figures["jga"], figures["jga_turns"]), "jga_turns": figures["jga_turns"],
        "slot_f1": figures["slot_f1"],
        "executions": figures["executions"], "wrongful": figures["wrongful_executions"],
        "task_success": _rate_count(figures["task_success"], figures["expected_executions"]),
        "expected_executions": figures["expected_executions"],
        "unasked_writes": figures["unasked_writes"], "wrong_writes": figures["wrong_writes"],
        "llm_calls_per_turn": figures["llm_calls_per_turn"],
        "prompt_tokens_per_turn": figures["prompt_tokens_per_turn"],
        "completion_tokens_per_turn": figures["completion_tokens_per_turn"],
        "unreadable_rate": figures["unreadable_rate"],
        "failed_turns": figures["errors"], "not_run": figures["not_run"],
        "not_recorded": sum(NOT_RECORDED in line for line in errors),
        "causes": {cause: n for cause, n in figures["causes"].items() if n},
    }


def crosswoz_figures(result: dict[str, Any]) -> dict[str, Any]:
    """The figures of one ``dskit replay crosswoz --from llm`` run, with the answers-nothing baseline."""
    turns = result["turns"]
    out = {
        "dialogues": result["dialogues"], "turns": turns,
        "jga": result["jga"], "jga_right": _rate_count(result["jga"], turns),
        "baseline_right": _rate_count(result["baseline_jga"], turns),
        "changed_turns": result["changed_turns"], "changed_correct": result["changed_correct"],
        "unchanged_turns": result["unchanged_turns"], "broken_unchanged": result["broken_unchanged"],
        "slot_accuracy": result["slot_accuracy"],
        "llm_calls": result["llm_calls"], "failed_calls": result["failed_calls"],
        "not_recorded": result["not_recorded"], "unreadable": result["unreadable"],
        "prompt_tokens_per_turn": result["prompt_tokens_per_turn"],
        "completion_tokens_per_turn": result["completion_tokens_per_turn"],
        "domains": result["domains"],
    }
    if "clean_jga" in result:
        out.update(clean_jga=result["clean_jga"], clean_jga_right=_rate_count(result["clean_jga"], turns),
                   clean_slot_accuracy=result["clean_slot_accuracy"])
    return out


def _argv(run: Run, crosswoz: Path) -> list[str]:
    args = [str(crosswoz) if a == DATA else str(ROOT / a) if a in (HELDOUT, HELDOUT2) else a for a in run.args]
    return [*args, "--model", MODEL, "--replay", str(ROOT / CASSETTE_DIR / run.cassette)]


def replay_run(run: Run, crosswoz: Path = CROSSWOZ_DATA) -> dict[str, Any]:
    """One recorded run replayed: its figures (see :func:`eval_figures`, :func:`crosswoz_figures`)."""
    if run.kind == "eval":
        _code, result = _dskit_json([*_argv(run, crosswoz), "--quiet"])
        only = result["runs"][0]
        return eval_figures(only["figures"], only["errors"])
    if not crosswoz.is_file():
        raise FileNotFoundError(f"{crosswoz}: the CrossWOZ validation set is not there "
                                "(docs/replay.md#getting-the-data; --crosswoz PATH)")
    _code, result = _dskit_json(_argv(run, crosswoz))
    return crosswoz_figures(result)


def nothing_run(run: Run) -> dict[str, Any] | None:
    """The same ``dskit eval`` run with a model that answers nothing (None for a CrossWOZ run, whose
    replay computes that baseline turn by turn)."""
    if run.kind != "eval":
        return None
    args = [str(ROOT / a) if a in (HELDOUT, HELDOUT2) else a for a in run.args]
    _code, result = _dskit_json([*args, "--answers-nothing", "--quiet"])
    only = result["runs"][0]
    return eval_figures(only["figures"], only["errors"])


def measure(crosswoz: Path = CROSSWOZ_DATA, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Every run of :data:`RUNS` replayed, the baseline beside each eval run: what ``--record`` writes."""
    runs: dict[str, Any] = {}
    for run in RUNS:
        if progress is not None:
            progress(run.name)
        entry: dict[str, Any] = {"command": run.command(), "cassette": run.cassette, "model": replay_run(run, crosswoz)}
        if run.kind == "eval":
            if progress is not None:
                progress(f"{run.name}, answering nothing")
            entry["answers_nothing"] = nothing_run(run)
        runs[run.name] = entry
    cassettes = sorted({run.cassette for run in RUNS})
    return {"command": "dskit bench cassettes --record", "model": MODEL,
            "cassettes": {name: digest(ROOT / CASSETTE_DIR / name) for name in cassettes}, "runs": runs}


def format_table(record: dict[str, Any]) -> str:
    """One line per run: the model's figures, then what answering nothing scores."""
    lines = [f"{'run':<26} {'model':<42} answers nothing"]
    for name, entry in record["runs"].items():
        model, nothing = entry["model"], entry.get("answers_nothing")
        if "jga_turns" in model:
            shown = (f"right {model['turns_right']}/{model['turns']}, JGA {model['jga_right']}/{model['jga_turns']}, "
                     f"wrongful {model['wrongful']}")
            base = (f"right {nothing['turns_right']}/{nothing['turns']}, "
                    f"JGA {nothing['jga_right']}/{nothing['jga_turns']}")
        else:
            shown = (f"JGA {model['jga_right']}/{model['turns']}, "
                     f"changed {model['changed_correct']}/{model['changed_turns']}")
            base = f"JGA {model['baseline_right']}/{model['turns']}"
        if model["not_recorded"]:
            shown += f" ({model['not_recorded']} not recorded)"
        lines.append(f"{name:<26} {shown:<42} {base}")
    return "\n".join(lines)


def broken_runs(record: dict[str, Any]) -> list[str]:
    """One line per eval run in which no turn ran through (every turn failed or was not run): the replay
    itself broke — a stale plugin or DSL, say — and its figures must not become the docs' figures."""
    broken = []
    for name, entry in record["runs"].items():
        model = entry["model"]
        turns = model.get("turns") or 0
        if "jga_turns" in model and turns and (model.get("failed_turns") or 0) + (model.get("not_run") or 0) >= turns:
            broken.append(f"{name}: every one of its {turns} turns failed (a stale plugin or Chatflow? run "
                          "`dskit gen`, then this bench again)")
    return broken


def run(args: argparse.Namespace) -> int:
    if not (ROOT / CASSETTE_DIR).is_dir():
        print(f"dskit bench cassettes: no {CASSETTE_DIR}/ here (run from a source checkout)", file=sys.stderr)
        return 2
    if not args.crosswoz.is_file():
        print(f"dskit bench cassettes: {args.crosswoz}: no CrossWOZ validation set there; get it as "
              "docs/replay.md#getting-the-data says and give --crosswoz PATH", file=sys.stderr)
        return 2
    from dskit.tooling.progress import counted  # noqa: PLC0415

    # the bar draws on this stderr, not on the replays' redirected one (counted fixes its stream at the start)
    with counted("bench cassettes", sum(2 if run.kind == "eval" else 1 for run in RUNS)) as bar:
        record = measure(args.crosswoz, bar.begin)
    print(json.dumps(record, ensure_ascii=False, indent=1) if args.json else format_table(record))
    for line in NOTES:
        print(line, file=sys.stderr)
    broken = broken_runs(record)
    for line in broken:
        print(f"dskit bench cassettes: {line}", file=sys.stderr)
    if args.record and broken:
        print(f"dskit bench cassettes: {RECORD.name} left as it was", file=sys.stderr)
        return 1
    if args.record:
        RECORD.write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"recorded in {RECORD.name}; `dskit gen` writes its figures into README*.md and docs/", file=sys.stderr)
    return 0
