"""A state text the engine wrote is read back as it is (dskit.state.state.sound_body), and only such a text.

Why it may be: the repairs on load and ``reconcile_state`` change nothing in the engine's own output
held to the same catalog text. These tests show that on every state the scenario suites and a few
hundred random conversations write (the engine's output is a fixed point of both); that any other text
is still read defensively (an edit, another secret, no mark); and that the rules cannot change without
STATE_RULES changing (a mark made under the old rules then no longer holds).
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dskit.turn import machine
from dskit.state import state as state_module
from dskit.catalog.catalog import load_catalog
from dskit.turn.machine import step
from dskit.surfaces.nodes import state_node
from dskit.state.state import SOUND_KEY, STATE_RULES, load_state, reconcile_state, sound_body
from dskit.tooling.dslbuild.flows import default_catalog
from dskit.tooling.dslrun.scenarios import load_scenarios
from test_engine_properties import CATALOG, understandings

ROOT = Path(__file__).resolve().parents[1]


def _unmarked(text: str) -> str:
    """The same state without its mark: what load_state reads defensively."""
    data = json.loads(text)
    data.pop(SOUND_KEY)
    return json.dumps(data, ensure_ascii=False)


def _assert_fixed_point(text: str, catalog: dict, secret: str = "") -> None:
    """Trusting the text loses nothing: the defensive read gives the same state, key order included,
    and holding it to the catalog it was written against changes nothing."""
    assert sound_body(text, secret) is not None, "every text the engine writes carries a mark that holds"
    trusted, errors = load_state(text, secret)
    assert errors == []
    repaired, errors = load_state(_unmarked(text), secret)
    assert errors == []
    assert repaired == trusted
    assert json.dumps(repaired, ensure_ascii=False) == json.dumps(trusted, ensure_ascii=False)
    held = copy.deepcopy(trusted)
    reconcile_state(held, load_catalog(catalog))
    assert held == trusted


def _scenario_texts() -> list[str]:
    """Every state the state node writes over the scenario suites (their scripted understandings)."""
    catalog = default_catalog()
    catalog_text = json.dumps(catalog, ensure_ascii=False)
    texts = []
    for scenario in load_scenarios():
        state = ""
        for turn in scenario.turns:
            if turn.understanding is None:
                continue
            out = state_node(understanding=json.dumps(turn.understanding, ensure_ascii=False),
                             sys_context_str=state, task_catalog=catalog_text, query=turn.user)
            state = out["sys_context_str"] or state
            texts.append(state)
    return texts


def test_every_state_of_the_scenario_suites_reads_back_as_written():
    texts = _scenario_texts()
    assert len(texts) >= 40
    stages = set()
    for text in texts:
        _assert_fixed_point(text, default_catalog())
        stages |= {task["stage"] for task in json.loads(text)["task_stack"]}
    assert {"COLLECTING", "CONFIRMING"} <= stages  # not only trivial states


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(understandings, min_size=1, max_size=8), st.sampled_from(["", "s3cret"]))
def test_every_state_of_random_conversations_reads_back_as_written(turns, secret):
    text = ""
    for understanding in turns:
        text, _ = step(text, understanding, CATALOG, secret=secret)
        _assert_fixed_point(text, CATALOG, secret)


def _booking(secret: str = "") -> str:
    text, _ = step("", {"rewritten_query": "订周五晚上8点三个人", "commands": [
        {"type": "start_task", "task": "book_restaurant", "slots": {"date": "周五", "time": "20:00", "people": 3}}]},
        CATALOG, secret=secret)
    return text


def test_an_edited_text_is_read_defensively_again():
    text = _booking()
    edited = text.replace('"stage":"COLLECTING"', '"stage":"EXECUTED"')
    assert edited != text and sound_body(edited) is None
    state, errors = load_state(edited)
    assert errors == [] and state["task_stack"][0]["stage"] == "COLLECTING"
    assert any("stage 'EXECUTED' unknown" in e["message"] for e in state["errors"])
    assert not any("unknown field" in e["message"] for e in state["errors"]), "a broken mark is not a foreign field"


@pytest.mark.parametrize("cut", [1, 5, 12, 30, 40])
def test_a_damaged_mark_is_no_mark(cut):
    text = _booking()
    assert sound_body(text[:cut] + ("0" if text[cut] != "0" else "1") + text[cut + 1:]) is None
    assert sound_body(text[cut:]) is None
    assert sound_body(" " + text) is None


def test_a_mark_holds_only_under_the_secret_it_was_written_with():
    plain, keyed = _booking(), _booking("s3cret")
    assert sound_body(plain) is not None and sound_body(plain, "s3cret") is None
    assert sound_body(keyed, "s3cret") is not None and sound_body(keyed) is None and sound_body(keyed, "other") is None
    # A state written without the secret is not trusted by a turn that has one: it starts clean, as before.
    out, _ = step(plain, {"rewritten_query": "四个人", "commands": [{"type": "set_slots", "slots": {"people": 4}}]},
                  CATALOG, secret="s3cret")
    assert load_state(out, "s3cret")[0]["task_stack"] == []


def test_a_changed_catalog_still_holds_a_sound_state_to_it():
    text = _booking()
    narrowed = copy.deepcopy(CATALOG)
    narrowed["tasks"]["book_restaurant"]["slots"]["people"]["maximum"] = 2
    out, _ = step(text, {"rewritten_query": "周五", "commands": []}, json.dumps(narrowed, ensure_ascii=False))
    state = load_state(out)[0]
    assert "people" not in state["task_stack"][0]["slots"]
    assert any("stored value 3 is invalid" in e["message"] for e in state["errors"])


def test_the_same_catalog_text_skips_the_check_only_for_a_sound_state(monkeypatch):
    catalog_text = json.dumps(CATALOG, ensure_ascii=False)
    text, _ = step("", {"rewritten_query": "订周五", "commands": [
        {"type": "start_task", "task": "book_restaurant", "slots": {"date": "周五"}}]}, catalog_text)
    calls = []
    monkeypatch.setattr(machine, "reconcile_state", lambda state, cat: calls.append(1))
    said = {"rewritten_query": "三个人", "commands": [{"type": "set_slots", "slots": {"people": 3}}]}
    step(text, said, catalog_text)
    assert calls == []
    step(_unmarked(text), said, catalog_text)
    assert calls == [1]


def test_a_dict_decoded_from_a_state_writes_back_the_same_text():
    text = _booking()
    assert state_module.dump_state(json.loads(text)) == text


# The source of the rules a sound state skips: dskit/state/state.py (the repairs on load, reconcile_state and
# what they call), the slot value coercion of dskit/catalog/catalog.py (reconcile_state holds values to it) and
# the stages of dskit/state/records.py, and dskit/base/text.py (a slot value loses its control characters there);
# since issue 38 also dskit/state/taskstack.py (the only writer of a task: the value history's bounds live
# there) and dskit/base/numerals.py (the catalog's coercion reads numbers by its grammar): STATE_RULES 2.
# Recorded with STATE_RULES; when it changes, the rules may have: bump STATE_RULES (marks made under the
# old rules then never hold) and record the new digest here. Re-recorded without a bump when the value
# coercion took its control-character pattern from dskit/base/text.py (the same character class).
RULES_DIGEST = {1: "f63c4078b5be9b51", 2: "4fe1e383bbe70894"}


def _rules_source() -> str:
    catalog = (ROOT / "dskit" / "catalog" / "catalog.py").read_text(encoding="utf-8")
    return ((ROOT / "dskit" / "state" / "state.py").read_text(encoding="utf-8")
            + catalog[catalog.index("\ndef confirm_default("):catalog.index("\ndef catalog_compact(")]
            + (ROOT / "dskit" / "state" / "records.py").read_text(encoding="utf-8")
            + (ROOT / "dskit" / "base" / "text.py").read_text(encoding="utf-8")
            + (ROOT / "dskit" / "state" / "taskstack.py").read_text(encoding="utf-8")
            + (ROOT / "dskit" / "base" / "numerals.py").read_text(encoding="utf-8"))


def test_changing_the_rules_bumps_their_version():
    found = hashlib.sha256(_rules_source().encode()).hexdigest()[:16]
    assert RULES_DIGEST.get(STATE_RULES) == found, (
        f"dskit/state/state.py, the value coercion of dskit/catalog/catalog.py, dskit/state/records.py or dskit/base/text.py changed "
        f"(digest {found}): "
        f"if what a repair or reconcile_state does changed, bump STATE_RULES; either way record "
        f"{{{STATE_RULES}: {found!r}}} in RULES_DIGEST")


# A hand-made state can carry a mark that holds: without a secret anyone who reads this code can compute
# one (docs/state-format.md). It is then taken as written, as its seal already is; what must hold is that
# no node raises on it, and that a node which fails on it reads it again without its mark (the repairs).
_FORGED_BODIES = [
    {"format": "dskit.state", "version": 1, "turn": "x", "task_stack": "oops", "counters": [], "done": {"a": 1},
     "errors": 5, "timeline": None},
    {"format": "dskit.state", "version": 1, "turn": 1, "task_stack": [{"id": 1}], "next_task_seq": 2, "counters": {},
     "done": [], "errors": [], "timeline": []},
    {"format": "dskit.state", "version": 1, "turn": 2, "next_task_seq": 2, "counters": {"failed_asks": []},
     "task_stack": [{"id": "t1", "name": "book_restaurant", "slots": {"people": "DROP TABLE"}, "stage": "CONFIRMING",
                     "history": "x"}], "done": [{"task_id": "t0"}], "errors": [], "timeline": [7]},
    {"x": 1},
]


def _forged(body: dict) -> str:
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    mark = state_module._sound_mark(text, "")
    forged = f'{{"{SOUND_KEY}":"{mark}",{text[1:]}'
    assert sound_body(forged) is not None
    return forged


@pytest.mark.parametrize("body", _FORGED_BODIES)
def test_no_node_raises_on_a_forged_mark_over_a_broken_state(body):
    from dskit.surfaces import nodes

    catalog = json.dumps(default_catalog(), ensure_ascii=False)
    forged = _forged(body)
    calls = {
        "state_node": dict(understanding='{"commands":[{"type":"set_slots","slots":{"people":3}}]}',
                           task_catalog=catalog, query="三个人"),
        "context_node": dict(query="三个人", task_catalog=catalog),
        "classic_adapter_node": dict(class_name="book_restaurant", query="三个人", task_catalog=catalog, people="3"),
        "result_node": dict(execute_payload='{"task_id":"t1"}', ok="true"),
        "history_node": dict(user_query="三个人", answer="好的", task_catalog=catalog),
        "summary_node": dict(llm_text="摘要", summary="", overflow="user: 三个人"),
        "execute_reply_node": dict(execute_payload='{"task_id":"t1","task":"book_restaurant"}', question="好的",
                                   recorded_state=forged, ok="true"),
    }
    for name, args in calls.items():
        out = getattr(nodes, name)(sys_context_str=forged, **args)
        assert isinstance(out, dict), name
    written = nodes.state_node(sys_context_str=forged, **calls["state_node"])["sys_context_str"]
    assert load_state(written)[1] == [] and sound_body(written) is not None


def test_a_node_that_fails_on_a_marked_text_reads_it_again_without_the_mark(monkeypatch):
    from dskit.surfaces import nodes

    text = _booking()
    seen = []

    def turn(**args):
        seen.append(sound_body(args["sys_context_str"]) is not None)
        if seen[-1]:
            raise KeyError("name")  # what a forged mark over a broken task did before the retry
        return {"error": "", "sys_context_str": args["sys_context_str"]}

    assert nodes._again_unmarked(turn, {"sys_context_str": text})["sys_context_str"] == state_module.unmarked(text)
    assert seen == [True, False]

    def broken(**args):
        raise KeyError("name")

    with pytest.raises(KeyError):  # a text without a mark fails as it always did, once
        nodes._again_unmarked(broken, {"sys_context_str": state_module.unmarked(text)})
