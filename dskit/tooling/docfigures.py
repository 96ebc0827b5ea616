"""Figures in the READMEs and docs/ written from what the benches recorded, so they cannot drift.

A figure in a page is marked with its name::

    at 30 turns <!-- fig:context.ratio_30 -->4.4x<!-- /fig --> smaller

and a whole table the same way, with the marks on lines of their own and blank lines around the
table (a comment line inside a Markdown table would end it). The value
between the marks is always what :func:`figures` derives from the recorded JSON of a bench
(``dskit bench context --record``, ``dskit bench flow --record``, and for the real model's figures
``dskit bench cassettes --record``, which replays the cassettes of tests/cassettes/), formatted as the
page shows it. ``dskit gen`` rewrites the marked text; ``dskit gen --check`` fails when a page shows
another value, names a figure no bench records, when a cassette is not the one its figures were
replayed from (its digest differs: it was re-recorded since), or when README.md's ``dskit --help``
block differs from the command's own help. Why: figures copied by hand went stale while the benches
moved on (issue 21).

Nothing here runs a bench or replays a cassette: checking is reading JSON, text and the cassettes'
bytes, well under a second.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

CONTEXT_RECORD = "dskit/tooling/bench/context.json"
FLOW_RECORD = "dskit/tooling/bench/flow.json"
CASSETTE_RECORD = "dskit/tooling/bench/cassettes.json"
CASSETTE_DIR = "tests/cassettes"
REFRESH_REAL = "`dskit bench cassettes --record`, then `dskit gen`"
# The causes a turn that is not right is attributed to (dskit/tooling/eval/causes.py), as the record names them.
CAUSES = ("model_omitted", "model_wrong", "grounding_let_wrong", "grounding_refused", "policy", "model_failed")
FIGURE = re.compile(r"<!-- fig:([A-Za-z0-9_.]+) -->(.*?)<!-- /fig -->", re.S)
HELP_BLOCK = re.compile(r"(<!-- help -->\n```\n\$ \.venv/bin/dskit --help\n)(.*?)(```\n<!-- /help -->)", re.S)
HELP_WIDTH = 100  # the help block is `COLUMNS=102 dskit --help`: argparse wraps at the terminal width


def pages(root: Path) -> list[Path]:
    """Everything a user reads that may carry figures: both READMEs and docs/*.md."""
    found = [root / name for name in ("README.md", "README_zh.md")]
    found += sorted((root / "docs").glob("*.md"))
    return [page for page in found if page.is_file()]


def _load(root: Path, relative: str) -> dict[str, Any] | None:
    path = root / relative
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def _num(value: float) -> str:
    """1958 -> "1,958" (the pages write thousands with a comma)."""
    return f"{value:,.0f}"


def _pct(share: float) -> str:
    return f"{share:.0%}"


def _context_table(run: dict[str, Any]) -> str:
    """docs/context.md's main table: tokens per series, ratio, slots and visibility."""
    rows = ["| turns | full history | last 10 turns | dskit | full / dskit | confirmed slots | visible: full | "
            "window | dskit |", "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for i, turns in enumerate(run["turns"]):
        full, window, dskit = run["full"][i], run["window10"][i], run["dskit"][i]
        visible = run["slots_visible"]
        rows.append(f"| {turns} | {_num(full)} | {_num(window)} | {_num(dskit)} | {full / dskit:.1f}x | "
                    f"{run['confirmed_slots'][i]} | {_pct(visible['full'][i])} | {_pct(visible['window10'][i])} | "
                    f"{_pct(visible['dskit'][i])} |")
    return "\n".join(rows)


def _at(run: dict[str, Any], series: str, turns: int) -> float:
    return run[series][run["turns"].index(turns)]


def _context_figures(prefix: str, run: dict[str, Any]) -> dict[str, str]:
    """The figures of one recorded ``bench context`` run under ``prefix``."""
    ratio = _at(run, "full", 30) / _at(run, "dskit", 30)
    growth = _at(run, "dskit", 50) / _at(run, "dskit", 10)
    window_visible = run["slots_visible"]["window10"][run["turns"].index(30)]
    dskit_visible = min(run["slots_visible"]["dskit"])
    return {
        f"{prefix}.table": _context_table(run),
        f"{prefix}.ratio_30": f"{ratio:.1f}x",
        f"{prefix}.growth_10_50": f"{growth:.2f}x",
        f"{prefix}.full_30": _num(_at(run, "full", 30)),
        f"{prefix}.dskit_30": _num(_at(run, "dskit", 30)),
        f"{prefix}.window10_visible_30": _pct(window_visible),
        f"{prefix}.window10_lost_30": _pct(1 - window_visible),
        f"{prefix}.dskit_visible": _pct(dskit_visible),
        f"{prefix}.seeds": str(run["seeds"]),
    }


def _budget_table(budgets: dict[str, dict[str, Any]], default: int) -> str:
    rows = ["| history budget | dskit tokens at 10 / 30 / 50 turns | full / dskit at 30 | growth 10→50 | slots visible |",
            "| ---: | --- | ---: | ---: | ---: |"]
    for budget, run in sorted(budgets.items(), key=lambda item: int(item[0])):
        label = f"**{budget} (default)**" if int(budget) == default else budget
        tokens = " / ".join(_num(_at(run, "dskit", n)) for n in (10, 30, 50))
        rows.append(f"| {label} | {tokens} | {_at(run, 'full', 30) / _at(run, 'dskit', 30):.1f}x | "
                    f"{_at(run, 'dskit', 50) / _at(run, 'dskit', 10):.2f}x | "
                    f"{_pct(min(run['slots_visible']['dskit']))} |")
    return "\n".join(rows)


def _flow_figures(record: dict[str, Any]) -> dict[str, str]:
    """``bench flow`` over the suites both layouts run (the like-for-like comparison)."""
    shared = record["shared_turns"]
    out = {"flow.shared_turns": str(shared["fast"]["turns"])}
    for layout in ("fast", "classic"):
        row = shared[layout]
        out[f"flow.{layout}.llm_calls"] = f"{row['llm_calls']['mean']:.2f}"
        out[f"flow.{layout}.llm_calls_1"] = f"{row['llm_calls']['mean']:.1f}"
        out[f"flow.{layout}.llm_max"] = str(row["llm_calls"]["max"])
        out[f"flow.{layout}.code_runs"] = f"{row['code_runs']['mean']:.1f}"
        out[f"flow.{layout}.prompt_chars"] = _num(row["prompt_chars"]["mean"])
    ratio = record["ratio_classic_over_fast"]
    out["flow.ratio.llm_calls"] = f"{ratio['llm_calls']:.2f}"
    out["flow.ratio.prompt_chars"] = f"{ratio['prompt_chars']:.2f}"
    return out


# ---------------------------------------------------------------- the real model (cassettes replayed)


def _pct1(share: float) -> str:
    return f"{share:.1%}"


def _of(right: int, total: int) -> str:
    return f"{right}/{total}"


def _eval_run(prefix: str, d: dict[str, Any]) -> dict[str, str]:
    """One ``dskit eval`` run's figures (the model's or the answers-nothing baseline's) under ``prefix``."""
    return {
        f"{prefix}.turns": str(d["turns"]),
        f"{prefix}.turns_right": _of(d["turns_right"], d["turns"]),
        f"{prefix}.turns_right_n": str(d["turns_right"]),
        f"{prefix}.turns_right_pct": _pct1(d["turns_right"] / d["turns"]),
        f"{prefix}.jga_right": _of(d["jga_right"], d["jga_turns"]),
        f"{prefix}.jga_pct": _pct1(d["jga_right"] / d["jga_turns"]),
        f"{prefix}.jga": f"{_of(d['jga_right'], d['jga_turns'])} ({_pct1(d['jga_right'] / d['jga_turns'])})",
        f"{prefix}.task_success": _of(d["task_success"], d["expected_executions"]),
        f"{prefix}.executions": str(d["executions"]),
        f"{prefix}.wrongful": str(d["wrongful"]),
        f"{prefix}.unasked_writes": str(d["unasked_writes"]),
        f"{prefix}.wrong_writes": str(d["wrong_writes"]),
        f"{prefix}.not_recorded": str(d["not_recorded"]),
        f"{prefix}.llm_calls_per_turn": f"{d['llm_calls_per_turn']:.2f}",
        f"{prefix}.llm_calls_per_turn_1": f"{d['llm_calls_per_turn']:.1f}",
        f"{prefix}.tokens_per_turn": f"{_num(d['prompt_tokens_per_turn'])} / {_num(d['completion_tokens_per_turn'])}",
        f"{prefix}.not_right": str(d["turns"] - d["turns_right"]),
        f"{prefix}.not_run": str(d["not_run"]),
        **{f"{prefix}.causes.{cause}": str(d["causes"].get(cause, 0)) for cause in CAUSES},
    }


def _crosswoz_run(prefix: str, d: dict[str, Any]) -> dict[str, str]:
    turns = d["turns"]
    out = {
        f"{prefix}.dialogues": str(d["dialogues"]),
        f"{prefix}.turns": str(turns),
        f"{prefix}.jga_right": _of(d["jga_right"], turns),
        f"{prefix}.jga_pct": _pct1(d["jga_right"] / turns),
        f"{prefix}.jga": f"{_of(d['jga_right'], turns)} ({_pct1(d['jga_right'] / turns)})",
        f"{prefix}.nothing.jga_right": _of(d["baseline_right"], turns),
        f"{prefix}.nothing.jga_pct": _pct1(d["baseline_right"] / turns),
        f"{prefix}.nothing.jga": f"{_of(d['baseline_right'], turns)} ({_pct1(d['baseline_right'] / turns)})",
        f"{prefix}.changed_turns": str(d["changed_turns"]),
        f"{prefix}.changed_correct": str(d["changed_correct"]),
        f"{prefix}.changed_pct": _pct1(d["changed_correct"] / d["changed_turns"]) if d["changed_turns"] else "—",
        f"{prefix}.unchanged_turns": str(d["unchanged_turns"]),
        f"{prefix}.broken_unchanged": str(d["broken_unchanged"]),
        f"{prefix}.slot_accuracy": _pct1(d["slot_accuracy"]),
        f"{prefix}.unreadable": str(d["unreadable"]),
        f"{prefix}.failed_calls": str(d["failed_calls"]),
        f"{prefix}.not_recorded": str(d["not_recorded"]),
        f"{prefix}.tokens_per_turn": f"{_num(d['prompt_tokens_per_turn'])} / {_num(d['completion_tokens_per_turn'])}",
        f"{prefix}.domains": _domains(d),
    }
    if "clean_jga_right" in d:
        out[f"{prefix}.clean_jga_right"] = _of(d["clean_jga_right"], turns)
        out[f"{prefix}.clean_jga_pct"] = _pct1(d["clean_jga_right"] / turns)
        drop = (d["jga_right"] - d["clean_jga_right"]) / turns * 100
        out[f"{prefix}.drop_points"] = f"{drop:+.1f}".replace("-", "−")
    return out


def _unrecorded(d: dict[str, Any], lang: str) -> str:
    """A note when some of a run's requests are not in its cassette (each a failed turn), else nothing."""
    n = d["not_recorded"]
    if not n:
        return ""
    if lang == "zh":
        return f"，其中 {n} 个请求尚待重新录制、按失败计"
    return f", with {n} request{'s' if n != 1 else ''} still to re-record counted as failures"


def _real_summary_table(runs: dict[str, Any]) -> str:
    """docs/eval.md: the runs the READMEs quote, the model beside a model that answers nothing. A * marks
    a figure with requests not recorded yet (each a failed turn: a floor)."""
    rows = ["| run | Qwen2.5-Coder-1.5B Q4 | answers nothing |", "|---|---|---|"]

    def star(d: dict[str, Any]) -> str:
        return "*" if d["not_recorded"] else ""

    def jga(right: int, total: int) -> str:
        return f"{_of(right, total)} ({_pct1(right / total)})"

    for label, name in (("engine target, shipped suites", "engine"),
                        ("held-out conversations, fast layout", "heldout_fast")):
        model, nothing = runs[name]["model"], runs[name]["answers_nothing"]
        rows += [f"| {label}: turns right | {_of(model['turns_right'], model['turns'])}{star(model)} | "
                 f"{_of(nothing['turns_right'], nothing['turns'])} |",
                 f"| — joint goal accuracy | {jga(model['jga_right'], model['jga_turns'])} | "
                 f"{jga(nothing['jga_right'], nothing['jga_turns'])} |",
                 f"| — wrongful executions / unasked writes | {model['wrongful']} / {model['unasked_writes']} | "
                 f"{nothing['wrongful']} / {nothing['unasked_writes']} |"]
    for label, name in (("CrossWOZ teacher-forced ({n} dialogues): JGA", "crosswoz_teacher_forced"),
                        ("CrossWOZ carried ({n} dialogues): JGA", "crosswoz_carried"),
                        ("CrossWOZ with typos ({n} dialogues, teacher-forced): JGA", "crosswoz_typo")):
        d = runs[name]["model"]
        rows.append(f"| {label.format(n=d['dialogues'])} | {jga(d['jga_right'], d['turns'])}{star(d)} | "
                    f"{jga(d['baseline_right'], d['turns'])} |")
        if name == "crosswoz_teacher_forced":
            rows += [f"| — on the {d['changed_turns']} turns whose state changes | {d['changed_correct']} "
                     f"({_pct1(d['changed_correct'] / d['changed_turns'])}) | 0 |",
                     f"| — unchanged turns broken (of {d['unchanged_turns']}) | {d['broken_unchanged']} | 0 |"]
    return "\n".join(rows) + _floor_note(runs, ("engine", "heldout_fast", "crosswoz_teacher_forced",
                                                 "crosswoz_carried", "crosswoz_typo"))


RUN_LABELS = {"engine": "the engine target's run", "heldout_fast": "the fast layout's", "heldout_plugin":
              "the plugin layout's", "heldout_classic": "the classic layout's", "heldout_ask": "the ask policy's",
              "crosswoz_teacher_forced": "the teacher-forced CrossWOZ run's", "crosswoz_carried":
              "the carried CrossWOZ run's", "crosswoz_typo": "the CrossWOZ run with typos'"}


def _floor_note(runs: dict[str, Any], names: tuple[str, ...]) -> str:
    """The note under a table with a * figure: requests not recorded yet, each a failed turn."""
    notes = [f"{runs[name]['model']['not_recorded']} of {RUN_LABELS[name]} requests" for name in names
             if runs[name]["model"]["not_recorded"]]
    if not notes:
        return ""
    return ("\n\n\\* " + "; ".join(notes) + " are not in the cassette yet (their prompts differ from the "
            "recorded ones): each such request is a failed turn until it is re-recorded, so the figure is a floor.")


def _layouts_table(runs: dict[str, Any]) -> str:
    """docs/eval.md: the held-out conversations through each shipped Chatflow, side by side."""
    rows = ["| layout | turns right | JGA | answers nothing: JGA | slot F1 | task success | "
            "executions / **wrongful** | unasked / wrong writes | LLM calls / turn | "
            "prompt / completion tokens / turn |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for label, name in (("fast (one call)", "heldout_fast"), ("plugin", "heldout_plugin"),
                        ("classic (rewrite → classify → extract)", "heldout_classic"),
                        ("fast, `--ungrounded ask`", "heldout_ask")):
        d, nothing = runs[name]["model"], runs[name]["answers_nothing"]
        star = "*" if d["not_recorded"] else ""
        rows.append(f"| {label} | {_of(d['turns_right'], d['turns'])}{star} | {_of(d['jga_right'], d['jga_turns'])} "
                    f"({_pct1(d['jga_right'] / d['jga_turns'])}) | {_of(nothing['jga_right'], nothing['jga_turns'])} | "
                    f"{_pct1(d['slot_f1'])} | {_of(d['task_success'], d['expected_executions'])} | "
                    f"{d['executions']} / **{d['wrongful']}** | {d['unasked_writes']} / {d['wrong_writes']} | "
                    f"{d['llm_calls_per_turn']:.2f} | {_num(d['prompt_tokens_per_turn'])} / "
                    f"{_num(d['completion_tokens_per_turn'])} |")
    return "\n".join(rows) + _floor_note(runs, ("heldout_fast", "heldout_plugin", "heldout_classic", "heldout_ask"))


def _engine_table(entry: dict[str, Any]) -> str:
    """docs/eval.md: the engine target on the shipped suites, the model beside answering nothing and the
    ceiling (perfect answers: every figure right, which tests/test_eval.py checks)."""
    d, n = entry["model"], entry["answers_nothing"]

    def row(label: str, key: Callable[[dict[str, Any]], str], ceiling: str) -> str:
        return f"| {label} | {key(d)} | {key(n)} | {ceiling} |"

    return "\n".join([
        "| | Qwen2.5-Coder-1.5B Q4 | answers nothing | perfect answers (ceiling) |", "|---|---|---|---|",
        row("turns right", lambda x: f"{_of(x['turns_right'], x['turns'])} ({_pct1(x['turns_right'] / x['turns'])})",
            _of(d["turns"], d["turns"])),
        row("joint goal accuracy",
            lambda x: f"{_of(x['jga_right'], x['jga_turns'])} ({_pct1(x['jga_right'] / x['jga_turns'])})",
            _of(d["jga_turns"], d["jga_turns"])),
        row("slot F1", lambda x: _pct1(x["slot_f1"] or 0), "100%"),
        row("task success", lambda x: _of(x["task_success"], x["expected_executions"]),
            _of(d["expected_executions"], d["expected_executions"])),
        row("executions / **wrongful**", lambda x: f"{x['executions']} / **{x['wrongful']}**",
            f"{d['expected_executions']} / 0"),
        row("unasked / wrong-value slot writes", lambda x: f"{x['unasked_writes']} / {x['wrong_writes']}", "0 / 0"),
        row("LLM calls, prompt / completion tokens per turn",
            lambda x: f"{x['llm_calls_per_turn']:g}, {_num(x['prompt_tokens_per_turn'])} / "
                      f"{_num(x['completion_tokens_per_turn'])}", "1"),
    ])


def _crosswoz_table(runs: dict[str, Any]) -> str:
    """docs/eval.md: the three CrossWOZ runs through the model, each JGA beside answering nothing."""
    tf, carried, typo = (runs[n]["model"] for n in ("crosswoz_teacher_forced", "crosswoz_carried", "crosswoz_typo"))

    def jga(d: dict[str, Any]) -> str:
        return f"**{_pct1(d['jga_right'] / d['turns'])}** ({_of(d['jga_right'], d['turns'])})"

    def nothing(d: dict[str, Any]) -> str:
        return f"{_pct1(d['baseline_right'] / d['turns'])} ({_of(d['baseline_right'], d['turns'])})"

    def unreadable(d: dict[str, Any]) -> str:
        return f"{d['unreadable']} ({_pct1(d['unreadable'] / d['turns'])})"

    typo_jga = (f"{_pct1(typo['clean_jga_right'] / typo['turns'])} → {_pct1(typo['jga_right'] / typo['turns'])} "
                f"({typo['clean_jga_right']} → {typo['jga_right']} of {typo['turns']})")
    return "\n".join([
        f"| first N validation dialogues | teacher-forced, N = {tf['dialogues']} | "
        f"cumulative, N = {carried['dialogues']} | typo, N = {typo['dialogues']} (clean → noisy) |",
        "|---|---|---|---|",
        f"| user turns | {tf['turns']} | {carried['turns']} | {typo['turns']} |",
        f"| **joint goal accuracy** | {jga(tf)} | {jga(carried)} | {typo_jga} |",
        f"| a model that answers nothing | {nothing(tf)} | {nothing(carried)} | {nothing(typo)} |",
        f"| JGA on the turns whose state changes | {tf['changed_correct']}/{tf['changed_turns']} | "
        f"{carried['changed_correct']}/{carried['changed_turns']} | "
        f"{typo['changed_correct']}/{typo['changed_turns']} |",
        f"| slot accuracy | {_pct1(tf['slot_accuracy'])} | {_pct1(carried['slot_accuracy'])} | "
        f"{_pct1(typo['clean_slot_accuracy'])} → {_pct1(typo['slot_accuracy'])} |",
        f"| JGA by domain | {_domains(tf)} | {_domains(carried)} | — |",
        f"| unreadable answers (each an error and a wrong turn) | {unreadable(tf)} | {unreadable(carried)} | "
        f"{unreadable(typo)} |",
        f"| requests not recorded yet (failed turns) | {tf['not_recorded']} | {carried['not_recorded']} | "
        f"{typo['not_recorded']} |",
        f"| prompt / completion tokens per call | {_num(tf['prompt_tokens_per_turn'])} / "
        f"{_num(tf['completion_tokens_per_turn'])} | {_num(carried['prompt_tokens_per_turn'])} / "
        f"{_num(carried['completion_tokens_per_turn'])} | {_num(typo['prompt_tokens_per_turn'])} / "
        f"{_num(typo['completion_tokens_per_turn'])} |",
    ])


def _domains(d: dict[str, Any]) -> str:
    return ", ".join(f"{name} {share:.1%}" for name, share in d["domains"].items())


def _real_figures(record: dict[str, Any]) -> dict[str, str]:
    """The real model's figures (``dskit bench cassettes --record``), each run beside its baseline."""
    runs = record["runs"]
    out: dict[str, str] = {"real.summary_table": _real_summary_table(runs), "real.layouts_table": _layouts_table(runs),
                           "real.engine_table": _engine_table(runs["engine"]),
                           "real.crosswoz_table": _crosswoz_table(runs)}
    for name, entry in runs.items():
        if "answers_nothing" in entry:
            out.update(_eval_run(f"real.{name}", entry["model"]))
            out.update(_eval_run(f"real.{name}.nothing", entry["answers_nothing"]))
        else:
            out.update(_crosswoz_run(f"real.{name}", entry["model"]))
        for lang in ("en", "zh"):
            out[f"real.{name}.unrecorded_{lang}"] = _unrecorded(entry["model"], lang)
    fast, classic = runs["heldout_fast"]["model"], runs["heldout_classic"]["model"]
    out["real.heldout.calls_ratio"] = f"{classic['llm_calls_per_turn'] / fast['llm_calls_per_turn']:.1f}x"
    out["real.heldout.prompt_ratio"] = f"{classic['prompt_tokens_per_turn'] / fast['prompt_tokens_per_turn']:.1f}x"
    return out


def cassette_problems(root: Path) -> Iterator[str]:
    """A cassette that is not the one its recorded figures were replayed from (re-recorded since, or gone)."""
    record = _load(root, CASSETTE_RECORD)
    if record is None:
        return
    for name, recorded in record["cassettes"].items():
        path = root / CASSETTE_DIR / name
        if not path.is_file():
            yield f"{CASSETTE_RECORD}: its figures come from {CASSETTE_DIR}/{name}, which is not there"
        elif hashlib.sha256(path.read_bytes()).hexdigest() != recorded:
            yield (f"{CASSETTE_RECORD}: {CASSETTE_DIR}/{name} changed since its figures were replayed "
                   f"(re-recorded?): run {REFRESH_REAL}")


def _admission_table() -> str:
    """docs/grounding.md's table of the admission rules: for each kind of effect, its rules in the order
    they run, each with the first paragraph of its docstring (read from dskit/rules/admission.py, so the
    page names every rule the engine runs and no other)."""
    import inspect  # noqa: PLC0415

    from dskit.rules import admission  # noqa: PLC0415 - the engine, read for its rules

    rows = ["| effect proposed | rule (in order) | what it admits, refuses or asks |", "|---|---|---|"]
    for kind, rules in admission.RULES.items():
        for index, rule in enumerate(rules):
            doc = (inspect.getdoc(rule) or "").split("\n\n")[0].replace("\n", " ").replace("|", "\\|")
            doc = re.sub(r":(?:func|data|mod):`~?([^`]+)`", r"`\1`", doc)
            rows.append(f"| {kind.__name__ if index == 0 else ''} | `{rule.__name__}` | {doc} |")
    return "\n".join(rows)


def figures(root: Path) -> dict[str, str]:
    """Every figure a page may mark, by name, formatted as the pages write it."""
    out: dict[str, str] = {"admission.rules": _admission_table()}
    context = _load(root, CONTEXT_RECORD)
    if context is not None:
        out.update(_context_figures("context", context["default"]))
        if context.get("real"):
            out.update(_context_figures("context_real", context["real"]))
        if context.get("budgets"):
            out["context.budget_table"] = _budget_table(context["budgets"], context["default_budget"])
            out["context.default_budget"] = str(context["default_budget"])
    flow = _load(root, FLOW_RECORD)
    if flow is not None:
        out.update(_flow_figures(flow))
    real = _load(root, CASSETTE_RECORD)
    if real is not None:
        out.update(_real_figures(real))
    return out


def help_text() -> str:
    """``dskit --help`` at a fixed width, as README.md shows it."""
    from dskit.tooling.parser import build_parser  # noqa: PLC0415 - it imports every command

    parser = build_parser()
    parser.formatter_class = lambda prog: argparse.HelpFormatter(prog, width=HELP_WIDTH)
    return parser.format_help()


def _fill(text: str, known: dict[str, str], unknown: list[str]) -> str:
    def replace(match: re.Match[str]) -> str:
        name, shown = match.group(1), match.group(2)
        if name not in known:
            unknown.append(name)
            return match.group(0)
        value = known[name]
        if shown.startswith("\n"):  # a block (a table): the marks stand apart, blank lines around it,
            value = f"\n\n{value}\n\n"  # so that Markdown still sees a table
        return f"<!-- fig:{name} -->{value}<!-- /fig -->"

    return FIGURE.sub(replace, text)


def filled_pages(root: Path, help_source: Callable[[], str] = help_text) -> tuple[dict[str, str], list[str]]:
    """({page: text with every marked figure and the help block as recorded}, problems).

    Only pages that carry a mark are returned. A problem is a mark naming a figure no bench records."""
    known = figures(root)
    out: dict[str, str] = {}
    problems: list[str] = []
    help_cache: list[str] = []
    for page in pages(root):
        text = page.read_text(encoding="utf-8")
        if "<!-- fig:" not in text and "<!-- help -->" not in text:
            continue
        unknown: list[str] = []
        new = _fill(text, known, unknown)
        if HELP_BLOCK.search(new):
            if not help_cache:
                help_cache.append(help_source())
            new = HELP_BLOCK.sub(lambda m: m.group(1) + help_cache[0] + m.group(3), new)
        relative = page.relative_to(root).as_posix()
        problems += [f"{relative}: fig:{name} is no recorded figure (see dskit/tooling/docfigures.py)"
                     for name in unknown]
        out[relative] = new
    return out, problems


def differences(root: Path, help_source: Callable[[], str] = help_text) -> Iterator[str]:
    """One line per marked figure whose page shows another value than the recorded one."""
    filled, problems = filled_pages(root, help_source)
    yield from problems
    yield from cassette_problems(root)
    for relative, text in filled.items():
        shown = dict((m.group(1), m.group(2)) for m in FIGURE.finditer((root / relative).read_text(encoding="utf-8")))
        for match in FIGURE.finditer(text):
            name, value = match.group(1), match.group(2)
            if shown.get(name) is not None and shown[name] != value:
                yield f"{relative}: fig:{name} shows {shown[name].strip()!r}, recorded {value.strip()!r}"
        old_help = HELP_BLOCK.search((root / relative).read_text(encoding="utf-8"))
        new_help = HELP_BLOCK.search(text)
        if old_help and new_help and old_help.group(2) != new_help.group(2):
            yield f"{relative}: the `dskit --help` block differs from `dskit --help`"


def generate_doc_figures(root: Path) -> dict[str, str]:
    """Generator for :mod:`dskit.tooling.generated`: the pages with marks, figures filled in."""
    return filled_pages(root)[0]
