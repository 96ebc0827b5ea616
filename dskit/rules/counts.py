"""What a number counts: a count of people, of other things, a part of a party, or no count at all.

Numbers are read whole (:mod:`dskit.base.numerals`); this module reads what stands around each one:

- **not a count**: the hour of a time ("8点", "at 8"), the minutes after a clock's colon ("20:00"), the day of a date ("十八号", "3月"), a weekday or
  a rank ("周六", "第二"), a floor or an address number ("3楼", "5号"), and the 一 that begins a word
  rather than counting ("一下", "一起", "一行", "一共": a lone 一 counts only before a classifier);
- **a count of other things**: a number before a classifier or unit that is not a person's ("两桌",
  "一份", "三晚", "2 rooms");
- **a change of the party**: the amount after 加, 减, 少, "another", before "more" ("再加一个人": one more,
  not a party of one) — the new size is the old one shifted by it (:mod:`dskit.rules.grounding`);
- **the party and its parts**: a count marked as the whole ("一共十二位", "加起来五个人", "a party of
  19", "21 altogether", "in total") is the party; a count of a kind of person ("两个小孩", "5 toddlers"),
  or one marked as a part ("其中2个", "including", "two of them"), is a part of it. With no whole said,
  a count of people ("6位", "我们三个人", "six of us") is the party; with only kinds of person said
  ("两个大人三个小孩") the party is their sum — the one number the engine works out, like a shift of a
  time, from numbers the user said.
"""

from __future__ import annotations

import re

from .clock import read_clocks
from .negation import clause_span, negated_at
from ..base.numerals import NumberSaid, read_numbers

# What follows the hour of a clock time or the day of a date: such a number is not a count ("8点" is not
# eight people, "十八号" not eighteen), nor is a floor, a room or a line.
_NOT_A_COUNT = re.compile(r"\s{0,2}(?:点|時|时(?!间|候)|分(?!钟|之)|号|日|月|年|[:：]\d|am\b|pm\b|a\.m|p\.m|o'clock"
                          r"|楼|层|栋|幢|单元|室|路|排|号线|(?:st|nd|rd|th)\b|floor)")
# The minutes of a clock written with a colon follow its hour and the colon ("20:00", "7：30").
_CLOCK_MINUTES_BEFORE = re.compile(r"\d\s?[:：]\s?$")
# A numeral right after these names a weekday or a rank, not a count ("周六" is Saturday, not six).
_NOT_A_COUNT_AFTER = re.compile(r"(?:周|星期|礼拜|第|no\.?|#)\s{0,1}$", re.IGNORECASE)
# The classifiers and nouns a Chinese count stands before (量词): a lone 一 counts only before one of them.
_CLASSIFIERS = "个位名人口份张间晚天元块次件台辆套瓶杯碗盘道本斤桌场家只条双对岁周层楼号"
# What follows a count of something other than people: "买一份" is one policy, "两桌" two tables.
_NOT_PEOPLE = re.compile(r"\s{0,2}(?:份|张|间|晚|天|元|块|次|件|台|辆|套|瓶|杯|碗|盘|道|本|斤|公斤|公里|米|岁|小时|分钟"
                         r"|周|个月|个小时|个星期|桌|场|家|只|条|双|对|个?菜|个?包间|个?房间"
                         r"|rooms?\b|tables?\b|nights?\b|days?\b|dollars?\b|yuan\b|hours?\b|minutes?\b|years?\b|dishes\b)",
                         re.IGNORECASE)
# Counts of a kind of person: a part of the party when the party itself is counted.
_KIND_ZH = ("老人", "老年人", "小孩", "孩子", "小朋友", "儿童", "宝宝", "婴儿", "学生", "大人", "成人", "女士", "男士", "吃素",
            "素食", "残疾人")
_KIND_AFTER = re.compile(r"\s{0,2}(?:个|位|名)?\s{0,2}(?:" + "|".join(_KIND_ZH) + r")"
                         r"|\s(?:kids?|children|child|toddlers?|babies|baby|infants?|seniors?|adults?|vegetarians?"
                         r"|vegans?|students?|teens?|teenagers?)\b", re.IGNORECASE)
# The whole: "一共", "总共", "加起来", "合计", "a party of", "in total", "altogether".
_WHOLE_BEFORE = re.compile(r"(?:一共|总共|共计|合计|总计|加起来|加上|共|party of|table for|total of)\s{0,3}"
                           r"[^，,。.；;\d]{0,2}$", re.IGNORECASE)
_WHOLE_AFTER = re.compile(r"[^，,。.；;]{0,12}?(?:\bin total\b|\baltogether\b|\ball together\b|\ball told\b|\btotal\b)",
                          re.IGNORECASE)
# A change of the party by so many: "再加一个人", "少两位", "one more", "two extra" — the amount, not the party.
_CHANGE_BEFORE = re.compile(r"(?:(?:再|又|多|还)?加上?|增加|添上?|(?:再|又|还)来|再多|多了|减少?|减掉|少了|去掉|another|plus|add)"
                            r"\s{0,2}$", re.IGNORECASE)
_CHANGE_AFTER = re.compile(r"\s*(?:more|extra|less|fewer)\b", re.IGNORECASE)
# A part: "其中2个", "包括两个小孩", "including", "with 7 kids", "two of them".
_PART_BEFORE = re.compile(r"(?:其中|当中|包括|包含|含|里面|里头|including|among them|of whom|\bwith)[^，,。.；;\d]{0,3}$",
                          re.IGNORECASE)
_PART_AFTER = re.compile(r"\s*(?:of (?:them|whom)|among them|个?是(?:小孩|孩子|儿童|老人))", re.IGNORECASE)


def _counts(raw: str) -> list[NumberSaid]:
    """The numbers of the text that count something (see the module's list of what is not a count): the
    hour of a time of day, and the minutes written after a clock's colon ("20:00" is no party of 0), are
    none. Minutes said in words may be a count ("七点两个人": 7:02, or seven o'clock and two people)."""
    hours = {clock.start for clock in read_clocks(raw)}
    kept = []
    for number in read_numbers(raw):
        if number.start in hours or _CLOCK_MINUTES_BEFORE.search(raw[max(0, number.start - 4):number.start]) \
                or _NOT_A_COUNT.match(raw, number.end) \
                or _NOT_A_COUNT_AFTER.search(raw[max(0, number.start - 4):number.start]):
            continue
        if raw[number.start:number.end] == "一" and raw[number.end:number.end + 1] not in _CLASSIFIERS:
            continue  # "一下", "一起", "一行", "一共": 一 begins a word here
        kept.append(number)
    return kept


def _role(raw: str, number: NumberSaid) -> str:
    """What a count of a people slot's message is: "thing", "change", "whole", "part", "kind" or "people"."""
    if _NOT_PEOPLE.match(raw, number.end):
        return "thing"
    before = raw[max(0, number.start - 4):number.start]
    if _CHANGE_BEFORE.search(before) or _CHANGE_AFTER.match(raw, number.end) \
            or before.endswith("少") and (len(before) < 2 or before[-2] in " ，,。.；;"):  # "少两位": two fewer
        return "change"
    if _WHOLE_BEFORE.search(raw[max(0, number.start - 12):number.start]) or _WHOLE_AFTER.match(raw, number.end):
        return "whole"
    if _PART_BEFORE.search(raw[max(0, number.start - 12):number.start]) or _PART_AFTER.match(raw, number.end):
        return "part"
    return "kind" if _KIND_AFTER.match(raw, number.end) else "people"


# A clause about another time than now: "上次是两个人" counts a party that was, not the one to book.
_THEN = ("上次", "上回", "之前", "以前", "原来", "last time", "previously", "before")
# A clause that takes back what came before it: "五个，不对，六个", "five - no wait, six".
_RETRACTION = re.compile(r"\s*(?:不对|不是|不不|哦不|噢不|错了|说错了|no wait|sorry|i mean|actually)", re.IGNORECASE)


def _withdrawn(raw: str, number: NumberSaid) -> bool:
    """Whether a count is not the party now: denied ("不是5个人"), followed by a clause that retracts it, or
    said of another time ("上次是两个人")."""
    if negated_at(raw, number.start, number.end):
        return True
    left, right = clause_span(raw, number.start, number.end)
    if any(word in raw[left:right] for word in _THEN):
        return True
    return right < len(raw) and bool(_RETRACTION.match(raw, right + 1))


def party_sizes(raw: str) -> set[float]:
    """The sizes of the party a message states (see the module's rule of the whole and its parts); a count
    taken back ("不是5个，是6个", "五个，不对，六个") is none."""
    roles: dict[str, list[NumberSaid]] = {}
    for number in _counts(raw):
        if _withdrawn(raw, number):
            continue
        roles.setdefault(_role(raw, number), []).append(number)
    for role in ("whole", "people"):
        if role in roles:
            return {value for number in roles[role] for value in number.values()}
    kinds = roles.get("kind", [])
    if len(kinds) > 1 and all(k.other is None for k in kinds):
        return {sum(k.value for k in kinds)}
    return {value for number in kinds + roles.get("part", []) for value in number.values()}


def changes_in(raw: str) -> set[float]:
    """The amounts by which a message changes a count ("再加一个人" 1, "少两位" 2, "two more" 2): a count's
    new value is its old one shifted by one of them."""
    return {value for number in _counts(raw) if _role(raw, number) == "change" for value in number.values()}


def numbers_in(raw: str, counts: bool = False, people: bool = False) -> set[float]:
    """Every number the text states, each read whole ("十五" is 15, never 5; "三四个" is 3 or 4); with
    ``counts``, only those that count something; with ``people`` too, the size of the party
    (:func:`party_sizes`)."""
    if people:
        return party_sizes(raw)
    numbers = _counts(raw) if counts else read_numbers(raw)
    return {value for number in numbers for value in number.values()}


__all__ = ["numbers_in", "party_sizes", "changes_in"]
