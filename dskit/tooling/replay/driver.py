"""Driving the real engine with per-turn state changes of a data set.

A data set's domains become tasks and its slots become ``string`` slots (none required); every task
is ``multi_turn`` with ``confirm: true``. Such a task is complete at once and waits in CONFIRMING;
since a replay never confirms, no task ever executes and leaves the stack, so the open tasks *are*
the tracked state. Each turn's changes go to :func:`dskit.turn.machine.step` as an understanding:
``start_task`` (with its slots) for a domain not open yet, ``set_slots`` otherwise, ``null`` to
delete. The state is then read back with :func:`dskit.state.state.load_state` and
:func:`dskit.state.state.filled_slots`.

Data-set names that the catalog does not allow (RiSAWOZ's ``制片国家/地区``) get an engine name with
the offending characters replaced; the mapping is kept both ways, so reports use the data set's names.
"""

from __future__ import annotations

import re
from collections import Counter

from dskit.catalog.catalog import NAME_RE, load_catalog
from dskit.turn.machine import step
from dskit.state.state import filled_slots, load_state

# domain -> slot -> value (only slots that are set)
State = dict[str, dict[str, str]]
# domain -> slot -> new value, None to delete
Changes = dict[str, dict[str, "str | None"]]

MAX_STACK = 12


def engine_name(name: str, taken: set[str]) -> str:
    """A catalog-valid name for ``name`` that is not in ``taken`` (the name itself when valid)."""
    base = name if NAME_RE.match(name) else (re.sub(r"[^\w\-]", "_", name)[:60] or "_")
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base[:58]}_{n}", n + 1
    return candidate


def build_catalog(schema: dict[str, list[str]]) -> tuple[dict, dict[str, str], dict[str, dict[str, str]]]:
    """The catalog dict for a data set's schema, with the data-set-to-engine name maps."""
    tasks: dict = {}
    task_names: dict[str, str] = {}
    slot_names: dict[str, dict[str, str]] = {}
    for domain, slots in schema.items():
        task = engine_name(domain, set(tasks))
        task_names[domain] = task
        names: dict[str, str] = {}
        for slot in slots:
            names[slot] = engine_name(slot, set(names.values()))
        slot_names[domain] = names
        tasks[task] = {"kind": "multi_turn", "confirm": True,
                       "slots": {names[s]: {"type": "string"} for s in slots}}
    catalog = {"version": 1, "language": "zh", "tasks": tasks, "policy": {"max_stack": MAX_STACK}}
    return catalog, task_names, slot_names


def is_blank(value: object) -> bool:
    """Empty values mean "not set" in the data sets (CrossWOZ writes them as "")."""
    return value is None or (isinstance(value, str) and not value.strip())


class EngineDriver:
    """One engine conversation at a time: apply changes, read the slots back, count anomalies.

    ``anomalies`` counts what should never happen in a replay (a command the engine dropped, an
    action other than ask/confirm/chitchat); ``examples`` keeps the first few of each for the report.
    """

    def __init__(self, schema: dict[str, list[str]]) -> None:
        catalog, self.task_names, self.slot_names = build_catalog(schema)
        self.catalog_data = catalog
        self.catalog = load_catalog(catalog)
        self.domain_of = {task: domain for domain, task in self.task_names.items()}
        self.slot_of = {self.task_names[d]: {e: s for s, e in names.items()}
                        for d, names in self.slot_names.items()}
        self.steps = 0
        self.anomalies: Counter = Counter()
        self.examples: dict[str, list[str]] = {}
        self.reset()

    def set_catalog(self, catalog: dict) -> None:
        """Use a described version of the same catalog (labels and descriptions for a model)."""
        self.catalog_data = catalog
        self.catalog = load_catalog(catalog)

    def reset(self) -> None:
        """Start a new conversation (an empty state string, as Dify gives on the first turn)."""
        self.state_str = ""
        self._open: set[str] = set()
        self._slots: State = {}

    def slots(self) -> State:
        """The slots the engine holds now, by data-set domain and slot names."""
        return {domain: dict(values) for domain, values in self._slots.items()}

    def open_domains(self) -> set[str]:
        return set(self._open)

    def commands(self, changes: Changes) -> list[dict]:
        """Engine commands for ``changes``: start a domain not yet open, set slots of an open one."""
        commands = []
        for domain, slots in changes.items():
            names = self.slot_names.get(domain)
            if names is None:
                self._note("unknown domain", f"{domain}: {slots}")
                continue
            values = {names.get(slot, slot): (None if is_blank(value) else value) for slot, value in slots.items()}
            task = self.task_names[domain]
            if domain in self._open:
                if values:
                    commands.append({"type": "set_slots", "task": task, "slots": values})
            else:
                filled = {slot: value for slot, value in values.items() if value is not None}
                if filled:  # deleting in a domain that is not open changes nothing
                    commands.append({"type": "start_task", "task": task, "slots": filled})
        return commands

    def apply(self, changes: Changes) -> dict:
        """One engine turn with these changes (an empty list of commands is a turn too)."""
        return self.apply_understanding({"rewritten_query": "", "commands": self.commands(changes)})

    def apply_understanding(self, understanding: dict, query: str | None = None, recent: list[str] | None = None,
                            offered: str = "") -> dict:
        """One engine turn with an understanding (from the changes, or from a model). ``query``,
        ``recent`` (the user's earlier messages) and ``offered`` (the assistant's last reply) ground a
        model's values, as in the Chatflow; gold changes are applied ungrounded (no message)."""
        self.state_str, decision = step(self.state_str, understanding, self.catalog, query=query,
                                        recent=recent or (), offered=offered)
        self.steps += 1
        for item in decision.get("dropped") or []:
            self._note("dropped command", f"{item.get('command')}: {item.get('reason')}")
        if decision.get("next_action") not in ("ask_slot", "confirm", "chitchat"):
            self._note(f"action {decision.get('next_action')}", str(decision.get("question", ""))[:120])
        self._read_back()
        return decision

    def _read_back(self) -> None:
        state, errors = load_state(self.state_str)
        for error in errors:
            self._note("state error", error)
        values = filled_slots(state)
        self._open = set()
        self._slots = {}
        for task in state["task_stack"]:
            domain = self.domain_of.get(task["name"], task["name"])
            self._open.add(domain)
            back = self.slot_of.get(task["name"], {})
            slots = {back.get(name, name): value for name, value in values[task["id"]].items()}
            if slots:
                self._slots.setdefault(domain, {}).update(slots)

    def _note(self, kind: str, example: str) -> None:
        self.anomalies[kind] += 1
        kept = self.examples.setdefault(kind, [])
        if len(kept) < 3:
            kept.append(example)


def diff(current: State, target: State) -> Changes:
    """The changes that turn ``current`` into ``target`` (``None`` deletes a slot)."""
    changes: Changes = {}
    for domain in list(current) + [d for d in target if d not in current]:
        now, then = current.get(domain, {}), target.get(domain, {})
        for slot in list(now) + [s for s in then if s not in now]:
            if now.get(slot) != then.get(slot):
                changes.setdefault(domain, {})[slot] = then.get(slot)
    return changes
