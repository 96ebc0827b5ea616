"""Shared helpers for the code-node tests (no tests here): catalogs, hostile inputs, output checks."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import strategies as st

from dskit.surfaces.node_io import NODE_MAX_STRING
from dskit.tooling.codegen.sandbox import SCIENTIFIC_NOTATION

ROOT = Path(__file__).resolve().parents[1]
TRAVEL = (ROOT / "examples" / "catalogs" / "travel_assistant.json").read_text(encoding="utf-8")
RESTAURANT = (ROOT / "examples" / "catalogs" / "restaurant.json").read_text(encoding="utf-8")
TRAVEL_DICT = json.loads(TRAVEL)

# Another tool's conversation state: valid JSON, the wrong shape.
FOREIGN_STATE = json.dumps({"global_intent_lock": "LOCKED", "current_task_id": "451425c2",
                            "task_stack": [{"task": "路径规划", "slots": {"from": "成都", "to": "拉萨"},
                                            "stage": "COLLECTING"}]}, ensure_ascii=False)
NASTY_TEXTS = [
    "", " ", "null", "[]", "{}", "0", "1e+5", "-1E-7", "NaN", "true",
    "\x00", "a\x00b", "🙂" * 50, "\ud83d", "汉" * 1000,
    '{"commands": [', '{"rewritten_query": "x", "commands": [{"type": "start_task", "task": "plan_route"',
    '{"commands": {"type": "faq"}}', '[{"type": "reset"}]', '{"format": "dskit.state", "version": 1}',
    FOREIGN_STATE, TRAVEL[:200], "```json\n{\"commands\": []}\n```", "<think>hm</think>{}",
    "x" * 1_000_000, "{" * 5000 + "}" * 5000, "[" * 100_000,
]


def json_values(depth: int = 2):
    """Arbitrary JSON values, shallow."""
    scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30)
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                        | st.dictionaries(st.text(max_size=10), inner, max_size=4), max_leaves=12)


def hostile_text():
    """A string input as a careless workflow might deliver it."""
    return st.one_of(
        st.text(max_size=200),
        st.sampled_from(NASTY_TEXTS),
        json_values().map(lambda v: json.dumps(v, ensure_ascii=False)),
        json_values().map(lambda v: json.dumps(v)[: max(0, len(json.dumps(v)) // 2)]),
        st.text(alphabet=st.characters(codec="utf-8"), max_size=80).map(lambda t: t * 3),
    )


def hostile_value():
    """Any input at all: strings mostly, but also None, numbers and objects (bound to non-string variables)."""
    return st.one_of(hostile_text(), hostile_text(), json_values())


def assert_outputs(outputs: dict, types: dict) -> None:
    """Exactly the declared outputs, of the declared types, within Dify's limits and never numeric-looking."""
    assert set(outputs) == set(types), (set(outputs) ^ set(types))
    for name, kind in types.items():
        value = outputs[name]
        if kind == "string":
            assert isinstance(value, str), (name, type(value))
            assert len(value) <= NODE_MAX_STRING, name
            assert not SCIENTIFIC_NOTATION.match(value), (name, value)
        elif kind == "number":
            assert isinstance(value, (int, float)) and not isinstance(value, bool), (name, value)
            assert -(2 ** 63) < value < 2 ** 63 and value == value, (name, value)
        elif kind == "boolean":
            assert isinstance(value, bool), (name, value)
        else:  # pragma: no cover - our nodes declare no other types
            raise AssertionError(f"unexpected output type {kind}")
