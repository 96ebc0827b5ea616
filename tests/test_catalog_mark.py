"""The catalog is checked once per conversation, not on every turn (issue 22: a lighter turn).

Dify runs a code node in a fresh interpreter, so nothing the state node learns survives the run except
what it writes: the state remembers the mark of the catalog text it was checked against
(``catalog_checked``, sealed with the state), and the next turn with the very same text builds the
catalog without checking it again (dskit.catalog.catalog.load_catalog). These tests hold the three promises
that makes: the same results, a changed or broken catalog is still caught, and a mark the engine did
not write (or one made under older rules) never skips the check.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import dskit.catalog.catalog as catalog_module
from dskit.catalog.catalog import CATALOG_RULES
from dskit.turn.machine import catalog_mark
from dskit.state.integrity import seal
from dskit.surfaces.nodes import state_node

ROOT = Path(__file__).resolve().parents[1]
CATALOG = (ROOT / "examples" / "catalogs" / "restaurant.json").read_text(encoding="utf-8")
BROKEN = json.dumps({**json.loads(CATALOG), "policy": {"max_attempts": "three"}}, ensure_ascii=False)
TURNS = [  # (message, understanding commands)
    ("我想订明天晚上七点的位子", [{"type": "start_task", "task": "book_restaurant",
                                    "slots": {"date": "明天", "time": "19:00"}}]),
    ("四个人", [{"type": "set_slots", "task": "book_restaurant", "slots": {"people": 4}}]),
    ("你们几点开门", [{"type": "faq", "question": "营业时间"}]),
    ("还是八点吧", [{"type": "set_slots", "task": "book_restaurant", "slots": {"time": "20:00"}}]),
]


def _understanding(message: str, commands: list) -> str:
    return json.dumps({"rewritten_query": message, "commands": commands}, ensure_ascii=False)


@pytest.fixture
def validations(monkeypatch):
    """How many times the full check ran."""
    calls = []
    original = catalog_module._validate

    def counted(data):
        calls.append(1)
        return original(data)

    monkeypatch.setattr(catalog_module, "_validate", counted)
    return calls


def _conversation(catalogs: list[str], *, forget_mark: bool = False, secret: str = "") -> list[dict]:
    state, outputs = "", []
    for (message, commands), catalog in zip(TURNS, catalogs):
        if forget_mark and state:  # what a state written before the mark existed looks like
            data = json.loads(state)
            data.pop("catalog_checked", None)
            seal(data, secret)
            state = json.dumps(data, ensure_ascii=False)
        out = state_node(understanding=_understanding(message, commands), sys_context_str=state,
                         task_catalog=catalog, query=message, state_secret=secret)
        outputs.append(out)
        state = out["sys_context_str"]
    return outputs


def _without_mark(outputs: dict) -> dict:
    state = json.loads(outputs["sys_context_str"])
    state.pop("catalog_checked", None)
    state.pop("seal", None)
    state.pop("sound", None)  # the mark of a text read back as it is (dskit.state.state.sound_body)
    return {**outputs, "sys_context_str": state}


def test_a_conversation_checks_its_catalog_once_with_the_same_results(validations):
    marked = _conversation([CATALOG] * len(TURNS))
    assert len(validations) == 1, "the first turn checks the catalog; the others build the checked text"
    assert all(out["error"] == "" for out in marked)
    assert json.loads(marked[-1]["sys_context_str"])["catalog_checked"] == catalog_mark(CATALOG)
    validations.clear()
    unmarked = _conversation([CATALOG] * len(TURNS), forget_mark=True)
    assert len(validations) == len(TURNS)
    assert [_without_mark(out) for out in marked] == [_without_mark(out) for out in unmarked]


def test_a_changed_catalog_is_checked_again_and_a_broken_one_is_still_refused(validations):
    edited = CATALOG.replace('"version": 1', '"version":1') if '"version": 1' in CATALOG else CATALOG + "\n"
    outputs = _conversation([CATALOG, CATALOG, edited, BROKEN])
    assert len(validations) == 3  # the first text, the edited text, the broken text
    assert outputs[2]["error"] == ""
    assert json.loads(outputs[2]["sys_context_str"])["catalog_checked"] == catalog_mark(edited)
    assert "max_attempts" in outputs[3]["error"] and outputs[3]["next_action"] == "fallback"
    assert outputs[3]["sys_context_str"] == outputs[2]["sys_context_str"], "a broken catalog changes nothing"


@pytest.mark.parametrize("secret", ["", "k3y"])
def test_a_mark_the_engine_did_not_seal_never_skips_the_check(validations, secret):
    first = _conversation([CATALOG, CATALOG], secret=secret)[-1]
    forged = json.loads(first["sys_context_str"])
    forged["catalog_checked"] = catalog_mark(BROKEN)  # written by hand: the seal no longer holds
    out = state_node(understanding=_understanding(*TURNS[2]), sys_context_str=json.dumps(forged),
                     task_catalog=BROKEN, query=TURNS[2][0], state_secret=secret)
    assert "max_attempts" in out["error"], "the broken catalog was checked, and refused"
    assert len(validations) == 2


def test_a_mark_in_a_state_with_no_task_is_trusted_only_under_its_seal(validations):
    out = state_node(understanding=_understanding("你好", [{"type": "chitchat"}]), task_catalog=CATALOG,
                     query="你好")
    state = json.loads(out["sys_context_str"])
    assert state["catalog_checked"] == catalog_mark(CATALOG) and not state["task_stack"]
    state["catalog_checked"] = catalog_mark(BROKEN)
    out = state_node(understanding=_understanding("你好", [{"type": "chitchat"}]),
                     sys_context_str=json.dumps(state), task_catalog=BROKEN, query="你好")
    assert "max_attempts" in out["error"]


@pytest.mark.parametrize("value", [["x"], 7, "f" * 65, None])
def test_a_malformed_mark_is_dropped_and_the_turn_goes_on(value):
    state = json.loads(_conversation([CATALOG])[0]["sys_context_str"])
    state["catalog_checked"] = value
    out = state_node(understanding=_understanding(*TURNS[1]), sys_context_str=json.dumps(state),
                     task_catalog=CATALOG, query=TURNS[1][0])
    assert out["error"] == "" and out["current_task_slots"] == '{"date":"明天","time":"19:00","people":4}'


def test_a_seal_written_with_other_characters_is_a_broken_seal_not_a_failed_turn():
    state = json.loads(_conversation([CATALOG])[0]["sys_context_str"])
    state["seal"] = "封印" * 12
    out = state_node(understanding=_understanding(*TURNS[1]), sys_context_str=json.dumps(state, ensure_ascii=False),
                     task_catalog=CATALOG, query=TURNS[1][0])
    assert out["error"] == "" and out["next_action"] == "ask_slot"
    errors = json.loads(out["sys_context_str"])["errors"]
    assert any(e["code"] == "integrity" and "seal does not match" in e["message"] for e in errors)


# The source of what the check accepts: the top of dskit/catalog/catalog.py up to the builders and its task list
# for the model (catalog_compact: what must fit the prompt), dskit/base/redos.py, dskit/base/text.py (texts lose their
# control characters there), dskit/base/tokens.py and dskit/base/limits.py (what fits). Recorded with CATALOG_RULES;
# when it changes, the rules may have: bump CATALOG_RULES (a mark made under the old rules then never
# matches) and record the new digest here. Re-recorded without a bump when catalog.py took its
# control-character pattern from dskit/base/text.py (the same character class). Since issue 38 also
# dskit/base/numerals.py (a number value is read by its grammar): CATALOG_RULES 3.
RULES_DIGEST = {1: "bc87ccbbf5c6b832", 2: "eada7279cea83dc4", 3: "1e50bcaa9cd7a2ee"}


def _rules_source() -> str:
    text = (ROOT / "dskit" / "catalog" / "catalog.py").read_text(encoding="utf-8")
    return (text[:text.index("\ndef confirm_default(")] + text[text.index("\ndef catalog_compact("):]
            + "".join((ROOT / "dskit" / "base" / name).read_text(encoding="utf-8")
                      for name in ("redos.py", "text.py", "tokens.py", "limits.py", "numerals.py")))


def test_changing_the_check_bumps_its_rules_version():
    found = hashlib.sha256(_rules_source().encode()).hexdigest()[:16]
    assert RULES_DIGEST.get(CATALOG_RULES) == found, (
        f"dskit/catalog/catalog.py's checks, dskit/base/redos.py, text.py, tokens.py or limits.py changed (digest {found}): "
        f"if what a valid catalog is "
        f"changed, bump CATALOG_RULES; either way record {{{CATALOG_RULES}: {found!r}}} in RULES_DIGEST")
