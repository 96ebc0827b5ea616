"""``dskit bench flow``: LLM calls, code-node runs and prompt characters per turn, fast vs classic.

Runs every scenario suite (tests/scenarios/*.yaml) through both generated Chatflows in graphon with
scripted model answers, a local task API on 127.0.0.1 and the knowledge-retrieval stand-in, and
prints the per-turn figures of each layout and the classic/fast ratio. It takes about half a minute,
so a progress line on stderr names the scenario running. Graphon's log lines are collected and
printed after the table with the scenario they came from; those of a scenario that fails on purpose
(:data:`EXPECTED_FAILURES`) are labelled as expected, so a deliberate "Server disconnected" does not
read as a fault. ``--record`` writes the figures to ``flow.json`` for ``dskit gen``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

RECORD = Path(__file__).resolve().parent / "flow.json"
# Scenarios whose failures are the point of the scenario: their log lines are expected, not faults.
EXPECTED_FAILURES = {
    "task_api_unreachable": "the task API closes the connection on purpose, to check the reply when a "
                            "task cannot be submitted",
}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "flow",
        help="LLM calls / code runs / prompt chars per turn of the fast and classic Chatflows",
        description="Run the scenario suites through both Chatflow layouts in graphon and compare "
                    "what a turn costs.",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--record", action="store_true",
                        help="also write the figures to dskit/tooling/bench/flow.json (`dskit gen` puts them "
                             "into README*.md and docs/)")
    parser.set_defaults(func=run)


class _Collect(logging.Handler):
    """Keeps graphon's log records with the scenario that was running when they were emitted."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.where = ("", "")
        self.lines: list[tuple[str, str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((*self.where, " ".join(record.getMessage().split())[:300]))


@contextmanager
def collected_graphon_logs() -> Iterator[_Collect]:
    """Route graphon's warnings to a collector instead of the terminal while the bench runs."""
    logger = logging.getLogger("graphon")
    handler = _Collect()
    saved = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False  # else Python's last-resort handler prints them mid-run
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.propagate = saved


def log_report(lines: list[tuple[str, str, str]]) -> list[str]:
    """One line per distinct log message: expected ones say why, others name their scenario."""
    out = []
    for scenario, layout, message in dict.fromkeys(lines):
        if scenario in EXPECTED_FAILURES:
            out.append(f"expected, from scenario {scenario} ({layout}; {EXPECTED_FAILURES[scenario]}): {message}")
        else:
            out.append(f"graphon log, scenario {scenario} ({layout}): {message}")
    return out


def run(args: argparse.Namespace) -> int:
    from dskit.tooling.dslrun.costs import format_table, measure
    from dskit.tooling.dslrun.scenarios import SCENARIO_DIR, load_scenarios
    from dskit.tooling.dslrun.taskapi import task_api

    scenarios = load_scenarios(SCENARIO_DIR) if SCENARIO_DIR.is_dir() else []
    if not scenarios:
        print(f"dskit bench flow: no scenario suites in {SCENARIO_DIR} (run from a source checkout)",
              file=sys.stderr)
        return 2
    runs = sum(len(s.layouts) for s in scenarios)
    from dskit.tooling.progress import counted

    with task_api() as api, collected_graphon_logs() as logs, counted("bench flow", runs) as bar:
        def where(scenario: str, layout: str) -> None:
            logs.where = (scenario, layout)
            bar.begin(f"{scenario} ({layout})")

        result = measure(scenarios, api_base=api.base_url, progress=where)
    print(json.dumps(result, ensure_ascii=False, indent=2) if args.json else format_table(result))
    for line in log_report(logs.lines):
        print(line, file=sys.stderr)
    if args.record:
        RECORD.write_text(json.dumps({"command": "dskit bench flow --record", **result}, ensure_ascii=False,
                                     indent=1) + "\n", encoding="utf-8")
        print(f"recorded in {RECORD.name}; `dskit gen` writes its figures into README*.md and docs/", file=sys.stderr)
    return 0
