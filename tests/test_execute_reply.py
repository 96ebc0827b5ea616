"""The execute branch's reply: done, failed (never passed off as success), or what would be done."""

from __future__ import annotations

import json

from dskit.views import execute_reply
from dskit.nodes import execute_reply_node
from enginekit import Dialogue, cmd, start

PAYLOAD = {"task_id": "t1", "task": "book_restaurant", "label": "订餐",
           "slots": {"date": "周五", "people": 2, "private_room": True}}


def test_the_three_outcomes(restaurant):
    assert execute_reply(restaurant, PAYLOAD, called=False, ok=False) == \
        "（未配置 TASK_API_URL，未真正办理）将为您办理「订餐」：日期：周五，人数：2，包间：是。"
    assert execute_reply(restaurant, PAYLOAD, called=True, ok=True) == "「订餐」已办理完成。"
    assert execute_reply(restaurant, PAYLOAD, called=True, ok=False, detail="HTTP 503") == \
        "抱歉，「订餐」办理失败：HTTP 503。需要我再试一次吗？"
    assert "failed" in execute_reply(restaurant, PAYLOAD, called=True, ok=False, lang="en")


def test_a_failure_never_moves_on_and_the_state_keeps_the_task(restaurant):
    d = Dialogue(restaurant)
    d.say(start("book_restaurant", date="周五", time="20:00", people=2, restaurant="老广记"))
    d.say(cmd("confirm"))
    payload = json.dumps(d.decision["execute"], ensure_ascii=False)
    from dskit.nodes import result_node
    recorded = result_node(d.state_str, payload, "503", "")["sys_context_str"]
    out = execute_reply_node(payload, "下一个问题？", "http://api", d.state_str, recorded, False, 503, "",
                             json.dumps(restaurant, ensure_ascii=False))
    assert out["reply"] == "抱歉，「订餐」办理失败：HTTP 503。需要我再试一次吗？"  # no next question
    assert out["sys_context_str"] == recorded
    top = json.loads(out["sys_context_str"])["task_stack"][-1]  # the failed task is back on top
    assert top["name"] == "book_restaurant" and top["slots"]["restaurant"] == "老广记"
