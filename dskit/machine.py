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
from typing import Any

from .catalog import Catalog, TaskSpec, coerce_slot_value, load_catalog
from .gaps import ask_text, missing_slots
from .messages import msg, norm_lang, show_value
from .state import (MAX_DONE, MAX_SLOT_HISTORY, MAX_TIMELINE, add_error, current_task, dump_state,
                    find_task, load_state, new_counters)
from .understanding import parse_understanding

_ORDER = {"reset": 0, "cancel_task": 1, "start_task": 2, "set_slots": 3, "rollback_slot": 3,
          "confirm": 4, "deny": 4, "handoff": 5, "faq": 6, "chitchat": 6, "cannot_handle": 7}
# A timeline entry keeps at most this many applied and dropped commands (the state stays small).
_TIMELINE_ITEMS = 12
# Applied-entry verbs that count as progress on a task (chitchat then no longer takes the turn).
_PROGRESS = {"start", "focus", "set", "delete", "rollback", "cancel", "confirm", "deny", "reset"}


def _short(command: Any) -> str:
    """A command as a short string for the timeline and the decision."""
    try:
        text = json.dumps(command, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        text = repr(command)
    return text[:160]


def values_text(spec: TaskSpec, slots: dict, lang: str, names: list[str] | None = None) -> str:
    """Slot values as an end user reads them, in catalog order: "日期：周五，人数：3"."""
    parts = [msg("kv", lang, slot=spec.slots[n].display if n in spec.slots else n, value=show_value(slots[n], lang))
             for n in (names if names is not None else list(spec.slots)) if n in slots]
    return msg("value_sep", lang).join(parts)


def execute_reply(catalog: Any, payload: dict, *, called: bool, ok: bool, detail: str = "",
                  lang: str | None = None) -> str:
    """What the user is told about an executed task: done, failed (never passed off as success), or,
    when no task API is configured, what would have been done."""
    cat = load_catalog(catalog)
    lang = norm_lang(lang or cat.language)
    spec = cat.tasks.get(payload.get("task")) or TaskSpec(name=str(payload.get("task") or ""))
    label = str(payload.get("label") or spec.display)
    if not called:
        slots = payload.get("slots") if isinstance(payload.get("slots"), dict) else {}
        return msg("exec_dry", lang, task=label, values=values_text(spec, slots, lang, list(slots)) or msg("none", lang))
    if ok:
        return msg("exec_ok", lang, task=label)
    return msg("exec_failed", lang, task=label, detail=(detail.strip() or msg("exec_unknown", lang))[:200])


class _MachineTurn:
    """Everything one turn changes and notices; the decision is read off it at the end."""

    def __init__(self, state: dict, catalog: Catalog, lang: str):
        self.state = state
        self.catalog = catalog
        self.lang = lang
        self.applied: list[str] = []
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
        self.ended: dict[str, str] = {}

    # ------------------------------------------------------------ helpers

    def spec(self, task: dict) -> TaskSpec:
        return self.catalog.tasks[task["name"]]

    def drop(self, command: Any, reason: str) -> None:
        self.dropped.append({"command": _short(command), "reason": reason})

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

    def _new_task(self, spec: TaskSpec) -> dict:
        state = self.state
        parent = None
        if spec.depends_on:
            parent = next((t for t in reversed(state["task_stack"]) if t["name"] == spec.depends_on), None)
        task = {"id": f"t{state['next_task_seq']}", "name": spec.name, "label": spec.display,
                "stage": "COLLECTING", "slots": {}, "history": {},
                "parent_id": parent["id"] if parent else None, "opened_turn": state["turn"]}
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

    def _set(self, task: dict, name: str, value: Any) -> bool:
        """Set (or with None delete) one slot, keeping the value it replaces; True if it changed."""
        old = task["slots"].get(name)
        if value is None and name not in task["slots"]:
            return False
        if value is not None and name in task["slots"] and old == value:
            return False
        history = task["history"].setdefault(name, [])
        history.append(old)
        del history[:-MAX_SLOT_HISTORY]
        if value is None:
            del task["slots"][name]
        else:
            task["slots"][name] = value
            self.state["counters"]["failed_asks"].pop(f"{task['id']}.{name}", None)
        self.changed.setdefault(task["id"], []).append(name)
        if old is not None:
            self._cascade(task, name)
        return True

    def _cascade(self, task: dict, slot: str) -> None:
        """A changed or deleted value invalidates the sub-tasks opened for the old one (seed 003 turn 5)."""
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

    # ------------------------------------------------------------ commands

    def reset(self, command: dict) -> None:
        for task in list(self.state["task_stack"]):
            self.ended[task["id"]] = "reset"
        self.state["task_stack"] = []
        self.state["counters"] = new_counters()
        self.state["handoff"] = None
        self.notices.append(msg("reset", self.lang))
        self.applied.append("reset")

    def cancel_task(self, command: dict) -> None:
        stack = self.state["task_stack"]
        name = command.get("task")
        task = next((t for t in reversed(stack) if not name or t["name"] == name), None)
        if task is None:
            self.drop(command, f"no open task {name}" if name else "no open task to cancel")
            return
        self._remove(task, "cancelled")
        self.applied.append(f"cancel {task['id']}:{task['name']}")

    def start_task(self, command: dict) -> None:
        spec = self.catalog.tasks[command["task"]]
        task = next((t for t in reversed(self.state["task_stack"]) if t["name"] == spec.name), None)
        if task is None:
            task = self._new_task(spec)
            self.applied.append(f"start {task['id']}:{spec.name}")
        else:
            self.applied.append(f"focus {task['id']}:{spec.name}")
        self._push(task)
        if command.get("slots"):
            self._apply_slots(command, task, command["slots"])

    def _apply_slots(self, command: dict, task: dict, slots: dict) -> None:
        spec = self.spec(task)
        for name, raw in slots.items():
            if name not in spec.slots:
                self.drop({"task": task["name"], "slot": name, "value": raw}, f"unknown slot {name!r} for task {task['name']}")
                continue
            if raw is None:
                if self._set(task, name, None):
                    self.applied.append(f"delete {task['id']}.{name}")
                continue
            ok, value, reason = coerce_slot_value(spec.slots[name], raw)
            if not ok:
                self.drop({"task": task["name"], "slot": name, "value": raw}, f"{name}: {reason}")
                continue
            if reason:  # a list slot kept its valid items
                self.drop({"task": task["name"], "slot": name, "value": raw}, f"{name}: partly kept; {reason}")
            if self._set(task, name, value):
                self.applied.append(f"set {task['id']}.{name}={_short(value)}")

    def set_slots(self, command: dict) -> None:
        name = command.get("task")
        if name and self._target(name, "") is None:
            self.start_task({"type": "start_task", "task": name, "slots": {}})
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
        previous = history.pop()
        old = task["slots"].get(slot)
        if previous is None:
            task["slots"].pop(slot, None)
            self.notices.append(msg("rolled_back_empty", self.lang, slot=self.spec(task).slots[slot].display))
        else:
            task["slots"][slot] = previous
            self.notices.append(msg("rolled_back", self.lang, slot=self.spec(task).slots[slot].display,
                                    value=show_value(previous, self.lang)))
        self.changed.setdefault(task["id"], []).append(slot)
        self.rolled_back.add((task["id"], slot))
        if old is not None:
            self._cascade(task, slot)
        self.applied.append(f"rollback {task['id']}.{slot}")

    def confirm(self, command: dict) -> None:
        task = current_task(self.state)
        if task is None:
            self.drop(command, "no open task to confirm")
            return
        missing = missing_slots(task, self.spec(task))
        if missing:  # the guard: whatever the model says, nothing runs with a required slot empty
            self.drop(command, f"refused: required slot {missing[0]} is empty")
            self.notices.append(msg("guard", self.lang))
            return
        if task["stage"] != "CONFIRMING" or self.changed.get(task["id"]):
            self.drop(command, "nothing has been shown for confirmation yet")
            return
        self.confirmed_id = task["id"]
        self.applied.append(f"confirm {task['id']}")

    def deny(self, command: dict) -> None:
        task = current_task(self.state)
        if task is None or task["stage"] != "CONFIRMING":
            self.drop(command, "nothing to deny")
            return
        task["stage"] = "COLLECTING"
        self.denied_id = task["id"]
        self.applied.append(f"deny {task['id']}")

    def apply(self, commands: list[dict]) -> None:
        """Apply commands in the fixed order; several starts keep the first-mentioned on top."""
        ordered = sorted(enumerate(commands), key=lambda p: (_ORDER[p[1]["type"]], p[0]))
        starts = [c for _, c in ordered if c["type"] == "start_task"]
        rest_ok = len(commands) > sum(1 for c in commands if c["type"] == "cannot_handle")
        for _, command in ordered:
            kind = command["type"]
            if kind == "start_task":
                if command is starts[0]:
                    for start in reversed(starts):
                        self.start_task(start)
            elif kind in ("reset", "cancel_task", "set_slots", "rollback_slot", "confirm", "deny"):
                getattr(self, kind)(command)
            elif kind == "handoff":
                self.handoff = command.get("reason") or "user_request"
                self.applied.append("handoff")
            elif kind == "faq":
                self.faq = command.get("question") or ""
                self.applied.append("faq")
            elif kind == "chitchat":
                self.chitchat = True
                self.applied.append("chitchat")
            elif kind == "cannot_handle" and rest_ok:
                self.drop(command, "ignored: other commands were understood")
        self.progress = any(a.split(" ", 1)[0] in _PROGRESS for a in self.applied)

    # ------------------------------------------------------------ decision

    def _base(self, action: str) -> dict:
        top = current_task(self.state)
        return {
            "next_action": action,
            "task": None if top is None else {"id": top["id"], "name": top["name"],
                                              "label": self.spec(top).display, "stage": top["stage"]},
            "slot": None, "question": "", "execute": None, "faq": None, "handoff": None,
            "resumed": None, "notices": list(self.notices), "missing_slots": [],
            "rewritten_query": "", "applied": list(self.applied), "dropped": list(self.dropped),
            "ended": [{"task_id": k, "reason": v} for k, v in self.ended.items()],
            "lang": self.lang, "turn": self.state["turn"],
        }

    def _values_text(self, task: dict, names: list[str] | None = None) -> str:
        return values_text(self.spec(task), task["slots"], self.lang, names)

    def _prompt(self, task: dict, resumed: bool) -> tuple[str, str | None, str]:
        """What the open task needs next: (action, slot, question) with action ask_slot|confirm|execute|handoff."""
        spec = self.spec(task)
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
            return "ask_slot", slot, ack + ask_text(spec, slot, self.lang)
        if task["id"] == self.denied_id and not self.changed.get(task["id"]):
            task["stage"] = "COLLECTING"
            names = msg("list_sep", self.lang).join(s.display for s in spec.slots.values())
            return "ask_slot", "", msg("deny", self.lang, slots=names)
        confirm_needed = spec.confirm or (resumed and spec.kind == "multi_turn")
        if task["id"] == self.confirmed_id or not confirm_needed:
            return "execute", None, ""
        task["stage"] = "CONFIRMING"
        values = self._values_text(task)
        if resumed and not spec.confirm:
            return "confirm", None, msg("confirm_resume", self.lang, task=spec.display, values=values)
        if not values:
            return "confirm", None, msg("confirm_none", self.lang, task=spec.display)
        return "confirm", None, msg("confirm", self.lang, task=spec.display, values=values)

    def _handoff(self, reason: str) -> dict:
        self.state["handoff"] = {"reason": reason, "turn": self.state["turn"]}
        self.state["counters"] = new_counters()
        decision = self._base("handoff")
        decision["handoff"] = {"reason": reason}
        decision["question"] = msg("handoff", self.lang)
        return decision

    def _execute(self, task: dict) -> dict:
        """Pop the finished task, record it as pending, and line up what comes next."""
        spec = self.spec(task)
        payload = {"task_id": task["id"], "task": task["name"], "label": spec.display,
                   "slots": {n: task["slots"][n] for n in spec.slots if n in task["slots"]}}
        self.state["task_stack"].remove(task)
        self.ended[task["id"]] = "executed"
        self.state["done"].append({**payload, "status": "pending", "detail": "", "turn": self.state["turn"],
                                   "parent_id": task.get("parent_id")})
        del self.state["done"][:-MAX_DONE]
        decision = self._followup(self._base("execute"))
        decision["execute"] = payload
        return decision

    def _followup(self, decision: dict) -> dict:
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
                decision["resumed"] = {"task_id": top["id"], "task": top["name"], "label": self.spec(top).display}
                question = msg("resume", self.lang, task=self.spec(top).display) + question
            decision["question"] = question
            decision["slot"] = slot
            decision["missing_slots"] = missing_slots(top, self.spec(top))
        decision["task"] = self._base("")["task"]
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

    def decide(self) -> dict:
        """The decision of this turn, then the stack limit (a task that just ran takes no room).

        The turn's notices (cancelled, cascaded, evicted, rolled back ...) lead the question text, so a
        Dify answer node that shows only ``question`` still tells the user what happened.
        """
        decision = self._decide()
        self._evict()
        decision["notices"] = list(self.notices)
        decision["ended"] = [{"task_id": k, "reason": v} for k, v in self.ended.items()]
        decision["question"] = "".join(self.notices) + decision["question"]
        return decision

    def _decide(self) -> dict:
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
            decision = self._base("faq" if self.faq is not None else "chitchat")
            if self.faq is not None:
                decision["faq"] = {"question": self.faq}
            decision["question"] = question
            decision["slot"] = slot
            return self._with_missing(decision, top)
        if top is None:
            return self._base("chitchat")
        self._asking(top, slot if action == "ask_slot" else None)
        decision = self._base(action)
        decision["slot"] = slot
        if resumed:
            question = msg("resume", self.lang, task=self.spec(top).display) + question
            decision["resumed"] = {"task_id": top["id"], "task": top["name"], "label": self.spec(top).display}
        decision["question"] = question
        return self._with_missing(decision, top)

    def _with_missing(self, decision: dict, top: dict | None) -> dict:
        if top is not None:
            decision["missing_slots"] = missing_slots(top, self.spec(top))
            decision["task"] = self._base("")["task"]
        return decision

    def not_understood(self, error: str) -> dict:
        """An unusable understanding changes nothing but a counter; enough in a row hand off."""
        counters = self.state["counters"]
        counters["parse_failures"] = counters.get("parse_failures", 0) + 1
        add_error(self.state, "understanding", error)
        if counters["parse_failures"] >= self.catalog.policy.max_parse_failures:
            return self._handoff("not_understood")
        decision = self._base("fallback")
        decision["question"] = msg("fallback", self.lang)
        top = current_task(self.state)
        if top is not None:
            decision["missing_slots"] = missing_slots(top, self.spec(top))
        return decision


def _reconcile(state: dict, catalog: Catalog) -> None:
    """Drop what the current catalog no longer knows (a task or slot removed since), saying so."""
    kept = []
    for task in state["task_stack"]:
        spec = catalog.tasks.get(task["name"])
        if spec is None:
            add_error(state, "catalog", f"task {task['name']!r} ({task['id']}) is not in the catalog any more; dropped")
            continue
        for slot in [s for s in task["slots"] if s not in spec.slots]:
            add_error(state, "catalog", f"slot {slot!r} of {task['name']} is not in the catalog any more; dropped")
            del task["slots"][slot]
        kept.append(task)
    state["task_stack"] = kept


def _timeline(state: dict, parsed: dict, decision: dict) -> None:
    state["timeline"].append({
        "turn": state["turn"],
        "query": parsed["rewritten_query"][:120],
        "applied": decision["applied"][:_TIMELINE_ITEMS],
        "dropped": decision["dropped"][:_TIMELINE_ITEMS],
        "action": decision["next_action"],
        "task": decision["task"]["id"] if decision["task"] else None,
    })
    del state["timeline"][:-MAX_TIMELINE]


def step(state_str: Any, understanding: Any, catalog: Any, *, lang: str | None = None) -> tuple[str, dict]:
    """One turn: (new state string, decision). Raises CatalogError only for a broken catalog."""
    cat = load_catalog(catalog)
    lang = norm_lang(lang or cat.language)
    state, errors = load_state(state_str)
    try:
        for error in errors:
            add_error(state, "state", error)
        _reconcile(state, cat)
        state["turn"] += 1
        parsed = parse_understanding(understanding, cat)
        turn = _MachineTurn(state, cat, lang)
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
        _timeline(state, parsed, decision)
        return dump_state(state), decision
    except Exception as exc:  # a bug must not cost the user the conversation: keep the old state
        old, _ = load_state(state_str)
        add_error(old, "internal", f"{type(exc).__name__}: {exc}")
        decision = {"next_action": "fallback", "task": None, "slot": None,
                    "question": msg("fallback", lang), "execute": None, "faq": None, "handoff": None,
                    "resumed": None, "notices": [], "missing_slots": [], "rewritten_query": "",
                    "applied": [], "dropped": [], "ended": [], "lang": lang, "turn": old["turn"],
                    "error": f"{type(exc).__name__}: {exc}"}
        return dump_state(old), decision


def record_result(state_str: Any, task_id: str, ok: bool, detail: str = "", *, lang: str = "zh") -> str:
    """Write a task API's outcome back into the state; a failed task returns to the top, awaiting a retry."""
    state, errors = load_state(state_str)
    for error in errors:
        add_error(state, "state", error)
    entry = next((d for d in reversed(state["done"]) if d.get("task_id") == task_id), None)
    if entry is None:
        add_error(state, "result", f"no executed task {task_id!r} to record a result for")
        return dump_state(state)
    entry["status"] = "success" if ok else "failed"
    entry["detail"] = str(detail)[:300]
    if not ok:
        add_error(state, "execute", f"{entry['task']} ({task_id}) failed: {entry['detail']}")
        if find_task(state, task_id) is None:
            state["task_stack"].append({
                "id": task_id, "name": entry["task"], "label": entry.get("label", entry["task"]),
                "stage": "CONFIRMING", "slots": dict(entry.get("slots") or {}), "history": {},
                "parent_id": entry.get("parent_id"), "opened_turn": state["turn"]})
    return dump_state(state)


__all__ = ["step", "record_result", "execute_reply", "values_text", "MAX_TIMELINE"]
