"""Figures in the READMEs and docs/ written from what the benches recorded, so they cannot drift.

A figure in a page is marked with its name::

    at 30 turns <!-- fig:context.ratio_30 -->4.4x<!-- /fig --> smaller

and a whole table the same way, with the marks on lines of their own and blank lines around the
table (a comment line inside a Markdown table would end it). The value
between the marks is always what :func:`figures` derives from the recorded JSON of a bench
(``dskit bench context --record``, ``dskit bench flow --record``), formatted as the page shows it.
``dskit gen`` rewrites the marked text; ``dskit gen --check`` fails when a page shows another value,
names a figure no bench records, or when README.md's ``dskit --help`` block differs from the
command's own help. Why: figures copied by hand went stale while the benches moved on (issue 21).

Nothing here runs a bench: checking is reading JSON and text, well under a second.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

CONTEXT_RECORD = "dskit/tooling/bench/context.json"
FLOW_RECORD = "dskit/tooling/bench/flow.json"
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


def figures(root: Path) -> dict[str, str]:
    """Every figure a page may mark, by name, formatted as the pages write it."""
    out: dict[str, str] = {}
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
    return out


def help_text() -> str:
    """``dskit --help`` at a fixed width, as README.md shows it."""
    from dskit.tooling.cli import build_parser  # noqa: PLC0415 - the CLI imports every command

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
