"""The readers by grammar, tested by generation (issue 38, item 4).

Each test composes an expression from parts — a number in a script, a part of the day and an hour, a
place and what makes it another thing's name, negations around a wish, a question's form — works out
the reading independently of the engine (arithmetic, a table of what each part means, or a well-kept
library as a test-only oracle: cn2an for Chinese numerals), and checks the engine's reading and its
admission both ways: the right value is kept, a wrong one is refused.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from conftest import load_example_catalog
from dskit.catalog.catalog import load_catalog
from dskit.rules.clock import read_clocks
from dskit.rules.counts import party_sizes
from dskit.rules.cues import asks_for_action
from dskit.rules.grounding import bool_said, make_evidence, value_grounded
from dskit.turn.machine import step
from dskit.rules.negation import negated_at
from dskit.base.numerals import parse_cn_number, read_numbers

cn2an = pytest.importorskip("cn2an", reason="the test-only Chinese-numeral oracle (pip install cn2an)")

RESTAURANT = load_example_catalog("restaurant")
TRAVEL = load_example_catalog("travel_assistant")
SETTINGS = settings(max_examples=150, deadline=None)


def _slots(state: str, task: str) -> dict:
    return next(t["slots"] for t in json.loads(state)["task_stack"] if t["name"] == task)


def _booking(message: str, **slots) -> tuple[str, dict]:
    """A booking opened for Friday, then ``message`` with the model's ``slots``."""
    state, _ = step("", {"commands": [{"type": "start_task", "task": "book_restaurant",
                                       "slots": {"date": "周五"}}]}, RESTAURANT, query="帮我订周五的位子",
                    reference_date="2026-12-02")
    return step(state, {"commands": [{"type": "set_slots", "slots": slots}]}, RESTAURANT, query=message,
                reference_date="2026-12-02")


# ---------------------------------------------------------------- numbers, whole


@SETTINGS
@given(st.integers(0, 99_999))
def test_a_chinese_numeral_reads_as_the_number_the_oracle_writes(n):
    written = cn2an.an2cn(n)
    assert parse_cn_number(written) == n == cn2an.cn2an(written, "strict")
    assert [x.value for x in read_numbers(f"大约{written}个")] == [n]


@SETTINGS
@given(st.integers(11, 50), st.sampled_from(["{n}位", "我们{n}个人", "一共{n}位", "{n}个人吃饭"]),
       st.sampled_from(["cn", "arabic", "en"]))
def test_a_party_is_its_whole_number_never_a_digit_inside_it(n, phrase, script):
    words = {"cn": cn2an.an2cn(n), "arabic": str(n), "en": _english(n)}[script]
    message = phrase.format(n=words) if script != "en" else f"a party of {words}"
    assert party_sizes(message.lower()) == {float(n)}
    inside = {int(d) for d in str(n)} | {n // 10, n % 10} - {n}
    _, kept = _booking(message, people=n)
    assert "set t1.people=" + str(n) in kept["applied"]  # the whole number is admitted
    for wrong in sorted(d for d in inside if d):  # a digit inside it is refused
        _, decision = _booking(message, people=wrong)
        assert not any(a.startswith("set t1.people") for a in decision["applied"]), (message, wrong)


def _english(n: int) -> str:
    """English number words for 0-99, composed here from their parts (not the engine's table)."""
    units = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen " \
            "sixteen seventeen eighteen nineteen".split()
    tens = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
    if n < 20:
        return units[n]
    return tens[n // 10] + ("" if n % 10 == 0 else "-" + units[n % 10])


@SETTINGS
@given(st.integers(0, 23), st.integers(0, 59), st.integers(1, 20), st.booleans(),
       st.sampled_from(["cn", "arabic", "en"]), st.sampled_from(["{h}:{m:02d}", "{h}：{m:02d}", "{h}点{m}分"]))
@example(hour=20, minute=0, n=3, time_first=True, script="en", form="{h}:{m:02d}")  # the demo's "at 20:00, three people"
def test_the_hour_and_minutes_of_a_clock_time_are_not_a_party(hour, minute, n, time_first, script, form):
    clock = form.format(h=hour, m=minute)
    party = {"cn": f"{cn2an.an2cn(n)}个人", "arabic": f"{n}位", "en": f"{_english(n)} people"}[script]
    message = f"at {clock}, {party}" if time_first else f"{party}, at {clock}"
    assert party_sizes(message) == {float(n)}, message  # "20:00" is no party of 0 or 20


def test_minutes_said_in_words_may_still_be_the_party() -> None:
    """"七点两个人" reads as 7:02 or as seven o'clock and two people: the two stays a possible count."""
    assert party_sizes("周六晚上七点两个人") == {2.0}


@SETTINGS
@given(st.integers(2, 12), st.integers(1, 5), st.sampled_from(["其中{k}个小孩", "包括{k}个老人", "有{k}个吃素的"]))
def test_a_part_of_the_party_is_not_the_party(total, part, phrase):
    assume(part < total)
    message = f"我们{cn2an.an2cn(total)}个人，{phrase.format(k=cn2an.an2cn(part))}"
    assert party_sizes(message) == {float(total)}


# ---------------------------------------------------------------- times of day: the hour and its part of the day

PARTS = [  # (words, the half of the day they put an hour in, the hours people say with them)
    ("早上", "am", range(5, 12)), ("上午", "am", range(7, 12)), ("早茶", "am", range(6, 12)), ("明早", "am", range(5, 12)),
    ("清晨", "am", range(4, 8)), ("晚上", "pm", range(5, 12)), ("今晚", "pm", range(5, 12)), ("傍晚", "pm", range(4, 8)),
    ("黄昏", "pm", range(4, 8)), ("下午", "pm", range(1, 7)), ("午后", "pm", range(1, 6)), ("晚饭", "pm", range(5, 10)),
    ("下班后", "pm", range(5, 11)), ("this morning", "am", range(5, 12)), ("in the morning", "am", range(5, 12)),
    ("tonight", "pm", range(5, 12)), ("this evening", "pm", range(5, 12)), ("for dinner", "pm", range(5, 11)),
    ("after work", "pm", range(5, 11)), ("for breakfast", "am", range(5, 11))]
GAPS_ZH = ["", "大概", "，", "吧，", "差不多"]


def _expected(hour: int, half: str) -> str:
    return f"{hour + 12 if half == 'pm' and hour < 12 else hour:02d}:00"


@SETTINGS
@given(st.sampled_from(PARTS), st.integers(1, 11), st.sampled_from(GAPS_ZH), st.booleans())
def test_an_hour_takes_the_part_of_the_day_said_near_it(part, hour, gap, after):
    words, half, hours = part
    assume(hour in hours)
    if words.isascii():
        message = f"{hour} o'clock {words}" if after else f"{words} at {hour}"
    else:
        message = f"{hour}点{gap}{words}" if after else f"{words}{gap}{cn2an.an2cn(hour)}点"
    readings = read_clocks(message.lower())
    assert [c.values() for c in readings] == [(_expected(hour, half),)], message


@SETTINGS
@given(st.sampled_from(PARTS), st.integers(1, 11))
def test_the_admission_keeps_the_users_half_and_refuses_the_other(part, hour):
    words, half, hours = part
    assume(hour in hours)
    message = f"改到{words}{cn2an.an2cn(hour)}点" if not words.isascii() else f"make it {words} at {hour}"
    right = _expected(hour, half)
    wrong = _expected(hour, "am" if half == "pm" else "pm")
    _, kept = _booking(message, time=right)
    assert f'set t1.time="{right}"' in kept["applied"], message
    _, other = _booking(message, time=wrong)
    assert f'set t1.time="{wrong}"' not in other["applied"], message  # never the half nobody said


@SETTINGS
@given(st.integers(1, 11), st.sampled_from(PARTS))
def test_a_bare_hour_takes_the_part_of_the_day_already_given(hour, part):
    """"明天晚上…" then "八点": the period the user gave for this task, whichever half the model wrote."""
    words, half, hours = part
    assume(not words.isascii() and hour in hours)
    state, _ = step("", {"commands": [{"type": "start_task", "task": "book_restaurant",
                                       "slots": {"date": "周五", "people": 2}}]}, RESTAURANT,
                    query=f"帮我订周五{words}的位子，两个人")
    for written in (_expected(hour, "am"), _expected(hour, "pm")):
        new, _ = step(state, {"commands": [{"type": "set_slots", "slots": {"time": written}}]}, RESTAURANT,
                      query=f"{cn2an.an2cn(hour)}点", recent=[f"帮我订周五{words}的位子，两个人"])
        assert _slots(new, "book_restaurant")["time"] == _expected(hour, half)


# ---------------------------------------------------------------- name boundaries

CITIES = ["南京", "北京", "上海", "广州", "杭州", "成都", "长沙", "四川", "湖南", "福州"]
OTHER_THINGS = ["路", "街", "大道", "县", "区", "西路", "北路", "中路", "大街"]


@SETTINGS
@given(st.sampled_from(CITIES), st.sampled_from(OTHER_THINGS), st.sampled_from(CITIES))
def test_a_place_inside_the_name_of_another_thing_is_not_said(city, thing, elsewhere):
    assume(city != elsewhere)
    message = f"从{city}{thing}出发，去{elsewhere}"
    spec = load_catalog(TRAVEL).tasks["plan_route"].slots["origin"]
    ev = make_evidence(message)
    assert not value_grounded(spec, city, ev, recent=False)  # "南京路" does not say 南京
    assert value_grounded(spec, city + thing, ev, recent=False)  # the whole name is said
    assert value_grounded(spec, elsewhere, ev, recent=False)  # a place said on its own is


@SETTINGS
@given(st.sampled_from(CITIES), st.sampled_from(["站", "东站", "南站", "机场", "市"]))
def test_a_station_or_airport_of_a_city_says_the_city(city, own):
    spec = load_catalog(TRAVEL).tasks["plan_route"].slots["origin"]
    assert value_grounded(spec, city, make_evidence(f"从{city}{own}出发"), recent=False)


# ---------------------------------------------------------------- negation: an even number makes a yes

WANTING_NOT = ["不要", "没有", "不需要", "没"]
PREDICATE_NOT = ["不行", "可不行", "是不行的", "不可以"]


@SETTINGS
@given(st.sampled_from(WANTING_NOT), st.sampled_from(PREDICATE_NOT + [""]), st.sampled_from(["", "单独的", "个"]),
       st.booleans())
def test_negations_that_govern_a_wish_cancel_in_pairs(before, after, filler, modal):
    prefix = "不能" if modal else ""
    message = f"{prefix}{before}{filler}包间{after}"
    count = bool(prefix) + 1 + bool(after)
    start = message.find("包间")
    assert negated_at(message, start, start + 2) == (count % 2 == 1), message
    spec = load_catalog(RESTAURANT).tasks["book_restaurant"].slots["private_room"]
    assert bool_said(spec, message) is (count % 2 == 0)
    _, kept = _booking(message, private_room=count % 2 == 0)
    assert any(a.startswith("set t1.private_room") for a in kept["applied"]), message
    _, wrong = _booking(message, private_room=count % 2 == 1)
    assert not any(a.startswith("set t1.private_room") for a in wrong["applied"]), message


@SETTINGS
@given(st.sampled_from(["不免费的", "无烟的", "不贵的", "不吵的"]), st.sampled_from(["景点", "包间", "房间"]))
def test_a_negation_inside_a_modifier_does_not_deny_the_thing(modifier, thing):
    message = f"我要一个{modifier}{thing}"
    start = message.find(thing)
    assert not negated_at(message, start, start + len(thing)), message


# A lack, said: a verb of lacking (缺, 少, 忘) governed by a negation or a negated modal a few characters before it,
# or a lack that happened (缺了, 少了); each is one negation, so with another it makes a yes.
LACKS_AFTER = ["不能少", "少不了", "缺不了", "不可或缺", "不能缺", "千万别忘了", "别漏了"]  # "{thing}{lack}": a yes
LACKS_BEFORE = ["缺了", "少了", "没了"]  # "{lack}{thing}{not}": a yes with a negative predicate, a no without one
RHETORICAL = ["怎么能", "哪能", "岂能", "怎能"]


@SETTINGS
@given(st.sampled_from(LACKS_AFTER), st.sampled_from(["包间", "包厢", "雅间"]), st.sampled_from(["", "这次", "我们的"]))
def test_a_lack_denied_is_a_wish(lack, thing, lead):
    message = f"{lead}{thing}{lack}"
    start = message.find(thing)
    assert not negated_at(message, start, start + len(thing)), message
    spec = load_catalog(RESTAURANT).tasks["book_restaurant"].slots["private_room"]
    assert bool_said(spec, message) is True, message
    _, wrong = _booking(message, private_room=False)
    assert not any(a.startswith("set t1.private_room") for a in wrong["applied"]), message


@SETTINGS
@given(st.sampled_from(LACKS_BEFORE), st.sampled_from(PREDICATE_NOT + [""]), st.sampled_from(["包间", "包厢"]))
def test_a_lack_that_happened_counts_once(lack, predicate, thing):
    message = f"{lack}{thing}{predicate}"
    start = message.find(thing)
    assert negated_at(message, start, start + len(thing)) == (predicate == ""), message


@SETTINGS
@given(st.sampled_from(RHETORICAL), st.sampled_from(["没有", "不要", "不订"]), st.sampled_from(["订到", "要个", "留"]))
def test_a_rhetorical_modal_denies_only_a_negation_after_it(rhetorical, negation, verb):
    denied = f"{rhetorical}{negation}包间"
    asked = f"{rhetorical}{verb}包间"
    assert not negated_at(denied, len(denied) - 2, len(denied)), denied
    assert not negated_at(asked, len(asked) - 2, len(asked)), asked


EN_OMIT = ["skip", "forget", "drop", "leave out"]


@SETTINGS
@given(st.sampled_from(EN_OMIT), st.sampled_from(["", "don't ", "please don't ", "we won't "]),
       st.sampled_from(["private room", "quiet table"]))
def test_an_english_omission_is_a_negation_and_two_make_a_yes(omit, negation, thing):
    message = f"{negation}{omit} the {thing}"
    start = message.find(thing)
    assert negated_at(message, start, start + len(thing)) == (not negation), message


@SETTINGS
@given(st.sampled_from(["deal", "booking", "go"]), st.sampled_from(["private room", "quiet table"]),
       st.sampled_from(["unnecessary", "optional"]))
def test_english_conditions_and_needs(consequence, thing, needless):
    condition = f"no {thing}, no {consequence}"
    assert not negated_at(condition, 3, 3 + len(thing)), condition  # a condition: they want it
    assert negated_at(f"no {thing}, no smoking please", 3, 3 + len(thing))  # two wishes, not a condition
    assert negated_at(f"a {thing} is {needless}", 2, 2 + len(thing))
    assert not negated_at(f"a {thing} isn't {needless}", 2, 2 + len(thing))


# ---------------------------------------------------------------- questions: about a thing, or asking for an action

ACTIONS = ["能{v}{o}吗", "可以帮我{v}{o}吗", "能不能{v}{o}", "{v}{o}怎么样", "could you {ve} {oe}?", "can we {ve} {oe}?",
           "oh, and could you {ve} {oe}?", "also can we {ve} {oe}?"]
ABOUTS = ["{o}贵不贵", "{o}多少钱", "有{o}吗", "{o}怎么样", "do you have {oe}?", "what does {oe} cost?"]


@SETTINGS
@given(st.sampled_from(ACTIONS + ABOUTS), st.sampled_from([("订", "包间", "book", "a private room"),
                                                            ("约", "周六的位子", "reserve", "a quiet table")]))
def test_a_question_asks_for_an_action_only_with_a_modal_before_a_doing(form, words):
    verb, thing, verb_en, thing_en = words
    question = form.format(v=verb, o=thing, ve=verb_en, oe=thing_en)
    assert asks_for_action(question) == (form in ACTIONS), question


# ---------------------------------------------------------------- a date said whole


@SETTINGS
@given(st.sampled_from(["下", "下个", "这", "这个", "本", "下下"]), st.sampled_from(["周", "星期", "礼拜"]),
       st.sampled_from(list("一二三四五六日")), st.sampled_from(["帮我订{d}的", "改到{d}吧", "{d}晚上吧"]))
def test_a_weekday_the_model_cut_from_the_users_date_is_the_users_whole_date(modifier, week, day, phrase):
    """The model wrote "周日" for "下周日" (another day): the user's whole date is stored."""
    said = f"{modifier}{week}{day}"
    state, _ = step("", {"commands": [{"type": "start_task", "task": "book_restaurant",
                                       "slots": {"date": f"{week}{day}"}}]}, RESTAURANT,
                    query=phrase.format(d=said), reference_date="2026-12-02")
    assert json.loads(state)["task_stack"][0]["slots"].get("date") == said


@SETTINGS
@given(st.sampled_from(["周", "星期"]), st.sampled_from(list("一二三四五六日")))
def test_a_weekday_said_bare_stays_as_said(week, day):
    state, _ = step("", {"commands": [{"type": "start_task", "task": "book_restaurant",
                                       "slots": {"date": f"{week}{day}"}}]}, RESTAURANT,
                    query=f"帮我订{week}{day}晚上的", reference_date="2026-12-02")
    assert json.loads(state)["task_stack"][0]["slots"].get("date") == f"{week}{day}"


@SETTINGS
@given(st.sampled_from(["帮我规划一下", "查一下", "看一下"]), st.sampled_from(["下周", "下下周", "周"]),
       st.sampled_from(list("一二三四五六日")))
def test_the_xia_of_yixia_is_not_the_next_week(verb, week, day):
    """"规划一下下周五" is 一下 + 下周五: the model's "下周五" stays, never "下下周五"."""
    said = f"{week}{day}"
    state, _ = step("", {"commands": [{"type": "start_task", "task": "book_restaurant", "slots": {"date": said}}]},
                    RESTAURANT, query=f"{verb}{said}的位子", reference_date="2026-12-02")
    assert json.loads(state)["task_stack"][0]["slots"].get("date") == said
