"""The standing adversarial suite for catalogs: whatever an app builder pastes into TASK_CATALOG,
validation lists problems (never raises), loading raises only CatalogError, and a catalog that loads
runs hostile turns within every invariant of the engine."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adversarial_kit import catalogs, check_decision, check_written_state, understandings
from dskit.catalog.catalog import CatalogError, load_catalog, validate_catalog
from dskit.turn.machine import step

SETTINGS = settings(max_examples=80, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.large_base_example])


@SETTINGS
@given(catalogs(), st.lists(understandings(), max_size=3))
def test_hostile_catalogs_are_refused_with_paths_or_run_soundly(catalog, turns):
    problems = validate_catalog(catalog)
    assert isinstance(problems, list) and all(isinstance(p, str) and p.startswith("$") for p in problems)
    for problem in problems:
        problem.encode("utf-8")
    try:
        loaded = load_catalog(catalog)
    except CatalogError as error:
        assert error.problems == problems
        return
    assert problems == []
    state_str = ""
    for understanding in turns:
        state_str, decision = step(state_str, understanding, loaded)
        check_decision(decision)
        check_written_state(state_str, loaded)
        assert not decision.get("error", "").startswith(("internal", "Type", "Key", "Attribute"))


def test_catalogs_that_are_not_json_data_are_catalog_errors():
    for catalog in ({"version": 1, "tasks": {"t": {"slots": {"s": {"enum": {1, 2}}}}}},
                    {"version": 1, "tasks": {"t": {"label": object()}}}, b"\xff\xfe", "{" * 100_000, 12):
        problems = validate_catalog(catalog)
        assert problems and problems[0].startswith("$")


def test_a_task_too_large_for_the_state_is_refused_with_its_path():
    slots = {f"notes{i}": {"type": "string", "max_length": 5000} for i in range(5)}
    problems = validate_catalog({"version": 1, "tasks": {"big": {"slots": slots}}})
    assert len(problems) == 1 and problems[0].startswith("$.tasks.big.slots: at their longest these slots hold")
    slots = {"tags": {"type": "string", "multiple": True, "max_length": 2000}}
    assert validate_catalog({"version": 1, "tasks": {"big": {"slots": slots}}})[0].startswith("$.tasks.big.slots")


def test_max_length_is_validated_and_documented_shape():
    def problems(slot):
        return validate_catalog({"version": 1, "tasks": {"t": {"slots": {"s": slot}}}})
    assert problems({"max_length": 0}) == ["$.tasks.t.slots.s.max_length: must be an integer from 1 to 5000"]
    assert problems({"max_length": True})[0].endswith("must be an integer from 1 to 5000")
    assert problems({"type": "integer", "max_length": 10}) == [
        "$.tasks.t.slots.s.max_length: only string slots have a max_length"]
    assert problems({"max_length": 3, "enum": ["abcd"]}) == [
        "$.tasks.t.slots.s.enum[0]: longer than max_length (3 characters)"]
    assert problems({"aliases": {"a": "b", "b": "c"}})[0].startswith("$.tasks.t.slots.s.aliases.a:")
    assert problems({"max_length": 5000}) == []
    assert json.loads(json.dumps(load_catalog({"version": 1, "tasks": {"t": {"slots": {"s": {}}}}}).tasks["t"]
                                 .slots["s"].max_length)) == 500
