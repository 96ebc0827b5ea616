"""The execute branch's reply: done, failed (never passed off as success), or, with no task API, that nothing
was done (an enquiry: that it cannot be answered)."""

from __future__ import annotations

import json

from dskit.state.views import execute_reply
from dskit.surfaces.nodes import execute_reply_node
from enginekit import Dialogue, cmd, start

PAYLOAD = {"task_id": "t1", "task": "book_restaurant", "label": "订餐",
           "slots": {"date": "周五", "people": 2, "private_room": True}}


def test_the_three_outcomes(restaurant):
    assert execute_reply(restaurant, PAYLOAD, called=False, ok=False) == \
        "没有真正办理：「订餐」（日期：周五，人数：2，包间：是）要由业务系统办理，这个助手还没有接入。" \
        "（应用搭建者：请把环境变量 TASK_API_URL 设为任务接口的地址。）"
    assert execute_reply(restaurant, PAYLOAD, called=True, ok=True) == "「订餐」已办理完成。"
    assert execute_reply(restaurant, PAYLOAD, called=True, ok=False, detail="HTTP 503") == \
        "抱歉，「订餐」办理失败：HTTP 503。需要我再试一次吗？"
    assert "failed" in execute_reply(restaurant, PAYLOAD, called=True, ok=False, lang="en")


def test_a_failure_never_moves_on_and_the_state_keeps_the_task(restaurant):
    d = Dialogue(restaurant)
    d.say(start("book_restaurant", date="周五", time="20:00", people=2, restaurant="老广记"))
    d.say(cmd("confirm"))
    payload = json.dumps(d.decision["execute"], ensure_ascii=False)
    from dskit.surfaces.nodes import result_node
    recorded = result_node(d.state_str, payload, "503", "")["sys_context_str"]
    out = execute_reply_node(payload, "下一个问题？", "http://api", d.state_str, recorded, False, 503, "",
                             json.dumps(restaurant, ensure_ascii=False))
    assert out["reply"] == "抱歉，「订餐」办理失败：HTTP 503。需要我再试一次吗？"  # no next question
    assert out["sys_context_str"] == recorded
    top = json.loads(out["sys_context_str"])["task_stack"][-1]  # the failed task is back on top
    assert top["name"] == "book_restaurant" and top["slots"]["restaurant"] == "老广记"


def test_without_a_task_api_an_enquiry_says_it_cannot_be_answered(travel):
    """Issue 39: a read-only enquiry has nothing to be done, only an answer the API would have given: the
    reply says plainly that it cannot be answered and what the app builder must set, in zh and en —
    never "I would now do Opening hours"."""
    weather = {"task_id": "t2", "task": "weather", "label": "查询天气", "slots": {"city": "北京"}}
    zh = execute_reply(travel, weather, called=False, ok=False)
    assert zh == ("抱歉，这个问题我暂时答不了：「查询天气」（城市：北京）要从业务系统查询，这个助手还没有接入。"
                  "（应用搭建者：请把环境变量 TASK_API_URL 设为任务接口的地址。）")
    en = execute_reply(travel, weather, called=False, ok=False, lang="en")
    assert en.startswith("Sorry, I can't answer that yet: 查询天气 (") and "TASK_API_URL" in en
    assert "would" not in en and "done" not in en
    no_values = execute_reply(travel, {**weather, "slots": {}}, called=False, ok=False, lang="en")
    assert "查询天气 needs a system" in no_values  # no empty brackets


def test_the_no_api_reply_is_a_workflow_output_without_the_builders_note(travel):
    """The plugin layout shows ``no_api_reply`` (it has no TASK_API_URL to name); the code-node Chatflows
    add the note for the app builder."""
    d = Dialogue(travel)
    decision = d.say(start("weather", city="北京"))
    assert decision["next_action"] == "execute"
    from dskit.catalog.catalog import load_catalog
    from dskit.state.views import workflow_outputs
    outputs = workflow_outputs(d.state_str, decision, load_catalog(travel))
    assert outputs["no_api_reply"].startswith("抱歉，这个问题我暂时答不了：「查询天气」（城市：北京）")
    assert "TASK_API_URL" not in outputs["no_api_reply"]
    assert workflow_outputs(d.state_str, {**decision, "next_action": "ask_slot", "execute": None},
                            load_catalog(travel))["no_api_reply"] == ""
