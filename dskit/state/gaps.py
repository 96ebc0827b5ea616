"""Slot gaps: which required slots a task still lacks, in the order the catalog asks them.

This is the guard (docs/design.md, "The guard"): a task is never executable while a required slot
is empty or holds a value the (possibly edited) catalog no longer accepts, whatever the LLM says.
"""

from __future__ import annotations

from typing import Any

from ..catalog.catalog import Catalog, TaskSpec, load_catalog, slot_is_valid
from ..base.messages import msg, norm_lang
from .state import current_task, load_state


def missing_slots(task: dict, spec: TaskSpec) -> list[str]:
    """Required slots of an open task that are empty or invalid, in ask order."""
    missing = []
    for name, slot in spec.slots.items():
        if not slot.required:
            continue
        if name not in task["slots"] or not slot_is_valid(slot, task["slots"][name]):
            missing.append(name)
    return missing


def ask_text(spec: TaskSpec, slot_name: str, lang: str = "zh") -> str:
    """The question for a slot: its ``ask`` verbatim, or a generic one built from its label."""
    slot = spec.slots[slot_name]
    return slot.ask or msg("ask_default", lang, slot=slot.display)


def find_gaps(state_str: Any, catalog: Any, task: str | None = None, *, lang: str | None = None) -> dict:
    """Missing slots of ``task`` (default: the current task): {task, missing, next_slot, question}.

    ``task`` names a task by name, label or id; the nearest open one wins. Raises CatalogError on a broken
    catalog, never on a broken state (a broken state simply has no open task).
    """
    cat: Catalog = load_catalog(catalog)
    lang = norm_lang(lang or cat.language)
    state, _errors = load_state(state_str)
    entry = current_task(state)
    if task:
        spec = cat.task(task)  # a name or a label
        names = {task, spec.name} if spec else {task}
        entry = next((t for t in reversed(state["task_stack"]) if t["name"] in names or t["id"] == task), None)
    result = {"task": None, "missing": [], "next_slot": None, "question": ""}
    if entry is None or entry["name"] not in cat.tasks:
        return result
    spec = cat.tasks[entry["name"]]
    missing = missing_slots(entry, spec)
    result["task"] = {"id": entry["id"], "name": entry["name"], "label": spec.display, "stage": entry["stage"]}
    result["missing"] = missing
    if missing:
        result["next_slot"] = missing[0]
        result["question"] = ask_text(spec, missing[0], lang)
    return result
