"""Context assembly (dskit.context.context): five zones, per-zone and total budgets, nothing confirmed lost."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import load_example_catalog
from dskit.catalog.catalog import load_catalog
from dskit.context.context import CONTEXT_ZONES, assemble_context
from dskit.context.history import append_turn
from dskit.turn.machine import step
from dskit.state.state import filled_slots, load_state
from dskit.base.tokens import estimate_tokens
from dskit.state.views import state_text


def booking_state() -> str:
    """A real engine state: a restaurant booking with four slots filled."""
    catalog = load_catalog(load_example_catalog("restaurant"))
    state, _ = step("", {"commands": [{"type": "start_task", "task": "book_restaurant",
                                       "slots": {"date": "周五", "people": 3, "time": "20:00"}}]}, catalog)
    state, _ = step(state, {"commands": [{"type": "set_slots", "slots": {"area": "市中心"}}]}, catalog)
    return state


STATE = booking_state()
SLOTS = [item for slots in filled_slots(load_state(STATE)[0]).values() for v in slots.values()
         for item in (v if isinstance(v, list) else [v])]


def history_of(turns: list[tuple[str, str]]) -> str:
    history = ""
    for user, reply in turns:
        history = append_turn(history, user, reply, max_turns=50)["history"]
    return history


CHAT = [("你好", "您好！有什么可以帮您？"),
        ("帮我订周五晚上8点，三个人", "好的，已记下日期：周五，时间：20:00，人数：3。请问您想订哪家餐厅？"),
        ("停车方便吗？", "大部分门店都有停车场，商场门店可以凭小票免费停两小时，超出部分按商场标准收费；"
                  "街边门店车位紧张，周末晚餐高峰经常排队，建议提前二十分钟到达或者乘坐公共交通。"),
        ("谢谢", "不客气！"),
        ("市中心的", "好的，已记下区域：市中心。请问您想订哪家餐厅？"),
        ("可以带宠物吗？", "室内用餐区一般不能带宠物，部分户外区域可以，建议先电话确认。请问您想订哪家餐厅？")]
HISTORY = history_of(CHAT)
MEMORY = "- 用户偏好安静的包间\n- 用户不吃辣\n- 用户常住上海"
EXTERNAL = "[1] 陶陶居：粤菜，人均120元，市中心。\n\n[2] 点都德：早茶，人均90元。\n\n[3] 外婆家：杭帮菜，人均70元。"


def test_zones_in_order_and_noise_never_enters() -> None:
    result = assemble_context(system="你是订餐助手。", state=STATE, memory=MEMORY, history=HISTORY,
                              summary="- 助手：已为您查询过营业时间。", external=EXTERNAL, total_budget=10_000)
    text = result["text"]
    positions = [text.index(marker) for marker in ("你是订餐助手", "【当前状态】", "【相关记忆】", "【对话历史】", "【参考资料】")]
    assert positions == sorted(positions)
    assert "谢谢" not in text and "你好" not in text
    assert result["report"]["noise_removed"] == 2 and not result["report"]["over_budget"]
    assert set(result["report"]["tokens"]) == set(CONTEXT_ZONES)


def test_state_zone_is_compact_and_whole() -> None:
    text = state_text(STATE)
    assert text.startswith("- 当前任务：book_restaurant（订餐，COLLECTING）：")
    for value in ("date=周五", "time=20:00", "people=3", "市中心"):
        assert value in text
    assert estimate_tokens(text) < estimate_tokens(STATE) / 3
    assert state_text('{"foreign": 1}') == '{"foreign": 1}'
    assert state_text("当前状态是查询天气信息收集中") == "当前状态是查询天气信息收集中"
    raw = assemble_context(state=STATE, state_view="raw")["text"]
    assert STATE in raw


def test_state_zone_names_missing_slots_given_the_catalog() -> None:
    catalog = load_catalog(load_example_catalog("restaurant"))
    text = assemble_context(state=STATE, catalog=catalog)["text"]
    assert "缺：restaurant" in text and "上一轮追问的槽位：restaurant（book_restaurant）" in text


def test_trimming_order_optional_then_oldest_then_external_then_memory() -> None:
    full = assemble_context(state=STATE, memory=MEMORY, history=HISTORY, external=EXTERNAL, total_budget=10_000,
                            budgets={})
    budget = full["report"]["total"] - 150
    result = assemble_context(state=STATE, memory=MEMORY, history=HISTORY, external=EXTERNAL, total_budget=budget,
                              budgets={})
    whats = [(c["zone"], c["what"]) for c in result["report"]["cut"] if c["what"] != "noise turn"]
    assert whats[0] == ("history", "optional reply shortened")
    kinds = [w for _, w in whats]
    first_external = next((i for i, (z, _) in enumerate(whats) if z == "external"), len(whats))
    assert all(z == "history" for z, _ in whats[:first_external])
    assert kinds.index("optional turn") < kinds.index("oldest turn summarised") < first_external
    assert result["report"]["total"] <= budget
    # memory is only touched once external is empty
    first_memory = next((i for i, (z, _) in enumerate(whats) if z == "memory"), None)
    if first_memory is not None:
        assert "【参考资料】" not in result["text"]


def test_an_essential_turn_cut_for_budget_leaves_its_summary_line() -> None:
    history = history_of([("帮我订周五晚上8点，三个人", "好的，已记下日期：周五，时间：20:00，人数：3。请问您想订哪家餐厅？")]
                         + [(f"第{i}个问题是什么？", "这是一个很长的回答。" * 8) for i in range(4)])
    result = assemble_context(history=history, budgets={"history": 120}, total_budget=2000)
    assert "已记下日期：周五，时间：20:00，人数：3" in result["text"]
    assert any(c["what"] == "oldest turn summarised" for c in result["report"]["cut"])


def test_zone_budgets_bound_external_and_memory() -> None:
    external = "\n\n".join(f"[{i}] 第{i}条检索结果，内容很长很长很长很长很长很长。" for i in range(40))
    result = assemble_context(external=external, memory=MEMORY * 20, budgets={"external": 200, "memory": 60})
    assert result["report"]["tokens"]["external"] <= 200
    assert result["report"]["tokens"]["memory"] <= 60
    assert "[0]" in result["text"] and "[39]" not in result["text"]  # the least relevant go first


def test_over_budget_is_reported_when_state_alone_does_not_fit() -> None:
    result = assemble_context(system="系统" * 200, state=STATE, history=HISTORY, total_budget=100)
    assert result["report"]["over_budget"] is True
    assert all(str(v) in result["text"] for v in SLOTS)  # the state is never cut
    assert "停车" not in result["text"]


def test_english_headers() -> None:
    text = assemble_context(state=STATE, history=HISTORY, lang="en")["text"]
    assert "[Current state]" in text and "[Conversation history]" in text and "current task" in text


TURN = st.tuples(st.sampled_from(["你好", "谢谢", "停车方便吗？", "帮我订周五晚上8点", "市中心的", "好的", "改成7点",
                                  "这也太慢了吧", "可以带宠物吗？", "hello there"]),
                 st.text(alphabet=st.sampled_from(list("好的已记下时间：19:00。请问您想订哪家餐厅？抱歉 abc\n")), max_size=200))
BLOB = st.text(alphabet=st.sampled_from(list("记忆外部资料陶陶居人均元 abc123\n[]-")), max_size=400)


@settings(max_examples=120, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(TURN, max_size=14), BLOB, BLOB, BLOB, st.integers(min_value=0, max_value=1500),
       st.one_of(st.none(), st.fixed_dictionaries({"history": st.integers(1, 800), "memory": st.integers(1, 300),
                                                   "external": st.integers(1, 300)})))
def test_budget_is_never_exceeded_and_confirmed_slots_always_present(turns, memory, external, summary, extra,
                                                                      budgets) -> None:
    system = "你是订餐助手，只回答订餐相关的问题。"
    floor = assemble_context(system=system, state=STATE, budgets={})["report"]["total"]
    budget = floor + extra
    result = assemble_context(system=system, state=STATE, memory=memory, history=history_of(turns),
                              summary=summary, external=external, total_budget=budget, budgets=budgets)
    assert estimate_tokens(result["text"]) <= budget
    assert result["report"]["total"] <= budget and not result["report"]["over_budget"]
    for value in SLOTS:
        assert str(value) in result["text"]


@pytest.mark.parametrize("junk", [None, 3, "", "{", "[1,2]", '{"task_stack": "oops"}',
                                  '{"task_stack": [1, {"slots": 5}]}',
                                  "\x00\ud800", "user: \n\nassistant:"])
def test_assembly_never_raises(junk) -> None:
    out = assemble_context(system=junk, state=junk, memory=junk, history=junk, summary=junk, external=junk,
                           total_budget=junk, budgets={"history": junk}, lang=junk)
    assert isinstance(out["text"], str) and set(out["report"]["tokens"]) == set(CONTEXT_ZONES)
