"""Joint goal accuracy and slot accuracy, as the CrossWOZ evaluation computes them.

Per evaluated turn, every (domain, slot) position of the data set's schema is compared: the engine's
value against the gold one, an unset slot counting as the empty value. The joint goal is right when
every position is; slot accuracy is the share of right positions over all turns. Values are compared
with surrounding whitespace removed (the engine stores strings stripped; a few gold values carry a
stray tab or space, e.g. ``"4小时 "``). A value outside the schema counts as one more position.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .driver import State, is_blank

MAX_FAILURES_KEPT = 200


def normalize(state: dict) -> State:
    """A gold or engine state in the compared form: set values only, stripped, no ``selectedResults``."""
    result: State = {}
    for domain, slots in (state or {}).items():
        if not isinstance(slots, dict):
            continue
        for slot, value in slots.items():
            if slot == "selectedResults" or is_blank(value):
                continue
            result.setdefault(domain, {})[slot] = value.strip() if isinstance(value, str) else str(value)
    return result


@dataclass
class TurnFailure:
    """A turn whose joint goal was wrong: where, and each differing slot as (engine, gold)."""

    dialogue: str
    turn: int
    diffs: dict[str, tuple[str, str]]


@dataclass
class ReplayResult:
    """Counts of one replay; the rates are derived from them."""

    dataset: str
    mode: str
    dialogues: int = 0
    turns: int = 0
    joint_correct: int = 0
    slots_correct: int = 0
    slots_total: int = 0
    seconds: float = 0.0
    engine_steps: int = 0
    failures: list[TurnFailure] = field(default_factory=list)
    anomalies: dict[str, int] = field(default_factory=dict)
    anomaly_examples: dict[str, list[str]] = field(default_factory=dict)
    notes: dict[str, int] = field(default_factory=dict)
    domains: dict[str, list[int]] = field(default_factory=dict)  # domain -> [right, turns where it is in play]
    llm: dict | None = None  # calls, errors, tokens, latency when a model understood the turns
    # Beside a model's figures (when the replay gives each turn's starting point):
    baseline_correct: int = 0  # turns a model that answers nothing gets right
    changed_turns: int = 0  # turns whose gold state differs from the previous one
    changed_correct: int = 0
    broken_unchanged: int = 0  # unchanged turns that started right and ended wrong
    compared: int = 0  # turns scored with a starting point

    @property
    def jga(self) -> float:
        return self.joint_correct / self.turns if self.turns else 0.0

    @property
    def slot_accuracy(self) -> float:
        return self.slots_correct / self.slots_total if self.slots_total else 0.0

    @property
    def turns_per_second(self) -> float:
        return self.turns / self.seconds if self.seconds > 0 else 0.0

    def as_json(self) -> dict:
        """The machine-readable summary printed by ``--json``."""
        data = {"jga": self.jga, "slot_accuracy": self.slot_accuracy, "dialogues": self.dialogues,
                "turns": self.turns, "turns_per_second": round(self.turns_per_second, 1)}
        if self.llm is not None:
            data.update(self.llm)
            data["domains"] = self.domain_jga()
        if self.compared:
            data.update(self.beside())
        return data

    def beside(self) -> dict:
        """What stands beside the model's JGA: the "answers nothing" baseline, JGA over the turns whose
        state changes, and the unchanged turns the model broke."""
        unchanged = self.compared - self.changed_turns
        return {"baseline_jga": self.baseline_correct / self.compared if self.compared else 0.0,
                "changed_turns": self.changed_turns, "changed_correct": self.changed_correct,
                "changed_jga": self.changed_correct / self.changed_turns if self.changed_turns else 0.0,
                "unchanged_turns": unchanged, "broken_unchanged": self.broken_unchanged}

    def domain_jga(self) -> dict[str, float]:
        """Per domain: the share of turns, among those where gold or the engine has the domain, whose
        slots of that domain are all right."""
        return {d: round(right / seen, 4) for d, (right, seen) in self.domains.items() if seen}


class Scorer:
    """Accumulates turn comparisons into a :class:`ReplayResult`."""

    def __init__(self, result: ReplayResult, schema: dict[str, list[str]]) -> None:
        self.result = result
        self.positions = [(domain, slot) for domain, slots in schema.items() for slot in slots]
        self.known = set(self.positions)

    def add(self, dialogue: str, turn: int, predicted: State, gold: State, *, previous: State | None = None,
            before: State | None = None, nothing: State | None = None) -> bool:
        """Compare one turn; True when the joint goal is right. With ``previous`` (the gold state the turn
        changes), ``before`` (the state the engine started the turn from) and ``nothing`` (what a model
        that answers nothing would hold now) the turn also counts for :meth:`ReplayResult.beside`."""
        right = self._compare(dialogue, turn, predicted, gold)
        if previous is not None and before is not None and nothing is not None:
            result = self.result
            result.compared += 1
            result.baseline_correct += nothing == gold
            if previous != gold:
                result.changed_turns += 1
                result.changed_correct += right
            elif before == gold and not right:
                result.broken_unchanged += 1
        return right

    def _compare(self, dialogue: str, turn: int, predicted: State, gold: State) -> bool:
        extra = {(d, s) for state in (predicted, gold) for d, slots in state.items() for s in slots} - self.known
        diffs = {}
        for domain, slot in self.positions + sorted(extra):
            mine = predicted.get(domain, {}).get(slot, "")
            theirs = gold.get(domain, {}).get(slot, "")
            if mine != theirs:
                diffs[f"{domain}.{slot}"] = (mine, theirs)
        total = len(self.positions) + len(extra)
        for domain in {d for state in (predicted, gold) for d, slots in state.items() if slots}:
            counts = self.result.domains.setdefault(domain, [0, 0])
            counts[1] += 1
            counts[0] += not any(key.startswith(f"{domain}.") for key in diffs)
        self.result.turns += 1
        self.result.slots_total += total
        self.result.slots_correct += total - len(diffs)
        if diffs:
            if len(self.result.failures) < MAX_FAILURES_KEPT:
                self.result.failures.append(TurnFailure(dialogue, turn, diffs))
            return False
        self.result.joint_correct += 1
        return True
