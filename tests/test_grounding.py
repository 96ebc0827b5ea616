"""Grounding: the engine applies only what the user's message (or a recent one) supports.

Each test is a failure a real small model produced on a shipped Chatflow (issue 13), replayed as the
model's commands with the user's message: the copied example ("订周六的，顺便查下北京天气" came back
as a weather enquiry), the repeated start of a task that just ran, the invented value, the
unasked confirmation, the contradictory commands on one slot. Without a message (a replay of stored
commands) grounding is off and every valid command applies, as before.
"""

from __future__ import annotations

import copy
import json
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import load_example_catalog
from dskit.catalog.catalog import load_catalog
from dskit.rules.grounding import (common_words, confirm_grounded, dates_in, durations_in, fold, make_evidence, numbers_in,
                             task_mentioned, text_grounded, times_in, value_grounded)
from dskit.turn.machine import step
from dskit.state.state import load_state

RESTAURANT = load_example_catalog("restaurant")
TRAVEL = load_example_catalog("travel_assistant")
TELECOM = load_example_catalog("telecom")
DEFAULT = {"version": 1, "language": "zh", "tasks": {**RESTAURANT["tasks"], **TRAVEL["tasks"]},
           "policy": RESTAURANT["policy"]}
REFERENCE = "2026-12-01"  # a Tuesday


class Talk:
    """A conversation: the model's commands and the user's message each turn, grounding on."""

    def __init__(self, catalog: dict, policy: str = "drop"):
        self.catalog = copy.deepcopy(catalog)
        self.catalog.setdefault("policy", {})["ungrounded"] = policy
        self.state = ""
        self.said: list[str] = []
        self.decision: dict = {}

    def turn(self, message: str, *commands: dict) -> dict:
        self.state, self.decision = step(self.state, {"rewritten_query": message, "commands": list(commands)},
                                         self.catalog, query=message, recent=self.said, reference_date=REFERENCE)
        self.said.append(message)
        return self.decision

    def slots(self, name: str) -> dict:
        return next((t["slots"] for t in load_state(self.state)[0]["task_stack"] if t["name"] == name), {})

    @property
    def stack(self) -> list[str]:
        return [t["name"] for t in load_state(self.state)[0]["task_stack"]]

    def reasons(self) -> list[str]:
        return [d["reason"] for d in self.decision["dropped"]]


def start(task: str, **slots) -> dict:
    return {"type": "start_task", "task": task, "slots": slots}


def set_(**slots) -> dict:
    return {"type": "set_slots", "slots": slots}


def cmd(kind: str, **fields) -> dict:
    return {"type": kind, **fields}


SEED = {"date": "周五", "time": "20:00", "people": 3, "area": ["市中心"], "cuisine": "粤菜"}


def seed_booking(policy: str = "drop") -> Talk:
    talk = Talk(DEFAULT, policy)
    talk.turn("帮我订周五晚上8点，三个人，市中心，老牌粤菜", start("book_restaurant", **SEED))
    return talk


# ---------------------------------------------------------------- values


def test_the_users_values_are_stored_after_normalisation():
    talk = seed_booking()
    assert talk.slots("book_restaurant") == SEED  # 8点 -> 20:00 (晚上), 三个人 -> 3, 市中心 an option
    talk.turn("两个人安静一点的，时间改成七点吧。", set_(people=2, quiet=True, time="19:00"))
    assert talk.slots("book_restaurant") == {**SEED, "people": 2, "quiet": True, "time": "19:00"}
    talk.turn("提前半小时吧", set_(time="18:30"))  # a shift of the old value
    assert talk.slots("book_restaurant")["time"] == "18:30"


def test_a_copied_example_starts_nothing_and_an_invented_value_is_dropped():
    """The issue's turn: the system prompt's example came back as a weather enquiry, a date from a
    catalog description and a boolean nobody said came back as slot values."""
    talk = seed_booking()
    talk.turn("两个人安静一点的，时间改成七点吧。", set_(people=2, quiet=True, time="19:00"),
              start("weather", city="北京"))
    assert talk.stack == ["book_restaurant"] and talk.decision["execute"] is None
    talk.turn("就订老地方粤菜馆吧", set_(restaurant="老地方粤菜馆", date="2026-01-28", private_room=False))
    assert talk.slots("book_restaurant") == {**SEED, "people": 2, "quiet": True, "time": "19:00",
                                             "restaurant": "老地方粤菜馆"}
    assert any("2026-01-28" in d["command"] and d["reason"].startswith("not grounded") for d in talk.decision["dropped"])
    assert talk.decision["next_action"] == "confirm"  # a booking is confirmed before it runs


def test_a_value_from_a_recent_turn_fills_an_empty_slot_but_never_overwrites():
    talk = Talk(TELECOM)
    talk.turn("地址是西湖区文三路259号，我想装宽带", start("install_broadband"))
    talk.turn("要千兆的", set_(plan="千兆", address="西湖区文三路259号"))  # said a turn ago: fine
    assert talk.slots("install_broadband") == {"plan": "千兆", "address": "西湖区文三路259号"}
    talk.turn("地址改成文三路300号", set_(address="文三路300号"))
    talk.turn("上门日期就周六吧", set_(date="周六", address="西湖区文三路259号"))  # the old address again
    assert talk.slots("install_broadband")["address"] == "文三路300号"


def test_a_free_text_value_may_differ_in_wording_never_in_digits():
    assert text_grounded("固话无拨号音", fold("我要报修，故障是固话没有拨号音"))
    assert text_grounded("西湖区文三路259号", fold("装在西湖区文三路259号5幢1201"))
    assert not text_grounded("解放路18号", fold("地址在上城区解放路8号"))
    assert not text_grounded("北京", fold("两个人安静一点的，时间改成七点吧"))


def test_a_deletion_or_change_the_message_does_not_touch_is_dropped():
    talk = Talk(TELECOM)
    talk.turn("我要报修，故障现象是宽带无法上网", start("repair", fault="宽带无法上网"))
    talk.turn("地址在上城区解放路8号", set_(address="上城区解放路8号"))
    talk.turn("电话13788889999", set_(phone="13788889999", address=None, fault="网速慢"))
    assert talk.slots("repair") == {"fault": "宽带无法上网", "address": "上城区解放路8号", "phone": "13788889999"}
    assert len([r for r in talk.reasons() if r.startswith("not grounded")]) == 2
    talk.turn("哦不对，地址我先不填", set_(address=None))  # names the slot: taken away
    assert "address" not in talk.slots("repair")


# ---------------------------------------------------------------- actions


def test_a_task_that_just_ran_does_not_run_again_unless_asked():
    """The issue's repeat: after a bill enquiry ran, the model repeated its start on the next messages."""
    talk = Talk(TELECOM)
    assert talk.turn("帮我查一下话费", start("bill_enquiry"))["next_action"] == "execute"
    for message in ("套餐里包含多少流量", "我要报修，故障是固话没有拨号音"):
        decision = talk.turn(message, start("bill_enquiry"), cmd("faq", question=message))
        assert decision["execute"] is None
        assert "has just run" in " ".join(talk.reasons())
    assert talk.turn("那上个月的话费呢", start("bill_enquiry", month="上个月"))["next_action"] == "execute"
    assert talk.turn("好的，谢谢", start("bill_enquiry", month="上个月"))["execute"] is None
    assert talk.turn("再帮我查一次话费", start("bill_enquiry"))["next_action"] == "execute"  # names it


def test_a_second_start_of_an_open_task_does_not_take_the_focus():
    talk = Talk(TELECOM)
    talk.turn("我想装宽带，千兆的", start("install_broadband", plan="千兆"))
    talk.turn("先帮我报个修，故障是固话没有拨号音", start("repair", fault="固话没有拨号音"))
    talk.turn("地址是拱墅区莫干山路100号", set_(address="拱墅区莫干山路100号"), start("install_broadband", plan="千兆"))
    assert talk.stack == ["install_broadband", "repair"]  # the repair keeps the focus
    assert talk.slots("repair")["address"] == "拱墅区莫干山路100号"


def test_only_the_users_yes_confirms():
    talk = seed_booking()
    talk.turn("就订老地方粤菜馆吧", set_(restaurant="老地方粤菜馆"))
    assert talk.turn("装修风格怎么样？", cmd("confirm"), cmd("faq", question="装修"))["execute"] is None
    assert talk.turn("不对，我再想想", cmd("confirm"))["execute"] is None
    assert talk.turn("没问题，就这样订", cmd("confirm"))["next_action"] == "execute"


def test_a_change_that_could_not_be_applied_withdraws_the_confirmation():
    """The 1.5B model on en_booking: asked to confirm, the user named another restaurant, the model read
    it as a new route (refused: nothing of it was said), the engine asked the same question again and
    the next "Yes, book it" ran the old restaurant. Now the reply says nothing changed and asks what to
    change; a yes then gets a fresh confirmation question, and only a yes to that runs the booking."""
    talk = seed_booking()
    assert talk.turn("就订老地方粤菜馆吧", set_(restaurant="老地方粤菜馆"))["next_action"] == "confirm"
    decision = talk.turn("还是换成海底捞吧", start("plan_route", origin="家", destination="公司"))
    assert decision["next_action"] == "ask_slot" and decision["execute"] is None
    assert "没能确定您要修改什么" in decision["question"] and "老地方粤菜馆" in decision["question"]
    decision = talk.turn("好的，订吧", cmd("confirm"))
    assert decision["next_action"] == "confirm" and decision["execute"] is None
    assert "nothing has been shown for confirmation yet" in talk.reasons()
    assert talk.turn("对，就这样订", cmd("confirm"))["execute"]["slots"]["restaurant"] == "老地方粤菜馆"


def test_a_question_during_confirmation_keeps_it_even_when_a_stray_change_is_refused():
    """An FAQ is understood, so the stray change beside it costs no extra question."""
    talk = seed_booking()
    talk.turn("就订老地方粤菜馆吧", set_(restaurant="老地方粤菜馆"))
    decision = talk.turn("餐厅有停车位吗", set_(people=5), cmd("faq", question="停车位"))
    assert decision["next_action"] == "faq" and "确认办理吗" in decision["question"]
    assert talk.turn("没问题，就这样订", cmd("confirm"))["next_action"] == "execute"


def test_cancel_and_reset_need_the_words():
    talk = seed_booking()
    talk.turn("餐厅有停车位吗", cmd("cancel_task", task="book_restaurant"), cmd("reset"))
    assert talk.stack == ["book_restaurant"]
    talk.turn("算了，不订了", cmd("cancel_task", task="book_restaurant"))
    assert talk.stack == []


def test_a_new_task_named_by_its_examples_starts():
    talk = Talk(TELECOM, "ask")
    talk.turn("我家网从昨天开始就连不上了", start("repair", fault="宽带连接失败"))
    assert talk.stack == ["repair"]  # "连不"+"不上" are words of its example "宽带连不上"
    assert talk.decision["next_action"] == "confirm" and "宽带连接失败" in talk.decision["question"]


# ---------------------------------------------------------------- one outcome per slot and turn


def test_contradictory_commands_on_a_slot_resolve_to_the_last_and_say_only_that():
    """The issue's turn: clear, roll back, set, clear in one message; the reply said the address was
    restored while the final state had none."""
    talk = Talk(TELECOM)
    talk.turn("我要报修，故障现象是宽带无法上网", start("repair", fault="宽带无法上网"))
    talk.turn("地址在上城区解放路8号", set_(address="上城区解放路8号"))
    decision = talk.turn("哦不对，地址我先不填，等我问问房东", set_(address=None), cmd("rollback_slot", slot="address"),
                         set_(address="上城区解放路8号"), set_(address=None))
    assert "address" not in talk.slots("repair")
    assert decision["notices"] == [] and "已将" not in decision["question"]
    assert decision["question"] == "请问报修地址是哪里？"
    talk.turn("还是用原来那个地址吧", cmd("rollback_slot", slot="address"))  # one step back: the value before
    assert talk.slots("repair")["address"] == "上城区解放路8号"


def test_a_change_undone_in_the_same_message_changes_nothing_and_cascades_nothing():
    talk = Talk(TELECOM)
    talk.turn("办个百兆宽带，装在文三路1号", start("install_broadband", plan="百兆", address="文三路1号"))
    talk.turn("再租个路由器，AX3000", start("router_rental", model="AX3000"))
    before = load_state(talk.state)[0]["task_stack"]
    talk.turn("地址改成文三路2号，哦不，还是文三路1号", set_(address="文三路2号"), set_(address="文三路1号"))
    after = load_state(talk.state)[0]["task_stack"]
    assert [t["name"] for t in after] == ["router_rental", "install_broadband"]  # the router was not cancelled
    assert after[-1]["history"] == before[-1]["history"] and talk.decision["notices"] == []


# ---------------------------------------------------------------- the "ask" policy


def test_ask_policy_holds_an_unsaid_value_until_the_user_says_yes():
    talk = Talk(TELECOM, "ask")
    talk.turn("我要报修，故障是固话没有拨号音", start("repair", fault="固话没有拨号音", address="北京市朝阳区"))
    assert talk.slots("repair") == {"fault": "固话没有拨号音"}
    assert talk.decision["next_action"] == "confirm"
    assert talk.decision["question"] == "想跟您核对一下：报修地址：北京市朝阳区，对吗？"
    talk.turn("不对", cmd("deny"))
    assert talk.slots("repair") == {"fault": "固话没有拨号音"} and talk.decision["slot"] == "address"
    talk.turn("拱墅区", start("repair", address="北京市朝阳区"))  # held again, then not answered
    talk.turn("你们几点下班", cmd("faq", question="几点下班"))
    assert "address" not in talk.slots("repair")
    talk.turn("拱墅区莫干山路100号", set_(address="莫干山路100号拱墅区"))
    talk.turn("是的", cmd("confirm"))
    assert talk.slots("repair")["address"] == "莫干山路100号拱墅区"


# ---------------------------------------------------------------- off without a message


def test_without_a_message_every_valid_command_applies():
    state, decision = step("", {"commands": [start("weather", city="北京")]}, DEFAULT)
    assert decision["next_action"] == "execute" and decision["execute"]["slots"] == {"city": "北京"}


# ---------------------------------------------------------------- the normalisations


@pytest.mark.parametrize("text, times", [
    ("晚上七点", {"19:00"}), ("8点", {"08:00", "20:00"}), ("下午三点半", {"15:30"}), ("中午12点", {"12:00"}),
    ("19:30", {"19:30"}), ("7 pm", {"19:00"}), ("早上8点一刻", {"08:15"}),
])
def test_clock_times(text, times):
    assert times <= times_in(text)


def test_numbers_dates_and_shifts():
    assert {2.0, 12.0, 3.0} <= numbers_in("两位，十二号，3人") and 25.0 in numbers_in("二十五")
    day = date(2026, 12, 1)
    assert {"2026-12-02", "2026-12-03", "2026-12-09", "2026-11", "2026-12", "2026-03-05"} <= \
        dates_in("明天还是后天，下周三，上个月和这个月，3月5号", day)
    assert "2026-12-04" in dates_in("周五", day) and "2026-12-11" in dates_in("周五", day)
    assert durations_in("提前一小时") == ({60}, {-1}) and durations_in("推迟半个小时") == ({30}, {1})
    catalog = load_catalog(TELECOM)
    month = catalog.tasks["bill_enquiry"].slots["month"]
    assert value_grounded(month, "2026-11", make_evidence("上个月的话费", (), "2026-12-01"))
    assert not value_grounded(month, "2026-01", make_evidence("上个月的话费", (), "2026-12-01"))


def test_yes_no_words():
    assert confirm_grounded(make_evidence("没问题，就这样办吧")) and confirm_grounded(make_evidence("OK, go ahead"))
    assert not confirm_grounded(make_evidence("不对")) and not confirm_grounded(make_evidence("装好以后网速不达标怎么办"))
    assert not confirm_grounded(make_evidence("I know it"))  # "no" inside a word is not a no, nor a yes


def test_a_task_is_named_by_its_distinctive_words():
    catalog = load_catalog(DEFAULT)
    assert task_mentioned(catalog.tasks["weather"], catalog, fold("那边天气怎么样"))
    assert not task_mentioned(catalog.tasks["weather"], catalog, fold("两个人安静一点的，时间改成七点吧"))
    assert not task_mentioned(catalog.tasks["account_balance"], catalog, fold("查询一下"))  # 查询 is two tasks'


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.text(max_size=40))
def test_grounding_never_raises_and_a_said_value_is_grounded(message, value):
    catalog = load_catalog(TELECOM)
    ev = make_evidence(message + value, (message,), "2026-12-01")
    for spec in catalog.tasks["install_broadband"].slots.values():
        value_grounded(spec, value, ev)
    times_in(message), dates_in(message, date(2026, 12, 1)), numbers_in(message), durations_in(message)
    if fold(value):  # said as a word of its own (a value glued to a number or word may read differently)
        said = message + " " + value
        assert text_grounded(value, fold(said), said)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([
    start("repair", fault="网断了"), set_(address="文三路1号"), set_(address=None), set_(phone="13800000000"),
    cmd("rollback_slot", slot="address"), cmd("confirm"), cmd("cancel_task"), start("bill_enquiry"),
]), max_size=6), st.sampled_from(["网断了，地址文三路1号", "好的", "电话13800000000", "不要了", "还是原来的地址"]))
def test_any_commands_any_message_leave_a_sound_state(commands, message):
    talk = Talk(TELECOM)
    talk.turn("我要报修，网断了", start("repair", fault="网断了"))
    talk.turn(message, *commands)
    state, errors = load_state(talk.state)
    assert not errors and talk.decision.get("error") is None
    for task in state["task_stack"]:
        for name, value in task["slots"].items():  # every stored value was said at some point
            assert fold(str(value)) in fold("我要报修，网断了" + message)


def test_slots_for_a_task_that_is_not_open_are_a_start_checked_as_one():
    talk = Talk(TELECOM)
    talk.turn("帮我查一下话费", start("bill_enquiry"))
    assert talk.turn("好的谢谢", {"type": "set_slots", "task": "bill_enquiry", "slots": {"month": "本月"}})["execute"] is None
    decision = talk.turn("那这个月的呢", {"type": "set_slots", "task": "bill_enquiry", "slots": {"month": "这个月"}})
    assert decision["next_action"] == "execute" and decision["execute"]["slots"] == {"month": "这个月"}


def test_a_time_in_the_users_words_is_stored_as_the_clock_time_it_names():
    talk = Talk(DEFAULT)
    talk.turn("周日中午想订个位子，4个人", start("book_restaurant", date="周日", time="中午", people=4))
    assert talk.slots("book_restaurant") == {"date": "周日", "time": "12:00", "people": 4}
    talk.turn("改到晚上七点", set_(time="晚上七点"))
    assert talk.slots("book_restaurant")["time"] == "19:00"
    talk.turn("改到八点", set_(time="8点"))  # the model's "8点" is 08:00 or 20:00: it is not guessed from it...
    # ...but the message's hour, said without morning or evening, keeps the half of the day of 19:00, and the
    # engine reads it for the task's only time slot when the model gave nothing usable (dskit.turn.backup)
    assert talk.slots("book_restaurant")["time"] == "20:00"
    assert any(a.startswith("backup ") for a in talk.decision["applied"])


def test_the_same_words_for_several_slots_fill_none_of_them():
    talk = Talk(TELECOM)
    talk.turn("我要报修，宽带特别慢", start("repair", address="宽带特别慢", fault="宽带特别慢"))
    assert talk.stack == ["repair"] and talk.slots("repair") == {}
    assert talk.decision["slot"] == "address"
    talk.turn("余杭区文一西路969号", set_(address="余杭区文一西路969号", fault="余杭区文一西路969号"))
    assert talk.slots("repair") == {"address": "余杭区文一西路969号"}  # the slot asked last turn gets it


def test_a_take_back_never_empties_a_value_given_long_ago():
    """The 1.5B model answered "算了，人数还是按原来的吧" with a rollback after its change of the head
    count had been dropped: the only older value was empty, and the booking lost its head count."""
    talk = Talk(DEFAULT)
    talk.turn("周日中午想订个位子，4个人", start("book_restaurant", date="周日", time="12:00", people=4))
    talk.turn("最好是西区", set_(area="西区"))
    talk.turn("算了，人数还是按原来的吧", cmd("rollback_slot", slot="people"))
    assert talk.slots("book_restaurant")["people"] == 4
    talk.turn("再加个包间", set_(private_room=True))
    talk.turn("算了，包间不要了，撤回", cmd("rollback_slot", slot="private_room"))  # given last turn: taken back
    assert "private_room" not in talk.slots("book_restaurant")


def test_a_command_named_after_a_task_starts_it():
    state, decision = step("", {"commands": [{"type": "weather", "slots": {"city": "深圳"}}]}, DEFAULT)
    assert decision["next_action"] == "execute" and decision["execute"]["slots"] == {"city": "深圳"}


def test_a_clock_time_folded_into_the_date_goes_to_the_time_slot():
    """The 1.5B model wrote "周日中午" and "周五晚上8点" as the date and left the time empty."""
    talk = Talk(DEFAULT)
    talk.turn("帮我订周五晚上8点，三个人", start("book_restaurant", date="周五晚上8点", people=3))
    assert talk.slots("book_restaurant") == {"date": "周五", "time": "20:00", "people": 3}
    talk.turn("改到周日中午吧", set_(date="周日中午"))
    assert talk.slots("book_restaurant") == {"date": "周日", "time": "12:00", "people": 3}
    talk.turn("周六，晚上七点", set_(date="周六晚上七点", time="19:30"))  # the time given too: the date is trimmed
    # 19:30 is unsaid; the one clock time the message states is what the model meant (admission.said_instead);
    # the date keeps only the date's words (issue 40: one thing the user said fills one slot)
    assert talk.slots("book_restaurant") == {"date": "周六", "time": "19:00", "people": 3}
    talk.turn("周日，上午十点或者十一点", set_(time="19:30"))  # two times said: which one is unknown
    assert talk.slots("book_restaurant")["time"] == "19:00"


def test_an_hour_said_without_morning_or_evening_keeps_the_half_of_the_day():
    """Seed 000's "时间改成七点吧" after 晚上8点: the 1.5B model wrote 7:00, and the booking ran for
    seven in the morning after the user confirmed what was shown (held-out run, 2026-12-01)."""
    talk = seed_booking()
    talk.turn("两个人安静一点的，时间改成七点吧。", set_(people=2, quiet=True, time="7:00"))
    assert talk.slots("book_restaurant")["time"] == "19:00"
    talk.turn("改成早上七点", set_(time="07:00"))  # said: morning
    assert talk.slots("book_restaurant")["time"] == "07:00"
    talk.turn("还是九点吧", set_(time="21:00"))  # 07:00 -> nine: the morning's nine
    assert talk.slots("book_restaurant")["time"] == "09:00"


@pytest.mark.parametrize("text, times", [
    ("half past seven in the evening", {"19:30"}), ("quarter to eight tonight", {"19:45"}),
    ("seven o'clock", {"07:00", "19:00"}), ("a table for six on thursday", set()),
])
def test_spoken_english_clock_times(text, times):
    assert times_in(text) == times


def test_a_new_task_whose_values_are_mostly_unsaid_does_not_start():
    """en_errands: "Forget that booking. Make it Saturday at 6pm instead, for three" came back as a
    route from "home" to "work" on Saturday; only "Saturday" was said, and the route was confirmed
    and ran. A new task the message does not name needs most of its values said."""
    talk = Talk(DEFAULT)
    talk.turn("周六下午6点，三个人", start("plan_route", origin="家", destination="公司", date="周六"))
    assert talk.stack == [] and any("most of its values" in r for r in talk.reasons())
    talk.turn("周六下午6点，三个人", start("book_restaurant", date="周六", time="18:00", people=3, quiet=False))
    assert talk.slots("book_restaurant") == {"date": "周六", "time": "18:00", "people": 3}


def test_english_values_are_matched_by_their_words_and_labels_by_their_own_words():
    """en_errands on the 1.5B model: "book us a table for two tomorrow at 1pm" stored area
    "downtown" (its letters are in any English sentence) and quiet=false ("table" is in the slot's
    label "quiet table", and in the task's own), and the booking ran with both after a yes."""
    catalog = load_catalog(json.loads((Path(__file__).resolve().parents[1]
                                       / "examples/eval/catalogs/restaurant_travel_en.json").read_text("utf-8")))
    task = catalog.tasks["book_restaurant"]
    message = "What's the weather in Boston tomorrow? Also book us a table for two tomorrow at 1pm"
    ev = make_evidence(message)
    assert not value_grounded(task.slots["area"], "downtown", ev)
    assert not value_grounded(task.slots["quiet"], False, ev, common=common_words(task, "quiet"))
    assert value_grounded(task.slots["quiet"], True, make_evidence("a quiet one please"), common=common_words(task, "quiet"))
    assert value_grounded(task.slots["restaurant"], "Harbor Grill", make_evidence("the harbor grill on 5th, please"))
    assert not text_grounded("Harbor Grill", fold("a grill near the harbour"))


def test_a_value_of_another_slot_does_not_fill_a_free_text_slot():
    """zh_booking_table on the 1.5B model: "最好在城东，想吃川菜" came back as date="城东"; the
    booking ran for the date 城东 after a yes. 城东 is an alias of the area 东区."""
    talk = Talk(DEFAULT)
    talk.turn("周六晚上想订个位子，八点左右，我们五个人", start("book_restaurant", time="20:00", people=5))
    talk.turn("最好在城东，想吃川菜", set_(date="城东", cuisine="川菜"))
    # never the date; the value is the area's, and said, so it goes there (issue 20: say it once); the date
    # the model left out of the start is the one the user said (round 43: read by its form)
    assert talk.slots("book_restaurant") == {"date": "周六", "time": "20:00", "people": 5, "cuisine": "川菜",
                                             "area": ["东区"]}
    assert any(a.startswith("refile t1.date->area") for a in talk.decision["applied"])


def test_a_clock_time_given_to_the_date_is_the_time_slots():
    """zh_booking_table on the 1.5B model: after "周六晚上想订个位子，八点左右", "那就要个包间，安静点的"
    came back with date "20:00" — grounded by the earlier 八点 — and the booking ran for the date 20:00
    after a yes."""
    talk = Talk(DEFAULT)
    talk.turn("周六晚上想订个位子，八点左右，我们五个人", start("book_restaurant", time="20:00", people=5))
    talk.turn("那就要个包间，安静点的", set_(date="20:00", private_room=True, quiet=True))
    assert talk.slots("book_restaurant") == {"date": "周六", "time": "20:00", "people": 5, "private_room": True,
                                             "quiet": True}  # the date as the user said it, never 20:00
    assert any(a.startswith("refile t1.date->time") for a in talk.decision["applied"])  # the time's, not the date's
