"""Running suites against a target: conversations in parallel, every turn scored and traced.

A turn that fails (the endpoint is down, the deadline passed, an HTTP error, anything a target raises)
is recorded with its one-line error; the conversation stops there, its remaining turns count as not
run, and the run goes on with the next conversation. Nothing a target does can crash a run.
"""

from __future__ import annotations

import statistics
import threading
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from .metrics import ConversationResult, ConversationScorer, StateView, TurnScore, summarize
from .suite import Suite
from .turn import Target, TurnOutput

Progress = Callable[[str], None]  # called once per finished turn with a short label
Sink = Callable[[dict[str, Any]], None]  # called with each turn's trace record as soon as it is scored


@dataclass
class EvalRun:
    """One target (one layout or DSL file) over every suite."""

    label: str
    target: dict[str, Any]
    conversations: list[ConversationResult] = field(default_factory=list)
    traces: list[dict[str, Any]] = field(default_factory=list)
    # With ``dskit eval --runs N``: this is the median run, and ``spread`` holds the median and the worst
    # of every headline figure over the N runs and their consistency (:func:`combine_runs`).
    spread: dict[str, Any] = field(default_factory=dict)

    def figures(self) -> dict[str, Any]:
        return summarize(self.conversations)

    def per_suite(self) -> dict[str, dict[str, Any]]:
        names = list(dict.fromkeys(c.suite for c in self.conversations))
        return {name: summarize([c for c in self.conversations if c.suite == name]) for name in names}

    def errors(self) -> list[str]:
        """One line per conversation that could not be run to its end."""
        return [f"{c.suite} (run {c.repeat}): {c.error}" for c in self.conversations if c.error]


def _trace(suite: Suite, repeat: int, score: TurnScore, output: TurnOutput) -> dict[str, Any]:
    """The per-turn JSONL record: what was said, what the model answered, what the engine did."""
    after = StateView.parse(output.state_text)
    return {
        "suite": suite.name, "repeat": repeat, "turn": score.index + 1, "user": score.user,
        "answer": output.answer, "error": score.error, "action": score.action,
        "model_text": [c.text for c in output.calls],
        "applied": score.applied, "dropped": score.dropped,
        "state": [{"task": t["name"], "stage": t.get("stage"), "slots": t.get("slots") or {}} for t in after.stack],
        "executed": [{"task": e.task, "slots": e.slots, "wrongful": e.wrongful, "reasons": e.reasons}
                     for e in score.executions],
        "writes": [{"task": w.task, "slot": w.slot, "old": w.old, "new": w.new, "kind": w.kind} for w in score.writes],
        "passed": score.passed, "failures": score.failures(), "cause": score.cause,
        "calls": [c.as_dict() for c in output.calls],
        "llm_calls": score.calls, "prompt_tokens": score.prompt_tokens, "completion_tokens": score.completion_tokens,
        "llm_seconds": score.llm_seconds, "wall_seconds": score.wall_seconds,
        "detail": output.detail,
    }


def run_conversation(target: Target, suite: Suite, repeat: int, progress: Progress | None = None,
                     sink: Sink | None = None) -> tuple[ConversationResult, list[dict[str, Any]]]:
    """One run of one suite's conversation; never raises."""
    scorer = ConversationScorer(suite.catalog, suite.turns)
    result = ConversationResult(suite=suite.name, repeat=repeat, turns=[])
    traces: list[dict[str, Any]] = []
    before = ""
    try:
        conversation = target.conversation(suite, f"{suite.name}-{repeat}-{uuid.uuid4().hex[:8]}")
    except Exception as error:  # noqa: BLE001 - a target that cannot start is one conversation's error
        conversation, result.error = None, _one_line(error)
    for index, turn in enumerate(suite.turns):
        if conversation is None or result.error:
            result.turns.append(scorer.not_run(index, f"not run: {result.error}"))
            if progress is not None:
                progress(suite.name)
            continue
        try:
            output = conversation.turn(turn.user)
        except Exception as error:  # noqa: BLE001 - a target's bug is this turn's error, not a crash
            output = TurnOutput(state_text=before, error=_one_line(error))
        if output.error and not output.state_text:
            output.state_text = before
        score = scorer.score(index, before, output)
        result.turns.append(score)
        traces.append(_trace(suite, repeat, score, output))
        if sink is not None:
            sink(traces[-1])
        if output.error and not output.goes_on:
            result.error = f"turn {index + 1}: {output.error}"
        before = output.state_text
        if progress is not None:
            progress(suite.name)
    return result, traces


def run_suites(target: Target, suites: Sequence[Suite], *, label: str = "", repeat: int | None = None,
               parallel: int = 1, progress: Progress | None = None, sink: Sink | None = None) -> EvalRun:
    """Every suite (``repeat`` times, else each suite's own ``repeat``) against ``target``."""
    run = EvalRun(label=label or target.name, target=target.describe())
    jobs = [(suite, r) for suite in suites for r in range(1, (repeat or suite.repeat) + 1)]
    lock = threading.Lock()
    results: dict[int, tuple[ConversationResult, list[dict[str, Any]]]] = {}

    def work(position: int) -> None:
        suite, number = jobs[position]
        outcome = run_conversation(target, suite, number, progress, sink)
        with lock:
            results[position] = outcome

    if parallel <= 1:
        for position in range(len(jobs)):
            work(position)
    else:
        with ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="dskit-eval") as pool:
            list(pool.map(work, range(len(jobs))))
    for position in range(len(jobs)):
        conversation, traces = results[position]
        run.conversations.append(conversation)
        run.traces.extend(traces)
    run.target = target.describe()  # again: what a target learnt while running (a Dify app's catalog check)
    return run


def total_turns(suites: Sequence[Suite], repeat: int | None = None) -> int:
    return sum(len(s.turns) * (repeat or s.repeat) for s in suites)


def _one_line(error: BaseException) -> str:
    return " ".join(f"{type(error).__name__}: {error}".split())[:300]


# The headline figures whose median and worst ``--runs`` reports: (figure, the worse direction).
SPREAD_FIGURES = (("turns_right", min), ("wrongful_executions", max), ("jga_right", min),
                  ("unasked_writes", max), ("wrong_writes", max), ("task_success", min),
                  ("prompt_tokens_per_turn", max), ("completion_tokens_per_turn", max))


def headline(run: EvalRun) -> dict[str, Any]:
    """The counts a reader compares across runs: turns right, JGA turns right, wrongful executions..."""
    figures = run.figures()
    turns = [t for c in run.conversations for t in c.turns]
    return {"turns_right": sum(t.passed for t in turns), "turns": len(turns),
            "jga_right": sum(bool(t.jga) for t in turns if t.jga is not None),
            "jga_turns": figures["jga_turns"], **{key: figures.get(key) for key, _ in SPREAD_FIGURES
                                                  if key not in ("turns_right", "jga_right")}}


def median_index(runs: Sequence[EvalRun]) -> int:
    """The run in the middle when ranked by turns right, then fewer wrongful executions (of two in the
    middle, the worse): the one a cassette keeps — never the best."""
    keys = [headline(run) for run in runs]
    order = sorted(range(len(runs)), key=lambda i: (keys[i]["turns_right"], -keys[i]["wrongful_executions"]))
    return order[(len(runs) - 1) // 2]


def runs_consistency(runs: Sequence[EvalRun]) -> float | None:
    """The share of turns whose outcome (action, task in focus, every open task's slots, executions) is
    the same in every run; None for fewer than two runs."""
    if len(runs) < 2:
        return None
    outcomes: dict[tuple[str, int, int], list[str]] = {}
    for run in runs:
        for conversation in run.conversations:
            for turn in conversation.turns:
                outcomes.setdefault((conversation.suite, conversation.repeat, turn.index), []).append(turn.signature)
    same = [len(set(sigs)) == 1 for sigs in outcomes.values() if len(sigs) == len(runs)]
    return round(sum(same) / len(same), 4) if same else None


def combine_runs(runs: Sequence[EvalRun]) -> EvalRun:
    """N runs of one target as one: the median run (:func:`median_index`) with ``spread`` holding each
    headline figure's median and worst over the runs, every run's headline, and the consistency."""
    if len(runs) == 1:
        return runs[0]
    heads = [headline(run) for run in runs]
    chosen = runs[median_index(runs)]
    spread: dict[str, Any] = {"runs": len(runs), "median_run": median_index(runs) + 1,
                              "consistency": runs_consistency(runs), "per_run": heads}
    for key, worse in SPREAD_FIGURES:
        values = [h[key] for h in heads if h.get(key) is not None]
        if values:
            spread[key] = {"median": statistics.median_low(values), "worst": worse(values)}
    chosen.spread = spread
    return chosen
