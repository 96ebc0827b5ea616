"""The standing adversarial suite for the engine: hostile understandings, states and turns against
``step`` and ``record_result``, and each reproduction from issue 10 (items 3, 7 and 10) kept as a test.

The invariant (issue 10, item 3): whatever the input, the state ``step`` writes fits Dify 1.8's limits
(80,000 characters, 200 KiB as Dify measures a variable), is valid UTF-8, loads back with the same
slots, and holds only values the catalog accepts; the next turn keeps them all.
"""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adversarial_kit import (BIG_CATALOG, CATALOG, check_decision, check_written_state, explained, filled,
                             state_texts, understandings)
from conftest import load_example_catalog
from dskit.catalog.catalog import CatalogError, load_catalog
from dskit.base.limits import CODE_MAX_STRING_LENGTH, fits_dify_string, segment_size
from dskit.turn.machine import record_result, step
from dskit.turn.turn import short_text as _short
from dskit.state.state import dump_state, load_state

SETTINGS = settings(max_examples=60, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.large_base_example])
REFUSED = "this message was not applied"


def _run_turns(catalog: dict, turns: list, state_str: str = "") -> None:
    for understanding in turns:
        before_input = copy.deepcopy(understanding)
        before = filled(load_state(state_str)[0])
        new_str, decision = step(state_str, understanding, catalog)
        assert understanding == before_input or understanding != understanding  # NaN never equals itself
        check_decision(decision)
        state = check_written_state(new_str, catalog)
        if decision.get("error"):
            assert decision["error"].startswith(REFUSED), decision["error"]  # never an internal error
            assert filled(state) == before  # a refused turn keeps the state as it was
        after = filled(state)
        for (task_id, slot), value in before.items():
            if after.get((task_id, slot)) != value:
                assert explained(task_id, slot, decision), (task_id, slot, value, decision)
        again, _ = step(new_str, {"commands": []}, catalog)  # the next turn accepts every value kept
        assert filled(load_state(again)[0]) == after
        state_str = new_str


@SETTINGS
@given(st.lists(understandings(), min_size=1, max_size=6))
def test_hostile_understandings_keep_the_state_sound(turns):
    _run_turns(CATALOG, turns)


BIG_VALUES = st.builds(lambda c, n: c * n, st.sampled_from(["😀", "😀", "中", "x", '"']),
                       st.sampled_from([3999, 4000, 4001, 2500]) | st.integers(0, 4100))
BIG_TURNS = st.lists(st.builds(lambda t, v: {"type": "start_task", "task": t, "slots": v},
                               st.sampled_from(list(BIG_CATALOG["tasks"])),
                               st.dictionaries(st.sampled_from(["s0", "s1", "s2", "s3"]), BIG_VALUES,
                                               min_size=2, max_size=4)),
                     min_size=1, max_size=2).map(lambda c: {"commands": c})


@SETTINGS
@given(st.lists(BIG_TURNS, min_size=3, max_size=8))
def test_long_values_never_push_the_state_over_difys_limits(turns):
    """Tasks of up to 16,000 characters each, 4 bytes a character: trimming, then refusal, never a state Dify rejects."""
    _run_turns(BIG_CATALOG, turns)


def _base_states() -> list[str]:
    d = ""
    seen = []
    for understanding in (
            {"commands": [{"type": "start_task", "task": "book_restaurant",
                           "slots": {"date": "周五", "people": 3, "area": ["市中心"], "private_room": True}}]},
            {"commands": [{"type": "set_slots", "slots": {"date": "周六", "budget": "300"}}]},
            {"commands": [{"type": "start_task", "task": "weather", "slots": {"city": "北京"}}]},
            {"commands": [{"type": "start_task", "task": "plan_route", "slots": {"origin": "成都"}}]}):
        d, _ = step(d, understanding, CATALOG)
        seen.append(d)
    return seen


BASE_STATES = _base_states()


@SETTINGS
@given(state_texts(BASE_STATES), understandings())
def test_hostile_states_are_repaired_never_trusted(state_in, understanding):
    """A state edited by hand or by another tool: no exception, no invalid value kept, the caller's object untouched."""
    original = copy.deepcopy(state_in)
    new_str, decision = step(state_in, understanding, CATALOG)
    assert state_in == original or state_in != state_in
    check_decision(decision)
    check_written_state(new_str, CATALOG)
    assert not decision.get("error") or decision["error"].startswith(REFUSED)


@SETTINGS
@given(state_texts(BASE_STATES), st.one_of(st.text(max_size=8), st.none(), st.integers(), st.just("t1")),
       st.booleans(), st.text(max_size=400))
def test_record_result_never_raises(state_in, task_id, ok, detail):
    new_str = record_result(state_in, task_id, ok, detail)
    assert fits_dify_string(new_str)
    new_str.encode("utf-8")
    assert load_state(new_str)[1] == []


# ---------------------------------------------------------------- issue 10, item 3: the state's size


def test_four_40000_character_messages_leave_a_state_that_loads_back(restaurant):
    """Issue repro: four 40,000-character values made a 161,703-character state that the next turn refused."""
    state_str = ""
    for n in range(4):
        understanding = {"commands": [{"type": "start_task", "task": "book_restaurant",
                                       "slots": {"date": "周五", "cuisine": str(n) * 40_000, "budget": "汉" * 40_000}}]}
        state_str, decision = step(state_str, understanding, restaurant)
        check_written_state(state_str, restaurant)
        assert any("longer than the 500 this slot takes" in d["reason"] for d in decision["dropped"])
    assert load_state(state_str)[0]["task_stack"][0]["slots"] == {"date": "周五"}
    assert len(state_str) < 5_000


def test_slot_history_is_bounded_by_size_not_only_count():
    catalog = {"version": 1, "tasks": {"note": {"confirm": True, "slots": {"text": {"max_length": 5000}}}}}
    state_str = ""
    for n in range(12):
        state_str, _ = step(state_str, {"commands": [{"type": "start_task", "task": "note",
                                                      "slots": {"text": chr(0x4e00 + n) * 4000}}]}, catalog)
    history = load_state(state_str)[0]["task_stack"][0]["history"]["text"]
    assert history == [chr(0x4e00 + 10) * 4000]  # only the newest old value: it alone is over 2,000 characters
    state_str, decision = step(state_str, {"commands": [{"type": "rollback_slot", "slot": "text"}]}, catalog)
    assert load_state(state_str)[0]["task_stack"][0]["slots"]["text"] == chr(0x4e00 + 10) * 4000


def test_a_turn_that_cannot_fit_is_refused_and_the_state_kept():
    state_str = ""
    for k in range(3):
        state_str, _ = step(state_str, {"commands": [{"type": "start_task", "task": f"big{k}",
                                                      "slots": {f"s{j}": "😀" * 3990 for j in range(4)}}]}, BIG_CATALOG)
    before = load_state(state_str)[0]["task_stack"]
    new_str, decision = step(state_str, {"commands": [{"type": "start_task", "task": "big3",
                                                       "slots": {"s0": "😀" * 3990, "s1": "😀" * 3990}}]}, BIG_CATALOG)
    assert decision["next_action"] == "fallback" and decision["error"].startswith(REFUSED)
    assert decision["execute"] is None
    assert "需要记住的内容太多" in decision["question"]
    state = check_written_state(new_str, BIG_CATALOG)
    assert [t["slots"] for t in state["task_stack"]] == [t["slots"] for t in before]
    assert state["errors"][-1]["code"] == "size"
    assert segment_size(new_str) > 150_000  # the limit really was near: 4 bytes a character


def test_trimming_drops_timeline_errors_and_history_before_anything_else():
    catalog = {"version": 1, "tasks": {f"big{k}": {"confirm": True, "slots": {f"s{j}": {"max_length": 4000}
                                                                              for j in range(4)}}
                                       for k in range(3)}}
    state_str = ""
    for k in (0, 1, 2):
        for round_ in range(2):
            state_str, decision = step(state_str, {"commands": [{"type": "start_task", "task": f"big{k}", "slots": {
                f"s{j}": chr(0x1f600 + round_) * 3000 for j in range(4)}}]}, catalog)
            assert not decision.get("error")
    state = check_written_state(state_str, catalog)
    assert len(state["task_stack"]) == 3 and all(len(t["slots"]) == 4 for t in state["task_stack"])
    size_notes = [e for e in state["errors"] if e["code"] == "size"]
    assert size_notes and "old slot values" in size_notes[-1]["message"]
    assert "LOST" not in json.dumps(state["errors"], ensure_ascii=False)


def test_an_oversized_incoming_state_is_trimmed_not_discarded(restaurant):
    """An engine of an earlier version wrote up to 150,000 characters; its slots are kept."""
    state_str, _ = step("", {"commands": [{"type": "start_task", "task": "book_restaurant",
                                           "slots": {"date": "周五"}}]}, restaurant)
    state = json.loads(state_str)
    state["task_stack"][0]["history"] = {"date": ["x" * 15_000] * 10}
    state["timeline"] = [{"turn": 1, "query": "q" * 120, "applied": ["a" * 150] * 12, "dropped": []}] * 5
    big = json.dumps(state, ensure_ascii=False)
    assert len(big) > 150_000
    new_str, decision = step(big, {"commands": []}, restaurant)
    assert check_written_state(new_str, restaurant)["task_stack"][0]["slots"] == {"date": "周五"}


# ---------------------------------------------------------------- issue 10, item 7: lone surrogates


@pytest.mark.parametrize("raw", [
    '{"rewritten_query": "订\\ud800餐", "commands": [{"type": "start_task", "task": "book_restaurant", '
    '"slots": {"date": "周\\udfff五", "restaurant": "\\ud83d\\ude00餐厅", "budget": "\\ud800"}}]}',
    {"rewritten_query": "订\ud800餐", "commands": [{"type": "start_task", "task": "book_restaurant",
                                                 "slots": {"date": "周\udfff五", "restaurant": "\ud83d\ude00餐厅",
                                                           "budget": "\ud800"}}]},
], ids=["escaped-in-text", "raw-in-object"])
def test_lone_surrogates_never_reach_the_state_payload_or_query(restaurant, raw):
    state_str, decision = step("", raw, restaurant)
    check_decision(decision)
    state = check_written_state(state_str, restaurant)
    assert decision["rewritten_query"] == "订\ufffd餐"
    slots = state["task_stack"][0]["slots"]
    assert slots["date"] == "周\ufffd五" and slots["restaurant"] == "😀餐厅"  # a pair is the character it encodes
    assert slots["budget"] == "\ufffd"
    state_str, decision = step(state_str, '{"commands": [{"type": "set_slots", "slots": {"time": "20:00", '
                                          '"people": 2}}]}', restaurant)
    assert decision["next_action"] == "confirm"  # a booking is confirmed before it runs
    json.dumps(decision["question"], ensure_ascii=False).encode("utf-8")
    state_str, decision = step(state_str, '{"commands": [{"type": "confirm"}]}', restaurant)
    assert decision["next_action"] == "execute"
    json.dumps(decision["execute"], ensure_ascii=False).encode("utf-8")


# ---------------------------------------------------------------- issue 10, item 10: corrupt states


def _state_with(restaurant, **slots) -> dict:
    state_str, _ = step("", {"commands": [{"type": "start_task", "task": "book_restaurant",
                                           "slots": {"date": "周五", "time": "20:00", "people": 3}}]}, restaurant)
    state = json.loads(state_str)
    state["task_stack"][0]["slots"].update(slots)
    return state


def test_invalid_optional_values_never_reach_the_execute_payload(restaurant):
    state = _state_with(restaurant, private_room="DROP TABLE", budget={"$gt": ""}, area=["市中心", {"$ne": 1}])
    new_str, decision = step(json.dumps(state, ensure_ascii=False), {"commands": [{"type": "set_slots", "slots": {
        "restaurant": "老广记"}}]}, restaurant)
    assert decision["next_action"] == "confirm" and "DROP TABLE" not in decision["question"]
    new_str, decision = step(new_str, {"commands": [{"type": "confirm"}]}, restaurant)
    assert decision["next_action"] == "execute"
    assert decision["execute"]["slots"] == {"date": "周五", "time": "20:00", "people": 3, "restaurant": "老广记"}
    messages = [e["message"] for e in json.loads(new_str)["errors"]]
    assert any("private_room" in m and "dropped" in m for m in messages)
    assert any("budget" in m and "dropped" in m for m in messages)


def test_a_value_the_catalog_accepts_in_another_form_is_converted(restaurant):
    state = _state_with(restaurant, people="4人")
    new_str, _ = step(state, {"commands": []}, restaurant)
    assert json.loads(new_str)["task_stack"][0]["slots"]["people"] == 4


def test_invalid_old_values_cannot_come_back_by_rollback(restaurant):
    state = _state_with(restaurant)
    state["task_stack"][0]["history"] = {"people": [None, "DROP TABLE"]}
    sealed = dump_state(state)  # as an engine wrote it before the catalog changed (an unsealed one has no history)
    new_str, decision = step(sealed, {"commands": [{"type": "rollback_slot", "slot": "people"}]}, restaurant)
    assert "people" not in json.loads(new_str)["task_stack"][0]["slots"]  # back to empty, not to "DROP TABLE"


def test_next_task_seq_colliding_with_an_open_task_moves_past_it(restaurant):
    state = _state_with(restaurant)
    state["next_task_seq"] = 1  # t1 is open
    new_str, decision = step(state, {"commands": [{"type": "start_task", "task": "book_restaurant"},
                                                  {"type": "start_task", "task": "weather", "slots": {}}]},
                             load_catalog({**CATALOG}))
    ids = [t["id"] for t in json.loads(new_str)["task_stack"]]
    assert len(ids) == len(set(ids)) and load_state(new_str)[1] == []


@pytest.mark.parametrize("parent", [[], {}, ["t1"], 3, {"id": "t1"}], ids=repr)
def test_a_non_hashable_parent_id_is_cleared(parent):
    state_str, _ = step("", {"commands": [{"type": "start_task", "task": "plan_route", "slots": {"origin": "成都"}},
                                          {"type": "start_task", "task": "buy_insurance"}]}, CATALOG)
    state = json.loads(state_str)
    for task in state["task_stack"]:
        task["parent_id"] = parent
    for _ in range(6):  # past max_stack: eviction walks the parent chain
        state_str, decision = step(state if isinstance(state, dict) else state_str, {"commands": [
            {"type": "start_task", "task": "weather"}, {"type": "start_task", "task": "book_restaurant"}]}, CATALOG)
        assert not decision.get("error")
        state = state_str


def test_junk_in_done_does_not_break_record_result(restaurant):
    state = _state_with(restaurant)
    state["done"] = ["junk", None, {"task_id": 5}]
    new_str = record_result(json.dumps(state), "t1", False, "HTTP 500")
    assert load_state(new_str)[1] == []
    assert any(e["code"] == "result" for e in json.loads(new_str)["errors"])


def test_step_does_not_modify_the_callers_objects(restaurant):
    state = _state_with(restaurant, private_room="DROP TABLE")
    understanding = {"commands": [{"type": "set_slots", "slots": {"restaurant": "老广记", "area": ["市区"]}}]}
    frozen_state, frozen_understanding = copy.deepcopy(state), copy.deepcopy(understanding)
    catalog = copy.deepcopy(restaurant)
    step(state, understanding, catalog)
    assert state == frozen_state and understanding == frozen_understanding and catalog == restaurant


def test_a_deeply_nested_catalog_is_a_catalog_error():
    for catalog in ("[" * 100_000 + "]" * 100_000, {"version": 1, "tasks": {"t": {"slots": {
            "s": {"enum": json.loads("[" * 900 + "]" * 900)}}}}}):
        with pytest.raises(CatalogError) as error:
            step("", {"commands": []}, catalog)
        assert error.value.problems


def test_short_survives_what_json_and_repr_cannot_print():
    nested: list = []
    for _ in range(100_000):
        nested = [nested]
    assert _short(nested).startswith("<list") or _short(nested).startswith("[")
    assert len(_short({"x": "y" * 1000})) <= 160
    _short("\ud800").encode("utf-8")


def test_every_load_repair_is_visible_in_the_state(restaurant):
    state = _state_with(restaurant)
    state["task_stack"].append({"id": "t1", "name": "book_restaurant", "slots": {}, "stage": "COLLECTING",
                                "history": {}})  # the same id twice
    state["task_stack"].append("not a task")
    new_str, _ = step(state, {"commands": []}, restaurant)
    messages = " ".join(e["message"] for e in json.loads(new_str)["errors"])
    assert "used twice" in messages and "not an object" in messages
    assert len(json.loads(new_str)["task_stack"]) == 1


def test_states_written_by_the_engine_are_never_over_the_code_node_limit():
    """Four open tasks whose values are changed again and again (old values pile up in the slot
    histories): every state written stays within the 80,000 characters a Dify 1.8.0 code node may
    return, and the run really reaches the limit (the engine trims, then refuses a turn)."""
    assert CODE_MAX_STRING_LENGTH == 80_000  # Dify 1.8.0, the minimum supported version
    state, longest = "", 0
    for round_ in range(6):
        for k in range(4):
            values = {f"s{j}": chr(ord("a") + (round_ + j) % 26) * 3990 for j in range(4)}
            state, _ = step(state, {"commands": [{"type": "start_task", "task": f"big{k}", "slots": values}]},
                                   BIG_CATALOG)
            assert len(state) <= CODE_MAX_STRING_LENGTH and fits_dify_string(state)
            longest = max(longest, len(state))
    assert longest > 0.9 * CODE_MAX_STRING_LENGTH, longest


def test_example_catalogs_still_load():
    for name in ("restaurant", "travel_assistant"):
        load_catalog(load_example_catalog(name))
