"""The rolling summary (dskit.context.summary): extractive lines, caps, the LLM prompt and its checks."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dskit.context.summary import (
    SUMMARY_MAX_BYTES,
    summary_accept,
    summary_extractive,
    summary_fact_lines,
    summary_merge,
    summary_prompt,
    summary_superseded,
    summary_trim,
)
from dskit.base.tokens import estimate_tokens

BOOKING = [
    {"user": "你好", "assistant": "您好！有什么可以帮您？"},
    {"user": "帮我订周五晚上8点，三个人", "assistant": "好的，已记下日期：周五，时间：20:00，人数：3。请问您想订哪家餐厅？"},
    {"user": "停车方便吗？", "assistant": "商场有地下停车场，前两小时免费。请问您想订哪家餐厅？"},
    {"user": "这也太慢了吧", "assistant": "抱歉让您久等了。"},
    {"user": "就订陶陶居吧", "assistant": "已为您预订陶陶居，周五 20:00，3位，预订号123456。到店报手机号即可。"},
]


def test_extractive_keeps_what_set_or_confirmed_and_nothing_else() -> None:
    lines = summary_fact_lines(BOOKING)
    text = "\n".join(lines)
    assert len(lines) == 2
    assert "已记下日期：周五，时间：20:00，人数：3" in text
    assert "已为您预订陶陶居，周五 20:00，3位，预订号123456" in text
    for gone in ("你好", "停车", "太慢", "到店报手机号"):
        assert gone not in text


def test_a_short_answer_keeps_the_question_it_answered() -> None:
    lines = summary_fact_lines([{"user": "天气咋样啊", "assistant": "请问您想查询哪个城市的天气呢？"},
                                {"user": "北京", "assistant": "请问您想查询北京哪一天的天气呢？"}])
    assert any("北京" in ln and "哪个城市" in ln for ln in lines)


def test_a_reply_that_echoes_the_answer_is_its_record() -> None:
    lines = summary_fact_lines([{"user": "苏州", "assistant": "苏州今天：晴转多云，8℃~23℃。早晚温差大。", "tag": "essential"}])
    assert lines == ["- 助手：苏州今天：晴转多云，8℃~23℃。"]


def test_english_lines() -> None:
    lines = summary_fact_lines([{"user": "Book a table for 4 tomorrow", "assistant": "OK, noted people: 4.",
                                 "tag": "essential"}], lang="en")
    assert lines and lines[0].startswith("- ") and "noted people: 4" in lines[0]


def test_merge_skips_duplicates_and_respects_both_caps() -> None:
    lines = [f"- 助手：已为您预订第{i}家餐厅，周五 19:{i:02d}，{i}位。" for i in range(60)]
    merged = summary_merge("", lines + lines, max_tokens=200)
    assert estimate_tokens(merged) <= 200
    assert merged.count("第59家") == 1  # the newest survive
    big = summary_merge("", lines * 5, max_tokens=20_000)
    assert len(big.encode("utf-8")) <= SUMMARY_MAX_BYTES


def test_trim_drops_corrected_and_superseded_lines_before_facts() -> None:
    lines = ["- 用户：下周三去拉萨。（后被更正）",
             "- 助手：已记下时间：19:00。",
             "- 助手：已为您预订陶陶居，周五 19:00，3位。",
             "- 用户：我的账户余额是多少"]
    budget = estimate_tokens("\n".join(lines[2:])) + 2  # sizes are summed per line: a token of slack each
    assert summary_trim(lines, budget) == lines[2:]
    assert summary_superseded("- 助手：已记下时间：19:00。", "已为您预订陶陶居，周五 19:00")
    assert not summary_superseded("- 助手：已记下人数：3。", "1230公里")  # 3 is not in 1230


def test_prompt_in_chinese_and_english() -> None:
    zh = summary_prompt("- 用户：订周五", "user: 北京\n\nassistant: 好的")
    assert "滚动摘要" in zh["system"] and "已有摘要" in zh["user"] and "user: 北京" in zh["user"]
    assert "600" in zh["system"]  # 400 tokens -> about 600 characters
    en = summary_prompt("", "", lang="en", max_tokens=100)
    assert "rolling summary" in en["system"] and "(none)" in en["user"] and "400 characters" in en["system"]


def test_accept_keeps_a_good_llm_summary() -> None:
    llm = "```\n摘要：\n- 用户要订周五晚上8点（20:00）3 人，已订陶陶居，预订号123456。\n```"
    result = summary_accept(llm, "FALLBACK", BOOKING)
    assert result["source"] == "llm" and result["added_facts"] == 0
    assert result["summary"] == "- 用户要订周五晚上8点（20:00）3 人，已订陶陶居，预订号123456。"


def test_accept_adds_the_facts_an_llm_left_out() -> None:
    result = summary_accept("- 用户订了一家餐厅。", "FALLBACK", BOOKING)
    assert result["source"] == "llm" and result["added_facts"] == 2
    assert "预订号123456" in result["summary"]


def test_accept_falls_back_on_empty_refused_or_runaway_answers() -> None:
    fallback = summary_extractive("", BOOKING)
    for bad in ("", None, "抱歉，我无法完成这个请求。", "I'm sorry, I can't.", "很长" * 5000, 42):
        result = summary_accept(bad, fallback, BOOKING)
        assert result["source"] == "extractive" and result["summary"] == fallback


@settings(max_examples=80)
@given(st.text(max_size=300), st.lists(st.fixed_dictionaries({"user": st.text(max_size=60),
                                                              "assistant": st.text(max_size=80)}), max_size=6),
       st.integers(min_value=-5, max_value=2000))
def test_extractive_never_raises_and_stays_under_the_cap(old: str, turns: list[dict], cap: int) -> None:
    merged = summary_extractive(old, turns, max_tokens=cap)
    assert estimate_tokens(merged) <= max(20, min(cap, 20_000))
    assert len(merged.encode("utf-8")) <= SUMMARY_MAX_BYTES
