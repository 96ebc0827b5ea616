"""Per-turn scoring and the summary figures of ``dskit eval`` (definitions: docs/eval.md).

Everything is read from the state before and after the turn (``sys_context_str``), the reply and the
LLM calls — never from a target's internals — so the engine, graphon and a deployed Dify app are
scored by one function. What the state tells per turn:

- the action taken, the commands applied and dropped: the timeline entry of the turn;
- what executed, with which slots: the ``done`` entries of the turn;
- the slots of every open task, before and after: the task stack;
- an unreadable model answer: an ``understanding`` entry in ``errors`` for the turn.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from dskit.catalog.catalog import Catalog
from dskit.state.state import load_state

from .causes import CAUSES, attribute
from .suite import EvalTurn
from .turn import TurnOutput
from .values import canon, canon_slots

Slots = dict[str, Any]


# --------------------------------------------------------------------------------------------------
# Reading the state
# --------------------------------------------------------------------------------------------------


@dataclass
class StateView:
    """The parts of a state the metrics read."""

    turn: int
    stack: list[dict[str, Any]]
    done: list[dict[str, Any]]
    timeline: list[dict[str, Any]]
    errors: list[dict[str, Any]]
    handoff: Any

    @classmethod
    def parse(cls, text: str) -> StateView:
        state, _ = load_state(text or "")
        return cls(turn=int(state.get("turn") or 0), stack=list(state.get("task_stack") or []),
                   done=list(state.get("done") or []), timeline=list(state.get("timeline") or []),
                   errors=list(state.get("errors") or []), handoff=state.get("handoff"))

    @property
    def current(self) -> str:
        return str(self.stack[-1]["name"]) if self.stack else ""

    def open_by_id(self) -> dict[str, tuple[str, Slots, str]]:
        return {str(t["id"]): (str(t["name"]), dict(t.get("slots") or {}), str(t.get("stage") or ""))
                for t in self.stack}

    def open_by_name(self) -> dict[str, Slots]:
        """Slots of every open task by name (the topmost when a name is open twice)."""
        out: dict[str, Slots] = {}
        for task in self.stack:
            out[str(task["name"])] = dict(task.get("slots") or {})
        return out

    def entry(self, after_turn: int) -> dict[str, Any] | None:
        """The timeline entry of turn ``after_turn`` (None when the turn left none)."""
        return next((e for e in reversed(self.timeline) if e.get("turn") == after_turn), None)


# --------------------------------------------------------------------------------------------------
# One turn
# --------------------------------------------------------------------------------------------------


@dataclass
class Check:
    name: str
    passed: bool
    detail: str = ""


@dataclass
class Execution:
    task: str
    task_id: str
    slots: Slots
    wrongful: bool
    reasons: list[str]
    completeness: float


@dataclass
class Write:
    task: str
    slot: str
    old: Any
    new: Any
    kind: str  # asked | wrong | unasked


@dataclass
class TurnScore:
    """Everything scored on one turn (also what the trace shows)."""

    index: int
    user: str
    error: str = ""
    not_run: bool = False
    action: str | None = None
    current_task: str = ""
    checks: list[Check] = field(default_factory=list)
    jga: bool | None = None
    slot_positions: int = 0
    slot_correct: int = 0
    tp: int = 0
    fp: int = 0
    fn: int = 0
    executions: list[Execution] = field(default_factory=list)
    expected_executions: list[dict[str, Any]] = field(default_factory=list)  # {task, slots, success}
    writes: list[Write] = field(default_factory=list)
    unreadable: bool = False
    answer_checks: int = 0
    answer_passed: int = 0
    forbidden: list[str] = field(default_factory=list)
    calls: int | None = 0  # None: the target cannot tell (TurnOutput.calls_known)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_seconds: float = 0.0
    wall_seconds: float = 0.0
    applied: list[str] = field(default_factory=list)
    dropped: list[Any] = field(default_factory=list)
    signature: str = ""
    cause: str = ""  # why the turn is not right (dskit.tooling.eval.causes); "" when it is

    @property
    def passed(self) -> bool:
        return (not self.error and all(c.passed for c in self.checks) and not self.forbidden
                and not any(e.wrongful for e in self.executions))

    @property
    def wrongful(self) -> int:
        return sum(1 for e in self.executions if e.wrongful)

    def failures(self) -> list[str]:
        lines = [self.error] if self.error else []
        lines += [f"{c.name}: {c.detail}" for c in self.checks if not c.passed]
        lines += [f"forbidden: {f}" for f in self.forbidden]
        lines += [f"wrongful execution of {e.task}: {'; '.join(e.reasons)}" for e in self.executions if e.wrongful]
        return lines

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["passed"] = self.passed
        data["failures"] = self.failures()
        return data


def _fmt(slots: Mapping[str, Any]) -> str:
    return json.dumps(dict(slots), ensure_ascii=False, sort_keys=True)


class TurnScorer:
    """Scores one turn of one conversation."""

    def __init__(self, catalog: Catalog, turn: EvalTurn, index: int, before: StateView, after: StateView,
                 output: TurnOutput, outstanding: list[dict[str, Any]]) -> None:
        self.catalog = catalog
        self.outstanding = outstanding
        self.turn = turn
        self.before = before
        self.after = after
        self.output = output
        self.score = TurnScore(index=index, user=turn.user, error=output.error)
        ran = not output.error and after.turn > before.turn
        self.entry = after.entry(after.turn) if ran else None
        self.ran = ran

    # ------------------------------------------------------------------ helpers

    def _same(self, task: str, left: Mapping[str, Any] | None, right: Mapping[str, Any] | None) -> bool:
        return canon_slots(self.catalog, task, left) == canon_slots(self.catalog, task, right)

    def _executed(self) -> list[dict[str, Any]]:
        """What ran this turn: each submission and the waiting sub-tasks submitted with it."""
        if not self.ran:
            return []
        out = []
        for entry in (d for d in self.after.done if d.get("turn") == self.after.turn):
            out.append(entry)
            out += [dict(sub, _with_parent=True) for sub in entry.get("subtasks") or [] if isinstance(sub, dict)]
        return out

    def _expected_slots_for(self, task: str) -> Slots | None:
        """What the turn expects ``task``'s slots to be afterwards, None when it does not say."""
        expect = self.turn.expect
        if task in (expect.get("state") or {}):
            return dict(expect["state"][task] or {})
        if "slots" in expect and expect.get("task") == task:
            return dict(expect["slots"] or {})
        for item in self.turn.executions():
            if item["task"] == task:
                return dict(item.get("slots") or {})
        return None

    # ------------------------------------------------------------------ parts

    def run(self) -> TurnScore:
        s = self.score
        s.current_task = self.after.current
        s.calls = len(self.output.calls) if self.output.calls_known else None
        s.prompt_tokens = sum(c.prompt_tokens for c in self.output.calls)
        s.completion_tokens = sum(c.completion_tokens for c in self.output.calls)
        s.llm_seconds = round(sum(c.latency for c in self.output.calls), 3)
        s.wall_seconds = round(self.output.seconds, 3)
        if self.entry is not None:
            s.action = self.entry.get("action")
            s.applied = list(self.entry.get("applied") or [])
            s.dropped = list(self.entry.get("dropped") or [])
        s.unreadable = self.ran and any(e.get("turn") == self.after.turn and e.get("code") == "understanding"
                                        for e in self.after.errors)
        self._goal()
        self._executions()
        self._writes()
        self._checks()
        self._forbid()
        s.signature = self._signature()
        s.cause = attribute(self)
        return s

    def _goal(self) -> None:
        """JGA, slot accuracy and slot P/R against the expected slots (when the turn states them)."""
        expect, s = self.turn.expect, self.score
        actual = self.after.open_by_name()
        if "state" in expect:
            wanted = {t: dict(v or {}) for t, v in expect["state"].items()}
            scope = set(wanted) | set(actual)
            s.jga = set(wanted) == set(actual) and all(self._same(t, wanted[t], actual.get(t)) for t in wanted)
        elif "slots" in expect:
            task = expect["task"]
            wanted = {task: dict(expect["slots"] or {})}
            scope = {task}
            s.jga = self.after.current == task and self._same(task, wanted[task], actual.get(task))
        elif "task" in expect and not expect["task"]:
            wanted, scope = {}, set(actual)
            s.jga = not self.after.stack
        else:
            return
        for task in scope:
            spec = self.catalog.tasks.get(task)
            want = canon_slots(self.catalog, task, wanted.get(task))
            have = canon_slots(self.catalog, task, actual.get(task))
            for slot in (spec.slots if spec else set(want) | set(have)):
                s.slot_positions += 1
                s.slot_correct += want.get(slot) == have.get(slot)
            pairs_want, pairs_have = set(want.items()), set(have.items())
            s.tp += len(pairs_want & pairs_have)
            s.fp += len(pairs_have - pairs_want)
            s.fn += len(pairs_want - pairs_have)

    def _confirmed(self, task_id: str, slots: Slots, name: str, with_parent: bool) -> bool:
        """The user said yes to exactly these slots: the task was awaiting confirmation with them last
        turn, and this turn applied a confirm of it. A sub-task submitted with its parent may have been
        confirmed on an earlier turn: then it was waiting for the parent with exactly these slots (the
        engine lets a task that asks for confirmation wait only once confirmed, and any change to it
        ends the wait)."""
        before = self.before.open_by_id().get(task_id)
        applied = self.entry.get("applied") or [] if self.entry else []
        if before is None or not self._same(name, before[1], slots):
            return False
        if with_parent and before[2] == "WAITING":
            return True
        # the model's confirm, or the engine's backup of a plain yes the model left out (dskit.turn.backup)
        return before[2] == "CONFIRMING" and any(a in (f"confirm {task_id}", f"backup confirm {task_id}")
                                                 for a in applied)

    def _executions(self) -> None:
        """Score what ran: an execution matches an expected one of this turn (its slots must be
        exactly the expected ones), else an outstanding one of another turn with exactly its slots (early
        or late, not wrongful), else nobody asked for it."""
        s = self.score
        for done in self._executed():
            name, task_id, slots = str(done.get("task")), str(done.get("task_id")), dict(done.get("slots") or {})
            spec = self.catalog.tasks.get(name)
            have = canon_slots(self.catalog, name, slots)
            reasons = []
            match = next((e for e in self.outstanding
                          if e["turn"] == s.index and e["task"] == name and not e["matched"]), None)
            if match is None:
                match = next((e for e in self.outstanding if e["task"] == name and not e["matched"]
                              and canon_slots(self.catalog, name, e["slots"]) == have), None)
            if match is None:
                reasons.append("nobody asked for it")
            else:
                match["matched"] = True
                want = canon_slots(self.catalog, name, match["slots"])
                wrong = sorted(k for k in set(want) | set(have) if want.get(k) != have.get(k))
                if wrong:
                    reasons.append("slots " + ", ".join(
                        f"{k}={json.loads(have[k]) if k in have else None!r} (expected "
                        f"{json.loads(want[k]) if k in want else None!r})" for k in wrong))
            if spec is not None and spec.confirm and not self._confirmed(task_id, slots, name,
                                                                          bool(done.get("_with_parent"))):
                reasons.append("the catalog asks for confirmation and the user did not confirm these slots")
            if match is not None and not reasons:
                match["success"], match["done_turn"] = True, s.index
            required = [n for n, sp in (spec.slots.items() if spec else []) if sp.required]
            filled = sum(1 for n in required if slots.get(n) is not None)
            s.executions.append(Execution(name, task_id, slots, bool(reasons), reasons,
                                          filled / len(required) if required else 1.0))

    def _writes(self) -> None:
        """Every slot set, changed or deleted this turn, classed asked / wrong / unasked."""
        if not self.ran:
            return
        before = self.before.open_by_id()
        touched = {tid: (name, slots) for tid, (name, slots, _) in self.after.open_by_id().items()}
        for done in self._executed():
            touched[str(done.get("task_id"))] = (str(done.get("task")), dict(done.get("slots") or {}))
        for task_id, (name, new) in touched.items():
            old = before.get(task_id, (name, {}, ""))[1]
            expected = self._expected_slots_for(name)
            target = old if expected is None else expected
            for slot in dict.fromkeys(list(old) + list(new)):
                was, now = canon(self.catalog, name, slot, old.get(slot)), canon(self.catalog, name, slot, new.get(slot))
                if was == now:
                    continue
                want = canon(self.catalog, name, slot, target.get(slot))
                kind = "asked" if want == now else "unasked" if want == was else "wrong"
                self.score.writes.append(Write(name, slot, old.get(slot), new.get(slot), kind))

    def _checks(self) -> None:
        expect, s, after = self.turn.expect, self.score, self.after
        add = s.checks.append
        if "next_action" in expect:
            add(Check("next_action", s.action == expect["next_action"], f"{s.action!r}, expected {expect['next_action']!r}"))
        if "task" in expect:
            add(Check("task", after.current == (expect["task"] or ""), f"{after.current!r}, expected {expect['task']!r}"))
        if "slots" in expect:
            have = after.open_by_name().get(expect["task"]) if after.current == expect["task"] else None
            add(Check("slots", have is not None and self._same(expect["task"], expect["slots"], have),
                      f"{_fmt(have or {})}, expected {_fmt(expect['slots'] or {})}"))
        if "state" in expect:
            add(Check("state", bool(s.jga), f"{_fmt(after.open_by_name())}, expected {_fmt(expect['state'])}"))
        if "stack" in expect:
            stack = [f"{t['name']}:{t['stage']}" for t in after.stack]
            add(Check("stack", stack == list(expect["stack"]), f"{stack}, expected {expect['stack']}"))
        if "execute" in expect or s.executions:
            on_time = all(e.get("done_turn") == s.index for e in s.expected_executions)
            ok = on_time and len(s.executions) == len(s.expected_executions)
            ran = [f"{e.task}{_fmt(e.slots)}" for e in s.executions]
            add(Check("execute", ok, f"ran {ran or 'nothing'}, expected "
                                     f"{[e['task'] + _fmt(e['slots']) for e in s.expected_executions] or 'nothing'}"))
        if "done" in expect:
            done = [{"task": d.get("task"), "status": d.get("status")} for d in after.done]
            wanted = list(expect["done"])
            add(Check("done", done[-len(wanted):] == wanted if wanted else not done, f"{done}, expected to end with {wanted}"))
        if "handoff" in expect:
            reason = (after.handoff or {}).get("reason") if isinstance(after.handoff, dict) else None
            add(Check("handoff", reason == expect["handoff"], f"{reason!r}, expected {expect['handoff']!r}"))
        answer = self.output.answer or ""
        for item in _items(expect.get("answer_contains")):
            s.answer_checks += 1
            ok = str(item) in answer
            s.answer_passed += ok
            add(Check("answer_contains", ok, f"{answer[:120]!r} lacks {item!r}"))
        for item in _items(expect.get("answer_not_contains")):
            s.answer_checks += 1
            ok = str(item) not in answer
            s.answer_passed += ok
            add(Check("answer_not_contains", ok, f"{answer[:120]!r} contains {item!r}"))

    def _forbid(self) -> None:
        forbid, s = self.turn.forbid, self.score
        ran = [e.task for e in s.executions]
        rule = forbid.get("execute")
        if rule is True and ran:
            s.forbidden.append(f"executed {ran}")
        elif isinstance(rule, list) and set(rule) & set(ran):
            s.forbidden.append(f"executed {sorted(set(rule) & set(ran))}")
        if forbid.get("handoff") and s.action == "handoff":
            s.forbidden.append("handed off")
        if s.action is not None and s.action in _items(forbid.get("next_action")):
            s.forbidden.append(f"next_action {s.action}")
        holders = [(n, sl) for n, sl in self.after.open_by_name().items()] + [(e.task, e.slots) for e in s.executions]
        for slot, values in (forbid.get("slots") or {}).items():
            for name, slots in holders:
                if slot not in slots or name not in self.catalog.tasks or slot not in self.catalog.tasks[name].slots:
                    continue
                have = canon(self.catalog, name, slot, slots[slot])
                if any(have == canon(self.catalog, name, slot, v) for v in _items(values)):
                    s.forbidden.append(f"{name}.{slot} = {slots[slot]!r}")

    def _signature(self) -> str:
        state = {n: canon_slots(self.catalog, n, sl) if n in self.catalog.tasks else sl
                 for n, sl in self.after.open_by_name().items()}
        ran = [[e.task, canon_slots(self.catalog, e.task, e.slots)] for e in self.score.executions]
        return json.dumps([self.score.action, self.after.current, state, ran, bool(self.score.error)],
                          ensure_ascii=False, sort_keys=True)


def _items(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


class ConversationScorer:
    """Scores the turns of one conversation in order.

    It keeps the expected executions that have not happened yet (``outstanding``), so an execution one
    turn early or late with exactly the expected slots counts as the task done (not as wrongful), and
    where each task's expectations begin, for turns to completion.
    """

    def __init__(self, catalog: Catalog, turns: Sequence[EvalTurn]) -> None:
        self.catalog = catalog
        self.turns = list(turns)
        self.outstanding: list[dict[str, Any]] = []
        self._start: dict[str, int] = {}

    def _register(self, index: int) -> list[dict[str, Any]]:
        turn = self.turns[index]
        names = ({turn.expect.get("task")} | set(turn.expect.get("state") or {})
                 | {e["task"] for e in turn.executions()}) - {None, ""}
        for name in names:
            self._start.setdefault(name, index)
        expected = []
        for item in turn.executions():
            entry = {"turn": index, "task": item["task"], "slots": dict(item.get("slots") or {}),
                     "start": self._start.pop(item["task"], index), "matched": False, "success": False,
                     "done_turn": None}
            self.outstanding.append(entry)
            expected.append(entry)
        return expected

    def score(self, index: int, before_text: str, output: TurnOutput) -> TurnScore:
        """Score turn ``index`` from the state before it and what the target returned."""
        expected = self._register(index)
        scorer = TurnScorer(self.catalog, self.turns[index], index, StateView.parse(before_text),
                            StateView.parse(output.state_text), output, self.outstanding)
        scorer.score.expected_executions = expected
        return scorer.run()

    def not_run(self, index: int, reason: str) -> TurnScore:
        """A turn a stopped conversation never reached: wrong, and counted as not run."""
        turn = self.turns[index]
        score = TurnScore(index=index, user=turn.user, error=reason, not_run=True)
        if any(k in turn.expect for k in ("slots", "state")) or ("task" in turn.expect and not turn.expect["task"]):
            score.jga = False
        score.expected_executions = self._register(index)
        return score


# --------------------------------------------------------------------------------------------------
# Summaries
# --------------------------------------------------------------------------------------------------


@dataclass
class ConversationResult:
    """One run of one suite's conversation."""

    suite: str
    repeat: int
    turns: list[TurnScore]
    error: str = ""  # the first error that stopped it

    @property
    def passed(self) -> bool:
        return all(t.passed for t in self.turns)


def _rate(part: float, whole: float) -> float | None:
    """A share, kept to 6 places: the table prints one decimal of a percentage, and rounding twice
    (to 4 places here, then for print) showed 25/31 as 80.7% where the docs say 80.6%."""
    return round(part / whole, 6) if whole else None


def _percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    if len(ordered) == 1:
        return round(ordered[0], 3)
    return round(statistics.quantiles(ordered, n=100, method="inclusive")[int(q) - 1], 3)


def turns_to_completion(conversations: Iterable[ConversationResult]) -> tuple[float | None, float | None]:
    """Mean user turns from a task's first expected mention to its correct execution: (actual, scripted)."""
    pairs = [(e["done_turn"] - e["start"] + 1, e["turn"] - e["start"] + 1)
             for c in conversations for t in c.turns for e in t.expected_executions if e["success"]]
    if not pairs:
        return None, None
    return round(statistics.fmean(a for a, _ in pairs), 2), round(statistics.fmean(b for _, b in pairs), 2)


def summarize(conversations: Sequence[ConversationResult]) -> dict[str, Any]:
    """The summary figures over conversations (see docs/eval.md for each definition)."""
    turns = [t for c in conversations for t in c.turns]
    ran = [t for t in turns if not t.not_run]
    ok_ran = [t for t in ran if not t.error]
    scored = [t for t in turns if t.jga is not None]
    executions = [e for t in turns for e in t.executions]
    expected = [e for t in turns for e in t.expected_executions]
    writes = Counter(w.kind for t in turns for w in t.writes)
    tp, fp, fn = (sum(getattr(t, k) for t in turns) for k in ("tp", "fp", "fn"))
    precision, recall = _rate(tp, tp + fp), _rate(tp, tp + fn)
    f1 = round(2 * precision * recall / (precision + recall), 4) if precision and recall else (0.0 if tp + fp + fn else None)
    latency = [t.llm_seconds for t in ok_ran]
    actual_ttc, scripted_ttc = turns_to_completion(conversations)
    figures = {
        "conversations": len(conversations),
        "conversations_failed": sum(1 for c in conversations if c.error),
        "turns": len(turns),
        "errors": sum(1 for t in ran if t.error),
        "not_run": sum(1 for t in turns if t.not_run),
        "turn_accuracy": _rate(sum(t.passed for t in turns), len(turns)),
        "first_pass_rate": _rate(sum(c.passed for c in conversations), len(conversations)),
        "jga": _rate(sum(bool(t.jga) for t in scored), len(scored)),
        "jga_turns": len(scored),
        "slot_accuracy": _rate(sum(t.slot_correct for t in turns), sum(t.slot_positions for t in turns)),
        "slot_precision": precision, "slot_recall": recall, "slot_f1": f1,
        "executions": len(executions),
        "wrongful_executions": sum(e.wrongful for e in executions),
        "expected_executions": len(expected),
        "task_success": _rate(sum(e["success"] for e in expected), len(expected)),
        "completeness": round(statistics.fmean(e.completeness for e in executions), 4) if executions else None,
        "turns_to_completion": actual_ttc,
        "turns_to_completion_scripted": scripted_ttc,
        "unasked_writes": writes.get("unasked", 0),
        "wrong_writes": writes.get("wrong", 0),
        "asked_writes": writes.get("asked", 0),
        "forbidden": sum(len(t.forbidden) for t in turns),
        "fallback_rate": _rate(sum(t.action == "fallback" for t in ran), len(ran)),
        "unreadable_rate": _rate(sum(t.unreadable for t in ran), len(ran)),
        "handoff_rate": _rate(sum(t.action == "handoff" for t in ran), len(ran)),
        "answer_checks": _rate(sum(t.answer_passed for t in turns), sum(t.answer_checks for t in turns)),
        "llm_calls_per_turn": _calls_per_turn(ok_ran),
        "prompt_tokens_per_turn": round(statistics.fmean(t.prompt_tokens for t in ok_ran), 1) if ok_ran else None,
        "completion_tokens_per_turn": round(statistics.fmean(t.completion_tokens for t in ok_ran), 1) if ok_ran else None,
        "latency_p50": _percentile(latency, 50),
        "latency_p95": _percentile(latency, 95),
        "wall_seconds_per_turn": round(statistics.fmean(t.wall_seconds for t in ok_ran), 3) if ok_ran else None,
    }
    figures["consistency"] = consistency(conversations)
    causes = Counter(t.cause for t in turns if t.cause)
    figures["causes"] = {cause: causes.get(cause, 0) for cause in CAUSES}
    return figures


def _calls_per_turn(turns: list[TurnScore]) -> float | str | None:
    """Mean LLM calls a turn; "unknown" when a target could not count them (Dify's blocking mode)."""
    if not turns:
        return None
    if any(t.calls is None for t in turns):
        return "unknown"
    return round(statistics.fmean(t.calls or 0 for t in turns), 3)


def consistency(conversations: Iterable[ConversationResult]) -> float | None:
    """Mean share of repeats that agree with the most common outcome of each turn (None without repeats)."""
    by_turn: dict[tuple[str, int], list[str]] = {}
    for conversation in conversations:
        for turn in conversation.turns:
            by_turn.setdefault((conversation.suite, turn.index), []).append(turn.signature)
    shares = [Counter(sigs).most_common(1)[0][1] / len(sigs) for sigs in by_turn.values() if len(sigs) > 1]
    return round(statistics.fmean(shares), 4) if shares else None
