"""Slot writes of one turn: every change of a slot's value, its old values, and one outcome per slot.

A message may touch a slot several times ("clear, roll back, set, clear"); what counts is the final
value against the value before the message (docs/grounding.md, "One outcome per slot and turn").
Writes are remembered with the value and history they replaced, resolved once after the slot
commands, and recorded as typed changes (:class:`dskit.state.records.SlotChange`) that the decision carries.
A changed or deleted value cancels the sub-tasks opened for the old one (docs/design.md, "Cascades").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..catalog.catalog import Catalog
from .effects import notice
from ..base.messages import show_value
from ..state.records import SlotChange
from ..state.taskstack import TaskStack

UNSET = object()  # a slot's value before the turn, when it had none


class SlotWrites:
    """The slot changes of one turn (the turn's only way to write a slot value)."""

    def __init__(self, state: dict, stack: TaskStack, catalog: Catalog, lang: str, emit: Callable) -> None:
        self.state = state
        self.stack = stack
        self.catalog = catalog
        self.lang = lang
        self.emit = emit  # the turn's ledger: a rollback is announced there
        # (task_id, slot) -> (value before the turn or UNSET, its history before the turn, ops this turn)
        self.touched: dict[tuple[str, str], tuple[Any, list, list[str]]] = {}
        self.changed: dict[str, list[str]] = {}  # task id -> slots changed this turn (in order)
        self.rolled_back: set[tuple[str, str]] = set()  # already told in a notice: not acknowledged again
        self.changes: list[SlotChange] = []

    def changed_in(self, task: dict) -> list[str]:
        return self.changed.get(task["id"], [])

    def changed_keys(self) -> list[str]:
        """"task_id.slot" of every slot whose value this turn changed (the timeline keeps them)."""
        return [f"{task_id}.{name}" for task_id, names in self.changed.items() for name in dict.fromkeys(names)]

    def changed_lately(self, task: dict, slot: str) -> bool:
        """Whether the slot changed this turn or the turn before (the timeline's ``changed``)."""
        if (task["id"], slot) in self.touched:
            return True
        state = self.state
        key = f"{task['id']}.{slot}"
        return any(entry.get("turn") == state["turn"] - 1 and key in (entry.get("changed") or [])
                   for entry in state["timeline"] if isinstance(entry, dict))

    def _touch(self, task: dict, name: str, op: str) -> None:
        """Remember a slot's value and history before its first change this turn."""
        key = (task["id"], name)
        if key not in self.touched:
            self.touched[key] = (task["slots"].get(name, UNSET), self.stack.old_values(task, name), [])
        self.touched[key][2].append(op)

    def set(self, task: dict, name: str, value: Any) -> bool:
        """Set (or with None delete) one slot, keeping the value it replaces; True if it changed."""
        old = task["slots"].get(name)
        if value is None and name not in task["slots"]:
            return False
        if value is not None and name in task["slots"] and old == value:
            return False
        self._touch(task, name, "delete" if value is None else "set")
        self.stack.set_old_values(task, name, self.stack.old_values(task, name) + [old])
        self.stack.put_value(task, name, value)
        if value is not None:
            self.state["counters"]["failed_asks"].pop(f"{task['id']}.{name}", None)
        self.changed.setdefault(task["id"], []).append(name)
        return True

    def rollback(self, task: dict, slot: str) -> None:
        """Put the slot's previous value back (the caller checked that there is one)."""
        self._touch(task, slot, "rollback")
        history = self.stack.old_values(task, slot)
        previous = history.pop()
        self.stack.set_old_values(task, slot, history)
        self.stack.put_value(task, slot, previous)
        self.changed.setdefault(task["id"], []).append(slot)
        self.rolled_back.add((task["id"], slot))

    def resolve(self) -> None:
        """One outcome per slot and turn: the final value against the value before the turn. Unchanged:
        the history is as it was, and nothing is acknowledged or announced. Changed: one old value is
        kept (a rollback next turn returns to the value before this turn), the notice says the final
        value, and the sub-tasks watching the slot are cancelled once."""
        for (task_id, name), (before, history, ops) in self.touched.items():
            task = self.stack.find(task_id)
            if task is None:
                continue
            final = task["slots"].get(name, UNSET)
            if final == before:
                self._unchanged(task, name, history)
                continue
            if len(ops) > 1 and ops[-1] != "rollback":
                self.stack.set_old_values(task, name, history + [None if before is UNSET else before])
            if ops[-1] == "rollback":
                self._rollback_notice(task, name, final)
            else:
                self.rolled_back.discard((task_id, name))
            self.changes.append({"task_id": task_id, "slot": name, "op": ops[-1]})
            if before is not UNSET and before is not None:
                self._cascade(task, name)
        self.touched.clear()

    def all_changes(self) -> list[SlotChange]:
        """The turn's changes: the resolved ones, then writes made after the resolution (a held value
        the user said yes to), each once."""
        pending = [{"task_id": task_id, "slot": name, "op": ops[-1]}
                   for (task_id, name), (before, _history, ops) in self.touched.items()
                   if (task := self.stack.find(task_id)) is not None and task["slots"].get(name, UNSET) != before]
        return self.changes + pending

    def _unchanged(self, task: dict, name: str, history: list) -> None:
        self.stack.set_old_values(task, name, history)
        self.changed[task["id"]] = [n for n in self.changed.get(task["id"], []) if n != name]
        self.rolled_back.discard((task["id"], name))

    def _rollback_notice(self, task: dict, name: str, final: Any) -> None:
        display = self.catalog.tasks[task["name"]].slots[name].display
        self.emit(notice("rolled_back_empty", slot=display) if final is UNSET else
                  notice("rolled_back", slot=display, value=show_value(final, self.lang)))

    def _cascade(self, task: dict, slot: str) -> None:
        """A changed or deleted value invalidates the sub-tasks opened for the old one."""
        for child in self.stack.children(task):
            watched = self.catalog.tasks[child["name"]].depends_on_slots
            if not watched or slot in watched:
                self.stack.remove(child, "cascade")


__all__ = ["SlotWrites", "UNSET"]
