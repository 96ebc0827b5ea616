"""Tools refuse silently-unsafe calls (issue 19, class 10): every case found is kept here.

- Grounding needs the user's message: ``update_dialogue_state`` and ``track_state`` refuse a missing,
  empty or blank ``query`` (an Agent can simply omit it) instead of applying every command unchecked.
- A yes/no parameter accepts a real boolean or a documented spelling; anything else is an error,
  never a guessed "false" (``record_task_result`` read "成功" as a failure and put a booked task back
  for a second run) nor a guessed "true" (``forget`` with ``all = "否"``).
- ``remember``: only a valid JSON array is a batch; a single fact may start with "[".

Every tool runs through the SDK (``PluginExecutor.invoke_tool``) with the fake daemon; the YAML is
loaded through the SDK's own models.
"""

from __future__ import annotations

import dify_plugin  # noqa: F401  (first: gevent monkey-patching)

import copy
import json
from typing import Any

import pytest
import yaml
from dify_plugin.entities.tool import ToolConfiguration
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dskit.surfaces.node_io import outcome, truthy
from dskit.tooling.dslrun.plugin_daemon import FakeDaemon
from dskit.tooling.dslrun.plugin_tools import PLUGIN_ROOT, invoke, plugin_cwd
from fakes.sdk import assert_consistent

CATALOG = (PLUGIN_ROOT / "examples/catalogs/restaurant.json").read_text(encoding="utf-8")
INVENTED = json.dumps({"rewritten_query": "", "commands": [{"type": "start_task", "task": "book_restaurant", "slots": {
    "date": "周五", "time": "20:00", "people": 3, "restaurant": "陶陶居"}}]}, ensure_ascii=False)
START = json.dumps({"rewritten_query": "", "commands": [{"type": "start_task", "task": "book_restaurant", "slots": {
    "date": "周五", "time": "20:00", "people": 3}}]}, ensure_ascii=False)
FILL = json.dumps({"commands": [{"type": "set_slots", "slots": {"restaurant": "陶陶居"}}]}, ensure_ascii=False)
CONFIRM = json.dumps({"commands": [{"type": "confirm"}]})
MODEL = {"provider": "langgenius/openai/openai", "model": "gpt-4o-mini", "mode": "chat", "completion_params": {}}
BLANK_QUERIES = ["<missing>", "", " ", "\n\t ", "\u3000", None]


@pytest.fixture()
def daemon(monkeypatch: pytest.MonkeyPatch) -> FakeDaemon:
    return FakeDaemon(manifest=PLUGIN_ROOT / "manifest.yaml", llm_replies=[INVENTED] * 20).patch(monkeypatch)


def tool_config(tool: str) -> ToolConfiguration:
    """The tool's YAML as the SDK's own model reads it."""
    with plugin_cwd():
        data = yaml.safe_load((PLUGIN_ROOT / f"tools/{tool}.yaml").read_text(encoding="utf-8"))
        return ToolConfiguration(**data)


def parameter(tool: str, name: str) -> Any:
    return next(p for p in tool_config(tool).parameters if p.name == name)


def with_query(params: dict, query: Any) -> dict:
    return params if query == "<missing>" else {**params, "query": query}


# ------------------------------------------------------------------ grounding needs the message


def booked_state() -> str:
    """A state with a booking in progress, to show that a refused call hands it back unchanged."""
    out = invoke("update_dialogue_state", {"understanding": START, "catalog": CATALOG, "query": "订周五晚上8点，三个人"})
    assert out.variables["ok"] is True
    return out.variables["sys_context_str"]


@pytest.mark.parametrize("query", BLANK_QUERIES)
@pytest.mark.parametrize("lang, word", [("zh", "不能为空"), ("en", "must not be empty")])
def test_update_dialogue_state_refuses_a_missing_message(daemon: FakeDaemon, query: Any, lang: str, word: str) -> None:
    state = booked_state()
    out = invoke("update_dialogue_state", with_query(
        {"understanding": INVENTED, "catalog": CATALOG, "sys_context_str": state, "lang": lang}, query))
    assert_consistent("update_dialogue_state", out)
    v = out.variables
    assert v["ok"] is False and v["error_param"] == "query"
    assert "query" in v["error"] and word in v["error"] and v["error"] in out.text
    assert v["sys_context_str"] == state  # handed back unchanged: the invented restaurant is not applied
    assert v["next_action"] == "fallback" and v["execute_payload"] == {}


@pytest.mark.parametrize("query", BLANK_QUERIES)
def test_track_state_refuses_a_missing_message_before_calling_the_model(daemon: FakeDaemon, query: Any) -> None:
    out = invoke("track_state", with_query({"catalog": CATALOG, "model": MODEL, "sys_context_str": ""}, query))
    assert_consistent("track_state", out)
    assert out.variables["ok"] is False and out.variables["error_param"] == "query"
    assert daemon.calls == []  # refused before any model call


def test_with_the_message_an_invented_value_is_still_dropped(daemon: FakeDaemon) -> None:
    """The behaviour the message buys: the model's restaurant was never said, so it is not applied."""
    v = invoke("update_dialogue_state", {"understanding": INVENTED, "catalog": CATALOG,
                                         "query": "订周五晚上8点，三个人"}).variables
    assert v["ok"] is True and "restaurant" not in v["current_task_slots"]


def test_the_yaml_says_the_message_is_required() -> None:
    for tool in ("update_dialogue_state", "track_state"):
        assert parameter(tool, "query").required is True, tool


# ------------------------------------------------------------------ booleans: real ones and documented spellings

SUCCESS = [True, 1, 1.0, 200, 201, "true", "True", "TRUE", " true ", "1", "yes", "Yes", "y", "ok", "OK", "success",
           "Success", "succeeded", "200", "204", "是", "成功", "２００"]
FAILURE = [False, 0, 0.0, 500, 404, 302, "false", "False", "0", "no", "n", "否", "failed", "fail", "failure", "error",
           "失败", "500", "404"]
NEITHER = ["maybe", "unknown", "pending", "可能", "成功了吗", "-1", "2", 42, -1, 3.5, "successful?", "not ok", "ok?",
           "²", float("nan"), [], {}, "", "<missing>", None]


def executed_state() -> tuple[str, str]:
    said = "订周五晚上8点，三个人"
    s1 = invoke("update_dialogue_state", {"understanding": START, "catalog": CATALOG, "query": said}).variables
    s2 = invoke("update_dialogue_state", {"understanding": FILL, "catalog": CATALOG, "query": "陶陶居",
                                          "sys_context_str": s1["sys_context_str"]}).variables
    s3 = invoke("update_dialogue_state", {"understanding": CONFIRM, "catalog": CATALOG, "query": "好的，确认",
                                          "sys_context_str": s2["sys_context_str"]}).variables
    assert s3["next_action"] == "execute"
    return s3["sys_context_str"], s3["execute_payload"]["task_id"]


@pytest.fixture()
def executed(daemon: FakeDaemon) -> tuple[str, str]:
    return executed_state()


def record(state: str, task_id: str, value: Any) -> dict:
    params = {"sys_context_str": state, "task_id": task_id}
    if not (isinstance(value, str) and value == "<missing>"):
        params["success"] = value
    out = invoke("record_task_result", params)
    assert_consistent("record_task_result", out)
    return out.variables


def recorded_status(v: dict) -> str:
    return json.loads(v["sys_context_str"])["done"][-1]["status"]


@pytest.mark.parametrize("value", SUCCESS, ids=repr)
def test_every_documented_success_is_a_success(executed: tuple[str, str], value: Any) -> None:
    v = record(*executed, value)
    assert v["ok"] is True and v["success"] is True and recorded_status(v) == "success"


@pytest.mark.parametrize("value", FAILURE, ids=repr)
def test_every_documented_failure_is_a_failure(executed: tuple[str, str], value: Any) -> None:
    v = record(*executed, value)
    assert v["ok"] is True and v["success"] is False and recorded_status(v) == "failed"


@pytest.mark.parametrize("value", NEITHER, ids=repr)
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_anything_else_is_an_error_not_a_failure(executed: tuple[str, str], value: Any, lang: str) -> None:
    state, task_id = executed
    params = {"sys_context_str": state, "task_id": task_id, "lang": lang}
    if not (isinstance(value, str) and value == "<missing>"):
        params["success"] = value
    out = invoke("record_task_result", params)
    v = out.variables
    assert v["ok"] is False and v["error_param"] == "success" and "success" in v["error"]
    assert v["sys_context_str"] == state  # the task is neither marked done nor put back for a second run
    assert out.text == v["error"]


WORD_CASES = st.sampled_from(["true", "yes", "ok", "success", "succeeded", "成功", "是", "1",
                              "false", "no", "failed", "error", "失败", "否", "0"])


@given(word=WORD_CASES, upper=st.booleans(), pad=st.sampled_from(["", " ", "\t", "\n", "\u3000"]))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_documented_words_are_read_in_any_case_and_padding(executed: tuple[str, str], word: str, upper: bool,
                                                           pad: str) -> None:
    value = pad + (word.upper() if upper else word) + pad
    v = record(*executed, value)
    assert v["ok"] is True and v["success"] is outcome(word)


@given(value=st.text(max_size=12))
@settings(max_examples=120, deadline=None)
def test_the_outcome_rule_never_guesses_and_never_raises(value: str) -> None:
    """What the code node and the tool share (dskit/surfaces/node_io.py): only documented spellings have a value."""
    read = outcome(value)
    word = value.strip().lower()
    if read is None:
        assert truthy(value) is False
    elif word.isdecimal():
        status = int(word)
        assert read is (status == 1 or 200 <= status < 300)
    else:
        assert word in {"true", "yes", "y", "ok", "success", "succeeded", "1", "是", "成功", "false", "no", "n", "0",
                        "fail", "failed", "failure", "error", "否", "失败"}


def dify_cast_parameter_value(declared: str, value: Any) -> Any:
    """What Dify does to a tool parameter before the plugin sees it.

    langgenius/dify api/core/tools/__base/tool.py ``Tool.invoke`` calls ``transform_tool_parameters_type``,
    which applies api/core/plugin/entities/parameters.py ``cast_parameter_value`` to every declared
    parameter: for ``boolean``, "true/yes/y/1" -> True, "false/no/n/0" -> False and any other non-empty
    string -> ``bool(value)`` = True; for ``string``, the value as it is (``str(value)`` for a non-string).
    """
    if declared == "boolean":
        if value is None:
            return False
        if isinstance(value, str):
            word = value.lower()
            if word in ("true", "yes", "y", "1"):
                return True
            if word in ("false", "no", "n", "0"):
                return False
            return bool(value)
        return value if isinstance(value, bool) else bool(value)
    if declared == "string":
        return "" if value is None else value if isinstance(value, str) else str(value)
    raise AssertionError(declared)


def test_a_boolean_declaration_would_let_dify_turn_a_failure_into_a_success() -> None:
    """Why ``success`` and ``all`` are declared as strings: Dify's cast reads "失败" and "否" as true."""
    assert dify_cast_parameter_value("boolean", "失败") is True
    assert dify_cast_parameter_value("boolean", "否") is True
    for tool, name in (("record_task_result", "success"), ("forget", "all")):
        declared = parameter(tool, name).type.value
        assert declared == "string", (tool, name, declared)


@pytest.mark.parametrize("value, status", [("失败", "failed"), ("failed", "failed"), (False, "failed"),
                                           ("成功", "success"), (True, "success"), (200, "success"),
                                           (503, "failed")])
def test_the_outcome_survives_difys_cast(executed: tuple[str, str], value: Any, status: str) -> None:
    declared = parameter("record_task_result", "success").type.value
    v = record(*executed, dify_cast_parameter_value(declared, value))
    assert v["ok"] is True and recorded_status(v) == status


def stored(daemon: FakeDaemon) -> dict:
    return copy.deepcopy(daemon.storage.data)


@pytest.mark.parametrize("value", [False, 0, "false", "False", "0", "no", "n", "否", "off", "", None],
                         ids=repr)
def test_forget_all_false_never_wipes(daemon: FakeDaemon, value: Any) -> None:
    invoke("remember", {"text": "我对花生过敏"})
    v = invoke("forget", {"all": dify_cast_parameter_value("string", value) if value is not None else None,
                          "subject": "没有这个主题"}).variables
    assert v["count"] == 0
    assert "花生" in invoke("recall", {"query": "花生"}).variables["memories"]  # still remembered


@pytest.mark.parametrize("value", ["maybe", "可能", "2", 7, "全部?", "不", "all"], ids=repr)
def test_forget_all_refuses_anything_else_and_deletes_nothing(daemon: FakeDaemon, value: Any) -> None:
    invoke("remember", {"text": "我对花生过敏"})
    before = stored(daemon)
    out = invoke("forget", {"all": value})
    assert out.variables["ok"] is False and out.variables["error_param"] == "all"
    assert out.variables["count"] == 0 and stored(daemon) == before


@pytest.mark.parametrize("value", [True, "true", "yes", "是", "1", "on"], ids=repr)
def test_forget_all_true_wipes(daemon: FakeDaemon, value: Any) -> None:
    invoke("remember", {"text": "我对花生过敏"})
    assert invoke("forget", {"all": value}).variables["count"] == 1


# ------------------------------------------------------------------ remember: only a valid JSON array is a batch

BRACKET_FACTS = ["[重要] 我对花生过敏", "[2024] 年我搬到了上海", "[VIP] 我是金卡会员", "[ 注意 ] 我不吃辣",
                 "[备注]：我住在杭州西湖区", "[[喜欢]] 靠窗的座位", "[1] 我有两个孩子", "[x] 周末不接电话"]


@pytest.mark.parametrize("fact", BRACKET_FACTS)
def test_a_fact_that_starts_with_a_bracket_is_one_fact(daemon: FakeDaemon, fact: str) -> None:
    out = invoke("remember", {"text": fact})
    v = out.variables
    assert v["ok"] is True and "JSON" not in out.text, out.text
    assert v["added"] == 1 and v["saved"][0]["text"] in fact  # one fact (a "[备注]：" label may be dropped)


@pytest.mark.parametrize("batch, n", [('["我对花生过敏", "我住在杭州"]', 2), (' [{"text": "我喜欢靠窗的座位"}] ', 1)])
def test_a_valid_json_array_is_a_batch(daemon: FakeDaemon, batch: str, n: int) -> None:
    v = invoke("remember", {"text": batch}).variables
    assert v["ok"] is True and len(v["results"]) == n and v["added"] == n


@pytest.mark.parametrize("cut", ['["我对花生过敏", "我住在', '[{"text": "我喜欢靠窗', "[ ]x", '["a",'])
def test_a_batch_cut_short_is_refused_not_stored_as_one_fact(daemon: FakeDaemon, cut: str) -> None:
    before = stored(daemon)
    out = invoke("remember", {"text": cut})
    assert out.variables["ok"] is False and out.variables["error_param"] == "text" and "JSON" in out.text
    assert stored(daemon) == before
