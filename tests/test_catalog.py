"""The task catalog: validation with JSON paths, the CLI, and value coercion one value at a time."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dskit.catalog.catalog import (CatalogError, SlotSpec, catalog_compact, coerce_slot_value, load_catalog,
                           parse_cn_number, validate_catalog)
from conftest import ROOT, load_example_catalog


@pytest.mark.parametrize("name", ["restaurant", "travel_assistant"])
def test_examples_are_valid(name):
    assert validate_catalog(load_example_catalog(name)) == []


def test_the_issue_example_is_valid():
    example = {"version": 1, "tasks": {"book_restaurant": {
        "label": "订餐", "description": "…", "kind": "multi_turn", "confirm": False, "depends_on": None,
        "slots": {"date": {"type": "string", "required": True, "ask": "请问您想订哪一天？"},
                  "people": {"type": "integer", "minimum": 1, "required": True, "ask": "请问几位用餐？"},
                  "area": {"type": "string", "enum": ["市中心", "东区", "西区"], "aliases": {"市区": "市中心"}, "multiple": True},
                  "private_room": {"type": "boolean"}}}},
        "policy": {"max_attempts": 3, "max_parse_failures": 3, "max_stack": 5}}
    catalog = load_catalog(json.dumps(example, ensure_ascii=False))
    assert list(catalog.tasks["book_restaurant"].slots) == ["date", "people", "area", "private_room"]


BROKEN = [
    ({"version": 2, "tasks": {"a": {}}}, "$.version: must be 1"),
    ({"version": 1, "tasks": {}}, "$.tasks: must be a non-empty object"),
    ({"version": 1, "tasks": {"a": {"kind": "forever"}}}, "$.tasks.a.kind: must be one of multi_turn, single_turn"),
    ({"version": 1, "tasks": {"a": {"depends_on": "b"}}}, "$.tasks.a.depends_on: 'b' is not a task in this catalog"),
    ({"version": 1, "tasks": {"a": {"depends_on": "b"}, "b": {"depends_on": "a"}}}, "$.tasks.a.depends_on: cycle a -> b -> a"),
    ({"version": 1, "tasks": {"a": {"slots": {"n": {"type": "int"}}}}}, "$.tasks.a.slots.n.type: must be one of string, integer, number, boolean"),
    ({"version": 1, "tasks": {"a": {"slots": {"n": {"requried": True}}}}}, "$.tasks.a.slots.n.requried: unknown field"),
    ({"version": 1, "tasks": {"a": {"slots": {"n": {"enum": ["x"], "aliases": {"y": "z"}}}}}}, "$.tasks.a.slots.n.aliases.y: 'z' is not in enum"),
    ({"version": 1, "tasks": {"a": {"slots": {"n": {"type": "integer", "minimum": 5, "maximum": 1}}}}}, "$.tasks.a.slots.n.minimum: greater than maximum"),
    ({"version": 1, "tasks": {"a": {"slots": {"n": {"pattern": "("}}}}}, "$.tasks.a.slots.n.pattern: not a valid regular expression"),
    ({"version": 1, "tasks": {"a": {}}, "policy": {"max_stack": 0}}, "$.policy.max_stack: must be an integer from 1 to 1000"),
    ({"version": 1, "tasks": {"a b": {}}}, "$.tasks.a b: task name must be"),
]


@pytest.mark.parametrize("catalog,problem", BROKEN)
def test_each_problem_is_reported_with_its_path(catalog, problem):
    problems = validate_catalog(catalog)
    assert any(p.startswith(problem) for p in problems), problems
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog)
    assert err.value.problems == problems  # the engine refuses with the same messages


def test_every_problem_at_once():
    catalog = {"version": 1, "tasks": {"a": {"kind": "x", "slots": {"n": {"type": "y"}, "m": {"required": "yes"}}}}}
    assert len(validate_catalog(catalog)) == 3


def test_not_json():
    assert validate_catalog("{oops")[0].startswith("$: not valid JSON")


def test_cli_validate_exit_codes(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"version": 1, "tasks": {"a": {"kind": "x"}}}))
    good = ROOT / "examples" / "catalogs" / "restaurant.json"
    run = lambda *a: subprocess.run([sys.executable, "-m", "dskit", "validate", *a], capture_output=True, text=True, cwd=ROOT)
    ok = run(str(good))
    assert ok.returncode == 0 and "ok" in ok.stdout
    res = run(str(bad))
    assert res.returncode == 1 and "$.tasks.a.kind: must be one of" in res.stdout


COERCE = [
    (SlotSpec("people", "integer", minimum=1), "3人", (True, 3)),
    (SlotSpec("people", "integer", minimum=1), "两位", (True, 2)),
    (SlotSpec("people", "integer", minimum=1), "十二", (True, 12)),
    (SlotSpec("people", "integer", minimum=1), 2.0, (True, 2)),
    (SlotSpec("people", "integer", minimum=1), 2.5, (False, None)),
    (SlotSpec("people", "integer", minimum=1), 0, (False, None)),
    (SlotSpec("people", "integer"), True, (False, None)),
    (SlotSpec("price", "number"), "12.5", (True, 12.5)),
    (SlotSpec("room", "boolean"), "是", (True, True)),
    (SlotSpec("room", "boolean"), "不需要", (True, False)),
    (SlotSpec("room", "boolean"), "也许", (False, None)),
    (SlotSpec("area", enum=("市中心", "东区"), aliases={"市区": "市中心"}), "市区", (True, "市中心")),
    (SlotSpec("area", enum=("市中心", "东区")), "北区", (False, None)),
    (SlotSpec("area", enum=("市中心", "东区"), multiple=True), ["东区", "北区", "东区"], (True, ["东区"])),
    (SlotSpec("area", enum=("市中心", "东区"), multiple=True), "东区", (True, ["东区"])),
    (SlotSpec("time", pattern=r"\d\d:\d\d"), "20:00", (True, "20:00")),
    (SlotSpec("time", pattern=r"\d\d:\d\d"), "8点", (False, None)),
    (SlotSpec("name"), "  ", (False, None)),
    (SlotSpec("name"), {"x": 1}, (False, None)),
    (SlotSpec("name"), 42, (True, "42")),
]


@pytest.mark.parametrize("spec,value,expected", COERCE)
def test_coercion_table(spec, value, expected):
    ok, coerced, reason = coerce_slot_value(spec, value)
    assert (ok, coerced) == expected
    assert ok or reason


@given(st.sampled_from([s for s, _, _ in COERCE]), st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=8))
def test_coercion_never_raises(spec, value):
    ok, coerced, reason = coerce_slot_value(spec, value)
    assert isinstance(ok, bool) and isinstance(reason, str)


def test_chinese_numerals():
    assert [parse_cn_number(t) for t in ("三", "十", "十二", "二十", "两百零五", "一万两千")] == [3, 10, 12, 20, 205, 12000]
    assert parse_cn_number("三个") is None


def test_compact_form_lists_tasks_and_constraints():
    text = catalog_compact(load_catalog(load_example_catalog("restaurant")))
    assert "book_restaurant (订餐)" in text and "area: string[]" in text and "one of 市中心|东区|西区" in text
