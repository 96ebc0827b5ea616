"""Effects: what a turn does to the state, as values.

A command never changes the state. It proposes effects (:meth:`dskit.turn.commands.Command.propose`);
the admission rules (:mod:`dskit.rules.admission`) admit each one, refuse it with a reason or turn it into a
clarifying question; :mod:`dskit.turn.reducer` applies the admitted ones, in order, through the task stack
and the slot writes. The turn is then the fold of its effects (:class:`dskit.turn.turn.Ledger`): what was
applied, refused, noticed, asked, executed is read off the list, never kept in flags beside it. The
shape is Rasa's events and LangGraph's reducers: every change is a value that can be logged, tested
and replayed, two commands cannot half-apply a change, and taking one back is not applying it.

Each effect is a frozen dataclass with typed fields. ``progress`` says whether it moves a task on (the
history keeps such a turn longest, and small talk does not take it); :meth:`Effect.entry` is its line
in the decision's ``applied`` log ("" for none). An effect the engine proposed on its own reading of
the message (``source`` "engine": the model left it out, :mod:`dskit.turn.backup`) is logged as ``backup …``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..base.text import short_text


class Effect:
    """The common behaviour of effects (a plain class: every effect below is a frozen dataclass)."""

    progress = True

    def entry(self) -> str:
        """Its line in the decision's ``applied`` log; "" when it is not logged there."""
        return ""


# ---------------------------------------------------------------- the stack

@dataclass(frozen=True)
class TaskOpened(Effect):
    """A new task of the catalog goes on top (its id is the state's next). ``late``: it was asked for in
    the user's last message, which nothing acted on."""

    task_id: str
    name: str
    label: str
    parent_id: str | None = None
    source: str = "model"
    given: tuple = ()  # the values the start carries, as (slot, value) pairs: the rules weigh them
    late: bool = False

    def entry(self) -> str:
        return _logged(self.source, f"start {self.task_id}:{self.name}")


@dataclass(frozen=True)
class TaskFocused(Effect):
    """An open task comes back to the top."""

    task_id: str
    name: str
    source: str = "model"
    given: tuple = ()

    def entry(self) -> str:
        return _logged(self.source, f"focus {self.task_id}:{self.name}")


@dataclass(frozen=True)
class TaskLinked(Effect):
    """A task becomes the sub-task of an open parent (started before it, or beside it)."""

    task_id: str
    parent_id: str
    progress = False

    def entry(self) -> str:
        return f"link {self.task_id}->{self.parent_id}"


@dataclass(frozen=True)
class TaskRemoved(Effect):
    """A task leaves the stack, with the tasks opened for it (``reason``: cancelled, evicted, ...)."""

    task_id: str
    name: str
    reason: str
    source: str = "model"

    def entry(self) -> str:
        return _logged(self.source, f"cancel {self.task_id}:{self.name}") if self.reason == "cancelled" else ""


@dataclass(frozen=True)
class TaskEnded(Effect):
    """A task left the stack (what happened, cascades included: recorded by the reducer)."""

    task_id: str
    name: str
    reason: str
    progress = False


@dataclass(frozen=True)
class StackCleared(Effect):
    """Every task leaves, the counters start again: the user starts over."""

    source: str = "model"

    def entry(self) -> str:
        return _logged(self.source, "reset")


@dataclass(frozen=True)
class StageSet(Effect):
    """A task's stage changes; ``shown``: the digest of the question that shows it now ("" clears it,
    None leaves it); ``withdrawn``: the approval its own yes gave is taken back."""

    task_id: str
    stage: str
    shown: str | None = None
    withdrawn: bool = False
    progress = False


@dataclass(frozen=True)
class SubtaskWaits(Effect):
    """A complete sub-task waits right below its open parent, to be submitted with it."""

    task_id: str
    parent_id: str
    progress = False


@dataclass(frozen=True)
class StackLimited(Effect):
    """Past the catalog's stack limit, the oldest tasks that are not in focus are dropped."""

    limit: int
    progress = False


# ---------------------------------------------------------------- the decision

@dataclass(frozen=True)
class Asked(Effect):
    """The reply asks this slot ("" slot: it asks nothing): the next turn can tell a failed ask."""

    task_id: str
    slot: str
    progress = False


@dataclass(frozen=True)
class AskFailed(Effect):
    """The slot asked last turn is still empty and the message gave the task nothing."""

    key: str
    progress = False


@dataclass(frozen=True)
class HandedOff(Effect):
    """The conversation goes to a person: the counters start again."""

    reason: str
    progress = False


@dataclass(frozen=True)
class Executed(Effect):
    """A task and the sub-tasks waiting for it leave the stack as one pending submission."""

    task_id: str
    subtask_ids: tuple
    payload: dict
    progress = False


@dataclass(frozen=True)
class Understood(Effect):
    """The model's answer (or, with ``by_engine``, only the engine's own reading of the message) could be
    used: unreadable answers in a row start counting again."""

    by_engine: bool = False
    progress = False


@dataclass(frozen=True)
class NotUnderstood(Effect):
    """The model's answer could not be used: one more in a row, and the reason in the state's errors."""

    error: str
    progress = False


@dataclass(frozen=True)
class TurnRecorded(Effect):
    """The turn's line in the state's timeline (what changed, what was applied and dropped, the action)."""

    line: dict
    progress = False


# ---------------------------------------------------------------- slot values

@dataclass(frozen=True)
class SlotSet(Effect):
    """A slot takes a value; None deletes it. ``note``: how the engine read it ("repair", "split",
    "refile", "read as": logged beside it)."""

    task_id: str
    slot: str
    value: Any
    source: str = "model"

    def entry(self) -> str:
        if self.source == "held":
            return f"checked {self.task_id}.{self.slot}"
        text = f"delete {self.task_id}.{self.slot}" if self.value is None else \
            f"set {self.task_id}.{self.slot}={short_text(self.value)}"
        return _logged(self.source, text)


@dataclass(frozen=True)
class SlotRolledBack(Effect):
    """A slot goes back to its previous value."""

    task_id: str
    slot: str
    source: str = "model"

    def entry(self) -> str:
        return _logged(self.source, f"rollback {self.task_id}.{self.slot}")


@dataclass(frozen=True)
class ValueHeld(Effect):
    """A value the user did not clearly say, held for them to check (policy "ask")."""

    task_id: str
    slot: str
    value: Any
    reason: str
    progress = False

    def entry(self) -> str:
        return f"hold {self.task_id}.{self.slot}"


@dataclass(frozen=True)
class HeldAnswered(Effect):
    """The user answered the check question: ``accepted`` stores the held values (as SlotSet effects
    with source "held"), a no drops them."""

    task_id: str
    accepted: bool

    def entry(self) -> str:
        return "" if self.accepted else f"deny held {self.task_id}"


# ---------------------------------------------------------------- yes, no, questions

@dataclass(frozen=True)
class Confirmed(Effect):
    """A yes to the confirmation question: the task runs with what it showed."""

    task_id: str
    source: str = "model"

    def entry(self) -> str:
        return _logged(self.source, f"confirm {self.task_id}")


@dataclass(frozen=True)
class Denied(Effect):
    """A no to the confirmation question: the task collects again."""

    task_id: str
    source: str = "model"

    def entry(self) -> str:
        return _logged(self.source, f"deny {self.task_id}")


@dataclass(frozen=True)
class FaqAsked(Effect):
    """A knowledge question to answer; the pending question waits."""

    question: str
    note: str = "faq"
    progress = False

    def entry(self) -> str:
        return self.note


@dataclass(frozen=True)
class SmallTalk(Effect):
    """Greetings, small talk, feelings."""

    note: str = "chitchat"
    progress = False

    def entry(self) -> str:
        return self.note


@dataclass(frozen=True)
class HandoffAsked(Effect):
    """The user asks for a person."""

    reason: str
    note: str = "handoff"
    progress = False

    def entry(self) -> str:
        return self.note


@dataclass(frozen=True)
class Clarified(Effect):
    """A short question instead of a value the engine cannot settle (which half of the day, which of two
    numbers, which of two places): the rest of the turn is kept, the slot waits for the answer."""

    task_id: str
    slot: str
    question: str
    options: tuple = ()
    progress = False

    def entry(self) -> str:
        return f"clarify {self.task_id}.{self.slot}"


# ---------------------------------------------------------------- what is said about the turn

@dataclass(frozen=True)
class Refused(Effect):
    """A command, or a part of one, not applied, with the reason. ``grounding``: refused because the
    user's words do not support it (then, unless it is a yes, it withdraws a pending confirmation);
    otherwise it could not apply (no such task, an invalid value)."""

    command: str
    reason: str
    grounding: bool = False
    confirm: bool = False
    progress = False


@dataclass(frozen=True)
class Noticed(Effect):
    """A sentence the reply leads with (``key`` in dskit.base.messages, with its values)."""

    key: str
    values: tuple = ()
    progress = False


@dataclass(frozen=True)
class Noted(Effect):
    """A line of the ``applied`` log that changes nothing ("slot 'x' read as t1.y", "repair t1.date=...")."""

    text: str
    progress = False

    def entry(self) -> str:
        return self.text


def _logged(source: str, text: str) -> str:
    return f"backup {text}" if source == "engine" else text


def notice(key: str, **values: Any) -> Noticed:
    """A :class:`Noticed` with its values as sorted pairs (a frozen effect holds no dict)."""
    return Noticed(key, tuple(sorted(values.items())))


__all__ = ["Effect", "TaskOpened", "TaskFocused", "TaskLinked", "TaskRemoved", "TaskEnded", "StackCleared", "StageSet",
           "SubtaskWaits", "StackLimited", "Asked", "AskFailed", "HandedOff", "Executed", "Understood", "NotUnderstood",
           "TurnRecorded", "SlotSet",
           "SlotRolledBack", "ValueHeld", "HeldAnswered", "Confirmed", "Denied", "FaqAsked", "SmallTalk",
           "HandoffAsked", "Clarified", "Refused", "Noticed", "Noted", "notice"]
