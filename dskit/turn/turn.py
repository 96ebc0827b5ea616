"""One turn in progress: what the commands of a message see, and the ledger of what they did.

A :class:`Turn` is built from the loaded state, the catalog and the user's words (the evidence). The
commands (:mod:`dskit.turn.commands`) read it and propose effects; the admission rules judge them; the
reducer (:mod:`dskit.turn.reducer`) applies the admitted ones and writes each into the turn's
:class:`Ledger`. Everything the decision needs to know about the turn — what was applied, refused,
noticed, asked, confirmed, which tasks ended — is read off the ledger, never kept in flags beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..catalog.catalog import Catalog, TaskSpec
from .effects import (Clarified, Confirmed, Denied, Effect, FaqAsked, HandoffAsked, HeldAnswered, Noticed, Refused,
                      SmallTalk, StackCleared, TaskEnded, TaskOpened, ValueHeld)
from .effects import notice
from ..rules.grounding import Evidence
from ..base.messages import msg
from ..state.records import Stage, TaskRef, task_ref
from .slot_writes import SlotWrites
from ..state.taskstack import TaskStack
from ..base.text import short_text


# Why a task left the stack, when the user is told (dskit.base.messages has a sentence for each).
TOLD_REASONS = ("cancelled", "cascade", "evicted")


@dataclass(frozen=True)
class Before:
    """What stood before the user's message, read once when the turn starts: the slot asked last turn
    ("task_id.slot"), the open tasks, the task on top, the tasks whose confirmation question the user
    saw, and the values held for the user to check (task id -> {slot: value})."""

    asked: str
    existing_ids: frozenset
    top_id: str | None
    confirming: frozenset
    held: dict


class Ledger:
    """The effects of one turn, in the order they were applied (refusals and notes included), and what
    the decision reads off them."""

    def __init__(self) -> None:
        self.effects: list[Effect] = []

    def add(self, effect: Effect) -> None:
        self.effects.append(effect)

    def of(self, kind: type) -> list:
        return [e for e in self.effects if isinstance(e, kind)]

    def last(self, kind: type) -> Any:
        found = self.of(kind)
        return found[-1] if found else None

    # ------------------------------------------------------------ read off the effects

    def applied(self) -> list[str]:
        """The ``applied`` log: one line per effect that has one."""
        return [line for line in (e.entry() for e in self.effects) if line]

    def dropped(self) -> list[dict]:
        """Every command, or part of one, not applied, with the reason."""
        out = []
        for effect in self.effects:
            if isinstance(effect, Refused):
                reason = f"not grounded: {effect.reason}" if effect.grounding else effect.reason
                out.append({"command": effect.command, "reason": reason})
            elif isinstance(effect, ValueHeld):
                out.append({"command": short_text({"task_id": effect.task_id, "slot": effect.slot,
                                                   "value": effect.value}),
                            "reason": f"held for the user to check: {effect.reason}"})
        return out

    def notices(self, lang: str) -> list[str]:
        return [msg(e.key, lang, **dict(e.values)) for e in self.of(Noticed)]

    @property
    def progress(self) -> bool:
        """Whether the turn moved a task on (then small talk does not take it)."""
        return any(e.progress for e in self.effects)

    @property
    def faq(self) -> str | None:
        found = self.last(FaqAsked)
        return found.question if found is not None else None

    @property
    def chitchat(self) -> bool:
        return bool(self.of(SmallTalk))

    @property
    def handoff(self) -> str | None:
        found = self.last(HandoffAsked)
        return found.reason if found is not None else None

    @property
    def confirmed_id(self) -> str | None:
        found = self.last(Confirmed)
        return found.task_id if found is not None else None

    @property
    def denied_id(self) -> str | None:
        found = self.last(Denied)
        return found.task_id if found is not None else None

    @property
    def clarified(self) -> Clarified | None:
        return self.last(Clarified)

    @property
    def unapplied(self) -> bool:
        """A change the model read into this message was refused as not said (a refused yes is not one)."""
        return any(isinstance(e, Refused) and e.grounding and not e.confirm for e in self.effects)

    def ended(self) -> dict[str, str]:
        """Tasks that left the stack this turn -> why (cancelled, cascade, evicted, reset, executed)."""
        return {e.task_id: e.reason for e in self.of(TaskEnded)}

    def late_starts(self) -> set[str]:
        return {e.name for e in self.of(TaskOpened) if e.late}

    def answered_held(self) -> set[str]:
        return {e.task_id for e in self.of(HeldAnswered)}


class Turn:
    """Everything one turn reads, and its ledger; the decision is read off it at the end."""

    def __init__(self, state: dict, catalog: Catalog, lang: str, evidence: Evidence | None = None, said: str = ""):
        self.state = state
        self.catalog = catalog
        self.lang = lang
        self.evidence = evidence  # what the user said; None: grounding off (docs/grounding.md)
        self.said = said  # the message as the model restated it (or as said): the question of an FAQ
        self.log = Ledger()
        self.stack = TaskStack(state, on_removed=self.task_ended)
        top = self.stack.top()
        self.before = Before(
            asked=state["counters"].get("asking") or "",
            existing_ids=frozenset(self.stack.ids()),
            top_id=top["id"] if top else None,
            confirming=frozenset(self.stack.in_stage(Stage.CONFIRMING)),
            held={t["id"]: held for t in list(self.stack.tasks) if (held := self.stack.take_held(t)) is not None})
        self.writes = SlotWrites(state, self.stack, catalog, lang, self.log.add)
        self.commands: tuple = ()  # the whole answer, as typed commands (a start is checked with its set_slots)

    def task_ended(self, task: dict, reason: str) -> None:
        """A task left the stack (the stack reports each, parents before the tasks opened for them, cascades
        included): recorded, and told when the reason is one the user is told."""
        self.log.add(TaskEnded(task["id"], task["name"], reason))
        if reason in TOLD_REASONS:
            self.log.add(notice(reason, task=self.spec(task).display))

    # ------------------------------------------------------------ reading

    def spec(self, task: dict) -> TaskSpec:
        return self.catalog.tasks[task["name"]]

    def task_ref(self) -> TaskRef | None:
        top = self.stack.top()
        return task_ref(top, self.spec(top).display) if top is not None else None

    def resumed_ref(self, task: dict) -> dict[str, str]:
        return {"task_id": task["id"], "task": task["name"], "label": self.spec(task).display}

    def ended_list(self) -> list[dict[str, str]]:
        return [{"task_id": k, "reason": v} for k, v in self.log.ended().items()]

    def held_open(self) -> dict[str, dict]:
        """Values held for a check last turn that this turn has not answered, of tasks still open."""
        if self.log.of(StackCleared):
            return {}
        answered = self.log.answered_held()
        return {task_id: values for task_id, values in self.before.held.items()
                if task_id not in answered}

    def target(self, task_name: str | None, slot: str) -> dict | None:
        """The open task a slot goes to: the named one, else the nearest from the top that has it.

        Without a task name, tasks open before this message come first: a task started in the same
        message got its own slots in its start_task ("订周六的，顺便查下北京天气": 周六 is the booking's).
        """
        tasks = list(reversed(self.stack.tasks))
        if not task_name:
            tasks.sort(key=lambda t: t["id"] not in self.before.existing_ids)
        for task in tasks:
            if task_name and task["name"] != task_name:
                continue
            if task_name or slot in self.spec(task).slots:
                return task
        return None


__all__ = ["Turn", "Ledger", "Before", "short_text"]
