"""A task refused by its doing alone is dropped (issue 40, round 43: held-out set 2's "哦，现在又好了，不用修了").

The repair stayed open: the message names the repair only by 修, the doing of its label 故障报修, and the
model answered with a rollback of a slot nobody had filled. A clause that is nothing but a refusal of a
task's doing (:func:`dskit.rules.negation.denies_only`) names that task for a cancellation; a clause with an
object of its own ("包间不用订了"), a report ("还没修") or a double negative ("不修不行") does not. The form is
tested on composed clauses, the cancellation through the engine's own turn.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dskit.rules.negation import denies_only
from dskit.turn.machine import step

from conftest import load_example_catalog

TELECOM = load_example_catalog("telecom")
REFERENCE = "2026-12-02"

DOINGS = ["修", "装", "订", "查", "办"]
LEADS = ["", "先", "暂时", "我", "就", "我们先"]
REFUSALS = ["不用", "不要", "不", "别", "不需要", "甭", "不用再", "先不"]
TAILS = ["", "了", "了吧", "啦", "了啊"]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(LEADS), st.sampled_from(REFUSALS), st.sampled_from(DOINGS), st.sampled_from(TAILS))
def test_a_clause_of_nothing_but_a_refused_doing_refuses_it(lead: str, refusal: str, doing: str, tail: str) -> None:
    assert denies_only(f"{lead}{refusal}{doing}{tail}", doing)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(LEADS), st.sampled_from(REFUSALS), st.sampled_from(DOINGS), st.sampled_from(TAILS),
       st.sampled_from(["包间", "路由器", "宽带", "这个", "那家"]), st.booleans())
def test_a_refused_doing_with_an_object_of_its_own_refuses_that_object(lead, refusal, doing, tail, thing,
                                                                       topic_first) -> None:
    """"包间不用订了", "不用订包间了": what is refused is the thing, not the task's doing."""
    clause = f"{thing}{lead}{refusal}{doing}{tail}" if topic_first else f"{lead}{refusal}{doing}{thing}{tail}"
    assert not denies_only(clause, doing), clause


@pytest.mark.parametrize("clause", ["还没修", "没修", "师傅还没修", "不修不行", "不是不修", "要修", "修", "得修了",
                                    "修不修都行吗"])
def test_a_report_an_insistence_or_a_request_refuses_nothing(clause: str) -> None:
    assert not denies_only(clause, "修"), clause


def _repair_open() -> str:
    state, _ = step("", {"commands": [{"type": "start_task", "task": "repair", "slots": {"fault": "固话打不出去"}}]},
                    TELECOM, query="固话打不出去，帮我报个修", reference_date=REFERENCE)
    return state


@pytest.mark.parametrize("message", ["哦，现在又好了，不用修了", "不用修了", "算了，先不修了", "好了，别修了"])
@pytest.mark.parametrize("model", [{"commands": []}, {"commands": [{"type": "rollback_slot", "task": "repair",
                                                                    "slot": "phone"}]}])
def test_a_repair_refused_by_its_doing_is_dropped(message: str, model: dict) -> None:
    state, decision = step(_repair_open(), model, TELECOM, query=message, reference_date=REFERENCE)
    assert json.loads(state)["task_stack"] == [] and decision["execute"] is None, decision


@pytest.mark.parametrize("message", ["还没修好", "不修不行啊", "能不能快点修"])
def test_a_repair_not_refused_stays_open(message: str) -> None:
    state, _ = step(_repair_open(), {"commands": []}, TELECOM, query=message, reference_date=REFERENCE)
    assert [t["name"] for t in json.loads(state)["task_stack"]] == ["repair"], message
