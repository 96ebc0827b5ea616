"""One turn in progress: what the commands of a message see and what they leave for the decision.

A :class:`Turn` is built from the loaded state, the catalog and the user's words (the evidence). The
commands (:mod:`dskit.commands`) read it and record their effects on it: slot writes go through
:class:`dskit.slot_writes.SlotWrites`, stack moves through :class:`dskit.taskstack.TaskStack`, and
every command that is applied, dropped or refused leaves an entry with its reason. The decision
(:mod:`dskit.decide`) is then read off the turn. Nothing here is parsed back later: ``applied`` is a
log for people, ``changes`` (on the slot writes) is the typed record of what changed.
"""

from __future__ import annotations

import json
from typing import Any

from .catalog import Catalog, TaskSpec
from .grounding import Evidence
from .jsonish import scrub_surrogates
from .messages import msg
from .records import Stage, TaskRef, task_ref
from .slot_writes import SlotWrites
from .taskstack import TaskStack


def short_text(command: Any) -> str:
    """A command as a short string for the timeline and the decision. Never raises."""
    try:
        text = json.dumps(command, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        try:
            text = repr(command)
        except Exception:  # noqa: BLE001 - RecursionError, or a repr that fails
            text = f"<{type(command).__name__}>"
    return scrub_surrogates(text[:160])


class Turn:
    """Everything one turn changes and notices; the decision is read off it at the end."""

    def __init__(self, state: dict, catalog: Catalog, lang: str, evidence: Evidence | None = None, said: str = ""):
        self.state = state
        self.catalog = catalog
        self.lang = lang
        self.evidence = evidence  # what the user said; None: grounding off (docs/grounding.md)
        self.said = said  # the message as the model restated it (or as said): the question of an FAQ
        self.stack = TaskStack(state, on_removed=self._task_ended)
        self.asked = state["counters"].get("asking") or ""  # "task_id.slot" asked last turn
        # Values held for the user to check (policy "ask"), by task id: last turn's, and this turn's.
        self.held: dict[str, dict] = {t["id"]: t.pop("unconfirmed") for t in self.stack.tasks
                                      if isinstance(t.get("unconfirmed"), dict)}
        self.checked: set[str] = set()  # tasks whose held values the user answered this turn
        self.applied: list[str] = []  # what was done, for the timeline and logs (never parsed back)
        self.dropped: list[dict] = []
        self.notices: list[str] = []
        self.ended: dict[str, str] = {}
        self.progress = False
        self.confirmed_id: str | None = None
        self.denied_id: str | None = None
        self.faq: str | None = None
        self.chitchat = False
        self.handoff: str | None = None
        self.unapplied = False  # a change the model read into this message was refused as not said
        self.commands: list[dict] = []  # the whole answer (a start is checked with its set_slots)
        self.late_starts: set[str] = set()  # tasks started this turn for the user's last message
        top = self.stack.top()
        self.top_before = top["id"] if top else None
        self.existing_ids = self.stack.ids()
        # Tasks whose confirmation question was the last thing the user saw.
        self.confirming_before = self.stack.in_stage(Stage.CONFIRMING)
        self.writes = SlotWrites(state, self.stack, catalog, lang, self.notices)

    # ------------------------------------------------------------ reading

    def spec(self, task: dict) -> TaskSpec:
        return self.catalog.tasks[task["name"]]

    def task_ref(self) -> TaskRef | None:
        top = self.stack.top()
        return task_ref(top, self.spec(top).display) if top is not None else None

    def resumed_ref(self, task: dict) -> dict[str, str]:
        return {"task_id": task["id"], "task": task["name"], "label": self.spec(task).display}

    def ended_list(self) -> list[dict[str, str]]:
        return [{"task_id": k, "reason": v} for k, v in self.ended.items()]

    def target(self, task_name: str | None, slot: str) -> dict | None:
        """The open task a slot goes to: the named one, else the nearest from the top that has it.

        Without a task name, tasks open before this message come first: a task started in the same
        message got its own slots in its start_task ("订周六的，顺便查下北京天气": 周六 is the booking's).
        """
        tasks = list(reversed(self.stack.tasks))
        if not task_name:
            tasks.sort(key=lambda t: t["id"] not in self.existing_ids)
        for task in tasks:
            if task_name and task["name"] != task_name:
                continue
            if task_name or slot in self.spec(task).slots:
                return task
        return None

    # ------------------------------------------------------------ recording

    def drop(self, command: Any, reason: str) -> None:
        self.dropped.append({"command": short_text(command), "reason": reason})

    def refuse(self, command: Any, reason: str) -> None:
        """A command the user's message does not support: dropped, with the reason, whatever the policy.
        A refused change (anything but a yes) also withdraws a pending confirmation (dskit.decide)."""
        self.drop(command, f"not grounded: {reason}")
        if not (isinstance(command, dict) and command.get("type") == "confirm"):
            self.unapplied = True

    def note(self, entry: str, *, progress: bool = True) -> None:
        """Log an applied command; ``progress``: it moved a task on (then chitchat does not take the turn)."""
        self.applied.append(entry)
        self.progress = self.progress or progress

    def notice(self, key: str, **values: Any) -> None:
        """A sentence the reply leads with (dskit.messages)."""
        self.notices.append(msg(key, self.lang, **values))

    def _task_ended(self, task: dict, reason: str) -> None:
        """A task left the stack: remembered, and said when the reason is one the user is told."""
        self.ended[task["id"]] = reason
        if reason in ("cancelled", "cascade", "evicted"):
            self.notice(reason, task=self.spec(task).display)


__all__ = ["Turn", "short_text"]
