"""Slot-gap detection: missing required slots in ask order, by task name, label or id."""

from __future__ import annotations

from dskit.state.gaps import find_gaps
from enginekit import Dialogue, start


def test_missing_in_ask_order_with_the_question(travel):
    d = Dialogue(travel)
    d.say(start("plan_route", destination="拉萨"))
    d.say(start("travel_insurance"))
    gaps = find_gaps(d.state_str, travel)
    assert gaps["task"]["name"] == "travel_insurance"
    assert gaps["missing"] == ["insurance_type", "high_risk_confirm"]
    assert gaps["next_slot"] == "insurance_type" and gaps["question"].startswith("请问您想投保哪一种保险")
    for ref in ("plan_route", "路线规划", "t1"):
        other = find_gaps(d.state_str, travel, ref)
        assert other["missing"] == ["origin", "date"], ref


def test_no_task_and_broken_state(travel):
    assert find_gaps("", travel)["task"] is None
    assert find_gaps("{broken", travel, "plan_route") == {"task": None, "missing": [], "next_slot": None, "question": ""}


def test_a_value_the_catalog_no_longer_accepts_is_a_gap(travel):
    d = Dialogue(travel)
    d.say(start("plan_route", origin="成都", destination="拉萨", date="下周三"))
    travel["tasks"]["plan_route"]["slots"]["origin"]["enum"] = ["北京", "上海"]
    assert find_gaps(d.state_str, travel)["missing"] == ["origin"]
