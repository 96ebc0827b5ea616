"""The decision of a turn: after the commands, what the engine does next and what it says.

Priorities: handoff > execute > faq > ask/confirm > chitchat. A task that acts is confirmed first
(unless the catalog marks it read-only); nothing executes with a required slot empty (the guard,
:func:`dskit.state.gaps.missing_slots`); a refused change withdraws a pending confirmation; after a task
ends, the next one says what it needs (docs/design.md). :func:`next_step` works out what a task needs
without touching it; the caller applies the step's stage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .effects import (Asked, AskFailed, Executed, HandedOff, NotUnderstood, Refused, StackLimited, StageSet,
                      TaskOpened)
from ..state.gaps import ask_text, missing_slots
from ..state.integrity import shown_digest
from ..base.messages import msg, sentences, show_value
from ..state.records import Decision, ExecutePayload, Stage, TaskRecord, new_decision
from .backup import names_task
from ..rules.grounding import nothing_beyond_task
from ..rules.slot_shapes import forms_said
from .reducer import reduce
from .subtasks import settle_subtasks
from ..base.text import short_text
from .turn import Turn
from ..state.views import values_text


@dataclass(frozen=True)
class Step:
    """What an open task needs next: action ask_slot|confirm|execute|handoff, the slot asked, the
    question, and the stage the task takes (None: it stays as it is)."""

    action: str
    slot: str | None = None
    question: str = ""
    stage: Stage | None = None


# ---------------------------------------------------------------- what a task needs

def next_step(turn: Turn, task: dict, resumed: bool) -> Step:
    """What the open task needs next (pure: the caller applies ``stage``)."""
    spec = turn.spec(task)
    held = task.get("unconfirmed")
    if held:  # values the user did not say (policy "ask"): checked before anything else
        return Step("confirm", next(iter(held)), msg("check", turn.lang, values=_held_text(turn, task, held)))
    missing = missing_slots(task, spec)
    if missing:
        return _ask_missing(turn, task, missing[0])
    if task["id"] == turn.log.denied_id and not turn.writes.changed_in(task):
        names = msg("list_sep", turn.lang).join(s.display for s in spec.slots.values())
        return Step("ask_slot", "", msg("deny", turn.lang, slots=names), Stage.COLLECTING)
    if withdraws_confirmation(turn, task):
        return Step("ask_slot", "", msg("unapplied", turn.lang, task=spec.display,
                                        values=_values(turn, task) or "—"), Stage.COLLECTING)
    # a task waiting for its yes keeps waiting, even one that needs none by itself (an enquiry held for a
    # yes when it opened, _opened_unasked): only a confirmation runs it
    confirm_needed = spec.confirm or (resumed and spec.kind == "multi_turn") or _opened_unasked(turn, task) \
        or task["id"] in turn.before.confirming
    if task["id"] == turn.log.confirmed_id or not confirm_needed:
        return Step("execute")
    values = _values(turn, task) + "".join(
        msg("confirm_with", turn.lang, task=turn.spec(sub).display, values=_values(turn, sub))
        for sub in turn.stack.waiting_under(task))
    if resumed and not spec.confirm:
        question = msg("confirm_resume", turn.lang, task=spec.display, values=values)
    elif not values:
        question = msg("confirm_none", turn.lang, task=spec.display)
    else:
        question = msg("confirm", turn.lang, task=spec.display, values=values)
    return Step("confirm", None, question, Stage.CONFIRMING)


def _opened_unasked(turn: Turn, task: dict) -> bool:
    """Whether this task, opened this turn, was not plainly asked for: the engine opened it on its own
    reading of the message (the model gave no command for it, :mod:`dskit.turn.backup`), or the model
    opened it for a message about the task that was open before — one naming an option of that task's
    slots ("三百兆的多少钱一个月？" during a broadband order: the model opened the bill enquiry) and
    naming neither this task's label nor its doing (:func:`dskit.turn.backup.names_task`). Such a task
    never runs in the same turn, even an enquiry that needs no confirmation: its confirmation shows what
    would be done, a yes runs it, anything else leaves it ("再帮我查下上个月的话费" opened by the engine
    with no month would have answered for this month) — except a read-only enquiry the message asks for in
    nothing but its own words ("帮我查一下话费": :func:`dskit.rules.grounding.nothing_beyond_task`) and the
    values of its slots read by their form ("查一下我上个月的话费": the month,
    :func:`dskit.rules.slot_shapes.forms_said`), which has nothing to show and nothing to undo."""
    opened = [e for e in turn.log.of(TaskOpened) if e.task_id == task["id"]]
    if not opened:
        return False
    if any(e.source == "engine" for e in opened):  # a read-only enquiry asked for in nothing but its words runs
        spec = turn.spec(task)
        read = tuple(str(v).lower() for v in forms_said(spec, turn.evidence).values()) if turn.evidence else ()
        return not (spec.read_only and turn.evidence is not None and nothing_beyond_task(spec, turn.evidence.raw, read))
    return _about_the_task_before(turn, task) and not names_task(turn, turn.spec(task))


def _about_the_task_before(turn: Turn, task: dict) -> bool:
    """Whether the message names an option (or an alias of one) of a slot of another task that was open
    before this message."""
    evidence = turn.evidence
    if evidence is None:
        return False
    folded = evidence.message
    for other in turn.stack.tasks:
        if other["id"] == task["id"] or other["id"] not in turn.before.existing_ids:
            continue
        for slot in turn.spec(other).slots.values():
            words = [str(option) for option in slot.enum] + [str(alias) for alias in slot.aliases]
            if any(len(word) >= 2 and word.lower() in folded for word in words):
                return True
    return False


def _ask_missing(turn: Turn, task: dict, slot: str) -> Step:
    """Ask the first missing slot (acknowledging this turn's values), or hand off after too many asks."""
    if turn.state["counters"]["failed_asks"].get(f"{task['id']}.{slot}", 0) >= turn.catalog.policy.max_attempts:
        return Step("handoff", slot, "max_attempts")
    ack = ""
    changed = [n for n in turn.writes.changed_in(task)
               if n in task["slots"] and (task["id"], n) not in turn.writes.rolled_back]
    if changed:
        ack = msg("ack_values", turn.lang, values=_values(turn, task, list(dict.fromkeys(changed))))
    return Step("ask_slot", slot, sentences(turn.lang, ack, ask_text(turn.spec(task), slot, turn.lang)),
                Stage.COLLECTING)


def withdraws_confirmation(turn: Turn, task: dict) -> bool:
    """The user answered a confirmation question with something the model read as a change that the
    message does not support ("Let's go with Bangkok Garden" read as a new route). Asking the same
    question again would let the next "yes" run the values the user was trying to change, so the
    question is withdrawn: the reply says nothing was changed and asks what to change; only a fresh
    confirmation question, answered yes, runs the task (docs/grounding.md)."""
    log = turn.log
    return (log.unapplied and task["id"] in turn.before.confirming and not turn.writes.changed_in(task)
            and log.faq is None and not log.progress)


def _values(turn: Turn, task: dict, names: list[str] | None = None) -> str:
    return values_text(turn.spec(task), task["slots"], turn.lang, names)


def _held_text(turn: Turn, task: dict, held: dict) -> str:
    """Held values as the check question shows them: "安装地址：X", a deletion as "清空安装地址"."""
    slots = turn.spec(task).slots
    parts = [msg("check_clear", turn.lang, slot=slots[n].display) if v is None else
             msg("kv", turn.lang, slot=slots[n].display, value=show_value(v, turn.lang))
             for n, v in held.items() if n in slots]
    return msg("value_sep", turn.lang).join(parts)


def _step_of(turn: Turn, task: dict, resumed: bool) -> Step:
    """The task's next step, with its stage applied; a confirmation or check question records what it
    shows (dskit.state.integrity), so that a yes runs exactly that."""
    step = next_step(turn, task, resumed)
    stage = step.stage.value if step.stage is not None else task["stage"]
    reduce(turn, StageSet(task["id"], stage, shown=_shown(turn, task) if step.action == "confirm" else ""))
    return step


def _shown(turn: Turn, task: dict) -> str:
    """The digest of what the question about to be asked shows (dskit.state.integrity)."""
    held = task.get("unconfirmed")
    return shown_digest(task, [] if held else turn.stack.waiting_under(task), held or None)


def _resume_prefix(turn: Turn, task: dict, question: str) -> str:
    """The question of a task the user comes back to, led by "we continue with ..."."""
    return sentences(turn.lang, msg("resume", turn.lang, task=turn.spec(task).display), question)


# ---------------------------------------------------------------- the decision

def decide(turn: Turn) -> Decision:
    """The decision of this turn, then the stack limit (a task that just ran takes no room).

    The turn's notices (cancelled, cascaded, waiting, evicted, rolled back ...) lead the question
    text, so a Dify answer node that shows only ``question`` still tells the user what happened.
    """
    settle_subtasks(turn)
    decision = _decide(turn)
    reduce(turn, StackLimited(turn.catalog.policy.max_stack))
    notices = turn.log.notices(turn.lang)
    decision["notices"] = notices
    decision["ended"] = turn.ended_list()
    decision["changes"] = turn.writes.all_changes()
    decision["question"] = sentences(turn.lang, *notices, decision["question"])
    return decision


def _decide(turn: Turn) -> Decision:
    log = turn.log
    if log.handoff:
        return _handoff(turn, log.handoff)
    _count_failed_ask(turn)
    top = turn.stack.top()
    if log.clarified is not None and turn.stack.find(log.clarified.task_id) is not None:
        return _clarify(turn, top)
    resumed = (top is not None and top["id"] in turn.before.existing_ids and top["id"] != turn.before.top_id
               and turn.before.top_id in log.ended())
    step = Step("chitchat") if top is None else _step_of(turn, top, resumed)
    if step.action == "handoff":
        return _handoff(turn, step.question)
    ready = top if step.action == "execute" else _ready_below(turn, top) if step.action != "handoff" else None
    if ready is not None:
        if log.faq is not None:
            reduce(turn, Refused(short_text({"type": "faq", "question": log.faq}),
                                 "deferred: a task is executed this turn"))
        return _execute(turn, ready)
    if log.faq is not None or (log.chitchat and not log.progress):
        decision = base(turn, "faq" if log.faq is not None else "chitchat", question=step.question, slot=step.slot,
                        faq={"question": log.faq} if log.faq is not None else None)
        return _with_missing(turn, decision, top)
    if top is None:
        return base(turn, "chitchat")
    _asking(turn, top, step.slot if step.action == "ask_slot" else None)
    question = _resume_prefix(turn, top, step.question) if resumed else step.question
    decision = base(turn, step.action, slot=step.slot, question=question,
                    resumed=turn.resumed_ref(top) if resumed else None)
    return _with_missing(turn, decision, top)


def _clarify(turn: Turn, top: dict | None) -> Decision:
    """One short question settles what the engine could not (which of two slots the user's words fill): the
    rest of the turn is kept, nothing runs, and no confirmation stands while the question is out."""
    question = turn.log.clarified
    if top is not None and top["stage"] == Stage.CONFIRMING:
        reduce(turn, StageSet(top["id"], Stage.COLLECTING.value, shown=""))
    if top is not None:
        _asking(turn, top, None)
    decision = base(turn, "clarify", slot=question.slot, question=question.question)
    return _with_missing(turn, decision, top)


def _ready_below(turn: Turn, top: dict | None) -> dict | None:
    """A task this message started under the top one that can run now (complete, no confirmation: an
    enquiry): "What's the weather in Boston tomorrow? Also book us a table" runs the weather and then
    asks for the booking, whichever order the model started them in. Never a task open before the
    message, never one that needs a yes."""
    for task in reversed(turn.stack.tasks):
        if task is top or task["id"] in turn.before.existing_ids or task.get("parent_id"):
            continue
        if next_step(turn, task, resumed=False).action == "execute":
            return task
    return None


def base(turn: Turn, action: str, **fields: Any) -> Decision:
    """This turn's decision as things stand: the task in focus, the notices and logs so far."""
    log = turn.log
    return new_decision(action, lang=turn.lang, turn=turn.state["turn"], task=turn.task_ref(),
                        notices=log.notices(turn.lang), applied=log.applied(), dropped=log.dropped(),
                        ended=turn.ended_list(), progress=log.progress, **fields)


def _with_missing(turn: Turn, decision: Decision, top: dict | None) -> Decision:
    if top is not None:
        decision["missing_slots"] = missing_slots(top, turn.spec(top))
        decision["task"] = turn.task_ref()
    return decision


def _count_failed_ask(turn: Turn) -> None:
    """The slot asked last turn is still empty and the user gave nothing for the task: one failed ask.

    A FAQ is an interruption, not a failure; an unreadable message counts as a parse failure instead.
    """
    counters = turn.state["counters"]
    task_id, _, slot = (counters.get("asking") or "").partition(".")
    task = turn.stack.find(task_id) if task_id else None
    if task is None or not slot or turn.log.faq is not None or turn.writes.changed.get(task_id) \
            or slot in task["slots"]:
        return
    reduce(turn, AskFailed(f"{task_id}.{slot}"))


def _asking(turn: Turn, task: dict, slot: str | None) -> None:
    """Remember which slot this turn asks, so that the next turn can tell whether the ask failed."""
    reduce(turn, Asked(task["id"], slot or ""))


def _handoff(turn: Turn, reason: str) -> Decision:
    reduce(turn, HandedOff(reason))
    return base(turn, "handoff", handoff={"reason": reason}, question=msg("handoff", turn.lang))


def _payload(turn: Turn, task: TaskRecord) -> ExecutePayload:
    spec = turn.spec(task)
    return {"task_id": task["id"], "task": task["name"], "label": spec.display,
            "slots": {n: task["slots"][n] for n in spec.slots if n in task["slots"]}, "subtasks": []}


def _covered(turn: Turn, parent: TaskRecord, sub: dict) -> bool:
    """Whether the user's yes covers a waiting sub-task: the parent's confirmation showed it, it needs no
    confirmation of its own, or its own yes approved exactly these values."""
    spec = turn.spec(sub)
    return (turn.log.confirmed_id == parent["id"] or not spec.confirm
            or sub.get("approved") == shown_digest(sub))


def _execute(turn: Turn, task: TaskRecord) -> Decision:
    """Take the finished task and the sub-tasks waiting for it off the stack, record them as one
    pending submission, and line up what comes next. A waiting sub-task no yes covers stays, collecting."""
    subtasks = []
    for sub in turn.stack.waiting_under(task):
        if sub.get("parent_id") == task["id"] and not _covered(turn, task, sub) or \
                sub.get("parent_id") != task["id"] and sub.get("parent_id") not in {s["id"] for s in subtasks}:
            reduce(turn, StageSet(sub["id"], Stage.COLLECTING.value, withdrawn=True))
            continue
        subtasks.append(sub)
    payload = _payload(turn, task)
    payload["subtasks"] = [_payload(turn, sub) for sub in subtasks]
    reduce(turn, Executed(task["id"], tuple(sub["id"] for sub in subtasks), payload))
    decision = _followup(turn, base(turn, "execute"))
    decision["execute"] = payload
    return decision


def _followup(turn: Turn, decision: Decision) -> Decision:
    """After the top task ended, say which task comes next and what it needs (without executing it)."""
    top = turn.stack.top()
    if top is not None:
        step = _step_of(turn, top, resumed=True)
        question = step.question
        if step.action == "execute":  # a complete single-turn task waits for the user's go-ahead
            reduce(turn, StageSet(top["id"], Stage.CONFIRMING.value, shown=_shown(turn, top)))
            question = msg("confirm_resume", turn.lang, task=turn.spec(top).display, values=_values(turn, top))
        elif step.action == "handoff":
            question = ask_text(turn.spec(top), step.slot, turn.lang)
        _asking(turn, top, step.slot if step.action == "ask_slot" else None)
        if top["id"] in turn.before.existing_ids:
            decision["resumed"] = turn.resumed_ref(top)
            question = _resume_prefix(turn, top, question)
        decision["question"] = question
        decision["slot"] = step.slot
        decision["missing_slots"] = missing_slots(top, turn.spec(top))
    decision["task"] = turn.task_ref()
    return decision


def not_understood(turn: Turn, error: str) -> Decision:
    """An unusable understanding changes nothing but a counter; enough in a row hand off."""
    reduce(turn, NotUnderstood(error))
    if turn.state["counters"]["parse_failures"] >= turn.catalog.policy.max_parse_failures:
        return _handoff(turn, "not_understood")
    top = turn.stack.top()
    return base(turn, "fallback", question=msg("fallback", turn.lang),
                missing_slots=missing_slots(top, turn.spec(top)) if top is not None else [])


__all__ = ["decide", "not_understood", "next_step", "Step", "withdraws_confirmation", "base"]
