"""Admission: how the user's words decide which of the model's commands the turn applies.

:mod:`dskit.grounding` holds the lexical rules (is this value in what the user said, does the
message say yes, name this task, ...). This module applies them to commands, and is the one place
that does: each command class (:mod:`dskit.commands`) asks here whether it may act, and gets a yes or
a reason. With no evidence (``turn.evidence`` None: replaying stored commands) everything is admitted.
docs/grounding.md states every rule in a sentence.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from .catalog import SlotSpec, TaskSpec, coerce_slot_value
from .grounding import (Evidence, asks_about_task, cancel_grounded, clock_value, common_words, confirm_grounded,
                        date_spans, dates_in, is_clock, other_slot_value, reset_grounded, revert_said, same_half_day,
                        slot_touched, split_clock, task_mentioned, task_words, text_grounded, times_in, value_grounded)
from .cues import asks, is_social, negated_at, points_back, says_cancel_clause, says_no, says_refusal
from .noise import noise_user_signal
from .offers import offer_accepted
from .slot_writes import UNSET
from .turn import Turn, short_text

# A task that ran this many turns ago or less "just ran": starting it again must be asked for.
RECENT_EXECUTION_TURNS = 3


# ---------------------------------------------------------------- slot shapes

def pattern_takes(pattern: str, text: str) -> bool:
    try:
        return re.fullmatch(pattern, text) is not None
    except re.error:
        return False


def time_slots(task: TaskSpec) -> list[str]:
    """The task's time slots: string slots whose pattern takes HH:MM."""
    return [n for n, s in task.slots.items()
            if s.type == "string" and s.pattern and pattern_takes(s.pattern, "19:00")]


def as_clock(spec: SlotSpec, raw: Any) -> Any:
    """A model's "晚上七点" for a slot whose pattern wants HH:MM, as "19:00" when it names one time
    (docs/grounding.md: the same normalisation grounds the value against the user's words)."""
    if not (isinstance(raw, str) and len(raw) <= 40 and spec.type == "string" and spec.pattern) \
            or pattern_takes(spec.pattern, raw):
        return raw
    clock = clock_value(raw)
    return clock if clock is not None and pattern_takes(spec.pattern, clock) else raw


def owner_elsewhere(task: TaskSpec, slot: str, value: Any) -> str:
    """The other slot ``value`` belongs to, "" when none: another slot's option or alias ("城东" as the
    date is the area's, an alias of 东区), or a bare clock time given to a slot without a pattern
    ("20:00" as the date is the time slot's). One thing the user said fills one slot."""
    owner = other_slot_value(task, slot, value)
    spec = task.slots.get(slot)
    if owner or spec is None or spec.pattern or spec.enum or not is_clock(value):
        return owner
    return next((n for n in time_slots(task) if n != slot), "")


# ---------------------------------------------------------------- values

def keep_half_day(turn: Turn, task: dict, name: str, value: Any) -> Any:
    """An hour said without morning or evening keeps the half of the day of the value it replaces."""
    if turn.evidence is None:
        return value
    return same_half_day(value, task["slots"].get(name), turn.evidence.raw)


# A question word is never a value: what the user asks about is not what they want.
_INTERROGATIVE = re.compile(r"(?:多长时间|多长|多久|多少钱|多少|多大|什么|啥|哪些|哪个|哪家|哪里|哪儿|几点|几个|几位|几号|几|"
                            r"怎么样|怎样|如何|what|which|where|when|how (?:long|much|many))[?？]?")


# A 的 or a word of place before the kind of thing a description ends with: "环境好点的酒店", "颐和园周边的酒店".
_PLACE_WORDS = ("周边", "附近", "旁边", "周围", "一带")
_DESCRIBING = ("的", *_PLACE_WORDS)


def describes_its_kind(task: TaskSpec, spec: SlotSpec, value: str) -> bool:
    """Whether a free-text value describes the thing its slot holds instead of naming it: it ends with
    the kind of thing — the slot's label or the task's (without a leading word of place: 周边景点 -> 景点) —
    right after a 的 or a word of place ("环境好点的酒店" or "颐和园周边的酒店" for a hotel's name, "恭王府周边景点",
    "安静一点的餐厅" for the restaurant). A name keeps its kind word after the name itself ("北京京仪大酒店",
    "老地方餐厅"). Free-text slots only; the model took the user's words for a name they do not give."""
    if spec.type != "string" or spec.enum or spec.pattern:
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


def _held_as_name(turn: Turn, entries: list[tuple[Any, Any]], value: Any) -> TaskSpec | None:
    """The first task of ``entries`` ((task name, slots) pairs) that holds ``value`` in a name slot."""
    if not isinstance(value, str) or not value.strip():
        return None
    for kind, slots in entries:
        spec = turn.catalog.task(kind) if isinstance(kind, str) else None
        if spec is not None and isinstance(slots, dict) and any(
                is_name_slot(spec, slot) and isinstance(held, str) and held.strip() == value.strip()
                for slot, held in slots.items()):
            return spec
    return None


def names_another_slot(task: TaskSpec, name: str, value: str) -> bool:
    """Whether a value written as the task's name mentions another of its slots by label: the user's
    whole request, not a name ("评分4.5分以上可以游玩时间3天的景点游玩" as the sight's name, while 评分 and
    游玩时间 are slots of their own). Name slots only (:func:`is_name_slot`), labels of two characters or
    more that are not plain English (a word like "date" is in names: "Date Night Bistro")."""
    if not is_name_slot(task, name):
        return False
    return any(other != name and len(label) >= 2 and not label.isascii() and label in value
               for other, slot in task.slots.items() for label in {other, slot.label} if label)


def named_by_another_task(turn: Turn, task: dict, name: str, value: Any) -> str:
    """The label of another kind of task that holds ``value`` as its own name, "" when none.

    One place is one kind of thing: the restaurant the user chose is not also the sight, and the hotel
    they ask the sights around is not the sight's name (the 1.5B model wrote "北京丽亭酒店", the hotel
    taken two turns before, as the name of the sight the user looks for near it). Name slots only
    (:func:`is_name_slot`) of tasks of another kind, open or done: two bookings may share a restaurant,
    and a taxi may leave from the hotel.
    """
    if not is_name_slot(turn.spec(task), name):
        return ""
    entries = [(t["name"], t.get("slots")) for t in turn.state["task_stack"] if t["name"] != task["name"]]
    entries += [(d.get("task"), d.get("slots")) for d in turn.state["done"]
                if isinstance(d, dict) and d.get("task") != task["name"]]
    other = _held_as_name(turn, entries, value)
    return other.display if other is not None else ""


def admit_value(turn: Turn, task: dict, name: str, value: Any) -> tuple[Any, str]:
    """The part of a coerced value (None: a deletion) that the user's message supports, and why the
    rest is not: (value, or UNSET when nothing is admitted; reason)."""
    ev = turn.evidence
    old = task["slots"].get(name)
    if ev is None or value == old:
        return value, ""
    task_spec = turn.spec(task)
    spec = task_spec.slots[name]
    common = common_words(task_spec, name)
    if value is None:  # a deletion: the message must name the slot or the value it removes
        if slot_touched(spec, ev.message) or text_grounded(str(old), ev.message, ev.raw):
            return value, ""
        return UNSET, f"{name}: the message does not mention this slot; its value stays"
    if isinstance(value, str) and _INTERROGATIVE.fullmatch(value.strip().lower()):  # "能玩多长时间？" gives no time
        return UNSET, f"{name}: {short_text(value)} is what the user asks, not a value"
    if isinstance(value, str) and describes_its_kind(task_spec, spec, value):  # "颐和园周边的酒店" for a hotel's name
        return UNSET, f"{name}: {short_text(value)} describes one, it does not name it"
    if isinstance(value, str) and names_another_slot(task_spec, name, value):  # "评分4.5分以上…的景点" as its name
        return UNSET, f"{name}: {short_text(value)} states what is wanted, it does not name it"
    owner = owner_elsewhere(task_spec, name, value)
    if owner:  # "城东" written into the date: it is the area's (an alias of 东区)
        return UNSET, f"{name}: {short_text(value)} is a value of {owner}"
    other = named_by_another_task(turn, task, name, value)
    if other:  # the hotel the user asks the sights around, written as the sight's name
        return UNSET, f"{name}: {short_text(value)} is the {other}'s name"
    asked = turn.asked == f"{task['id']}.{name}"
    # A change of a value, or a slot that held one before, must be touched by this message; a slot
    # filled for the first time may take a value the user gave in a recent turn — for a task open
    # before this message or named in it, never for one a model opened on its own.
    first_fill = old is None and not task["history"].get(name) and (
        task["id"] in turn.existing_ids or task_mentioned(task_spec, turn.catalog, ev.message)
        or task["name"] in turn.late_starts)
    items = value if isinstance(value, list) else [value]
    kept = [item for item in items
            if value_grounded(spec, item, ev, old=old, asked=asked, recent=False, common=common)
            or (value_grounded(spec, item, ev, old=old, recent=True, common=common)
                and (first_fill or slot_touched(spec, ev.message)) and not _held_elsewhere(turn, task, name, item)
                and not _given_to_another(turn, task_spec, spec, item, old, common))
            or offered_value(turn, task["name"], name, item, asked)]
    if not kept:
        instead = said_instead(task_spec, name, value, ev, old)
        if instead is not None:
            turn.note(f"repair {task['id']}.{name}={short_text(instead)}", progress=False)
            return instead, ""
        return UNSET, f"{name}: {short_text(value)} is not in what the user said"
    rest = [item for item in items if item not in kept]
    if not spec.enum and not spec.pattern:
        kept = [stated_whole(task_spec, spec, users_spelling(item, ev.cased), ev.cased) for item in kept]
    if isinstance(value, list):
        return kept, f"{name}: {short_text(rest)} is not in what the user said" if rest else ""
    return kept[0], ""


# What a model writes when it turns the user's date or time into its own: "2023-03-14" for "下周三" (a
# small model makes relative dates absolute, with a year it invents), "20:00" for "晚上六点".
_ISO_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}")
_DATE_SLOT = re.compile(r"\bdates?\b|\bday\b|日期|哪天|哪一天|几号")


def date_slots(task: TaskSpec) -> list[str]:
    """The task's date slots: string slots whose pattern takes YYYY-MM-DD, or free-text ones whose name,
    label, question or description says date ("出发日期", "date", "哪天")."""
    return [n for n, s in task.slots.items() if s.type == "string" and not s.enum and (
        pattern_takes(s.pattern, "2026-12-02") if s.pattern
        else _DATE_SLOT.search(f"{n} {s.label} {s.ask} {s.description}".lower().replace("_", " ")))]


def said_instead(task: TaskSpec, name: str, value: Any, ev: Any, old: Any) -> Any:
    """The date or clock time the user said, for a slot the model gave a date or time the user did not
    say: the model aimed at the right slot and wrote the value wrong. Only when the message states exactly
    one of that kind, not negated ("周六不行"), and the slot is the task's only one of that kind
    (:func:`time_slots`, :func:`date_slots`). A slot whose pattern takes YYYY-MM-DD gets the date worked
    out from the reference date; a free-text one keeps the words as said ("下周三"). None otherwise."""
    if not isinstance(value, str) or len(value) > 16:
        return None
    if is_clock(value):
        clocks = {same_half_day(t, old, ev.raw) for t in times_in(ev.raw)}
        return next(iter(clocks)) if len(clocks) == 1 and time_slots(task) == [name] else None
    return date_said(task, name, ev) if _ISO_DATE.fullmatch(value.strip()) else None


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
            and not label.isascii() and not spec.enum and not spec.pattern and raw):
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


def evidence_for(turn: Turn, task: TaskSpec) -> Evidence:
    """The turn's evidence without the recent messages that asked for another kind of task and not
    ``task`` (:func:`_given_to_another`); this message always counts."""
    ev = turn.evidence
    others = [other for other in turn.catalog.tasks.values() if other.name != task.name]
    keep = [index for index, folded in enumerate(ev.recent)
            if task_mentioned(task, turn.catalog, folded)
            or not any(task_mentioned(other, turn.catalog, folded) for other in others)]
    if len(keep) == len(ev.recent):
        return ev
    return ev.keeping_recent(keep)


def _given_to_another(turn: Turn, task_spec: TaskSpec, spec: SlotSpec, value: Any, old: Any,
                      common: frozenset[str]) -> bool:
    """Whether a value of the user's recent messages (not this one) was said only in messages that asked
    for another kind of task and not this one: it was given for that task ("查一下上海今天的天气" gives 上海
    to the weather, not to the trip planned a message later: where it starts is asked). A message that
    points back ("那天", "那里", "same day": :func:`dskit.cues.points_back`) takes
    what it points at from any request, and a place some task, open or done, is named by may still be
    what this one is near (the sight the user chose is 周边景点 of the hotel they ask for next)."""
    if points_back(turn.evidence.raw):
        return False
    narrowed = evidence_for(turn, task_spec)
    if narrowed is turn.evidence or value_grounded(spec, value, narrowed, old=old, recent=True, common=common):
        return False
    named = [(t["name"], t.get("slots")) for t in turn.stack.tasks]
    named += [(d.get("task"), d.get("slots")) for d in turn.state["done"] if isinstance(d, dict)]
    return _held_as_name(turn, named, value) is None


def _held_elsewhere(turn: Turn, task: dict, name: str, value: Any) -> bool:
    """Whether a value of the user's recent messages was given for another task: one of the same kind —
    open, or one of the last that ran — holds it ("西湖区文三路100号" for their own broadband is not given
    again for a new one, "我爸家里也要装一个"), or a task of another kind holds it in a slot of the same name
    ("评分4.5分以上" asked of a restaurant is that restaurant's rating, not the hotel's asked for two
    messages later). Another kind of task may share it in another slot (a hotel's name is also where the
    taxi goes), and a place some task is named by may be what several are near (the sight chosen is
    周边景点 of the hotel and of the restaurant). A value a task that ran holds may be what the next one
    refers to ("广州那天天气怎么样": the day of the route that ran)."""
    if _holds(value, [t for t in turn.stack.tasks if t is not task and t["name"] == task["name"]]
              + [d for d in turn.state["done"][-3:] if isinstance(d, dict) and d.get("task") == task["name"]]):
        return True
    others = [t for t in turn.stack.tasks if t is not task and t["name"] != task["name"]]
    if not any((t.get("slots") or {}).get(name) == value for t in others):
        return False
    return _held_as_name(turn, [(t["name"], t.get("slots")) for t in turn.stack.tasks], value) is None


def _holds(value: Any, tasks: list[dict], skip: tuple[str, str] | None = None) -> bool:
    """Whether one of ``tasks`` (open ones, or ``done`` entries) holds ``value`` in a slot other than
    ``skip`` = (task name, slot)."""
    for entry in tasks:
        slots = entry.get("slots")
        name = entry.get("name") or entry.get("task")
        if isinstance(slots, dict) and any(held == value and (name, slot) != skip for slot, held in slots.items()):
            return True
    return False


def offered_value(turn: Turn, task_name: str, slot: str, value: Any, asked: bool) -> bool:
    """A value the assistant's last reply offered for this slot, which the message accepts (dskit.offers).
    A value of the reply's text that another slot already holds was shown back, not offered (a
    confirmation question repeats the booking's "Somewhere downtown"): it never moves to this slot."""
    ev = turn.evidence
    if ev is None:
        return False
    if offer_accepted(task_name, slot, value, ev.raw, ev.offers, "", asked):  # a structured offer
        return True
    shown_back = _holds(value, turn.stack.tasks, skip=(task_name, slot))
    spec = turn.catalog.tasks[task_name].slots.get(slot) if task_name in turn.catalog.tasks else None
    asked_about = spec is not None and asks(ev.raw) and slot_touched(spec, ev.message)
    # "这家酒店的价格是多少？" asks for the price the reply may name: a question about a slot gives it nothing
    return not shown_back and not asked_about and offer_accepted(task_name, slot, value, ev.raw, (), ev.offered,
                                                                 asked)


def hold_or_refuse(turn: Turn, task: dict, name: str, value: Any, command: dict, reason: str) -> None:
    """An unsupported value under the policy: refused ("drop"), or held for the user to check ("ask":
    the next question shows it, and only a yes stores it)."""
    if turn.catalog.policy.ungrounded == "ask":
        task.setdefault("unconfirmed", {})[name] = value
        turn.drop(command, f"held for the user to check: {reason}")
        turn.note(f"hold {task['id']}.{name}", progress=False)
    else:
        turn.refuse(command, reason)


def split_clock_slots(turn: Turn, task: dict, slots: dict) -> dict:
    """A clock time folded into another value ("周五晚上8点" given as the date) goes to the task's one
    time slot when the command does not fill that slot itself: one thing the user said, one slot."""
    spec = turn.spec(task)
    clocks = time_slots(spec)
    if turn.evidence is None or len(clocks) != 1 or clocks[0] in slots:
        return slots
    for name, raw in slots.items():
        slot = spec.slots.get(name)
        if slot is None or slot.type != "string" or slot.pattern or slot.enum or not isinstance(raw, str):
            continue
        rest, clock = split_clock(raw)
        if clock is not None:
            turn.note(f"split {task['id']}.{name}", progress=False)
            return {**slots, name: rest, clocks[0]: clock}
    return slots


def refile_misfiled(turn: Turn, task: dict, slots: dict) -> dict:
    """A value the model wrote into the wrong slot goes to the slot it belongs to, when the command does
    not fill that slot itself: "城东" written as the date is the area's (an alias of 东区), a bare "20:00"
    written as the date is the time's. It is then admitted there like any value. Grounding only."""
    if turn.evidence is None:
        return slots
    spec = turn.spec(task)
    moved = dict(slots)
    for name, raw in slots.items():
        owner = owner_elsewhere(spec, name, raw) if name in spec.slots else ""
        if owner and owner not in moved:
            moved[owner] = raw
            del moved[name]
            turn.note(f"refile {task['id']}.{name}->{owner}", progress=False)
    return moved


def shared_words(turn: Turn, task: dict, slots: dict) -> set[str]:
    """Slots given the same text in one command ("我要报修，宽带特别慢" as both the address and the
    fault): one thing the user said fills one slot, so which one is unknown and none is filled,
    unless one of them was asked last turn (the answer goes there)."""
    if turn.evidence is None:
        return set()
    by_text: dict[str, list[str]] = {}
    for name, raw in slots.items():
        if isinstance(raw, str) and name in turn.spec(task).slots and raw.strip():
            by_text.setdefault(raw.strip(), []).append(name)
    shared = {n for names in by_text.values() if len(names) > 1 for n in names}
    return {n for n in shared if turn.asked != f"{task['id']}.{n}"}


# ---------------------------------------------------------------- starts, take-backs, yes, no

def _recent_run(turn: Turn, spec: TaskSpec) -> dict | None:
    """The last execution of the task within RECENT_EXECUTION_TURNS, if any."""
    ran = [d for d in turn.state["done"] if d.get("task") == spec.name
           and turn.state["turn"] - int(d.get("turn") or 0) <= RECENT_EXECUTION_TURNS]
    return ran[-1] if ran else None


def _said_values(turn: Turn, spec: TaskSpec, slots: dict, before: dict,
                 earlier: Evidence | None = None) -> tuple[int, int]:
    """(values given, values said) among a start's slots that differ from ``before``; with ``earlier``
    (the user's last message as evidence), a value said there counts as said too."""
    given = grounded = 0
    for name, raw in slots.items():
        slot = spec.slots.get(name)
        ok, value, _ = coerce_slot_value(slot, raw) if slot is not None and raw is not None else (False, None, "")
        if not ok or before.get(name) == value:
            continue
        given += 1
        asked = turn.asked.endswith(f".{name}")
        common = common_words(spec, name)
        if (value_grounded(slot, value, turn.evidence, recent=False, asked=asked, common=common)
                or earlier is not None and value_grounded(slot, value, earlier, recent=False, common=common)
                or offered_value(turn, spec.name, name, value, asked)
                or said_instead(spec, name, value, turn.evidence, before.get(name)) is not None) \
                and not owner_elsewhere(spec, name, value):
            grounded += 1
    return given, grounded


def answer_slots(turn: Turn, spec: TaskSpec, command: dict) -> dict:
    """The values a start carries in the whole answer: its own, and those of set_slots commands of the
    same message that go to the new task (named, or for a slot no task open before the message has).
    A start split into start_task + set_slots is checked as one."""
    slots = dict(command.get("slots") or {})
    earlier = [t for t in turn.stack.tasks if t["id"] in turn.existing_ids]
    for other in turn.commands:
        if other.get("type") != "set_slots" or other.get("task") not in (None, spec.name):
            continue
        for name, value in (other.get("slots") or {}).items():
            if name in spec.slots and name not in slots and (other.get("task") == spec.name or not any(
                    name in turn.spec(t).slots for t in earlier)):
                slots[name] = value
    return slots


def _said_last_message(turn: Turn, spec: TaskSpec, slots: dict) -> tuple[int, int] | None:
    """(values given, values said in this message or the last one) for a start the user asked for in
    their last message, which nothing acted on: "再配一个路由器，AX3000就行" got no usable command, and the
    model started the rental one message late. None unless that message names the task, states it (no
    question, no no, no cancel) and the last turn applied nothing to a task of that name, and this
    message does not say no either. The user said it once; a late model does not make them say it again."""
    ev = turn.evidence
    if not ev.recent or not task_mentioned(spec, turn.catalog, ev.recent[0]):
        return None
    last, now = ev.raw_recent[0], ev.raw
    if any(asks(last) or says_no(last) or says_refusal(text) or says_cancel_clause(text) for text in (last, now)):
        return None
    entries = [e for e in turn.state["timeline"][-1:] if isinstance(e, dict)]
    if any(spec.name in str(a) for e in entries for a in e.get("applied") or ()):
        return None
    earlier = Evidence(message=ev.recent[0], raw=last, reference=ev.reference, cased=last)
    return _said_values(turn, spec, slots, {}, earlier)


def admit_start(turn: Turn, spec: TaskSpec, command: dict) -> tuple[bool, str]:
    """Whether the message asks for this start. A task that is open or just ran is started again only
    when the message names it or gives it a new value; a new task the message does not name is refused
    when none or most of its values (in the whole answer) were not said, or when it carries none and either
    would run at once (a read-only enquiry on "你好") or the message is small talk."""
    ev = turn.evidence
    if ev is None:
        return True, ""
    if says_cancel_clause(ev.raw, task_words(spec)) and not _said_values(turn, spec, answer_slots(turn, spec, command),
                                                                        {})[1]:
        return False, f"start of {spec.name}: the message drops it and gives it no value"
    if task_mentioned(spec, turn.catalog, ev.message):
        return True, ""
    open_task = turn.stack.named(spec.name)
    ran = _recent_run(turn, spec)
    before = open_task["slots"] if open_task else (ran.get("slots") or {}) if ran else {}
    slots = answer_slots(turn, spec, command)
    given, grounded = _said_values(turn, spec, slots, before)
    if open_task is not None or ran:
        why = "it is already open" if open_task is not None else "it has just run"
        return grounded > 0, f"start of {spec.name}: {why} and the message does not ask for it again"
    if slots and (not grounded or grounded * 2 < given):
        late = _said_last_message(turn, spec, slots)
        if late is not None and late[1] and late[1] * 2 >= late[0]:
            turn.note(f"start {spec.name}: asked for in the user's last message", progress=False)
            turn.late_starts.add(spec.name)
            return True, ""
    if slots and not grounded:  # values for slots it does not even have count too
        return False, f"start of {spec.name}: none of its values is in the message, nor the task's name"
    if grounded * 2 < given:  # "home" -> "work" on a message that only says "Saturday"
        return False, f"start of {spec.name}: most of its values are not in the message, nor the task's name"
    runs_at_once = not spec.confirm and not any(s.required for s in spec.slots.values())
    if runs_at_once and asks(ev.raw) and asks_about_task(spec, ev.message) and not is_social(ev.raw):
        runs_at_once = False  # "顺便问下我卡里还剩多少钱": a question about the enquiry is asking for it
    if not slots and (runs_at_once or is_social(ev.raw) or noise_user_signal(ev.raw, "") in ("social", "empty")):
        why = "it would run at once" if runs_at_once else "the message is small talk"
        return False, f"start of {spec.name}: {why}, and the message neither names it nor gives a value"
    return True, ""


def admit_rollback(turn: Turn, task: dict, slot: str, previous: Any) -> bool:
    """A rollback the message asks for: it says "back" (还是原来的, 改回去, undo), names the value it goes
    back to, or names the slot — but never while it states the slot's *current* value and not the
    previous one ("还是五个人" after 4 -> 5 keeps five: 还是 is "still"). Back to *empty* only undoes a
    value given last turn or this one: "人数还是按原来的吧" after a change that was never applied must not
    empty a value the user gave long ago."""
    ev = turn.evidence
    if ev is None:
        return True
    task_spec = turn.spec(task)
    spec = task_spec.slots[slot]
    if previous is None and not turn.writes.changed_lately(task, slot):
        return False
    common = common_words(task_spec, slot)
    current = task["slots"].get(slot)
    said_previous = previous is not None and value_grounded(spec, previous, ev, recent=False, common=common)
    said_current = current is not None and current != previous and spec.type != "boolean" \
        and value_grounded(spec, current, ev, recent=False, common=common)
    if said_current and not said_previous:
        return False
    return slot_touched(spec, ev.message) or revert_said(ev) or said_previous


def admit_confirm(turn: Turn) -> bool:
    """A yes: the message says so."""
    return turn.evidence is None or confirm_grounded(turn.evidence)


def admit_cancel(turn: Turn, task: dict) -> bool:
    """A cancellation: the message drops something."""
    return turn.evidence is None or cancel_grounded(turn.evidence, turn.spec(task))


def admit_reset(turn: Turn) -> bool:
    """A reset: the message asks to start over."""
    return turn.evidence is None or reset_grounded(turn.evidence)


__all__ = ["admit_value", "admit_start", "admit_rollback", "admit_confirm", "admit_cancel", "admit_reset",
           "hold_or_refuse", "split_clock_slots", "shared_words", "keep_half_day", "as_clock", "time_slots",
           "owner_elsewhere", "pattern_takes", "refile_misfiled", "RECENT_EXECUTION_TURNS"]
