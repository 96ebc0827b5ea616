"""The task stack: the open tasks of a conversation, bottom first, and the only code that edits them.

A side task goes on top and the one below is suspended; it resumes when the side task ends
(docs/design.md, "A task stack"). A sub-task opened *for* a parent (a router for a broadband order)
leaves with its parent, and once it could run it waits right below the parent to be submitted with it
("Sub-tasks wait for their parent"). Every push, removal, reordering, stage change and eviction goes
through :class:`TaskStack`, so the rules of the stack hold whoever moves a task: a removal always takes
the tasks opened for it along, a waiting task always sits below its parent, the top is never evicted.
The same holds for what a task carries: its slot values and their old values, its parent, and what a
question showed (``shown``, ``approved``, ``unconfirmed``: :data:`dskit.state.records.TASK_KEYS`) are written
here and nowhere else (tests/test_engine_shape.py checks the source), so a reader of this class sees
every way a task can change.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .records import Stage, TaskRecord, task_record

# How a task's ``history`` keeps a slot's old values: at most this many, and (newest kept first) at most
# this many characters of JSON. Bounded here, where the history is written, so no writer can grow it.
MAX_SLOT_HISTORY = 10
SLOT_HISTORY_MAX_CHARS = 2_000


class TaskStack:
    """The open tasks of ``state["task_stack"]`` (bottom first), edited in place.

    Removals are reported to ``on_removed(task, reason)`` one task at a time, parents before the
    tasks opened for them, so the caller can say what ended and why.
    """

    def __init__(self, state: dict, on_removed: Callable[[dict, str], None] | None = None) -> None:
        self._state = state
        self._on_removed = on_removed

    # ------------------------------------------------------------ reading

    @property
    def tasks(self) -> list[TaskRecord]:
        """The open tasks, bottom first (the state's own list: read it, never edit it)."""
        return self._state["task_stack"]

    def __len__(self) -> int:
        return len(self.tasks)

    def __contains__(self, task: object) -> bool:
        return any(task is t for t in self.tasks)

    def top(self) -> TaskRecord | None:
        """The task in focus."""
        return self.tasks[-1] if self.tasks else None

    def find(self, task_id: Any) -> TaskRecord | None:
        """The open task with this id."""
        return next((t for t in self.tasks if t["id"] == task_id), None)

    def named(self, name: str) -> TaskRecord | None:
        """The open task of this catalog name nearest the top."""
        return next((t for t in reversed(self.tasks) if t["name"] == name), None)

    def ids(self) -> set[str]:
        return {t["id"] for t in self.tasks}

    def children(self, task: dict) -> list[TaskRecord]:
        """The tasks opened for ``task``, bottom first."""
        return [t for t in self.tasks if t.get("parent_id") == task["id"]]

    def open_parent(self, task: dict) -> TaskRecord | None:
        """The task's parent while that parent is still open (not executed, cancelled or evicted)."""
        parent_id = task.get("parent_id")
        return self.find(parent_id) if isinstance(parent_id, str) and parent_id != task["id"] else None

    def waiting_under(self, parent: dict) -> list[TaskRecord]:
        """The waiting sub-tasks of ``parent`` and theirs, parents first: they go with its execution."""
        found: list[TaskRecord] = []
        ids = {parent["id"]}
        for task in reversed(self.tasks):
            if task["stage"] == Stage.WAITING and task.get("parent_id") in ids:
                found.append(task)
                ids.add(task["id"])
        return found

    def in_stage(self, stage: Stage) -> set[str]:
        """Ids of the open tasks in ``stage``."""
        return {t["id"] for t in self.tasks if t.get("stage") == stage}

    # ------------------------------------------------------------ editing

    def new_task(self, name: str, label: str, *, parent: dict | None = None) -> TaskRecord:
        """A new task record with the state's next id (not yet on the stack)."""
        task = task_record(f"t{self._state['next_task_seq']}", name, label, opened_turn=self._state["turn"],
                           parent_id=parent["id"] if parent else None)
        self._state["next_task_seq"] += 1
        return task

    def push(self, task: TaskRecord) -> None:
        """Put a task on top, moving it there when it is open already (the one below is suspended)."""
        self._detach(task)
        self.tasks.append(task)

    def set_stage(self, task: dict, stage: Stage) -> None:
        task["stage"] = Stage(stage).value

    def link(self, task: dict, parent: dict | None) -> None:
        """Make ``task`` a sub-task of ``parent`` (None: of no task)."""
        task["parent_id"] = parent["id"] if parent is not None else None

    # ------------------------------------------------------------ what a task holds

    def put_value(self, task: dict, name: str, value: Any) -> None:
        """Set a slot's value; None deletes it."""
        if value is None:
            task["slots"].pop(name, None)
        else:
            task["slots"][name] = value

    def old_values(self, task: dict, name: str) -> list:
        """The slot's old values, oldest first (a copy)."""
        return list(task["history"].get(name) or [])

    def set_old_values(self, task: dict, name: str, values: list) -> None:
        """Replace the slot's old values, bounded (:func:`bound_history`); an empty list forgets them."""
        kept = list(values)
        bound_history(kept)
        if kept:
            task["history"][name] = kept
        else:
            task["history"].pop(name, None)

    def forget_old_values(self, task: dict, keep_slots: bool = False) -> None:
        """Drop every old value of the task (``keep_slots``: only the empty lists)."""
        task["history"] = {slot: values for slot, values in task["history"].items() if values} if keep_slots else {}

    def mark_shown(self, task: dict, shown: str | None) -> None:
        """Record the digest of the question that shows the task now (None: no question shows it)."""
        if shown is None:
            task.pop("shown", None)
        else:
            task["shown"] = shown

    def approve(self, task: dict) -> None:
        """A yes to what was shown: the sub-task waits with exactly that approval."""
        if "shown" in task:
            task["approved"] = task["shown"]

    def withdraw_approval(self, task: dict) -> None:
        task.pop("approved", None)

    def hold(self, task: dict, name: str, value: Any) -> None:
        """Hold a value for the user to check (policy "ask"): the next question shows it."""
        task.setdefault("unconfirmed", {})[name] = value

    def take_held(self, task: dict) -> dict | None:
        """The values held for a check last turn, taken off the task (they are answered or expire now)."""
        held = task.pop("unconfirmed", None)
        return held if isinstance(held, dict) else None

    def withdraw_trust(self, task: dict) -> list[str]:
        """Take back what a task claims without the engine's seal (dskit.state.integrity.distrust): a pending
        confirmation or a waiting sub-task collects again, what questions showed and held values are
        dropped, and old values too (the material of a take-back). Returns what was taken back."""
        notes = []
        if task.get("stage") in (Stage.CONFIRMING, Stage.WAITING):
            notes.append(f"{task['id']}: {task['stage']} withdrawn")
            self.set_stage(task, Stage.COLLECTING)
        for key in ("shown", "approved", "unconfirmed"):
            task.pop(key, None)
        if task.get("history"):
            self.forget_old_values(task)
            notes.append(f"{task['id']}: old values dropped")
        return notes

    def remove(self, task: dict, reason: str, on_removed: Callable[[dict, str], None] | None = None) -> None:
        """Take a task off the stack and, recursively, the tasks opened for it (reason "cascade")."""
        if task not in self:
            return
        self._detach(task)
        self._removed(task, reason, on_removed)
        for child in self.children(task):
            self.remove(child, "cascade", on_removed)

    def clear(self, reason: str, on_removed: Callable[[dict, str], None] | None = None) -> None:
        """Take every task off (a reset)."""
        tasks, self._state["task_stack"] = list(self.tasks), []
        for task in tasks:
            self._removed(task, reason, on_removed)

    def take(self, task: dict) -> None:
        """Take one task off without taking its sub-tasks along (an execution takes those itself)."""
        self._detach(task)

    def place_below(self, task: dict, parent: dict) -> None:
        """Put a task right below ``parent`` (a sub-task waiting to be submitted with it)."""
        self._detach(task)
        self.tasks.insert(self._index(parent), task)

    def is_above(self, task: dict, other: dict) -> bool:
        """Whether ``task`` sits above ``other``."""
        return self._index(task) > self._index(other)

    def restore(self, task: TaskRecord, below: dict | None = None) -> None:
        """Put a task back: right below ``below`` when that one is open, else on top."""
        self.tasks.insert(self._index(below) if below is not None and below in self else len(self.tasks), task)

    def evict(self, limit: int, on_removed: Callable[[dict, str], None] | None = None) -> None:
        """Past ``limit`` tasks, drop the oldest that are neither the current task nor its ancestors."""
        if len(self.tasks) <= limit:
            return
        keep: set[str] = set()
        parent = self.tasks[-1]["id"]
        while parent and parent not in keep:
            keep.add(parent)
            parent = next((t.get("parent_id") for t in self.tasks if t["id"] == parent), None)
        while len(self.tasks) > limit:
            victim = next((t for t in self.tasks if t["id"] not in keep), None)
            if victim is None:
                return
            self.remove(victim, "evicted", on_removed)

    def pop_bottom(self) -> TaskRecord:
        """Drop the bottom task with nothing said (the state's last resort against its size limit)."""
        return self.tasks.pop(0)

    def suspend_below_top(self) -> None:
        """Every task below the top is SUSPENDED, except a sub-task WAITING for its parent."""
        for task in self.tasks[:-1]:
            if task["stage"] != Stage.WAITING:
                self.set_stage(task, Stage.SUSPENDED)

    # ------------------------------------------------------------ internals

    def _index(self, task: dict | None) -> int:
        return next((i for i, t in enumerate(self.tasks) if t is task), len(self.tasks))

    def _detach(self, task: dict) -> None:
        index = next((i for i, t in enumerate(self.tasks) if t is task), None)
        if index is not None:
            del self.tasks[index]

    def _removed(self, task: dict, reason: str, on_removed: Callable[[dict, str], None] | None) -> None:
        report = on_removed or self._on_removed
        if report is not None:
            report(task, reason)


def bound_history(history: list) -> None:
    """Keep a slot's old values within MAX_SLOT_HISTORY entries and SLOT_HISTORY_MAX_CHARS of JSON,
    dropping the oldest first; the newest one always stays (the one a take-back returns to)."""
    del history[:-MAX_SLOT_HISTORY]
    total = 0
    for index in range(len(history) - 1, -1, -1):
        total += len(json.dumps(history[index], ensure_ascii=False, separators=(",", ":"))) + 1
        if total > SLOT_HISTORY_MAX_CHARS and index < len(history) - 1:
            del history[:index + 1]
            return


__all__ = ["TaskStack", "bound_history", "MAX_SLOT_HISTORY", "SLOT_HISTORY_MAX_CHARS"]
