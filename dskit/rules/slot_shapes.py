"""The forms of a slot's value: what kind of slot it is, and what a value of it looks like.

The admission rules (:mod:`dskit.rules.admission`) ask these questions of a proposed value: is the slot a
time, a date, a name; is the value another slot's option, a question word, a description of the thing
instead of its name; how did the user spell it. None of them reads who said what: they read the
value, the slot and (for spelling) the message's text.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from ..catalog.catalog import SlotSpec, TaskSpec
from .clock import clock_form, clock_value, is_clock, same_half_day, times_in
from .grounding import date_spans, dates_in, month_spans, other_slot_value
from .cues import negated_at

# ---------------------------------------------------------------- slot shapes

def pattern_takes(pattern: str, text: str) -> bool:
    try:
        return re.fullmatch(pattern, text) is not None
    except re.error:
        return False


# Free text with a number in it: a pattern that takes it (an address that must name a road, a place or a
# number: ".*[0-9路街…号].*") checks what the model read; it is no form the engine could read a value by,
# and says nothing of a time or a date though it takes "19:00".
_FREE_TEXT = "江南大道588号3单元"


def is_form(pattern: str) -> bool:
    """Whether a slot's pattern is a form a value is written in (1\\d{10}, HH:MM): it refuses free text."""
    return bool(pattern) and not pattern_takes(pattern, _FREE_TEXT)


def takes_form(pattern: str, sample: str) -> bool:
    """Whether a slot's pattern is a form (:func:`is_form`) that ``sample`` is written in ("19:00")."""
    return is_form(pattern) and pattern_takes(pattern, sample)


def time_slots(task: TaskSpec) -> list[str]:
    """The task's time slots: string slots whose pattern is HH:MM's form (:func:`takes_form`)."""
    return [n for n, s in task.slots.items() if s.type == "string" and takes_form(s.pattern, "19:00")]


def as_clock(spec: SlotSpec, raw: Any) -> Any:
    """A model's "晚上七点" for a slot whose pattern wants HH:MM, as "19:00" when it names one time
    (docs/grounding.md: the same normalisation grounds the value against the user's words)."""
    if not (isinstance(raw, str) and len(raw) <= 40 and spec.type == "string" and takes_form(spec.pattern, "19:00")):
        return raw
    if pattern_takes(spec.pattern, raw):  # "8:00" is written in the slot's own form, 08:00
        return clock_form(raw) if is_clock(raw) and pattern_takes(spec.pattern, clock_form(raw)) else raw
    clock = clock_value(raw)
    return clock if clock is not None and pattern_takes(spec.pattern, clock) else raw


def owner_elsewhere(task: TaskSpec, slot: str, value: Any) -> str:
    """The other slot ``value`` belongs to, "" when none: another slot's option or alias ("城东" as the
    date is the area's, an alias of 东区), or a bare clock time given to a slot without a pattern
    ("20:00" as the date is the time slot's). One thing the user said fills one slot."""
    owner = other_slot_value(task, slot, value)
    spec = task.slots.get(slot)
    if owner or spec is None or is_form(spec.pattern) or spec.enum or not is_clock(value):
        return owner
    return next((n for n in time_slots(task) if n != slot), "")


# A question word is never a value: what the user asks about is not what they want.
_INTERROGATIVE = re.compile(r"(?:多长时间|多长|多久|多少钱|多少|多大|什么|啥|哪些|哪个|哪家|哪里|哪儿|几点|几个|几位|几号|几|"
                            r"怎么样|怎样|如何|what|which|where|when|how (?:long|much|many))[?？]?")


# A 的 or a word of place before the kind of thing a description ends with: "环境好点的酒店", "颐和园周边的酒店".
def is_interrogative(value: Any) -> bool:
    """A question word given as a value ("多长时间", "几点"): what the user asks about, not what they want."""
    return isinstance(value, str) and _INTERROGATIVE.fullmatch(value.strip().lower()) is not None


_PLACE_WORDS = ("周边", "附近", "旁边", "周围", "一带")
_DESCRIBING = ("的", *_PLACE_WORDS)


def describes_its_kind(task: TaskSpec, spec: SlotSpec, value: str) -> bool:
    """Whether a free-text value describes the thing its slot holds instead of naming it: it ends with
    the kind of thing — the slot's label or the task's (without a leading word of place: 周边景点 -> 景点) —
    right after a 的 or a word of place ("环境好点的酒店" or "颐和园周边的酒店" for a hotel's name, "恭王府周边景点",
    "安静一点的餐厅" for the restaurant). A name keeps its kind word after the name itself ("北京京仪大酒店",
    "老地方餐厅"). Free-text slots only; the model took the user's words for a name they do not give."""
    if spec.type != "string" or spec.enum or is_form(spec.pattern):
        return False
    text = value.strip()
    kinds = {label for label in (spec.label, task.label) if len(label) >= 2}
    kinds |= {kind.removeprefix(word) for kind in kinds for word in _PLACE_WORDS if kind.startswith(word)}
    return any(len(kind) >= 2 and text.endswith(kind) and text[:-len(kind)].endswith(_DESCRIBING) for kind in kinds)


def is_name_slot(task: TaskSpec, name: str) -> bool:
    """A slot that names the thing its task is about: called or labelled 名称 or "name", or the task's own
    word before it (酒店名称 in the task 酒店, restaurant_name in book_restaurant). Not a person's name:
    contact_name, 姓名 and 联系人 name no place, and one person may be in every task."""
    spec = task.slots.get(name)
    if spec is None:
        return False
    kinds = [kind for kind in (task.name.lower(), task.label.lower()) if kind]
    for word in (name.lower(), spec.label.lower()):
        for end in ("名称", "name"):
            if word.endswith(end):
                head = word[:-len(end)].rstrip(" _-")
                if not head or any(head in kind for kind in kinds):
                    return True
    return False


def names_another_slot(task: TaskSpec, name: str, value: str) -> bool:
    """Whether a value written as the task's name mentions another of its slots by label: the user's
    whole request, not a name ("评分4.5分以上可以游玩时间3天的景点游玩" as the sight's name, while 评分 and
    游玩时间 are slots of their own). Name slots only (:func:`is_name_slot`), labels of two characters or
    more that are not plain English (a word like "date" is in names: "Date Night Bistro")."""
    if not is_name_slot(task, name):
        return False
    return any(other != name and len(label) >= 2 and not label.isascii() and label in value
               for other, slot in task.slots.items() for label in {other, slot.label} if label)


# What a model writes when it turns the user's date or time into its own: "2023-03-14" for "下周三" (a
# small model makes relative dates absolute, with a year it invents), "20:00" for "晚上六点".
_ISO_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}")
_DATE_SLOT = re.compile(r"\bdates?\b|\bday\b|日期|哪天|哪一天|几号")


def date_slots(task: TaskSpec) -> list[str]:
    """The task's date slots: string slots whose pattern takes YYYY-MM-DD, or free-text ones whose name,
    label, question or description says date ("出发日期", "date", "哪天")."""
    return [n for n, s in task.slots.items() if s.type == "string" and not s.enum and (
        takes_form(s.pattern, "2026-12-02") if s.pattern
        else _DATE_SLOT.search(f"{n} {s.label} {s.ask} {s.description}".lower().replace("_", " ")))]


_ISO_MONTH = re.compile(r"\d{4}-\d{1,2}")
_MONTH_SLOT = re.compile(r"\bmonths?\b|月份|哪个月|几月")


def month_slots(task: TaskSpec) -> list[str]:
    """The task's month slots: string slots whose pattern takes YYYY-MM, or free-text ones whose name,
    label or question says month ("账单月份", "month", "查哪个月")."""
    return [n for n, s in task.slots.items() if s.type == "string" and not s.enum and (
        takes_form(s.pattern, "2026-11") if s.pattern
        else _MONTH_SLOT.search(f"{n} {s.label} {s.ask}".lower().replace("_", " ")))]


def not_a_month(task: TaskSpec, name: str, value: Any) -> bool:
    """Whether ``value`` is text with no month in it, for a month slot ("装好以后" as the bill's month)."""
    text = value.strip().lower() if isinstance(value, str) else ""
    return bool(text) and name in month_slots(task) and not month_spans(text) and not _ISO_MONTH.fullmatch(text)


def month_said(task: TaskSpec, name: str, ev: Any) -> Any:
    """The one month the message states (:func:`dskit.rules.grounding.month_spans`), not negated, for the
    task's only month slot ``name``: as written ("上个月", "3月") for a free-text slot, worked out from the
    reference date for a pattern (YYYY-MM); None otherwise."""
    raw = ev.raw
    spans = month_spans(raw)
    if month_slots(task) != [name] or len(spans) != 1 or negated_at(raw, *spans[0]):
        return None
    start, end = spans[0]
    if task.slots[name].pattern:
        months = {m for m in dates_in(raw[start:end], ev.reference) if len(m) == 7}
        return next(iter(months)) if len(months) == 1 else None
    return ev.cased[start:end] if len(ev.cased) == len(raw) else raw[start:end]


def forms_said(task: TaskSpec, ev: Any) -> dict[str, Any]:
    """The values a message gives a task by their form alone: the one date said for its only date slot and
    the one month said for its only month slot (:func:`date_said`, :func:`month_said`) — what the engine
    reads itself when it opens a task the model left unopened ("查一下我上个月的话费")."""
    found = {}
    for slots, said in ((date_slots(task), date_said), (month_slots(task), month_said)):
        value = said(task, slots[0], ev) if len(slots) == 1 else None
        if value is not None:
            found[slots[0]] = value
    return found


def said_instead(task: TaskSpec, name: str, value: Any, ev: Any, old: Any) -> Any:
    """The date, month or clock time the user said, for a slot the model gave a date, month or time the
    user did not say: the model aimed at the right slot and wrote the value wrong ("2023-03" or "上个月" for
    "那3月的呢"). Only when the message states exactly one of that kind, not negated ("周六不行"), and the
    slot is the task's only one of that kind (:func:`time_slots`, :func:`date_slots`, :func:`month_slots`).
    A slot whose pattern takes YYYY-MM-DD (YYYY-MM) gets the date (month) worked out from the reference
    date; a free-text one keeps the words as said ("下周三"). None otherwise."""
    if not isinstance(value, str) or len(value) > 16:
        return None
    value = value.lower()
    if is_clock(value):
        clocks = {same_half_day(t, old, ev.raw) for t in times_in(ev.raw)}
        return next(iter(clocks)) if len(clocks) == 1 and time_slots(task) == [name] else None
    if _ISO_MONTH.fullmatch(value.strip()) or month_spans(value.strip()) == [(0, len(value.strip()))]:
        return month_said(task, name, ev)  # "2023-03" (a year nobody said) or "上个月" for "3月"
    return date_said(task, name, ev) if _ISO_DATE.fullmatch(value.strip()) else None


def date_stated_whole(task: TaskSpec, name: str, value: Any, raw: str) -> Any:
    """The whole date the user said when the model wrote a piece of it: "周日" of "下周日", "周五" of
    "下周五" (another day than the one the piece names). The piece must lie inside exactly one date the
    message states (:func:`dskit.rules.grounding.date_spans`) and not be said on its own as well; a
    free-text date slot only (a pattern's date is worked out, not copied)."""
    if not isinstance(value, str) or name not in date_slots(task) or task.slots[name].pattern:
        return value
    core = value.strip()
    said = [raw[start:end] for start, end in date_spans(raw)]
    wholes = {text for text in said if core in text and text != core}
    if core and len(wholes) == 1 and core not in said:
        return wholes.pop()
    return value


def date_said(task: TaskSpec, name: str, ev: Any) -> Any:
    """The one date the message states, not negated, for the task's only date slot ``name``: as written
    ("下周三") for a free-text slot, worked out from the reference date for a pattern; None otherwise."""
    raw = ev.raw
    spans = date_spans(raw)
    if date_slots(task) != [name] or len(spans) != 1 or negated_at(raw, *spans[0]):
        return None
    start, end = spans[0]
    if task.slots[name].pattern:
        days = {d for d in dates_in(raw[start:end], ev.reference) if len(d) == 10}
        return next(iter(days)) if len(days) == 1 else None
    return ev.cased[start:end] if len(ev.cased) == len(raw) else raw[start:end]


# A number as people bound it in words: "不超过200元", "4.5分以上", "3天左右". The model keeps the number and
# often drops the rest ("4.5", "4.5以上", ">=4.5" for "评分4.5分以上"), which changes what the user asked for.
_BOUND_BEFORE = r"(?:不超过|不高于|不低于|不少于|不多于|至少|至多|最多|最少|低于|高于|超过|大于|小于)"
_UNIT = r"(?:分钟|小时|公里|平米|分|元|块|人|位|个|天|晚|岁|星|折|米|间|层)"
_BOUND_AFTER = r"(?:及以上|或以上|及以下|或以下|以上|以下|以内|之内|左右|起)"
_NUMBER_PHRASE = re.compile(rf"({_BOUND_BEFORE})?\s*(\d+(?:\.\d+)?)\s*({_UNIT})?\s*({_BOUND_AFTER})?")


def _number_spelling(value: str, said: str) -> str:
    """A free-text value that is only a number with a unit or a bound ("4.5以上", "4.5", "≥4.5") in the
    words the user bound that number with ("4.5分以上"): one number, said once in a phrase that bounds it
    one way (以上, 以内, 不超过 — dropping those changes what was asked; a unit or 左右 does not, and the
    model's "3天" for "3天左右" stays), with no other unit or bound than the value's own. Anything else is
    left as the model wrote it."""
    value_phrases = [m for m in _NUMBER_PHRASE.finditer(value) if m.group(2)]
    if len(value_phrases) != 1:
        return value
    own = value_phrases[0]
    if value.replace(own.group(0), "", 1).strip(" >=<≥≤~+～"):
        return value  # other words beside the number: not only a number
    phrases = {m.group(0).strip() for m in _NUMBER_PHRASE.finditer(said)
               if m.group(2) == own.group(2) and (m.group(1) or m.group(4) not in (None, "左右"))}
    if len(phrases) != 1:
        return value
    phrase = next(iter(phrases))
    theirs = _NUMBER_PHRASE.fullmatch(phrase)
    for group in (1, 3, 4):  # the model's own unit or bound must be the user's ("或以上" is "以上")
        if own.group(group) and _same_bound(own.group(group)) != _same_bound(theirs.group(group)):
            return value
    return phrase


def _same_bound(word: str | None) -> str | None:
    return {"及以上": "以上", "或以上": "以上", "及以下": "以下", "或以下": "以下", "之内": "以内"}.get(word or "", word)


def users_spelling(value: Any, raw: str) -> Any:
    """A free-text value in the user's own spelling: an English value the model wrote all in lower case,
    with the capitals the user wrote it with ("thai" -> "Thai", "monday" -> "Monday" when the user wrote
    those); a number with the unit and bound the user said it with ("4.5以上" -> "4.5分以上",
    :func:`_number_spelling`). A value the model capitalised is left as it is."""
    if isinstance(value, str) and any(ch.isdigit() for ch in value):
        spelled = _number_spelling(value, unicodedata.normalize("NFKC", raw))
        if spelled != value:
            return spelled
    if not (isinstance(value, str) and value.isascii() and value == value.lower() and value.strip()):
        return value
    lowered = raw.lower()
    if len(lowered) != len(raw):  # a character whose lower case is longer: positions would not line up
        return value
    start = lowered.find(value)
    while start >= 0:
        end = start + len(value)
        if (start == 0 or not lowered[start - 1].isalnum()) and (end == len(raw) or not lowered[end].isalnum()):
            return raw[start:end]
        start = lowered.find(value, start + 1)
    return value


# What may stand between a slot's word and its value: "故障是…", "地址：…", "餐厅叫…", "故障就是…".
_STATES = re.compile(r"\s*[就也还]?\s*(?:是(?!否|不是)|为|叫|：|:)\s*")
# Where a clause ends, and what trails a value without being part of it ("…拨号音了吧").
_CLAUSE_END = re.compile(r"[，,。．.！!？?；;、\s]")
_TRAILING = "吧啊呀呢哦啦嘛了的哈"
# The words a user puts before a value that are not part of it ("地址是在…", "故障是我家…": the model
# that leaves them out is right).
_NOT_THE_VALUE = ("在", "就", "还", "也", "都", "要", "有", "我", "你", "他", "她", "大概", "大约", "应该", "可能",
                  "好像", "一个", "那个", "这个", "这边", "那边")
_KEPT_PART = (2, 8)  # what the model left out of a stated value: two to eight letters


def stated_whole(task: TaskSpec, spec: SlotSpec, value: Any, raw: str) -> Any:
    """The whole of what the user stated as a free-text slot's value, when the model wrote only its end:
    "故障是固话没有拨号音" gives the fault "固话没有拨号音", not "没有拨号音" (which the technician cannot
    act on). Stated means after the slot's Chinese label or a two-character-or-longer start or end of it
    ("故障" for 故障现象, "地址" for 报修地址; not a piece another slot's label has too: "酒店" names no one
    slot of 酒店名称, 酒店设施) and 是/为/叫/a colon (not 是否), to the end of the clause, trailing
    particles dropped. The part the model left out is two to eight letters, no digits or punctuation, and
    does not begin with a word that is not the value ("在", "我家", "大概"), and the whole stays within the
    slot's length; anything else, and values that are not plain text (options, patterns, numbers), stay as
    the model wrote them."""
    label = spec.label.strip()
    if not (isinstance(value, str) and value.strip() and spec.type == "string" and len(label) >= 2
            and not label.isascii() and not spec.enum and not is_form(spec.pattern) and raw):
        return value
    core = value.strip()
    others = [other.label for other in task.slots.values() if other.name != spec.name and other.label]
    words = {word for n in range(2, len(label)) for word in (label[:n], label[-n:])
             if not any(word in other for other in others)} | {label}
    for word in sorted(words, key=len, reverse=True):
        start = raw.find(word)
        while start >= 0:
            joint = _STATES.match(raw, start + len(word))
            if joint is not None:
                rest = raw[joint.end():]
                end = _CLAUSE_END.search(rest)
                said = (rest[:end.start()] if end else rest).rstrip(_TRAILING)
                left = said[:-len(core)] if said.endswith(core) else ""
                if (_KEPT_PART[0] <= len(left) <= _KEPT_PART[1] and left.isalpha()
                        and not left.startswith(_NOT_THE_VALUE) and len(said) <= spec.max_length):
                    return said
            start = raw.find(word, start + 1)
    return value


__all__ = ["pattern_takes", "is_form", "takes_form", "time_slots", "date_slots", "date_stated_whole", "as_clock", "owner_elsewhere", "describes_its_kind",
           "is_name_slot", "names_another_slot", "said_instead", "date_said", "month_slots", "month_said", "not_a_month", "forms_said", "users_spelling", "stated_whole",
           "is_interrogative"]
