"""Each execution carries an idempotency key: (conversation, task, approval) (issue 39).

A task API that acted but answered too late is recorded as a failure; the task goes back to its
confirmation and the next yes submits it again. The key is what lets the API tell that second request
for the same submission: the same key on a retry of the same approval, another key for other values,
another task or another conversation. (In the Chatflows, through graphon: tests/test_dsl_flows.py,
``test_a_retry_after_a_late_answer_is_the_same_submission``.)
"""

from __future__ import annotations

import json

from dskit.catalog.catalog import load_catalog
from dskit.state.integrity import execution_key
from dskit.turn.machine import record_result
from dskit.surfaces.nodes import state_node
from dskit.state.views import workflow_outputs
from enginekit import Dialogue, cmd, set_, start


def _confirmed(restaurant: dict) -> Dialogue:
    d = Dialogue(restaurant)
    d.say(start("book_restaurant", date="周五", time="20:00", people=2, restaurant="老广记"))
    d.say(cmd("confirm"))
    assert d.decision["next_action"] == "execute"
    return d


def _key(d: Dialogue, catalog: dict, conversation: str = "conv-1") -> tuple[str, dict]:
    outputs = workflow_outputs(d.state_str, d.decision, load_catalog(catalog), conversation_id=conversation)
    return outputs["execute_key"], outputs["execute_payload"]


def test_a_retry_of_the_same_approval_has_the_same_key(restaurant):
    d = _confirmed(restaurant)
    key, payload = _key(d, restaurant)
    assert key.startswith("dskit-") and payload["idempotency_key"] == key
    d.state_str = record_result(d.state_str, payload["task_id"], False, "read timeout")  # acted, answered late
    d.say(cmd("confirm"))  # "再试一次"
    again, retry = _key(d, restaurant)
    assert retry["task_id"] == payload["task_id"] and again == key


def test_other_values_another_task_or_conversation_get_another_key(restaurant):
    d = _confirmed(restaurant)
    key, payload = _key(d, restaurant)
    assert _key(d, restaurant, "conv-2")[0] != key
    d.state_str = record_result(d.state_str, payload["task_id"], False, "HTTP 503")
    d.say(set_(people=3))  # the retry now books for three: a new approval
    d.say(cmd("confirm"))
    changed, _ = _key(d, restaurant)
    assert d.decision["next_action"] == "execute" and changed not in ("", key)
    second = _confirmed(restaurant)  # a fresh conversation's t1 with the same values ...
    assert _key(second, restaurant, "conv-9")[0] != key  # ... is another conversation's submission
    assert execution_key("conv-1", {**payload, "task_id": "t7"}) != key  # another task of this conversation


def test_no_conversation_no_key(restaurant):
    """A key two conversations could share is worse than none: without a conversation id there is none."""
    d = _confirmed(restaurant)
    key, payload = _key(d, restaurant, "")
    assert key == "" and "idempotency_key" not in payload
    assert execution_key("conv-1", {"task": "x"}) == ""


def test_the_state_node_keys_the_payload_it_outputs(restaurant):
    catalog = json.dumps(restaurant, ensure_ascii=False)
    d = Dialogue(restaurant)
    d.say(start("book_restaurant", date="周五", time="20:00", people=2, restaurant="老广记"))
    understanding = json.dumps({"rewritten_query": "确认", "commands": [{"type": "confirm"}]})
    out = state_node(understanding, d.state_str, catalog, query="好的，就这样订", conversation_id="c-42")
    payload = json.loads(out["execute_payload"])
    assert out["next_action"] == "execute" and out["execute_key"] == payload["idempotency_key"]
    assert out["execute_key"] == execution_key("c-42", payload)
    ask = state_node(understanding, "", catalog, query="好的", conversation_id="c-42")
    assert ask["execute_key"] == ""
