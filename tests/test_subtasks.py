"""A sub-task never executes before its parent: it waits (stage WAITING, said in the reply), goes with
the parent's execution, comes back with it when that fails, and is cancelled with it.

The catalog is examples/catalogs/telecom.json: ``router_rental`` depends on ``install_broadband``.
"""

from __future__ import annotations

import dify_plugin  # noqa: F401  (first: gevent monkey-patching)

import json

import pytest

from conftest import load_example_catalog
from dskit.turn.machine import record_result
from dskit.state.views import execute_reply
from dskit.surfaces.nodes import execute_reply_node, result_node, state_node
from dskit.state.views import state_text
from dskit.catalog.catalog import load_catalog
from enginekit import Dialogue, cmd, set_, start
from dskit.tooling.dslrun.plugin_daemon import FakeDaemon
from dskit.tooling.dslrun.plugin_tools import PLUGIN_ROOT, invoke

TELECOM = load_example_catalog("telecom")
TELECOM_TEXT = json.dumps(TELECOM, ensure_ascii=False)
WAITS = "「路由器租赁」会在「宽带办理」办理后一起提交。"
BROADBAND_DETAILS = {"address": "北京市海淀区中关村大街1号", "date": "周六", "phone": "13800138000"}


def broadband_with_router() -> Dialogue:
    """The issue's dialogue: "办个百兆宽带", then "顺便租个路由器，AX3000"."""
    d = Dialogue(TELECOM)
    d.say(start("install_broadband", plan="百兆"), query="办个百兆宽带")
    d.say(start("router_rental", model="AX3000"), query="顺便租个路由器，AX3000")
    return d


def test_a_complete_sub_task_waits_for_its_parent_and_says_so():
    d = broadband_with_router()
    assert d.decision["next_action"] == "ask_slot" and d.decision["execute"] is None
    assert d.decision["question"] == WAITS + "请问安装地址是哪里？"
    assert d.stack() == [("router_rental", "WAITING"), ("install_broadband", "COLLECTING")]
    assert d.decision["task"]["name"] == "install_broadband" and d.decision["slot"] == "address"
    text = state_text(d.state_str, load_catalog(TELECOM))
    assert "- 等待任务：router_rental（路由器租赁，WAITING，install_broadband办理后一起提交）：model=AX3000" in text


def test_the_waiting_sub_task_goes_with_its_parents_execution():
    d = broadband_with_router()
    d.say(set_(**BROADBAND_DETAILS))
    assert d.decision["next_action"] == "confirm"  # the broadband needs confirmation; the router still waits
    assert d.stack() == [("router_rental", "WAITING"), ("install_broadband", "CONFIRMING")]
    d.say(cmd("confirm"))
    execute = d.decision["execute"]
    assert d.decision["next_action"] == "execute" and execute["task"] == "install_broadband"
    assert execute["subtasks"] == [{"task_id": "t2", "task": "router_rental", "label": "路由器租赁",
                                    "slots": {"model": "AX3000"}, "subtasks": []}]
    assert d.stack() == [] and {e["task_id"] for e in d.decision["ended"]} == {"t1", "t2"}
    assert execute_reply(TELECOM, execute, called=True, ok=True) == "「宽带办理」已办理完成。「路由器租赁」已一并提交。"


def test_a_failed_parent_brings_its_sub_task_back_waiting():
    d = broadband_with_router()
    d.say(set_(**BROADBAND_DETAILS))
    d.say(cmd("confirm"))
    execute = d.decision["execute"]
    reply = execute_reply(TELECOM, execute, called=True, ok=False, detail="HTTP 503")
    assert reply == "抱歉，「宽带办理」办理失败：HTTP 503。「路由器租赁」也未提交，重试时会一起提交。需要我再试一次吗？"
    d.state_str = record_result(d.state_str, execute["task_id"], ok=False, detail="HTTP 503")
    assert d.stack() == [("router_rental", "WAITING"), ("install_broadband", "CONFIRMING")]
    d.say(cmd("confirm"))  # the retry
    assert d.decision["execute"]["subtasks"][0]["slots"] == {"model": "AX3000"}


def test_cancelling_the_parent_cancels_the_waiting_sub_task():
    d = broadband_with_router()
    d.say(cmd("cancel_task", task="install_broadband"), query="宽带不办了")
    assert d.stack() == [] and d.decision["execute"] is None
    assert d.decision["question"] == "已取消「宽带办理」。「路由器租赁」依赖的信息已变化，已一并取消。"


def test_started_in_one_message_the_sub_task_still_waits():
    d = Dialogue(TELECOM)
    d.say(start("install_broadband", plan="百兆"), start("router_rental", model="AX3000"))
    assert d.stack() == [("router_rental", "WAITING"), ("install_broadband", "COLLECTING")]
    assert d.decision["question"].startswith(WAITS)


def test_changing_the_parent_s_watched_slot_cancels_the_sub_task():
    d = broadband_with_router()
    d.say(set_(address="上海"))
    d.say(set_(address="北京"))  # a change of the address the router was ordered for
    assert [name for name, _ in d.stack()] == ["install_broadband"]


def test_a_sub_task_is_confirmed_with_a_parent_that_asks_for_confirmation():
    d = broadband_with_router()  # the router needs confirming (the default), and so does the broadband
    assert d.decision["next_action"] == "ask_slot" and d.stack()[0] == ("router_rental", "WAITING")
    d.say(set_(**BROADBAND_DETAILS))
    assert d.decision["question"] == ("请确认：宽带办理，套餐：百兆，安装地址：北京市海淀区中关村大街1号，上门日期：周六，"
                                      "联系电话：13800138000；一并提交「路由器租赁」：型号：AX3000。确认办理吗？")
    d.say(set_(model="AX6000"))  # changed: shown again, so the next yes covers what the user saw
    assert d.decision["next_action"] == "confirm" and "型号：AX6000" in d.decision["question"]
    d.say(set_(model="AX3000"), cmd("confirm"))  # a change and a yes in one message: not yet
    assert d.decision["next_action"] == "confirm" and d.decision["execute"] is None
    d.say(cmd("confirm"))
    assert d.decision["execute"]["subtasks"][0]["slots"] == {"model": "AX3000"}


def test_a_sub_task_that_needs_confirming_waits_only_once_confirmed():
    catalog = json.loads(TELECOM_TEXT)
    catalog["tasks"]["install_broadband"]["confirm"] = False  # the parent runs without asking
    catalog["tasks"]["router_rental"]["confirm"] = True
    d = Dialogue(catalog)
    d.say(start("install_broadband", plan="百兆"))
    d.say(start("router_rental", model="AX3000"))
    assert d.decision["next_action"] == "confirm" and d.stack()[-1] == ("router_rental", "CONFIRMING")
    d.say(cmd("confirm"))
    assert d.decision["next_action"] == "ask_slot" and d.decision["question"] == WAITS + "请问安装地址是哪里？"
    d.say(set_(model="AX6000"))  # changed while waiting: shown for confirmation again when its turn comes
    assert ("router_rental", "SUSPENDED") in d.stack()


def test_without_an_open_parent_the_task_runs_on_its_own():
    d = Dialogue(TELECOM)
    d.say(start("router_rental", model="AX3000"))
    assert d.decision["next_action"] == "confirm"  # renting changes something: the user confirms first
    d.say(cmd("confirm"))
    assert d.decision["next_action"] == "execute" and d.decision["execute"]["task"] == "router_rental"


# ---------------------------------------------------------------- code nodes

def understanding(*commands: dict) -> str:
    return json.dumps({"rewritten_query": "", "commands": list(commands)}, ensure_ascii=False)


def test_code_nodes_wait_submit_and_reply():
    first = state_node(understanding(start("install_broadband", plan="百兆")), "", TELECOM_TEXT)
    second = state_node(understanding(start("router_rental", model="AX3000")), first["sys_context_str"], TELECOM_TEXT)
    assert second["next_action"] == "ask_slot" and second["question"].startswith(WAITS)
    assert second["notices"] == WAITS and second["current_task"] == "install_broadband"
    third = state_node(understanding(set_(**BROADBAND_DETAILS)), second["sys_context_str"], TELECOM_TEXT)
    done = state_node(understanding(cmd("confirm")), third["sys_context_str"], TELECOM_TEXT)
    payload = json.loads(done["execute_payload"])
    assert done["execute_task"] == "install_broadband" and payload["subtasks"][0]["task"] == "router_rental"
    reply = execute_reply_node(done["execute_payload"], done["question"], "", done["sys_context_str"],
                               task_catalog=TELECOM_TEXT)
    assert "「路由器租赁」（型号：AX3000）也没有提交。" in reply["reply"]
    failed = result_node(done["sys_context_str"], done["execute_payload"], "503")
    stack = json.loads(failed["sys_context_str"])["task_stack"]
    assert [(t["name"], t["stage"]) for t in stack] == [("router_rental", "WAITING"), ("install_broadband", "CONFIRMING")]


# ---------------------------------------------------------------- plugin tools

@pytest.fixture()
def daemon(monkeypatch: pytest.MonkeyPatch) -> FakeDaemon:
    return FakeDaemon(manifest=PLUGIN_ROOT / "manifest.yaml").patch(monkeypatch)


def test_plugin_tools_wait_submit_and_restore(daemon: FakeDaemon):
    def turn(state: str, query: str, *commands: dict) -> dict:
        return invoke("update_dialogue_state", {"understanding": understanding(*commands), "catalog": TELECOM_TEXT,
                                                "sys_context_str": state, "query": query}).variables

    v = turn("", "办个百兆宽带", start("install_broadband", plan="百兆"))
    v = turn(v["sys_context_str"], "顺便租个路由器，AX3000", start("router_rental", model="AX3000"))
    assert v["notices"] == WAITS and v["execute_payload"] == {}
    assert json.loads(v["sys_context_str"])["task_stack"][0]["stage"] == "WAITING"
    v = turn(v["sys_context_str"], "地址是北京市海淀区中关村大街1号，周六装，电话13800138000", set_(**BROADBAND_DETAILS))
    v = turn(v["sys_context_str"], "好的，确认办理", cmd("confirm"))
    assert v["execute_task"] == "install_broadband"
    assert [s["task"] for s in v["execute_payload"]["subtasks"]] == ["router_rental"]
    failed = invoke("record_task_result", {"sys_context_str": v["sys_context_str"],
                                           "task_id": v["execute_payload"]["task_id"], "success": False}).variables
    gaps = invoke("detect_slot_gaps", {"sys_context_str": failed["sys_context_str"], "catalog": TELECOM_TEXT,
                                       "task": "router_rental"}).variables
    assert gaps["task"]["stage"] == "WAITING" and gaps["complete"] is True


# ---------------------------------------------------------------- the fast Chatflow in graphon

def test_fast_chatflow_in_graphon_waits_then_submits_with_the_parent():
    pytest.importorskip("graphon")
    from dskit.tooling.dslbuild.flows import FlowOptions, build_fast
    from dskit.tooling.dslrun.graphon import Conversation
    from dskit.tooling.dslrun.taskapi import task_api

    with task_api() as api:
        conv = Conversation(build_fast(FlowOptions(catalog_json=TELECOM_TEXT)).to_yaml(),
                            env={"TASK_API_URL": f"{api.base_url}/ok"})

        def turn(user: str, *commands: dict):  # noqa: ANN202 - a TurnResult
            return conv.turn(user, {"understand": json.dumps({"rewritten_query": user, "commands": list(commands)},
                                                             ensure_ascii=False)})

        turn("办个百兆宽带", start("install_broadband", plan="百兆"))
        waiting = turn("顺便租个路由器，AX3000", start("router_rental", model="AX3000"))
        assert waiting.answer == WAITS + "请问安装地址是哪里？" and api.requests == []
        stack = json.loads(conv.variables["sys_context_str"])["task_stack"]
        assert [(t["name"], t["stage"]) for t in stack] == [("router_rental", "WAITING"),
                                                            ("install_broadband", "COLLECTING")]
        confirm = turn("地址北京市海淀区中关村大街1号，周六上门，电话13800138000", set_(**BROADBAND_DETAILS))
        # the model's view of the state this turn (the prompt the last turn stored: no context node ran)
        understand = next(call.request for call in confirm.llm_calls if call.node_id == "understand")
        assert "- 等待任务：router_rental（路由器租赁，WAITING" in understand.user and "context" not in confirm.path
        done = turn("确认", cmd("confirm"))
        assert done.answer.startswith("「宽带办理」已办理完成。「路由器租赁」已一并提交。")
        (path, payload), = api.requests
        assert payload["task"] == "install_broadband" and payload["subtasks"][0]["slots"] == {"model": "AX3000"}
        state = json.loads(conv.variables["sys_context_str"])
        assert state["task_stack"] == [] and state["done"][-1]["status"] == "success"
