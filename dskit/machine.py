"""The state machine: apply an understanding's commands to the state, then decide the next action.

``step(state_str, understanding, catalog) -> (new_state_str, decision)`` is a pure function of its
inputs (a LangGraph-style reducer), so every turn can be replayed and tested on its own.

Commands are applied in a fixed order, whatever order the model wrote them in (as Rasa's command
processor does): reset, cancel, start, slot changes, confirm/deny, then the non-task commands.
The order makes "不订了，下周六再说吧" (cancel + start) and "订周六的，顺便查下北京天气"
(set + start) come out the same however the model lists them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .catalog import Catalog, TaskSpec, coerce_slot_value, load_catalog
from .gaps import ask_text, missing_slots
from .jsonish import scrub_surrogates
from .grounding import (Evidence, cancel_grounded, clock_value, common_words, confirm_grounded, is_clock,
                        make_evidence, other_slot_value, reset_grounded, revert_said, same_half_day, slot_touched,
                        split_clock, task_mentioned, text_grounded, value_grounded)
from .messages import msg, norm_lang, sentences, show_value
from .records import Decision, ExecutePayload, TaskRecord, TaskRef, new_decision, task_record, task_ref
from .state import (MAX_DONE, MAX_ERROR_TEXT, MAX_TIMELINE, add_error, bound_history, current_task, dump_state,
                    find_task, fit_state, load_state, new_counters)
from .understanding import parse_understanding

_ORDER = {"reset": 0, "cancel_task": 1, "start_task": 2, "set_slots": 3, "rollback_slot": 3,
          "confirm": 4, "deny": 4, "handoff": 5, "faq": 6, "chitchat": 6, "cannot_handle": 7}
# A timeline entry keeps at most this many applied and dropped commands (the state stays small).
_TIMELINE_ITEMS = 12
# A task that ran this many turns ago or less "just ran": starting it again must be asked for.
RECENT_EXECUTION_TURNS = 3
_UNSET = object()  # a slot's value before the turn, when it had none


def _short(command: Any) -> str:
    """A command as a short string for the timeline and the decision. Never raises."""
    try:
        text = json.dumps(command, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        try:
            text = repr(command)
        except Exception:  # noqa: BLE001 - RecursionError, or a repr that fails
            text = f"<{type(command).__name__}>"
    return scrub_surrogates(text[:160])


def values_text(spec: TaskSpec, slots: dict, lang: str, names: list[str] | None = None) -> str:
    """Slot values as an end user reads them, in catalog order: "日期：周五，人数：3"."""
    parts = [msg("kv", lang, slot=spec.slots[n].display if n in spec.slots else n, value=show_value(slots[n], lang))
             for n in (names if names is not None else list(spec.slots)) if n in slots]
    return msg("value_sep", lang).join(parts)


def _payload_parts(cat: Catalog, payload: Any, lang: str) -> tuple[str, str]:
    """(label, values text) of an execute payload or one of its sub-tasks, whatever its shape."""
    payload = payload if isinstance(payload, dict) else {}
    spec = cat.tasks.get(payload.get("task")) or TaskSpec(name=str(payload.get("task") or ""))
    slots = payload.get("slots") if isinstance(payload.get("slots"), dict) else {}
    return str(payload.get("label") or spec.display), values_text(spec, slots, lang, list(slots)) or msg("none", lang)


def execute_reply(catalog: Any, payload: dict, *, called: bool, ok: bool, detail: str = "",
                  lang: str | None = None) -> str:
    """What the user is told about an executed task: done, failed (never passed off as success), or,
    when no task API is configured, what would have been done; sub-tasks submitted with it are named."""
    cat = load_catalog(catalog)
    lang = norm_lang(lang or cat.language)
    label, values = _payload_parts(cat, payload, lang)
    subtasks = [_payload_parts(cat, sub, lang) for sub in payload.get("subtasks") or [] if isinstance(sub, dict)]
    if not called:
        return msg("exec_dry", lang, task=label, values=values) + "".join(
            msg("exec_dry_with", lang, task=sub, values=sub_values) for sub, sub_values in subtasks)
    if ok:
        return msg("exec_ok", lang, task=label) + "".join(msg("exec_ok_with", lang, task=sub) for sub, _ in subtasks)
    also = "".join(msg("exec_failed_also", lang, task=sub) for sub, _ in subtasks)
    return msg("exec_failed", lang, task=label, detail=(detail.strip() or msg("exec_unknown", lang))[:200], also=also)


def _as_clock(spec: Any, raw: Any) -> Any:
    """A model's "晚上七点" for a slot whose pattern wants HH:MM, as "19:00" when it names one time
    (docs/grounding.md: the same normalisation grounds the value against the user's words)."""
    if not (isinstance(raw, str) and len(raw) <= 40 and spec.type == "string" and spec.pattern) \
            or _pattern_takes(spec.pattern, raw):
        return raw
    clock = clock_value(raw)
    return clock if clock is not None and _pattern_takes(spec.pattern, clock) else raw


def _time_slots(task: TaskSpec) -> list[str]:
    """The task's time slots: string slots whose pattern takes HH:MM."""
    return [n for n, s in task.slots.items()
            if s.type == "string" and s.pattern and _pattern_takes(s.pattern, "19:00")]


def _owner_elsewhere(task: TaskSpec, slot: str, value: Any) -> str:
    """The other slot ``value`` belongs to, "" when none: another slot's option or alias ("城东" as the
    date is the area's, an alias of 东区), or a bare clock time given to a slot without a pattern
    ("20:00" as the date is the time slot's). The 1.5B model did both, and the booking ran with them
    after a yes. One thing the user said fills one slot."""
    owner = other_slot_value(task, slot, value)
    spec = task.slots.get(slot)
    if owner or spec is None or spec.pattern or spec.enum or not is_clock(value):
        return owner
    return next((n for n in _time_slots(task) if n != slot), "")


def _pattern_takes(pattern: str, text: str) -> bool:
    try:
        return re.fullmatch(pattern, text) is not None
    except re.error:
        return False


class _MachineTurn:
    """Everything one turn changes and notices; the decision is read off it at the end."""

    def __init__(self, state: dict, catalog: Catalog, lang: str, evidence: Evidence | None = None):
        self.state = state
        self.catalog = catalog
        self.lang = lang
        self.evidence = evidence  # what the user said; None: grounding off (docs/grounding.md)
        self.asked = state["counters"].get("asking") or ""  # "task_id.slot" asked last turn
        # (task_id, slot) -> (value before the turn or _UNSET, its history before the turn, ops this turn)
        self.touched: dict[tuple[str, str], tuple[Any, list, list[str]]] = {}
        # Values held for the user to check (policy "ask"), by task id: last turn's, and this turn's.
        self.held: dict[str, dict] = {t["id"]: t.pop("unconfirmed") for t in state["task_stack"]
                                      if isinstance(t.get("unconfirmed"), dict)}
        self.checked: set[str] = set()  # tasks whose held values the user answered this turn
        self.applied: list[str] = []  # what was done, for the timeline and logs (never parsed back)
        self.dropped: list[dict] = []
        self.notices: list[str] = []
        self.changed: dict[str, list[str]] = {}
        self.rolled_back: set[tuple[str, str]] = set()  # already told in a notice: not acknowledged again
        self.progress = False
        self.confirmed_id: str | None = None
        self.denied_id: str | None = None
        self.faq: str | None = None
        self.chitchat = False
        self.handoff: str | None = None
        self.top_before = current_task(state)["id"] if current_task(state) else None
        self.existing_ids = {t["id"] for t in state["task_stack"]}
        # Tasks whose confirmation question was the last thing the user saw.
        self.confirming_before = {t["id"] for t in state["task_stack"] if t.get("stage") == "CONFIRMING"}
        self.unapplied = False  # a change the model read into this message was refused as not said
        self.ended: dict[str, str] = {}

    # ------------------------------------------------------------ helpers

    def spec(self, task: dict) -> TaskSpec:
        return self.catalog.tasks[task["name"]]

    def drop(self, command: Any, reason: str) -> None:
        self.dropped.append({"command": _short(command), "reason": reason})

    def note(self, entry: str, *, progress: bool = True) -> None:
        """Log an applied command; ``progress``: it moved a task on (then chitchat does not take the turn)."""
        self.applied.append(entry)
        self.progress = self.progress or progress

    def _remove(self, task: dict, notice_key: str | None) -> None:
        """Take a task and, recursively, the tasks opened for it off the stack."""
        stack = self.state["task_stack"]
        if task not in stack:
            return
        stack.remove(task)
        self.ended[task["id"]] = notice_key or "removed"
        if notice_key:
            self.notices.append(msg(notice_key, self.lang, task=self.spec(task).display))
        for child in [t for t in stack if t.get("parent_id") == task["id"]]:
            self._remove(child, "cascade")

    def _new_task(self, spec: TaskSpec) -> TaskRecord:
        state = self.state
        parent = self._open_parent_named(spec)
        task = task_record(f"t{state['next_task_seq']}", spec.name, spec.display, opened_turn=state["turn"],
                           parent_id=parent["id"] if parent else None)
        state["next_task_seq"] += 1
        return task

    def _push(self, task: dict) -> None:
        """Put a task on top (the stack limit is enforced once the turn's execution is known)."""
        stack = self.state["task_stack"]
        if task in stack:
            stack.remove(task)
        stack.append(task)

    def _evict(self) -> list[str]:
        """Past max_stack, drop the oldest tasks that are neither the current one nor its ancestors."""
        stack = self.state["task_stack"]
        if len(stack) <= self.catalog.policy.max_stack:
            return []
        keep, parent = set(), stack[-1]["id"]
        while parent and parent not in keep:
            keep.add(parent)
            parent = next((t.get("parent_id") for t in stack if t["id"] == parent), None)
        before = len(self.notices)
        while len(stack) > self.catalog.policy.max_stack:
            victim = next((t for t in stack if t["id"] not in keep), None)
            if victim is None:
                break
            self._remove(victim, "evicted")
        return self.notices[before:]

    def _touch(self, task: dict, name: str, op: str) -> None:
        """Remember a slot's value and history before its first change this turn (for the one
        resolution per slot and turn, :meth:`_resolve_slots`)."""
        key = (task["id"], name)
        if key not in self.touched:
            self.touched[key] = (task["slots"].get(name, _UNSET), list(task["history"].get(name) or []), [])
        self.touched[key][2].append(op)

    def _set(self, task: dict, name: str, value: Any) -> bool:
        """Set (or with None delete) one slot, keeping the value it replaces; True if it changed.
        Sub-tasks watching the slot are cancelled once the turn's final value is known."""
        old = task["slots"].get(name)
        if value is None and name not in task["slots"]:
            return False
        if value is not None and name in task["slots"] and old == value:
            return False
        self._touch(task, name, "delete" if value is None else "set")
        history = task["history"].setdefault(name, [])
        history.append(old)
        bound_history(history)
        if value is None:
            del task["slots"][name]
        else:
            task["slots"][name] = value
            self.state["counters"]["failed_asks"].pop(f"{task['id']}.{name}", None)
        self.changed.setdefault(task["id"], []).append(name)
        return True

    def _resolve_slots(self) -> None:
        """One outcome per slot and turn: however many commands touched a slot ("clear, roll back,
        set, clear"), its final value is compared with the value before the turn. Unchanged: the
        history is as it was, and nothing is acknowledged or announced. Changed: one old value is
        kept (so a rollback next turn returns to the value before this turn), the notice says the
        final value, and the sub-tasks watching the slot are cancelled once.
        """
        for (task_id, name), (before, history, ops) in self.touched.items():
            task = find_task(self.state, task_id)
            if task is None:
                continue
            final = task["slots"].get(name, _UNSET)
            if final == before:
                task["history"][name] = history
                if not history:
                    task["history"].pop(name, None)
                self.changed[task_id] = [n for n in self.changed.get(task_id, []) if n != name]
                self.rolled_back.discard((task_id, name))
                continue
            if len(ops) > 1 and ops[-1] != "rollback":
                merged = history + [None if before is _UNSET else before]
                bound_history(merged)
                task["history"][name] = merged
            if ops[-1] == "rollback":
                display = self.spec(task).slots[name].display
                self.notices.append(msg("rolled_back_empty", self.lang, slot=display) if final is _UNSET else
                                    msg("rolled_back", self.lang, slot=display, value=show_value(final, self.lang)))
            else:
                self.rolled_back.discard((task_id, name))
            if before is not _UNSET and before is not None:
                self._cascade(task, name)
        self.touched.clear()

    def _cascade(self, task: dict, slot: str) -> None:
        """A changed or deleted value invalidates the sub-tasks opened for the old one (docs/design.md, "Cascades")."""
        for child in [t for t in self.state["task_stack"] if t.get("parent_id") == task["id"]]:
            watched = self.spec(child).depends_on_slots
            if not watched or slot in watched:
                self._remove(child, "cascade")

    def _target(self, task_name: str | None, slot: str) -> dict | None:
        """The open task a slot goes to: the named one, else the nearest from the top that has it.

        Without a task name, tasks open before this message come first: a task started in the same
        message got its own slots in its start_task ("订周六的，顺便查下北京天气": 周六 is the booking's).
        """
        stack = list(reversed(self.state["task_stack"]))
        if not task_name:
            stack.sort(key=lambda t: t["id"] not in self.existing_ids)
        for task in stack:
            if task_name and task["name"] != task_name:
                continue
            if task_name or slot in self.spec(task).slots:
                return task
        return None

    # ------------------------------------------------------------ sub-tasks (docs/design.md, "Sub-tasks")

    def _open_parent_named(self, spec: TaskSpec) -> TaskRecord | None:
        """The open task a new ``spec`` task is a sub-task of: the nearest one its ``depends_on`` names."""
        if not spec.depends_on:
            return None
        return next((t for t in reversed(self.state["task_stack"]) if t["name"] == spec.depends_on), None)

    def _open_parent(self, task: TaskRecord) -> TaskRecord | None:
        """The task's parent while that parent is still open (not yet executed, cancelled or evicted)."""
        parent_id = task.get("parent_id")
        return find_task(self.state, parent_id) if isinstance(parent_id, str) and parent_id != task["id"] else None

    def _link_parents(self) -> None:
        """Tasks started in one message ("办宽带，顺便租个路由器") find a parent started beside them."""
        for task in self.state["task_stack"]:
            if task["id"] not in self.existing_ids and task.get("parent_id") is None:
                parent = self._open_parent_named(self.spec(task))
                if parent is not None and parent is not task:
                    task["parent_id"] = parent["id"]

    def _settle_subtasks(self) -> None:
        """A sub-task never executes before its parent: once it could run, it waits for the parent.

        It waits when it is complete and needs no confirmation, or was confirmed this turn, or its
        parent asks for confirmation (the parent's confirmation lists it); a waiting one stays waiting
        unless a change makes it incomplete or needs a new confirmation. A waiting task sits right
        below its parent, so the parent comes (back) to the top and is asked next.
        """
        for task in list(self.state["task_stack"]):
            parent = self._open_parent(task)
            spec = self.spec(task)
            complete = not missing_slots(task, spec)
            changed = bool(self.changed.get(task["id"]))
            # A parent that asks for confirmation shows its waiting sub-tasks too: one yes covers both.
            ready = complete and (not spec.confirm or task["id"] == self.confirmed_id
                                  or (parent is not None and self.spec(parent).confirm)
                                  or (task["stage"] == "WAITING" and not changed))
            if parent is None or not ready:
                if task["stage"] == "WAITING":
                    task["stage"] = "COLLECTING"
                continue
            stack = self.state["task_stack"]
            if task["stage"] != "WAITING" or stack.index(task) > stack.index(parent):
                self.notices.append(msg("waiting", self.lang, task=spec.display, parent=self.spec(parent).display))
                stack.remove(task)
                stack.insert(stack.index(parent), task)
                task["stage"] = "WAITING"

    def _waiting_under(self, parent: TaskRecord) -> list[TaskRecord]:
        """The waiting sub-tasks of ``parent`` and theirs, parents first: they go with its execution."""
        found: list[TaskRecord] = []
        ids = {parent["id"]}
        for task in reversed(self.state["task_stack"]):
            if task["stage"] == "WAITING" and task.get("parent_id") in ids:
                found.append(task)
                ids.add(task["id"])
        return found

    # ------------------------------------------------------------ grounding (docs/grounding.md)

    def _ungrounded_drop(self, command: Any, reason: str) -> None:
        """A command the user's message does not support: dropped, with the reason, whatever the policy.
        A refused change (anything but a yes) also withdraws a pending confirmation (see _prompt)."""
        self.drop(command, f"not grounded: {reason}")
        if not (isinstance(command, dict) and command.get("type") == "confirm"):
            self.unapplied = True

    def _admit(self, task: dict, name: str, value: Any) -> tuple[Any, str]:
        """The part of a coerced value (None: a deletion) that the user's message supports, and why
        the rest is not: (value or _UNSET when nothing is admitted, reason)."""
        ev = self.evidence
        old = task["slots"].get(name)
        if ev is None or value == old:
            return value, ""
        task_spec = self.spec(task)
        spec = task_spec.slots[name]
        common = common_words(task_spec, name)
        if value is None:  # a deletion: the message must name the slot or the value it removes
            if slot_touched(spec, ev.message) or text_grounded(str(old), ev.message):
                return value, ""
            return _UNSET, f"{name}: the message does not mention this slot; its value stays"
        owner = _owner_elsewhere(task_spec, name, value)
        if owner:  # "城东" written into the date: it is the area's (an alias of 东区)
            return _UNSET, f"{name}: {_short(value)} is a value of {owner}"
        asked = self.asked == f"{task['id']}.{name}"
        # A change of a value, or a slot that held one before, must be touched by this message; a
        # slot filled for the first time may take a value the user gave in a recent turn.
        first_fill = old is None and not task["history"].get(name)
        items = value if isinstance(value, list) else [value]
        kept = [item for item in items
                if value_grounded(spec, item, ev, old=old, asked=asked, recent=False, common=common)
                or (value_grounded(spec, item, ev, old=old, recent=True, common=common)
                    and (first_fill or slot_touched(spec, ev.message)))]
        if not kept:
            return _UNSET, f"{name}: {_short(value)} is not in what the user said"
        if isinstance(value, list):
            rest = [item for item in items if item not in kept]
            return kept, f"{name}: {_short(rest)} is not in what the user said" if rest else ""
        return value, ""

    def _hold(self, task: dict, name: str, value: Any, command: dict, reason: str) -> None:
        """An unsupported value under the policy: dropped ("drop"), or held for the user to check
        ("ask": the next question shows it, and only a yes stores it)."""
        if self.catalog.policy.ungrounded == "ask":
            task.setdefault("unconfirmed", {})[name] = value
            self.drop(command, f"held for the user to check: {reason}")
            self.note(f"hold {task['id']}.{name}", progress=False)
        else:
            self._ungrounded_drop(command, reason)

    def _start_grounded(self, spec: TaskSpec, command: dict) -> tuple[bool, str]:
        """Whether the message asks for this start. A task that is open or just ran is started again
        only when the message names it or gives it a new value; a new task the message does not name
        is refused when most of its values were not said (a copied example, an invented errand)."""
        ev = self.evidence
        if ev is None or task_mentioned(spec, self.catalog, ev.message):
            return True, ""
        open_task = next((t for t in reversed(self.state["task_stack"]) if t["name"] == spec.name), None)
        ran = [d for d in self.state["done"] if d.get("task") == spec.name
               and self.state["turn"] - int(d.get("turn") or 0) <= RECENT_EXECUTION_TURNS]
        before = open_task["slots"] if open_task else (ran[-1].get("slots") or {}) if ran else {}
        given = grounded = 0
        for name, raw in (command.get("slots") or {}).items():
            slot = spec.slots.get(name)
            ok, value, _ = coerce_slot_value(slot, raw) if slot is not None and raw is not None else (False, None, "")
            if not ok or before.get(name) == value:
                continue
            given += 1
            if value_grounded(slot, value, ev, recent=False, asked=self.asked.endswith(f".{name}"),
                              common=common_words(spec, name)) \
                    and not _owner_elsewhere(spec, name, value):
                grounded += 1
        if open_task is not None or ran:
            why = "it is already open" if open_task is not None else "it has just run"
            return grounded > 0, f"start of {spec.name}: {why} and the message does not ask for it again"
        if command.get("slots") and not grounded:  # values for slots it does not even have count too
            return False, f"start of {spec.name}: none of its values is in the message, nor the task's name"
        if grounded * 2 < given:  # "home" -> "work" on a message that only says "Saturday"
            return False, f"start of {spec.name}: most of its values are not in the message, nor the task's name"
        return True, ""

    def _rollback_grounded(self, task: dict, slot: str, previous: Any) -> bool:
        """A rollback the message asks for: it names the slot or the value, or says "back" (还是原来…).
        Back to *empty* only undoes a value given last turn or this one: "人数还是按原来的吧" after
        a change that was never applied must not empty a value the user gave long ago."""
        ev = self.evidence
        if ev is None:
            return True
        spec = self.spec(task).slots[slot]
        if previous is None and not self._changed_lately(task, slot):
            return False
        return (slot_touched(spec, ev.message) or revert_said(ev)
                or (previous is not None and value_grounded(spec, previous, ev, recent=False,
                                                            common=common_words(self.spec(task), slot))))

    def _changed_lately(self, task: dict, slot: str) -> bool:
        """Whether the slot changed this turn or the turn before (the timeline's ``changed``)."""
        if (task["id"], slot) in self.touched:
            return True
        key = f"{task['id']}.{slot}"
        return any(entry.get("turn") == self.state["turn"] - 1 and key in (entry.get("changed") or [])
                   for entry in self.state["timeline"] if isinstance(entry, dict))

    def changed_keys(self) -> list[str]:
        """"task_id.slot" of every slot whose value this turn changed (the timeline keeps them)."""
        return [f"{task_id}.{name}" for task_id, names in self.changed.items() for name in dict.fromkeys(names)]

    # ------------------------------------------------------------ commands

    def reset(self, command: dict) -> None:
        if self.evidence is not None and not reset_grounded(self.evidence):
            self._ungrounded_drop(command, "the message does not ask to start over")
            return
        for task in list(self.state["task_stack"]):
            self.ended[task["id"]] = "reset"
        self.state["task_stack"] = []
        self.state["counters"] = new_counters()
        self.state["handoff"] = None
        self.held.clear()
        self.notices.append(msg("reset", self.lang))
        self.note("reset")

    def cancel_task(self, command: dict) -> None:
        stack = self.state["task_stack"]
        name = command.get("task")
        task = next((t for t in reversed(stack) if not name or t["name"] == name), None)
        if task is None:
            self.drop(command, f"no open task {name}" if name else "no open task to cancel")
            return
        if self.evidence is not None and not cancel_grounded(self.evidence, self.spec(task)):
            self._ungrounded_drop(command, "the message does not drop a task")
            return
        self._remove(task, "cancelled")
        self.note(f"cancel {task['id']}:{task['name']}")

    def start_task(self, command: dict) -> None:
        spec = self.catalog.tasks[command["task"]]
        grounded, reason = self._start_grounded(spec, command)
        if not grounded:
            self._ungrounded_drop(command, reason)
            return
        task = next((t for t in reversed(self.state["task_stack"]) if t["name"] == spec.name), None)
        if task is None:
            task = self._new_task(spec)
            self.note(f"start {task['id']}:{spec.name}")
        else:
            self.note(f"focus {task['id']}:{spec.name}")
        self._push(task)
        if command.get("slots"):
            self._apply_slots(command, task, command["slots"])

    def _apply_slots(self, command: dict, task: dict, slots: dict) -> None:
        spec = self.spec(task)
        slots = self._split_clock(task, slots)
        shared = self._shared_words(task, slots)
        for name, raw in slots.items():
            item = {"task": task["name"], "slot": name, "value": raw}
            if name not in spec.slots:
                self.drop(item, f"unknown slot {name!r} for task {task['name']}")
                continue
            if name in shared:
                self._ungrounded_drop(item, f"{name}: the same words were given to several slots")
                continue
            value, reason = None, ""
            if raw is not None:
                raw = _as_clock(spec.slots[name], raw)
                ok, value, reason = coerce_slot_value(spec.slots[name], raw)
                if not ok:
                    self.drop(item, f"{name}: {reason}")
                    continue
                if reason:  # a list slot kept its valid items
                    self.drop(item, f"{name}: partly kept; {reason}")
                if self.evidence is not None:
                    value = same_half_day(value, task["slots"].get(name), self.evidence.raw)
            admitted, why = self._admit(task, name, value)
            if admitted is _UNSET:
                self._hold(task, name, value, item, why)
                continue
            if why:  # a list slot kept the items the user said
                self._ungrounded_drop(item, why)
            if self._set(task, name, admitted):
                self.note(f"delete {task['id']}.{name}" if admitted is None else
                          f"set {task['id']}.{name}={_short(admitted)}")

    def _split_clock(self, task: dict, slots: dict) -> dict:
        """A clock time folded into another value ("周五晚上8点" given as the date) goes to the task's
        one time slot (a string slot whose pattern takes HH:MM) when the command does not fill that
        slot itself: one thing the user said, one slot. Grounding only (replays stay as stored)."""
        spec = self.spec(task)
        clocks = _time_slots(spec)
        if self.evidence is None or len(clocks) != 1 or clocks[0] in slots:
            return slots
        for name, raw in slots.items():
            slot = spec.slots.get(name)
            if slot is None or slot.type != "string" or slot.pattern or slot.enum or not isinstance(raw, str):
                continue
            rest, clock = split_clock(raw)
            if clock is not None:
                self.note(f"split {task['id']}.{name}", progress=False)
                return {**slots, name: rest, clocks[0]: clock}
        return slots

    def _shared_words(self, task: dict, slots: dict) -> set[str]:
        """Slots given the same text in one command ("我要报修，宽带特别慢" as both the address and the
        fault): one thing the user said fills one slot, so which one is unknown and none is filled,
        unless one of them was asked last turn (the answer goes there). Grounding only."""
        if self.evidence is None:
            return set()
        by_text: dict[str, list[str]] = {}
        for name, raw in slots.items():
            if isinstance(raw, str) and name in self.spec(task).slots and raw.strip():
                by_text.setdefault(raw.strip(), []).append(name)
        shared = {n for names in by_text.values() if len(names) > 1 for n in names}
        return {n for n in shared if self.asked != f"{task['id']}.{n}"}

    def set_slots(self, command: dict) -> None:
        name = command.get("task")
        if name and self._target(name, "") is None:  # slots for a task not open: a start, checked as one
            self.start_task({"type": "start_task", "task": name, "slots": dict(command["slots"])})
            return
        groups: dict[str, tuple[dict, dict]] = {}
        for slot, value in command["slots"].items():
            task = self._target(name, slot)
            if task is None:
                self.drop({"slot": slot, "value": value}, f"no open task has slot {slot!r}")
                continue
            groups.setdefault(task["id"], (task, {}))[1][slot] = value
        for task, slots in groups.values():
            self._apply_slots(command, task, slots)

    def rollback_slot(self, command: dict) -> None:
        slot = command["slot"]
        task = self._target(command.get("task"), slot)
        if task is None or slot not in self.spec(task).slots:
            self.drop(command, f"no open task has slot {slot!r}")
            return
        history = task["history"].get(slot) or []
        if not history:
            self.drop(command, f"{slot} has no earlier value")
            return
        if not self._rollback_grounded(task, slot, history[-1]):
            self._ungrounded_drop(command, f"{slot}: the message does not take this slot back")
            return
        self._touch(task, slot, "rollback")
        previous = history.pop()
        if previous is None:
            task["slots"].pop(slot, None)
        else:
            task["slots"][slot] = previous
        self.changed.setdefault(task["id"], []).append(slot)
        self.rolled_back.add((task["id"], slot))
        self.note(f"rollback {task['id']}.{slot}")

    def confirm(self, command: dict) -> None:
        task = current_task(self.state)
        if task is None:
            self.drop(command, "no open task to confirm")
            return
        if self.evidence is not None and not confirm_grounded(self.evidence):
            self._ungrounded_drop(command, "the message does not say yes")
            return
        if task["id"] in self.held:  # a yes to the values held for checking, not to running the task
            self._accept_held(task)
            return
        missing = missing_slots(task, self.spec(task))
        if missing:  # the guard: whatever the model says, nothing runs with a required slot empty
            self.drop(command, f"refused: required slot {missing[0]} is empty")
            self.notices.append(msg("guard", self.lang))
            return
        if task["stage"] != "CONFIRMING" or self.changed.get(task["id"]) \
                or any(self.changed.get(sub["id"]) for sub in self._waiting_under(task)):
            self.drop(command, "nothing has been shown for confirmation yet")
            return
        self.confirmed_id = task["id"]
        self.note(f"confirm {task['id']}")

    def deny(self, command: dict) -> None:
        task = current_task(self.state)
        if task is not None and task["id"] in self.held:  # no to the values held for checking
            self.held.pop(task["id"])
            self.checked.add(task["id"])
            self.note(f"deny held {task['id']}")
            return
        if task is None or task["stage"] != "CONFIRMING":
            self.drop(command, "nothing to deny")
            return
        task["stage"] = "COLLECTING"
        self.denied_id = task["id"]
        self.note(f"deny {task['id']}")

    def _accept_held(self, task: dict) -> None:
        """The user said yes to the values shown for checking: they are stored as if said."""
        self.checked.add(task["id"])
        slots = self.spec(task).slots
        for name, value in self.held.pop(task["id"]).items():
            if name not in slots:
                continue
            if value is not None:  # held in the state string, which anyone may edit: checked again
                ok, coerced, reason = coerce_slot_value(slots[name], value)
                if not ok or reason or coerced != value:
                    self.drop({"task": task["name"], "slot": name, "value": value}, f"{name}: held value is invalid")
                    continue
            if self._set(task, name, value):
                self.note(f"checked {task['id']}.{name}")

    def _expire_held(self) -> None:
        """Held values the user did not say yes to are forgotten (they were asked about once)."""
        for task_id, values in self.held.items():
            self.drop({"task_id": task_id, "slots": values}, "held values not confirmed by the user; dropped")
        self.held.clear()

    def apply(self, commands: list[dict]) -> None:
        """Apply commands in the fixed order; several starts keep the first-mentioned on top. The slot
        changes are resolved to one outcome per slot before confirm and deny are read."""
        ordered = sorted(enumerate(commands), key=lambda p: (_ORDER[p[1]["type"]], p[0]))
        starts = [c for _, c in ordered if c["type"] == "start_task"]
        rest_ok = len(commands) > sum(1 for c in commands if c["type"] == "cannot_handle")
        resolved = False
        for _, command in ordered:
            kind = command["type"]
            if not resolved and _ORDER[kind] > _ORDER["set_slots"]:
                self._resolve_slots()
                resolved = True
            if kind == "start_task":
                if command is starts[0]:
                    for start in reversed(starts):
                        self.start_task(start)
                    self._link_parents()
            elif kind in ("reset", "cancel_task", "set_slots", "rollback_slot", "confirm", "deny"):
                getattr(self, kind)(command)
            elif kind == "handoff":
                self.handoff = command.get("reason") or "user_request"
                self.note("handoff", progress=False)
            elif kind == "faq":
                self.faq = command.get("question") or ""
                self.note("faq", progress=False)
            elif kind == "chitchat":
                self.chitchat = True
                self.note("chitchat", progress=False)
            elif kind == "cannot_handle" and rest_ok:
                self.drop(command, "ignored: other commands were understood")
        if not resolved:
            self._resolve_slots()
        self._expire_held()

    # ------------------------------------------------------------ decision

    def _task_ref(self) -> TaskRef | None:
        top = current_task(self.state)
        return task_ref(top, self.spec(top).display) if top is not None else None

    def _resumed_ref(self, task: TaskRecord) -> dict[str, str]:
        return {"task_id": task["id"], "task": task["name"], "label": self.spec(task).display}

    def _base(self, action: str, **fields: Any) -> Decision:
        """This turn's decision as things stand: the task in focus, the notices and logs so far."""
        return new_decision(action, lang=self.lang, turn=self.state["turn"], task=self._task_ref(),
                            notices=list(self.notices), applied=list(self.applied), dropped=list(self.dropped),
                            ended=self._ended(), progress=self.progress, **fields)

    def _ended(self) -> list[dict[str, str]]:
        return [{"task_id": k, "reason": v} for k, v in self.ended.items()]

    def _values_text(self, task: dict, names: list[str] | None = None) -> str:
        return values_text(self.spec(task), task["slots"], self.lang, names)

    def _prompt(self, task: dict, resumed: bool) -> tuple[str, str | None, str]:
        """What the open task needs next: (action, slot, question) with action ask_slot|confirm|execute|handoff."""
        spec = self.spec(task)
        held = task.get("unconfirmed")
        if held:  # values the user did not say (policy "ask"): checked before anything else
            return "confirm", next(iter(held)), msg("check", self.lang, values=self._held_text(task, held))
        missing = missing_slots(task, spec)
        if missing:
            slot = missing[0]
            if self.state["counters"]["failed_asks"].get(f"{task['id']}.{slot}", 0) >= self.catalog.policy.max_attempts:
                return "handoff", slot, "max_attempts"
            task["stage"] = "COLLECTING"
            ack = ""
            changed = [n for n in self.changed.get(task["id"], [])
                       if n in task["slots"] and (task["id"], n) not in self.rolled_back]
            if changed:
                ack = msg("ack_values", self.lang, values=self._values_text(task, list(dict.fromkeys(changed))))
            return "ask_slot", slot, sentences(self.lang, ack, ask_text(spec, slot, self.lang))
        if task["id"] == self.denied_id and not self.changed.get(task["id"]):
            task["stage"] = "COLLECTING"
            names = msg("list_sep", self.lang).join(s.display for s in spec.slots.values())
            return "ask_slot", "", msg("deny", self.lang, slots=names)
        if self._withdraws_confirmation(task):
            task["stage"] = "COLLECTING"
            return "ask_slot", "", msg("unapplied", self.lang, task=spec.display, values=self._values_text(task) or "—")
        confirm_needed = spec.confirm or (resumed and spec.kind == "multi_turn")
        if task["id"] == self.confirmed_id or not confirm_needed:
            return "execute", None, ""
        task["stage"] = "CONFIRMING"
        values = self._values_text(task) + "".join(
            msg("confirm_with", self.lang, task=self.spec(sub).display, values=self._values_text(sub))
            for sub in self._waiting_under(task))
        if resumed and not spec.confirm:
            return "confirm", None, msg("confirm_resume", self.lang, task=spec.display, values=values)
        if not values:
            return "confirm", None, msg("confirm_none", self.lang, task=spec.display)
        return "confirm", None, msg("confirm", self.lang, task=spec.display, values=values)

    def _withdraws_confirmation(self, task: dict) -> bool:
        """The user answered a confirmation question with something the model read as a change that
        the message does not support ("Let's go with Bangkok Garden" read as a new route). Asking the
        same question again would let the next "yes" run the values the user was trying to change, so
        the question is withdrawn: the reply says nothing was changed and asks what to change; only a
        fresh confirmation question, answered yes, runs the task (docs/grounding.md)."""
        return (self.unapplied and task["id"] in self.confirming_before and not self.changed.get(task["id"])
                and self.faq is None and not self.progress)

    def _held_text(self, task: dict, held: dict) -> str:
        """Held values as the check question shows them: "安装地址：X", a deletion as "清空安装地址"."""
        slots = self.spec(task).slots
        parts = [msg("check_clear", self.lang, slot=slots[n].display) if v is None else
                 msg("kv", self.lang, slot=slots[n].display, value=show_value(v, self.lang))
                 for n, v in held.items() if n in slots]
        return msg("value_sep", self.lang).join(parts)

    def _handoff(self, reason: str) -> Decision:
        self.state["handoff"] = {"reason": reason, "turn": self.state["turn"]}
        self.state["counters"] = new_counters()
        return self._base("handoff", handoff={"reason": reason}, question=msg("handoff", self.lang))

    def _payload(self, task: TaskRecord) -> ExecutePayload:
        spec = self.spec(task)
        return {"task_id": task["id"], "task": task["name"], "label": spec.display,
                "slots": {n: task["slots"][n] for n in spec.slots if n in task["slots"]}, "subtasks": []}

    def _execute(self, task: TaskRecord) -> Decision:
        """Pop the finished task and the sub-tasks waiting for it, record them as one pending
        submission, and line up what comes next."""
        subtasks = self._waiting_under(task)
        payload = self._payload(task)
        payload["subtasks"] = [self._payload(sub) for sub in subtasks]
        for entry in [task] + subtasks:
            self.state["task_stack"].remove(entry)
            self.ended[entry["id"]] = "executed"
        self.state["done"].append({**payload, "status": "pending", "detail": "", "turn": self.state["turn"],
                                   "parent_id": task.get("parent_id")})
        del self.state["done"][:-MAX_DONE]
        decision = self._followup(self._base("execute"))
        decision["execute"] = payload
        return decision

    def _followup(self, decision: Decision) -> Decision:
        """After the top task ended, say which task comes next and what it needs (without executing it)."""
        top = current_task(self.state)
        if top is not None:
            action, slot, question = self._prompt(top, resumed=True)
            if action == "execute":  # a complete single-turn task waits for the user's go-ahead
                top["stage"] = "CONFIRMING"
                question = msg("confirm_resume", self.lang, task=self.spec(top).display,
                               values=self._values_text(top))
            elif action == "handoff":
                question = ask_text(self.spec(top), slot, self.lang)
            self._asking(top, slot if action == "ask_slot" else None)
            if top["id"] in self.existing_ids:
                decision["resumed"] = self._resumed_ref(top)
                question = msg("resume", self.lang, task=self.spec(top).display) + question
            decision["question"] = question
            decision["slot"] = slot
            decision["missing_slots"] = missing_slots(top, self.spec(top))
        decision["task"] = self._task_ref()
        return decision

    def _count_failed_ask(self) -> None:
        """The slot asked last turn is still empty and the user gave nothing for the task: one failed ask.

        A FAQ is an interruption, not a failure; an unreadable message counts as a parse failure instead.
        """
        counters = self.state["counters"]
        task_id, _, slot = (counters.get("asking") or "").partition(".")
        task = find_task(self.state, task_id) if task_id else None
        if task is None or not slot or self.faq is not None or self.changed.get(task_id) or slot in task["slots"]:
            return
        key = f"{task_id}.{slot}"
        counters["failed_asks"][key] = counters["failed_asks"].get(key, 0) + 1

    def _asking(self, task: dict, slot: str | None) -> None:
        """Remember which slot this turn asks, so that the next turn can tell whether the ask failed."""
        self.state["counters"]["asking"] = f"{task['id']}.{slot}" if slot else None

    def decide(self) -> Decision:
        """The decision of this turn, then the stack limit (a task that just ran takes no room).

        The turn's notices (cancelled, cascaded, waiting, evicted, rolled back ...) lead the question
        text, so a Dify answer node that shows only ``question`` still tells the user what happened.
        """
        self._settle_subtasks()
        decision = self._decide()
        self._evict()
        decision["notices"] = list(self.notices)
        decision["ended"] = self._ended()
        decision["question"] = sentences(self.lang, *self.notices, decision["question"])
        return decision

    def _decide(self) -> Decision:
        """The next action: handoff > execute > faq > ask/confirm > chitchat."""
        if self.handoff:
            return self._handoff(self.handoff)
        self._count_failed_ask()
        top = current_task(self.state)
        resumed = (top is not None and top["id"] in self.existing_ids and top["id"] != self.top_before
                   and self.top_before in self.ended)
        action, slot, question = ("chitchat", None, "") if top is None else self._prompt(top, resumed)
        if action == "handoff":
            return self._handoff(question)
        if action == "execute":
            if self.faq is not None:
                self.drop({"type": "faq", "question": self.faq}, "deferred: a task is executed this turn")
            return self._execute(top)
        if self.faq is not None or (self.chitchat and not self.progress):
            decision = self._base("faq" if self.faq is not None else "chitchat", question=question, slot=slot,
                                  faq={"question": self.faq} if self.faq is not None else None)
            return self._with_missing(decision, top)
        if top is None:
            return self._base("chitchat")
        self._asking(top, slot if action == "ask_slot" else None)
        if resumed:
            question = msg("resume", self.lang, task=self.spec(top).display) + question
        decision = self._base(action, slot=slot, question=question,
                              resumed=self._resumed_ref(top) if resumed else None)
        return self._with_missing(decision, top)

    def _with_missing(self, decision: Decision, top: dict | None) -> Decision:
        if top is not None:
            decision["missing_slots"] = missing_slots(top, self.spec(top))
            decision["task"] = self._task_ref()
        return decision

    def not_understood(self, error: str) -> Decision:
        """An unusable understanding changes nothing but a counter; enough in a row hand off."""
        counters = self.state["counters"]
        counters["parse_failures"] = counters.get("parse_failures", 0) + 1
        add_error(self.state, "understanding", error)
        if counters["parse_failures"] >= self.catalog.policy.max_parse_failures:
            return self._handoff("not_understood")
        top = current_task(self.state)
        return self._base("fallback", question=msg("fallback", self.lang),
                          missing_slots=missing_slots(top, self.spec(top)) if top is not None else [])


def _restore_subtasks(state: dict, entry: dict) -> None:
    """A failed submission puts its sub-tasks back, waiting right below their restored parent."""
    parent = find_task(state, str(entry.get("task_id")))
    for sub in entry.get("subtasks") or []:
        if not isinstance(sub, dict) or not isinstance(sub.get("task_id"), str) or find_task(state, sub["task_id"]):
            continue
        slots = sub.get("slots") if isinstance(sub.get("slots"), dict) else {}
        task = task_record(sub["task_id"], str(sub.get("task") or ""), str(sub.get("label") or sub.get("task") or ""),
                           opened_turn=state["turn"], stage="WAITING", slots=slots,
                           parent_id=parent["id"] if parent else None)
        stack = state["task_stack"]
        stack.insert(stack.index(parent) if parent in stack else len(stack), task)


def _reconcile(state: dict, catalog: Catalog) -> None:
    """Hold the loaded state to the current catalog: drop what it no longer knows (a task or slot
    removed since) and every value it does not accept, saying so in ``errors``.

    A state string comes back from a conversation variable that anyone may have edited; the catalog
    may have changed since it was written. Only values that pass the catalog now stay in ``slots`` (and
    can reach an execute payload) or in ``history`` (and can come back by a rollback). A value that the
    catalog still accepts in another form ("3" after a slot became an integer) is kept in that form.
    """
    kept = []
    for task in state["task_stack"]:
        spec = catalog.tasks.get(task["name"])
        if spec is None:
            add_error(state, "catalog", f"task {task['name']!r} ({task['id']}) is not in the catalog any more; dropped")
            continue
        for slot in list(task["slots"]):
            if slot not in spec.slots:
                add_error(state, "catalog", f"slot {slot!r} of {task['name']} is not in the catalog any more; dropped")
                del task["slots"][slot]
                continue
            value = task["slots"][slot]
            ok, coerced, reason = coerce_slot_value(spec.slots[slot], value)
            if ok and not reason and coerced == value:
                continue
            if ok and not reason:
                task["slots"][slot] = coerced
                add_error(state, "state", f"{task['id']}.{slot}: stored value converted to {_short(coerced)[:60]}")
            else:
                del task["slots"][slot]
                add_error(state, "state", f"{task['id']}.{slot}: stored value {_short(value)[:60]} is invalid "
                                          f"({reason[:100]}); dropped")
        invalid = 0
        for slot in list(task["history"]):
            values = task["history"][slot]
            if slot not in spec.slots:
                del task["history"][slot]
                continue
            good = [v for v in values if v is None or _machine_stored_ok(spec.slots[slot], v)]
            invalid += len(values) - len(good)
            task["history"][slot] = good
        if invalid:
            add_error(state, "state", f"{task['id']}: {invalid} invalid old value(s) dropped from the slot history")
        kept.append(task)
    state["task_stack"] = kept


def _machine_stored_ok(slot_spec: Any, value: Any) -> bool:
    ok, coerced, reason = coerce_slot_value(slot_spec, value)
    return ok and not reason and coerced == value


def _timeline(state: dict, parsed: dict, decision: dict, changed: list[str]) -> None:
    state["timeline"].append({
        "turn": state["turn"],
        "changed": [str(c)[:140] for c in changed[:_TIMELINE_ITEMS]],  # "task_id.slot" (grounding)
        "query": parsed["rewritten_query"][:120],
        "applied": [str(a)[:200] for a in decision["applied"][:_TIMELINE_ITEMS]],
        "dropped": [{"command": str(d.get("command"))[:200], "reason": str(d.get("reason"))[:200]}
                    for d in decision["dropped"][:_TIMELINE_ITEMS]],
        "action": decision["next_action"],
        "task": decision["task"]["id"] if decision["task"] else None,
    })
    del state["timeline"][:-MAX_TIMELINE]


def _machine_kept_turn(state_str: Any, catalog: Catalog, lang: str, key: str, code: str,
                       error: str) -> tuple[str, Decision]:
    """A turn that changes nothing: the incoming state (held to the catalog) with the error recorded,
    and a fallback decision whose question says why (``key`` in dskit.messages)."""
    old, errors = load_state(state_str)
    for problem in errors:
        add_error(old, "state", problem)
    try:
        _reconcile(old, catalog)
    except Exception:  # noqa: BLE001 - the state as loaded is still better than none
        pass
    add_error(old, code, error)
    top = current_task(old)
    return dump_state(old), new_decision("fallback", lang=lang, turn=old["turn"], question=msg(key, lang),
                                         task=task_ref(top), error=error)


def step(state_str: Any, understanding: Any, catalog: Any, *, lang: str | None = None, query: str | None = None,
         recent: Any = (), reference_date: Any = None) -> tuple[str, Decision]:
    """One turn: (new state string, decision). Raises CatalogError only for a broken catalog.

    ``query`` is the user's message this turn, ``recent`` their earlier messages (oldest first) and
    ``reference_date`` ("YYYY-MM-DD") the day relative dates count from: with them, only what the
    user said is applied (docs/grounding.md). ``query`` None turns grounding off — for replaying
    stored commands, whose messages are not at hand.

    The state written always loads back as written and fits Dify's limits (dskit.limits): when only
    dropping open tasks or their values could make it fit, the turn is refused instead and the
    incoming state kept, with the reason in ``error`` and in the state's ``errors``. Neither argument
    is modified.
    """
    cat = load_catalog(catalog)
    lang = norm_lang(lang or cat.language)
    try:
        state, errors = load_state(state_str)
        for error in errors:
            add_error(state, "state", error)
        _reconcile(state, cat)
        state["turn"] += 1
        parsed = parse_understanding(understanding, cat)
        turn = _MachineTurn(state, cat, lang, make_evidence(query, recent, reference_date))
        for item in parsed["dropped"]:
            turn.drop(item["command"], item["reason"])
        if parsed["usable"] and parsed["commands"] and all(c["type"] == "cannot_handle" for c in parsed["commands"]):
            parsed["usable"], parsed["error"] = False, "the model could not handle the message (cannot_handle)"
        if parsed["usable"]:
            state["counters"]["parse_failures"] = 0
            turn.apply(parsed["commands"])
            decision = turn.decide()
        else:
            decision = turn.not_understood(parsed["error"])
        decision["rewritten_query"] = parsed["rewritten_query"]
        _timeline(state, parsed, decision, turn.changed_keys() if parsed["usable"] else [])
        text = fit_state(state, evict=False)
        if text is None:
            return _machine_kept_turn(state_str, cat, lang, "state_full", "size",
                                      "this message was not applied: the dialogue state would exceed Dify's size "
                                      "limits even without its history, timeline and old values")
        return text, decision
    except Exception as exc:  # a bug must not cost the user the conversation: keep the old state
        return _machine_kept_turn(state_str, cat, lang, "fallback", "internal",
                                  f"{type(exc).__name__}: {_machine_error_text(exc)}")


def _machine_error_text(exc: BaseException) -> str:
    try:
        return scrub_surrogates(str(exc))[:MAX_ERROR_TEXT]
    except Exception:  # noqa: BLE001
        return ""


def record_result(state_str: Any, task_id: str, ok: bool, detail: str = "", *, lang: str = "zh") -> str:
    """Write a task API's outcome back into the state; a failed task returns to the top, awaiting a retry.

    Never raises: an unknown task id, or a state damaged in any way, is recorded in ``errors``.
    """
    state, errors = load_state(state_str)
    try:
        for error in errors:
            add_error(state, "state", error)
        task_id = task_id if isinstance(task_id, str) else _short(task_id)
        entry = next((d for d in reversed(state["done"]) if d["task_id"] == task_id), None)
        if entry is None:
            add_error(state, "result", f"no executed task {task_id[:64]!r} to record a result for")
            return dump_state(state)
        entry["status"] = "success" if ok else "failed"
        entry["detail"] = scrub_surrogates(_machine_text(detail))[:MAX_ERROR_TEXT]
        if not ok:
            add_error(state, "execute", f"{entry['task']} ({task_id}) failed: {entry['detail']}")
            if find_task(state, task_id) is None:
                state["task_stack"].append(task_record(
                    task_id, entry["task"], entry["label"], opened_turn=state["turn"],
                    stage="CONFIRMING", slots=entry["slots"], parent_id=entry["parent_id"]))
            _restore_subtasks(state, entry)
        return dump_state(state)
    except Exception as exc:  # noqa: BLE001 - the outcome is lost, the state is not
        old, _ = load_state(state_str)
        add_error(old, "internal", f"record_result: {type(exc).__name__}: {_machine_error_text(exc)}")
        return dump_state(old)


def _machine_text(value: Any) -> str:
    try:
        return value if isinstance(value, str) else str(value)
    except Exception:  # noqa: BLE001
        return ""


__all__ = ["step", "record_result", "execute_reply", "values_text", "MAX_TIMELINE"]
