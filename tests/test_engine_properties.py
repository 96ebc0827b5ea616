"""Property tests: for any sequence of well- or ill-formed understandings the machine never raises,
its state round-trips through its string, and a filled slot disappears only through an explicit
delete, a cancel, a reset, a cascade, eviction or the task's execution (its values then travel in
the execute payload)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dskit.state.integrity import seal_problem
from dskit.turn.machine import step
from dskit.state.state import dump_state, load_state
from adversarial_kit import changed_slot, command_strategy
from conftest import load_example_catalog

CATALOG = load_example_catalog("travel_assistant")
CATALOG["tasks"].update(load_example_catalog("restaurant")["tasks"])
TASKS = list(CATALOG["tasks"])
SLOTS = sorted({s for t in CATALOG["tasks"].values() for s in t["slots"]} | {"bogus"})

values = st.one_of(st.none(), st.booleans(), st.integers(-5, 60), st.floats(allow_nan=True),
                   st.sampled_from(["周五", "20:00", "19:00", "市中心", "市区", "北区", "三", "是", "旅游险", ""]),
                   st.text(max_size=8), st.lists(st.sampled_from(["市中心", "东区", "火星"]), max_size=3))
task_names = st.one_of(st.sampled_from(TASKS), st.none(), st.sampled_from(["订餐", "unknown_task", ""]))
slot_maps = st.dictionaries(st.sampled_from(SLOTS), values, max_size=4)
commands = command_strategy(task_names, slot_maps, SLOTS, st.text(max_size=10),
                            st.dictionaries(st.text(max_size=5), values, max_size=3))
understandings = st.one_of(
    st.builds(lambda c: {"rewritten_query": "q", "commands": c}, st.lists(commands, max_size=4)),
    st.builds(lambda c: json.dumps({"commands": c}, ensure_ascii=False), st.lists(commands, max_size=3)),
    st.builds(lambda c, n: json.dumps({"commands": c}, ensure_ascii=False)[:n], st.lists(commands, max_size=3),
              st.integers(0, 200)),
    st.text(max_size=40), st.none(), st.integers(), st.lists(commands, max_size=2),
)


def _filled(state: dict) -> dict[tuple[str, str], object]:
    return {(t["id"], s): v for t in state["task_stack"] for s, v in t["slots"].items()}


def _explained(task_id: str, slot: str, value: object, decision: dict) -> bool:
    """Why a filled slot may be gone or changed this turn."""
    if any(e["task_id"] == task_id for e in decision["ended"]):
        executed = decision["execute"]
        if executed and executed["task_id"] == task_id:
            return executed["slots"].get(slot) == value or changed_slot(task_id, slot, decision)
        return True  # cancelled, cascaded, evicted or reset: the decision's `ended` says which
    return changed_slot(task_id, slot, decision)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(understandings, min_size=1, max_size=8))
def test_step_never_raises_round_trips_and_keeps_filled_slots(turns):
    state_str = ""
    for understanding in turns:
        before = _filled(load_state(state_str)[0])
        state_str, decision = step(state_str, understanding, CATALOG)
        assert "error" not in decision, decision.get("error")  # no internal error path taken
        state, errors = load_state(state_str)
        assert errors == []
        assert dump_state(json.loads(state_str)) == state_str  # the string is the state
        assert seal_problem(state) == ""  # it reads back as written: its seal holds, nothing is withdrawn
        assert decision["next_action"] in ("ask_slot", "confirm", "execute", "faq", "chitchat", "handoff", "fallback")
        after = _filled(state)
        for (task_id, slot), value in before.items():
            if after.get((task_id, slot)) != value:
                assert _explained(task_id, slot, value, decision), (task_id, slot, value, decision)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), understandings)
def test_any_incoming_state_string_is_survived(state_text, understanding):
    state_str, decision = step(state_text, understanding, CATALOG)
    assert load_state(state_str)[1] == []
    assert "error" not in decision


@settings(max_examples=100, deadline=None)
@given(st.lists(understandings, min_size=1, max_size=5))
def test_unusable_understanding_changes_no_task(turns):
    state_str, _ = step("", {"commands": [{"type": "start_task", "task": "book_restaurant",
                                            "slots": {"date": "周五", "people": 2}}]}, CATALOG)
    for understanding in turns:
        before = load_state(state_str)[0]["task_stack"]
        state_str, decision = step(state_str, understanding, CATALOG)
        if decision["next_action"] == "fallback":
            assert load_state(state_str)[0]["task_stack"] == before


def test_a_closed_tasks_counters_do_not_break_the_seal():
    """A sub-task asked about and then cancelled (a cascade) leaves a failed-ask counter behind; the
    written state must still read back as written, or the parent's pending confirmation is withdrawn
    and the user's yes refused ("nothing has been shown")."""
    state, _ = load_state("")
    state["task_stack"] = [{"id": "t1", "name": "plan_route", "stage": "CONFIRMING", "slots": {}}]
    state, _ = load_state(dump_state(state))
    state["counters"]["failed_asks"] = {"t2.high_risk_confirm": 1, "t1.date": 1}
    state["counters"]["asking"] = "t2.high_risk_confirm"
    text = dump_state(state)
    loaded, errors = load_state(text)
    assert errors == [] and seal_problem(loaded) == ""
    assert loaded["counters"]["failed_asks"] == {"t1.date": 1} and loaded["counters"]["asking"] is None
    assert loaded["task_stack"][0]["stage"] == "CONFIRMING"
