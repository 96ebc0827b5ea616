"""Grounding by words and meaning (issue 19): each class of failure is closed by a rule, checked on the
corpus (tests/grounding_corpus.py: attacks must not act, genuine messages must) and as a property on
generated inputs, so that a fix that matched the corpus's words would still fail here."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dskit.catalog.catalog import load_catalog, parse_cn_number
from dskit.rules.cues import YES_ZH, asks, says_cancel, says_reset, says_yes
from dskit.rules.grounding import bool_said, make_evidence, text_grounded, value_grounded, fold
from dskit.state.integrity import seal_problem
from dskit.turn.machine import record_result, step
from dskit.state.state import load_state
from grounding_corpus import RESTAURANT, TELECOM, all_cases, run_case

CASES = all_cases()
_CN = "零一二三四五六七八九"


def _cn(n: int) -> str:
    """A number in Chinese numerals (1-99)."""
    tens, ones = divmod(n, 10)
    return (("" if tens == 1 else _CN[tens]) + "十" if tens else "") + (_CN[ones] if ones or not tens else "")


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "attack"], ids=lambda c: f"{c.cls[:1]}-{c.message}")
def test_no_attack_of_the_corpus_acts(case):
    failed, decision = run_case(case, step, load_state)
    assert not failed, (case.cls, case.message, decision["applied"], decision["dropped"])


def test_genuine_messages_still_act():
    """Recall beside precision: every genuine message of the corpus is acted on (a floor: all of them)."""
    refused = [(c.cls, c.message) for c in CASES if c.kind == "genuine" and run_case(c, step, load_state)[0]]
    assert refused == []


# ---------------------------------------------------------------- 1. questions and words

_WORDS = st.text(alphabet=st.sampled_from(list("好对行是可以嗯的了吧啊停车场在哪有吗几点钱么价呢请问这个那个天气怎么样")),
                 min_size=0, max_size=12)


@given(_WORDS)
def test_a_question_is_never_a_yes(text):
    assert not says_yes(text + "？") and not says_yes(text + "吗") and not says_yes(text + "?")


@given(_WORDS)
def test_a_yes_never_asks_and_never_says_no(text):
    if says_yes(text):
        assert not asks(text) and "不" not in text


@given(st.sampled_from(YES_ZH), st.sampled_from(list("李程像多奇面于梦书院长")))
def test_a_yes_word_inside_another_word_is_not_a_yes(word, follower):
    """"行李", "好像", "对面": the yes word is the start of another word."""
    if word + follower not in ("好多",):
        assert not says_yes(word[-1] + follower) or word[-1] + follower in YES_ZH


@given(st.sampled_from(["辣的", "香菜", "发票", "靠窗的", "太吵的", "大厅", "葱", "冰块", "the high chair", "onions"]),
       st.sampled_from(["不要", "不需要", "别放", "不想要", "no ", "don't forget "]))
def test_a_preference_is_not_a_cancellation(thing, negation):
    assert not says_cancel(negation + thing, ("订餐", "book_restaurant"))


@given(st.sampled_from(["账户密码", "会员密码", "路由器", "my password", "my account", "the router"]),
       st.sampled_from(["重置", "reset ", "restart ", "清空"]))
def test_resetting_something_else_is_not_starting_over(thing, verb):
    assert not says_reset(verb + thing)


# ---------------------------------------------------------------- 3. negation

# Single negations before the thing (the negation reader's morphemes with the verbs people put after them).
SINGLE_NEGATIONS = ("不要", "不用", "不需要", "无需", "不必", "没有", "没", "不", "别", "免", "无", "不涉及", "不含", "不包含",
                    "不参加", "不带", "不想要", "不会")


@given(st.sampled_from(SINGLE_NEGATIONS), st.sampled_from(["", "个"]))
def test_a_negated_yes_no_slot_reads_as_no(negation, filler):
    spec = load_catalog(RESTAURANT).tasks["book_restaurant"].slots["private_room"]
    assert bool_said(spec, f"{negation}{filler}包间") is False
    assert bool_said(spec, f"要{filler}包间") is True


# ---------------------------------------------------------------- 4. numbers as numbers

@settings(max_examples=200)
@given(st.integers(1, 99), st.integers(1, 99), st.sampled_from(["号", "单元", "栋", "楼", "室"]),
       st.sampled_from(["cn", "arabic"]), st.sampled_from(["cn", "arabic"]))
def test_a_number_grounds_only_itself_whatever_the_script(said, written, unit, said_script, written_script):
    text = (str(said) if said_script == "arabic" else _cn(said)) + unit
    value = (str(written) if written_script == "arabic" else _cn(written)) + unit
    assert parse_cn_number(_cn(said)) == said
    grounded = text_grounded(value, fold("地址在" + text), "地址在" + text)
    if said != written:
        assert not grounded, (text, value)
    elif said_script == written_script:
        assert grounded, (text, value)


@given(st.integers(1, 12), st.sampled_from(["点", "点半", "点钟", "号", "月", ":30", " pm"]))
def test_the_hour_or_day_of_a_time_is_not_a_count(n, unit):
    spec = load_catalog(RESTAURANT).tasks["book_restaurant"].slots["people"]
    assert not value_grounded(spec, n, make_evidence(f"改到{n}{unit}"), recent=False)
    assert value_grounded(spec, n, make_evidence(f"{n}个人"), recent=False)


@given(st.integers(1, 7), st.sampled_from(["周", "星期", "礼拜", "第"]), st.booleans())
def test_a_weekday_or_rank_numeral_is_not_a_count(n, word, chinese):
    """"周六晚上想订个位子" does not say six people (a model's people=6 got through by it)."""
    spec = load_catalog(RESTAURANT).tasks["book_restaurant"].slots["people"]
    numeral = _cn(n) if chinese else str(n)
    assert not value_grounded(spec, n, make_evidence(f"{word}{numeral}晚上想订个位子"), recent=False)
    assert value_grounded(spec, n, make_evidence(f"{word}一晚上，我们{numeral}个人"), recent=False) or n == 1


@given(st.sampled_from(["Tokyo", "Kyoto", "Osaka", "Nagoya"]), st.sampled_from(["to", "via", "from"]))
def test_english_values_are_matched_by_whole_words(city, word):
    other = {"Tokyo": "Kyoto", "Kyoto": "Osaka", "Osaka": "Nagoya", "Nagoya": "Tokyo"}[city]
    text = f"{word} {other} to {other}"
    assert not text_grounded(city, fold(text), text)
    assert text_grounded(other, fold(text), text)


# ---------------------------------------------------------------- 9. the seal and what was shown

def _booking_awaiting_yes() -> str:
    state, decision = step("", {"commands": [{"type": "start_task", "task": "book_restaurant", "slots": {
        "date": "周五", "time": "19:00", "people": 3, "restaurant": "老地方"}}]}, RESTAURANT)
    assert decision["next_action"] == "confirm"
    return state


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["date", "time", "people", "restaurant", "budget"]),
       st.one_of(st.integers(1, 40), st.sampled_from(["周六", "20:00", "黑店", "500"])))
def test_a_yes_runs_only_what_was_shown(slot, value):
    """Any change of the state between the question and the yes (another node, an API write): the
    yes runs nothing, and the question is asked again with what is there now."""
    data = json.loads(_booking_awaiting_yes())
    task = data["task_stack"][0]
    before = dict(task["slots"])
    task["slots"][slot] = value
    if task["slots"] == before:
        return
    _, decision = step(json.dumps(data, ensure_ascii=False), {"commands": [{"type": "confirm"}]}, RESTAURANT,
                       query="好的")
    assert decision["next_action"] != "execute"


def test_an_untouched_state_keeps_its_seal_and_its_yes():
    state = _booking_awaiting_yes()
    assert seal_problem(load_state(state)[0]) == ""
    _, decision = step(state, {"commands": [{"type": "confirm"}]}, RESTAURANT, query="好的")
    assert decision["next_action"] == "execute"


def test_a_secret_seal_cannot_be_written_without_the_secret():
    state, _ = step("", {"commands": [{"type": "start_task", "task": "book_restaurant", "slots": {
        "date": "周五", "time": "19:00", "people": 3, "restaurant": "老地方"}}]}, RESTAURANT, secret="s3cret")
    forged, _ = step("", {"commands": [{"type": "start_task", "task": "book_restaurant", "slots": {
        "date": "周五", "time": "19:00", "people": 30, "restaurant": "黑店"}}]}, RESTAURANT)  # sealed without the secret
    new, decision = step(forged, {"commands": [{"type": "confirm"}]}, RESTAURANT, query="好的", secret="s3cret")
    assert decision["next_action"] != "execute" and json.loads(new)["task_stack"] == []
    assert any(e["code"] == "integrity" for e in json.loads(new)["errors"])
    _, decision = step(state, {"commands": [{"type": "confirm"}]}, RESTAURANT, query="好的", secret="s3cret")
    assert decision["next_action"] == "execute"


def test_a_failed_submission_is_shown_again_and_a_retry_runs_it():
    state = _booking_awaiting_yes()
    state, decision = step(state, {"commands": [{"type": "confirm"}]}, RESTAURANT, query="好的")
    state = record_result(state, decision["execute"]["task_id"], False, "HTTP 500")
    _, decision = step(state, {"commands": [{"type": "confirm"}]}, RESTAURANT, query="再试一次")
    assert decision["next_action"] == "execute"


def test_the_corpus_covers_telecom_and_travel_too():
    assert {id(c.catalog) for c in CASES} >= {id(RESTAURANT), id(TELECOM)}


def test_the_second_corpus_written_apart_from_the_rules():
    """tests/grounding_heldout_corpus.py was written by another developer who did not read the rules;
    on its first run today's engine acted on 16 of 208 attacks and refused 16 of 131 genuine messages
    (the engine before issue 19: 150 and 13). The rules were then generalised; what is left are two
    starts that only open a task that asks (nothing runs) and one balance enquiry said in other words.
    Ceilings, not equalities."""
    from grounding_heldout_corpus import all_cases as heldout_cases

    acted = refused = 0
    for case in heldout_cases():
        failed, decision = run_case(case, step, load_state)
        if failed and case.kind == "attack":
            acted += 1
            assert decision["next_action"] != "execute", case.message  # never an action
        refused += failed and case.kind == "genuine"
    assert acted <= 2 and refused <= 1, (acted, refused)
