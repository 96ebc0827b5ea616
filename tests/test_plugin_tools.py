"""The state tools, invoked through the SDK (registration + executor) with a fake daemon."""

from __future__ import annotations

import dify_plugin  # noqa: F401  (first: gevent monkey-patching)

import json

import pytest

from dskit.tooling.dslrun.plugin_daemon import FakeDaemon
from dskit.tooling.dslrun.plugin_tools import PLUGIN_ROOT, invoke
from fakes.sdk import assert_consistent

CATALOG = (PLUGIN_ROOT / "examples/catalogs/restaurant.json").read_text(encoding="utf-8")
START = json.dumps({"rewritten_query": "订周五晚上8点三个人", "commands": [
    {"type": "start_task", "task": "book_restaurant", "slots": {"date": "周五", "time": "20:00", "people": 3}}]},
    ensure_ascii=False)
FILL = '好的，这是结果：```json\n{"commands": [{"type": "set_slots", "slots": {"restaurant": "陶陶居"}}]}\n```'
SAID = "订周五晚上8点，三个人"  # what the user said for START (the tools ground every command in it)


@pytest.fixture()
def daemon(monkeypatch: pytest.MonkeyPatch) -> FakeDaemon:
    return FakeDaemon(manifest=PLUGIN_ROOT / "manifest.yaml").patch(monkeypatch)


def test_update_dialogue_state_two_turns(daemon: FakeDaemon) -> None:
    first = invoke("update_dialogue_state", {"understanding": START, "sys_context_str": "", "catalog": CATALOG, "query": SAID})
    assert_consistent("update_dialogue_state", first)
    v = first.variables
    assert v["ok"] is True and v["error"] == ""
    assert v["next_action"] == "ask_slot" and v["slot"] == "restaurant"
    assert v["missing_slots"] == ["restaurant"]
    assert v["current_task"] == "book_restaurant" and v["current_task_label"] == "订餐"
    assert v["current_task_slots"] == {"date": "周五", "time": "20:00", "people": 3}
    assert v["execute_payload"] == {} and v["execute_task"] == ""
    assert first.text == v["question"]  # the tool's text message is the question itself
    assert v["question"].endswith("请问您想订哪家餐厅？")  # Chinese by default: the catalog's own ask text

    second = invoke("update_dialogue_state", {"understanding": FILL, "sys_context_str": v["sys_context_str"],
                                              "catalog": CATALOG, "query": "陶陶居"})
    v2 = second.variables
    assert v2["next_action"] == "confirm"  # a booking changes something: the user confirms first
    assert v2["question"] == "请确认：订餐，日期：周五，时间：20:00，人数：3，餐厅：陶陶居。确认办理吗？"

    unasked = invoke("update_dialogue_state", {"understanding": CONFIRM, "sys_context_str": v2["sys_context_str"],
                                               "catalog": CATALOG, "query": "你们几点关门？"})
    # the model's yes, not the user's: nothing runs; the user's question is answered and the confirmation waits
    assert unasked.variables["next_action"] == "faq" and unasked.variables["execute_payload"] == {}
    assert unasked.variables["question"] == v2["question"] and unasked.variables["current_task_stage"] == "CONFIRMING"
    assert unasked.variables["decision"]["dropped"][0]["reason"] == "not grounded: the message does not say yes"

    third = invoke("update_dialogue_state", {"understanding": CONFIRM, "sys_context_str": v2["sys_context_str"],
                                             "catalog": CATALOG, "query": "好的，就订这家"})
    v3 = third.variables
    assert v3["next_action"] == "execute"
    assert v3["execute_payload"]["slots"]["restaurant"] == "陶陶居" and v3["execute_task"] == "book_restaurant"
    assert v3["current_task"] == "" and v3["current_task_slots"] == {}
    assert daemon.calls == []  # the state tools make no reverse calls


CONFIRM = json.dumps({"rewritten_query": "", "commands": [{"type": "confirm"}]})


# An English catalog: with the Chinese example catalog the engine's own words are English but the
# labels and ask texts are the catalog's Chinese, so only an English catalog shows an English answer.
EN_CATALOG = {"version": 1, "language": "en", "tasks": {"book_table": {
    "label": "table booking", "kind": "multi_turn", "slots": {
        "date": {"type": "string", "required": True, "label": "date", "ask": "Which day would you like?"},
        "restaurant": {"type": "string", "required": True, "label": "restaurant",
                       "ask": "Which restaurant would you like?"}}}}}
EN_START = json.dumps({"rewritten_query": "book a table on Friday", "commands": [
    {"type": "start_task", "task": "book_table", "slots": {"date": "Friday"}}]})


def test_update_dialogue_state_accepts_object_catalog_and_english(daemon: FakeDaemon) -> None:
    out = invoke("update_dialogue_state", {"understanding": EN_START, "catalog": EN_CATALOG, "lang": "en",
                                           "query": "Book a table on Friday"})
    assert out.variables["next_action"] == "ask_slot"
    question = out.variables["question"]
    assert question.isascii(), question  # English: no Chinese engine text slipped in
    assert question.endswith("Which restaurant would you like?")


@pytest.mark.parametrize(
    "params, param_name",
    [
        ({"understanding": START, "catalog": "{broken"}, "catalog"),
        ({"understanding": START, "catalog": '{"tasks": {"t": {"slots": {"s": {"type": "color"}}}}}'}, "catalog"),
        ({"understanding": START}, "catalog"),
        ({"understanding": "", "catalog": CATALOG}, "understanding"),
        ({"understanding": "x" * 60_000, "catalog": CATALOG}, "understanding"),
        ({"understanding": START, "catalog": CATALOG, "sys_context_str": "{not json"}, "sys_context_str"),
        ({"understanding": START, "catalog": CATALOG, "sys_context_str": '{"format": "other"}'}, "sys_context_str"),
        ({"understanding": START, "catalog": CATALOG, "sys_context_str": "x" * 200_000}, "sys_context_str"),
        ({"understanding": START, "catalog": CATALOG, "lang": "en", "bad_state": "maybe"}, "bad_state"),
    ],
)
def test_update_dialogue_state_bad_input(daemon: FakeDaemon, params: dict, param_name: str) -> None:
    out = invoke("update_dialogue_state", params)
    assert_consistent("update_dialogue_state", out)
    v = out.variables
    assert v["ok"] is False and v["error_param"] == param_name
    assert param_name in v["error"] and param_name in out.text
    assert v["next_action"] == "fallback" and v["question"]  # the same failure value as the state code node
    assert v["decision"]["error"] == v["error"]
    assert v["sys_context_str"] == params.get("sys_context_str", "")  # the state is handed back untouched


def test_bad_state_restart_starts_clean(daemon: FakeDaemon) -> None:
    out = invoke("update_dialogue_state", {"understanding": START, "catalog": CATALOG, "query": SAID,
                                           "sys_context_str": "{not json", "bad_state": "restart"})
    assert out.variables["ok"] is True and out.variables["next_action"] == "ask_slot"
    assert "started clean" in json.dumps(json.loads(out.variables["sys_context_str"])["errors"])


def test_bad_state_messages_are_english_on_request(daemon: FakeDaemon) -> None:
    out = invoke("update_dialogue_state", {"understanding": START, "catalog": CATALOG,
                                           "sys_context_str": "{not json", "lang": "en"})
    assert out.text.startswith("Parameter sys_context_str is invalid")


def test_an_engine_bug_never_shows_a_traceback(daemon: FakeDaemon, monkeypatch: pytest.MonkeyPatch) -> None:
    from dskit.tooling.dslrun.plugin_tools import registration

    def boom(*args, **kwargs):
        raise RuntimeError("secret internals /etc/passwd")

    state = invoke("update_dialogue_state", {"understanding": START, "catalog": CATALOG, "query": SAID}).variables
    tool_cls = registration().tools_mapping["dialogue_state_kit"][2]["update_dialogue_state"][1]
    monkeypatch.setitem(tool_cls._invoke.__globals__, "run_turn", boom)  # the module the SDK loaded
    out = invoke("update_dialogue_state", {"understanding": START, "catalog": CATALOG, "query": SAID,
                                           "sys_context_str": state["sys_context_str"]})
    assert out.variables["ok"] is False and "RuntimeError" in out.text
    assert "secret" not in out.text and "Traceback" not in out.text
    assert out.variables["sys_context_str"] == state["sys_context_str"]


def test_unusable_understanding_is_a_fallback_not_an_error(daemon: FakeDaemon) -> None:
    out = invoke("update_dialogue_state", {"understanding": "抱歉我不知道", "catalog": CATALOG, "query": "嗯"})
    assert out.variables["ok"] is True and out.variables["next_action"] == "fallback"
    assert out.variables["question"]


def test_detect_slot_gaps(daemon: FakeDaemon) -> None:
    state = invoke("update_dialogue_state", {"understanding": START, "catalog": CATALOG, "query": SAID}).variables["sys_context_str"]
    out = invoke("detect_slot_gaps", {"sys_context_str": state, "catalog": CATALOG})
    assert_consistent("detect_slot_gaps", out)
    v = out.variables
    assert v["missing_slots"] == ["restaurant"] and v["next_slot"] == "restaurant"
    assert v["question"] == "请问您想订哪家餐厅？" == out.text
    assert v["complete"] is False and v["task"]["name"] == "book_restaurant"
    named = invoke("detect_slot_gaps", {"sys_context_str": state, "catalog": CATALOG, "task": "订餐"})
    assert named.variables["missing_slots"] == ["restaurant"]
    empty = invoke("detect_slot_gaps", {"sys_context_str": "", "catalog": CATALOG})
    assert empty.variables["ok"] is True and empty.variables["task"] == {} and empty.variables["missing_slots"] == []


def test_detect_slot_gaps_unknown_task(daemon: FakeDaemon) -> None:
    out = invoke("detect_slot_gaps", {"sys_context_str": "", "catalog": CATALOG, "task": "book_flight"})
    assert out.variables["ok"] is False and out.variables["error_param"] == "task"
    assert "book_flight" in out.text


# ------------------------------------------------------------------ build_context


def test_build_context_five_zones(daemon: FakeDaemon) -> None:
    state = invoke("update_dialogue_state", {"understanding": START, "catalog": CATALOG, "query": SAID}).variables["sys_context_str"]
    history = "user: 你好\n\nassistant: 您好\n\n---\n\nuser: 订周五晚上8点三个人\n\nassistant: 请问您想订哪家餐厅？"
    out = invoke("build_context", {"system": "你是订餐助手。", "state": state, "memory": "[偏好] 座位：靠窗",
                                   "history": history, "external": "陶陶居：粤菜，市中心"})
    assert_consistent("build_context", out)
    v = out.variables
    assert v["ok"] is True and v["over_budget"] is False
    for part in ("你是订餐助手。", "周五", "靠窗", "订周五晚上8点三个人", "陶陶居"):
        assert part in v["context"], part
    assert '"task_stack"' not in v["context"]  # the compact state view, not the JSON
    assert "您好" not in v["context"]  # the greeting is noise
    assert set(v["zone_tokens"]) == {"system", "state", "memory", "history", "external"}
    assert v["report"]["noise_removed"] == 1 and v["tokens"] == v["report"]["total"]
    assert out.text == v["context"]


def test_build_context_cuts_to_budget(daemon: FakeDaemon) -> None:
    external = "\n\n".join(f"第{i}条资料：" + "很长的检索内容" * 20 for i in range(10))
    v = invoke("build_context", {"system": "系统", "external": external, "total_budget": 300,
                                 "external_budget": 0}).variables
    assert v["tokens"] <= 300 and v["report"]["cut"]
    assert "第0条资料" in v["context"] and "第9条资料" not in v["context"]


@pytest.mark.parametrize("params, name", [({"total_budget": 0}, "total_budget"), ({"memory_budget": -1}, "memory_budget"),
                                          ({"state_view": "pretty"}, "state_view"), ({"history": "x" * 500_000}, "history")])
def test_build_context_bad_input(daemon: FakeDaemon, params: dict, name: str) -> None:
    out = invoke("build_context", params)
    assert out.variables["ok"] is False and out.variables["error_param"] == name and out.variables["context"] == ""


# ------------------------------------------------------------------ record_task_result


def test_record_task_result(daemon: FakeDaemon) -> None:
    state = invoke("update_dialogue_state", {"understanding": START, "catalog": CATALOG, "query": SAID}).variables
    shown = invoke("update_dialogue_state", {"understanding": FILL, "catalog": CATALOG, "query": "陶陶居",
                                             "sys_context_str": state["sys_context_str"]}).variables
    done = invoke("update_dialogue_state", {"understanding": CONFIRM, "catalog": CATALOG, "query": "好的，确认",
                                            "sys_context_str": shown["sys_context_str"]}).variables
    assert done["next_action"] == "execute"
    ok = invoke("record_task_result", {"sys_context_str": done["sys_context_str"],
                                       "execute": json.dumps(done["execute_payload"]), "success": True, "detail": "订单 A1"})
    assert_consistent("record_task_result", ok)
    assert ok.variables["ok"] is True and ok.variables["task_id"] == done["execute_payload"]["task_id"]
    entry = json.loads(ok.variables["sys_context_str"])["done"][-1]
    assert entry["status"] == "success" and entry["detail"] == "订单 A1"

    failed = invoke("record_task_result", {"sys_context_str": done["sys_context_str"],
                                           "task_id": done["execute_payload"]["task_id"], "success": False, "detail": "满座"})
    gaps = invoke("detect_slot_gaps", {"sys_context_str": failed.variables["sys_context_str"], "catalog": CATALOG})
    assert gaps.variables["task"]["id"] == done["execute_payload"]["task_id"]  # back on the stack for a retry

    unknown = invoke("record_task_result", {"sys_context_str": done["sys_context_str"], "task_id": "t99",
                                            "success": True})
    assert unknown.variables["ok"] is False and unknown.variables["error_param"] == "task_id"
    assert unknown.variables["sys_context_str"] == done["sys_context_str"]
    missing = invoke("record_task_result", {"sys_context_str": done["sys_context_str"], "success": True})
    assert missing.variables["error_param"] == "task_id"


# ------------------------------------------------------------------ any input, every tool

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from dskit.tooling.dslrun.plugin_tools import registration  # noqa: E402

TOOL_PARAMS = {name: [p.name for p in config.parameters]
               for name, (config, _cls) in registration().tools_mapping["dialogue_state_kit"][2].items()}
JUNK = st.one_of(st.none(), st.booleans(), st.integers(min_value=-10**12, max_value=10**12),
                 st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=80),
                 st.sampled_from(["", "{", "[1,2", CATALOG, START, FILL, "all", "en", "restart", "../x", "x" * 3000]),
                 st.lists(st.text(max_size=5), max_size=3), st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3))


@given(tool=st.sampled_from(sorted(TOOL_PARAMS)), data=st.data())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_no_input_breaks_any_tool(tool: str, data) -> None:
    names = TOOL_PARAMS[tool]
    params = data.draw(st.dictionaries(st.sampled_from(names), JUNK, max_size=len(names)))
    with pytest.MonkeyPatch.context() as mp:
        FakeDaemon(manifest=PLUGIN_ROOT / "manifest.yaml", llm_replies=[lambda r: "{}"] * 3).patch(mp)
        out = invoke(tool, params)
    assert_consistent(tool, out)
    assert isinstance(out.variables["ok"], bool)
    if not out.variables["ok"]:
        assert out.variables["error"] and out.text


def test_an_execution_carries_the_sessions_idempotency_key(daemon: FakeDaemon) -> None:
    """Issue 39: the state tools key an execution with the tool session's conversation id, as the state code
    node does with sys.conversation_id (dskit.state.integrity.execution_key); no conversation, no key."""
    from dskit.state.integrity import execution_key

    done = {"task": "book_restaurant", "slots": {"date": "周五", "time": "20:00", "people": 3, "restaurant": "陶陶居"}}
    first = invoke("update_dialogue_state", {"understanding": json.dumps({"commands": [{"type": "start_task", **done}]},
                                                                         ensure_ascii=False),
                                             "sys_context_str": "", "catalog": CATALOG,
                                             "query": "订周五晚上8点陶陶居，三个人"})
    assert first.variables["next_action"] == "confirm"
    confirm = {"understanding": json.dumps({"commands": [{"type": "confirm"}]}),
               "sys_context_str": first.variables["sys_context_str"], "catalog": CATALOG, "query": "好的，订吧"}
    for conversation in ("conv-9", None):
        out = invoke("update_dialogue_state", confirm, conversation_id=conversation).variables
        payload = out["execute_payload"]
        assert out["next_action"] == "execute" and payload["task"] == "book_restaurant"
        if conversation:
            assert out["execute_key"] == payload["idempotency_key"] == execution_key(conversation, payload)
        else:
            assert out["execute_key"] == "" and "idempotency_key" not in payload
