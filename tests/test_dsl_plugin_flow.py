"""The plugin-flavoured Chatflow (dsl/dialogue_chatflow_plugin.yml), checked and run in graphon.

What runs for real: ``graphon.dsl.loads`` builds every node of the generated DSL, including the
tool nodes, through graphon's own node factory and its ``SlimToolNodeRuntime`` (the Slim plugin
daemon adapter: parameter forms, ``tool_configurations`` resolution, model-selector values, message
conversion). Only the Slim daemon's socket is replaced: ``SlimToolNodeRuntime`` accepts an
``action_invoker`` (graphon's own hook for that), and the tooling's one harness for it
(dskit/tooling/dslrun/plugin_tools.py ``PluginTools``, also what ``dskit eval --layout plugin`` runs)
answers ``get_tool_runtime_parameters`` from tools/*.yaml and ``invoke_tool`` by running the plugin's
real Tool classes in-process through the SDK (``PluginRegistration`` + ``PluginExecutor.invoke_tool``),
with the fake daemon (dskit/tooling/dslrun/plugin_daemon.py) answering their reverse calls: storage
for recall, and the LLM call of ``track_state``, which answers from the turn's script. The graphon
harness (dskit/tooling/dslrun/graphon.py) supplies the scripted LLM nodes and the knowledge stand-in as
for the other layouts.

Import ``dify_plugin`` first: it monkey-patches with gevent.
"""

from __future__ import annotations

import dify_plugin  # noqa: F401  (first: gevent monkey-patching)

import json
from collections import deque
from typing import Any

import pytest
import yaml

from dskit.tooling.dslbuild.check import check_dsl, format_problems
from dskit.tooling.dslbuild.plugin_flow import PLUGIN_FILE, build_plugin
from dskit.tooling.plugin_package import plugin_identifier
from dskit.tooling.dslrun.graphon import Conversation
from dskit.tooling.dslrun.plugin_daemon import FakeDaemon
from dskit.tooling.dslrun.plugin_tools import PLUGIN_ROOT, PluginTools
from dskit.tooling.dslrun.scenarios import focused_task

DSL_PATH = PLUGIN_ROOT / PLUGIN_FILE
PLUGIN_IDENTIFIER = plugin_identifier(PLUGIN_ROOT)  # author/name:version@checksum of this checkout's package


def _dsl() -> str:
    return DSL_PATH.read_text(encoding="utf-8")


# ------------------------------------------------------------------------------ static


def test_generated_file_is_current_and_passes_check_dsl() -> None:
    assert _dsl() == build_plugin().to_yaml()
    problems = check_dsl(_dsl(), run_code=False, sandbox=False)
    assert not problems, format_problems(problems)


def test_dependencies_name_our_package_and_the_model_provider() -> None:
    doc = yaml.safe_load(_dsl())
    deps = doc["dependencies"]
    package = [d for d in deps if d["type"] == "package"]
    assert package == [{"current_identifier": None, "type": "package",
                        "value": {"plugin_unique_identifier": PLUGIN_IDENTIFIER, "version": "0.2.0"}}]
    assert any(d["type"] == "marketplace" and d["value"]["marketplace_plugin_unique_identifier"]
               .startswith("langgenius/openai:") for d in deps)
    tools = [n["data"] for n in doc["workflow"]["graph"]["nodes"] if n["data"]["type"] == "tool"]
    assert {t["tool_name"] for t in tools} == {"recall", "track_state", "compress_history"}
    assert all(t["plugin_unique_identifier"] == PLUGIN_IDENTIFIER for t in tools)
    assert not [n for n in doc["workflow"]["graph"]["nodes"] if n["data"]["type"] == "code"]


@pytest.mark.parametrize("breakage, expected", [
    (lambda d: d["tool_parameters"].update(nonsense={"type": "constant", "value": 1}), "no parameter 'nonsense'"),
    (lambda d: d["tool_parameters"].pop("query"), "required parameter not set"),
    (lambda d: d.update(tool_name="track_stat"), "no tool 'track_stat'"),
    (lambda d: d.update(plugin_unique_identifier="dskit/other:1.0.0@" + "0" * 64), "has no dependencies entry"),
    (lambda d: d["tool_parameters"].update(sys_context_str={"type": "variable", "value": ["conversation", "nope"]}),
     "not a conversation variable"),
    (lambda d: d["tool_configurations"]["model"]["value"].update(provider="openai"), "ORG/PLUGIN/PROVIDER"),
])
def test_check_dsl_catches_broken_tool_nodes(breakage: Any, expected: str) -> None:
    doc = yaml.safe_load(_dsl())
    node = next(n for n in doc["workflow"]["graph"]["nodes"] if n["id"] == "track_state")
    breakage(node["data"])
    text = format_problems(check_dsl(doc, run_code=False, sandbox=False))
    assert expected in text, text


def test_check_dsl_knows_tool_outputs() -> None:
    doc = yaml.safe_load(_dsl())
    save = next(n for n in doc["workflow"]["graph"]["nodes"] if n["id"] == "save")
    save["data"]["items"][0]["value"] = ["compress", "histroy"]
    text = format_problems(check_dsl(doc, run_code=False, sandbox=False))
    assert "compress.histroy is not an output" in text


# ------------------------------------------------------------------------------ graphon run


@pytest.fixture()
def plugin_run():
    daemon = FakeDaemon(manifest=PLUGIN_ROOT / "manifest.yaml")
    return daemon, PluginTools(daemon, user_id="dskit-user", conversation_id="conv-plugin-1")


KNOWLEDGE = [{"title": "包间", "content": "本店包间需提前一天预订，最低消费800元。"}]


def _turn(conv: Conversation, daemon: FakeDaemon, user: str, understanding: dict[str, Any],
          script: dict[str, str] | None = None):
    daemon.llm_replies = deque([json.dumps(understanding, ensure_ascii=False)])
    result = conv.turn(user, script or {})
    assert not daemon.llm_replies, "track_state did not ask the model"
    return result


def _slots(conv: Conversation) -> dict[str, Any]:
    return focused_task(conv.variables)[1]


def test_seed000_booking_and_a_faq_run_through_the_real_tools(plugin_run) -> None:
    daemon, plugin = plugin_run
    conv = Conversation(_dsl(), knowledge=lambda q: KNOWLEDGE, conversation_id="conv-plugin-1",
                        user_id="dskit-user", tool_invoker=plugin)

    r1 = _turn(conv, daemon, "帮我订周五晚上8点，三个人，市中心，老牌粤菜", {
        "rewritten_query": "帮我订周五晚上8点、三个人、市中心的老牌粤菜餐厅",
        "commands": [{"type": "start_task", "task": "book_restaurant", "slots": {
            "date": "周五", "time": "20:00", "people": 3, "area": "市中心", "cuisine": "粤菜"}}]})
    assert r1.output("track_state", "next_action") == "ask_slot"
    assert "请问您想订哪家餐厅？" in r1.answer
    assert focused_task(conv.variables)[0] == "book_restaurant"
    assert "current_task" not in conv.variables  # no prompt reads a copy, so none is stored
    assert _slots(conv) == {"date": "周五", "time": "20:00", "people": 3, "area": ["市中心"], "cuisine": "粤菜"}
    state = json.loads(conv.variables["sys_context_str"])
    assert state  # the state string went through the assigner
    assert "帮我订周五晚上8点" in conv.variables["history"]
    # the understanding prompt reached the fake daemon's LLM with the model the DSL picked
    request = daemon.llm_requests[-1]
    assert request["provider"] == "langgenius/openai/openai" and request["model"] == "gpt-4o-mini"
    assert "帮我订周五晚上8点" in json.dumps(request["prompt_messages"], ensure_ascii=False)
    assert [t for t, _ in plugin.invocations] == ["recall", "track_state", "compress_history"]

    r2 = _turn(conv, daemon, "如果有包间就更好了。", {
        "rewritten_query": "如果有包间就更好了", "commands": [{"type": "set_slots", "slots": {"private_room": True}}]})
    assert r2.output("track_state", "next_action") == "ask_slot"
    assert "包间" in r2.answer and "请问您想订哪家餐厅？" in r2.answer
    assert _slots(conv)["private_room"] is True

    # the previous turn is in the history the tool passes to the model
    r3 = _turn(conv, daemon, "两个人安静一点的，时间改成七点吧。", {
        "rewritten_query": "改为两个人、要安静一点、时间改成19:00",
        "commands": [{"type": "set_slots", "slots": {"people": 2, "quiet": True, "time": "19:00"}}]})
    assert "如果有包间就更好了" in json.dumps(daemon.llm_requests[-1]["prompt_messages"], ensure_ascii=False)
    assert r3.output("track_state", "next_action") == "ask_slot"
    assert "请问您想订哪家餐厅？" in r3.answer
    assert _slots(conv) == {"date": "周五", "time": "19:00", "people": 2, "area": ["市中心"], "cuisine": "粤菜",
                            "private_room": True, "quiet": True}

    r4 = _turn(conv, daemon, "包间有最低消费吗？", {
        "rewritten_query": "包间有最低消费吗？", "commands": [{"type": "faq", "question": "包间有最低消费吗？"}]},
        {"faq_answer": "包间最低消费800元，需提前一天预订。"})
    assert r4.output("track_state", "next_action") == "faq"
    assert r4.answer == "包间最低消费800元，需提前一天预订。\n\n请问您想订哪家餐厅？"
    # compress recorded the engine's own text of the turn, not the FAQ model's (dskit.state.views.memory_reply)
    assert conv.variables["history"].endswith("assistant: 请问您想订哪家餐厅？") and "800元" not in conv.variables["history"]
    assert "faq_reply" not in r4.path  # the answer node joins the answer and track_state's follow_up
    assert [c.node_id for c in r4.llm_calls] == ["faq_answer"]
    faq_prompt = r4.llm_calls[0].request
    assert "800元" in faq_prompt.system + faq_prompt.user  # the retrieved passage reached the FAQ LLM
    assert _slots(conv)["quiet"] is True and focused_task(conv.variables)[0] == "book_restaurant"

    shown = _turn(conv, daemon, "就订老地方粤菜馆吧", {
        "rewritten_query": "订老地方粤菜馆", "commands": [{"type": "set_slots", "slots": {"restaurant": "老地方粤菜馆"}}]})
    assert shown.output("track_state", "next_action") == "confirm" and "餐厅：老地方粤菜馆" in shown.answer
    r5 = _turn(conv, daemon, "对，就这样订", {"rewritten_query": "确认预订", "commands": [{"type": "confirm"}]})
    assert r5.output("track_state", "next_action") == "execute"
    execute = r5.output("track_state", "execute_payload")
    assert execute["slots"]["restaurant"] == "老地方粤菜馆" and execute["slots"]["people"] == 2
    # what will be done in the catalog's labels, as the fast Chatflow says it (issue 39: not "time=19:00")
    assert "「订餐」" in r5.answer and "时间：19:00" in r5.answer and "餐厅：老地方粤菜馆" in r5.answer
    assert "=" not in r5.answer and "没有真正办理" in r5.answer
    assert focused_task(conv.variables) == ("", {})
    assert conv.variables["history"].count("老地方粤菜馆") >= 1
    assert len(daemon.llm_requests) == 6  # one understanding call per turn, through the plugin


@pytest.mark.parametrize("name", ["bike_repair_en", "pet_clinic_zh"])
def test_the_execute_reply_shows_labels_in_the_catalogs_language(name: str) -> None:
    """The plugin Chatflow's execute branch shows track_state's no_api_reply (slot labels, the catalog's
    language), never the payload's keys; the tool computes it as the state node does."""
    from dskit.tooling.dslbuild.code_sources import shipped_code_nodes
    from dskit.tooling.dslbuild.flows import FlowOptions
    from dskit.tooling.dslbuild.plugin_flow import build_plugin
    from dskit.state.views import workflow_outputs
    from dskit.catalog.catalog import load_catalog
    from dskit.state.records import new_decision

    catalog = json.loads((PLUGIN_ROOT / "examples" / "catalogs" / f"{name}.json").read_text(encoding="utf-8"))
    options = FlowOptions(catalog_json=json.dumps(catalog, ensure_ascii=False), lang=catalog["language"],
                          localized=True)
    with shipped_code_nodes():
        doc = build_plugin(options).to_dict()
    node = next(n for n in doc["workflow"]["graph"]["nodes"] if n["id"] == "exec_reply")["data"]
    assert ["track_state", "no_api_reply"] in [v["value_selector"] for v in node["variables"]]
    assert "items()" not in node["template"] and "=" not in node["template"].replace("{%", "").replace("%}", "")
    task, spec = next(iter(catalog["tasks"].items()))
    slot, slot_spec = next(iter(spec["slots"].items()))
    payload = {"task_id": "t1", "task": task, "label": spec.get("label") or task, "slots": {slot: "X1"}, "subtasks": []}
    decision = new_decision("execute", lang=catalog["language"], turn=1, question="", execute=payload)
    text = workflow_outputs("", decision, load_catalog(catalog))["no_api_reply"]
    assert f"{slot_spec.get('label') or slot}" in text and f"{slot}=" not in text, text
    assert ("Nothing was done" in text) if catalog["language"] == "en" else ("没有真正办理" in text), text
