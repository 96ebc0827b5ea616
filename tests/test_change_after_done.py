"""A change said after a task was submitted (issue 39): "改成下午两点吧" once the booking ran.

The engine cannot change what a task API already did, and it never drops the change silently (the
small-talk model would then answer, perhaps "好的，已改为下午两点"). With no task open, a change of a
slot of the last submitted task gets one sentence naming that task, saying it cannot be changed here
and how to go on; nothing is written and nothing runs. Checked for every slot of every task of the
example catalogs, in both languages.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dskit.turn.machine import step

CATALOGS = Path(__file__).resolve().parents[1] / "examples" / "catalogs"


def _tasks() -> list[tuple[str, str, str]]:
    """(catalog file, task, slot) for every slot of every task that runs without sub-tasks."""
    out = []
    for path in sorted(CATALOGS.glob("*.json")):
        catalog = json.loads(path.read_text(encoding="utf-8"))
        for name, task in catalog["tasks"].items():
            if not task.get("depends_on"):
                out += [(path.name, name, slot) for slot in task.get("slots", {})]
    return out


def _executed(catalog: dict, task: str) -> str:
    """A state after ``task`` ran: started and confirmed with a model whose values the engine trusts."""
    state, decision = step("", {"commands": [{"type": "start_task", "task": task, "slots": {}}]}, catalog)
    for _ in range(12):
        if decision["next_action"] == "execute":
            return state
        slot = decision.get("slot")
        spec = catalog["tasks"][task]["slots"].get(slot) if slot else None
        if spec is not None:
            value = (spec.get("enum") or ["x"])[0] if spec.get("type", "string") == "string" else \
                {"integer": 2, "number": 2, "boolean": True, "array": ["x"]}.get(spec["type"], "x")
            command = {"type": "set_slots", "slots": {slot: value}}
        else:
            command = {"type": "confirm"}
        state, decision = step(state, {"commands": [command]}, catalog)
    pytest.skip(f"{task} did not run with simple values")


@pytest.mark.parametrize(("file", "task", "slot"), _tasks())
def test_a_change_after_the_task_ran_says_so_and_writes_nothing(file: str, task: str, slot: str) -> None:
    catalog = json.loads((CATALOGS / file).read_text(encoding="utf-8"))
    state = _executed(catalog, task)
    label = catalog["tasks"][task].get("label") or task
    after, decision = step(state, {"commands": [{"type": "set_slots", "slots": {slot: "x"}}]}, catalog)
    assert decision["next_action"] != "execute" and not decision["applied"]
    assert len(decision["notices"]) == 1 and label in decision["notices"][0], decision["notices"]
    assert decision["question"].startswith(decision["notices"][0])  # the engine's text is the reply
    assert json.loads(after)["task_stack"] == []


def test_with_a_task_open_the_change_goes_to_it_and_no_notice_is_given(restaurant: dict) -> None:
    state = _executed(restaurant, "book_restaurant")
    state, _ = step(state, {"commands": [{"type": "start_task", "task": "book_restaurant", "slots": {}}]},
                    restaurant)
    _, decision = step(state, {"commands": [{"type": "set_slots", "slots": {"people": 4}}]}, restaurant)
    assert decision["notices"] == [] and any("people=4" in line for line in decision["applied"])
