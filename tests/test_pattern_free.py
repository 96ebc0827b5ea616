"""String tests that replaced regular expressions give what the patterns gave (issue 22).

A code node compiles every pattern it uses on every sandbox run, in re's pure-Python compiler: the
patterns below cost an ordinary turn of the state node about 8 M instructions together. Each was
replaced by plain string operations; each test holds the replacement to the pattern it replaced
(kept here, verbatim), on random text drawn from the characters that matter to it.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dskit.catalog.catalog import SlotSpec
from dskit.rules.grounding import counts_people
from dskit.context import history
from dskit.context.history import parse_history
from dskit.base.limits import segment_size
from dskit.base.text import LINE_BREAK_CHARS, LINE_MARK, escape_invisible, marked_breaks, one_line
from dskit.state.views import value_text

_ANY = st.characters(exclude_categories=("Cs",))


def _text(alphabet: list[str], max_size: int = 24) -> st.SearchStrategy[str]:
    """Text mostly of the characters (and words) that matter to a pattern, some of any other kind."""
    return st.lists(st.one_of(st.sampled_from(alphabet), _ANY), max_size=max_size).map("".join)


# ---------------------------------------------------------------- dskit.base.text: line breaks

_LINE_BREAKS = re.compile(r"\r\n|[" + "".join(LINE_BREAK_CHARS) + "]")


@settings(max_examples=400)
@given(_text([*LINE_BREAK_CHARS, "\r\n", "a", "用", " ", "\u200b", "⏎"]))
def test_line_breaks_are_marked_as_the_pattern_marked_them(text):
    assert marked_breaks(text) == _LINE_BREAKS.sub(LINE_MARK, text)
    assert escape_invisible(text) == "".join(
        f"\\u{ord(c):04x}" if _LINE_BREAKS.match(c) or _is_format(c) else c
        for c in text)
    assert "\n" not in one_line(text) and "\r" not in one_line(text)


def _is_format(char: str) -> bool:
    import unicodedata

    return unicodedata.category(char) == "Cf"


# ---------------------------------------------------------------- dskit.state.views: bare values

_BARE = re.compile(r"^[^\s\"'\\,，、;；=\[\]{}()（）⏎]+$")
_JSON_LIKE = re.compile(r"^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)$")


def _value_text_by_patterns(value: str) -> str:
    import json

    if _BARE.match(value) and not _JSON_LIKE.match(value) and one_line(value) == value:
        return value
    return escape_invisible(json.dumps(value, ensure_ascii=False))


@settings(max_examples=600)
@given(_text(["-", "+", ".", "e", "E", "0", "7", "٣", "१", "true", "false", "null", "x", "周五", " ", "\n",
              "\u3000", ",", "，", "⏎", "[", "（", "\\", '"']))
def test_a_value_is_bare_when_the_patterns_said_so(value):
    assert value_text(value) == _value_text_by_patterns(value)


def test_numbers_and_literals_are_never_bare():
    for value in ("1", "-1", "1.5", "-0.25e+3", "1E5", "٣", "true", "null"):
        assert value_text(value) != value
    for value in ("1.", ".5", "1e", "1e+", "--1", "1.2.3", "True", "周五", "t1", "19:00"):
        assert (value_text(value) == value) == bool(_BARE.match(value) and not _JSON_LIKE.match(value))


# ---------------------------------------------------------------- dskit.base.limits: characters beyond the BMP

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


@given(_text(["a", "é", "用", "😀", "\U0010ffff", "\uffff", "\U00010000"]))
def test_segment_size_finds_astral_characters_as_the_pattern_did(text):
    if text.isascii():
        return
    try:
        text.encode("latin-1")
        width = 1
    except UnicodeEncodeError:
        width = 4 if _ASTRAL.search(text) else 2
    assert segment_size(text) == 72 + (len(text) + 1) * width


# ---------------------------------------------------------------- dskit.rules.grounding: slots that count people

_PEOPLE_SLOT = re.compile(r"人数|几位|几个人|多少人|people|persons|guests|party size|travell?ers|passengers|headcount")


@settings(max_examples=400)
@given(_text(["人数", "几位", "几个人", "多少人", "people", "persons", "guests", "party size", "party_size",
              "travelers", "travellers", "traveler", "passengers", "headcount", "PEOPLE", "Guests", "人", "几"],
             max_size=8),
       st.sampled_from(["integer", "number", "string"]))
def test_a_people_slot_is_found_as_the_pattern_found_it(words, kind):
    spec = SlotSpec(name="n", type=kind, label=words[: len(words) // 2], description=words[len(words) // 2:])
    expected = kind in ("integer", "number") and bool(
        _PEOPLE_SLOT.search(f"{spec.name} {spec.label} {spec.description}".lower().replace("_", " ")))
    assert counts_people(spec) == expected


# ---------------------------------------------------------------- dskit.context.history: whose turn a label starts

_USER_ROLES = r"user|human|用户|客户|顾客"
_USER_ROLE = re.compile(rf"^(?:{_USER_ROLES})$", re.I)
_ROLE_WORDS = ["user", "USER", "Human", "用户", "客户", "顾客", "assistant", "AI", "bot", "chatbot", "助手", "客服",
               "机器人", "系统", "uſer", "ᴜser"]


@settings(max_examples=300)
@given(st.lists(st.tuples(st.sampled_from(_ROLE_WORDS), st.sampled_from(["", " [essential]", "[chat]"]),
                          st.sampled_from([":", "：", " : "]), _text(["好", "a", " "], 6)), min_size=1, max_size=5))
def test_user_turns_are_told_from_the_label_as_before(lines):
    text = "\n".join(f"{role}{tag}{colon}{said}" for role, tag, colon, said in lines)
    for label in history._LABEL.finditer(text):
        assert (label.group("user") is not None) == bool(_USER_ROLE.match(label.group("role")))
    assert isinstance(parse_history(text), list)


def test_the_label_pattern_still_tells_users_from_the_assistant():
    text = "USER [essential]: 订周五\n\nassistant: 好的\n\nuſer: 三个人\n\n客服：请问几位？\n\n顾客：四位"
    assert [(m.group("role"), m.group("user") is not None) for m in history._LABEL.finditer(text)] == [
        ("USER", True), ("assistant", False), ("uſer", True), ("客服", False), ("顾客", True)]
    assert [t["user"] for t in parse_history(text)] == ["订周五", "三个人", "四位"]


# ---------------------------------------------------------------- dskit.rules.noise: what a message does

_VALUE = re.compile(
    r"[0-9０-９]|[一二两三四五六七八九十百千万半]+\s*(?:个|位|人|点|号|日|天|晚|夜|间|张|元|块|岁|小时|分钟|"
    r"公里|斤|份|次|楼|层|月|年|周|星期|折|成|台|辆|套|件|左右|来)|今天|明天|后天|大后天|昨天|前天|今晚|明晚|上午|下午|晚上|早上|中午|"
    r"凌晨|傍晚|周[一二三四五六日天末]|星期|礼拜|下周|本周|这周|下个月|月底|月初|点半|「|」|“|”|《|@|"
    r"\b(?:today|tomorrow|tonight|monday|tuesday|wednesday|thursday|friday|saturday|sunday|am|pm)\b")
_CORRECTION = re.compile(
    r"改成|改为|改到|改去|改一下|改下|换成|换到|换一|不是.{0,12}[是要]|不对|说错|搞错|弄错|打错|写错|更正|纠正|"
    r"不去了|不订了|不要了|还是.{0,12}吧|算了|提前|推迟|延后|往后挪|往前挪|早一点|晚一点|\binstead\b|\bchange (?:it )?to\b|\bactually\b|\bi meant\b")
_DECISION = re.compile(
    r"确认|就这个|就这样|就它|就订|就要|下单|买一份|订吧|订了吧|要这个|提交|办理吧|帮我办|帮我订|帮我买|"
    r"\bgo ahead\b|\bbook it\b|\bconfirm")
_CONFIRM_ASK = re.compile(
    r"请确认|确认.{0,20}[吗么]|对吗|是否|可以吗|好吗|行吗|要不要|需要.{0,10}吗|确定.{0,10}吗|\bconfirm\b|"
    r"\bshall i\b|\bis that (?:right|correct)\b|\bgo ahead\b")

_CUE_PIECES = [
    # digits, numerals, units, white space and the words around them
    "7", "０", "９", "三", "两", "半", "万", "个", "位", "人", "小时", "小", "分钟", "左右", "左", "来", "星期", "星", " ", "\u3000",
    "\t", "\n", "周", "五", "末", "天", "今天", "下个月", "下个", "点半", "「", "@", "《",
    # corrections, decisions, confirmation questions and what stands between their parts
    "不是", "是", "要", "还是", "吧", "改成", "换一", "不去了", "确认", "吗", "么", "需要", "确定", "对吗", "就这个", "订吧",
    "帮我订", "这", "的", "，",
    # English cue words, their pieces and word characters around them
    "today", "am", "pm", "sunday", "instead", "change", "change to", "change it to", "it", "to", "actually", "i meant",
    "go ahead", "book it", "confirm", "confirmed", "shall i", "is that right", "is that correct", "right", "a", "_",
    "x", "é", "-", ".",
]


@settings(max_examples=1500)
@given(_text(_CUE_PIECES, 16))
def test_the_noise_cues_find_what_their_patterns_found(text):
    from dskit.rules import noise

    lower = text.lower()
    assert noise._carries_value(lower) == bool(_VALUE.search(lower))
    assert noise._corrects(lower) == bool(_CORRECTION.search(lower))
    assert noise._decides(lower) == bool(_DECISION.search(lower))
    assert noise._asks_confirmation(lower) == bool(_CONFIRM_ASK.search(lower))


@pytest.mark.parametrize("text, value, correction, decision, asks", [
    ("三 个人", True, False, False, False), ("周五晚上", True, False, False, False), ("第三", False, False, False, False),
    ("不是七点，是八点", True, True, False, False), ("不是\n是", False, False, False, False), ("还是原来的吧", False, True, False, False),
    ("i'd rather change it to noon", False, True, False, False), ("unchanged to", False, False, False, False),
    ("确认一下，没问题吗", False, False, True, True), ("reconfirm", False, False, False, False), ("confirmed", False, False, True, False),
    ("at 7pm", True, False, False, False), ("8 am", True, False, False, False), ("spam", False, False, False, False),
])
def test_the_noise_cues_on_named_cases(text, value, correction, decision, asks):
    from dskit.rules import noise

    assert (noise._carries_value(text), noise._corrects(text), noise._decides(text),
            noise._asks_confirmation(text)) == (value, correction, decision, asks)
    assert (bool(_VALUE.search(text)), bool(_CORRECTION.search(text)), bool(_DECISION.search(text)),
            bool(_CONFIRM_ASK.search(text))) == (value, correction, decision, asks)
