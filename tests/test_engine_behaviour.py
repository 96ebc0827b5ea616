"""Conversation repair and policy, one behaviour per test: what a user of the assistant relies on."""

from __future__ import annotations

import json

import pytest

from dskit.catalog.catalog import CatalogError
from dskit.turn.machine import record_result, step
from dskit.state.state import MAX_STATE_CHARS, load_state
from enginekit import Dialogue, cmd, set_, start


def booked(d: Dialogue) -> None:
    d.say(start("book_restaurant", date="周五", time="20:00", people=3, area="市中心"))


def test_rollback_restores_the_value_before_the_last_change(restaurant):
    d = Dialogue(restaurant)
    booked(d)
    d.say(set_(time="19:00"))
    d.say(cmd("rollback_slot", slot="time"))  # "还是八点吧"
    assert d.slots()["time"] == "20:00"
    assert d.decision["question"] == "已将时间改回20:00。请问您想订哪家餐厅？"  # said once, not acknowledged again
    d.say(cmd("rollback_slot", slot="time"))  # before 20:00 there was nothing
    assert "time" not in d.slots()
    d.say(cmd("rollback_slot", slot="time"))
    assert any("no earlier value" in x["reason"] for x in d.decision["dropped"])


def test_multi_intent_set_and_start_in_one_message(travel, restaurant):
    """"订周六的，顺便查下北京天气": the booking keeps its date, weather runs, booking resumes."""
    catalog = {**travel, "tasks": {**travel["tasks"], **restaurant["tasks"]}}
    d = Dialogue(catalog)
    d.say(start("book_restaurant", people=2))
    d.say(start("weather", city="北京"), set_(date="周六"))
    assert d.decision["next_action"] == "execute"
    assert d.decision["execute"]["task"] == "weather"
    assert d.decision["execute"]["slots"] == {"city": "北京"}
    assert d.slots("book_restaurant") == {"people": 2, "date": "周六"}
    assert d.decision["resumed"]["task"] == "book_restaurant"
    assert "我们继续刚才的「订餐」" in d.decision["question"]
    assert "请问您想几点用餐？" in d.decision["question"]


def test_two_new_tasks_first_mentioned_first(travel):
    d = Dialogue(travel)
    d.say(start("plan_route", origin="成都"), start("weather"))
    assert [t for t, _ in d.stack()] == ["weather", "plan_route"]
    assert d.decision["slot"] == "destination"


def test_an_enquiry_started_with_another_task_runs_at_once(travel):
    """"What's the weather in Boston tomorrow? Also book us a table": the complete enquiry runs this turn
    whichever order the model started the two in, and the other task's question follows."""
    for order in ((start("plan_route", origin="成都"), start("weather", city="北京")),
                  (start("weather", city="北京"), start("plan_route", origin="成都"))):
        d = Dialogue(travel)
        d.say(*order)
        assert d.decision["next_action"] == "execute" and d.decision["execute"]["task"] == "weather"
        assert [t for t, _ in d.stack()] == ["plan_route"] and d.decision["slot"] == "destination"


def test_reset_clears_everything(restaurant):
    d = Dialogue(restaurant)
    booked(d)
    d.say(cmd("reset"))
    s = d.state
    assert s["task_stack"] == [] and s["current_task_id"] is None
    assert s["global_intent_lock"] == "UNLOCKED"
    assert d.decision["next_action"] == "chitchat"


def test_cancel_then_restart_leaves_no_stale_slots(restaurant):
    """"那算了，不订了，下周六再说吧" (seed 000 §4.2), whatever order the model lists the commands in."""
    for order in (0, 1):
        d = Dialogue(restaurant)
        booked(d)
        old_id = d.state["current_task_id"]
        commands = [cmd("cancel_task", task="book_restaurant"), start("book_restaurant", date="下周六")]
        d.say(*(commands if order == 0 else commands[::-1]))
        assert d.slots() == {"date": "下周六"}
        assert d.state["current_task_id"] != old_id
        assert len(d.state["task_stack"]) == 1


def test_faq_interrupts_and_the_task_resumes(restaurant):
    d = Dialogue(restaurant)
    booked(d)
    before = d.state["task_stack"]
    d.say(cmd("faq", question="你们营业到几点？"))
    assert d.decision["next_action"] == "faq"
    assert d.decision["faq"] == {"question": "你们营业到几点？"}
    assert d.state["task_stack"] == before
    assert d.decision["question"] == "请问您想订哪家餐厅？"
    d.say(set_(restaurant="老广记"))
    assert d.decision["next_action"] == "confirm"  # a booking changes something: confirmed first
    d.say(cmd("confirm"))
    assert d.decision["next_action"] == "execute"


def test_chitchat_does_not_touch_the_task(restaurant):
    d = Dialogue(restaurant)
    booked(d)
    before = d.state["task_stack"]
    d.say(cmd("chitchat"))
    assert d.decision["next_action"] == "chitchat"
    assert d.state["task_stack"] == before


def test_guard_never_executes_with_a_required_slot_empty(travel):
    d = Dialogue(travel)
    d.say(start("travel_insurance", insurance_type="旅游险"))
    for _ in range(2):
        d.say(cmd("confirm"))
        assert d.decision["next_action"] == "ask_slot"
        assert d.decision["execute"] is None


def test_confirm_then_deny_goes_back_to_collecting(travel):
    d = Dialogue(travel)
    d.say(start("plan_route", origin="成都", destination="拉萨", date="下周三"))
    assert d.decision["next_action"] == "confirm"
    d.say(cmd("deny"))
    assert d.top["stage"] == "COLLECTING"
    assert d.decision["next_action"] == "ask_slot"
    assert "需要修改哪一项" in d.decision["question"]
    d.say(set_(date="下周四"))
    assert d.decision["next_action"] == "confirm" and "下周四" in d.decision["question"]
    d.say(cmd("confirm"))
    assert d.decision["next_action"] == "execute"
    assert d.decision["execute"]["slots"]["date"] == "下周四"


def test_cancelling_a_task_cancels_its_subtasks(travel):
    d = Dialogue(travel)
    d.say(start("plan_route", origin="成都", destination="拉萨", date="下周三"))
    d.say(start("travel_insurance", insurance_type="旅游险"))
    d.say(cmd("cancel_task", task="plan_route"))
    assert d.state["task_stack"] == []


def test_a_change_outside_depends_on_slots_keeps_the_subtask(travel):
    d = Dialogue(travel)
    d.say(start("plan_route", origin="成都", destination="拉萨", date="下周三", mode="自驾"))
    d.say(start("travel_insurance", insurance_type="旅游险"))
    d.say(set_("plan_route", mode="火车"))  # insurance watches destination and date only
    assert [t for t, _ in d.stack()] == ["plan_route", "travel_insurance"]


def test_handoff_when_asked(restaurant):
    d = Dialogue(restaurant)
    booked(d)
    d.say(cmd("handoff", reason="用户要求人工"))
    assert d.decision["next_action"] == "handoff"
    assert d.state["handoff"]["reason"] == "用户要求人工"
    assert d.slots()["people"] == 3  # the human agent sees what was collected


def test_handoff_after_max_attempts_failed_asks(restaurant):
    d = Dialogue(restaurant)
    booked(d)  # asks restaurant
    actions = []
    for _ in range(3):
        d.say(cmd("chitchat"))
        actions.append(d.decision["next_action"])
    assert actions == ["chitchat", "chitchat", "handoff"]
    assert d.state["handoff"]["reason"] == "max_attempts"


def test_answering_something_else_is_not_a_failed_ask(restaurant):
    d = Dialogue(restaurant)
    booked(d)
    for value in ("粤菜", "川菜", "湘菜", "鲁菜"):
        d.say(set_(cuisine=value))
        assert d.decision["next_action"] == "ask_slot"


def test_single_unusable_output_is_fallback_and_changes_nothing(restaurant):
    d = Dialogue(restaurant)
    booked(d)
    before = d.state["task_stack"]
    d.say(raw="抱歉，我无法理解。")
    assert d.decision["next_action"] == "fallback"
    assert d.state["task_stack"] == before
    assert d.state["counters"]["parse_failures"] == 1
    d.say(set_(cuisine="粤菜"))
    assert d.state["counters"]["parse_failures"] == 0


def test_handoff_after_max_parse_failures_in_a_row(restaurant):
    d = Dialogue(restaurant)
    booked(d)
    actions = [d.say(raw="{not json at all").get("next_action") for _ in range(3)]
    assert actions == ["fallback", "fallback", "handoff"]
    assert d.state["handoff"]["reason"] == "not_understood"


def test_cannot_handle_alone_is_not_understood(restaurant):
    d = Dialogue(restaurant)
    d.say(cmd("cannot_handle"))
    assert d.decision["next_action"] == "fallback"


def test_understanding_in_prose_and_fences_is_read(restaurant):
    d = Dialogue(restaurant)
    raw = ("好的，我的理解如下：\n```json\n{'rewritten_query': '订周五的位子', 'commands': "
           "[{'type': 'start_task', 'task': '订餐', 'slots': {'date': '周五', 'people': '三位',}},]}\n```")
    d.say(raw=raw)
    assert d.slots() == {"date": "周五", "people": 3}
    assert d.decision["rewritten_query"] == "订周五的位子"


def test_unknown_task_and_slot_are_dropped_with_reasons(restaurant):
    d = Dialogue(restaurant)
    d.say(start("book_restaurant", date="周五", wine="红酒"), start("book_flight"))
    assert d.slots() == {"date": "周五"}
    reasons = [x["reason"] for x in d.decision["dropped"]]
    assert any("unknown task 'book_flight'" in r for r in reasons)
    assert any("unknown slot 'wine'" in r for r in reasons)
    timeline = d.state["timeline"][-1]
    assert timeline["dropped"] == d.decision["dropped"]


@pytest.mark.parametrize("bad", ["{", "[]", "null", '{"format": "other.tool", "tasks": []}', "x" * (MAX_STATE_CHARS + 1),
                                 '{"format":"dskit.state","version":99}', "\x00\ud83d\ude00"])
def test_corrupt_foreign_or_oversized_state_starts_clean(restaurant, bad):
    new, decision = step(bad, {"commands": [start("book_restaurant", date="周五")]}, restaurant)
    state, errors = load_state(new)
    assert errors == []
    assert state["task_stack"][0]["slots"] == {"date": "周五"}
    assert state["errors"] and state["errors"][0]["code"] == "state"


def test_broken_catalog_is_refused_with_paths(restaurant):
    broken = json.loads(json.dumps(restaurant))
    broken["tasks"]["book_restaurant"]["slots"]["people"]["minimum"] = "one"
    with pytest.raises(CatalogError) as err:
        step("", {"commands": []}, broken)
    assert "$.tasks.book_restaurant.slots.people.minimum: must be a number within ±2^63" in err.value.problems


def test_execute_then_record_failure_reopens_the_task(restaurant):
    d = Dialogue(restaurant)
    d.say(start("book_restaurant", date="周五", time="20:00", people=3, restaurant="老广记"))
    d.say(cmd("confirm"))
    assert d.decision["next_action"] == "execute"
    task_id = d.decision["execute"]["task_id"]
    assert d.state["done"][-1]["status"] == "pending"
    d.state_str = record_result(d.state_str, task_id, ok=False, detail="HTTP 503")
    s = d.state
    assert s["done"][-1]["status"] == "failed"
    assert s["task_stack"][-1]["id"] == task_id and s["task_stack"][-1]["stage"] == "CONFIRMING"
    assert s["task_stack"][-1]["slots"]["restaurant"] == "老广记"
    d.say(cmd("confirm"))  # "再试一次"
    assert d.decision["next_action"] == "execute"
    d.state_str = record_result(d.state_str, task_id, ok=True)
    assert d.state["done"][-1]["status"] == "success" and d.state["task_stack"] == []


def test_stack_limit_evicts_the_oldest_task(travel):
    travel["policy"]["max_stack"] = 2
    d = Dialogue(travel)
    d.say(start("plan_route", origin="成都"))
    d.say(start("weather"))
    d.say(start("account_balance"))  # executes at once; never evicts anything
    d.say(start("travel_insurance"))  # its parent plan_route is protected: weather goes
    assert [t for t, _ in d.stack()] == ["plan_route", "travel_insurance"]
    assert any("查询天气" in n for n in d.decision["notices"])
    d.say(start("weather", city="上海"))
    assert d.decision["next_action"] == "execute"  # a single-turn task runs without taking room
    assert [t for t, _ in d.stack()] == ["plan_route", "travel_insurance"]


def test_english_texts(restaurant):
    d = Dialogue(restaurant, lang="en")
    booked(d)
    assert d.decision["question"].startswith("OK, noted")
    assert "请问您想订哪家餐厅？" in d.decision["question"]  # the catalog's own ask stays verbatim


def test_single_turn_task_executes_at_once(travel):
    d = Dialogue(travel)
    d.say(start("account_balance"))
    assert d.decision["next_action"] == "execute"
    assert d.decision["execute"]["task"] == "account_balance"
    assert d.state["task_stack"] == []


def test_state_stays_small_whatever_the_model_sends(restaurant):
    one = '{"type":"set_slots","slots":{"budget":"' + "贵" * 50 + '"}},'
    flood = '{"commands":[' + one * 5000 + "]}"
    state_str, decision = step("", flood, restaurant)
    assert len(state_str) < 5000
    assert decision["dropped"][0]["reason"] == "more than 20 commands in one message"
    for _ in range(8):  # a long conversation: timeline, errors and done are bounded
        state_str, _ = step(state_str, flood, restaurant)
        state_str, _ = step(state_str, "garbage", restaurant)
    assert len(state_str) < 10000


def test_english_sentences_are_separated_by_a_space():
    """An English acknowledgement or notice followed by the question reads as two sentences
    ("...date: Saturday. What time..."), not "Saturday.What"; Chinese runs them together."""
    import json as _json
    from pathlib import Path as _Path

    from dskit.turn.machine import step as _step

    catalog = _json.loads((_Path(__file__).resolve().parents[1] / "examples/eval/catalogs/restaurant_travel_en.json")
                          .read_text(encoding="utf-8"))
    state, _ = _step("", {"commands": [{"type": "start_task", "task": "book_restaurant",
                                        "slots": {"date": "Friday", "people": 2}}]}, catalog, query="book Friday for two")
    _, decision = _step(state, {"commands": [{"type": "set_slots", "slots": {"people": 3, "date": "Saturday"}}]},
                        catalog, query="make it Saturday, three people")
    assert "Saturday. What time" in decision["question"]
    assert ".W" not in decision["question"].replace("...", "")
