"""Hypothesis strategies and invariant checks for the adversarial suite (no tests here).

Hostile inputs come in four kinds, each built from what the issue-10 pass found: understanding JSON
as a model (or an attacker steering it) might write it, conversation states edited or corrupted by
hand, catalogs written carelessly, and strings in every code-node input. The checks say what must
hold whatever the input: nothing raises, what the engine writes fits Dify's limits and loads back
as written, no invalid value is kept, and no filled slot disappears unexplained.
"""

from __future__ import annotations

import copy
import dataclasses
import json

from hypothesis import strategies as st

from conftest import load_example_catalog
from dskit.catalog.catalog import load_catalog, slot_is_valid
from dskit.turn.commands import COMMAND_TYPES, REGISTRY
from dskit.base.limits import fits_dify_string
from dskit.state.state import load_state

CATALOG = load_example_catalog("travel_assistant")
CATALOG["tasks"].update(load_example_catalog("restaurant")["tasks"])
# Few tasks, long values, confirmation needed (tasks stay open): the state's size limits are reached
# within a few turns, and a 4-byte character makes the whole string 4 bytes a character.
BIG_CATALOG = {"version": 1, "tasks": {
    f"big{k}": {"confirm": True, "slots": {f"s{j}": {"type": "string", "max_length": 4000} for j in range(4)}}
    for k in range(4)}, "policy": {"max_stack": 4}}
TASKS = list(CATALOG["tasks"]) + list(BIG_CATALOG["tasks"])
SLOTS = sorted({s for t in CATALOG["tasks"].values() for s in t["slots"]} | {"s0", "s1", "s2", "s3", "bogus"})

# Characters that broke something once: lone surrogates, NUL and other controls, BOM, RTL mark,
# zero-width space, a 4-byte emoji, quotes and backslashes that JSON must escape.
NASTY_CHARS = "\ud800\udfff\x00\x01\x1f\x7f\ufeff\u200f\u200b\U0001f600\"\\\n\u3000中"


def nasty_text(max_size: int = 30):
    return st.text(alphabet=st.characters(codec=None) | st.sampled_from(NASTY_CHARS), max_size=max_size)


def long_text():
    """Up to 45,000 characters (issue 10, item 3 used four messages of 40,000), built fast."""
    return st.builds(lambda piece, n: (piece or "x") * n, nasty_text(4), st.integers(0, 45_000 // 4))


def deep(depth: int):
    value: object = "x"
    for _ in range(depth):
        value = [value]
    return value


def json_junk():
    """Any JSON-ish value: scalars at the edges, long and nasty text, nesting, and odd containers."""
    scalars = (st.none() | st.booleans() | st.integers() | st.integers(min_value=2 ** 63 - 2, max_value=2 ** 70)
               | st.floats(allow_nan=True, allow_infinity=True) | nasty_text() | long_text()
               | st.sampled_from(["DROP TABLE", "是", "三", "20:00", "市区", "1e+5", "", " ", "null"]))
    return st.one_of(
        st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(nasty_text(8), inner, max_size=4), max_leaves=10),
        st.sampled_from([{"$gt": ""}, deep(200), {"a": deep(50)}, ["x"] * 50]),
    )


def command_strategy(task_names, slot_maps, slots, questions, junk):
    """Commands of every registered kind (dskit.turn.commands.REGISTRY), plus ``junk`` objects: a command
    added to the engine without a generator here fails, so the hostile suites always cover every kind."""
    builders = {
        "start_task": st.builds(lambda t, s: {"type": "start_task", "task": t, "slots": s}, task_names, slot_maps),
        "set_slots": st.builds(lambda t, s: {"type": "set_slots", "task": t, "slots": s}, task_names, slot_maps),
        "rollback_slot": st.builds(lambda t, s: {"type": "rollback_slot", "task": t, "slot": s}, task_names,
                                   st.sampled_from(slots)),
        "cancel_task": st.builds(lambda t: {"type": "cancel_task", "task": t}, task_names),
        "confirm": st.builds(lambda t: {"type": "confirm", "task": t}, task_names),
        "faq": st.builds(lambda q: {"type": "faq", "question": q}, questions),
        "handoff": st.builds(lambda q: {"type": "handoff", "reason": q}, questions),
    }
    # A command with no field but its source needs no builder; any other kind must have one here.
    bare = [k for k in COMMAND_TYPES if [f.name for f in dataclasses.fields(REGISTRY[k])] == ["source"]]
    missing = set(COMMAND_TYPES) - set(builders) - set(bare)
    assert not missing, f"commands with fields but no generator in tests/adversarial_kit.py: {sorted(missing)}"
    return st.one_of(*builders.values(), st.sampled_from([{"type": k} for k in bare]), junk)


values = st.one_of(json_junk(), st.sampled_from(["周五", "19:00", "市中心", "东区", "旅游险", 3, True]))
task_names = st.one_of(st.sampled_from(TASKS), st.none(), nasty_text(10), st.sampled_from(["订餐", ""]))
slot_maps = st.dictionaries(st.sampled_from(SLOTS) | nasty_text(6), values, max_size=4)
commands = command_strategy(task_names, slot_maps, SLOTS, nasty_text() | long_text(),
                            st.dictionaries(nasty_text(6), json_junk(), max_size=3))


def _as_text(data: dict, ascii_only: bool, cut: int | None, wrap: bool) -> str:
    text = json.dumps(data, ensure_ascii=ascii_only)  # ensure_ascii writes \ud800 escapes, as models do
    if cut is not None:
        text = text[:cut]
    return f"好的，结果如下：\n```json\n{text}\n```" if wrap else text


def understandings():
    """What the understanding LLM's output variable may hold: JSON text of any quality, or a decoded value."""
    bodies = st.builds(lambda c, q: {"rewritten_query": q, "commands": c},
                       st.lists(commands, max_size=4), nasty_text() | long_text())
    return st.one_of(
        bodies,
        st.builds(_as_text, bodies, st.booleans(), st.none() | st.integers(0, 400), st.booleans()),
        nasty_text(60), long_text(), json_junk(), st.lists(commands, max_size=3),
    )


# ---------------------------------------------------------------- hostile states

STATE_PATHS = [("next_task_seq",), ("turn",), ("counters",), ("counters", "failed_asks"), ("counters", "asking"),
               ("handoff",), ("done",), ("errors",), ("timeline",), ("task_stack",), ("task_stack", 0),
               ("task_stack", 0, "id"), ("task_stack", 0, "name"), ("task_stack", 0, "stage"),
               ("task_stack", 0, "parent_id"), ("task_stack", 0, "slots"), ("task_stack", 0, "history"),
               ("task_stack", 0, "slots", "date"), ("task_stack", 0, "slots", "private_room"),
               ("task_stack", 0, "slots", "budget"), ("task_stack", 0, "slots", "people"),
               ("task_stack", 0, "history", "date"), ("task_stack", -1, "slots", "area"), ("done", 0),
               ("task_stack", -1, "id"), ("version",), ("format",), ("extra",)]


def _put(state: dict, path: tuple, value: object) -> None:
    target = state
    for key in path[:-1]:
        try:
            target = target[key]
        except (KeyError, IndexError, TypeError):
            return
    try:
        target[path[-1]] = value
    except (IndexError, TypeError):
        pass


def corrupt(base: dict, edits: list) -> dict:
    state = copy.deepcopy(base)
    for path, value in edits:
        _put(state, path, copy.deepcopy(value))
    return state


state_edits = st.lists(st.tuples(st.sampled_from(STATE_PATHS),
                                 json_junk() | st.sampled_from(["t1", "t2", 1, 2, [], {}, ["junk"], "COLLECTING"])),
                       min_size=1, max_size=4)


def state_texts(base_states: list[str]):
    """A state string as a user, another tool or a truncation may leave it."""
    bases = st.sampled_from(base_states)
    return st.one_of(
        st.builds(lambda b, e: json.dumps(corrupt(json.loads(b), e), ensure_ascii=False), bases, state_edits),
        st.builds(lambda b, e: corrupt(json.loads(b), e), bases, state_edits),  # the plugin passes objects
        st.builds(lambda b, n: b[:n], bases, st.integers(0, 2000)),
        nasty_text(80), st.just("[" * 100_000), st.just("{" * 100_000),
    )


# ---------------------------------------------------------------- hostile catalogs

REGEX_PIECES = ["a", "b", "(", ")", "+", "*", "?", "|", "[a-z]", "\\s", "\\d", "\\w", ".", "{2,}", "{1,3}", "^", "$",
                "(?:", "++", "(?>", ","]
regexes = st.lists(st.sampled_from(REGEX_PIECES), max_size=10).map("".join)
CATALOG_PATHS = [("tasks", "book_restaurant", "slots", "time", "pattern"),
                 ("tasks", "book_restaurant", "slots", "cuisine", "max_length"),
                 ("tasks", "book_restaurant", "slots", "area", "enum"),
                 ("tasks", "book_restaurant", "slots", "area", "aliases"),
                 ("tasks", "book_restaurant", "slots", "people", "minimum"),
                 ("tasks", "book_restaurant", "slots", "people"), ("tasks", "book_restaurant", "slots"),
                 ("tasks", "book_restaurant", "label"), ("tasks", "book_restaurant", "depends_on"),
                 ("tasks", "book_restaurant"), ("tasks",), ("policy",), ("policy", "max_stack"), ("version",),
                 ("language",), ("tasks", "weather", "slots", "city", "type")]
catalog_edits = st.lists(st.tuples(st.sampled_from(CATALOG_PATHS),
                                   json_junk() | regexes | st.integers(-5, 10_000)), min_size=1, max_size=3)


SLOT = ("tasks", "book_restaurant", "slots")
# Edits of the right type with odd content: the catalog stays valid more often, and runs.
plausible_edits = st.lists(st.one_of(
    st.tuples(st.just(SLOT + ("time", "pattern")), regexes),
    st.tuples(st.just(SLOT + ("cuisine", "max_length")), st.integers(1, 5000)),
    st.tuples(st.just(SLOT + ("budget", "max_length")), st.integers(1, 40)),
    st.tuples(st.just(SLOT + ("cuisine", "enum")), st.lists(nasty_text(12), min_size=1, max_size=5)),
    st.tuples(st.just(SLOT + ("area", "multiple")), st.booleans()),
    st.tuples(st.just(("tasks", "book_restaurant", "label")), nasty_text(20)),
    st.tuples(st.just(("tasks", "book_restaurant", "confirm")), st.booleans()),
    st.tuples(st.just(("policy", "max_stack")), st.integers(1, 6)),
    st.tuples(st.just(("language",)), st.sampled_from(["zh", "en"])),
), min_size=1, max_size=4)


def catalogs():
    """A catalog dict or text, usually with a few fields replaced by junk."""
    edited = st.builds(lambda e: corrupt(CATALOG, e), catalog_edits | plausible_edits | plausible_edits)
    return st.one_of(edited, edited.map(lambda c: json.dumps(c, ensure_ascii=False)),
                     st.just(deep(100_000)), st.just("[" * 100_000), nasty_text(40))


# ---------------------------------------------------------------- invariants

def filled(state: dict) -> dict[tuple[str, str], object]:
    return {(t["id"], s): v for t in state["task_stack"] for s, v in t["slots"].items()}


def changed_slot(task_id: str, slot: str, decision: dict) -> bool:
    """Whether the decision's typed record of changes (``changes``) lists this slot."""
    return any(c["task_id"] == task_id and c["slot"] == slot for c in decision["changes"])


def explained(task_id: str, slot: str, decision: dict) -> bool:
    """Why a filled slot may be gone or changed this turn: the decision says so."""
    if any(e["task_id"] == task_id for e in decision["ended"]):
        return True  # executed (values in the payload), cancelled, cascaded, evicted or reset
    return changed_slot(task_id, slot, decision)


def check_written_state(text: str, catalog: object) -> dict:
    """What the engine wrote: fits Dify 1.8's limits, is UTF-8, loads back whole, holds only valid values."""
    assert isinstance(text, str)
    assert fits_dify_string(text), len(text)
    text.encode("utf-8")  # no lone surrogate
    state, errors = load_state(text)
    assert errors == []
    assert json.loads(text)["task_stack"] == state["task_stack"]  # loads back with the same slots
    cat = load_catalog(catalog)
    for task in state["task_stack"]:
        spec = cat.tasks[task["name"]]
        for name, value in task["slots"].items():
            assert slot_is_valid(spec.slots[name], value), (name, value)
    return state


def check_decision(decision: dict) -> None:
    json.dumps(decision, ensure_ascii=False).encode("utf-8")
    if decision["execute"]:
        json.dumps(decision["execute"], ensure_ascii=False).encode("utf-8")
