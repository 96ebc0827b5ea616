"""The understanding prompt carries what the model needs to resolve references, and nothing it must not see."""

from __future__ import annotations

import json
import re
from pathlib import Path

from dskit.catalog.catalog import load_catalog
from dskit.catalog.catalog_lint import catalog_warnings
from dskit.context.prompts import understanding_instructions, understanding_prompt
from enginekit import Dialogue, start

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in (ROOT / "examples" / "catalogs").glob("*.json")}


def test_instructions_name_every_command():
    for lang in ("zh", "en"):
        text = understanding_instructions(lang)
        for command in ("start_task", "set_slots", "rollback_slot", "cancel_task", "confirm", "deny", "faq",
                        "chitchat", "handoff", "reset", "cannot_handle"):
            assert re.search(rf"(?<![a-z_]){command}(?![a-z_])", text), command


def _catalog_words(data: dict) -> set[str]:
    """Every task example, option, alias and label of a catalog: text a model could turn into a command."""
    words = set()
    for task in data["tasks"].values():
        words |= set(task.get("examples") or [])
        for slot in task.get("slots", {}).values():
            words |= {str(v) for v in slot.get("enum") or []} | set(slot.get("aliases") or {})
    return {w for w in words if len(w) >= 2}


def test_instructions_hold_no_value_a_model_could_copy_into_a_command():
    """A small model returned the prompt's own example "订周六的，顺便查下北京天气" as a weather
    enquiry for a message about a booking's time (issue 13). The instructions go to every catalog,
    so they name no task, no value, no date, no time and no place: only the commands' shapes."""
    for lang in ("zh", "en"):
        text = understanding_instructions(lang)
        for name, data in SHIPPED.items():
            for word in _catalog_words(data) | set(data["tasks"]):
                assert word not in text, (lang, name, word)
        assert not re.search(r"\d", re.sub(r"(?m)^\d+\. ", "", text))  # no numbers, times, dates (rule numbers aside)
        for value in ("北京", "周六", "七点", "天气", "餐厅", "订", "Paris", "Friday", "seven"):
            assert value not in text, (lang, value)


def test_the_json_skeleton_holds_no_placeholder_prose():
    """The skeleton's placeholder 「结合上下文补全指代和省略后的完整问题」 came back as the
    rewritten_query: the fields are described in words, and no JSON string value appears at all."""
    for lang in ("zh", "en"):
        text = understanding_instructions(lang)
        assert not re.search(r'"\s*:\s*"', text) and "{" not in text


def test_shipped_catalogs_carry_no_example_values_and_name_every_slot():
    for name, data in SHIPPED.items():
        assert catalog_warnings(data) == [], name
        assert all("如" not in str(slot.get("description", "")) for task in data["tasks"].values()
                   for slot in task.get("slots", {}).values()), name


def test_catalog_descriptions_reach_the_prompt_without_examples():
    for data in SHIPPED.values():
        user = understanding_prompt(load_catalog(data), "", "你好")["user"]
        assert "2026-" not in user and "如 " not in user and "->" not in user


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
