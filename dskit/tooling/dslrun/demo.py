"""``dskit demo``: the restaurant booking example through the fast Chatflow in graphon, with recorded model outputs.

No model and no network: each turn's understanding is the JSON a model following our prompt
returned for that message (recorded), the FAQ answer likewise, and everything else — the state
node, the branches, the history, the assigners — runs in Dify's own engine. The demo says so on
screen.

Two scripts: Chinese, over the default catalog and the shipped Chatflow; English (``--lang en``),
over the English example catalog (examples/eval/catalogs/restaurant_travel_en.json) and the Chatflow
``dskit new`` builds for it, so the whole conversation — questions, confirmation, replies — is English.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dskit.tooling.dslbuild.code_sources import shipped_code_nodes
from dskit.tooling.dslbuild.flows import ROOT, FlowOptions, build_classic, build_fast, default_catalog
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

# The same booking in English, over the English example catalog.
EN_CATALOG = ROOT / "examples" / "eval" / "catalogs" / "restaurant_travel_en.json"
EN_DEMO_TURNS: list[ScenarioTurn] = [
    ScenarioTurn("Book a table for Friday at 20:00, three people, downtown, classic Cantonese", _u(
        "Book a table for Friday at 20:00 for three people downtown, classic Cantonese food",
        {"type": "start_task", "task": "book_restaurant",
         "slots": {"date": "Friday", "time": "20:00", "people": 3, "area": "downtown", "cuisine": "Cantonese"}})),
    ScenarioTurn("A private room would be even better.", _u(
        "A private room would be even better", {"type": "set_slots", "slots": {"private_room": True}})),
    ScenarioTurn("Is there a minimum spend for a private room?", _u(
        "Is there a minimum spend for a private room?",
        {"type": "faq", "question": "Is there a minimum spend for a private room?"}),
        llm={"faq_answer": "Private rooms have a minimum spend of 800 and must be booked a day ahead."}),
    ScenarioTurn("Make it two of us at a quiet table, and 19:00 instead.", _u(
        "Change to two people, a quiet table, at 19:00",
        {"type": "set_slots", "slots": {"people": 2, "quiet": True, "time": "19:00"}})),
    ScenarioTurn("Let's go with Old Town Cantonese", _u(
        "Book Old Town Cantonese", {"type": "set_slots", "slots": {"restaurant": "Old Town Cantonese"}})),
    ScenarioTurn("Yes, book it", _u("Confirm the booking", {"type": "confirm"})),
]
EN_DEMO_KNOWLEDGE = [{"title": "private rooms", "content": "Private rooms must be booked a day ahead; the "
                      "minimum spend is 800."}]


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


@dataclass
class Demo:
    """The demo conversation ready to run: the Chatflow loaded, its code nodes checked and compiled."""

    layout: str
    catalog: dict[str, Any]
    script: list[ScenarioTurn]
    conversation: Conversation


def prepare_demo(layout: str = "fast", lang: str = "zh", progress: Callable[[str], None] | None = None) -> Demo:
    """Build the demo's Chatflow and do what its first turn would do first (load graphon, check and
    compile the code nodes), each step told to ``progress``: seconds, which ``dskit demo`` shows."""
    step = progress or (lambda _what: None)
    if lang == "en":
        catalog = json.loads(EN_CATALOG.read_text(encoding="utf-8"))
        options = FlowOptions(catalog_json=json.dumps(catalog, ensure_ascii=False), lang="en", localized=True)
        script, knowledge = EN_DEMO_TURNS, EN_DEMO_KNOWLEDGE
    else:
        catalog, options, script, knowledge = default_catalog(), FlowOptions(), DEMO_TURNS, DEMO_KNOWLEDGE
    step("building the Chatflow")
    with shipped_code_nodes():  # the checkout's code_nodes/: seconds, not a bundle of the engine
        flow = build_fast(options) if layout == "fast" else build_classic(options)
    step("writing the YAML")
    conversation = Conversation(flow.to_yaml(), knowledge=lambda query: knowledge)
    conversation.prepare(step)
    return Demo(layout, catalog, script, conversation)


def run_demo(layout: str = "fast", on_turn: Callable[[int, DemoTurn], None] | None = None,
             lang: str = "zh", demo: Demo | None = None) -> list[DemoTurn]:
    """Run the demo conversation in ``lang`` (or the ``demo`` :func:`prepare_demo` made); ``on_turn``
    sees each turn as soon as it is done."""
    demo = demo or prepare_demo(layout, lang)
    conversation = demo.conversation
    turns = []
    for index, turn in enumerate(demo.script, 1):
        step = turn_script(turn, demo.layout, demo.catalog, focused_task(conversation.variables)[0])
        result = conversation.turn(turn.user, step)
        done = DemoTurn(turn.user, result)
        turns.append(done)
        if on_turn is not None:
            on_turn(index, done)
    return turns
