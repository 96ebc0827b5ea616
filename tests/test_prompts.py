"""The understanding prompt carries what the model needs to resolve references, and nothing it must not see."""

from __future__ import annotations

from dskit.catalog import load_catalog
from dskit.prompts import understanding_instructions, understanding_prompt
from enginekit import Dialogue, start


def test_instructions_name_every_command():
    for lang in ("zh", "en"):
        text = understanding_instructions(lang)
        for command in ("start_task", "set_slots", "rollback_slot", "cancel_task", "confirm", "deny", "faq",
                        "chitchat", "handoff", "reset", "cannot_handle"):
            assert f'"{command}"' in text


def test_state_shows_open_tasks_top_first_with_missing_slots_and_the_last_question(travel):
    d = Dialogue(travel)
    d.say(start("plan_route", origin="成都", destination="拉萨", date="下周三"))
    d.say(start("travel_insurance", insurance_type="旅游险"))
    user = understanding_prompt(load_catalog(travel), d.state_str, "不包含")["user"]
    state = user.split("【当前状态】（以此为准，始终有效）\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert state[0].startswith("- 当前任务：travel_insurance（旅游保险，COLLECTING）") and "缺：high_risk_confirm" in state[0]
    assert state[1].startswith("- 挂起任务：plan_route（路线规划，SUSPENDED）") and "destination=拉萨" in state[1]
    assert state[-1] == "- 上一轮追问的槽位：high_risk_confirm（travel_insurance）"  # so "不包含" answers it


def test_prompt_contains_catalog_state_history_summary_and_query(restaurant):
    d = Dialogue(restaurant)
    d.say(start("book_restaurant", time="20:00"))
    prompt = understanding_prompt(load_catalog(restaurant), d.state_str, "提前一小时吧",
                                  history="user: 帮我订个位置\n\nassistant: 好的，请问哪天？", summary="用户想订周五的粤菜")
    for part in ("【任务目录】\n- book_restaurant", "time=20:00", "- 用户想订周五的粤菜", "user: 帮我订个位置",
                 "【用户最新输入】\n> 提前一小时吧"):
        assert part in prompt["user"]
    assert '"timeline"' not in prompt["user"] and '"counters"' not in prompt["user"]  # the view, not the raw state
    assert prompt["system"] == understanding_instructions("zh")


def test_english_prompt_follows_the_language(restaurant):
    prompt = understanding_prompt(load_catalog(restaurant), "", "book a table", lang="en")
    assert prompt["user"].startswith("[Task catalog]") and "[User's latest message]\n> book a table" in prompt["user"]
    assert "(no open task)" in prompt["user"] and prompt["system"] == understanding_instructions("en")
