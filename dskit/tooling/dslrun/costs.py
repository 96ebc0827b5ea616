"""What a turn costs in each layout, measured over the scenario suites in graphon.

LLM calls, code-node runs and prompt characters are counted per turn by the harness; this module
runs every suite in every layout it supports and summarises them. The classic/fast ratio is taken
over the suites both layouts run, so a suite only the fast layout can express (rollback,
multi-intent) never flatters it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import mean
from typing import Any

from dskit.tooling.dslbuild.flows import FlowOptions, build_classic, build_fast, default_catalog
from dskit.tooling.dslrun.scenarios import LAYOUTS, Scenario, TurnOutcome, load_scenarios, run_scenario


@dataclass
class LayoutCost:
    """Per-turn figures of one layout over a set of turns."""

    layout: str
    turns: int = 0
    llm_calls: list[int] = field(default_factory=list)
    code_runs: list[int] = field(default_factory=list)
    prompt_chars: list[int] = field(default_factory=list)
    failures: int = 0

    def add(self, outcome: TurnOutcome) -> None:
        self.turns += 1
        self.llm_calls.append(outcome.result.llm_count)
        self.code_runs.append(outcome.result.code_count)
        self.prompt_chars.append(outcome.result.prompt_chars)
        self.failures += bool(outcome.failures)

    def summary(self) -> dict[str, Any]:
        def stats(values: Sequence[int]) -> dict[str, float]:
            return {"mean": round(mean(values), 3) if values else 0.0, "max": max(values, default=0)}

        return {"layout": self.layout, "turns": self.turns, "llm_calls": stats(self.llm_calls),
                "code_runs": stats(self.code_runs), "prompt_chars": stats(self.prompt_chars),
                "failed_turns": self.failures}


def dsl_for(layout: str, options: FlowOptions | None = None) -> str:
    return (build_fast(options) if layout == "fast" else build_classic(options)).to_yaml()


def measure(scenarios: Sequence[Scenario] | None = None, *, api_base: str | None = None,
            progress: Callable[[str, str], None] | None = None) -> dict[str, Any]:
    """Run the suites; returns per-layout figures over all their turns and over the shared suites.

    ``progress(scenario, layout)`` is called before each scenario runs on each layout (a bench that
    takes half a minute says what it is doing, and can tell whose log lines it sees)."""
    scenarios = list(scenarios if scenarios is not None else load_scenarios())
    catalog = default_catalog()
    texts = {layout: dsl_for(layout) for layout in LAYOUTS}
    every = {layout: LayoutCost(layout) for layout in LAYOUTS}
    shared = {layout: LayoutCost(layout) for layout in LAYOUTS}
    for scenario in scenarios:
        if scenario.needs_api and api_base is None:
            continue
        both = set(LAYOUTS) <= set(scenario.layouts)
        for layout in scenario.layouts:
            if progress is not None:
                progress(scenario.name, layout)
            for outcome in run_scenario(scenario, layout, texts[layout], catalog, api_base=api_base):
                every[layout].add(outcome)
                if both:
                    shared[layout].add(outcome)
    result: dict[str, Any] = {
        "suites": [s.name for s in scenarios],
        "all_turns": {layout: cost.summary() for layout, cost in every.items()},
        "shared_turns": {layout: cost.summary() for layout, cost in shared.items()},
    }
    fast, classic = shared["fast"].summary(), shared["classic"].summary()
    result["ratio_classic_over_fast"] = {
        key: round(classic[key]["mean"] / fast[key]["mean"], 3) if fast[key]["mean"] else None
        for key in ("llm_calls", "code_runs", "prompt_chars")
    }
    return result


def format_table(result: Mapping[str, Any]) -> str:
    lines = [f"suites: {', '.join(result['suites'])}", ""]
    header = f"{'':<22}{'turns':>6}{'LLM mean':>10}{'LLM max':>9}{'code mean':>11}{'prompt chars':>14}"
    for title, key in (("all turns", "all_turns"), ("suites both layouts run", "shared_turns")):
        lines += [title, header]
        for layout, row in result[key].items():
            lines.append(f"{layout:<22}{row['turns']:>6}{row['llm_calls']['mean']:>10.2f}"
                         f"{row['llm_calls']['max']:>9}{row['code_runs']['mean']:>11.2f}"
                         f"{row['prompt_chars']['mean']:>14.0f}")
        lines.append("")
    ratio = result["ratio_classic_over_fast"]
    lines.append("classic / fast (shared suites): " + ", ".join(
        f"{k} {v:.2f}x" if v is not None else f"{k} -" for k, v in ratio.items()))
    failed = sum(row["failed_turns"] for row in result["all_turns"].values())
    if failed:
        lines.append(f"warning: {failed} turn(s) failed their scenario checks")
    return "\n".join(lines)
