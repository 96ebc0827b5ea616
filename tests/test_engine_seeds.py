"""The seeds' own tables, turn by turn: the first tests the engine must pass.

Seed 000 (LLM DST): the restaurant booking whose state table has four rows; "提前一小时吧".
Seed 003 (Dify state machine): the five-turn travel dialogue with a task stack, an FAQ interruption,
the guard that refuses to buy insurance with the high-risk question open, and the cascade when the
destination changes. The understandings are what a model following our prompt returns for each
utterance (scripted: these tests check the engine, not a model).
"""

from __future__ import annotations

from enginekit import Dialogue, cmd, set_, start

# Seed 000, §1.1: | 轮次 | 日期 | 时间 | 人数 | 区域 | 其他 |
SEED000_TABLE = [
    {"date": "周五", "time": "20:00", "people": 3, "area": ["市中心"], "cuisine": "粤菜"},
    {"date": "周五", "time": "20:00", "people": 3, "area": ["市中心"], "cuisine": "粤菜"},
    {"date": "周五", "time": "20:00", "people": 3, "area": ["市中心"], "cuisine": "粤菜", "private_room": True},
    {"date": "周五", "time": "19:00", "people": 2, "area": ["市中心"], "cuisine": "粤菜", "private_room": True,
     "quiet": True},
]


def test_seed000_state_table_turn_by_turn(restaurant):
    d = Dialogue(restaurant)
    # 用户：帮我订周五晚上8点，三个人，市中心（老牌粤菜）
    d.say(start("book_restaurant", date="周五", time="20:00", people=3, area="市中心", cuisine="粤菜"))
    assert d.slots() == SEED000_TABLE[0]
    # Row 2 is the assistant's turn ("还需要选一家餐厅"): no user input, so the state must not move.
    assert d.decision["next_action"] == "ask_slot" and d.decision["slot"] == "restaurant"
    assert "请问您想订哪家餐厅？" in d.decision["question"]
    assert d.slots() == SEED000_TABLE[1]
    # 用户：如果有包间就更好了。
    d.say(set_(private_room=True))
    assert d.slots() == SEED000_TABLE[2]
    # 用户：两个人安静一点的，时间改成七点吧。 (three changes in one dense sentence)
    d.say(set_(people=2, quiet=True, time="19:00"))
    assert d.slots() == SEED000_TABLE[3]
    assert d.state["task_stack"][0]["history"]["time"] == [None, "20:00"]


def test_seed000_advance_one_hour_keeps_everything_else(restaurant):
    """"提前一小时吧": the model only says the new time; nothing unmentioned may drift away."""
    d = Dialogue(restaurant)
    d.say(start("book_restaurant", date="周五", time="20:00", people=3, area="市中心"))
    d.say(set_(time="19:00"), query="把周五晚上8点的订餐提前一小时，改为19:00")
    assert d.slots() == {"date": "周五", "time": "19:00", "people": 3, "area": ["市中心"]}
    assert d.decision["rewritten_query"].startswith("把周五")


def test_seed000_invalid_values_dropped_one_by_one(restaurant):
    """Seed 000 §5.3: a schema violation drops that one item, never the whole update."""
    d = Dialogue(restaurant)
    d.say(start("book_restaurant", date="周五", people=0, area="北区", time="8点半"))
    assert d.slots() == {"date": "周五"}
    reasons = " | ".join(x["reason"] for x in d.decision["dropped"])
    assert "people" in reasons and "area" in reasons and "time" in reasons


def test_seed003_five_turns(travel):
    d = Dialogue(travel)
    # 01 “下周三我想从成都开车去拉萨。” -> route planning opened, stack [route], lock LOCKED.
    d.say(start("plan_route", origin="成都", destination="拉萨", date="2026-01-28", mode="开车"))
    s = d.state
    assert [t["name"] for t in s["task_stack"]] == ["plan_route"]
    route_id = s["current_task_id"]
    assert s["global_intent_lock"] == "LOCKED"
    assert d.slots() == {"origin": "成都", "destination": "拉萨", "date": "2026-01-28", "mode": "自驾"}

    # 02 “那边现在冷吗？推荐个保险吧。” -> insurance pushed on top, COLLECTING, high_risk_confirm empty.
    d.say(start("travel_insurance", insurance_type="旅游险"))
    s = d.state
    assert d.stack() == [("plan_route", "SUSPENDED"), ("travel_insurance", "COLLECTING")]
    insurance_id = s["current_task_id"]
    assert insurance_id != route_id
    assert "high_risk_confirm" not in d.slots("travel_insurance")
    assert s["task_stack"][1]["parent_id"] == route_id

    # 03 “会有高原反应吗？保险管这个吗？” -> FAQ; the current task and its id do not change.
    before = d.state["task_stack"]
    d.say(cmd("faq", question="去拉萨会有高原反应吗？旅游险保障吗？"))
    assert d.decision["next_action"] == "faq"
    assert d.state["current_task_id"] == insurance_id
    assert d.state["task_stack"] == before
    assert "请确认是否包含攀登等高风险运动？" in d.decision["question"]  # back to the open question

    # 04 “行，那买一份吧。” -> the model says confirm; the guard refuses and asks the high-risk question.
    d.say(cmd("confirm"))
    assert d.decision["next_action"] == "ask_slot"
    assert d.decision["slot"] == "high_risk_confirm"
    assert "请确认是否包含攀登等高风险运动？" in d.decision["question"]
    assert d.top["stage"] == "COLLECTING"
    assert any("high_risk_confirm" in x["reason"] for x in d.decision["dropped"])

    # 05 “不去了，改去三亚，那边暖和。” -> destination changes; the plateau insurance is dropped; route resumes.
    d.say(set_("plan_route", destination="三亚"))
    s = d.state
    assert [t["name"] for t in s["task_stack"]] == ["plan_route"]
    assert s["current_task_id"] == route_id
    assert d.slots("plan_route")["destination"] == "三亚"
    assert d.decision["resumed"]["task_id"] == route_id
    assert "旅游保险" in d.decision["question"] and "三亚" in d.decision["question"]
    assert d.decision["next_action"] == "confirm"
