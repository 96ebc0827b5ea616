"""The code-node entry functions (dskit/surfaces/nodes.py), called in-process: behaviour and fuzzing."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dskit.context.history import HISTORY_NODE_OUTPUTS
from dskit.turn.machine import step
from dskit.surfaces.nodes import (
    CLASSIC_ADAPTER_OUTPUTS,
    MEMORY_OUTPUTS,
    RESULT_NODE_OUTPUTS,
    STATE_NODE_OUTPUTS,
    SUMMARY_NODE_OUTPUTS,
    classic_adapter_node,
    history_node,
    replies_itself,
    result_node,
    state_node,
    summary_node,
)
from dskit.surfaces.node_io import conform, text_in, text_out
from dskit.state.records import NEXT_ACTIONS
from dskit.state.state import load_state
from dskit.turn.commands import CannotHandle, Chitchat, Faq, Handoff
from dskit.turn.understanding import parse_understanding
from dskit.state.views import follow_up
from dskit.catalog.catalog import load_catalog
from test_nodes_kit import (
    FOREIGN_STATE,
    NASTY_TEXTS,
    RESTAURANT,
    TRAVEL,
    TRAVEL_DICT,
    assert_outputs,
    hostile_text,
    hostile_value,
)

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                        HealthCheck.data_too_large])


def understanding(*commands: dict, query: str = "") -> str:
    return json.dumps({"rewritten_query": query, "commands": list(commands)}, ensure_ascii=False)


# ---------------------------------------------------------------- state node

def test_state_node_runs_a_dialogue():
    first = state_node(understanding({"type": "start_task", "task": "plan_route", "slots": {"origin": "成都"}},
                                     query="下周三从成都出发"), "", TRAVEL)
    assert_outputs(first, STATE_NODE_OUTPUTS)
    assert first["next_action"] == "ask_slot"
    assert first["current_task"] == "plan_route" and first["current_task_label"] == "路线规划"
    assert json.loads(first["current_task_slots"]) == {"origin": "成都"}  # filled slots; the rest: missing_slots
    assert first["slot"] == "destination" and first["question"].endswith("请问您要去哪里？")
    assert json.loads(first["missing_slots"]) == ["destination", "date"]
    assert first["rewritten_query"] == "下周三从成都出发" and first["stack_depth"] == 1 and first["error"] == ""
    second = state_node("```json\n" + understanding({"type": "set_slots", "slots": {"destination": "拉萨",
                                                                                     "date": "下周三"}}) + "\n```",
                        first["sys_context_str"], TRAVEL)
    assert second["next_action"] == "confirm" and second["current_task_stage"] == "CONFIRMING"
    third = state_node(understanding({"type": "confirm"}), second["sys_context_str"], TRAVEL)
    assert third["next_action"] == "execute" and third["execute_task"] == "plan_route"
    payload = json.loads(third["execute_payload"])
    assert payload["slots"] == {"origin": "成都", "destination": "拉萨", "date": "下周三"}
    assert third["stack_depth"] == 0 and third["current_task"] == ""
    assert json.loads(third["decision"])["next_action"] == "execute"


def test_state_node_faq_and_handoff_outputs():
    opened = state_node(understanding({"type": "start_task", "task": "weather"}), "", TRAVEL)
    faq = state_node(understanding({"type": "faq", "question": "高原反应怎么办"}), opened["sys_context_str"], TRAVEL)
    assert faq["next_action"] == "faq" and faq["faq_question"] == "高原反应怎么办"
    assert faq["question"] == opened["question"]  # the pending slot question comes back after the answer
    handoff = state_node(understanding({"type": "handoff", "reason": "user asked"}), faq["sys_context_str"], TRAVEL)
    assert handoff["next_action"] == "handoff" and handoff["handoff_reason"] == "user asked"


def test_broken_catalog_leaves_the_state_unchanged():
    opened = state_node(understanding({"type": "start_task", "task": "weather"}), "", TRAVEL)
    broken = state_node(understanding({"type": "faq"}), opened["sys_context_str"], '{"tasks": 3}')
    assert_outputs(broken, STATE_NODE_OUTPUTS)
    assert broken["sys_context_str"] == opened["sys_context_str"]
    assert broken["next_action"] == "fallback" and "tasks" in broken["error"]
    assert broken["question"].startswith("系统配置有误")
    assert broken["current_task"] == "weather"  # still readable from the kept state


def test_broken_catalog_text_follows_the_catalogs_language_when_readable():
    broken = state_node("", "", json.dumps({"language": "en", "tasks": []}))
    assert broken["question"].startswith("The assistant is misconfigured")
    assert state_node("", "", "", lang="en")["question"].startswith("The assistant is misconfigured")


def test_oversized_or_numeric_looking_state_is_not_echoed():
    assert state_node("", "x" * 500_000, "{")["sys_context_str"] == ""
    assert state_node("", "1e+5", "{")["sys_context_str"] == ""


def test_engine_failure_keeps_the_old_state(monkeypatch):
    import dskit.surfaces.nodes as nodes

    opened = state_node(understanding({"type": "start_task", "task": "weather"}), "", TRAVEL)

    def boom(*args, **kwargs):
        raise RuntimeError("bug")

    monkeypatch.setattr(nodes, "run_turn", boom)
    failed = state_node(understanding({"type": "reset"}), opened["sys_context_str"], TRAVEL)
    assert_outputs(failed, STATE_NODE_OUTPUTS)
    assert failed["sys_context_str"] == opened["sys_context_str"]
    assert failed["error"] == "RuntimeError: bug" and failed["next_action"] == "fallback"


def test_understanding_may_arrive_as_an_object():
    result = state_node({"commands": [{"type": "start_task", "task": "weather"}]}, None, json.loads(TRAVEL))
    assert result["current_task"] == "weather"


def test_numeric_looking_text_outputs_get_a_trailing_space():
    assert text_out("1e+5") == "1e+5 "
    assert text_out("12") == "12"
    result = state_node(understanding({"type": "chitchat"}, query="1E-7"), "", TRAVEL)
    assert result["rewritten_query"] == "1E-7 "


def test_conform_fills_and_fixes_every_declared_output():
    fixed = conform({"a": None, "n": float("nan"), "b": "yes", "x": 1, "big": 2 ** 70, "tiny": 1e-25},
                          {"a": "string", "n": "number", "b": "boolean", "missing": "string", "big": "number",
                           "tiny": "number"})
    assert fixed == {"a": "", "n": 0, "b": False, "missing": "", "big": 2 ** 63 - 1, "tiny": 0.0}
    from dskit.tooling.codegen.sandbox import check_outputs

    check_outputs(fixed, {"a": "string", "n": "number", "b": "boolean", "missing": "string", "big": "number",
                          "tiny": "number"})
    nested: list = []
    for _ in range(100_000):
        nested = [nested]
    assert isinstance(text_out(nested), str)


# ---------------------------------------------------------------- classic adapter

def adapter(class_name, state="", **params):
    result = classic_adapter_node(class_name, "用户的话", TRAVEL, state, **params)
    assert_outputs(result, CLASSIC_ADAPTER_OUTPUTS)
    return json.loads(result["understanding"])["commands"]


def test_adapter_maps_a_task_class_and_its_parameters():
    assert adapter("路线规划", origin="成都", destination="", date="null", mode=None, unrelated="x") == [
        {"type": "start_task", "task": "plan_route", "slots": {"origin": "成都"}}]
    assert adapter("weather", city=" 北京 ") == [{"type": "start_task", "task": "weather", "slots": {"city": "北京"}}]


def test_adapter_fills_the_open_task_for_a_generic_task_class():
    opened = state_node(understanding({"type": "start_task", "task": "plan_route"}), "", TRAVEL)["sys_context_str"]
    assert adapter("多轮任务", opened, date="下周三") == [
        {"type": "set_slots", "task": "plan_route", "slots": {"date": "下周三"}}]
    assert adapter("路线规划", opened, origin="成都") == [
        {"type": "set_slots", "task": "plan_route", "slots": {"origin": "成都"}}]
    assert adapter("单轮任务", "", task="查询天气", city="北京") == [
        {"type": "start_task", "task": "weather", "slots": {"city": "北京"}}]
    assert adapter("多轮任务", "") == [{"type": "cannot_handle"}]


@pytest.mark.parametrize("class_name, command", [
    ("FAQ", {"type": "faq", "question": "用户的话"}), ("知识问答", {"type": "faq", "question": "用户的话"}),
    ("转人工", {"type": "handoff", "reason": "user_request"}), ("闲聊", {"type": "chitchat"}),
    ("确认", {"type": "confirm"}), ("取消", {"type": "cancel_task"}), ("Small-Talk", {"type": "chitchat"}),
    ("完全未知的分类", {"type": "cannot_handle"}),
])
def test_adapter_maps_non_task_classes(class_name, command):
    assert adapter(class_name) == [command]


def test_adapter_output_feeds_the_state_node():
    result = classic_adapter_node("查询天气", "北京天气", TRAVEL, "", city="北京")
    state = state_node(result["understanding"], "", TRAVEL)
    assert state["next_action"] == "execute" and json.loads(state["execute_payload"])["slots"] == {"city": "北京"}


def test_adapter_reads_params_json_and_ignores_dunder_outputs():
    result = classic_adapter_node("路线规划", "q", TRAVEL, "", params_json='{"origin": "成都", "date": "明天"}',
                                  __is_success=1, __reason="", destination="拉萨")
    assert json.loads(result["understanding"])["commands"][0]["slots"] == {"origin": "成都", "date": "明天",
                                                                           "destination": "拉萨"}


def test_adapter_with_a_broken_catalog_cannot_handle():
    result = classic_adapter_node("路线规划", "q", "not json", "")
    assert json.loads(result["understanding"])["commands"] == [{"type": "cannot_handle"}]
    assert result["error"].startswith("catalog:")


# ---------------------------------------------------------------- result node

def executed_state() -> tuple[str, str]:
    done = state_node(understanding({"type": "start_task", "task": "weather", "slots": {"city": "北京"}}), "", TRAVEL)
    assert done["next_action"] == "execute"
    return done["sys_context_str"], done["execute_payload"]


@pytest.mark.parametrize("ok, expected", [
    ("true", True), ("200", True), (204, True), ("成功", True), (True, True), (1, True),
    ("false", False), ("500", False), ("", False), (None, False), ("garbage", False), ("9" * 40, False),
])
def test_result_node_records_the_outcome(ok, expected):
    state, payload = executed_state()
    result = result_node(state, payload, ok, "detail")
    assert_outputs(result, RESULT_NODE_OUTPUTS)
    assert result["ok"] is expected and result["error"] == ""
    done = load_state(result["sys_context_str"])[0]["done"][-1]
    assert done["status"] == ("success" if expected else "failed")


def test_result_node_without_a_payload_changes_nothing():
    state, _ = executed_state()
    result = result_node(state, "", "true", "")
    assert result == {"sys_context_str": state, "ok": False, "error": "execute_payload has no task_id"}


# ---------------------------------------------------------------- history and summary nodes

def test_history_node_appends_and_rolls_overflow_into_the_summary():
    history, summary = "", ""
    for day in range(12):
        result = history_node(history, summary, f"北京第{day}天几度", f"第{day}天晴，{day}度", max_turns=5)
        assert_outputs(result, HISTORY_NODE_OUTPUTS)
        history, summary = result["history"], result["summary"]
    assert result["turns"] == 5 and "北京第11天几度" in history and "北京第0天几度" not in history
    assert summary  # the turns that left the window were summarised, not dropped


def test_history_node_tags_turns_the_state_machine_acted_on():
    decision = state_node(understanding({"type": "start_task", "task": "weather", "slots": {"city": "北京"}}),
                          "", TRAVEL)["decision"]
    result = history_node("", "", "北京天气", "晴", decision=decision)
    assert result["tag"] == "essential" and "[essential]" in result["history"]
    assert history_node("", "", "你好", "你好！", decision="not json")["tag"] != "essential"


def test_history_node_takes_the_first_non_empty_answer_branch():
    result = history_node("", "", "问题", "", answer_a="", answer_b="None", answer_c="分支C的回答")
    assert "分支C的回答" in result["history"]


MEMORY_SETTINGS = {"max_turns": 2, "max_bytes": 56_000, "summary_max_tokens": 400, "llm_summary": "true"}


def test_state_node_keeps_the_memory_of_a_turn_whose_reply_is_its_question():
    old_history = "\n\n---\n\n".join(f"user: 第{i}句\n\nassistant: 好的{i}" for i in range(2))
    query = "下周三从成都出发"
    result = state_node(understanding({"type": "start_task", "task": "plan_route", "slots": {"origin": "成都"}}),
                        "", TRAVEL, query=query, history=old_history, summary="- 用户：北京", **MEMORY_SETTINGS,
                        history_lang="zh")
    assert_outputs(result, STATE_NODE_OUTPUTS)
    assert result["next_action"] == "ask_slot" and result["memory_ready"] is True
    # exactly what the history node after the answer would have returned
    expected = history_node(old_history, "- 用户：北京", query, result["question"], result["decision"],
                            sys_context_str=result["sys_context_str"], task_catalog=TRAVEL, lang="zh",
                            **MEMORY_SETTINGS)
    for name in MEMORY_OUTPUTS:
        if name != "memory_ready":
            assert result[name] == expected[name], name
    assert result["summary_due"] is True and "第0句" in result["overflow"]  # 3 turns in a window of 2
    assert result["history"].endswith(f"assistant: {result['question']}")
    assert result["prompt_head"].endswith("> ") and result["prompt_system"]


def test_state_node_leaves_the_memory_to_the_history_node_when_the_reply_comes_later():
    faq = state_node(understanding({"type": "faq", "question": "营业时间？"}), "", TRAVEL, query="营业时间？",
                     summary="", **MEMORY_SETTINGS)
    assert faq["next_action"] == "faq" and faq["memory_ready"] is False
    assert faq["history"] == faq["prompt_head"] == ""
    unbound = state_node(understanding({"type": "start_task", "task": "plan_route", "slots": {}}), "", TRAVEL,
                         query="规划路线")  # ``summary`` not bound: a Chatflow with its own history node
    assert unbound["next_action"] == "ask_slot" and unbound["memory_ready"] is False and unbound["history"] == ""


def test_a_model_answered_turn_follows_up_with_the_open_tasks_question():
    """A FAQ or small-talk answer goes back to the open task: the state node says what to show after the
    answer, and the history node records that alone — the engine's own text, not the answer model's, so
    the next understanding prompt is the same on every surface (dskit.state.views.memory_reply)."""
    start = state_node(understanding({"type": "start_task", "task": "plan_route", "slots": {"origin": "成都"}}),
                       "", TRAVEL, query="从成都出发")
    pending = start["question"]
    for command, query in (({"type": "faq", "question": "能开发票吗？"}, "能开发票吗？"),
                           ({"type": "chitchat"}, "今天天气真好")):
        turn = state_node(understanding(command), start["sys_context_str"], TRAVEL, query=query)
        assert turn["next_action"] == command["type"] and turn["question"], command
        assert turn["follow_up"] == "\n\n" + turn["question"], command
        recorded = history_node("", "", query, "模型的回答", turn["decision"], follow_up=turn["follow_up"])
        assert recorded["history"].endswith("assistant: " + turn["question"])
        assert "模型的回答" not in recorded["history"] and "模型的回答" not in recorded["prompt_head"]
    assert pending and start["follow_up"] == ""  # the reply is the question itself
    alone = state_node(understanding({"type": "chitchat"}), "", TRAVEL, query="你好")  # no task waits
    assert alone["next_action"] == "chitchat" and alone["follow_up"] == ""
    assert history_node("", "", "你好", "你好！", follow_up="")["history"].endswith("assistant: 你好！")


# The template node the follow-up replaced (the Chatflows' faq_reply and chat_reply before issue 22).
OLD_REPLY_TEMPLATE = "{{ answer }}{% if question %}\n\n{{ question }}{% endif %}"


@pytest.mark.parametrize("question", ["请问您想订哪家餐厅？", "", "Which day?\n(two lines)"])
def test_the_answer_and_its_follow_up_read_as_the_old_template_did(question):
    jinja2 = pytest.importorskip("jinja2")  # what Dify's template-transform node runs
    answer = "包间最低消费800元。"
    old = jinja2.Template(OLD_REPLY_TEMPLATE, keep_trailing_newline=True).render(answer=answer, question=question)
    assert answer + follow_up({"next_action": "faq", "notices": "", "question": question}) == old


@pytest.mark.parametrize("action, notices, question, follow", [
    ("faq", "", "请问目的地？", "\n\n请问目的地？"), ("chitchat", "", "请问目的地？", "\n\n请问目的地？"),
    ("faq", "", "", ""), ("chitchat", "已取消。", "请问目的地？", ""), ("ask_slot", "", "请问目的地？", ""),
    ("confirm", "", "确认吗？", ""), ("execute", "", "", ""), ("handoff", "", "转人工", "")])
def test_follow_up_only_after_a_models_answer(action, notices, question, follow):
    assert follow_up({"next_action": action, "notices": notices, "question": question}) == follow


@pytest.mark.parametrize("action, notices, itself", [
    ("ask_slot", "", True), ("confirm", "", True), ("handoff", "", True), ("fallback", "", True),
    ("execute", "", False), ("faq", "", False), ("chitchat", "", False), ("chitchat", "已取消。", True)])
def test_replies_itself_follows_the_chatflow_route(action, notices, itself):
    assert replies_itself({"next_action": action, "notices": notices}) is itself


def test_summary_node_falls_back_on_a_refusal():
    result = summary_node("抱歉，我无法完成", "- 用户：北京", "user: 北京\n\nassistant: 好的")
    assert_outputs(result, SUMMARY_NODE_OUTPUTS)
    assert result["source"] == "extractive" and "北京" in result["summary"]


# ---------------------------------------------------------------- fuzz: never raises, always conforms

@FUZZ
@given(hostile_value(), hostile_value(), st.one_of(st.sampled_from([TRAVEL, RESTAURANT]), hostile_value()),
       hostile_value(), hostile_value(), hostile_value())
def test_fuzz_state_node(understanding_text, state_text, catalog_text, lang, history, summary):
    assert_outputs(state_node(understanding_text, state_text, catalog_text, lang), STATE_NODE_OUTPUTS)
    assert_outputs(state_node(understanding_text, state_text, catalog_text, lang, query="好的", history=history,
                              summary=summary), STATE_NODE_OUTPUTS)


@FUZZ
@given(hostile_value(), hostile_value(), st.one_of(st.just(TRAVEL), hostile_value()), hostile_value(),
       hostile_value(), st.dictionaries(st.sampled_from(["origin", "city", "date", "task", "x", "__reason"]),
                                        hostile_value(), max_size=4))
def test_fuzz_classic_adapter(class_name, query, catalog_text, state_text, params_json, params):
    assert_outputs(classic_adapter_node(class_name, query, catalog_text, state_text, params_json, **params),
                   CLASSIC_ADAPTER_OUTPUTS)


@FUZZ
@given(hostile_value(), hostile_value(), hostile_value(), hostile_value())
def test_fuzz_result_node(state_text, payload, ok, detail):
    assert_outputs(result_node(state_text, payload, ok, detail), RESULT_NODE_OUTPUTS)


@settings(FUZZ, max_examples=60)
@given(hostile_value(), hostile_value(), hostile_value(), hostile_value(), hostile_value(),
       st.one_of(st.integers(-5, 50), hostile_value()), st.one_of(st.integers(0, 10 ** 9), hostile_value()),
       hostile_value(), hostile_value())
def test_fuzz_history_node(old, summary, query, answer, decision, max_turns, max_bytes, llm_summary, lang):
    result = history_node(old, summary, query, answer, decision, max_turns=max_turns, max_bytes=max_bytes,
                          llm_summary=llm_summary, lang=lang)
    assert_outputs(result, HISTORY_NODE_OUTPUTS)


@FUZZ
@given(hostile_value(), hostile_value(), hostile_value(), hostile_value(), hostile_value())
def test_fuzz_summary_node(llm_text, summary, overflow, max_tokens, lang):
    assert_outputs(summary_node(llm_text, summary, overflow, max_tokens, lang), SUMMARY_NODE_OUTPUTS)


@pytest.mark.parametrize("text", NASTY_TEXTS, ids=range(len(NASTY_TEXTS)))
def test_every_node_on_nasty_text_in_every_position(text):
    for position in range(4):
        args = [text if i == position else "" for i in range(4)]
        assert_outputs(state_node(args[0], args[1], args[2] or TRAVEL, args[3]), STATE_NODE_OUTPUTS)
        assert_outputs(classic_adapter_node(args[0], args[1], args[2] or TRAVEL, args[3]), CLASSIC_ADAPTER_OUTPUTS)
        assert_outputs(result_node(*args), RESULT_NODE_OUTPUTS)
        assert_outputs(history_node(*args), HISTORY_NODE_OUTPUTS)
        assert_outputs(summary_node(*args), SUMMARY_NODE_OUTPUTS)


# ---------------------------------------------------------------- fuzz: a valid state never loses a slot

TASKS = TRAVEL_DICT["tasks"]
SAMPLE_VALUES = {"string": ["成都", "拉萨", "三亚", "北京", "下周三", "2026-01-28", "旅游险", "高原险", "自驾", "开车"],
                 "integer": [1, 2, 3, "两", 0, 99], "boolean": [True, False, "是", "否"]}


@st.composite
def slot_values(draw, task: str, allow_none: bool = True):
    slots = TASKS[task]["slots"]
    names = draw(st.lists(st.sampled_from(sorted(slots)), max_size=3, unique=True)) if slots else []
    values = {}
    for name in names:
        spec = slots[name]
        pool = list(spec.get("enum") or []) + SAMPLE_VALUES.get(spec.get("type", "string"), [])
        values[name] = draw(st.sampled_from(pool + ([None] if allow_none else [])))
    return values


@st.composite
def commands(draw):
    kind = draw(st.sampled_from(["start_task", "start_task", "set_slots", "set_slots", "cancel_task", "confirm", "deny", "faq",
                                 "chitchat", "handoff", "rollback_slot", "reset", "cannot_handle"]))
    task = draw(st.sampled_from(sorted(TASKS)))
    if kind == "start_task":
        return {"type": kind, "task": task, "slots": draw(slot_values(task, allow_none=False))}
    if kind == "set_slots":
        command = {"type": kind, "slots": draw(slot_values(task)) or {"date": "明天"}}
        if draw(st.booleans()):
            command["task"] = task
        return command
    if kind == "rollback_slot":
        return {"type": kind, "slot": draw(st.sampled_from(["date", "origin", "city", "destination"]))}
    if kind == "cancel_task":
        return {"type": kind, "task": task} if draw(st.booleans()) else {"type": kind}
    if kind == "faq":
        return {"type": kind, "question": "高原反应怎么办"}
    return {"type": kind}


command_turns = st.lists(commands(), min_size=1, max_size=3).map(lambda cs: understanding(*cs))
understandings = st.one_of(command_turns, hostile_text())
# Mostly well-formed turns, so that the states under test hold open tasks with filled slots.
state_histories = st.lists(command_turns, min_size=1, max_size=8)


def build_state(turns: list[str]) -> str:
    state = ""
    for turn in turns:
        state, _decision = step(state, turn, TRAVEL)
    return state


def allowed_losses(old: dict, new: dict, parsed: dict) -> set[str]:
    """Task ids whose slots this understanding may legitimately remove or change."""
    commands = [c.wire() for c in parsed["commands"]] if parsed["usable"] else []
    kinds = {c["type"] for c in commands}
    old_ids = {t["id"] for t in old["task_stack"]}
    if kinds & {"reset", "cancel_task"}:  # clear, or cancel (with cascade)
        return old_ids
    opening = sum(1 for c in commands if c["type"] == "start_task" or (c["type"] == "set_slots" and c.get("task")))
    if len(old["task_stack"]) + opening > TRAVEL_DICT["policy"]["max_stack"]:  # the oldest may be evicted
        return old_ids
    # executed this turn, with the sub-tasks submitted with it: the slots moved to the payload
    may = {d["task_id"] for d in new["done"]} | {s["task_id"] for d in new["done"] for s in d.get("subtasks") or []}
    # cascade from a changed parent; a start_task naming an open task with slots changes that task too
    if kinds & {"set_slots", "rollback_slot"} or any(c["type"] == "start_task" and c.get("slots") for c in commands):
        may |= {t["id"] for t in old["task_stack"] if t.get("parent_id")}
    return may


def touched_slots(parsed: dict) -> set[str]:
    names: set[str] = set()
    for command in [c.wire() for c in parsed["commands"]] if parsed["usable"] else []:
        names |= set(command.get("slots") or {})
        if command.get("slot"):
            names.add(command["slot"])
    return names


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(state_histories, understandings)
def test_a_valid_state_never_loses_a_confirmed_slot(history, latest):
    old_text = build_state(history)
    old, errors = load_state(old_text)
    assert errors == []
    result = state_node(latest, old_text, TRAVEL)
    assert_outputs(result, STATE_NODE_OUTPUTS)
    assert result["next_action"] in NEXT_ACTIONS
    new, new_errors = load_state(result["sys_context_str"])
    assert new_errors == [] and result["error"] == ""
    parsed = parse_understanding(latest, load_catalog(TRAVEL))
    allowed = allowed_losses(old, new, parsed)
    touched = touched_slots(parsed)
    new_tasks = {t["id"]: t for t in new["task_stack"]}
    for task in old["task_stack"]:
        if task["id"] in allowed:
            continue
        assert task["id"] in new_tasks, ("task vanished", task["id"], latest)
        for slot, value in task["slots"].items():
            if slot in touched:
                continue
            assert new_tasks[task["id"]]["slots"].get(slot) == value, ("slot lost", task["id"], slot, latest)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(state_histories, hostile_text())
def test_unusable_understanding_changes_no_slot(history, noise):
    old_text = build_state(history)
    parsed = parse_understanding(noise, load_catalog(TRAVEL))
    if parsed["usable"]:
        return
    result = state_node(noise, old_text, TRAVEL)
    old, new = load_state(old_text)[0], load_state(result["sys_context_str"])[0]
    assert [(t["id"], t["slots"]) for t in old["task_stack"]] == [(t["id"], t["slots"]) for t in new["task_stack"]]


def test_foreign_state_starts_clean_and_says_so():
    result = state_node(understanding({"type": "chitchat"}), FOREIGN_STATE, TRAVEL)
    assert_outputs(result, STATE_NODE_OUTPUTS)
    state = load_state(result["sys_context_str"])[0]
    assert state["task_stack"] == [] and any(e["code"] == "state" for e in state["errors"])


def rich_state() -> str:
    """Three open tasks with filled slots: a route, its insurance (a child task) and a weather query."""
    turns = [
        understanding({"type": "start_task", "task": "plan_route",
                       "slots": {"origin": "成都", "destination": "拉萨", "mode": "自驾"}}),
        understanding({"type": "start_task", "task": "travel_insurance", "slots": {"insurance_type": "高原险"}}),
        understanding({"type": "set_slots", "slots": {"insured_count": 2}}),
        understanding({"type": "start_task", "task": "weather", "slots": {"date": "明天"}}),
    ]
    state = build_state(turns)
    stack = load_state(state)[0]["task_stack"]
    assert [t["name"] for t in stack] == ["plan_route", "travel_insurance", "weather"]
    assert all(t["slots"] for t in stack)
    return state


RICH = rich_state()


def slots_of(state_text: str) -> list:
    return [(t["id"], t["slots"]) for t in load_state(state_text)[0]["task_stack"]]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(hostile_value(), st.sampled_from(NASTY_TEXTS),
                 st.lists(st.sampled_from([{"type": "faq", "question": "q"}, {"type": "chitchat"},
                                           {"type": "handoff"}, {"type": "cannot_handle"}]),
                          min_size=1, max_size=3).map(lambda cs: understanding(*cs))))
def test_rich_state_keeps_every_slot_through_noise_and_interruptions(latest):
    result = state_node(latest, RICH, TRAVEL)
    assert_outputs(result, STATE_NODE_OUTPUTS)
    raw = latest if isinstance(latest, (dict, list)) else text_in(latest)  # what state_node passes on
    parsed = parse_understanding(raw, load_catalog(TRAVEL))
    if parsed["usable"] and {type(c) for c in parsed["commands"]} - {Faq, Chitchat, Handoff, CannotHandle}:
        return  # a real command: covered by the general property above
    assert slots_of(result["sys_context_str"]) == slots_of(RICH)
