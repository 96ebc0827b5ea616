"""The understanding prompt carries what the model needs to resolve references, and nothing it must not see."""

from __future__ import annotations

from dskit.prompts import state_brief, understanding_input, understanding_instructions
from enginekit import Dialogue, set_, start


def test_instructions_name_every_command():
    for lang in ("zh", "en"):
        text = understanding_instructions(lang)
        for command in ("start_task", "set_slots", "rollback_slot", "cancel_task", "confirm", "deny", "faq",
                        "chitchat", "handoff", "reset", "cannot_handle"):
            assert f'"{command}"' in text


def test_state_brief_shows_open_tasks_top_first_with_missing_slots(travel):
    d = Dialogue(travel)
    d.say(start("plan_route", origin="成都", destination="拉萨", date="下周三"))
    d.say(start("travel_insurance", insurance_type="旅游险"))
    brief = state_brief(d.state_str, travel)
    lines = brief.splitlines()
    assert lines[0].startswith("- [当前] travel_insurance") and '"high_risk_confirm"' in lines[0]
    assert lines[1].startswith("- [挂起] plan_route") and '"拉萨"' in lines[1]
    assert "high_risk_confirm" in lines[-1]  # the slot just asked


def test_input_contains_catalog_state_history_and_query(restaurant):
    d = Dialogue(restaurant)
    d.say(start("book_restaurant", time="20:00"))
    text = understanding_input(restaurant, d.state_str, "提前一小时吧", history="user: 订位\n\nassistant: 好的",
                               summary="用户想订周五的粤菜")
    for part in ("book_restaurant", '"20:00"', "用户想订周五的粤菜", "user: 订位", "提前一小时吧"):
        assert part in text
    assert '"timeline"' not in text and '"counters"' not in text  # the brief, not the raw state
