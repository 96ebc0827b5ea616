"""The commands of the understanding contract, one class each, and the registry that names them.

A command class holds everything the engine knows about one kind of command (the shape is Rasa's
``dialogue_understanding/commands``, with our dropped-with-reason kept):

- ``kind`` and ``aliases`` — how the model's answer names it;
- ``meaning`` — its line in the understanding prompt (the prompt's list is generated from here);
- :meth:`Command.read` — how it is read from the model's answer (the rest of a bad command is
  dropped with the reason);
- ``order`` — its place in the fixed order a message's commands are applied in, whatever order the
  model wrote them in ("不订了，下周六再说吧" is cancel + start either way);
- :meth:`Command.apply` — the evidence it needs (asked of :mod:`dskit.admission`) and its effect on
  the :class:`dskit.turn.Turn`, which records what changed.

Adding a command is one class here and one line in :data:`REGISTRY` (docs/design.md shows how).
"""

from __future__ import annotations

from typing import Any

from .admission import (admit_cancel, admit_confirm, admit_reset, admit_rollback, admit_start, admit_value,
                        as_clock, hold_or_refuse, keep_half_day, refile_misfiled, shared_words, split_clock_slots)
from .catalog import Catalog, TaskSpec, coerce_slot_value
from .gaps import missing_slots
from .cues import only_yes
from .grounding import asks_something
from .integrity import shown_digest
from .records import Stage
from .slot_writes import UNSET
from .state import new_counters
from .turn import Turn, short_text

MAX_TEXT = 2000


def command_text(value: Any) -> str:
    """A text field of a command (a question, a reason), trimmed and bounded."""
    return value.strip()[:MAX_TEXT] if isinstance(value, str) else ""


class Command:
    """One kind of command. Subclasses set the class attributes and override what differs."""

    kind = ""
    aliases: tuple[str, ...] = ()
    order = 9
    meaning: dict[str, str] | None = None  # None: described with another command in the prompt
    title = ""  # the name the prompt gives it, when not ``kind``

    def read(self, raw: dict, task: str | None, catalog: Catalog) -> tuple[dict | None, str]:
        """The command in its normal form, or (None, why it is dropped). ``task`` is the resolved task."""
        return {"type": self.kind}, ""

    def apply(self, turn: Turn, command: dict) -> None:
        """Check the command's evidence and apply its effect to the turn."""

    def apply_all(self, turn: Turn, commands: list[dict]) -> None:
        """Apply this kind's commands of one message (they come together in the fixed order)."""
        for command in commands:
            self.apply(turn, command)


# ---------------------------------------------------------------- tasks

class StartTask(Command):
    kind = "start_task"
    aliases = ("start", "start_flow", "new_task")
    order = 2
    meaning = {"zh": "用户要办理目录中的一个任务。字段：task（任务名）、slots（用户说了的槽位和值）",
               "en": "the user asks for a task from the catalog. Fields: task (its name), slots (the slots the user "
                     "gave, with their values)"}

    def read(self, raw: dict, task: str | None, catalog: Catalog) -> tuple[dict | None, str]:
        slots = raw.get("slots")
        if task is None:
            return None, "start_task needs a task"
        if slots is not None and not isinstance(slots, dict):
            return None, "slots must be an object"
        return {"type": self.kind, "task": task, "slots": dict(slots or {})}, ""

    def apply_all(self, turn: Turn, commands: list[dict]) -> None:
        """Several starts keep the first-mentioned on top; tasks started together find their parents."""
        for command in reversed(commands):
            self.apply(turn, command)
        _link_parents(turn)

    def apply(self, turn: Turn, command: dict) -> None:
        spec = turn.catalog.tasks[command["task"]]
        grounded, reason = admit_start(turn, spec, command)
        if not grounded:
            turn.refuse(command, reason)
            return
        task = turn.stack.named(spec.name)
        if task is None:
            task = turn.stack.new_task(spec.name, spec.display, parent=_open_parent_named(turn, spec.depends_on))
            turn.note(f"start {task['id']}:{spec.name}")
            _adopt_orphans(turn, task)
        else:
            turn.note(f"focus {task['id']}:{spec.name}")
        turn.stack.push(task)
        if command.get("slots"):
            apply_slots(turn, task, command["slots"])


class CancelTask(Command):
    kind = "cancel_task"
    aliases = ("cancel", "cancel_flow")
    order = 1
    meaning = {"zh": "用户不要某个任务了。字段：task", "en": "the user drops a task. Field: task"}

    def read(self, raw: dict, task: str | None, catalog: Catalog) -> tuple[dict | None, str]:
        return {"type": self.kind, "task": task}, ""

    def apply(self, turn: Turn, command: dict) -> None:
        name = command.get("task")
        task = next((t for t in reversed(turn.stack.tasks) if not name or t["name"] == name), None)
        if task is None:
            turn.drop(command, f"no open task {name}" if name else "no open task to cancel")
            return
        if not admit_cancel(turn, task):
            turn.refuse(command, "the message does not drop a task")
            return
        turn.stack.remove(task, "cancelled")
        turn.note(f"cancel {task['id']}:{task['name']}")


class Reset(Command):
    kind = "reset"
    aliases = ("restart", "clear")
    order = 0
    meaning = {"zh": "用户要求全部重来", "en": "the user wants to start over"}

    def apply(self, turn: Turn, command: dict) -> None:
        if not admit_reset(turn):
            turn.refuse(command, "the message does not ask to start over")
            return
        turn.stack.clear("reset")
        turn.state["counters"] = new_counters()
        turn.state["handoff"] = None
        turn.held.clear()
        turn.notice("reset")
        turn.note("reset")


# ---------------------------------------------------------------- slots

class SetSlots(Command):
    kind = "set_slots"
    aliases = ("set_slot", "fill_slots", "update_slots", "inform")
    order = 3
    meaning = {"zh": "补充或修改已打开任务的槽位。字段：task、slots；用户要去掉某个槽位时它的值写 null",
               "en": "add to or change the slots of an open task. Fields: task, slots; a slot the user takes away "
                     "gets null"}

    def read(self, raw: dict, task: str | None, catalog: Catalog) -> tuple[dict | None, str]:
        slots = raw.get("slots")
        if not isinstance(slots, dict):
            # {"type": "set_slots", "slot": "time", "value": "19:00"} is a common variant.
            if isinstance(raw.get("slot"), str) and "value" in raw:
                slots = {raw["slot"]: raw["value"]}
            else:
                return None, "set_slots needs a slots object"
        if not slots:
            return None, "set_slots has no slots"
        return {"type": self.kind, "task": task, "slots": dict(slots)}, ""

    def apply(self, turn: Turn, command: dict) -> None:
        name = command.get("task")
        if name and turn.target(name, "") is None:  # slots for a task not open: a start, checked as one
            REGISTRY["start_task"].apply(turn, {"type": "start_task", "task": name, "slots": dict(command["slots"])})
            return
        groups: dict[str, tuple[dict, dict]] = {}
        for slot, value in command["slots"].items():
            task = turn.target(name, slot)
            if task is None:
                turn.drop({"slot": slot, "value": value}, f"no open task has slot {slot!r}")
                continue
            groups.setdefault(task["id"], (task, {}))[1][slot] = value
        for task, slots in groups.values():
            apply_slots(turn, task, slots)


class RollbackSlot(Command):
    kind = "rollback_slot"
    aliases = ("rollback", "undo", "undo_slot")
    order = 3
    meaning = {"zh": "用户要撤回某个槽位的上一次修改。字段：task、slot",
               "en": "the user takes back the last change of a slot. Fields: task, slot"}

    def read(self, raw: dict, task: str | None, catalog: Catalog) -> tuple[dict | None, str]:
        slot = raw.get("slot")
        if not isinstance(slot, str) or not slot.strip():
            return None, "rollback_slot needs a slot"
        return {"type": self.kind, "task": task, "slot": slot.strip()}, ""

    def apply(self, turn: Turn, command: dict) -> None:
        slot = command["slot"]
        task = turn.target(command.get("task"), slot)
        if task is None or slot not in turn.spec(task).slots:
            turn.drop(command, f"no open task has slot {slot!r}")
            return
        history = task["history"].get(slot) or []
        if not history:
            turn.drop(command, f"{slot} has no earlier value")
            return
        if not admit_rollback(turn, task, slot, history[-1]):
            turn.refuse(command, f"{slot}: the message does not take this slot back")
            return
        turn.writes.rollback(task, slot)
        turn.note(f"rollback {task['id']}.{slot}")


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


def _slots_by_name(turn: Turn, task: dict, slots: dict) -> dict:
    """The command's slots under the catalog's names (:func:`slot_by_word`), never over a slot the
    command also names itself."""
    spec = turn.spec(task)
    named = dict(slots)
    for key in slots:
        if key in spec.slots or not isinstance(key, str):
            continue
        name = slot_by_word(spec, key)
        if name and name not in named:
            named[name] = named.pop(key)
            turn.note(f"slot {key!r} read as {task['id']}.{name}", progress=False)
    return named


def apply_slots(turn: Turn, task: dict, slots: dict) -> None:
    """Slot values for one task: each coerced to its slot, admitted by the user's words, then written."""
    spec = turn.spec(task)
    slots = refile_misfiled(turn, task, split_clock_slots(turn, task, _slots_by_name(turn, task, slots)))
    shared = shared_words(turn, task, slots)
    for name, raw in slots.items():
        item = {"task": task["name"], "slot": name, "value": raw}
        if name not in spec.slots:
            turn.drop(item, f"unknown slot {name!r} for task {task['name']}")
            continue
        if name in shared:
            turn.refuse(item, f"{name}: the same words were given to several slots")
            continue
        value: Any = None
        if raw is not None:
            ok, value, reason = coerce_slot_value(spec.slots[name], as_clock(spec.slots[name], raw))
            if not ok:
                turn.drop(item, f"{name}: {reason}")
                continue
            if reason:  # a list slot kept its valid items
                turn.drop(item, f"{name}: partly kept; {reason}")
            value = keep_half_day(turn, task, name, value)
        _write(turn, task, name, value, item)


def _write(turn: Turn, task: dict, name: str, value: Any, item: dict) -> None:
    admitted, why = admit_value(turn, task, name, value)
    if admitted is UNSET:
        hold_or_refuse(turn, task, name, value, item, why)
        return
    if why:  # a list slot kept the items the user said
        turn.refuse(item, why)
    if turn.writes.set(task, name, admitted):
        turn.note(f"delete {task['id']}.{name}" if admitted is None else
                  f"set {task['id']}.{name}={short_text(admitted)}")


# ---------------------------------------------------------------- yes and no

class Confirm(Command):
    kind = "confirm"
    aliases = ("affirm", "yes")
    order = 4
    title = "confirm / deny"
    meaning = {"zh": "用户对确认问题回答“是”/“不是”", "en": "yes / no to a confirmation question"}

    def read(self, raw: dict, task: str | None, catalog: Catalog) -> tuple[dict | None, str]:
        return ({"type": self.kind, "task": task} if task else {"type": self.kind}), ""

    def apply(self, turn: Turn, command: dict) -> None:
        name = command.get("task")
        if name in turn.catalog.tasks and turn.stack.named(name) is None:
            # "顺便问下我卡里还剩多少钱" -> confirm account_balance: a yes to a task nobody opened is the model's
            # way of asking for it, so it is a start, checked as one (a task that just ran is not run again)
            REGISTRY["start_task"].apply(turn, {"type": "start_task", "task": name, "slots": {}})
            return
        task = turn.stack.top()
        if task is None:
            turn.drop(command, "no open task to confirm")
            return
        if turn.evidence is not None and turn.unapplied and not only_yes(turn.evidence.raw):
            # "换一家吧，行": the yes is not to what was shown (a bare "没错，就这么订" is, whatever the model added)
            turn.drop(command, "refused: a change in the same message was not applied, so the values shown are "
                               "not what the user asked for")
            return
        if not admit_confirm(turn):
            if asks_something(turn.evidence) and turn.faq is None:  # answer it; the confirmation stays pending
                turn.faq = turn.said
                turn.note("faq (the message asks)", progress=False)
            turn.refuse(command, "the message does not say yes")
            return
        if task["id"] in turn.held:  # a yes to the values held for checking, not to running the task
            _accept_held(turn, task)
            return
        missing = missing_slots(task, turn.spec(task))
        if missing:  # the guard: whatever the model says, nothing runs with a required slot empty
            turn.drop(command, f"refused: required slot {missing[0]} is empty")
            turn.notice("guard")
            return
        if task["stage"] != Stage.CONFIRMING or turn.writes.changed_in(task) \
                or any(turn.writes.changed_in(sub) for sub in turn.stack.waiting_under(task)):
            turn.drop(command, "nothing has been shown for confirmation yet")
            return
        if task.get("shown") != shown_digest(task, turn.stack.waiting_under(task)):
            turn.drop(command, "refused: the values are not the ones the confirmation question showed; "
                               "they are shown again")
            return
        turn.confirmed_id = task["id"]
        task["approved"] = task["shown"]  # what this yes covered (a sub-task waits with it)
        turn.note(f"confirm {task['id']}")


class Deny(Command):
    kind = "deny"
    aliases = ("no", "reject")
    order = 4

    def apply(self, turn: Turn, command: dict) -> None:
        task = turn.stack.top()
        if task is not None and task["id"] in turn.held:  # no to the values held for checking
            turn.held.pop(task["id"])
            turn.checked.add(task["id"])
            turn.note(f"deny held {task['id']}")
            return
        if task is None or task["stage"] != Stage.CONFIRMING:
            turn.drop(command, "nothing to deny")
            return
        turn.stack.set_stage(task, Stage.COLLECTING)
        turn.denied_id = task["id"]
        turn.note(f"deny {task['id']}")


def _accept_held(turn: Turn, task: dict) -> None:
    """The user said yes to the values shown for checking: they are stored as if said — only those
    the check question showed (dskit.integrity)."""
    turn.checked.add(task["id"])
    slots = turn.spec(task).slots
    held = turn.held.pop(task["id"])
    if task.get("shown") != shown_digest(task, [], held):
        turn.drop({"task_id": task["id"], "slots": held}, "held values are not the ones the check question showed")
        return
    for name, value in held.items():
        if name not in slots:
            continue
        if value is not None:  # held in the state string, which anyone may edit: checked again
            ok, coerced, reason = coerce_slot_value(slots[name], value)
            if not ok or reason or coerced != value:
                turn.drop({"task": task["name"], "slot": name, "value": value}, f"{name}: held value is invalid")
                continue
        if turn.writes.set(task, name, value):
            turn.note(f"checked {task['id']}.{name}")


# ---------------------------------------------------------------- outside the tasks

class Faq(Command):
    kind = "faq"
    aliases = ("knowledge", "knowledge_answer", "question")
    order = 6
    meaning = {"zh": "知识性提问（政策、规则、介绍），不改变任务。字段：question",
               "en": "a knowledge question (policies, rules, descriptions); tasks stay as they are. Field: question"}

    def read(self, raw: dict, task: str | None, catalog: Catalog) -> tuple[dict | None, str]:
        return {"type": self.kind, "question": command_text(raw.get("question"))}, ""

    def apply(self, turn: Turn, command: dict) -> None:
        turn.faq = command.get("question") or ""
        turn.note("faq", progress=False)


class Chitchat(Command):
    kind = "chitchat"
    aliases = ("chat", "smalltalk")
    order = 6
    meaning = {"zh": "寒暄、闲聊、情绪表达", "en": "greetings, small talk, feelings"}

    def apply(self, turn: Turn, command: dict) -> None:
        turn.chitchat = True
        turn.note("chitchat", progress=False)


class Handoff(Command):
    kind = "handoff"
    aliases = ("human_handoff", "transfer")
    order = 5
    meaning = {"zh": "用户要求人工客服。字段：reason", "en": "the user asks for a human. Field: reason"}

    def read(self, raw: dict, task: str | None, catalog: Catalog) -> tuple[dict | None, str]:
        return {"type": self.kind, "reason": command_text(raw.get("reason"))}, ""

    def apply(self, turn: Turn, command: dict) -> None:
        turn.handoff = command.get("reason") or "user_request"
        turn.note("handoff", progress=False)


class CannotHandle(Command):
    kind = "cannot_handle"
    aliases = ("unknown", "fallback")
    order = 7
    meaning = {"zh": "完全无法理解", "en": "the message cannot be understood at all"}

    def apply(self, turn: Turn, command: dict) -> None:
        # A message of cannot_handle alone is not understood at all (dskit.machine); beside others it is noise.
        turn.drop(command, "ignored: other commands were understood")


# ---------------------------------------------------------------- sub-tasks started together

def _open_parent_named(turn: Turn, depends_on: str | None) -> dict | None:
    """The open task a new task is a sub-task of: the nearest one its ``depends_on`` names."""
    return turn.stack.named(depends_on) if depends_on else None


def _adopt_orphans(turn: Turn, parent: dict) -> None:
    """Sub-tasks opened *before* their parent (a router, then the broadband order it is for) become the
    new parent's while they are still open: they wait for it and go with it, as if opened after it."""
    for task in turn.stack.tasks:
        if task.get("parent_id") is None and task is not parent and turn.spec(task).depends_on == parent["name"]:
            task["parent_id"] = parent["id"]
            turn.note(f"link {task['id']}->{parent['id']}", progress=False)


def _link_parents(turn: Turn) -> None:
    """Tasks started in one message ("办宽带，顺便租个路由器") find a parent started beside them."""
    for task in turn.stack.tasks:
        if task["id"] not in turn.existing_ids and task.get("parent_id") is None:
            parent = _open_parent_named(turn, turn.spec(task).depends_on)
            if parent is not None and parent is not task:
                task["parent_id"] = parent["id"]


# ---------------------------------------------------------------- the registry

REGISTRY: dict[str, Command] = {command.kind: command for command in (
    StartTask(), SetSlots(), RollbackSlot(), CancelTask(), Confirm(), Deny(), Faq(), Chitchat(), Handoff(), Reset(),
    CannotHandle(),
)}
COMMAND_TYPES = tuple(REGISTRY)
COMMAND_ALIASES = {alias: command.kind for command in REGISTRY.values() for alias in command.aliases}
# Commands at or past this place in the order see the slot changes resolved (one outcome per slot).
RESOLVED_FROM = Confirm.order


def command_lines(lang: str) -> str:
    """The understanding prompt's list of commands, one line each, in registry order."""
    sep = "：" if lang == "zh" else ": "
    return "\n".join(f"- {c.title or c.kind}{sep}{c.meaning[lang]}" for c in REGISTRY.values() if c.meaning)


def apply_commands(turn: Turn, commands: list[dict]) -> None:
    """Apply a message's commands in the fixed order (equal places keep the model's order); the slot
    changes are resolved to one outcome per slot before confirm, deny and the rest are read."""
    turn.commands = list(commands)
    ordered = [c for _, c in sorted(enumerate(commands), key=lambda p: (REGISTRY[p[1]["type"]].order, p[0]))]
    resolved = False
    index = 0
    while index < len(ordered):
        kind = ordered[index]["type"]
        end = index + 1
        while end < len(ordered) and ordered[end]["type"] == kind:
            end += 1
        if not resolved and REGISTRY[kind].order >= RESOLVED_FROM:
            turn.writes.resolve()
            resolved = True
        REGISTRY[kind].apply_all(turn, ordered[index:end])
        index = end
    if not resolved:
        turn.writes.resolve()
    _expire_held(turn)


def _expire_held(turn: Turn) -> None:
    """Held values the user did not say yes to are forgotten (they were asked about once)."""
    for task_id, values in turn.held.items():
        turn.drop({"task_id": task_id, "slots": values}, "held values not confirmed by the user; dropped")
    turn.held.clear()


__all__ = ["Command", "REGISTRY", "COMMAND_TYPES", "COMMAND_ALIASES", "command_lines", "apply_commands",
           "apply_slots", "command_text"]
