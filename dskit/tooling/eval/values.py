"""Slot values in one comparable form, for scoring (:mod:`.metrics`) and attributing (:mod:`.causes`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dskit.catalog.catalog import Catalog, coerce_slot_value


def canon(catalog: Catalog, task: str, slot: str, value: Any) -> str | None:
    """A slot value in one comparable form: coerced by the catalog, lists of a multiple slot sorted.

    None stands for "empty". A value the catalog refuses keeps its raw JSON form (so it never equals a
    valid one by accident).
    """
    if value is None:
        return None
    spec = catalog.tasks[task].slots.get(slot) if task in catalog.tasks else None
    if spec is not None:
        ok, coerced, _ = coerce_slot_value(spec, value)
        if ok:
            value = coerced
    if isinstance(value, list):
        value = sorted(value, key=lambda v: json.dumps(v, ensure_ascii=False))
    if isinstance(value, str):
        value = value.strip()
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def canon_slots(catalog: Catalog, task: str, slots: Mapping[str, Any] | None) -> dict[str, str]:
    """Filled slots of one task in canonical form (empty values left out)."""
    out = {}
    for slot, value in (slots or {}).items():
        text = canon(catalog, task, slot, value)
        if text is not None:
            out[slot] = text
    return out
