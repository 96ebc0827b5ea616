"""``dskit demo``: the restaurant booking example through the fast Chatflow in graphon, with recorded model outputs.

No model and no network: each turn's understanding is the JSON a model following our prompt
returned for that message (recorded), the FAQ answer likewise, and everything else — the state
node, the branches, the history, the assigners — runs in Dify's own engine. The demo says so on
screen.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dskit.tooling.dslbuild.flows import FlowOptions, build_classic, build_fast, default_catalog
from dskit.tooling.dslrun.scenarios import ScenarioTurn, focused_task, turn_script
from dskit.tooling.dslrun.graphon import Conversation, TurnResult


def _u(query: str, *commands: dict[str, Any]) -> dict[str, Any]:
    return {"rewritten_query": query, "commands": list(commands)}


# A booking that gives date, time, people, area and cuisine in one message, adds and corrects
# details, asks an FAQ in the middle, names the restaurant, and says yes to the values shown.
DEMO_TURNS: list[ScenarioTurn] = [
    ScenarioTurn("帮我订周五晚上8点，三个人，市中心，老牌粤菜", _u(
        "帮我订周五晚上8点、三个人、市中心的老牌粤菜餐厅",
        {"type": "start_task", "task": "book_restaurant",
         "slots": {"date": "周五", "time": "20:00", "people": 3, "area": "市中心", "cuisine": "粤菜"}})),
    ScenarioTurn("如果有包间就更好了。", _u("如果有包间就更好了",
                                        {"type": "set_slots", "slots": {"private_room": True}})),
    ScenarioTurn("包间有最低消费吗？", _u("包间有最低消费吗？", {"type": "faq", "question": "包间有最低消费吗？"}),
                 llm={"faq_answer": "包间最低消费800元，需提前一天预订。"}),
    ScenarioTurn("两个人安静一点的，时间改成七点吧。", _u(
        "改为两个人、要安静一点、时间改成19:00",
        {"type": "set_slots", "slots": {"people": 2, "quiet": True, "time": "19:00"}})),
    ScenarioTurn("就订老地方粤菜馆吧", _u("订老地方粤菜馆",
                                       {"type": "set_slots", "slots": {"restaurant": "老地方粤菜馆"}})),
    ScenarioTurn("对，就这样订", _u("确认预订", {"type": "confirm"})),
]
DEMO_KNOWLEDGE = [{"title": "包间", "content": "本店包间需提前一天预订，最低消费800元。"}]


@dataclass
class DemoTurn:
    user: str
    result: TurnResult

    @property
    def next_action(self) -> str:
        return str(self.result.output("state", "next_action") or "")

    @property
    def slots(self) -> dict[str, Any]:
        return focused_task(self.result.variables)[1]


def run_demo(layout: str = "fast", on_turn: Callable[[int, DemoTurn], None] | None = None) -> list[DemoTurn]:
    """Run the demo conversation; ``on_turn`` sees each turn as soon as it is done."""
    options = FlowOptions()
    flow = build_fast(options) if layout == "fast" else build_classic(options)
    conversation = Conversation(flow.to_yaml(), knowledge=lambda query: DEMO_KNOWLEDGE)
    catalog = default_catalog()
    turns = []
    for index, turn in enumerate(DEMO_TURNS, 1):
        script = turn_script(turn, layout, catalog, focused_task(conversation.variables)[0])
        result = conversation.turn(turn.user, script)
        done = DemoTurn(turn.user, result)
        turns.append(done)
        if on_turn is not None:
            on_turn(index, done)
    return turns
