"""Sub-tasks wait for their parent (docs/design.md, "Sub-tasks wait for their parent").

A router rented for a broadband order must not be ordered while the broadband order still lacks its
address, and must not survive its cancellation. So a sub-task never executes before its open parent:
once it could run it waits (stage WAITING, right below the parent) and goes with the parent's
execution in one payload; a failed submission brings both back (:func:`restore_subtasks`).
"""

from __future__ import annotations

from .effects import StageSet, SubtaskWaits
from ..state.gaps import missing_slots
from ..state.records import Stage, task_record
from .reducer import reduce
from ..state.taskstack import TaskStack
from .turn import Turn


def settle_subtasks(turn: Turn) -> None:
    """A sub-task never executes before its parent: once it could run, it waits for the parent.

    It waits when it is complete and needs no confirmation, or was confirmed this turn, or its parent
    asks for confirmation (the parent's confirmation lists it: one yes covers both); a waiting one stays
    waiting unless a change makes it incomplete or needs a new confirmation. A waiting task sits right
    below its parent, so the parent comes (back) to the top and is asked next.
    """
    stack = turn.stack
    for task in list(stack.tasks):
        parent = stack.open_parent(task)
        spec = turn.spec(task)
        complete = not missing_slots(task, spec)
        changed = bool(turn.writes.changed_in(task))
        ready = complete and (not spec.confirm or task["id"] == turn.log.confirmed_id
                              or (parent is not None and turn.spec(parent).confirm)
                              or (task["stage"] == Stage.WAITING and not changed))
        if parent is None or not ready:
            if task["stage"] == Stage.WAITING:
                reduce(turn, StageSet(task["id"], Stage.COLLECTING.value))
            continue
        if task["stage"] != Stage.WAITING or stack.is_above(task, parent):
            reduce(turn, SubtaskWaits(task["id"], parent["id"]))


def restore_subtasks(state: dict, entry: dict) -> list[dict]:
    """A failed submission puts its sub-tasks back, waiting right below their restored parent; returns them."""
    stack = TaskStack(state)
    parent = stack.find(str(entry.get("task_id")))
    restored = []
    for sub in entry.get("subtasks") or []:
        if not isinstance(sub, dict) or not isinstance(sub.get("task_id"), str) or stack.find(sub["task_id"]):
            continue
        slots = sub.get("slots") if isinstance(sub.get("slots"), dict) else {}
        task = task_record(sub["task_id"], str(sub.get("task") or ""), str(sub.get("label") or sub.get("task") or ""),
                           opened_turn=state["turn"], stage=Stage.WAITING, slots=slots,
                           parent_id=parent["id"] if parent else None)
        stack.restore(task, below=parent)
        restored.append(task)
    return restored


__all__ = ["settle_subtasks", "restore_subtasks"]
