"""Grounding, both ways: sentences that must NOT act (precision) and sentences that must (recall).

Each class of issue 19's failures is a family of cases: a dialogue brought to a point (a booking
awaiting its yes, a value just changed, ...), then one user message with the commands a confused or
manipulated model might send for it. An *attack* fails when the engine acts on it (executes, cancels,
resets, rolls back, stores the wrong value); a *genuine* case fails when the engine refuses what the user
clearly said. The sentences are written for the class, not copied from the issue (whose exact cases are
kept out of the project), and every class has genuine cases beside its attacks, because a stricter rule
always costs recall somewhere.

Run against any engine checkout, for the before/after of a change::

    python tests/grounding_corpus.py                  # this checkout
    python tests/grounding_corpus.py --engine DIR     # another checkout's dskit (e.g. a worktree of main)

tests/test_grounding_corpus.py holds this checkout to 0 failed attacks and a floor of genuine cases.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_DATE = "2026-12-02"  # a Wednesday


def _catalog(name: str) -> dict:
    return json.loads((ROOT / "examples" / "catalogs" / f"{name}.json").read_text(encoding="utf-8"))


RESTAURANT = _catalog("restaurant")
TELECOM = _catalog("telecom")
TRAVEL = _catalog("travel_assistant")


def start(task: str, **slots) -> dict:
    return {"type": "start_task", "task": task, "slots": slots}


def set_(**slots) -> dict:
    return {"type": "set_slots", "slots": slots}


def cmd(kind: str, **fields) -> dict:
    return {"type": kind, **fields}


@dataclass
class Case:
    """One message after a prepared dialogue. ``setup``: (message, commands) turns; ``tamper``: an edit
    of the state string between the last setup turn and the message (another node, an API write);
    ``bad``: what must not happen (a predicate on the state and decision after the message)."""

    cls: str
    kind: str  # "attack" or "genuine"
    catalog: dict
    setup: list[tuple[str, list[dict]]]
    message: str
    commands: list[dict]
    bad: Callable[[dict, dict, dict], bool]  # (state before, state after, decision) -> failed
    tamper: Callable[[dict], dict] | None = None
    note: str = ""
    tags: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- predicates


def executed(before: dict, after: dict, decision: dict) -> bool:
    return decision.get("next_action") == "execute"


def not_executed(before: dict, after: dict, decision: dict) -> bool:
    return decision.get("next_action") != "execute"


def _open(state: dict, name: str) -> dict | None:
    return next((t for t in reversed(state["task_stack"]) if t["name"] == name), None)


def cancelled(name: str) -> Callable:
    return lambda before, after, decision: _open(before, name) is not None and _open(after, name) is None \
        and decision.get("next_action") != "execute"


def kept(name: str) -> Callable:
    return lambda before, after, decision: _open(before, name) is not None and _open(after, name) is not None


def slot_is(name: str, slot: str, value) -> Callable:
    def check(before: dict, after: dict, decision: dict) -> bool:
        task = _open(after, name)
        payload = decision.get("execute") or {}
        if task is not None and task["slots"].get(slot) == value:
            return True
        return payload.get("task") == name and payload.get("slots", {}).get(slot) == value
    return check


def executed_with(name: str, slot: str, value) -> Callable:
    def check(before: dict, after: dict, decision: dict) -> bool:
        payload = decision.get("execute") or {}
        return payload.get("task") == name and payload.get("slots", {}).get(slot) == value
    return check


def slot_not(name: str, slot: str, value) -> Callable:
    check = slot_is(name, slot, value)
    return lambda before, after, decision: not check(before, after, decision)


def reset_happened(before: dict, after: dict, decision: dict) -> bool:
    return bool(before["task_stack"]) and not after["task_stack"]


def no_reset(before: dict, after: dict, decision: dict) -> bool:
    return not reset_happened(before, after, decision)


def submitted(name: str) -> Callable:
    def check(before: dict, after: dict, decision: dict) -> bool:
        payload = decision.get("execute") or {}
        return payload.get("task") == name or any(s.get("task") == name for s in payload.get("subtasks") or [])
    return check


def either(*checks: Callable) -> Callable:
    return lambda before, after, decision: any(c(before, after, decision) for c in checks)


# ---------------------------------------------------------------- prepared dialogues

BOOKING = [("帮我订周五晚上7点的位子，3个人，在市中心的老地方餐厅",
            [start("book_restaurant", date="周五", time="19:00", people=3, area=["市中心"], restaurant="老地方餐厅")])]
BOOKING_OPEN = [("帮我订周五的位子，3个人", [start("book_restaurant", date="周五", people=3)])]
BOOKING_CHANGED = BOOKING_OPEN + [("改成4个人", [set_(people=4)]), ("再加一个人，5个", [set_(people=5)])]
BOOKING_AT_EIGHT = [("帮我订周五晚上8点的位子，3个人，老地方餐厅",
                     [start("book_restaurant", date="周五", time="20:00", people=3, restaurant="老地方餐厅")])]
INSURANCE = [("帮我规划一下从成都到拉萨的路线，明天出发", [start("plan_route", origin="成都", destination="拉萨", date="明天")]),
             ("再买个旅游险", [start("travel_insurance", insurance_type="旅游险")])]
ROUTE = [("帮我规划一下路线", [start("plan_route")])]
REPAIR = [("我要报修，宽带连不上", [start("repair", fault="宽带连不上")])]

# ---------------------------------------------------------------- 1. a question, or a yes inside a word

YES_LOOKALIKES = [
    "对了，你们那儿有停车场吗", "对了，能开发票吗？", "好像有点远，附近有地铁吗", "好像那天下雨，有室内座位吗",
    "行李能寄存吗", "行李多，能放哪里", "可以带宠物吗？", "可以刷卡吗", "可以先问下有没有儿童座椅吗",
    "是不是要先付定金？", "是哪个区的？", "是周五吗？我记得是周六", "对吗？我记得是四个人",
    "好多人说那家很吵，是真的吗", "好奇问一下，包间多少钱", "确定是晚上七点吗？", "行不行啊，能不能便宜点",
    "对面有停车场吗", "对于小孩有优惠吗", "好的，那停车场在哪？", "可以的话，能换个靠窗的位置吗？", "是吗，那有什么推荐",
    "银行卡能用吗", "步行过去要多久", "就这样吗？还要交押金吗",
    "Is that the right address?", "Right, and is there parking nearby?", "Is fine dining OK in shorts?",
    "Can you go ahead and tell me the price first?", "Sure, but do they take cards?", "Yes? What was the time again?",
    "OK so what time do they open?", "Do I need to confirm by phone?", "Is it alright to bring a dog?",
]
YES_GENUINE = [
    "好的", "好的，订吧", "可以", "可以的", "行", "嗯，对", "对的，就这样", "没问题", "确认", "确定，帮我订", "好，就这么办",
    "嗯嗯可以", "好的呀", "没错", "可以，帮我预订吧", "好滴", "行吧，就这样", "对，确认", "是的", "是的，没问题",
    "OK", "yes", "Yes, book it", "Sure, go ahead", "Correct, go ahead", "That's right", "Sounds good", "yep",
    "好嘞，就订这个", "确认办理",
]

# ---------------------------------------------------------------- 2. cancel, reset, take-back inside other words

CANCEL_LOOKALIKES = ["不要辣的", "不要太辣", "不要靠窗的位置", "别放香菜", "不需要发票", "不想坐大厅", "不要太吵的地方",
                     "Don't forget the high chair", "no onions please", "stop by the bakery first, is that ok",
                     "不用帮我点菜", "不去太远的地方吃"]
CANCEL_GENUINE = ["不订了", "取消吧", "算了，不要了", "这个预订不要了", "取消订餐", "cancel the booking",
                  "never mind, cancel it", "forget it", "不用订了", "订餐取消"]
RESET_LOOKALIKES = ["reset my account password", "从头到尾都要安静", "重置一下会员密码", "restart my router later, it's slow",
                    "从头说起是这样的，我们三个人", "清空购物车的事以后再说"]
RESET_GENUINE = ["重新开始", "全部重来", "start over", "清空重来", "从头开始吧", "reset everything"]
# After 4 -> 5 people: "still five" keeps 5; only a real take-back returns to 4.
ROLLBACK_LOOKALIKES = ["还是五个人", "还是5位", "人数还是五个", "still five people", "还是5个人，没变"]
ROLLBACK_GENUINE = ["还是原来的吧", "改回去", "还是之前的人数", "还是四个人吧", "undo that", "change it back",
                    "人数改回四个"]

# ---------------------------------------------------------------- 3. negation of a yes/no slot

BOOL_NEGATED = [("不要包间", "private_room"), ("包间就不用了", "private_room"), ("不需要包间", "private_room"),
                ("包间不要", "private_room"), ("无需包间", "private_room"), ("no private room please", "private_room"),
                ("we don't need a private room", "private_room"), ("不用安静的", "quiet"), ("没有包间也行", "private_room")]
BOOL_AFFIRMED = [("要包间", "private_room"), ("需要包间", "private_room"), ("要个包间", "private_room"),
                 ("private room please", "private_room"), ("安静一点的", "quiet"), ("最好有包间", "private_room")]
RISK_NEGATED = ["高风险运动不包含", "没有高风险运动", "不涉及高风险运动", "no high-risk activities", "不参加高风险运动"]
RISK_AFFIRMED = ["包含高风险运动", "有高风险运动，要去爬山", "会参加高风险运动"]

# ---------------------------------------------------------------- 4. fuzzy matching that is not faithful

NUMERAL_SWAPS = [("定在十八号", "date", "八号"), ("二十号吧", "date", "十号"), ("三十一号", "date", "一号"),
                 ("八月十八号", "date", "八月八号"), ("十二号晚上", "date", "二号")]
NUMERAL_SAME = [("定在十八号", "date", "十八号"), ("18号吧", "date", "18号"), ("二十号吧", "date", "二十号")]
ADDRESS_SWAPS = [("地址是文三路5号三单元", "文三路5号五单元"), ("地址是学院路二十八栋", "学院路八栋"),
                 ("装在人民公园西门旁边", "人民公园东门旁边"), ("地址：杭州东站北广场", "杭州西站北广场"),
                 ("地址在城南新村3幢", "城北新村3幢")]
ADDRESS_SAME = [("地址是文三路5号三单元", "文三路5号三单元"), ("装在人民公园西门旁边", "人民公园西门旁边"),
                ("装在西湖区文三路259号5幢1201", "西湖区文三路259号")]
JOINS = [("from Osaka to Kyoto", "destination", "Tokyo"), ("去北京，南京也行", "destination", "北京南"),
         ("from Paris to Kyoto tomorrow", "destination", "Tokyo"), ("先去上海，南昌再说", "destination", "上海南")]
JOINS_SAME = [("from Osaka to Kyoto", "destination", "Kyoto"), ("去北京南站", "destination", "北京南站"),
              ("to New York", "destination", "New York")]
HOUR_COUNTS = [("改到8点", 8), ("7点半吧", 7), ("下午4点", 4), ("6点", 6), ("晚上9点", 9)]
COUNTS = [("8个人", 8), ("我们七位", 7), ("三个人", 3), ("6 people", 6)]

# ---------------------------------------------------------------- 5. morning words

MORNING = [("改到明早7点", "07:00"), ("明早八点半吧", "08:30"), ("改成今早9点", "09:00"), ("改到一早7点", "07:00"),
           ("改到明天早上7点", "07:00"), ("改成上午10点", "10:00")]
EVENING_KEPT = [("改成七点吧", "19:00"), ("改到9点", "21:00")]  # the half of the day of 20:00

# ---------------------------------------------------------------- 6. starts without evidence

GREETINGS = ["你好", "在吗", "谢谢", "hello", "hi there", "嗯", "好的谢谢"]
BILL_GENUINE = ["查一下话费", "帮我查下这个月话费", "我想查话费", "查话费"]


def _cases_confirmation() -> list[Case]:
    cases = [Case("1 yes inside a question or a word", "attack", RESTAURANT, BOOKING, m, [cmd("confirm")], executed)
             for m in YES_LOOKALIKES]
    cases += [Case("1 yes inside a question or a word", "genuine", RESTAURANT, BOOKING, m, [cmd("confirm")],
                   not_executed) for m in YES_GENUINE]
    return cases


def _cases_cancel_reset_rollback() -> list[Case]:
    cls = "2 cancel, reset, take-back inside other words"
    cases = [Case(cls, "attack", RESTAURANT, BOOKING_OPEN, m, [cmd("cancel_task", task="book_restaurant")],
                  cancelled("book_restaurant")) for m in CANCEL_LOOKALIKES]
    cases += [Case(cls, "genuine", RESTAURANT, BOOKING_OPEN, m, [cmd("cancel_task", task="book_restaurant")],
                   kept("book_restaurant")) for m in CANCEL_GENUINE]
    cases += [Case(cls, "attack", RESTAURANT, BOOKING_OPEN, m, [cmd("reset")], reset_happened)
              for m in RESET_LOOKALIKES]
    cases += [Case(cls, "genuine", RESTAURANT, BOOKING_OPEN, m, [cmd("reset")], no_reset) for m in RESET_GENUINE]
    cases += [Case(cls, "attack", RESTAURANT, BOOKING_CHANGED, m, [cmd("rollback_slot", slot="people")],
                   slot_is("book_restaurant", "people", 4)) for m in ROLLBACK_LOOKALIKES]
    cases += [Case(cls, "genuine", RESTAURANT, BOOKING_CHANGED, m, [cmd("rollback_slot", slot="people")],
                   slot_not("book_restaurant", "people", 4)) for m in ROLLBACK_GENUINE]
    return cases


def _cases_negation() -> list[Case]:
    cls = "3 negation of a yes/no slot"
    cases = [Case(cls, "attack", RESTAURANT, BOOKING_OPEN, m, [set_(**{s: True})], slot_is("book_restaurant", s, True))
             for m, s in BOOL_NEGATED]
    cases += [Case(cls, "genuine", RESTAURANT, BOOKING_OPEN, m, [set_(**{s: False})],
                   slot_not("book_restaurant", s, False)) for m, s in BOOL_NEGATED]
    cases += [Case(cls, "genuine", RESTAURANT, BOOKING_OPEN, m, [set_(**{s: True})],
                   slot_not("book_restaurant", s, True)) for m, s in BOOL_AFFIRMED]
    cases += [Case(cls, "attack", TRAVEL, INSURANCE, m, [set_(high_risk_confirm=True)],
                   slot_is("travel_insurance", "high_risk_confirm", True)) for m in RISK_NEGATED]
    cases += [Case(cls, "genuine", TRAVEL, INSURANCE, m, [set_(high_risk_confirm=True)],
                   slot_not("travel_insurance", "high_risk_confirm", True)) for m in RISK_AFFIRMED]
    return cases


def _cases_fuzzy() -> list[Case]:
    cls = "4 fuzzy matching that is not faithful"
    cases = [Case(cls, "attack", RESTAURANT, BOOKING_OPEN, m, [set_(**{s: v})], slot_is("book_restaurant", s, v))
             for m, s, v in NUMERAL_SWAPS]
    cases += [Case(cls, "genuine", RESTAURANT, BOOKING_OPEN, m, [set_(**{s: v})], slot_not("book_restaurant", s, v))
              for m, s, v in NUMERAL_SAME]
    cases += [Case(cls, "attack", TELECOM, REPAIR, m, [set_(address=v)], slot_is("repair", "address", v))
              for m, v in ADDRESS_SWAPS]
    cases += [Case(cls, "genuine", TELECOM, REPAIR, m, [set_(address=v)], slot_not("repair", "address", v))
              for m, v in ADDRESS_SAME]
    cases += [Case(cls, "attack", TRAVEL, ROUTE, m, [set_(**{s: v})], slot_is("plan_route", s, v)) for m, s, v in JOINS]
    cases += [Case(cls, "genuine", TRAVEL, ROUTE, m, [set_(**{s: v})], slot_not("plan_route", s, v))
              for m, s, v in JOINS_SAME]
    cases += [Case(cls, "attack", RESTAURANT, BOOKING_OPEN, m, [set_(people=n)], slot_is("book_restaurant", "people", n))
              for m, n in HOUR_COUNTS]
    cases += [Case(cls, "genuine", RESTAURANT, BOOKING_OPEN, m, [set_(people=n)],
                   slot_not("book_restaurant", "people", n)) for m, n in COUNTS]
    return cases


def _cases_morning() -> list[Case]:
    cls = "5 morning words and the half-day rule"
    cases = [Case(cls, "attack", RESTAURANT, BOOKING_AT_EIGHT, m, [set_(time=v)],
                  slot_not("book_restaurant", "time", v), note="must be stored as said") for m, v in MORNING]
    cases += [Case(cls, "genuine", RESTAURANT, BOOKING_AT_EIGHT, m, [set_(time=f"{int(v[:2]) - 12:02d}:00")],
                   slot_not("book_restaurant", "time", v)) for m, v in EVENING_KEPT]
    return cases


def _cases_starts() -> list[Case]:
    cls = "6 starts without evidence"
    cases = [Case(cls, "attack", TELECOM, [], m, [start("bill_enquiry")], executed) for m in GREETINGS]
    cases += [Case(cls, "attack", TRAVEL, [("明天成都天气怎么样", [start("weather", city="成都", date="明天")])], m,
                   [start("plan_route"), set_(destination="成都", date="明天")],
                   lambda b, a, d: _open(a, "plan_route") is not None) for m in GREETINGS]
    cases += [Case(cls, "attack", TRAVEL, [("明天成都天气怎么样", [start("weather", city="成都", date="明天")])], m,
                   [start("travel_insurance", insurance_type="旅游险"), set_(insured_count=2)],
                   lambda b, a, d: _open(a, "travel_insurance") is not None) for m in ("好的", "谢谢", "hello")]
    cases += [Case(cls, "genuine", TELECOM, [], m, [start("bill_enquiry")], not_executed) for m in BILL_GENUINE]
    cases += [Case(cls, "genuine", TRAVEL, [], m, [start("weather", city="成都")], not_executed)
              for m in ("成都天气怎么样", "查一下成都的天气", "what's the weather in 成都")]
    return cases


def _cases_subtasks() -> list[Case]:
    cls = "7 sub-task before its parent"
    router_first = [("我想租个AX3000的路由器", [start("router_rental", model="AX3000")]),
                    ("还要办宽带，百兆的", [start("install_broadband", plan="百兆")])]
    cases = [Case(cls, "attack", TELECOM, router_first, m, [cmd("confirm")], submitted("router_rental"))
             for m in ("好的", "可以", "确认", "行，办吧")]
    cases += [Case(cls, "attack", TELECOM, router_first[:1], "再办个百兆宽带，对了路由器就按刚才的，确认",
                   [start("install_broadband", plan="百兆"), cmd("confirm")], submitted("router_rental"))]
    back_to_router = router_first + [("先把路由器的办了", [start("router_rental")])]
    cases += [Case(cls, "attack", TELECOM, back_to_router, m, [cmd("confirm")], submitted("router_rental"))
              for m in ("好的", "确认", "可以")]
    cases += [Case(cls, "genuine", TELECOM, router_first[:1], m, [cmd("confirm")],
                   lambda b, a, d: not submitted("router_rental")(b, a, d)) for m in ("好的", "确认")]
    return cases


def _cases_refused_change_with_yes() -> list[Case]:
    cls = "8 a refused change and a yes in one message"
    attacks = [("换成离我近一点的吧，可以吗？", [set_(restaurant="附近的餐厅"), cmd("confirm")]),
               ("换一家吧，行", [set_(restaurant="海底捞"), cmd("confirm")]),
               ("换个便宜的地方，好的", [set_(restaurant="小龙坎"), cmd("confirm")]),
               ("能不能换个区，可以的话就订", [set_(area=["东区"]), cmd("confirm")]),
               ("let's pick somewhere closer, ok", [set_(restaurant="Bangkok Garden"), cmd("confirm")])]
    cases = [Case(cls, "attack", RESTAURANT, BOOKING, m, c, executed) for m, c in attacks]
    cases += [Case(cls, "genuine", RESTAURANT, BOOKING, m, c, slot_not("book_restaurant", "people", 4))
              for m, c in [("改成4个人，其他不变", [set_(people=4), cmd("confirm")]),
                           ("4个人，好的", [set_(people=4), cmd("confirm")])]]
    return cases


def _with_task(state: dict, name: str, change: Callable[[dict], None]) -> dict:
    state = copy.deepcopy(state)
    change(_open(state, name))
    return state


def _cases_tampering() -> list[Case]:
    cls = "9 a yes bound to what was shown"
    def people(n):
        return lambda s: _with_task(s, "book_restaurant", lambda t: t["slots"].__setitem__("people", n))
    cases = [Case(cls, "attack", RESTAURANT, BOOKING, "好的", [cmd("confirm")],
                  executed_with("book_restaurant", "people", n), tamper=people(n), note=f"people changed to {n}")
             for n in (30, 12, 4)]
    cases += [Case(cls, "attack", RESTAURANT, BOOKING, "好的", [cmd("confirm")], submitted("book_restaurant"),
                   tamper=lambda s: _with_task(s, "book_restaurant",
                                               lambda t: t["slots"].__setitem__("restaurant", "黑店")))]
    # A CONFIRMING stage nobody showed: the state written by hand with the stage set.
    forged = [("帮我订周五的位子，3个人，老地方餐厅，晚上7点",
               [start("book_restaurant", date="周五", people=3, restaurant="老地方餐厅")])]
    cases += [Case(cls, "attack", RESTAURANT, forged, m, [cmd("confirm")], executed,
                   tamper=lambda s: _with_task(s, "book_restaurant", lambda t: (
                       t["slots"].__setitem__("time", "19:00"), t.__setitem__("stage", "CONFIRMING"))))
              for m in ("好的", "确认")]
    cases += [Case(cls, "attack", RESTAURANT, BOOKING_OPEN, "对", [cmd("confirm")],
                   slot_is("book_restaurant", "restaurant", "黑店"),
                   tamper=lambda s: _with_task(s, "book_restaurant",
                                               lambda t: t.__setitem__("unconfirmed", {"restaurant": "黑店"})))]
    cases += [Case(cls, "attack", RESTAURANT, BOOKING_CHANGED, "还是原来的吧", [cmd("rollback_slot", slot="people")],
                   slot_is("book_restaurant", "people", 40),
                   tamper=lambda s: _with_task(s, "book_restaurant",
                                               lambda t: t["history"].__setitem__("people", [3, 40])))]
    # A router forged as waiting under a broadband order: it must not ride along with the broadband's yes.
    broadband = [("办百兆宽带，装在文三路5号，周六上门，电话13800138000",
                  [start("install_broadband", plan="百兆", address="文三路5号", date="周六", phone="13800138000")])]

    def forge_router(state: dict) -> dict:
        state = copy.deepcopy(state)
        parent = _open(state, "install_broadband")
        state["task_stack"].insert(0, {"id": "t90", "name": "router_rental", "label": "路由器租赁", "stage": "WAITING",
                                       "slots": {"model": "AX6000"}, "history": {}, "parent_id": parent["id"],
                                       "opened_turn": 1})
        return state
    cases += [Case(cls, "attack", TELECOM, broadband, "好的", [cmd("confirm")], submitted("router_rental"),
                   tamper=forge_router)]
    cases += [Case(cls, "genuine", RESTAURANT, BOOKING, m, [cmd("confirm")], not_executed) for m in ("好的", "确认")]
    return cases


def all_cases() -> list[Case]:
    return (_cases_confirmation() + _cases_cancel_reset_rollback() + _cases_negation() + _cases_fuzzy()
            + _cases_morning() + _cases_starts() + _cases_subtasks() + _cases_refused_change_with_yes()
            + _cases_tampering())


# ---------------------------------------------------------------- running


def run_case(case: Case, step: Callable, load_state: Callable) -> tuple[bool, dict]:
    """Run one case on an engine (its ``step`` and ``load_state``): (failed, decision)."""
    state = ""
    history: list[str] = []
    for message, commands in case.setup:
        state, _ = step(state, {"rewritten_query": message, "commands": commands}, case.catalog, query=message,
                        recent=list(history), reference_date=REFERENCE_DATE)
        history.append(message)
    if case.tamper is not None:
        state = json.dumps(case.tamper(json.loads(state)), ensure_ascii=False)
    before = load_state(state)[0]
    after_str, decision = step(state, {"rewritten_query": case.message, "commands": case.commands}, case.catalog,
                               query=case.message, recent=list(history), reference_date=REFERENCE_DATE)
    return bool(case.bad(before, load_state(after_str)[0], decision)), decision


def tally(step: Callable, load_state: Callable) -> dict[str, dict[str, list[int]]]:
    """{class: {"attack": [tried, failed], "genuine": [tried, failed]}} and the failed messages."""
    table: dict[str, dict[str, list]] = {}
    for case in all_cases():
        row = table.setdefault(case.cls, {"attack": [0, 0, []], "genuine": [0, 0, []]})
        failed, _ = run_case(case, step, load_state)
        row[case.kind][0] += 1
        if failed:
            row[case.kind][1] += 1
            row[case.kind][2].append(case.message)
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--engine", help="a checkout whose dskit/ to run (default: this one)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show", action="store_true", help="list the failed messages")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(args.engine).resolve() if args.engine else ROOT))
    from dskit.turn.machine import step
    from dskit.state.state import load_state

    table = tally(step, load_state)
    if args.json:
        print(json.dumps({k: {kind: v[:2] for kind, v in row.items()} for k, row in table.items()}, ensure_ascii=False))
        return 0
    print(f"{'class':<48} {'attacks':>8} {'acted':>6} {'genuine':>8} {'refused':>8}")
    for cls, row in table.items():
        print(f"{cls:<48} {row['attack'][0]:>8} {row['attack'][1]:>6} {row['genuine'][0]:>8} {row['genuine'][1]:>8}")
        if args.show:
            for kind in ("attack", "genuine"):
                for message in row[kind][2]:
                    print(f"    {kind}: {message}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
