"""Warnings about a valid catalog: what works, but makes a small model or an end user stumble.

``dskit validate`` prints them after the problems (a catalog with only warnings is valid). Each is
about how the catalog reads, not whether it loads:

- a description carrying **example values** ("如 周五、2026-01-28", "e.g. Paris"): the description goes
  into the understanding prompt, and a small model copies such values into commands for messages that
  never said them (docs/grounding.md);
- a slot with **no display name** (no label, no description): replies would show its raw name;
- a task that **acts without asking**: it changes something (not ``read_only``) yet says
  ``"confirm": false``, so a misunderstood message runs it at once.
"""

from __future__ import annotations

import re
from typing import Any

from .catalog import description_name

# An example in a description: "如 …", "例如…", "比如…", "e.g. …", "such as …", "for example …", a date
# written out, or a conversion shown with an arrow ("晚上8点 -> 20:00").
_EXAMPLE_RE = re.compile(r"(?:^|[\s，,。；;（(：:])(?:如|例如|比如|譬如|诸如)\s*[：:]?\s*\S"
                         r"|\be\.g\.|\bi\.e\.|\bsuch as\b|\bfor example\b|\bfor instance\b"
                         r"|\d{4}-\d{1,2}(?:-\d{1,2})?|->|→|=>", re.IGNORECASE)


def example_in(description: str) -> str:
    """The part of a description that looks like an example value ('' when none)."""
    text = description or ""
    match = _EXAMPLE_RE.search(text)
    if not match:
        return ""
    return text[match.start():match.start() + 30].strip(" ，,。；;（(：:")


def catalog_warnings(data: Any) -> list[str]:
    """Warnings for a catalog dict that :func:`dskit.catalog.catalog.validate_catalog` accepts, each with its
    JSON path; [] when there are none."""
    warnings: list[str] = []
    tasks = data.get("tasks") if isinstance(data, dict) else None
    for name, task in (tasks or {}).items():
        if not isinstance(task, dict):
            continue
        path = f"$.tasks.{name}"
        found = example_in(str(task.get("description") or ""))
        if found:
            warnings.append(f"{path}.description: holds an example value ({found!r}); a small model copies "
                            "examples into commands - describe the value instead")
        if task.get("confirm") is False and not task.get("read_only"):
            warnings.append(f"{path}.confirm: false for a task that is not read_only - it runs as soon as it "
                            "is complete, without the user seeing its values (set read_only for an enquiry)")
        for slot_name, slot in (task.get("slots") or {}).items():
            if not isinstance(slot, dict):
                continue
            where = f"{path}.slots.{slot_name}"
            found = example_in(str(slot.get("description") or ""))
            if found:
                warnings.append(f"{where}.description: holds an example value ({found!r}); a small model "
                                "copies examples into commands - describe the value instead")
            if not slot.get("label"):
                shown = "" if description_name(str(slot.get("description") or "")) else \
                    f"replies would show the raw name {slot_name!r}; "
                warnings.append(f"{where}: no label: {shown}a user can name this slot (to change, clear or take "
                                "back its value) only by its name and the content words of its description and "
                                "question, so give it the word users say")
    return warnings


__all__ = ["catalog_warnings", "example_in"]
