"""A task that runs at once never runs on a reading nobody asked for (issue 40, held-out set 2).

Two forms: the engine opened the task itself (the model gave no command for it), or the model opened
it for a message about the task open before — naming an option of that task's slots — that names
neither this task's label nor its doing. Either way the task asks its confirmation first; a message
that names it runs it as before.
"""

from __future__ import annotations

import json

import pytest

from dskit.turn.machine import step

from conftest import load_example_catalog

TELECOM = load_example_catalog("telecom")
PLANS = TELECOM["tasks"]["install_broadband"]["slots"]["plan"]["enum"]


def _broadband_open() -> str:
    state, _ = step("", {"commands": [{"type": "start_task", "task": "install_broadband"}]}, TELECOM,
                    query="我想办宽带", reference_date="2026-12-02")
    return state


@pytest.mark.parametrize("plan", PLANS)
@pytest.mark.parametrize("ask", ["{p}的多少钱一个月？", "{p}贵不贵", "{p}每月什么价"])
def test_a_question_about_the_open_tasks_option_runs_no_enquiry(plan: str, ask: str) -> None:
    _, decision = step(_broadband_open(), {"commands": [{"type": "start_task", "task": "bill_enquiry"}]}, TELECOM,
                       query=ask.format(p=plan), reference_date="2026-12-02")
    assert decision["next_action"] != "execute" and decision["execute"] is None  # asked first, or not opened


@pytest.mark.parametrize("ask", ["顺便查下上个月话费", "再帮我查一下话费", "话费账单查一下"])
def test_an_enquiry_the_message_names_runs_at_once(ask: str) -> None:
    _, decision = step(_broadband_open(), {"commands": [{"type": "start_task", "task": "bill_enquiry"}]}, TELECOM,
                       query=ask, reference_date="2026-12-02")
    assert decision["next_action"] == "execute" and decision["execute"]["task"] == "bill_enquiry"


def test_an_enquiry_the_engine_opened_asks_first_and_a_yes_runs_it() -> None:
    state, decision = step("", {"commands": [{"type": "faq", "question": "话费查询"}]}, TELECOM,
                           query="帮我查下话费", reference_date="2026-12-02")
    assert decision["execute"] is None and "话费查询" in decision["question"]
    assert json.loads(state)["task_stack"][0]["name"] == "bill_enquiry"
    _, decision = step(state, {"commands": [{"type": "confirm"}]}, TELECOM, query="对",
                       reference_date="2026-12-02")
    assert decision["next_action"] == "execute"


def test_an_enquiry_held_for_a_yes_is_not_run_by_the_next_message() -> None:
    """Held-out set 2: the engine opened the bill enquiry and asked; "那3月的呢" (the model's start of the same
    task refused as already open) ran it with no month. A held task waits for its yes on every turn."""
    state, _ = step("", {"commands": [{"type": "faq", "question": "话费查询"}]}, TELECOM,
                    query="帮我查下话费", reference_date="2026-12-02")
    state, decision = step(state, {"commands": [{"type": "start_task", "task": "bill_enquiry",
                                                 "slots": {"month": "3月"}}]}, TELECOM,
                           query="那3月的呢", reference_date="2026-12-02")
    assert decision["execute"] is None and decision["next_action"] == "confirm"
    _, decision = step(state, {"commands": [{"type": "confirm"}]}, TELECOM, query="对", reference_date="2026-12-02")
    assert decision["next_action"] == "execute"
