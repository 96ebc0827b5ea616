"""No state writer turns a forged state into a trusted one (issue 38, item 6).

A state is a conversation variable anyone with access can edit. With a secret (``STATE_SECRET``) the seal
of every state the engine writes is an HMAC only the engine can compute; a function that writes a state
must write that seal only over a state it read as trusted, and read any other state as a state node does
(:func:`dskit.state.state.load_trusted`: with a secret, a state whose seal fails starts clean). Every public
function that takes a state and a secret is fed two forgeries of a booking awaiting its yes — the head
count edited in the JSON (the seal left stale), and the same edit re-sealed with the plain digest anyone
can compute — and must never hand back a state whose seal holds under the secret and still carries the
forged value (issue 38: ``offers.record_offers`` did exactly that).
"""

from __future__ import annotations

import json

import pytest

from conftest import load_example_catalog
from dskit.catalog.catalog import load_catalog
from dskit.state.integrity import seal, seal_problem
from dskit.turn.machine import kept_turn, record_result, run_turn, step
from dskit.surfaces.nodes import result_node, state_node
from dskit.rules.offers import record_offers
from dskit.state.state import load_state

CATALOG = load_example_catalog("restaurant")
SECRET = "s3cret-for-tests"
FORGED_PEOPLE = 9


def _confirming() -> str:
    state, decision = step("", {"commands": [{"type": "start_task", "task": "book_restaurant", "slots": {
        "people": 2, "date": "周五", "time": "19:00", "restaurant": "老地方"}}]}, CATALOG,
                           query="周五晚上7点老地方，两个人", secret=SECRET)
    assert decision["next_action"] == "confirm"
    return state


def _edited(text: str) -> dict:
    data = json.loads(text)
    data.pop("sound", None)
    data["task_stack"][0]["slots"]["people"] = FORGED_PEOPLE
    return data


def forged_stale_seal() -> str:
    return json.dumps(_edited(_confirming()), ensure_ascii=False)


def forged_plain_seal() -> str:
    data = _edited(_confirming())
    seal(data)  # the digest anyone can compute, not the secret's
    return json.dumps(data, ensure_ascii=False)


WRITERS = {
    "step": lambda text: step(text, {"commands": []}, CATALOG, query="好的", secret=SECRET)[0],
    "step, a confirm": lambda text: step(text, {"commands": [{"type": "confirm"}]}, CATALOG, query="确认",
                                         secret=SECRET)[0],
    "run_turn": lambda text: run_turn(text, {"commands": [{"type": "chitchat"}]}, CATALOG, query="你好",
                                      secret=SECRET).text,
    "kept_turn": lambda text: kept_turn(text, load_catalog(CATALOG), "zh", "fallback", "internal", "x",
                                        secret=SECRET).text,
    "record_result": lambda text: record_result(text, "t1", False, "timeout", secret=SECRET),
    "record_offers": lambda text: record_offers(text, {"restaurant": ["老地方", "新地方"]}, secret=SECRET),
    "state node": lambda text: state_node(understanding=json.dumps({"commands": []}), sys_context_str=text,
                                          task_catalog=CATALOG, query="好的", state_secret=SECRET)["sys_context_str"],
    "result node": lambda text: result_node(sys_context_str=text, execute_payload=json.dumps({"task_id": "t1"}),
                                            ok="false", detail="timeout", state_secret=SECRET)["sys_context_str"],
}


@pytest.mark.parametrize("forge", [forged_stale_seal, forged_plain_seal], ids=["stale seal", "plain seal"])
@pytest.mark.parametrize("writer", list(WRITERS), ids=list(WRITERS))
def test_no_writer_seals_a_forged_state_as_its_own(writer, forge):
    written = WRITERS[writer](forge())
    state, _ = load_state(written, SECRET)
    trusted = seal_problem(state, SECRET) == ""
    people = [t["slots"].get("people") for t in state["task_stack"]]
    assert not (trusted and FORGED_PEOPLE in people), (writer, people)
    assert not any(d.get("slots", {}).get("people") == FORGED_PEOPLE for d in state["done"]), writer


def test_a_forged_yes_runs_nothing():
    """The forged head count never reaches the task API, whichever writer ran first."""
    for writer in ("record_offers", "record_result", "kept_turn"):
        text = WRITERS[writer](forged_stale_seal())
        _, decision = step(text, {"commands": [{"type": "confirm"}]}, CATALOG, query="确认", secret=SECRET)
        payload = decision.get("execute") or {}
        assert payload.get("slots", {}).get("people") != FORGED_PEOPLE, writer


def test_the_defect_issue_38_found_is_gone():
    """Before: record_offers read the state without its seal and wrote it back sealed with the secret."""
    written = record_offers(forged_stale_seal(), {"restaurant": ["老地方"]}, secret=SECRET)
    state, _ = load_state(written, SECRET)
    assert state["task_stack"] == [] or all(t["slots"].get("people") != FORGED_PEOPLE for t in state["task_stack"])
    assert any("integrity" in str(e) or "seal" in str(e) for e in state["errors"])
