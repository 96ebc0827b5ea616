"""Rules corpus: user messages the engine's rule authors have never seen, for issues 38 and 40.

Eleven classes of message, each a family of cases built on grounding_corpus's harness (its ``Case``,
``run_case`` and predicates): a dialogue brought to a point, then one user message with the commands a
confused, small or manipulated model sends for it.

- An **attack** carries the model's wrong reading. Outcomes: ``acted`` (stored or did it: bad),
  ``asked`` (a clarification about the slot in question), ``refused`` (not stored; for a time or a
  count this includes the engine writing the value the user's words give instead of the model's).
- A **genuine** case carries the model's right reading. Outcomes: ``kept`` (good), ``asked``,
  ``refused`` (bad).

A clarification is ``decision["next_action"] == "clarify"`` with ``decision["slot"]`` naming one of
the case's ``ask`` slots ("" stands for a question about the task itself: whether to open it). The
engine does not ask yet; the predicates already accept it where asking is an acceptable outcome, and
a genuine case answered by a question counts as asked, not kept.

Every case has a stable id, ``"<class>:<slug>:<message>"``. The id is the unit of the split: the
half is "held" when the first byte of sha256(id) is odd, else "work". A sentence's attack and genuine
readings share its id, so a sentence is never in both halves. Generated cases use a fixed seed per
class and an expected value computed here, independently of the engine (``cn_number``,
``en_number``, ``clock``), never read back from it.

    python tests/rules_corpus.py                       # counts per class, both halves (no sentences)
    python tests/rules_corpus.py --show                # the work half's failing cases, in detail
    python tests/rules_corpus.py --show --half held    # the held half's (not for the rule authors)
    python tests/rules_corpus.py --engine DIR          # another checkout's dskit
    python tests/rules_corpus.py --json                # counts as JSON

The held half is for judging rules written against the work half: nothing prints its sentences
unless asked for by name (``--half held``).

What each class's predicate reads (a slot's value is the open task's, else the executed payload's):

1. time words: acted = the model's other-half time stored, or any time that is neither the old one
   nor the right one (a value nobody gave); kept = exactly the right HH:MM. The old time is always in
   the other half of the day. An engine writing the right time over the model's wrong one is "refused".
2. numbers: acted = the part (a digit or the tens inside the number, or the smaller of two counts)
   stored; kept = the whole number (the total).
3. names: acted = the city/province inside a road, street, station or county name stored as a place
   slot (or a transport mode read from a street name); kept = the full name, or the city when the user
   named it (a railway station of the city, 杭州东站, names the city).
4. starts: acted = the task is on the stack more often than before, or ran; kept = the same, for a
   request.
5. double negatives: the yes/no slot holds the model's wrong reading (acted) or the right one (kept).
6. slot in slot: acted = the date holds a clock time (六点半, 18:30, 7pm, half past six), or the time is
   wrong; kept = a date without a clock time and the right time.
7. an hour after its half of the day: acted = the morning time stored (in any form, 8:00 or 08:00) or
   any value but the right one and the old one; kept = exactly the right HH:MM.
8. a question about a topic: acted = the topic stored as the slot's value; kept = the value said.
9. the same words for two slots: for a name, kept = the restaurant slot holds it and acted = the
   cuisine slot holds it; for a cuisine the other way round. Losing it from both is refused.
10. no command: kept = the task opened (or ran); acted (small talk) = any task opened.
11. an enquiry beside another task: kept = the enquiry ran and the other task is open, this turn or
    on one follow-up turn (the user answering the other task's question); acted = the enquiry ran.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import random
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from grounding_corpus import (RESTAURANT, TELECOM, TRAVEL, Case, cmd, run_case, set_,  # noqa: E402
                              slot_is, start, submitted)

ROOT = Path(__file__).resolve().parents[1]
SEED = 3840


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


DINING_EN = _load(ROOT / "tests" / "fixtures" / "rules_dining_en.json")
TRAVEL_EN = _load(ROOT / "tests" / "fixtures" / "rules_travel_en.json")
TELECOM_EN = _load(ROOT / "tests" / "fixtures" / "rules_telecom_en.json")
TRAIN = _load(ROOT / "tests" / "fixtures" / "rules_train_zh.json")
BANQUET = _load(ROOT / "tests" / "fixtures" / "rules_banquet_zh.json")
PET = _load(ROOT / "examples" / "catalogs" / "pet_clinic_zh.json")
BIKE = _load(ROOT / "examples" / "catalogs" / "bike_repair_en.json")

CLASSES = {
    1: "1 time words the clock rules may not list",
    2: "2 a number inside a larger number",
    3: "3 a name inside a longer name",
    4: "4 a start with no request",
    5: "5 double negatives",
    6: "6 one slot holds another slot's value",
    7: "7 an hour after its half of the day was given",
    8: "8 a question about a slot's topic",
    9: "9 the same words for two slots",
    10: "10 a plain request, no command",
    11: "11 an enquiry beside another task",
}

# The issues' and the brief's own example sentences and names: never a message here (the corpus is
# written in the shape of the class, not from its examples).
_EXAMPLES = {
    "明天晚上大概七点左右", "saturday morning, 8 o'clock", "十五位", "二十个人", "a party of fifteen", "twelve of us",
    "7个人，其中2个小孩", "we're six, two of them kids", "上次在你们家吃得挺好", "谢谢，拜拜",
    "the food last time was great", "想约个位子", "can i get a table for friday", "没有包间可不行", "不能不要包间",
    "can't do without a quiet corner", "少不了包间", "周六晚上六点半", "后天晚上6点", "八点", "改到七点",
    "包间有最低消费吗？", "do you have parking?", "你们那儿安静吗", "订全聚德", "想吃川菜", "我想订个餐厅", "帮我报个修",
    "i'd like to book a repair", "帮我报修，顺便查下上个月话费", "早茶…九点", "午后两点", "下班后7点", "tonight at 8",
}
_EXAMPLE_PARTS = ("全聚德", "南京路", "苏州街", "长沙县", "washington street", "paris avenue", "午后两点", "下班后7点",
                  "tonight at 8", "早茶…九点")


# ---------------------------------------------------------------- the case and its outcomes


@dataclass
class RulesCase(Case):
    """A grounding_corpus.Case with what this corpus adds: its id (the unit of the split), which
    reading the model sent, the slots a clarification may name, an optional follow-up turn (class 11:
    an enquiry may run on the turn after), what counts in words, and whether it was generated."""

    cid: str = ""
    reading: str = ""
    ask: tuple = ()
    followup: tuple | None = None
    expect: str = ""
    generated: bool = False

    @property
    def key(self) -> str:
        return f"{self.cid}#{self.kind}:{self.reading}"


def half(case: RulesCase) -> str:
    """'held' when the first byte of sha256(id) is odd, else 'work'."""
    return "held" if hashlib.sha256(case.cid.encode("utf-8")).digest()[0] & 1 else "work"


def asks(decision: dict, slots: Iterable) -> bool:
    """A clarification naming one of ``slots`` ("" for the task itself)."""
    return decision.get("next_action") == "clarify" and (decision.get("slot") or "") in tuple(slots)


def task_of(state: dict, name: str) -> dict | None:
    return next((t for t in reversed(state.get("task_stack") or []) if t.get("name") == name), None)


def value_of(after: dict, decision: dict, task: str, slot: str):
    """The slot's value after the turn: in the open task, else in what was executed; None when unset."""
    open_task = task_of(after, task)
    if open_task is not None and slot in open_task.get("slots", {}):
        return open_task["slots"][slot]
    payload = decision.get("execute") or {}
    if payload.get("task") == task:
        return (payload.get("slots") or {}).get(slot)
    return None


def opened(name: str) -> Callable:
    """The task is on the stack more often than before, or was executed this turn."""
    def check(before: dict, after: dict, decision: dict) -> bool:
        count = lambda s: sum(1 for t in s.get("task_stack") or [] if t.get("name") == name)  # noqa: E731
        return count(after) > count(before) or submitted(name)(before, after, decision)
    return check


def clock(hour: int, minute: int, half_of_day: str) -> str:
    """HH:MM for an hour on a 12-hour face in a half of the day: 'am' (12 is midnight) or 'pm' (12 is noon)."""
    if half_of_day == "am":
        return f"{0 if hour == 12 else hour:02d}:{minute:02d}"
    return f"{12 if hour == 12 else hour + 12:02d}:{minute:02d}"


def other_half(value: str) -> str:
    hour, minute = value.split(":")
    return f"{(int(hour) + 12) % 24:02d}:{minute}"


def hhmm(value) -> str | None:
    """A clock value in one form (08:00 for 8:00), for comparing; None when it is not one."""
    match = re.fullmatch(r"\s*(\d{1,2})\s*[:：]\s*(\d{2})\s*", str(value)) if value is not None else None
    return f"{int(match[1]):02d}:{match[2]}" if match else None


def _outcome_predicates(kind: str, check: Callable, ask: tuple) -> Callable:
    """A Case's ``bad``: for an attack, ``check`` is 'acted'; for a genuine case, ``check`` is 'kept',
    and the case failed when it was neither kept nor asked about."""
    if kind == "attack":
        return check
    return lambda before, after, decision: not check(before, after, decision) and not asks(decision, ask)


def make(n: int, slug: str, kind: str, catalog: dict, setup: list, message: str, commands: list, check: Callable,
         *, reading: str, ask: tuple, expect: str, generated: bool, followup: tuple | None = None) -> RulesCase:
    folded = message.lower()
    assert folded not in _EXAMPLES and not any(p in folded for p in _EXAMPLE_PARTS), message
    return RulesCase(CLASSES[n], kind, catalog, setup, message, commands, _outcome_predicates(kind, check, ask),
                     cid=f"{n}:{slug}:{message}", reading=reading, ask=ask, followup=followup, expect=expect,
                     generated=generated)


def _pick(rng: random.Random, pool: list, k: int) -> list:
    return rng.sample(pool, min(k, len(pool)))


def _rng(n: int) -> random.Random:
    return random.Random(f"{SEED}-{n}")


# ---------------------------------------------------------------- numbers, independently of the engine

CN_DIGITS = "零一二三四五六七八九"
EN_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
           "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
EN_TENS = {2: "twenty", 3: "thirty", 4: "forty", 5: "fifty", 6: "sixty", 7: "seventy", 8: "eighty", 9: "ninety"}


def cn_number(n: int, *, liang: bool = False) -> str:
    """1-99 in Chinese numerals (十五, 二十, 二十三); ``liang``: 两 for a lone 2 (两个, 两点)."""
    assert 1 <= n <= 99
    if n < 10:
        return "两" if liang and n == 2 else CN_DIGITS[n]
    tens, ones = divmod(n, 10)
    return ("" if tens == 1 else CN_DIGITS[tens]) + "十" + (CN_DIGITS[ones] if ones else "")


def en_number(n: int, *, hyphen: bool = True) -> str:
    assert 1 <= n <= 99
    if n < 20:
        return EN_ONES[n]
    tens, ones = divmod(n, 10)
    return EN_TENS[tens] + (("-" if hyphen else " ") + EN_ONES[ones] if ones else "")


def parts_of(n: int, script: str) -> list[int]:
    """The smaller numbers a careless reader takes from inside n as written: the digits of 15, the 5 of
    十五 or fifteen, the 2 and the 20 of 二十三 or twenty-three, the 10 of 十."""
    tens, ones = divmod(n, 10)
    found = {ones, tens}
    if script == "cn":
        found |= {10, tens * 10 if ones else 0}
    if script == "en" and n >= 20:
        found.add(tens * 10 if ones else 0)
    return sorted(x for x in found if x and x != n)


# ---------------------------------------------------------------- prepared dialogues

R_OPEN = [("帮我订周五的位子，老地方餐厅", [start("book_restaurant", date="周五", restaurant="老地方餐厅")])]
R_OPEN4 = [("帮我订周五的位子，4个人，老地方餐厅", [start("book_restaurant", date="周五", people=4, restaurant="老地方餐厅")])]
R_PLAIN = [("帮我订周五的位子，3个人", [start("book_restaurant", date="周五", people=3)])]
E_OPEN = [("Book a table at Luigi's for Friday", [start("book_table", date="Friday", restaurant="Luigi's")])]
E_OPEN4 = [("A table for 4 at Luigi's on Friday", [start("book_table", date="Friday", people=4, restaurant="Luigi's")])]
B_OPEN = [("想订个宴会，下个月十八号", [start("book_banquet", date="下个月十八号")])]
R_DONE = [("帮我订周五晚上7点的位子，3个人，老地方餐厅",
           [start("book_restaurant", date="周五", time="19:00", people=3, restaurant="老地方餐厅")]),
          ("好的，确认", [cmd("confirm")])]
E_DONE = [("Table for 3 at Luigi's on Friday at 7pm",
           [start("book_table", date="Friday", time="19:00", people=3, restaurant="Luigi's")]),
          ("yes, book it", [cmd("confirm")])]

OLD_ZH = {"19:00": "晚上7点", "20:00": "晚上8点", "18:30": "晚上6点半", "21:00": "晚上9点",
          "09:00": "上午9点", "10:30": "上午10点半", "11:00": "上午11点"}
OLD_EN = {"19:00": "7pm", "20:00": "8pm", "18:30": "6:30pm", "21:00": "9pm", "09:00": "9am", "10:30": "10:30am",
          "11:00": "11am"}


def _r_booked(old: str) -> list:
    return [(f"帮我订周五{OLD_ZH[old]}的位子，3个人，老地方餐厅",
             [start("book_restaurant", date="周五", time=old, people=3, restaurant="老地方餐厅")])]


def _e_booked(old: str) -> list:
    return [(f"A table for 3 at Luigi's on Friday, {OLD_EN[old]}",
             [start("book_table", date="Friday", time=old, people=3, restaurant="Luigi's")])]


def _allowed(message: str) -> bool:
    folded = message.lower()
    return folded not in _EXAMPLES and not any(p in folded for p in _EXAMPLE_PARTS)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


# ---------------------------------------------------------------- 1. time words the clock rules may not list

# (word, half of the day, the hours it is said with, where it stands: "before" the hour, "after" it, "meal")
PERIODS_ZH = [
    ("早茶", "am", (7, 8, 9, 10), "meal"), ("早饭", "am", (7, 8), "meal"), ("早餐", "am", (7, 8, 9), "meal"),
    ("一大早", "am", (6, 7), "before"), ("清早", "am", (6, 7), "before"), ("早晨", "am", (7, 8), "before"),
    ("大清早", "am", (6, 7), "before"), ("上午", "am", (9, 10, 11), "before"), ("半夜", "am", (12, 1, 2), "before"),
    ("凌晨", "am", (1, 2, 3), "before"),
    ("午饭", "pm", (12, 1), "meal"), ("午餐", "pm", (12, 1), "meal"), ("中饭", "pm", (12, 1), "meal"),
    ("中午", "pm", (12, 1), "before"), ("午后", "pm", (1, 2, 3), "before"), ("下午茶", "pm", (2, 3, 4), "meal"),
    ("下午", "pm", (2, 3, 4, 5), "before"), ("傍晚", "pm", (5, 6, 7), "before"), ("傍晚时分", "pm", (5, 6), "before"),
    ("黄昏", "pm", (5, 6), "before"), ("下班后", "pm", (6, 7, 8), "before"), ("下了班", "pm", (6, 7), "before"),
    ("晚饭", "pm", (5, 6, 7, 8), "meal"), ("晚餐", "pm", (6, 7, 8), "meal"), ("入夜", "pm", (7, 8, 9), "before"),
    ("天黑以后", "pm", (7, 8), "before"), ("夜宵", "pm", (9, 10, 11), "meal"), ("宵夜", "pm", (10, 11), "meal"),
    ("晚上", "pm", (6, 7, 8, 9), "before"), ("夜里", "pm", (9, 10, 11), "before"),
]
PERIODS_EN = [
    ("breakfast", "am", (7, 8, 9), "meal"), ("brunch", "am", (10, 11), "meal"),
    ("in the morning", "am", (7, 8, 9, 10, 11), "after"), ("tomorrow morning", "am", (8, 9, 10), "before"),
    ("Sunday morning", "am", (9, 10, 11), "before"), ("early in the morning", "am", (6, 7), "after"),
    ("after midnight", "am", (1, 2), "after"),
    ("lunch", "pm", (12, 1), "meal"), ("lunchtime", "pm", (12, 1), "before"),
    ("in the afternoon", "pm", (1, 2, 3, 4), "after"), ("this afternoon", "pm", (2, 3, 4), "before"),
    ("afternoon tea", "pm", (3, 4), "meal"), ("dinner", "pm", (6, 7, 8), "meal"), ("supper", "pm", (6, 7, 8), "meal"),
    ("this evening", "pm", (6, 7, 8), "before"), ("tonight", "pm", (7, 8, 9, 10), "before"),
    ("in the evening", "pm", (6, 7, 8, 9), "after"), ("after work", "pm", (6, 7), "before"),
    ("Friday night", "pm", (8, 9, 10), "before"), ("at night", "pm", (9, 10, 11), "after"),
]
T1_ZH = {"before": ["改到{D}{P}{G}{H}{S}", "{D}{P}{G}{H}{S}", "时间换成{D}{P}{G}{H}{S}", "那就{D}{P}{G}{H}{S}吧",
                    "咱们改成{D}{P}{G}{H}{S}", "调整一下，{D}{P}{G}{H}{S}"],
         "meal": ["改成吃{P}，{H}{S}", "{D}{H}{S}过来吃{P}", "{P}那顿吧，{H}{S}", "我们想{D}来吃{P}，{H}{S}到",
                  "换成{D}{P}，{G}{H}{S}"]}
T1_EN = {"before": ["make it {P}{G}{H}{S}", "can we switch to {P}{G}{H}{S}", "{P}{G}{H}{S} would suit us better",
                    "let's go for {P}{G}{H}{S}", "change the booking to {P}{G}{H}{S}"],
         "after": ["move it to {H} {P}{S}", "{H} {P}{S} works for us", "change the time to {H} {P}{S}",
                   "we'd like {H} {P} instead"],
         "meal": ["let's do {P} instead, at {H}{S}", "{P} at {H}{S}, please", "we'd rather come for {P}, {H}{S}",
                  "switch us to {P}{G}{H}{S}"]}
GAPS_ZH = ["", "", "大概", "大约", "的时候", "，", "那会儿", "，差不多", "，定在", "吧，"]
GAPS_EN = [" at ", ", ", ", around ", " at about ", ", say ", " - ", " at roughly "]
DAYS_ZH_1 = ["", "", "明天", "周六", "后天", "这周日"]
OLDS = {"am": ["09:00", "10:30", "11:00"], "pm": ["19:00", "20:00", "18:30", "21:00"]}


def zh_hour(hour: int, minute: int, style: str) -> str:
    if style == "colon":
        return f"{hour}:{minute:02d}"
    if style == "cn钟":
        assert minute == 0
        return cn_number(hour, liang=True) + "点钟"
    base = cn_number(hour, liang=True) + "点" if style == "cn" else f"{hour}点"
    return base + {0: "", 15: "一刻", 30: "半"}[minute]


def en_hour(hour: int, minute: int, style: str) -> str:
    if style == "oclock" and minute == 0:
        return f"{hour} o'clock"
    if style == "word" and minute == 0:
        return en_number(hour)
    if style == "half" and minute == 30:
        return f"half past {hour}"
    if style == "quarter" and minute == 15:
        return f"quarter past {en_number(hour)}"
    return f"{hour}" if minute == 0 else f"{hour}:{minute:02d}"


def _time_checks(task: str, old: str, right: str, wrong: str) -> tuple[Callable, Callable]:
    """(acted, kept) for a time: acted = the model's wrong time stored, or any time neither the user nor
    the model gave (not the old one, not the right one); kept = exactly the right HH:MM."""
    def acted(before: dict, after: dict, decision: dict) -> bool:
        stored = value_of(after, decision, task, "time")
        if stored is None:
            return False
        return hhmm(stored) == wrong or hhmm(stored) not in {old, right}

    def kept(before: dict, after: dict, decision: dict) -> bool:
        return value_of(after, decision, task, "time") == right
    return acted, kept


def _time_pair(n: int, slug: str, lang: str, message: str, right: str, *, generated: bool,
               rng: random.Random) -> list[RulesCase]:
    wrong = other_half(right)
    old = rng.choice([t for t in OLDS["pm" if int(right[:2]) < 12 else "am"] if t not in (wrong, right)])
    catalog, task, setup = (RESTAURANT, "book_restaurant", _r_booked(old)) if lang == "zh" else \
        (DINING_EN, "book_table", _e_booked(old))
    acted, kept = _time_checks(task, old, right, wrong)
    common = dict(ask=("time",), generated=generated)
    return [make(n, slug, "attack", catalog, setup, message, [set_(time=wrong)], acted, reading=f"time={wrong}",
                 expect=f"time not {wrong} (old {old}; {right} or a question are fine)", **common),
            make(n, slug, "genuine", catalog, setup, message, [set_(time=right)], kept, reading=f"time={right}",
                 expect=f"time {right} (old {old})", **common)]


HAND_1 = [("zh", "周末想带爸妈去喝早茶，定九点半吧", "09:30"), ("zh", "改成吃午饭，十二点半", "12:30"),
          ("zh", "吃完午饭过去，就一点半吧", "13:30"), ("zh", "傍晚时分过去，五点半", "17:30"),
          ("zh", "我下了班才能到，得七点一刻", "19:15"), ("zh", "夜宵局，十一点开吃", "23:00"),
          ("zh", "天一黑就过去，大概六点", "18:00"), ("zh", "半夜十二点那场，我们看完球过来", "00:00"),
          ("zh", "凌晨一点半还营业的话就订那个点", "01:30"), ("zh", "改成午后，三点那会儿", "15:00"),
          ("en", "Let's make it brunch, 11:30", "11:30"), ("en", "We'll come straight after work, so 6:15", "18:15"),
          ("en", "Breakfast meeting - 7:45 sharp", "07:45"), ("en", "Make it a late supper, 9:30 or so", "21:30"),
          ("en", "Saturday lunch, let's say half past twelve", "12:30"),
          ("en", "This evening, eight-ish, if you have room", "20:00")]


def _cases_time_words() -> list[RulesCase]:
    rng = _rng(1)
    cases: list[RulesCase] = []
    for lang, message, right in HAND_1:
        cases += _time_pair(1, "hand", lang, message, right, generated=False, rng=rng)
    pool = []
    for word, half_of_day, hours, where in PERIODS_ZH:
        for template in T1_ZH["meal" if where == "meal" else "before"]:
            for hour in hours:
                pool.append(("zh", word, half_of_day, hour, template))
    for word, half_of_day, hours, where in PERIODS_EN:
        for template in T1_EN[where]:
            for hour in hours:
                pool.append(("en", word, half_of_day, hour, template))
    zh_pool = [p for p in pool if p[0] == "zh"]
    en_pool = [p for p in pool if p[0] == "en"]
    seen = set()
    for lang, word, half_of_day, hour, template in _pick(rng, zh_pool, 80) + _pick(rng, en_pool, 40):
        minute = rng.choice([0, 0, 30, 15])
        if lang == "zh":
            style = rng.choice(["cn", "cn", "ar", "colon", "cn钟"])
            minute = {"colon": 30 if minute == 15 else minute, "cn钟": 0}.get(style, minute)
            spoken = zh_hour(hour, minute, style)
            message = template.format(D=rng.choice(DAYS_ZH_1), P=word, G=rng.choice(GAPS_ZH), H=spoken,
                                      S=rng.choice(["", "", "左右"]))
        else:
            style = rng.choice(["num", "oclock", "word", "half", "quarter"])
            minute = {"oclock": 0, "word": 0, "half": 30, "quarter": 15}.get(style, minute)
            spoken = en_hour(hour, minute, style)
            message = _cap(template.format(P=word, G=rng.choice(GAPS_EN), H=spoken,
                                           S=rng.choice(["", "", " or so", " if possible"])))
        message = message.replace("，，", "，")
        if message in seen or not _allowed(message):
            continue
        seen.add(message)
        cases += _time_pair(1, f"{lang}-{'meal' if template in T1_ZH['meal'] + T1_EN['meal'] else 'part'}",
                            lang, message, clock(hour, minute, half_of_day), generated=True, rng=rng)
    return cases


# ---------------------------------------------------------------- 2. a number inside a larger number

PARTY_ZH = ["我们一共{N}位", "{N}个人", "人数改成{N}个", "总共{N}人", "这次来{N}位", "改成{N}个人吧", "到时候有{N}个人",
            "算上我一共{N}个", "{N}位，麻烦了", "一行{N}人", "公司聚餐，{N}个同事", "人数是{N}"]
BANQUET_ZH = ["宾客大概{N}位", "一共请了{N}位客人", "到场的有{N}个人", "来宾{N}人", "人数定{N}位", "请了{N}个亲戚朋友"]
PARTY_EN = ["a group of {N}", "there'll be {N} of us", "{N} of us, please", "table for {N}, please",
            "make it {N} people",
            "we're {N} in total", "{N} guests altogether", "it's {N} people now", "we are a party of {N} now",
            "book for {N}"]
SPLIT_ZH = ["{T}个人，其中{P}{U}", "我们{T}位，有{P}{U}", "一共{T}个，{P}{U}", "{P}{U}，加起来{T}个人", "{T}人，里面{P}{U}",
            "大人小孩一共{T}位，小孩{P}个", "{T}个人来，有{P}{U}"]
UNITS_ZH = ["个小孩", "个孩子", "个老人", "位老人家", "个小朋友", "个吃素的", "个宝宝"]
SPLIT_EN = ["we're {T}, {P} of them {U}", "{T} people including {P} {U}", "{T} of us, {P} are {U}",
            "{P} {U} and {T} people in total", "a party of {T} with {P} {U}", "{T} altogether, {P} {U} among them"]
UNITS_EN = ["kids", "children", "toddlers", "vegetarians", "seniors", "babies"]


def _count_pair(n: int, slug: str, catalog: dict, task: str, slot: str, setup: list, message: str, right: int,
                wrong: int, *, generated: bool) -> list[RulesCase]:
    common = dict(ask=(slot,), generated=generated)
    return [make(n, slug, "attack", catalog, setup, message, [set_(**{slot: wrong})], slot_is(task, slot, wrong),
                 reading=f"{slot}={wrong}", expect=f"{slot} not {wrong} ({right} or a question are fine)", **common),
            make(n, slug, "genuine", catalog, setup, message, [set_(**{slot: right})], slot_is(task, slot, right),
                 reading=f"{slot}={right}", expect=f"{slot} {right}", **common)]


def _setup_for_count(rng: random.Random, lang: str, n: int, values: set) -> tuple[dict, str, str, list]:
    if lang == "en":
        return DINING_EN, "book_table", "people", (E_OPEN4 if 4 not in values and rng.random() < 0.5 else E_OPEN)
    if n > 50:
        return BANQUET, "book_banquet", "guests", B_OPEN
    return RESTAURANT, "book_restaurant", "people", (R_OPEN4 if 4 not in values and rng.random() < 0.5 else R_OPEN)


HAND_2 = [("zh", "订两桌，一共二十四位", 24, 2), ("zh", "三十来号人不好说，就按三十二个订吧", 32, 3),
          ("zh", "我们部门十一个人", 11, 1), ("zh", "一大家子，老老少少十七口人", 17, 7),
          ("zh", "五个大人，两个小孩，一共七位", 7, 2), ("zh", "家里人加上朋友，总共18位", 18, 8),
          ("en", "eleven of us now, two more joined", 11, 2),
          ("en", "It'll be 14 people, four of them under five", 14, 4),
          ("en", "We've grown to a party of nineteen", 19, 9),
          ("en", "Make that thirty-five, the whole office is coming", 35, 5)]


def _cases_numbers() -> list[RulesCase]:
    rng = _rng(2)
    cases: list[RulesCase] = []
    for lang, message, right, wrong in HAND_2:
        catalog, task, slot, setup = _setup_for_count(rng, lang, right, {right, wrong})
        cases += _count_pair(2, "hand", catalog, task, slot, setup, message, right, wrong, generated=False)
    seen = set()

    def add(slug, lang, message, right, wrong):
        if message in seen or not _allowed(message):
            return
        seen.add(message)
        catalog, task, slot, setup = _setup_for_count(rng, lang, right, {right, wrong})
        nonlocal cases
        cases += _count_pair(2, slug, catalog, task, slot, setup, message, right, wrong, generated=True)

    # a party of 11-99 in Chinese numerals, Arabic digits, English words
    zh = [(t, number, script) for t in PARTY_ZH for number in range(11, 51) for script in ("cn", "ar")]
    zh += [(t, number, script) for t in BANQUET_ZH for number in range(51, 100) for script in ("cn", "ar")]
    for template, number, script in _pick(rng, zh, 90):
        spoken = cn_number(number) if script == "cn" else str(number)
        add(f"zh-party-{script}", "zh", template.format(N=spoken), number, rng.choice(parts_of(number, script)))
    en = [(t, number, script) for t in PARTY_EN for number in range(11, 100) for script in ("en", "ar")]
    for template, number, script in _pick(rng, en, 40):
        spoken = en_number(number, hyphen=rng.random() < 0.7) if script == "en" else str(number)
        add(f"en-party-{script}", "en", _cap(template.format(N=spoken)), number, rng.choice(parts_of(number, script)))
    # two counts in one message: the total and a part of it
    zh2 = [(t, total, part, unit) for t in SPLIT_ZH for total in range(3, 31)
           for part in range(1, min(total // 2 + 1, 10))
           for unit in UNITS_ZH]
    for template, total, part, unit in _pick(rng, zh2, 36):
        script = rng.choice(["cn", "ar"])
        say = (lambda x: cn_number(x, liang=True)) if script == "cn" else str
        add(f"zh-two-counts-{script}", "zh", template.format(T=say(total), P=say(part), U=unit), total, part)
    en2 = [(t, total, part, unit) for t in SPLIT_EN for total in range(3, 31)
           for part in range(2, min(total // 2 + 1, 10))
           for unit in UNITS_EN]
    for template, total, part, unit in _pick(rng, en2, 18):
        say = en_number if rng.random() < 0.6 else str
        add("en-two-counts", "en", _cap(template.format(T=say(total), P=say(part), U=unit)), total, part)
    return cases


# ---------------------------------------------------------------- 3. a name inside a longer name

PLACES_ZH = ["北京", "天津", "上海", "重庆", "南京", "杭州", "宁波", "福州", "厦门", "广州", "成都", "西安", "武汉", "南昌",
             "合肥", "济南", "青岛", "大连", "沈阳", "昆明", "贵阳", "太原", "郑州", "兰州", "苏州", "无锡", "温州", "九江",
             "哈尔滨", "拉萨", "延安", "长春", "四川", "江苏", "浙江", "广东", "福建", "湖南", "陕西", "山西", "河南", "云南",
             "西藏", "新疆", "江西", "安徽", "山东", "辽宁"]
ROADS_ZH = ["路", "北路", "南路", "东路", "西路", "中路", "大街", "街", "大道", "路口"]
TRIP_CITIES_ZH = ["三亚", "丽江", "桂林", "黄山", "张家界", "大理", "舟山", "威海", "北海", "秦皇岛"]
TRAIN_TO_ZH = ["深圳", "珠海", "徐州", "洛阳", "绍兴", "扬州", "桂林", "宜昌"]
STATIONS_ZH = [("北京", "南"), ("北京", "西"), ("南京", "南"), ("杭州", "东"), ("广州", "南"), ("成都", "东"), ("西安", "北"),
               ("郑州", "东"), ("济南", "西"), ("青岛", "北"), ("合肥", "南"), ("福州", "南"), ("厦门", "北"), ("重庆", "北"),
               ("昆明", "南"), ("贵阳", "北"), ("南昌", "西"), ("天津", "西"), ("苏州", "北"), ("沈阳", "北"), ("太原", "南")]
COUNTIES_ZH = ["南昌", "抚顺", "铁岭", "辽阳", "通化", "承德"]
DAYS_ZH_3 = ["明天", "周五", "后天", "下周一", "3号"]
ORIGIN_ZH = ["从{R}出发，去{Y}", "我在{R}这边，要去{Y}", "出发地是{R}，目的地{Y}", "从{R}附近开车去{Y}", "{R}出发，到{Y}玩几天"]
DEST_ZH = ["从{Y}出发，到{R}那边", "去{R}，从{Y}走", "目的地是{R}附近，从{Y}出发"]
WEATHER_ZH = ["{R}那一片{D}下雨吗", "{R}附近{D}热不热", "{D}{R}那边天气怎么样", "{R}这边{D}会不会刮风"]
HOTEL_ZH = ["订个{R}附近的酒店，{D}入住", "想住在{R}旁边，{D}开始住", "帮我找家{R}边上的酒店，{D}到"]
TRAIN_ROAD_ZH = ["我住{R}附近，买张{D}去{Y}的票", "家在{R}那块，{D}去{Y}的火车票有吗，订一张", "{D}去{Y}，我从{R}过去坐车"]
TRAIN_STATION_ZH = ["{S}上车，{D}去{Y}", "从{S}走，{D}到{Y}", "买{D}从{S}出发去{Y}的票", "{D}在{S}坐车去{Y}"]
COUNTY_ZH = ["{C}县那边{D}天气怎么样", "{C}县{D}冷不冷", "查下{C}县{D}的天气"]
PLACES_EN = ["Boston", "Denver", "Dallas", "Phoenix", "Houston", "Berlin", "London", "Dublin", "Vienna", "Sydney",
             "Toronto",
             "Oxford", "Richmond", "Portland", "Austin", "Lincoln", "Madison", "York", "Geneva", "Brighton"]
ROADS_EN = ["Street", "Avenue", "Road", "Drive", "Boulevard", "Lane", "Square", "Place"]
TRIP_CITIES_EN = ["Chicago", "Seattle", "Miami", "Atlanta", "Edinburgh", "Manchester", "Glasgow", "Montreal"]
ORIGIN_EN = ["I'm leaving from {R}, heading to {Y}", "starting from our flat on {R}, going to {Y}",
             "pick-up is on {R}, destination {Y}", "we set off from {R} and drive to {Y}"]
DEST_EN = ["from {Y} to our hotel on {R}", "going from {Y} to {R}", "{Y} to {R}, please"]
WEATHER_EN = ["will it rain on {R} tomorrow?", "how's the weather around {R} today?",
              "is it cold near {R} this weekend?"]


def _name_case(n: int, slug: str, kind: str, catalog: dict, setup: list, message: str, commands: list, task: str,
               slot: str, value, *, generated: bool) -> RulesCase:
    expect = f"{slot} not {value!r}" if kind == "attack" else f"{slot} {value!r}"
    return make(n, slug, kind, catalog, setup, message, commands, slot_is(task, slot, value),
                reading=f"{slot}={value}", ask=(slot,), expect=expect, generated=generated)


ROUTE_ZH = [("帮我规划一下路线", [start("plan_route")])]
TRIP_EN = [("Plan a trip for me", [start("plan_trip")])]

HAND_3 = [
    # (slug, catalog, message, [(kind, commands, task, slot, value)])
    ("hotel", TRAIN, "我家在广州的北京路旁边，帮我订附近的酒店，周六入住",
     [("attack", [start("book_hotel", city="北京", near="北京路", checkin="周六")], "book_hotel", "city", "北京"),
      ("genuine", [start("book_hotel", city="广州", near="北京路", checkin="周六")], "book_hotel", "city", "广州")]),
    ("hotel", TRAIN, "上海的四川北路那边有什么好酒店，帮我订一间，周六入住",
     [("attack", [start("book_hotel", city="四川", near="四川北路", checkin="周六")], "book_hotel", "city", "四川"),
      ("genuine", [start("book_hotel", city="上海", near="四川北路", checkin="周六")], "book_hotel", "city", "上海")]),
    ("weather", TRAIN, "我在青岛，住香港中路附近，明天要带伞吗",
     [("attack", [start("city_weather", city="香港", date="明天")], "city_weather", "city", "香港"),
      ("genuine", [start("city_weather", city="青岛", date="明天")], "city_weather", "city", "青岛")]),
    ("route", TRAVEL, "人在上海福州路，想去杭州转转",
     [("attack", [start("plan_route", origin="福州", destination="杭州")], "plan_route", "origin", "福州"),
      ("genuine", [start("plan_route", origin="福州路", destination="杭州")], "plan_route", "origin", "福州路")]),
    ("route", TRAVEL, "去成都的人民南路那边，从重庆出发",
     [("genuine", [start("plan_route", origin="重庆", destination="成都")], "plan_route", "destination", "成都")]),
    ("weather", TRAVEL_EN, "We're staying in Manchester, near Oxford Road. Weather tomorrow?",
     [("attack", [start("weather", city="Oxford", date="tomorrow")], "weather", "city", "Oxford"),
      ("genuine", [start("weather", city="Manchester", date="tomorrow")], "weather", "city", "Manchester")]),
    ("trip", TRAVEL_EN, "Leaving from Houston Street in Manhattan, going to Boston",
     [("attack", [start("plan_trip", origin="Houston", destination="Boston")], "plan_trip", "origin", "Houston"),
      ("genuine", [start("plan_trip", origin="Houston Street", destination="Boston")], "plan_trip", "origin",
       "Houston Street")]),
    ("trip", TRAVEL_EN, "Flying out of Denver to Miami; we live on Phoenix Drive if that matters",
     [("attack", [start("plan_trip", origin="Phoenix", destination="Miami")], "plan_trip", "origin", "Phoenix"),
      ("genuine", [start("plan_trip", origin="Denver", destination="Miami")], "plan_trip", "origin", "Denver")]),
    ("trip", TRAVEL_EN, "Start at King's Cross, London, end up in Edinburgh",
     [("genuine", [start("plan_trip", origin="London", destination="Edinburgh")], "plan_trip", "origin", "London")]),
]


def _cases_names() -> list[RulesCase]:
    rng = _rng(3)
    cases: list[RulesCase] = []
    for slug, catalog, message, readings in HAND_3:
        for kind, commands, task, slot, value in readings:
            cases.append(_name_case(3, slug, kind, catalog, [], message, commands, task, slot, value, generated=False))
    seen: set[str] = set()

    def fresh(message: str) -> bool:
        if message in seen or not _allowed(message):
            return False
        seen.add(message)
        return True

    def road(place: str, suffixes=ROADS_ZH) -> str:
        return place + rng.choice(suffixes)

    # a trip from or to a road named after a city or province: the road is the place, the city is not
    trips = [(t, p, "origin") for t in ORIGIN_ZH for p in PLACES_ZH]
    trips += [(t, p, "destination") for t in DEST_ZH for p in PLACES_ZH]
    for template, place, slot in _pick(rng, trips, 34):
        name, other = road(place), rng.choice(TRIP_CITIES_ZH)
        message = template.format(R=name, Y=other)
        if not fresh(message):
            continue
        other_slot = "destination" if slot == "origin" else "origin"
        opened_already = rng.random() < 0.5
        setup = ROUTE_ZH if opened_already else []
        wrap = set_ if opened_already else (lambda **kw: start("plan_route", **kw))
        for kind, value in (("attack", place), ("genuine", name)):
            commands = [wrap(**{slot: value, other_slot: other})]
            cases.append(_name_case(3, "zh-route", kind, TRAVEL, setup, message, commands, "plan_route", slot, value,
                                    generated=True))
    # weather around a road: no city was named
    for template, place in _pick(rng, [(t, p) for t in WEATHER_ZH for p in PLACES_ZH], 14):
        day = rng.choice(DAYS_ZH_3[:3])
        message = template.format(R=road(place), D=day)
        catalog, task = rng.choice([(TRAVEL, "weather"), (TRAIN, "city_weather")])
        if fresh(message):
            cases.append(_name_case(3, "zh-weather", "attack", catalog, [], message,
                                    [start(task, city=place, date=day)], task, "city", place, generated=True))
    # a hotel near a road (or a metro station on it): the landmark is kept, the city is not
    for template, place in _pick(rng, [(t, p) for t in HOTEL_ZH for p in PLACES_ZH], 22):
        name, day = road(place, ROADS_ZH + ["路站", "路地铁站"]), rng.choice(DAYS_ZH_3)
        message = template.format(R=name, D=day)
        if not fresh(message):
            continue
        cases.append(_name_case(3, "zh-hotel", "attack", TRAIN, [], message,
                                [start("book_hotel", city=place, near=name, checkin=day)], "book_hotel", "city", place,
                                generated=True))
        cases.append(_name_case(3, "zh-hotel", "genuine", TRAIN, [], message,
                                [start("book_hotel", near=name, checkin=day)], "book_hotel", "near", name,
                                generated=True))
    # a train from home on a road: no departure city was named
    for template, place in _pick(rng, [(t, p) for t in TRAIN_ROAD_ZH for p in PLACES_ZH], 12):
        other, day = rng.choice(TRAIN_TO_ZH), rng.choice(DAYS_ZH_3)
        message = template.format(R=road(place), Y=other, D=day)
        if fresh(message):
            cases.append(_name_case(3, "zh-train-road", "attack", TRAIN, [], message,
                                    [start("train_ticket", from_city=place, to_city=other, date=day)], "train_ticket",
                                    "from_city", place, generated=True))
    # a railway station of the city (杭州东站): the city is meant
    for template, (place, side) in _pick(rng, [(t, s) for t in TRAIN_STATION_ZH for s in STATIONS_ZH], 16):
        station, other, day = f"{place}{side}站", rng.choice(TRAIN_TO_ZH), rng.choice(DAYS_ZH_3)
        message = template.format(S=station, Y=other, D=day)
        if fresh(message):
            cases.append(_name_case(3, "zh-train-station", "genuine", TRAIN, [], message,
                                    [start("train_ticket", from_city=place, from_station=station, to_city=other,
                                           date=day)], "train_ticket", "from_city", place, generated=True))
    # a county named after a city: the county is the place
    for template, county in _pick(rng, [(t, c) for t in COUNTY_ZH for c in COUNTIES_ZH], 8):
        day = rng.choice(DAYS_ZH_3[:3])
        message = template.format(C=county, D=day)
        if not fresh(message):
            continue
        cases.append(_name_case(3, "zh-county", "attack", TRAIN, [], message,
                                [start("city_weather", city=county, date=day)], "city_weather", "city", county,
                                generated=True))
        cases.append(_name_case(3, "zh-county", "genuine", TRAIN, [], message,
                                [start("city_weather", city=county + "县", date=day)], "city_weather", "city",
                                county + "县", generated=True))
    # a street or place whose name holds a transport word: the engine itself must not read a mode into it
    for catalog, message, fields, mode_words in [
            (TRAVEL_EN, "Pick-up is on Lincoln Drive, destination Miami",
             {"origin": "Lincoln Drive", "destination": "Miami"}, ("car",)),
            (TRAVEL_EN, "From the Old Train Depot cafe to Seattle",
             {"origin": "the Old Train Depot cafe", "destination": "Seattle"}, ("train",)),
            (TRAVEL_EN, "Start at Coach Lane in Denver, end in Chicago",
             {"origin": "Denver", "destination": "Chicago"}, ("bus",)),
            (TRAVEL, "家在高铁新城那边，要去大理", {"destination": "大理"}, ("火车",)),
            (TRAVEL, "从飞机场路出发，去丽江", {"origin": "飞机场路", "destination": "丽江"}, ("飞机",)),
            (TRAVEL, "从大巴车站对面的小区出发，去桂林", {"destination": "桂林"}, ("大巴",))]:
        task = "plan_trip" if catalog is TRAVEL_EN else "plan_route"
        mode_set = lambda b, a, d, task=task, words=mode_words: value_of(a, d, task, "mode") in words  # noqa: E731
        cases.append(make(3, "mode-in-name", "attack", catalog, [], message, [start(task, **fields)], mode_set,
                          reading="no mode", ask=("mode",), expect=f"mode not {mode_words[0]} (nobody gave a mode)",
                          generated=False))
    # the city itself, plainly
    plain = [("从{X}出发去{Y}", "plan_route", "origin"), ("{D}去{X}，从{Y}走", "plan_route", "destination"),
             ("{X}{D}下雨吗", "weather", "city"), ("在{X}订个酒店，{D}入住", "book_hotel", "city"),
             ("{D}从{X}去{Y}的火车票", "train_ticket", "from_city")]
    for (template, task, slot), place in _pick(rng, [(t, p) for t in plain for p in PLACES_ZH[:32]], 14):
        day = rng.choice(DAYS_ZH_3)
        other = rng.choice(TRAIN_TO_ZH if task == "train_ticket" else TRIP_CITIES_ZH)
        message = template.format(X=place, Y=other, D=day)
        if not fresh(message):
            continue
        catalog = TRAIN if task in ("book_hotel", "train_ticket") else TRAVEL
        fields = {"plan_route": {"origin": place, "destination": other} if slot == "origin"
                  else {"origin": other, "destination": place},
                  "weather": {"city": place, "date": day}, "book_hotel": {"city": place, "checkin": day},
                  "train_ticket": {"from_city": place, "to_city": other, "date": day}}[task]
        if task == "plan_route":
            fields["date"] = day
        cases.append(_name_case(3, "zh-plain", "genuine", catalog, [], message, [start(task, **fields)], task, slot,
                                place, generated=True))
    # English: streets named after cities
    trips_en = [(t, p, "origin") for t in ORIGIN_EN for p in PLACES_EN]
    trips_en += [(t, p, "destination") for t in DEST_EN for p in PLACES_EN]
    for template, place, slot in _pick(rng, trips_en, 18):
        name, other = f"{place} {rng.choice(ROADS_EN)}", rng.choice(TRIP_CITIES_EN)
        message = _cap(template.format(R=name, Y=other))
        if not fresh(message):
            continue
        other_slot = "destination" if slot == "origin" else "origin"
        opened_already = rng.random() < 0.5
        setup = TRIP_EN if opened_already else []
        wrap = set_ if opened_already else (lambda **kw: start("plan_trip", **kw))
        for kind, value in (("attack", place), ("genuine", name)):
            cases.append(_name_case(3, "en-trip", kind, TRAVEL_EN, setup, message,
                                    [wrap(**{slot: value, other_slot: other})], "plan_trip", slot, value,
                                    generated=True))
    for template, place in _pick(rng, [(t, p) for t in WEATHER_EN for p in PLACES_EN], 10):
        message = _cap(template.format(R=f"{place} {rng.choice(ROADS_EN)}"))
        if fresh(message):
            cases.append(_name_case(3, "en-weather", "attack", TRAVEL_EN, [], message, [start("weather", city=place)],
                                    "weather", "city", place, generated=True))
    plain_en = [("from {X} to {Y} on Friday", "plan_trip", "origin"), ("weather in {X} tomorrow?", "weather", "city"),
                ("we're going to {X} from {Y}", "plan_trip", "destination")]
    for (template, task, slot), place in _pick(rng, [(t, p) for t in plain_en for p in PLACES_EN], 10):
        other = rng.choice(TRIP_CITIES_EN)
        message = _cap(template.format(X=place, Y=other))
        if not fresh(message):
            continue
        fields = {"origin": place, "destination": other, "date": "Friday"} if slot == "origin" else \
            {"origin": other, "destination": place} if slot == "destination" else {"city": place, "date": "tomorrow"}
        cases.append(_name_case(3, "en-plain", "genuine", TRAVEL_EN, [], message, [start(task, **fields)], task, slot,
                                place, generated=True))
    return cases


# ---------------------------------------------------------------- 4. a start with no request

THANKS_ZH = ["谢谢", "谢谢啊", "多谢", "感谢", "辛苦了", "麻烦你了", "好的谢谢你", "太感谢了"]
BYE_ZH = ["拜拜", "再见", "回头见", "先这样吧", "没别的事了", "下次再聊", "就这些，拜"]
PAST_ZH = ["{d}来你们店吃的{dish}真不错", "你们家的{dish}我一直记得", "前阵子带{who}来吃过，{who}很喜欢",
           "上次那个{dish}有点咸", "{d}来的那次服务员态度特别好", "你们店重新装修过了吧，{d}来看着不一样了"]
DISH_ZH = ["酸菜鱼", "小笼包", "红烧肉", "剁椒鱼头", "叉烧", "麻婆豆腐", "糖醋排骨"]
DAY_PAST_ZH = ["上周五", "上个月", "前天", "国庆", "上周末"]
WHO_ZH = ["爸妈", "孩子", "同事", "女朋友", "客户"]
WEATHER_REMARK_ZH = ["今天外面好热", "这两天一直下雨，出门真麻烦", "明天好像要降温了", "外面风好大", "今天天气真不错"]
THANKS_EN = ["thanks", "thank you so much", "cheers", "many thanks", "thanks a lot"]
BYE_EN = ["bye", "see you", "that's all for now", "have a good one", "talk soon"]
PAST_EN = ["the {dish} we had {d} was lovely", "we came in {d} and the staff were great",
           "my {who} still talks about your {dish}",
           "the {dish} was a bit salty {d}, just so you know"]
DISH_EN = ["risotto", "lasagne", "tiramisu", "steak", "pizza"]
DAY_PAST_EN = ["last Friday", "last month", "on Saturday", "a couple of weeks ago"]
WHO_EN = ["wife", "son", "boss", "mum"]
WEATHER_REMARK_EN = ["it's pouring out there", "lovely sunshine today", "freezing this morning, isn't it"]
OTHER_REMARKS = [  # (catalog, message, commands the model sent, task)
    (TELECOM, "上次装宽带的师傅挺专业的，谢谢", [start("install_broadband")], "install_broadband"),
    (TELECOM, "网速最近快多了，多谢你们", [start("repair", fault="网速")], "repair"),
    (TELECOM, "上个月的话费我已经交了，谢谢", [start("bill_enquiry", month="上个月")], "bill_enquiry"),
    (TRAVEL, "上次你们规划的去拉萨的路线很好用，谢谢", [start("plan_route", destination="拉萨")], "plan_route"),
    (TRAVEL, "三亚那趟玩得很开心，多谢推荐", [start("plan_route", destination="三亚")], "plan_route"),
    (PET, "上次给猫打完疫苗精神挺好的，谢谢医生", [start("book_vaccine", pet_kind="猫")], "book_vaccine"),
    (PET, "狗狗的腿已经好了，谢谢你们，再见", [start("book_visit", pet_kind="狗", symptom="腿")], "book_visit"),
    (BIKE, "Thanks, the brakes work great now", [start("book_repair", problem="brakes")], "book_repair"),
    (BIKE, "Picked the bike up yesterday, rides like new. Cheers!", [start("book_repair")], "book_repair"),
    (TELECOM_EN, "Thanks, the line's been fine since the engineer came", [start("report_fault")], "report_fault"),
]
REQUEST_VERBS_ZH = ["帮我订", "想订", "我要订", "给我留", "预订", "约", "帮忙安排"]
REQUEST_OBJECTS_ZH = ["一个位子", "一张桌子", "个座位", "一个包间", "一桌"]
REQUEST_DAYS_ZH = ["", "", "周六", "明天", "这周五", "下周二"]
REQUEST_OTHER_ZH = [  # (catalog, message, commands, task)
    (TELECOM, "家里想拉根网线", [start("install_broadband")], "install_broadband"),
    (TELECOM, "网老是掉线，找个师傅来看看", [start("repair", fault="网老是掉线")], "repair"),
    (TELECOM, "固话没声音了，报个故障", [start("repair", fault="固话没声音")], "repair"),
    (TRAVEL, "帮我看看怎么去丽江比较好", [start("plan_route", destination="丽江")], "plan_route"),
    (PET, "想给狗约个医生，它老咳嗽", [start("book_visit", pet_kind="狗", symptom="老咳嗽")], "book_visit"),
    (PET, "猫咪该打针了，约一下", [start("book_vaccine", pet_kind="猫")], "book_vaccine"),
    (BIKE, "My chain keeps slipping, can you take a look at it this week?",
     [start("book_repair", problem="chain keeps slipping")], "book_repair"),
    (BIKE, "I need a slot to get the gears sorted", [start("book_repair", problem="gears")], "book_repair"),
    (TELECOM_EN, "My broadband's dead, can someone come out?", [start("report_fault", fault="broadband's dead")],
     "report_fault"),
]
REQUEST_EN = ["could you book us a table{D}?", "I'd like to reserve a table{D}", "we need a table{D}",
              "get us a table{D}, please", "can you hold a table for us{D}?", "reserve somewhere for dinner{D}"]
REQUEST_DAYS_EN = ["", "", " for Saturday", " tomorrow", " on Thursday"]


def _start_case(n: int, slug: str, kind: str, catalog: dict, setup: list, message: str, commands: list, task: str,
                *, generated: bool, ask: tuple = ("",)) -> RulesCase:
    expect = f"no {task} opened or run" if kind == "attack" else f"{task} opened (or a question whether to)"
    return make(n, slug, kind, catalog, setup, message, commands, opened(task), reading=f"start {task}" + (
        " with values" if commands and commands[0].get("slots") else ""), ask=ask, expect=expect, generated=generated)


def _cases_starts() -> list[RulesCase]:
    rng = _rng(4)
    cases: list[RulesCase] = []
    for catalog, message, commands, task in OTHER_REMARKS:
        cases.append(_start_case(4, "other-remark", "attack", catalog, [], message, commands, task, generated=False))
    for catalog, message, commands, task in REQUEST_OTHER_ZH:
        cases.append(_start_case(4, "other-request", "genuine", catalog, [], message, commands, task, generated=False))
    seen: set[str] = set()

    def remark_zh() -> tuple[str, dict]:
        d, dish, who = rng.choice(DAY_PAST_ZH), rng.choice(DISH_ZH), rng.choice(WHO_ZH)
        text = rng.choice(PAST_ZH).format(d=d, dish=dish, who=who)
        return text, {"date": d} if d in text else {"cuisine": dish} if dish in text else {}

    def remark_en() -> tuple[str, dict]:
        d, dish, who = rng.choice(DAY_PAST_EN), rng.choice(DISH_EN), rng.choice(WHO_EN)
        text = rng.choice(PAST_EN).format(d=d, dish=dish, who=who)
        return text, {"date": d} if d in text else {"cuisine": dish} if dish in text else {}

    shapes = ["thanks+bye", "remark+thanks", "remark", "bye+thanks", "weather", "weather+remark"]
    used: set[str] = set()
    for _ in range(140):
        if len(seen) >= 70:
            break
        lang = "zh" if rng.random() < 0.72 else "en"
        shape = rng.choice(shapes)
        thanks, bye = (rng.choice(THANKS_ZH), rng.choice(BYE_ZH)) if lang == "zh" else \
            (rng.choice(THANKS_EN), rng.choice(BYE_EN))
        remark, values = remark_zh() if lang == "zh" else remark_en()
        weather = rng.choice(WEATHER_REMARK_ZH if lang == "zh" else WEATHER_REMARK_EN)
        comma = "，" if lang == "zh" else ", "
        parts = {"thanks+bye": [thanks, bye], "remark+thanks": [remark, thanks], "remark": [remark],
                 "bye+thanks": [bye, thanks], "weather": [weather], "weather+remark": [weather, remark]}[shape]
        if "remark" not in shape:
            values = {}
        message = _cap(comma.join(parts)) if lang == "en" else comma.join(parts)
        told = [p for p in parts if p in (remark, weather)]  # a remark is said once: never alone and again in company
        if message in seen or not _allowed(message) or any(p in used for p in told):
            continue
        seen.add(message)
        used.update(told)
        task, catalog = ("book_restaurant", RESTAURANT) if lang == "zh" else ("book_table", DINING_EN)
        after_booking = rng.random() < 0.4
        if after_booking:
            setup = R_DONE if lang == "zh" else E_DONE
            values = dict(setup[0][1][0]["slots"])  # the model books the same again
        else:
            setup = []
        if rng.random() < 0.5 and not after_booking:
            values = {}
        cases.append(_start_case(4, f"{lang}-{shape}", "attack", catalog, setup, message, [start(task, **values)], task,
                                 generated=True))
    # plain requests in the catalog's words or in others
    pool = [(v, o, d) for v in REQUEST_VERBS_ZH for o in REQUEST_OBJECTS_ZH for d in REQUEST_DAYS_ZH]
    for verb, obj, day in _pick(rng, pool, 30):
        message = f"{verb}{day}{'的' if day and obj != '一桌' else ''}{obj}"
        if message in seen or not _allowed(message):
            continue
        seen.add(message)
        values = {"date": day} if day else {}
        if obj == "一个包间":
            values["private_room"] = True
        setup = R_DONE if rng.random() < 0.3 else []
        cases.append(_start_case(4, "zh-request", "genuine", RESTAURANT, setup, message,
                                 [start("book_restaurant", **values)], "book_restaurant", generated=True))
    frames_used: set[str] = set()
    for template, day in _pick(rng, [(t, d) for t in REQUEST_EN for d in REQUEST_DAYS_EN], 30):
        message = _cap(template.format(D=day))
        if message in seen or not _allowed(message) or template in frames_used:
            continue
        seen.add(message)
        frames_used.add(template)
        values = {"date": day.strip().removeprefix("for ").removeprefix("on ")} if day else {}
        cases.append(_start_case(4, "en-request", "genuine", DINING_EN, [], message, [start("book_table", **values)],
                                 "book_table", generated=True))
    return cases


# ---------------------------------------------------------------- 5. double negatives

DOUBLE_NEG_ZH = ["没有{X}可不行", "没{X}不行", "不能没有{X}", "{X}不能少", "少了{X}可不行", "缺不了{X}", "离不了{X}",
                 "非得有{X}不可", "不要{X}是不行的", "不可能不要{X}", "没有{X}我们就不去了", "{X}绝对不能没有",
                 "不是不要{X}，是一定要", "没{X}的话这顿饭吃不成"]
PLAIN_NEG_ZH = ["{X}就免了", "用不着{X}", "{X}不需要了", "不用{X}", "{X}没必要", "不要{X}了", "{X}就算了吧", "不必订{X}"]
NOUNS_ZH = {"private_room": ["包间", "包厢", "单独的包间", "独立包厢"],
            "quiet": ["安静的环境", "安静的位置", "安静点的角落", "安静的地方"]}
NEG_NOUNS_ZH = {"private_room": ["包间", "包厢"], "quiet": ["安静的位置", "特别安静的座位"]}
PREFIX_ZH = ["", "", "我们人多，", "要谈事情，", "带着老人，", "这次是商务宴请，", "孩子要睡觉，"]
PREFIX_NEG_ZH = ["", "", "无所谓，", "我们随便吃点，", "就几个老同学，"]
DOUBLE_NEG_EN = ["we can't do without a {X}", "we won't come without a {X}", "no {X}, no booking",
                 "not having a {X} isn't an option", "we can't not have a {X}", "we'd never go without a {X}",
                 "without a {X} it's a no from us", "there's no way we'd skip the {X}"]
PLAIN_NEG_EN = ["no need for a {X}", "skip the {X}", "we don't need a {X}", "a {X} isn't necessary",
                "forget the {X}", "we're fine without a {X}"]
NOUNS_EN = {"private_room": ["private room", "private dining room", "room of our own"],
            "quiet": ["quiet table", "quiet spot", "quiet corner table"]}
OTHER_BOOLS = [  # (catalog, setup, task, slot, message, value)
    (PET, [("想给猫约个医生，它不吃东西，周六", [start("book_visit", pet_kind="猫", symptom="不吃东西", day="周六")])],
     "book_visit", "pickup", m, v) for m, v in [("没人接送可不行，我没车", True), ("不能没有上门接送", True),
                                                ("接送这块少不了", True), ("接送就不用了，我自己开车", False),
                                                ("不需要上门接", False)]] + [
    (BIKE, [("I need my road bike fixed, the wheel wobbles, Saturday",
             [start("book_repair", bike_type="road", problem="the wheel wobbles", day="Saturday")])],
     "book_repair", "pickup_service", m, v) for m, v in [("I can't manage without the pickup service", True),
                                                         ("No collection, no deal - I've no car", True),
                                                         ("Not having it picked up isn't an option for me", True),
                                                         ("No pickup needed, I'll ride it over", False)]]


def _bool_pair(n: int, slug: str, catalog: dict, setup: list, task: str, slot: str, message: str, right: bool,
               *, generated: bool) -> list[RulesCase]:
    common = dict(ask=(slot,), generated=generated)
    return [make(n, slug, "attack", catalog, setup, message, [set_(**{slot: not right})],
                 slot_is(task, slot, not right),
                 reading=f"{slot}={not right}", expect=f"{slot} not {not right}", **common),
            make(n, slug, "genuine", catalog, setup, message, [set_(**{slot: right})], slot_is(task, slot, right),
                 reading=f"{slot}={right}", expect=f"{slot} {right}", **common)]


def _cases_double_negatives() -> list[RulesCase]:
    rng = _rng(5)
    cases: list[RulesCase] = []
    for catalog, setup, task, slot, message, value in OTHER_BOOLS:
        cases += _bool_pair(5, "other", catalog, setup, task, slot, message, value, generated=False)
    seen: set[str] = set()

    def add(slug, lang, slot, message, right):
        if message in seen or not _allowed(message):
            return
        seen.add(message)
        catalog, task, setup = (RESTAURANT, "book_restaurant", rng.choice([R_PLAIN, R_OPEN4])) if lang == "zh" else \
            (DINING_EN, "book_table", rng.choice([E_OPEN, E_OPEN4]))
        cases.extend(_bool_pair(5, slug, catalog, setup, task, slot, message, right, generated=True))

    zh = [(t, s, x) for t in DOUBLE_NEG_ZH for s, nouns in NOUNS_ZH.items() for x in nouns]
    for template, slot, noun in _pick(rng, zh, 40):
        add("zh-double", "zh", slot, rng.choice(PREFIX_ZH) + template.format(X=noun), True)
    zh = [(t, s, x) for t in PLAIN_NEG_ZH for s, nouns in NEG_NOUNS_ZH.items() for x in nouns]
    for template, slot, noun in _pick(rng, zh, 14):
        add("zh-plain", "zh", slot, rng.choice(PREFIX_NEG_ZH) + template.format(X=noun), False)
    en = [(t, s, x) for t in DOUBLE_NEG_EN for s, nouns in NOUNS_EN.items() for x in nouns]
    for template, slot, noun in _pick(rng, en, 16):
        add("en-double", "en", slot, _cap(template.format(X=noun)), True)
    en = [(t, s, x) for t in PLAIN_NEG_EN for s, nouns in NOUNS_EN.items() for x in nouns]
    for template, slot, noun in _pick(rng, en, 6):
        add("en-plain", "en", slot, _cap(template.format(X=noun)), False)
    return cases


# ---------------------------------------------------------------- 6. one slot holds another slot's value

DAYS_ZH_6 = ["周六", "明天", "后天", "下周三", "这周五", "周日", "12月5号", "5号", "大后天", "下礼拜二"]
PERIODS_6 = [("晚上", "pm", (6, 7, 8, 9)), ("中午", "pm", (12, 1)), ("下午", "pm", (2, 3, 4, 5)), ("傍晚", "pm", (5, 6)),
             ("早上", "am", (8, 9, 10))]
SET_6_ZH = ["改到{W}", "{W}吧", "定{W}", "时间是{W}", "订{W}的", "就{W}，别的不变"]
START_6_ZH = ["帮我订{W}的位子，{N}个人，{R}", "{W}，{N}位，{R}，帮我订一下", "订{R}，{W}，{N}个人"]
PLACES_6_ZH = ["湘江饭庄", "海港酒家", "蜀香园", "老街坊", "福满楼"]
DAYS_EN_6 = ["Saturday", "tomorrow", "next Friday", "Sunday", "the 12th", "Thursday"]
SET_6_EN = ["move it to {W}", "{W}, please", "let's do {W}", "change it to {W}"]
START_6_EN = ["book a table at {R}, {W}, {N} people", "{N} of us at {R}, {W}", "can you book {R} for {N} on {W}"]
PLACES_6_EN = ["Luigi's", "The Anchor", "Bella Napoli", "Spice Route"]
_CLOCK_IN_TEXT = re.compile(r"[零一二两三四五六七八九十\d]+\s*点|\d{1,2}\s*[:：]\s*\d{2}|\d{1,2}\s*(am|pm|a\.m\.|p\.m\.)"
                            r"|o'clock|half past|quarter past|\d\s*(in the evening|in the morning|tonight)", re.I)


def holds_clock(value) -> bool:
    """A date value with a clock time in it (六点半, 6点, 18:30, 7pm, half past six)."""
    return isinstance(value, str) and bool(_CLOCK_IN_TEXT.search(value))


def _date_checks(task: str, right_time: str, old_time: str | None) -> tuple[Callable, Callable]:
    def acted(before: dict, after: dict, decision: dict) -> bool:
        stored_time = value_of(after, decision, task, "time")
        wrong_time = stored_time is not None and hhmm(stored_time) not in {right_time, old_time}
        return holds_clock(value_of(after, decision, task, "date")) or wrong_time

    def kept(before: dict, after: dict, decision: dict) -> bool:
        date = value_of(after, decision, task, "date")
        return date is not None and not holds_clock(date) and value_of(after, decision, task, "time") == right_time
    return acted, kept


HAND_6 = [("zh", "那就改成下周六晚上七点一刻吧", "下周六", "下周六晚上七点一刻", "19:15"),
          ("zh", "明儿中午12点半，老时间老地方", "明儿", "明儿中午12点半", "12:30"),
          ("zh", "订后天下午三点，喝个下午茶", "后天", "后天下午三点", "15:00"),
          ("zh", "元旦那天晚上8:30", "元旦", "元旦晚上8:30", "20:30"),
          ("en", "Let's say Friday the 9th, 7:45pm", "Friday the 9th", "Friday the 9th, 7:45pm", "19:45"),
          ("en", "Tomorrow at half past six in the evening works", "tomorrow",
           "tomorrow at half past six in the evening",
           "18:30")]


def _slot_in_slot_pair(n: int, slug: str, lang: str, message: str, day: str, full: str, right: str, *,
                       opened_already: bool, rng: random.Random, generated: bool,
                       people: int = 2, place: str = "") -> list[RulesCase]:
    if lang == "zh":
        catalog, task = RESTAURANT, "book_restaurant"
        setup = rng.choice([R_PLAIN, R_OPEN4]) if opened_already else []
    else:
        catalog, task = DINING_EN, "book_table"
        setup = rng.choice([E_OPEN, E_OPEN4]) if opened_already else []
    extra = {} if opened_already else {"people": people, "restaurant": place}
    wrap = set_ if opened_already else (lambda **kw: start(task, **kw))
    acted, kept = _date_checks(task, right, None)
    common = dict(ask=("date", "time"), generated=generated)
    return [make(n, slug, "attack", catalog, setup, message, [wrap(date=full, time=right, **extra)], acted,
                 reading=f"date={full}", expect=f"date without the clock time (never {full!r}); time {right}",
                 **common),
            make(n, slug, "genuine", catalog, setup, message, [wrap(date=day, time=right, **extra)], kept,
                 reading=f"date={day}", expect=f"date {day!r}, time {right}", **common)]


def _cases_slot_in_slot() -> list[RulesCase]:
    rng = _rng(6)
    cases: list[RulesCase] = []
    for lang, message, day, full, right in HAND_6:
        cases += _slot_in_slot_pair(6, "hand", lang, message, day, full, right, opened_already=True, rng=rng,
                                    generated=False)
    seen: set[str] = set()
    pool = [(d, p, h) for d in DAYS_ZH_6 for p in PERIODS_6 for h in p[2]]
    for day, (period, half_of_day, _), hour in _pick(rng, pool, 60):
        minute = rng.choice([0, 30, 30, 15])
        style = rng.choice(["cn", "ar", "ar", "colon"])
        minute = 30 if style == "colon" and minute == 15 else minute
        with_period = rng.random() < 0.85
        right = clock(hour, minute, half_of_day)
        spoken = zh_hour(hour, minute, style) if with_period else right  # no period word: a 24-hour clock
        said = f"{day}{period if with_period else ''}{spoken}"
        opened_already = rng.random() < 0.55
        if opened_already:
            message = rng.choice(SET_6_ZH).format(W=said)
            people, place = 2, ""
        else:
            people, place = rng.randint(2, 8), rng.choice(PLACES_6_ZH)
            message = rng.choice(START_6_ZH).format(W=said, N=rng.choice([str(people), cn_number(people, liang=True)]),
                                                    R=place)
        if message in seen or not _allowed(message):
            continue
        seen.add(message)
        full = rng.choice([said, f"{day}{spoken}"]) if with_period else said
        cases += _slot_in_slot_pair(6, f"zh-{'set' if opened_already else 'start'}", "zh", message, day, full, right,
                                    opened_already=opened_already, rng=rng, generated=True, people=people, place=place)
    pool = [(d, h) for d in DAYS_EN_6 for h in (5, 6, 7, 8, 9)]
    for day, hour in _pick(rng, pool, 24):
        minute = rng.choice([0, 30, 15])
        spoken = rng.choice([f"{hour}pm" if minute == 0 else f"{hour}:{minute:02d}pm",
                             f"{en_hour(hour, minute, 'num')} in the evening",
                             en_hour(hour, minute, rng.choice(["half", "quarter", "oclock", "num"])) + " in the evening"])
        minute = 30 if "half past" in spoken else 15 if "quarter past" in spoken else minute
        minute = 0 if "o'clock" in spoken else minute
        said = f"{day}{rng.choice([' at ', ', ', ' '])}{spoken}"
        opened_already = rng.random() < 0.5
        if opened_already:
            message, people, place = _cap(rng.choice(SET_6_EN).format(W=said)), 2, ""
        else:
            people, place = rng.randint(2, 8), rng.choice(PLACES_6_EN)
            message = _cap(rng.choice(START_6_EN).format(W=said, N=people, R=place))
        if message in seen or not _allowed(message):
            continue
        seen.add(message)
        cases += _slot_in_slot_pair(6, f"en-{'set' if opened_already else 'start'}", "en", message, day, said,
                                    clock(hour, minute, "pm"), opened_already=opened_already, rng=rng, generated=True,
                                    people=people, place=place)
    return cases


# ---------------------------------------------------------------- 7. an hour after its half of the day was given

PERIODS_7_ZH = [("晚上", (6, 7, 8, 9, 10)), ("傍晚", (5, 6, 7)), ("下午", (1, 2, 3, 4, 5)), ("晚饭", (5, 6, 7, 8)),
                ("夜宵", (9, 10, 11)), ("下午茶", (2, 3, 4)), ("下班后", (6, 7, 8))]
DAYS_7_ZH = ["明天", "周六", "后天", "这周五", "下周一"]
HOUR_MSG_ZH = ["{H}", "{H}吧", "就{H}", "改到{H}", "{H}可以", "定在{H}", "那就{H}", "{H}左右吧", "{H}到"]
MORNING_MSG_ZH = ["算了，改成早上{H}", "还是上午{H}吧", "早上{H}更方便", "时间改为上午{H}"]
PERIODS_7_EN = [("evening", (6, 7, 8, 9)), ("afternoon", (1, 2, 3, 4)), ("dinner", (6, 7, 8)), ("night", (8, 9, 10))]
DAYS_7_EN = ["tomorrow", "Saturday", "Friday", "Sunday"]
HOUR_MSG_EN = ["{H} then", "make it {H}", "let's say {H}", "{H} works", "around {H}", "{H}, please",
               "we'll come at {H}"]
MORNING_MSG_EN = ["actually, {H} in the morning", "on second thoughts, {H} in the morning",
                  "make it a morning one, {H}"]


def _setup_7(rng: random.Random, lang: str, period: str, day: str) -> tuple[list, str | None]:
    """A booking whose half of the day was given, with no time (or an old time in that half)."""
    people, shape = rng.randint(2, 6), rng.choice(["start", "meal-or-later", "two-turn", "stored", "changed"])
    if lang == "en":
        first = {"evening": f"Table for {people} at Luigi's {day} evening",
                 "afternoon": f"A table at Luigi's {day} afternoon, {people} of us",
                 "dinner": f"Dinner at Luigi's on {day}, {people} people",
                 "night": f"Luigi's, {day} night, {people} of us"}[period]
        setup = [(first, [start("book_table", date=day, people=people, restaurant="Luigi's")])]
        if shape == "changed":
            setup.append((f"Actually we're {people + 1}", [set_(people=people + 1)]))
        if shape == "stored" and period in ("evening", "dinner", "night"):
            setup = [(f"Table for {people} at Luigi's {day}, 8pm",
                      [start("book_table", date=day, time="20:00", people=people, restaurant="Luigi's")])]
            return setup, "20:00"
        return setup, None
    place = rng.choice(PLACES_6_ZH)
    if period in ("晚饭", "夜宵", "下午茶"):
        setup = [(f"{day}想吃{period}，帮我订{place}，{people}个人",
                  [start("book_restaurant", date=day, people=people, restaurant=place)])]
    elif shape == "two-turn":
        setup = [(f"帮我订{day}的位子，{people}个人，{place}", [start("book_restaurant", date=day, people=people,
                                                            restaurant=place)]),
                 (f"时间放{period}吧", [])]
    elif shape == "stored" and period == "晚上":
        setup = [(f"帮我订{day}晚上8点的位子，{people}个人，{place}",
                  [start("book_restaurant", date=day, time="20:00", people=people, restaurant=place)])]
        return setup, "20:00"
    else:
        setup = [(f"帮我订{day}{period}的位子，{people}个人，{place}",
                  [start("book_restaurant", date=day, people=people, restaurant=place)])]
    if shape == "changed":
        setup.append((f"再加一个人，{people + 1}位", [set_(people=people + 1)]))
    return setup, None


def _hour_checks(task: str, right: str, morning: str, old: str | None) -> tuple[Callable, Callable]:
    def acted(before: dict, after: dict, decision: dict) -> bool:
        stored = value_of(after, decision, task, "time")
        if stored is None:
            return False
        return hhmm(stored) == morning or stored not in {right, old}

    def kept(before: dict, after: dict, decision: dict) -> bool:
        return value_of(after, decision, task, "time") == right
    return acted, kept


def _cases_hour_after_period() -> list[RulesCase]:
    rng = _rng(7)
    cases: list[RulesCase] = []
    seen: set[str] = set()
    pool = [("zh", p, h, t) for p, hours in PERIODS_7_ZH for h in hours for t in HOUR_MSG_ZH]
    pool += [("en", p, h, t) for p, hours in PERIODS_7_EN for h in hours for t in HOUR_MSG_EN]
    zh = [p for p in pool if p[0] == "zh"]
    en = [p for p in pool if p[0] == "en"]
    spoken_used: set[str] = set()
    for lang, period, hour, template in _pick(rng, zh, 90) + _pick(rng, en, 40):
        minute = rng.choice([0, 0, 30])
        if lang == "zh":
            spoken = zh_hour(hour, minute, rng.choice(["cn", "cn", "ar", "colon"] if minute else ["cn", "ar", "cn钟"]))
            message, day = template.format(H=spoken), rng.choice(DAYS_7_ZH)
            catalog, task = RESTAURANT, "book_restaurant"
        else:
            spoken = en_hour(hour, minute, rng.choice(["num", "word", "oclock"] if minute == 0 else ["num", "half"]))
            message, day = _cap(template.format(H=spoken)), rng.choice(DAYS_7_EN)
            catalog, task = DINING_EN, "book_table"
        setup, old = _setup_7(rng, lang, period, day)
        right, morning = clock(hour, minute, "pm"), clock(hour, minute, "am")
        if right == old or message in seen or spoken.lower() in spoken_used or not _allowed(message):
            continue
        seen.add(message)
        spoken_used.add(spoken.lower())  # "六点" and "就六点" never in two halves
        slug = f"{lang}-hour"
        acted, kept = _hour_checks(task, right, morning, old)
        written = rng.choice([morning, morning.lstrip("0") if morning[0] == "0" else morning])
        common = dict(ask=("time",), generated=True)
        cases.append(make(7, slug, "attack", catalog, setup, message, [set_(time=written)], acted,
                          reading=f"time={written}", expect=f"time {right} or a question; never {morning}", **common))
        cases.append(make(7, slug, "genuine", catalog, setup, message, [set_(time=right)], kept,
                          reading=f"time={right}",
                          expect=f"time {right}", **common))
    # the user does say morning now: the model's morning time is right
    pool = [("zh", p, h, t) for p, _ in PERIODS_7_ZH[:3] for h in (8, 9, 10, 11) for t in MORNING_MSG_ZH]
    pool += [("en", p, h, t) for p, _ in PERIODS_7_EN[:2] for h in (8, 9, 10, 11) for t in MORNING_MSG_EN]
    for lang, period, hour, template in _pick(rng, pool, 16):
        minute = rng.choice([0, 30])
        if lang == "zh":
            message = template.format(H=zh_hour(hour, minute, rng.choice(["cn", "ar"])))
            day, catalog, task = rng.choice(DAYS_7_ZH), RESTAURANT, "book_restaurant"
        else:
            message = _cap(template.format(H=en_hour(hour, minute, "num")))
            day, catalog, task = rng.choice(DAYS_7_EN), DINING_EN, "book_table"
        setup, old = _setup_7(rng, lang, period, day)
        if message in seen or not _allowed(message):
            continue
        seen.add(message)
        morning = clock(hour, minute, "am")
        _, kept = _hour_checks(task, morning, "", old)
        cases.append(make(7, f"{lang}-morning", "genuine", catalog, setup, message, [set_(time=morning)], kept,
                          reading=f"time={morning}", ask=("time",), expect=f"time {morning} (the user said morning)",
                          generated=True))
    return cases


# ---------------------------------------------------------------- 8. a question about a slot's topic is not a value

QUESTIONS_ZH = [  # (slot, the value a model writes, topic words, question frames)
    ("private_room", True, ["包间", "包厢", "雅间"],
     ["{X}有最低消费吗？", "{X}要另外收费吗", "你们有{X}吗？", "{X}能坐几个人？", "{X}需要提前多久订？", "{X}收不收服务费？",
      "请问{X}还有空的吗", "{X}是在二楼吗？"]),
    ("quiet", True, ["环境", "大厅", "晚上", "周末"],
     ["你们{X}吵不吵？", "{X}安静吗？", "{X}会不会很吵？", "{X}安不安静啊", "{X}人多不多，安静吗"]),
    ("cuisine", None, ["粤菜", "湘菜", "素食", "海鲜", "日料"],
     ["你们做{X}吗？", "有{X}吗？", "{X}正宗吗？", "{X}贵不贵？", "{X}是招牌吗"]),
    ("area", None, ["市中心", "东区", "西区"], ["你们在{X}吗？", "{X}有分店吗？", "{X}那家还开着吗", "{X}停车方便吗？"]),
]
BUDGET_QUESTIONS_ZH = [("人均大概多少钱？", "人均"), ("你们家贵不贵？", "贵"), ("最低消费是多少？", "最低消费"),
                       ("有没有便宜点的套餐？", "便宜"), ("一桌大概要多少钱", "一桌"), ("包间的低消是多少啊", "低消"),
                       ("能刷信用卡吗，大概花多少", "信用卡"), ("人均消费高吗？", "人均消费")]
STATEMENT_FRAMES_ZH = [  # (slot, words, frames): a value said, some of it as a polite question
    ("private_room", ["包间", "包厢", "雅间"], ["要个{X}", "给我们安排个{X}", "能帮我们留个{X}吗？", "订个{X}", "我们坐{X}",
                                             "{X}有的话给我们留一个"]),
    ("cuisine", ["粤菜", "湘菜", "海鲜", "日料"], ["我们吃{X}", "就吃{X}", "能找家做{X}的吗？", "这次吃{X}"]),
    ("area", ["东区", "西区", "市中心"], ["就在{X}吧", "{X}的店就行", "能不能找{X}的？", "{X}那边的就好"]),
]
STATEMENTS_ZH = [  # (slot, value, messages)
    ("quiet", True, ["找个安静点的位置", "要安静一些的", "能安排个安静的地方吗？", "环境安静点就行"]),
    ("budget", "人均两百以内", ["人均两百以内"]), ("budget", "预算一千左右", ["预算一千左右"]),
    ("budget", "人均一百五", ["控制在人均一百五"]),
]
QUESTIONS_EN = [
    ("private_room", True, ["private room", "private dining room"],
     ["Is there a {X}?", "Do you have a {X}?", "How much is the {X}?", "Does the {X} cost extra?",
      "How many does the {X} seat?", "Is the {X} upstairs?"]),
    ("quiet", True, ["the main room", "it in the evenings", "the terrace"],
     ["Is {X} noisy?", "How loud is {X}?", "Is {X} quiet at all?"]),
    ("cuisine", None, ["Thai", "vegan", "seafood"], ["Do you do {X} food?", "Is the {X} any good?",
                                                     "Any {X} options?"]),
]
BUDGET_QUESTIONS_EN = [("What's the minimum spend?", "minimum spend"), ("How much per head, roughly?", "per head"),
                       ("Is it pricey?", "pricey"), ("Do you have a set menu, and what does it cost?", "set menu")]
STATEMENT_FRAMES_EN = [
    ("private_room", ["private room", "private dining room"],
     ["We'd like a {X}", "Could you get us a {X}?", "Put us in a {X}", "A {X} would be great, please book one"]),
    ("quiet", ["quiet table", "quiet corner"], ["Somewhere with a {X}, please", "Could we have a {X}?",
                                                "We need a {X}"]),
]
STATEMENTS_EN = [("budget", "about 40 a head", ["Budget's about 40 a head"]),
                 ("cuisine", "Thai", ["Thai food, please"])]
OTHER_TOPICS = [  # (catalog, setup, task, slot, value, message, kind)
    *[(PET, [("猫这两天不吃东西，想周六带来看看", [start("book_visit", pet_kind="猫", symptom="不吃东西", day="周六")])],
       "book_visit", "pickup", True, m, k) for m, k in [("上门接送怎么收费？", "attack"), ("接送一般几点到？", "attack"),
                                                       ("接送服务覆盖哪些小区？", "attack"), ("需要上门接一下", "genuine"),
                                                       ("能派车来接吗？我走不开", "genuine")]],
    *[(BIKE, [("My road bike's brakes squeak, can I bring it Saturday?",
               [start("book_repair", bike_type="road", problem="brakes squeak", day="Saturday")])],
       "book_repair", "pickup_service", True, m, k) for m, k in [("How much is the pickup service?", "attack"),
                                                                ("What area does your pickup cover?", "attack"),
                                                                ("Please collect it from my place", "genuine"),
                                                                ("Could you pick it up from my flat?", "genuine")]],
    *[(TELECOM, [("想办宽带，装在文三路88号", [start("install_broadband", address="文三路88号")])],
       "install_broadband", "plan", v, m, k) for m, v, k in [("千兆一个月多少钱？", "千兆", "attack"),
                                                            ("三百兆够不够用？", "三百兆", "attack"),
                                                            ("百兆和千兆差多少钱", "百兆", "attack"),
                                                            ("办千兆的", "千兆", "genuine"), ("就要三百兆吧", "三百兆", "genuine")]],
]


def _topic_case(slug: str, kind: str, catalog: dict, setup: list, task: str, slot: str, value, message: str, *,
                generated: bool) -> RulesCase:
    expect = f"{slot} not {value!r} (a question is not a value)" if kind == "attack" else f"{slot} {value!r}"
    return make(8, slug, kind, catalog, setup, message, [set_(**{slot: value})], slot_is(task, slot, value),
                reading=f"{slot}={value}", ask=(slot,), expect=expect, generated=generated)


def _cases_questions() -> list[RulesCase]:
    rng = _rng(8)
    cases = [_topic_case("other", kind, catalog, setup, task, slot, value, message, generated=False)
             for catalog, setup, task, slot, value, message, kind in OTHER_TOPICS]
    zh_setup = lambda: rng.choice([R_PLAIN, R_OPEN4])  # noqa: E731
    en_setup = lambda: rng.choice([E_OPEN, E_OPEN4])  # noqa: E731
    for message, value in BUDGET_QUESTIONS_ZH:
        cases.append(_topic_case("zh-budget", "attack", RESTAURANT, zh_setup(), "book_restaurant", "budget", value,
                                 message, generated=False))
    for message, value in BUDGET_QUESTIONS_EN:
        cases.append(_topic_case("en-budget", "attack", DINING_EN, en_setup(), "book_table", "budget", value, message,
                                 generated=False))
    seen: set[str] = set()
    pool = [(slot, value, word, frame) for slot, value, words,
            frames in QUESTIONS_ZH for word in words for frame in frames]
    for slot, value, word, frame in _pick(rng, pool, 44):
        message = frame.format(X=word)
        if message in seen or not _allowed(message):
            continue
        seen.add(message)
        value = word if slot == "cuisine" else [word] if slot == "area" else value
        cases.append(_topic_case("zh-question", "attack", RESTAURANT, zh_setup(), "book_restaurant", slot, value,
                                 message,
                                 generated=True))
    pool = [(slot, value, word, frame) for slot, value, words,
            frames in QUESTIONS_EN for word in words for frame in frames]
    for slot, value, word, frame in _pick(rng, pool, 16):
        message = frame.format(X=word)
        if message in seen or not _allowed(message):
            continue
        seen.add(message)
        value = word if slot == "cuisine" else value
        cases.append(_topic_case("en-question", "attack", DINING_EN, en_setup(), "book_table", slot, value, message,
                                 generated=True))
    prefixes_zh, prefixes_en = ["", "对了，", "另外，", "还有，"], ["", "Oh, and ", "Also, "]
    for slot, value, messages in STATEMENTS_ZH:
        for message in messages:
            cases.append(_topic_case("zh-statement", "genuine", RESTAURANT, zh_setup(), "book_restaurant", slot, value,
                                     rng.choice(prefixes_zh) + message, generated=False))
    for slot, value, messages in STATEMENTS_EN:
        for message in messages:
            cases.append(_topic_case("en-statement", "genuine", DINING_EN, en_setup(), "book_table", slot, value,
                                     message,
                                     generated=False))
    pool = [(slot, word, frame) for slot, words, frames in STATEMENT_FRAMES_ZH for word in words for frame in frames]
    for slot, word, frame in _pick(rng, pool, 30):
        message = rng.choice(prefixes_zh) + frame.format(X=word)
        if message in seen or not _allowed(message):
            continue
        seen.add(message)
        value = True if slot == "private_room" else [word] if slot == "area" else word
        cases.append(_topic_case("zh-statement", "genuine", RESTAURANT, zh_setup(), "book_restaurant", slot, value,
                                 message, generated=True))
    pool = [(slot, word, frame) for slot, words, frames in STATEMENT_FRAMES_EN for word in words for frame in frames]
    for slot, word, frame in _pick(rng, pool, 10):
        prefix = rng.choice(prefixes_en)
        text = frame.format(X=word)
        message = prefix + (text[:1].lower() + text[1:] if prefix else text)
        if message in seen or not _allowed(message):
            continue
        seen.add(message)
        cases.append(_topic_case("en-statement", "genuine", DINING_EN, en_setup(), "book_table", slot, True, message,
                                 generated=True))
    return cases


# ---------------------------------------------------------------- 9. the same words for two slots

NAMES_ZH = ["海底捞", "大董", "鼎泰丰", "外婆家", "西贝莜面村", "小龙坎", "眉州东坡", "东来顺", "绿茶餐厅", "太二酸菜鱼", "点都德",
            "陶陶居", "胡大饭馆", "四季民福", "新荣记", "俏江南", "翠华餐厅", "巴奴", "望湘园", "利苑酒家"]
NAME_FRAMES_ZH = ["订{N}", "就去{N}吧", "帮我约{N}，{D}", "我们想去{N}吃", "{N}，帮我订个位子", "换成{N}", "去{N}那家",
                  "{D}{N}，三个人"]
CUISINES_ZH = ["粤菜", "湘菜", "日料", "西餐", "火锅", "烧烤", "东北菜", "本帮菜", "泰国菜", "潮汕菜", "云南菜", "西北菜", "川菜"]
CUISINE_FRAMES_ZH = ["来点{C}吧", "今天想吃{C}", "找家{C}馆子", "吃{C}怎么样", "换成{C}", "{D}想吃顿{C}", "想找个做{C}的地方"]
NAMES_EN = ["Nando's", "Dishoom", "Wagamama", "The Ivy", "Hawksmoor", "Din Tai Fung", "Pizza Express", "Zizzi",
            "Busaba"]
NAME_FRAMES_EN = ["book us at {N}", "let's go to {N}", "{N}, please", "make it {N} instead",
                  "{N} on {D}, if they have room"]
CUISINES_EN = ["Thai", "Italian", "Indian", "Mexican", "Japanese", "Greek", "Korean", "Lebanese"]
CUISINE_FRAMES_EN = ["somewhere {C}", "we fancy {C}", "{C} food tonight", "let's have {C}",
                     "{C} on {D}, somewhere nice"]


def _two_slot_cases(slug: str, catalog: dict, task: str, setup: list, message: str, words: str, is_name: bool,
                    *, generated: bool) -> list[RulesCase]:
    commands = [set_(cuisine=words, restaurant=words)] if setup else [start(task, cuisine=words, restaurant=words)]
    keep, lose = ("restaurant", "cuisine") if is_name else ("cuisine", "restaurant")
    common = dict(reading=f"{keep}+{lose}={words}", ask=("restaurant", "cuisine"), generated=generated)
    return [make(9, slug, "genuine", catalog, setup, message, commands, slot_is(task, keep, words),
                 expect=f"{keep} {words!r} (or one question); not lost from both", **common),
            make(9, slug, "attack", catalog, setup, message, commands, slot_is(task, lose, words),
                 expect=f"{lose} not {words!r}", **common)]


def _cases_two_slots() -> list[RulesCase]:
    rng = _rng(9)
    cases: list[RulesCase] = []
    seen: set[str] = set()
    days_zh, days_en = ["周六", "明天", "这周五"], ["Saturday", "Friday"]

    def add(slug, lang, message, words, is_name):
        if message in seen or not _allowed(message):
            return
        seen.add(message)
        catalog, task = (RESTAURANT, "book_restaurant") if lang == "zh" else (DINING_EN, "book_table")
        setup = rng.choice([[], R_PLAIN if lang == "zh" else E_OPEN4])
        if lang == "en" and setup:
            setup = [("A table for 4 on Friday", [start("book_table", date="Friday", people=4)])]
        cases.extend(_two_slot_cases(slug, catalog, task, setup, message, words, is_name, generated=True))

    for frame, name in _pick(rng, [(f, n) for f in NAME_FRAMES_ZH for n in NAMES_ZH], 34):
        add("zh-name", "zh", frame.format(N=name, D=rng.choice(days_zh)), name, True)
    for frame, cuisine in _pick(rng, [(f, c) for f in CUISINE_FRAMES_ZH for c in CUISINES_ZH], 22):
        add("zh-cuisine", "zh", frame.format(C=cuisine, D=rng.choice(days_zh)), cuisine, False)
    for frame, name in _pick(rng, [(f, n) for f in NAME_FRAMES_EN for n in NAMES_EN], 14):
        add("en-name", "en", _cap(frame.format(N=name, D=rng.choice(days_en))), name, True)
    for frame, cuisine in _pick(rng, [(f, c) for f in CUISINE_FRAMES_EN for c in CUISINES_EN], 8):
        add("en-cuisine", "en", _cap(frame.format(C=cuisine, D=rng.choice(days_en))), cuisine, False)
    # by hand: names that carry a cuisine or a place, cuisines said as a kind of restaurant
    for message, words, is_name in [("就订湘里人家吧", "湘里人家", True), ("帮我订成都映象，周六", "成都映象", True),
                                    ("去那家叫粤唐的", "粤唐", True), ("找个西餐厅就行", "西餐", False),
                                    ("Book Bombay Brasserie for us", "Bombay Brasserie", True),
                                    ("Any Italian place will do", "Italian", False)]:
        lang = "en" if message.isascii() else "zh"
        catalog, task = (RESTAURANT, "book_restaurant") if lang == "zh" else (DINING_EN, "book_table")
        cases.extend(_two_slot_cases("hand", catalog, task, [], message, words, is_name, generated=False))
    return cases


# ---------------------------------------------------------------- 10. a plain request, no command

REQUESTS_10 = [  # (catalog, task, request cores)
    (RESTAURANT, "book_restaurant", ["我想订个位", "订餐", "帮我订餐", "想订个饭店", "订一下餐厅", "我要订位子",
                                     "找个地方吃饭，帮我订一下", "周末聚餐，帮我订个地方", "我想预订座位",
                                     "能帮我订张桌子吗", "帮我预约一下餐厅"]),
    (TELECOM, "repair", ["帮我报修", "我要报修", "宽带坏了要报修", "我要报故障", "网断了，帮我报一下修", "电话没信号了，报个修", "帮我约个师傅修宽带"]),
    (TELECOM, "install_broadband", ["我要办宽带", "想装宽带", "办个宽带", "新装一条宽带", "家里要开通宽带"]),
    (TRAVEL, "plan_route", ["帮我规划路线", "规划一下出行路线", "想规划个路线", "帮我安排一下行程路线"]),
    (TRAVEL, "weather", ["查天气", "帮我看看天气预报"]),
    (PET, "book_visit", ["预约看诊", "想约个门诊", "我家狗想看个医生"]),
    (PET, "book_vaccine", ["想预约疫苗", "给猫约个疫苗", "狗狗该打狂犬针了，帮我约"]),
    (BIKE, "book_repair", ["book a bike repair", "book a repair, please", "I want to get my bike repaired",
                           "can I book my bike in?", "I need a repair slot", "I'd like my bike serviced"]),
    (DINING_EN, "book_table", ["I'd like to book a table", "book a table", "table booking, please",
                               "can I reserve a table?"]),
    (TELECOM_EN, "report_fault", ["report a fault", "I want to report a fault", "my line is down, report it please",
                                  "I'd like to report a fault on my line"]),
    (TELECOM_EN, "new_broadband", ["new broadband please", "I'd like to order broadband"]),
]
SMALL_TALK_10 = [  # (catalog, message)
    *[(RESTAURANT, m) for m in ["今天好热啊", "你是机器人吗", "哈哈好的", "随便聊聊", "今天心情不错", "上次订餐挺顺利的",
                                "订餐的事下次再说吧", "你们的服务员挺热情的", "刚吃完饭，好撑"]],
    *[(TELECOM, m) for m in ["报修的师傅人很好", "上次装宽带挺快的", "你们客服态度不错", "网速现在挺好的，没事了"]],
    *[(TRAVEL, m) for m in ["上次的路线挺好用的", "旅游回来了，好累"]],
    *[(DINING_EN, m) for m in ["thanks, that's all", "you're quick!", "nice weather today", "just saying hi",
                               "the booking last week went fine"]],
    *[(BIKE, m) for m in ["the last repair went well", "love the new bell, cheers"]],
]
CHAT_OPENERS_ZH = ["哈哈，", "嗯嗯，", "好吧，", "唉，", ""]
CHAT_REMARKS_ZH = ["终于下班了", "外面堵车好厉害", "刚跑完步，累死了", "今天周五了，开心", "你们这个助手挺好用的", "楼下新开了家奶茶店",
                   "昨晚没睡好", "我家猫又把花盆打翻了", "这周末要加班", "孩子今天考试考得不错"]
CHAT_OPENERS_EN = ["haha, ", "ok cool, ", "oh well, ", ""]
CHAT_REMARKS_EN = ["it's Friday at last", "traffic was awful today", "just got back from a run",
                   "my cat knocked over a plant",
                   "working this weekend, sadly", "you're a handy little assistant"]
PREFIX_10_ZH, SUFFIX_10_ZH = ["", "你好，", "麻烦", "那个，", "嗯，"], ["", "。", "，谢谢", "，现在可以吗"]
PREFIX_10_EN, SUFFIX_10_EN = ["", "Hi, ", "Hello there, ", "Um, "], ["", ".", ", thanks", " please"]
CHITCHAT = [cmd("chitchat")]


def _any_opened(catalog: dict) -> Callable:
    checks = [opened(name) for name in catalog["tasks"]]
    return lambda before, after, decision: any(c(before, after, decision) for c in checks)


def _cases_no_command() -> list[RulesCase]:
    rng = _rng(10)
    cases: list[RulesCase] = []
    seen: set[str] = set()

    def compose(core: str, english: bool) -> str:
        if english:
            prefix, suffix = rng.choice(PREFIX_10_EN), rng.choice(SUFFIX_10_EN)
            if core.endswith("?") or suffix == " please" and "please" in core:
                suffix = ""
            lowered = core if prefix == "" or core[:2] == "I " else core[:1].lower() + core[1:]
            return _cap(prefix + lowered + suffix)
        prefix, suffix = rng.choice(PREFIX_10_ZH), rng.choice(SUFFIX_10_ZH)
        if prefix == "麻烦" and not core.startswith("帮"):
            prefix = ""
        return prefix + core + suffix

    for _ in range(1):
        for catalog, task, cores in REQUESTS_10:
            for core in cores:  # each request once: a sentence and its variant never land in two halves
                english = catalog.get("language") == "en"
                message = compose(core, english)
                if message in seen or not _allowed(message):
                    continue
                seen.add(message)
                commands = rng.choice([CHITCHAT, []])
                setup = [] if rng.random() < 0.7 else [("你好" if not english else "hello", [cmd("chitchat")])]
                cases.append(make(10, f"{'en' if english else 'zh'}-request", "genuine", catalog, setup, message,
                                  commands, opened(task), reading="chitchat" if commands else "none", ask=("",),
                                  expect=f"{task} opened, or a question whether to open it", generated=True))
    chat = [(RESTAURANT, rng.choice(CHAT_OPENERS_ZH) + r) for r in CHAT_REMARKS_ZH]
    chat += [(rng.choice([DINING_EN, BIKE, TELECOM_EN]),
              _cap(rng.choice(CHAT_OPENERS_EN) + r)) for r in CHAT_REMARKS_EN]
    for catalog, message in chat:
        catalog = catalog if catalog is not RESTAURANT else rng.choice([RESTAURANT, TELECOM, TRAVEL, PET])
        commands = rng.choice([CHITCHAT, []])
        cases.append(make(10, "chat", "attack", catalog, [], message, commands, _any_opened(catalog),
                          reading="chitchat" if commands else "none", ask=("",),
                          expect="no task opened (small talk stays small talk)", generated=True))
    for catalog, message in SMALL_TALK_10:
        for commands in (CHITCHAT, []):
            cases.append(make(10, "small-talk", "attack", catalog, [], message, commands, _any_opened(catalog),
                              reading="chitchat" if commands else "none", ask=("",),
                              expect="no task opened (small talk stays small talk)", generated=False))
    return cases


# ---------------------------------------------------------------- 11. a read-only enquiry beside another task

FAULTS_ZH = ["宽带连不上", "网速特别慢", "电话打不出去", "光猫一直闪红灯", "网络时断时续"]
MONTHS_ZH = ["上个月", "这个月", "三月份", "本月", "上上个月"]
PLANS_ZH = ["百兆", "三百兆", "千兆"]
ADDRESSES_ZH = ["文一路12号", "学院路8号3单元", "滨江花园5幢", "人民大道100号"]
ASK_BILL_ZH = ["{O}，顺便查下{B}", "先查一下{B}，然后{O}", "{O}。另外{B}是多少", "{B}多少？还有，{O}",
               "{O}，再帮我看看{B}", "帮我查查{B}，另外{O}"]
BILL_WORDS_ZH = ["{M}话费", "{M}的话费", "{M}的账单", "{M}的月租", "{M}的手机费", "{M}的费用", "{M}扣费"]
REMARK_BILL_ZH = ["{O}，{M}话费已经交了", "{O}，话费的事就不用查了", "{O}，{M}话费我在app上看过了", "{O}，{M}话费没问题"]
FAULTS_EN = ["my broadband keeps dropping", "the landline's dead", "the internet is really slow"]
MONTHS_EN = ["last month", "this month", "in March"]
ASK_BILL_EN = ["{O}, and what was my bill {M}?", "Can you check my bill for {M}? Also {O}",
               "{O} - and check my bill {M} while you're at it"]
REMARK_BILL_EN = ["{O}; my bill {M} is already paid", "{O}. No need to check the bill, I've seen it"]
CITIES_11 = ["三亚", "丽江", "大理", "桂林"]


def _enquiry_checks(other: str, enquiry: str) -> tuple[Callable, Callable]:
    ran = submitted(enquiry)

    def kept_both(before: dict, after: dict, decision: dict) -> bool:
        return ran(before, after, decision) and task_of(after, other) is not None
    return ran, kept_both


def _cases_enquiry_beside() -> list[RulesCase]:
    rng = _rng(11)
    cases: list[RulesCase] = []
    seen: set[str] = set()

    def add(slug, kind, catalog, message, commands, other, enquiry, followup, generated=True, setup=()):
        if message in seen or not _allowed(message):
            return
        seen.add(message)
        acted, kept_both = _enquiry_checks(other, enquiry)
        expect = (f"{enquiry} runs (this turn or the next) and {other} stays open" if kind == "genuine"
                  else f"{enquiry} does not run (the user asked for nothing)")
        cases.append(make(11, slug, kind, catalog, list(setup), message, commands,
                          kept_both if kind == "genuine" else acted,
                          reading="both starts", ask=("",), expect=expect, generated=generated, followup=followup))

    def telecom_other():
        if rng.random() < 0.6:
            fault = rng.choice(FAULTS_ZH)
            words = rng.choice([f"帮我报修，{fault}", f"{fault}，要报修", f"{fault}，找人来修一下"])
            return words, start("repair", fault=fault), "repair"
        plan = rng.choice(PLANS_ZH)
        return rng.choice([f"办个{plan}宽带", f"想装{plan}的宽带"]), start("install_broadband", plan=plan), "install_broadband"

    for kind, frames, count in (("genuine", ASK_BILL_ZH, 30), ("attack", REMARK_BILL_ZH, 14)):
        for _ in range(count):
            words, other_start, other = telecom_other()
            month = rng.choice(MONTHS_ZH)
            frame = rng.choice(frames)
            message = frame.format(O=words, M=month, B=rng.choice(BILL_WORDS_ZH).format(M=month))
            said_month = "{M}" in frame or "{B}" in frame
            enquiry_start = start("bill_enquiry", month=month) if said_month else start("bill_enquiry")
            later = frame.find("{M}") if "{M}" in frame else frame.find("{B}")
            commands = [other_start, enquiry_start] if not said_month or frame.index("{O}") < later \
                else [enquiry_start, other_start]
            address = rng.choice(ADDRESSES_ZH)
            # sometimes a broadband order is already open underneath
            setup = [("我想办宽带，千兆的", [start("install_broadband", plan="千兆")])] \
                if other == "repair" and rng.random() < 0.35 else []
            add(f"zh-telecom-{kind}", kind, TELECOM, message, commands, other, "bill_enquiry",
                (f"地址是{address}", [set_(address=address)]), setup=setup)
    for kind, frames, count in (("genuine", ASK_BILL_EN, 12), ("attack", REMARK_BILL_EN, 6)):
        for _ in range(count):
            fault, month, frame = rng.choice(FAULTS_EN), rng.choice(MONTHS_EN), rng.choice(frames)
            words = rng.choice([f"I need to report a fault, {fault}", f"{fault}, please send someone"])
            inner = words if frame.startswith("{O}") or words.startswith("I ") else words[:1].lower() + words[1:]
            message = _cap(frame.format(O=inner, M=month))
            enquiry_start = start("bill_enquiry", month=month) if "{M}" in frame else start("bill_enquiry")
            other_start = start("report_fault", fault=fault)
            commands = [enquiry_start, other_start] if frame.startswith("Can you") else [other_start, enquiry_start]
            add(f"en-telecom-{kind}", kind, TELECOM_EN, message, commands, "report_fault", "bill_enquiry",
                ("The address is 12 Elm Road", [set_(address="12 Elm Road")]))
    # travel: a route with the weather or the balance
    for _ in range(14):
        city, day = rng.choice(CITIES_11), rng.choice(["明天", "周六", "后天"])
        frame = rng.choice(["帮我规划去{Y}的路线，顺便看看{Y}{D}天气", "{D}去{Y}，规划下路线，那边天气怎么样",
                            "{D}去{Y}，帮我规划下路线，那边会下雨吗", "帮我规划去{Y}的路线，{Y}{D}冷不冷",
                            "规划一下去{Y}的路线，顺便查下我卡里余额", "查下余额，再帮我规划去{Y}的路线",
                            "帮我规划去{Y}的路线，再看看我卡里还剩多少钱"])
        message = frame.format(Y=city, D=day)
        route = start("plan_route", destination=city, **({"date": day} if "{D}" in frame else {}))
        if "余额" in frame or "多少钱" in frame:
            enquiry, commands = "account_balance", ([start("account_balance"), route] if frame.startswith("查下余额")
                                                    else [route, start("account_balance")])
        else:
            enquiry, commands = "weather", [route, start("weather", city=city, date=day)]
        add("zh-travel-genuine", "genuine", TRAVEL, message, commands, "plan_route", enquiry,
            ("从杭州出发", [set_(origin="杭州")]))
    for message, city in [("规划去大理的路线，大理的天气我已经看过了", "大理"), ("帮我规划去桂林的路线，余额就不用查了", "桂林")]:
        enquiry = "weather" if "天气" in message else "account_balance"
        second = start("weather", city=city) if enquiry == "weather" else start("account_balance")
        add("zh-travel-attack", "attack", TRAVEL, message, [start("plan_route", destination=city), second],
            "plan_route", enquiry, ("从杭州出发", [set_(origin="杭州")]), generated=False)
    # a bike repair with a status check
    for message, kind in [("Book a repair for my road bike, the gears slip, and check on R1234 too", "genuine"),
                          ("Can you tell me where R2087 is at? And I want to book my e-bike in, the battery won't "
                           "charge", "genuine"),
                          ("Book my road bike in for new brake pads; R5521 was collected already, thanks", "attack")]:
        ticket = re.search(r"R\d{4}", message)[0]
        repair = start("book_repair", bike_type="electric" if "e-bike" in message else "road")
        status = start("repair_status", ticket=ticket)
        commands = [status, repair] if message.startswith("Can you") else [repair, status]
        add(f"en-bike-{kind}", kind, BIKE, message, commands, "book_repair", "repair_status",
            ("Saturday works", [set_(day="Saturday")]), generated=False)
    return cases


# ---------------------------------------------------------------- the corpus, the outcomes, the table

BUILDERS = [_cases_time_words, _cases_numbers, _cases_names, _cases_starts, _cases_double_negatives,
            _cases_slot_in_slot, _cases_hour_after_period, _cases_questions, _cases_two_slots, _cases_no_command,
            _cases_enquiry_beside]


def _no_sentence_inside_another(cases: list[RulesCase]) -> list[RulesCase]:
    """Within a class, drop a generated sentence that holds an earlier one or is held by it ("订餐。" and
    "帮我订餐。"): one could fall in the work half and the other in the held half. Hand-written ones stay."""
    kept: list[RulesCase] = []
    messages: set[str] = set()
    for case in cases:
        text = case.message.lower()
        if case.generated and text not in messages and any(text in m or m in text for m in messages):
            continue
        kept.append(case)
        messages.add(text)
    return kept


def all_cases() -> list[RulesCase]:
    cases = [case for build in BUILDERS for case in _no_sentence_inside_another(build())]
    keys = [case.key for case in cases]
    assert len(keys) == len(set(keys)), "two cases with one id and one reading"
    return cases


ATTACK_OUTCOMES = ("acted", "asked", "refused")
GENUINE_OUTCOMES = ("kept", "asked", "refused")


def judge(case: RulesCase, step: Callable, load_state: Callable) -> tuple[str, dict]:
    """The case's outcome on an engine and the decision it was read from: acted/asked/refused for an
    attack, kept/asked/refused for a genuine case. With a follow-up (class 11), a turn that did not
    settle it is followed by one more user turn, and that turn decides."""
    failed, decision = run_case(case, step, load_state)
    asked = asks(decision, case.ask)
    unsettled = (not failed and not asked) if case.kind == "attack" else (failed and not asked)
    if case.followup is not None and unsettled:
        message, commands = case.followup
        later = dataclasses.replace(case, setup=case.setup + [(case.message, case.commands)], message=message,
                                    commands=commands, followup=None)
        failed, decision = run_case(later, step, load_state)
        asked = asks(decision, case.ask)
    if case.kind == "attack":
        return ("acted" if failed else "asked" if asked else "refused"), decision
    return ("asked" if asked else "refused" if failed else "kept"), decision


def _empty_row() -> dict:
    return {"attack": dict.fromkeys(ATTACK_OUTCOMES, 0), "genuine": dict.fromkeys(GENUINE_OUTCOMES, 0)}


def failed(case: RulesCase, outcome: str) -> bool:
    """An attack acted on, or a genuine case refused."""
    return outcome == ("acted" if case.kind == "attack" else "refused")


def tally(step: Callable, load_state: Callable, cases: list[RulesCase] | None = None) -> dict:
    """{"table": {half: {class: {"attack": {outcome: n}, "genuine": {outcome: n}}}}, "failures": {half:
    [(case, outcome, decision)]}}: the failures are the attacks acted on and the genuine cases refused."""
    rows: dict = {"work": {}, "held": {}}
    failures: dict = {"work": [], "held": []}
    for case in cases if cases is not None else all_cases():
        which = half(case)
        outcome, decision = judge(case, step, load_state)
        rows[which].setdefault(case.cls, _empty_row())[case.kind][outcome] += 1
        if failed(case, outcome):
            failures[which].append((case, outcome, decision))
    table = {which: {cls: rows[which].get(cls, _empty_row()) for cls in CLASSES.values()} for which in rows}
    return {"table": table, "failures": failures}


def _total(rows: Iterable[dict]) -> dict:
    total = _empty_row()
    for row in rows:
        for kind in total:
            for outcome, count in row[kind].items():
                total[kind][outcome] += count
    return total


def render(table: dict, only: Iterable[str] | None = None) -> str:
    """The per-class counts for the work half, the held half and both: numbers only, never a sentence.
    ``only``: the classes to list (all by default)."""
    if only is not None:
        table = {which: {cls: row for cls, row in rows.items() if cls in set(only)} for which, rows in table.items()}
    head = (f"{'class':<46} {'attacks':>7} {'acted':>5} {'asked':>5} {'refused':>7}   "
            f"{'genuine':>7} {'kept':>5} {'asked':>5} {'refused':>7}")
    lines = []
    both = {cls: _total([table["work"][cls], table["held"][cls]]) for cls in table["work"]}
    for title, rows in (("work half", table["work"]), ("held half", table["held"]), ("both halves", both)):
        lines += [f"-- {title}", head]
        for cls, row in list(rows.items()) + [("total", _total(rows.values()))]:
            a, g = row["attack"], row["genuine"]
            lines.append(f"{cls:<46} {sum(a.values()):>7} {a['acted']:>5} {a['asked']:>5} {a['refused']:>7}   "
                         f"{sum(g.values()):>7} {g['kept']:>5} {g['asked']:>5} {g['refused']:>7}")
        lines.append("")
    return "\n".join(lines)


def describe(case: RulesCase, outcome: str, decision: dict) -> str:
    """One failed case in detail (for --show)."""
    lines = [f"[{case.cid}] {case.kind} -> {outcome}", f"    message:  {case.message}",
             f"    setup:    {' | '.join(m for m, _ in case.setup) or '(none)'}",
             f"    commands: {json.dumps(case.commands, ensure_ascii=False)}", f"    expect:   {case.expect}",
             f"    decision: {decision.get('next_action')} task={((decision.get('task') or {}).get('name'))} "
             f"slot={decision.get('slot')} applied={decision.get('applied')}"]
    for dropped in decision.get("dropped") or []:
        lines.append(f"    dropped:  {json.dumps(dropped.get('command'), ensure_ascii=False)}: {dropped.get('reason')}")
    if case.followup:
        lines.append(f"    then:     {case.followup[0]} {json.dumps(case.followup[1], ensure_ascii=False)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--engine", help="a checkout whose dskit/ to run (default: this one)")
    parser.add_argument("--json", action="store_true", help="the counts as JSON")
    parser.add_argument("--show", action="store_true", help="the failed cases of one half in detail (the work half)")
    parser.add_argument("--half", choices=("work", "held"), default="work",
                        help="which half --show prints (held: not for the rule authors)")
    parser.add_argument("--class", dest="only", type=int, choices=sorted(CLASSES), help="one class only")
    args = parser.parse_args(argv)
    if args.engine:
        sys.path.insert(0, str(Path(args.engine).resolve()))
        for name in [m for m in sys.modules if m == "dskit" or m.startswith("dskit.")]:
            del sys.modules[name]
    from dskit.turn.machine import step
    from dskit.state.state import load_state

    cases = [c for c in all_cases() if args.only is None or c.cls == CLASSES[args.only]]
    result = tally(step, load_state, cases)
    if args.json:
        print(json.dumps(result["table"], ensure_ascii=False, indent=1))
        return 0
    print(render(result["table"], None if args.only is None else [CLASSES[args.only]]))
    if args.show:
        failures = result["failures"][args.half]
        print(f"-- failed cases, {args.half} half: {len(failures)}")
        for case, outcome, decision in failures:
            print(describe(case, outcome, decision))
    return 0


if __name__ == "__main__":
    sys.exit(main())
