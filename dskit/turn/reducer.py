"""The one reducer: every admitted effect is applied to the state here, and written into the ledger.

Commands propose (:mod:`dskit.turn.commands`), the admission rules judge (:mod:`dskit.rules.admission`), the
decision asks and executes (:mod:`dskit.turn.decide`): none of them changes the state. :func:`reduce`
does, one effect at a time, through the task stack (:class:`dskit.state.taskstack.TaskStack`, the only code
that changes a task) and the turn's slot writes (:class:`dskit.turn.slot_writes.SlotWrites`, one outcome per
slot and turn). What an effect sets off — the tasks a removal takes along, the notices a user is told —
is recorded as further effects, so the ledger holds everything that happened.
"""

from __future__ import annotations

from .effects import (Asked, AskFailed, Clarified, Confirmed, Denied, Effect, Executed, FaqAsked, HandedOff,
                      HandoffAsked, HeldAnswered, Noted, Noticed, NotUnderstood, Refused, SlotRolledBack, SlotSet,
                      SmallTalk, StackCleared, StackLimited, StageSet, SubtaskWaits, TaskEnded, TaskFocused, TaskLinked,
                      TaskOpened, TaskRemoved, TurnRecorded, Understood, ValueHeld, notice)
from ..state.records import Stage
from ..state.state import MAX_DONE, MAX_TIMELINE, add_error, new_counters
from .turn import Turn

def reduce(turn: Turn, effect: Effect) -> None:
    """Apply one admitted effect to the turn's state and record it in the ledger (a slot set to the value it
    holds changes nothing and is not recorded)."""
    if isinstance(effect, SlotSet) and not _changes(turn, effect):
        return
    handler = _HANDLERS.get(type(effect))
    turn.log.add(effect)
    if handler is not None:
        handler(turn, effect)


def _changes(turn: Turn, effect: SlotSet) -> bool:
    task = turn.stack.find(effect.task_id)
    held = task["slots"].get(effect.slot) if task is not None else None
    return task is not None and (held != effect.value or (effect.value is None) != (effect.slot not in task["slots"]))


# ---------------------------------------------------------------- the stack

def _opened(turn: Turn, effect: TaskOpened) -> None:
    parent = turn.stack.find(effect.parent_id) if effect.parent_id else None
    task = turn.stack.new_task(effect.name, effect.label, parent=parent)
    if task["id"] != effect.task_id:  # the command proposed the state's next id: anything else is a bug
        raise RuntimeError(f"task opened as {task['id']}, proposed as {effect.task_id}")
    turn.stack.push(task)


def _focused(turn: Turn, effect: TaskFocused) -> None:
    turn.stack.push(turn.stack.find(effect.task_id))


def _linked(turn: Turn, effect: TaskLinked) -> None:
    turn.stack.link(turn.stack.find(effect.task_id), turn.stack.find(effect.parent_id))


def _removed(turn: Turn, effect: TaskRemoved) -> None:
    turn.stack.remove(turn.stack.find(effect.task_id), effect.reason)


def _cleared(turn: Turn, effect: StackCleared) -> None:
    turn.stack.clear("reset")
    turn.state["counters"] = new_counters()
    turn.state["handoff"] = None
    turn.log.add(notice("reset"))


def _stage(turn: Turn, effect: StageSet) -> None:
    task = turn.stack.find(effect.task_id)
    turn.stack.set_stage(task, Stage(effect.stage))
    if effect.shown is not None:
        turn.stack.mark_shown(task, effect.shown or None)
    if effect.withdrawn:
        turn.stack.withdraw_approval(task)


def _waits(turn: Turn, effect: SubtaskWaits) -> None:
    task, parent = turn.stack.find(effect.task_id), turn.stack.find(effect.parent_id)
    turn.log.add(notice("waiting", task=turn.spec(task).display, parent=turn.spec(parent).display))
    turn.stack.place_below(task, parent)
    turn.stack.set_stage(task, Stage.WAITING)


def _limited(turn: Turn, effect: StackLimited) -> None:
    turn.stack.evict(effect.limit)


# ---------------------------------------------------------------- values

def _slot_set(turn: Turn, effect: SlotSet) -> None:
    turn.writes.set(turn.stack.find(effect.task_id), effect.slot, effect.value)


def _rolled_back(turn: Turn, effect: SlotRolledBack) -> None:
    turn.writes.rollback(turn.stack.find(effect.task_id), effect.slot)


def _held(turn: Turn, effect: ValueHeld) -> None:
    turn.stack.hold(turn.stack.find(effect.task_id), effect.slot, effect.value)


def _confirmed(turn: Turn, effect: Confirmed) -> None:
    turn.stack.approve(turn.stack.find(effect.task_id))  # what this yes covered (a sub-task waits with it)


def _denied(turn: Turn, effect: Denied) -> None:
    turn.stack.set_stage(turn.stack.find(effect.task_id), Stage.COLLECTING)


# ---------------------------------------------------------------- the decision

def _asked(turn: Turn, effect: Asked) -> None:
    turn.state["counters"]["asking"] = f"{effect.task_id}.{effect.slot}" if effect.slot else None


def _ask_failed(turn: Turn, effect: AskFailed) -> None:
    failed = turn.state["counters"]["failed_asks"]
    failed[effect.key] = failed.get(effect.key, 0) + 1


def _handed_off(turn: Turn, effect: HandedOff) -> None:
    turn.state["handoff"] = {"reason": effect.reason, "turn": turn.state["turn"]}
    turn.state["counters"] = new_counters()


def _executed(turn: Turn, effect: Executed) -> None:
    task = turn.stack.find(effect.task_id)
    for entry in [task] + [turn.stack.find(i) for i in effect.subtask_ids]:
        turn.stack.take(entry)
        turn.log.add(TaskEnded(entry["id"], entry["name"], "executed"))
    turn.state["done"].append({**effect.payload, "status": "pending", "detail": "", "turn": turn.state["turn"],
                               "parent_id": task.get("parent_id")})
    del turn.state["done"][:-MAX_DONE]


def _understood(turn: Turn, effect: Understood) -> None:
    turn.state["counters"]["parse_failures"] = 0


def _not_understood(turn: Turn, effect: NotUnderstood) -> None:
    counters = turn.state["counters"]
    counters["parse_failures"] = counters.get("parse_failures", 0) + 1
    add_error(turn.state, "understanding", effect.error)


def _recorded(turn: Turn, effect: TurnRecorded) -> None:
    turn.state["timeline"].append(effect.line)
    del turn.state["timeline"][:-MAX_TIMELINE]


# Effects with no handler are recorded in the ledger only (what the decision reads): FaqAsked, SmallTalk,
# HandoffAsked, Clarified, Refused, Noticed, Noted, HeldAnswered, TaskEnded.
_HANDLERS = {kind: handler for kind, handler in (
    (TaskOpened, _opened), (TaskFocused, _focused), (TaskLinked, _linked), (TaskRemoved, _removed),
    (StackCleared, _cleared), (StageSet, _stage), (SubtaskWaits, _waits), (StackLimited, _limited),
    (SlotSet, _slot_set), (SlotRolledBack, _rolled_back), (ValueHeld, _held), (Confirmed, _confirmed),
    (Denied, _denied), (Asked, _asked), (AskFailed, _ask_failed), (HandedOff, _handed_off), (Executed, _executed),
    (Understood, _understood), (NotUnderstood, _not_understood), (TurnRecorded, _recorded),
)}

__all__ = ["reduce"]
