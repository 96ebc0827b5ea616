"""The commands of the understanding contract: one typed value per command, and the registry.

A command is a frozen dataclass with typed fields, read once from the model's JSON (a malformed
field is a refusal with its reason). Its class holds everything the engine knows about that kind of
command (the shape is Rasa's ``dialogue_understanding/commands``, with our reasons kept):

- ``kind`` and ``aliases`` — how the model's answer names it; ``meaning`` — its line in the
  understanding prompt (the prompt's list is generated from the registry);
- :meth:`Command.read` — how the model's JSON becomes the command, or why it cannot;
- ``order`` — its place in the fixed order a message's commands run in, whatever order the model
  wrote them in ("不订了，下周六再说吧" is cancel + start either way);
- :meth:`Command.propose` — the effects it proposes (:mod:`dskit.turn.effects`). It changes nothing:
  :func:`run` asks the admission rules (:mod:`dskit.rules.admission`) to judge each effect and the reducer
  (:mod:`dskit.turn.reducer`) applies what they admit, then tells the proposal whether it was applied;
- ``texts`` — the sentences it says to the user, beside it (merged into dskit.base.messages when it is
  registered: a missing language fails at import, never in a user's turn).

The engine's own readings of what the model left out (:mod:`dskit.turn.backup`) are commands too, with
``source`` "engine": they pass the same rules and the same reducer. Adding a command is one class and
one :func:`register` call (docs/design.md shows how).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..rules.admission import as_clock, judge, shared_words, value_readings
from ..rules.grounding import task_mentioned
from ..catalog.catalog import Catalog, TaskSpec, coerce_slot_value
from .effects import (Confirmed, Denied, Effect, FaqAsked, HandoffAsked, HeldAnswered, Noted, Refused, SlotRolledBack,
                      SlotSet, SmallTalk, StackCleared, TaskFocused, TaskLinked, TaskOpened, TaskRemoved,
                      notice)
from ..base.messages import MESSAGES
from ..state.records import Stage
from .reducer import reduce
from ..base.text import short_text
from .turn import Turn

MAX_TEXT = 2000
# Commands at or past this place in the order see the slot changes resolved (one outcome per slot).
RESOLVED_FROM = 4


def command_text(value: Any) -> str:
    """A text field of a command (a question, a reason), trimmed and bounded."""
    return value.strip()[:MAX_TEXT] if isinstance(value, str) else ""


class Command:
    """The common behaviour of commands (a plain class: each command below is a frozen dataclass)."""

    kind = ""
    aliases: tuple = ()
    order = 9
    meaning: dict | None = None  # None: described with another command in the prompt
    title = ""  # the name the prompt gives it, when not ``kind``
    texts: dict = {}  # its own sentences: key -> {lang: text} (merged into dskit.base.messages by register)
    source = "model"  # "engine": read by the engine itself (dskit.turn.backup)

    @classmethod
    def read(cls, raw: dict, task: str | None, catalog: Catalog) -> Command | str:
        """The command, or why the model's JSON cannot be one. ``task`` is the resolved task name."""
        return cls()

    def propose(self, turn: Turn) -> Iterator[Effect]:
        """The effects this command proposes, one at a time; each ``yield`` receives whether it was applied."""
        return iter(())

    def wire(self) -> dict:
        """The command as the model would write it (for logs, refusals and the classic adapter): its kind and
        its fields that hold something."""
        fields = ((name, getattr(self, name)) for name in self.__match_args__ if name != "source")
        return {"type": self.kind, **{name: dict(value) if isinstance(value, dict) else value
                                       for name, value in fields if value is not None}}

    def __str__(self) -> str:
        return short_text(self.wire())


def run(turn: Turn, command: Command) -> int:
    """Judge each effect the command proposes, apply what is admitted; the number applied.

    A refusal is recorded with its reason — unless the engine proposed it (``source`` "engine"): the
    engine's own reading that the rules refuse leaves nothing in the turn."""
    proposal = command.propose(turn)
    applied = 0
    try:
        effect = next(proposal)
        while True:
            ok = settle(turn, effect, command)
            applied += ok
            effect = proposal.send(ok)
    except StopIteration:
        return applied


def settle(turn: Turn, effect: Effect, command: Command) -> bool:
    """One proposed effect through the admission rules and the reducer; True when it was applied."""
    engine = command.source == "engine"
    if isinstance(effect, (Refused, Noted)):  # records, not changes: nothing to judge
        if not engine:
            reduce(turn, effect)
        return False
    verdict = judge(turn, effect)
    if verdict.outcome == "admit":
        for extra in verdict.also:
            reduce(turn, extra)
        reduce(turn, verdict.effect)
        return True
    if engine:
        return False
    for extra in verdict.also:
        reduce(turn, extra)
    if verdict.outcome == "clarify":
        reduce(turn, verdict.effect)
    elif verdict.outcome == "hold":
        reduce(turn, verdict.effect)
    else:
        reduce(turn, Refused(verdict.item or str(command), verdict.reason, grounding=verdict.grounding,
                             confirm=isinstance(effect, Confirmed)))
    return False


def next_task_id(turn: Turn) -> str:
    """The id the next task opened gets (the reducer gives it the same)."""
    return f"t{turn.state['next_task_seq']}"


def _pairs(slots: dict) -> tuple:
    return tuple(slots.items())


# ---------------------------------------------------------------- tasks

@dataclass(frozen=True)
class StartTask(Command):
    task: str
    slots: dict = field(default_factory=dict)
    source: str = "model"
    kind = "start_task"
    aliases = ("start", "start_flow", "new_task")
    order = 2
    meaning = {"zh": "用户要办理目录中的一个任务。字段：task（任务名）、slots（用户说了的槽位和值）",
               "en": "the user asks for a task from the catalog. Fields: task (its name), slots (the slots the user "
                     "gave, with their values)"}

    @classmethod
    def read(cls, raw: dict, task: str | None, catalog: Catalog) -> Command | str:
        slots = raw.get("slots")
        if task is None:
            return "start_task needs a task"
        if slots is not None and not isinstance(slots, dict):
            return "slots must be an object"
        return cls(task, dict(slots or {}))


    def propose(self, turn: Turn) -> Iterator[Effect]:
        spec = turn.catalog.tasks[self.task]
        task = turn.stack.named(spec.name)
        if task is None:
            parent = turn.stack.named(spec.depends_on) if spec.depends_on else None
            opened = yield TaskOpened(next_task_id(turn), spec.name, spec.display,
                                      parent["id"] if parent is not None else None, source=self.source,
                                      given=_pairs(answer_slots(turn, spec, self.slots)))
            if not opened:
                return
            task = turn.stack.top()
            for orphan in _orphans(turn, task):
                yield TaskLinked(orphan["id"], task["id"])
        elif not (yield TaskFocused(task["id"], spec.name, source=self.source,
                                    given=_pairs(answer_slots(turn, spec, self.slots)))):
            return
        if self.slots:
            yield from slot_effects(turn, task, self.slots, self.source)


def answer_slots(turn: Turn, spec: TaskSpec, own: dict) -> dict:
    """The values a start carries in the whole answer: its own, and those of set_slots commands of the
    same message that go to the new task (named, or for a slot no task open before the message has).
    A start split into start_task + set_slots is judged as one."""
    slots = dict(own)
    earlier = [t for t in turn.stack.tasks if t["id"] in turn.before.existing_ids]
    for other in turn.commands:
        if not isinstance(other, SetSlots) or other.task not in (None, spec.name):
            continue
        for name, value in other.slots.items():
            if name in spec.slots and name not in slots and (other.task == spec.name or not any(
                    name in turn.spec(t).slots for t in earlier)):
                slots[name] = value
    return slots


def start_all(turn: Turn, starts: list[StartTask]) -> None:
    """Several starts keep the first-mentioned on top; tasks started together find their parents."""
    for command in reversed(starts):
        run(turn, command)
    for task in turn.stack.tasks:  # "办宽带，顺便租个路由器": a parent started beside it
        if task["id"] not in turn.before.existing_ids and task.get("parent_id") is None:
            depends_on = turn.spec(task).depends_on
            parent = turn.stack.named(depends_on) if depends_on else None
            if parent is not None and parent is not task:
                reduce(turn, TaskLinked(task["id"], parent["id"]))


def _orphans(turn: Turn, parent: dict) -> list[dict]:
    """Sub-tasks opened *before* their parent (a router, then the broadband order it is for) become the
    new parent's while they are still open: they wait for it and go with it, as if opened after it."""
    return [t for t in turn.stack.tasks if t.get("parent_id") is None and t is not parent
            and turn.spec(t).depends_on == parent["name"]]


@dataclass(frozen=True)
class CancelTask(Command):
    task: str | None = None
    source: str = "model"
    kind = "cancel_task"
    aliases = ("cancel", "cancel_flow")
    order = 1
    meaning = {"zh": "用户不要某个任务了。字段：task", "en": "the user drops a task. Field: task"}

    @classmethod
    def read(cls, raw: dict, task: str | None, catalog: Catalog) -> Command | str:
        return cls(task)


    def propose(self, turn: Turn) -> Iterator[Effect]:
        task = next((t for t in reversed(turn.stack.tasks) if not self.task or t["name"] == self.task), None)
        if task is None:
            yield Refused(str(self), f"no open task {self.task}" if self.task else "no open task to cancel")
            return
        yield TaskRemoved(task["id"], task["name"], "cancelled", source=self.source)


@dataclass(frozen=True)
class Reset(Command):
    source: str = "model"
    kind = "reset"
    aliases = ("restart", "clear")
    order = 0
    meaning = {"zh": "用户要求全部重来", "en": "the user wants to start over"}

    def propose(self, turn: Turn) -> Iterator[Effect]:
        yield StackCleared(source=self.source)


# ---------------------------------------------------------------- slots

@dataclass(frozen=True)
class SetSlots(Command):
    task: str | None
    slots: dict
    source: str = "model"
    kind = "set_slots"
    aliases = ("set_slot", "fill_slots", "update_slots", "inform")
    order = 3
    meaning = {"zh": "补充或修改已打开任务的槽位。字段：task、slots；用户要去掉某个槽位时它的值写 null",
               "en": "add to or change the slots of an open task. Fields: task, slots; a slot the user takes away "
                     "gets null"}

    @classmethod
    def read(cls, raw: dict, task: str | None, catalog: Catalog) -> Command | str:
        slots = raw.get("slots")
        if not isinstance(slots, dict):
            # {"type": "set_slots", "slot": "time", "value": "19:00"} is a common variant.
            if isinstance(raw.get("slot"), str) and "value" in raw:
                slots = {raw["slot"]: raw["value"]}
            else:
                return "set_slots needs a slots object"
        if not slots:
            return "set_slots has no slots"
        return cls(task, dict(slots))


    def propose(self, turn: Turn) -> Iterator[Effect]:
        if self.task and turn.target(self.task, "") is None:  # slots for a task not open: a start, checked as one
            yield from StartTask(self.task, dict(self.slots), self.source).propose(turn)
            return
        groups: dict[str, tuple[dict, dict]] = {}
        told = False
        for slot, value in self.slots.items():
            task = turn.target(self.task, slot)
            if task is None:
                finished = None if told or turn.stack.top() is not None else _finished_with(turn, slot)
                if finished is not None:  # a change to a task already run: say so, never a silent drop
                    told = True
                    yield notice("done_no_change", task=finished.display)
                yield Refused(short_text({"slot": slot, "value": value}), f"no open task has slot {slot!r}")
                continue
            groups.setdefault(task["id"], (task, {}))[1][slot] = value
        for task, slots in groups.values():
            yield from slot_effects(turn, task, slots, self.source)


def _finished_with(turn: Turn, slot: str) -> TaskSpec | None:
    """The catalog task of the latest execution whose task has ``slot``, when no task is open: a change
    said after a booking was submitted ("改成下午吧") is about it, and it cannot be changed here."""
    for entry in reversed(turn.state["done"]):
        spec = turn.catalog.tasks.get(entry.get("task", ""))
        if spec is not None and slot in spec.slots:
            return spec
    return None


@dataclass(frozen=True)
class RollbackSlot(Command):
    task: str | None
    slot: str
    source: str = "model"
    kind = "rollback_slot"
    aliases = ("rollback", "undo", "undo_slot")
    order = 3
    meaning = {"zh": "用户要撤回某个槽位的上一次修改。字段：task、slot",
               "en": "the user takes back the last change of a slot. Fields: task, slot"}

    @classmethod
    def read(cls, raw: dict, task: str | None, catalog: Catalog) -> Command | str:
        slot = raw.get("slot")
        if not isinstance(slot, str) or not slot.strip():
            return "rollback_slot needs a slot"
        return cls(task, slot.strip())


    def propose(self, turn: Turn) -> Iterator[Effect]:
        task = turn.target(self.task, self.slot)
        if task is None or self.slot not in turn.spec(task).slots:
            yield Refused(str(self), f"no open task has slot {self.slot!r}")
            return
        if not task["history"].get(self.slot):
            yield Refused(str(self), f"{self.slot} has no earlier value")
            return
        yield SlotRolledBack(task["id"], self.slot, source=self.source)


def slot_by_word(spec: TaskSpec, key: str) -> str:
    """The slot a model named by its label or by the last word of its name or label: "设施" for 酒店设施,
    "类型" for 酒店类型, "人数" for a slot labelled 人数, "type" for hotel_type. Exactly one slot of the
    task must match, the word must be two characters or more (a whole word, for English), and it must not
    be another slot's own name; "" otherwise. The value is then admitted like any other: only its name
    was the model's own."""
    word = key.strip()
    if len(word) < 2 or word in spec.slots:
        return ""
    found = set()
    for name, slot in spec.slots.items():
        for own in (name, slot.label):
            if own == word or (own.endswith(word) and (not word.isascii() or own[-len(word) - 1] in "_ -")):
                found.add(name)
    return found.pop() if len(found) == 1 else ""


def slot_effects(turn: Turn, task: dict, slots: dict, source: str = "model") -> Iterator[Effect]:
    """Slot values for one task: named as the catalog does, read against the message (a clock time folded
    into another value, a value written into the wrong slot: :func:`dskit.rules.admission.value_readings`),
    coerced to their slots, then proposed one by one for the rules to judge."""
    spec = turn.spec(task)
    named = dict(slots)
    for key in slots:
        if key in spec.slots or not isinstance(key, str):
            continue
        name = slot_by_word(spec, key)
        if name and name not in named:
            named[name] = named.pop(key)
            yield Noted(f"slot {key!r} read as {task['id']}.{name}")
    named, notes = value_readings(turn, task, named)
    for note in notes:  # a plain loop: ``yield from`` a list would refuse what run() sends back
        yield note
    shared = shared_words(turn, task, named)
    for name, raw in named.items():
        item = short_text({"task": task["name"], "slot": name, "value": raw})
        if name not in spec.slots:
            home = _home_of(turn, task, name)
            if home is not None and source == "model":  # "再租个AX6000的路由器": the router's model
                yield Noted(f"slot {name!r} of {task['name']} read as {home}.{name}")
                yield from SetSlots(home, {name: raw}, source).propose(turn)
                continue
            yield Refused(item, f"unknown slot {name!r} for task {task['name']}")
            continue
        if name in shared:
            yield Refused(item, shared[name], grounding=True)
            continue
        value: Any = None
        if raw is not None:
            ok, value, reason = coerce_slot_value(spec.slots[name], as_clock(spec.slots[name], raw))
            if not ok:
                yield Refused(item, f"{name}: {reason}")
                continue
            if reason:  # a list slot kept its valid items
                yield Refused(item, f"{name}: partly kept; {reason}")
        yield SlotSet(task["id"], name, value, source=source)


def _home_of(turn: Turn, task: dict, slot: str) -> str | None:
    """The task a value the model gave ``task`` under a slot it does not have belongs to: the one other task
    of the catalog with that slot, when the message names it ("办个百兆宽带，再租个AX6000的路由器" gives the
    broadband order a ``model``, which only the router rental has). None otherwise: the value is refused."""
    if turn.evidence is None:
        return None
    homes = [spec for name, spec in turn.catalog.tasks.items() if name != task["name"] and slot in spec.slots]
    if len(homes) != 1 or not task_mentioned(homes[0], turn.catalog, turn.evidence.message):
        return None
    return homes[0].name


@dataclass(frozen=True)
class FillSlot(Command):
    """The engine's own reading of one value the model left out (dskit.turn.backup): not a command the model
    writes (it is not registered), judged by the same rules as the model's."""

    task_id: str
    slot: str
    value: Any
    source: str = "engine"
    kind = "fill_slot"


    def propose(self, turn: Turn) -> Iterator[Effect]:
        task = turn.stack.find(self.task_id)
        spec = turn.spec(task).slots.get(self.slot) if task is not None else None
        if spec is None:
            return
        ok, coerced, reason = coerce_slot_value(spec, self.value)
        if ok and not reason and task["slots"].get(self.slot) != coerced:
            yield SlotSet(self.task_id, self.slot, coerced, source=self.source)


# ---------------------------------------------------------------- yes and no

@dataclass(frozen=True)
class Confirm(Command):
    task: str | None = None
    source: str = "model"
    kind = "confirm"
    aliases = ("affirm", "yes")
    order = 4
    title = "confirm / deny"
    meaning = {"zh": "用户对确认问题回答“是”/“不是”", "en": "yes / no to a confirmation question"}

    @classmethod
    def read(cls, raw: dict, task: str | None, catalog: Catalog) -> Command | str:
        return cls(task)


    def propose(self, turn: Turn) -> Iterator[Effect]:
        if self.task in turn.catalog.tasks and turn.stack.named(self.task) is None:
            # "顺便问下我卡里还剩多少钱" -> confirm account_balance: a yes to a task nobody opened is the model's
            # way of asking for it, so it is a start, checked as one (a task that just ran is not run again)
            yield from StartTask(self.task, {}, self.source).propose(turn)
            return
        task = turn.stack.top()
        if task is None:
            yield Refused(str(self), "no open task to confirm")
            return
        if task["id"] in turn.before.held:  # a yes to the values held for checking, not to running the task
            if (yield HeldAnswered(task["id"], True)):
                yield from _held_values(turn, task)
            return
        yield Confirmed(task["id"], source=self.source)


def _held_values(turn: Turn, task: dict) -> Iterator[Effect]:
    """The user said yes to the values shown for checking: they are stored as if said (held in the state
    string, which anyone may edit: each is checked against its slot again)."""
    slots = turn.spec(task).slots
    for name, value in turn.before.held[task["id"]].items():
        if name not in slots:
            continue
        if value is not None:
            ok, coerced, reason = coerce_slot_value(slots[name], value)
            if not ok or reason or coerced != value:
                yield Refused(short_text({"task": task["name"], "slot": name, "value": value}),
                              f"{name}: held value is invalid")
                continue
        yield SlotSet(task["id"], name, value, source="held")


@dataclass(frozen=True)
class Deny(Command):
    source: str = "model"
    kind = "deny"
    aliases = ("no", "reject")
    order = 4

    def propose(self, turn: Turn) -> Iterator[Effect]:
        task = turn.stack.top()
        if task is not None and task["id"] in turn.before.held:  # no to the values held for checking
            yield HeldAnswered(task["id"], False)
            return
        if task is None or task["stage"] != Stage.CONFIRMING:
            yield Refused(str(self), "nothing to deny")
            return
        yield Denied(task["id"], source=self.source)


# ---------------------------------------------------------------- outside the tasks

@dataclass(frozen=True)
class Faq(Command):
    question: str = ""
    source: str = "model"
    kind = "faq"
    aliases = ("knowledge", "knowledge_answer", "question")
    order = 6
    meaning = {"zh": "知识性提问（政策、规则、介绍），不改变任务。字段：question",
               "en": "a knowledge question (policies, rules, descriptions); tasks stay as they are. Field: question"}

    @classmethod
    def read(cls, raw: dict, task: str | None, catalog: Catalog) -> Command | str:
        return cls(command_text(raw.get("question")))


    def propose(self, turn: Turn) -> Iterator[Effect]:
        yield FaqAsked(self.question or (turn.said if self.source == "engine" else ""),
                       note="backup faq" if self.source == "engine" else "faq")


@dataclass(frozen=True)
class Chitchat(Command):
    source: str = "model"
    kind = "chitchat"
    aliases = ("chat", "smalltalk")
    order = 6
    meaning = {"zh": "寒暄、闲聊、情绪表达", "en": "greetings, small talk, feelings"}

    def propose(self, turn: Turn) -> Iterator[Effect]:
        yield SmallTalk(note="backup chitchat" if self.source == "engine" else "chitchat")


@dataclass(frozen=True)
class Handoff(Command):
    reason: str = ""
    source: str = "model"
    kind = "handoff"
    aliases = ("human_handoff", "transfer")
    order = 5
    meaning = {"zh": "用户要求人工客服。字段：reason", "en": "the user asks for a human. Field: reason"}

    @classmethod
    def read(cls, raw: dict, task: str | None, catalog: Catalog) -> Command | str:
        return cls(command_text(raw.get("reason")))


    def propose(self, turn: Turn) -> Iterator[Effect]:
        yield HandoffAsked(self.reason or "user_request", note="backup handoff" if self.source == "engine" else "handoff")


@dataclass(frozen=True)
class CannotHandle(Command):
    source: str = "model"
    kind = "cannot_handle"
    aliases = ("unknown", "fallback")
    order = 7
    meaning = {"zh": "完全无法理解", "en": "the message cannot be understood at all"}

    def propose(self, turn: Turn) -> Iterator[Effect]:
        # A message of cannot_handle alone is not understood at all (dskit.turn.machine); beside others it is noise.
        yield Refused(str(self), "ignored: other commands were understood")


# ---------------------------------------------------------------- the registry

REGISTRY: dict[str, type] = {}
COMMAND_ALIASES: dict[str, str] = {}


def register(command: type) -> type:
    """Add a command class to the registry: its kind, its aliases and its sentences. A sentence missing
    in a language fails here, when the engine is imported, never in a user's turn."""
    for key, texts in command.texts.items():
        missing = [lang for lang in MESSAGES if not texts.get(lang)]
        if missing:
            raise KeyError(f"command {command.kind}: text {key!r} has no {', '.join(missing)} version")
    for key, texts in command.texts.items():
        for lang, table in MESSAGES.items():
            table.setdefault(key, texts[lang])
    REGISTRY[command.kind] = command
    for alias in command.aliases:
        COMMAND_ALIASES[alias] = command.kind
    return command


for _command in (StartTask, SetSlots, RollbackSlot, CancelTask, Confirm, Deny, Faq, Chitchat, Handoff, Reset,
                 CannotHandle):
    register(_command)
del _command  # not a command of its own: the deferred bundle lists every class a module name holds
COMMAND_TYPES = tuple(REGISTRY)


def command_lines(lang: str) -> str:
    """The understanding prompt's list of commands, one line each, in registry order."""
    sep = "：" if lang == "zh" else ": "
    return "\n".join(f"- {c.title or c.kind}{sep}{c.meaning[lang]}" for c in REGISTRY.values() if c.meaning)


def is_cannot_handle(command: Command) -> bool:
    return isinstance(command, CannotHandle)


def apply_commands(turn: Turn, commands: list[Command]) -> None:
    """Run a message's commands in the fixed order (equal places keep the model's order); the slot
    changes are resolved to one outcome per slot before confirm, deny and the rest are read."""
    turn.commands = tuple(commands)
    ordered = [c for _, c in sorted(enumerate(commands), key=lambda p: (p[1].order, p[0]))]
    resolved = False
    index = 0
    while index < len(ordered):
        kind = type(ordered[index])
        end = index + 1
        while end < len(ordered) and type(ordered[end]) is kind:
            end += 1
        if not resolved and kind.order >= RESOLVED_FROM:
            turn.writes.resolve()
            resolved = True
        if kind is StartTask:
            start_all(turn, ordered[index:end])
        else:
            for command in ordered[index:end]:
                run(turn, command)
        index = end
    if not resolved:
        turn.writes.resolve()
    _expire_held(turn)


def _expire_held(turn: Turn) -> None:
    """Held values the user did not say yes to are forgotten (they were asked about once)."""
    for task_id, values in turn.held_open().items():
        reduce(turn, Refused(short_text({"task_id": task_id, "slots": values}),
                             "held values not confirmed by the user; dropped"))


__all__ = ["Command", "REGISTRY", "COMMAND_TYPES", "COMMAND_ALIASES", "command_lines", "apply_commands", "run",
           "register", "slot_effects", "slot_by_word", "command_text", "StartTask", "SetSlots", "RollbackSlot",
           "CancelTask", "Confirm", "Deny", "Faq", "Chitchat", "Handoff", "Reset", "CannotHandle", "FillSlot",
           "answer_slots"]
