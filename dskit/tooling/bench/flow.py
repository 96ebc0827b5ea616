"""``dskit bench flow``: LLM calls, code-node runs and prompt characters per turn, fast vs classic.

Runs every scenario suite (tests/scenarios/*.yaml) through both generated Chatflows in graphon with
scripted model answers, a local task API on 127.0.0.1 and the knowledge-retrieval stand-in, and
prints the per-turn figures of each layout and the classic/fast ratio.
"""

from __future__ import annotations

import argparse
import json
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "flow",
        help="LLM calls / code runs / prompt chars per turn of the fast and classic Chatflows",
        description="Run the scenario suites through both Chatflow layouts in graphon and compare "
                    "what a turn costs.",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dskit.tooling.dslrun.costs import format_table, measure
    from dskit.tooling.dslrun.scenarios import SCENARIO_DIR, load_scenarios
    from dskit.tooling.dslrun.taskapi import task_api

    scenarios = load_scenarios(SCENARIO_DIR) if SCENARIO_DIR.is_dir() else []
    if not scenarios:
        print(f"dskit bench flow: no scenario suites in {SCENARIO_DIR} (run from a source checkout)",
              file=sys.stderr)
        return 2
    with task_api() as api:
        result = measure(scenarios, api_base=api.base_url)
    print(json.dumps(result, ensure_ascii=False, indent=2) if args.json else format_table(result))
    return 0
