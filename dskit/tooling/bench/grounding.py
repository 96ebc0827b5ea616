"""``dskit bench grounding``: how much of what the user said grounding keeps (recall), on CrossWOZ.

A *perfect* model answers every user turn with exactly the gold state change of that turn (CrossWOZ's
``sys_state_init`` against the previous system turn's ``sys_state``), as ``start_task``/``set_slots``
commands. The engine folds them grounded, as the Chatflow's state node does: in the user's message,
their recent messages and the assistant's last reply (:func:`dskit.surfaces.turn_inputs.turn_inputs`). Whatever
is lost is lost to grounding and the engine's policy — never to the model.

Every gold change is classified by where its value came from, with CrossWOZ's own dialogue acts
(and the texts, for values the acts spell differently):

- ``user``: the user said it (an act or the text of this turn or an earlier user turn);
- ``offered``: the system offered it (an act or the text of an earlier system turn) and the user took it
  ("就去那儿吧" after 故宫 was recommended);
- ``system``: neither — the wizard changed the state by itself (dropping or loosening a constraint it
  could not meet, filling a "周边…" relation from its database, or writing the pick the user asked it
  for — a ``Select`` act of the value's domain, or a value its reply to this message gives). A tracker
  of the *user's* wishes should refuse these, so their acceptance is a cost, not a gain.

Reported per class (gold changes, accepted), with joint goal accuracy teacher-forced (each turn starts
from the previous gold state) and cumulative (the engine carries its own state), each beside the
"answers nothing" baseline, and the changed-turn JGA. Deletions count as changes too.

Two JGAs, because the gold state holds the wizard's own changes: against CrossWOZ's **gold** state, a
tracker that refuses them is counted wrong on those turns; against the **user's wishes** (the gold state
without the system-made changes: each keeps the value it had before), refusing them is right and taking
them is wrong. The second is what a tracker of the user's wishes should score high on.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from typing import Any

from dskit.rules.grounding import fold
from dskit.surfaces.nodes import history_node
from dskit.surfaces.turn_inputs import turn_inputs

from ..replay.crosswoz import crosswoz_schema, load_crosswoz, raw_state
from ..replay.driver import EngineDriver, State, diff
from ..replay.llm import CROSSWOZ_ALIASES, CROSSWOZ_SLOTS, CROSSWOZ_TASKS, describe_catalog
from ..replay.score import normalize

SOURCES = ("user", "offered", "system")


@dataclass
class Turn:
    """One user turn of a CrossWOZ dialogue, with what the classification needs."""

    user: str
    system: str
    start: State  # the previous system turn's gold state (empty on the first turn)
    gold: State  # this turn's gold state (after the user's message)
    previous: State  # the previous turn's gold state (after the previous user message)
    user_said: list[str]  # values in the user's acts and texts so far, folded
    user_texts: str  # the user's texts so far, folded
    offered: list[str]  # values in earlier system acts, folded
    system_texts: str  # earlier system texts, folded
    said_now: list[str] = field(default_factory=list)  # values in this user message's acts, folded
    selects: list[str] = field(default_factory=list)  # domains this message asks the wizard to pick in (Select)
    answered: list[str] = field(default_factory=list)  # values in the system reply's acts, folded


def _act_values(acts: Any) -> list[str]:
    """The values of a message's dialogue acts ([intent, domain, slot, value]), folded."""
    values = []
    for act in acts or []:
        if isinstance(act, list) and len(act) >= 4 and isinstance(act[3], str) and act[3].strip():
            values.append(fold(act[3]))
    return values


def _selects(acts: Any) -> list[str]:
    """The domains of a message's ``Select`` acts: the user asks the wizard to pick one (a hotel near the
    sight, …) from its database."""
    return [act[1] for act in acts or [] if isinstance(act, list) and len(act) >= 2 and act[0] == "Select"]


def dialogue_turns(dialogue: dict) -> list[Turn]:
    """The user turns of one dialogue, each with the acts and texts said before and in it."""
    turns: list[Turn] = []
    said: list[str] = []
    offered: list[str] = []
    user_texts = system_texts = ""
    start: State = {}
    previous: State = {}
    messages = dialogue["messages"]
    for i, message in enumerate(messages):
        if message.get("role") == "usr":
            said += _act_values(message.get("dialog_act"))
            user_texts += fold(str(message.get("content") or "")) + "|"
            continue
        user = messages[i - 1] if i > 0 and messages[i - 1].get("role") == "usr" else {}
        gold = normalize(raw_state(message.get("sys_state_init")))
        asked = user.get("dialog_act") or []
        turns.append(Turn(str(user.get("content") or ""), str(message.get("content") or ""), normalize(start),
                          gold, previous, list(said), user_texts, list(offered), system_texts,
                          _act_values(asked), _selects(asked), _act_values(message.get("dialog_act"))))
        previous = gold
        offered += _act_values(message.get("dialog_act"))
        system_texts += fold(str(message.get("content") or "")) + "|"
        start = raw_state(message.get("sys_state"))
    return turns


def source_of(turn: Turn, value: str | None, slot: str = "", domain: str = "") -> str:
    """Where a gold change's value came from (see the module docstring); a deletion nobody asked for is
    the system's, and so is a "周边…" (nearby) value the user did not say: CrossWOZ's wizard fills those
    from its database when the user selects "near the hotel" (a ``Select`` act), not from an offer the
    user took. So is a value the user did not say in a message that asks the wizard to pick a thing of
    its domain (a ``Select`` act of that domain: "这些酒店中哪家有叫醒服务…？", "帮我在周边景点中推荐一个…"), and a value
    the wizard's reply to this message gives (its acts): the annotators wrote the wizard's pick into the
    state of the turn that asked for it, although it was named in some earlier reply too."""
    if value is None:
        return "system"
    folded = fold(value)
    if not folded:
        return "system"
    if any(folded == v or folded in v or v in folded for v in turn.user_said if v) or folded in turn.user_texts:
        return "user"
    parts = [part for part in value.split() if fold(part)]
    if len(parts) > 1 and all(source_of(turn, part, slot) == "user" for part in parts):
        return "user"  # several values of one slot ("24小时热水 洗衣服务"), each of them the user's
    if slot.startswith("周边"):
        return "system"
    if domain and domain in turn.selects:
        return "system"  # the user asked the wizard to pick one of this domain (near another): its pick
    if folded in turn.answered:
        return "system"  # the wizard's answer to this very message ("周边还有什么景点吗？" -> "周边景点有故宫")
    if any(folded == v or folded in v for v in turn.offered if v) or folded in turn.system_texts:
        return "offered"
    return "system"


@dataclass
class Figures:
    """Counts of one run (teacher-forced or cumulative)."""

    turns: int = 0
    right: int = 0
    wish_right: int = 0  # against the user's wishes: the gold state without the system-made changes
    baseline_right: int = 0  # a model that answers nothing
    changed_turns: int = 0
    changed_right: int = 0
    changes: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SOURCES, 0))
    accepted: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SOURCES, 0))
    misses: dict[str, int] = field(default_factory=lambda: dict.fromkeys((*SOURCES, "carried"), 0))
    # wrong turns by the source of the first change lost this turn; "carried": none lost this turn, an
    # earlier loss is still in the state
    examples: dict[str, list[str]] = field(default_factory=lambda: {s: [] for s in SOURCES})

    def as_dict(self) -> dict[str, Any]:
        def rate(a: int, b: int) -> float | None:
            return round(a / b, 4) if b else None

        return {"turns": self.turns, "jga": rate(self.right, self.turns),
                "wishes_jga": rate(self.wish_right, self.turns),
                "baseline_jga": rate(self.baseline_right, self.turns),
                "changed_turns": self.changed_turns, "changed_jga": rate(self.changed_right, self.changed_turns),
                "changes": dict(self.changes), "accepted": dict(self.accepted),
                "acceptance": {s: rate(self.accepted[s], self.changes[s]) for s in SOURCES},
                "wrong_turns_by_first_cause": dict(self.misses), "examples": self.examples}


def _run(dialogues: list[tuple[str, dict]], schema: dict[str, list[str]], teacher_forced: bool) -> Figures:
    driver = EngineDriver(schema)
    driver.set_catalog(describe_catalog(driver.catalog_data, driver.task_names, driver.slot_names,
                                        CROSSWOZ_TASKS, CROSSWOZ_SLOTS, CROSSWOZ_ALIASES))
    figures = Figures()
    for _, dialogue in dialogues:
        driver.reset()
        history, summary = "", ""
        own: State = {}
        wishes: State = {}
        for turn in dialogue_turns(dialogue):
            if teacher_forced:
                sync = diff(driver.slots(), turn.start)
                if sync:
                    driver.apply(sync)
            before = normalize(driver.slots()) if teacher_forced else own
            # teacher-forced: from the previous system turn's state; carried: every gold change since the
            # previous turn's state, the wizard's own included (the engine must refuse those by itself)
            gold_changes = diff(turn.start if teacher_forced else turn.previous, turn.gold)
            commands = driver.commands(diff(before, turn.gold) if teacher_forced else gold_changes)
            inputs = turn_inputs(turn.user, history)
            driver.apply_understanding({"rewritten_query": turn.user, "commands": commands},
                                       query=inputs.query, recent=inputs.recent, offered=inputs.offered)
            after = normalize(driver.slots())
            own = after
            wishes = _without_system(turn, turn.start if teacher_forced else wishes, gold_changes)
            figures.wish_right += after == wishes
            _score(figures, turn, turn.start if teacher_forced else {}, after, gold_changes)
            kept = history_node(old_history=history, summary=summary, user_query=turn.user, answer=turn.system)
            history, summary = kept["history"], kept["summary"]
    return figures


def _without_system(turn: Turn, before: State, changes: dict) -> State:
    """``before`` with this turn's gold changes applied except the system-made ones: the state a tracker
    of the user's wishes should hold now."""
    state = {domain: dict(slots) for domain, slots in before.items()}
    for domain, slots in changes.items():
        for slot, value in slots.items():
            if source_of(turn, value, slot, domain) == "system":
                continue
            if value is None:
                state.get(domain, {}).pop(slot, None)
            else:
                state.setdefault(domain, {})[slot] = value.strip() if isinstance(value, str) else value
    return {domain: slots for domain, slots in state.items() if slots}


def _score(figures: Figures, turn: Turn, nothing: State, after: State, changes: dict) -> None:
    """Count one turn; ``nothing``: the state a model that answers nothing would hold now."""
    figures.turns += 1
    right = after == turn.gold
    figures.right += right
    figures.baseline_right += nothing == turn.gold
    if changes:
        figures.changed_turns += 1
        figures.changed_right += right
    first_cause = None
    for domain, slots in changes.items():
        for slot, value in slots.items():
            source = source_of(turn, value, slot, domain)
            figures.changes[source] += 1
            if after.get(domain, {}).get(slot) == (value.strip() if isinstance(value, str) else None):
                figures.accepted[source] += 1
            else:
                first_cause = first_cause or source
                if source != "system" and len(figures.examples[source]) < 20:
                    figures.examples[source].append(f"{turn.user[:60]} -> {domain}.{slot}={value}")
    if not right:
        figures.misses[first_cause or "carried"] += 1


def bench_grounding(path: str, limit: int | None = None) -> dict[str, Any]:
    """Both runs on the first ``limit`` dialogues of a CrossWOZ file."""
    dialogues = load_crosswoz(path)[:limit] if limit else load_crosswoz(path)
    schema = crosswoz_schema(dialogues)
    return {"data": path, "dialogues": len(dialogues),
            "teacher_forced": _run(dialogues, schema, True).as_dict(),
            "cumulative": _run(dialogues, schema, False).as_dict()}


def render(result: dict[str, Any]) -> str:
    """The table ``dskit bench grounding`` prints (rich when available)."""
    from io import StringIO  # noqa: PLC0415

    from rich.console import Console  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:.1f}%"

    table = Table(title=f"Grounding recall, perfect understanding — CrossWOZ, {result['dialogues']} dialogues")
    for column in ("run", "JGA", "JGA, user's wishes", "answers nothing", "changed-turn JGA", "user said: accepted",
                   "offered: accepted", "system-made: accepted (should be low)"):
        table.add_column(column, justify="right" if column != "run" else "left")
    for key in ("teacher_forced", "cumulative"):
        r = result[key]
        cells = [f"{pct(r['acceptance'][s])} of {r['changes'][s]}" for s in SOURCES]
        table.add_row(key.replace("_", "-"), pct(r["jga"]), pct(r["wishes_jga"]), pct(r["baseline_jga"]),
                      pct(r["changed_jga"]), *cells)
    buffer = StringIO()
    console = Console(file=buffer, width=160, force_terminal=False)
    console.print(table)
    cumulative = result["cumulative"]
    wrong = cumulative["turns"] - round((cumulative["jga"] or 0) * cumulative["turns"])
    console.print(f"cumulative: {wrong} wrong turns; first lost change by source: "
                  + json.dumps(cumulative["wrong_turns_by_first_cause"]))
    return buffer.getvalue()


DEFAULT_DATA = "../shared/data/crosswoz/val.json.zip"


def run(args: argparse.Namespace) -> int:
    """``dskit bench grounding``: print the table (or JSON); 2 when the data cannot be read."""
    import sys  # noqa: PLC0415

    from ..replay.data import DataError  # noqa: PLC0415

    try:
        result = bench_grounding(args.path, args.limit or None)
    except (DataError, OSError) as exc:
        print(f"dskit bench grounding: {exc}\nCrossWOZ is published at github.com/thu-coai/CrossWOZ "
              "(data/crosswoz/val.json.zip); pass its path.", file=sys.stderr)
        return 2
    print(json.dumps(result, ensure_ascii=False, indent=2) if args.json else render(result))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``bench grounding``."""
    parser = subparsers.add_parser(
        "grounding",
        help="grounding recall with perfect understanding on CrossWOZ, by where each value came from",
        description="A perfect model answers every CrossWOZ user turn with the gold state change; the engine "
                    "folds it grounded as the Chatflow does. Prints acceptance of the values the user said, "
                    "the values the system offered and the user took, and the changes the system made by "
                    "itself (which should be refused), with JGA teacher-forced and carried, beside the "
                    "'answers nothing' baseline.",
    )
    parser.add_argument("path", nargs="?", default=DEFAULT_DATA, help=f"CrossWOZ file (default: {DEFAULT_DATA})")
    parser.add_argument("--limit", type=int, default=0, help="only the first N dialogues")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)


__all__ = ["bench_grounding", "render", "source_of", "dialogue_turns", "SOURCES"]
