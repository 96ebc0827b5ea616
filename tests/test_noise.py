"""Noise tags (dskit.rules.noise) on real utterances from the seeds, as a table.

Each row: the user's words, the assistant's reply, the reply before it, the tag the rules must give,
and the seed the user's words come from (checked when ../shared is present).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dskit.rules.noise import (
    noise_carries_value,
    noise_classify,
    noise_hint_tag,
    noise_records,
    noise_tag_turns,
)

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
ASK_CITY = "请问您想查询哪个城市的天气呢？"
ASK_DAY = "没问题，请问您想查询北京哪一天的天气呢？"
CONFIRM = "请确认：路线规划，出发地：成都，目的地：三亚，出发日期：下周三。确认办理吗？"

# (user, reply, previous reply, expected tag, seed)
TABLE = [
    # seed 003: the weather dialogue and the route/insurance table
    ("天气咋样啊", ASK_CITY, "", "optional", "003"),
    ("北京", ASK_DAY, ASK_CITY, "essential", "003"),
    ("今天的", "北京 · 2026-01-21 晴 -5℃ ~ 4℃", ASK_DAY, "essential", "003"),
    ("下周三我想从成都开车去拉萨。", "好的，已记下出发地：成都，目的地：拉萨。", "", "essential", "003"),
    ("那边现在冷吗？推荐个保险吧。", "拉萨冬季很冷，可以考虑旅游险。", "", "optional", "003"),
    ("会有高原反应吗？保险管这个吗？", "海拔较高，可能会有高原反应。", "", "optional", "003"),
    ("行，那买一份吧。", "请确认是否包含攀登等高风险运动？", "", "essential", "003"),
    ("不去了，改去三亚，那边暖和。", "好的，已将目的地改为三亚。", "", "essential", "003"),
    # seed 001: pollution, acknowledgements, the broken-reference post-mortem
    ("这也太差了", "你说得对我们确实应该改进", "", "noise", "001"),
    ("嗯", "好的。", "", "noise", "001"),
    ("好的", "好的，还有什么可以帮您？", "", "noise", "001"),
    ("刚才那个方案帮我改一下", "我不太确定您指的是哪个方案", "", "optional", "001"),
    ("我想买一台价格在五千左右的轻薄本", "好的，已记下预算：五千左右。", "", "essential", "001"),
    ("改成方案B", "好的，已改为方案B。", "", "essential", "001"),
    # seed 000: the restaurant booking and its corrections
    ("帮我订周五晚上8点，三个人，市中心老牌粤菜", "好的，已记下日期：周五，时间：20:00。", "", "essential", "000"),
    ("提前一小时吧", "好的，已记下时间：19:00。", "", "essential", "000"),
    ("不是，我说的是下周那个周四", "好的，已将日期改为下周四。", "", "essential", "000"),
    ("两个人安静一点的，时间改成七点吧", "好的，已记下人数：2。", "", "essential", "000"),
    ("不对，还是换一家", "好的，请问想换哪家？", "", "essential", "000"),
    # confirmations: an acknowledgement that answers a confirmation question
    ("好的", "「路线规划」已办理完成。", CONFIRM, "essential", None),
    ("对", "「路线规划」已办理完成。", CONFIRM, "essential", None),
    # social turns and failures
    ("你好", "您好！有什么可以帮您？", "", "noise", None),
    ("谢谢", "不客气！", "", "noise", None),
    ("不用了谢谢", "好的，祝您愉快。", "还有什么可以帮您？", "noise", None),
    ("你们营业到几点？", "抱歉，系统繁忙，请稍后再试。", "", "noise", None),
]


@pytest.mark.parametrize(("user", "reply", "prev", "expected", "seed"), TABLE)
def test_seed_utterances(user: str, reply: str, prev: str, expected: str, seed: str | None) -> None:
    tag, reason = noise_classify(user, reply, prev)
    assert tag == expected, (user, reason)


def test_table_quotes_the_seeds() -> None:
    seeds = sorted((SHARED / "seeds").glob("*.txt")) if (SHARED / "seeds").is_dir() else []
    if not seeds:
        pytest.skip("../shared/seeds is absent")
    text = {p.name[:3]: "".join(p.read_text(encoding="utf-8").split()) for p in seeds}
    for user, _reply, _prev, _tag, seed in TABLE:
        if seed:
            words = "".join(user.split()).rstrip("。")
            # seed 001 prints its quotes without punctuation
            assert words in text[seed] or words.replace("，", "") in text[seed], (seed, user)


def test_hints_win_over_rules() -> None:
    assert noise_classify("谢谢", "不客气", hint="essential") == ("essential", "hint")
    assert noise_classify("北京", ASK_DAY, ASK_CITY, hint=True)[0] == "essential"
    # "chat" (or False): the state machine saw no slot change; rules pick optional or noise, never essential
    assert noise_classify("今天好累啊", "辛苦了", hint="chat")[0] == "optional"
    assert noise_classify("谢谢", "不客气", hint=False)[0] == "noise"
    assert noise_hint_tag("garbage") == "" and noise_hint_tag(None) == ""
    assert noise_hint_tag("NOISE") == "noise" and noise_hint_tag(1) == "essential"


def test_a_corrected_turn_is_demoted() -> None:
    turns = [
        {"user": "下周三我想从成都开车去拉萨。", "assistant": "好的，已记下。"},
        {"user": "会有高原反应吗？", "assistant": "可能会有。"},
        {"user": "不去了，改去三亚，那边暖和。", "assistant": "好的，已将目的地改为三亚。"},
    ]
    tags = noise_tag_turns(turns)
    assert [t["tag"] for t in tags] == ["optional", "optional", "essential"]
    assert tags[0]["reason"] == "corrected"


def test_consecutive_duplicate_questions_fold_into_the_last() -> None:
    turns = [
        {"user": "会有高原反应吗？", "assistant": "可能会有。"},
        {"user": "会有高原反应吗", "assistant": "可能会有，注意休息。"},
        {"user": "会有高原反应吗？", "assistant": "海拔高的地方容易有。"},
        {"user": "北京", "assistant": "好的。"},
    ]
    tags = noise_tag_turns(turns)
    assert [t["tag"] for t in tags[:3]] == ["noise", "noise", "optional"]
    assert tags[2]["repeats"] == 3 and tags[0]["reason"] == "duplicate"


def test_a_repeated_ask_folds_when_the_answer_was_not_essential() -> None:
    turns = [
        {"user": "嗯嗯", "assistant": ASK_CITY},
        {"user": "你是机器人吗", "assistant": ASK_CITY},
    ]
    assert noise_tag_turns(turns)[0]["tag"] == "noise"


def test_values_and_records() -> None:
    assert noise_carries_value("订周五晚上8点")
    assert noise_carries_value("三个人")
    assert not noise_carries_value("会有高原反应吗")
    assert noise_records("好的，已记下日期：周五。")
    assert noise_records("「订餐」已办理完成。")
    assert not noise_records("请问您想订哪家餐厅？")


@given(st.text(max_size=80), st.text(max_size=80), st.text(max_size=40), st.one_of(st.none(), st.text(max_size=10),
                                                                                    st.booleans(), st.integers()))
def test_rules_never_raise(user: str, reply: str, prev: str, hint: object) -> None:
    tag, reason = noise_classify(user, reply, prev, hint)
    assert tag in ("essential", "optional", "noise") and isinstance(reason, str)
