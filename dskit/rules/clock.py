"""Times of day, read by a small grammar: an hour phrase, and the part of the day that governs it.

A time the user says is two parts that may stand apart: the **hour** ("七点", "7:30", "half past seven",
"8 o'clock") and the **part of the day** ("晚上", "午后", "早茶", "下班后", "tonight", "Saturday morning,"),
which may come before the hour, after it, or in the clause next to it ("周六早上，8点"; "make it a late
supper, 9:30"). The grammar:

- an **hour phrase** is an hour (Arabic or Chinese numerals) with 点/时/a colon and its minutes (半,
  一刻, 三刻, a number), or an English hour with am/pm, o'clock, a colon and minutes, after "at"
  ("tonight at 8"), with "-ish", or spoken ("half past seven", "quarter to eight", "six early in the
  morning"); "一点" that means "a bit" is none;
- a **part of the day** is read by its morphemes, not from a list of phrases: 早 and 晨 are the morning,
  晚 昏 夜 宵 the evening and night, 中饭 noon, 午 with what stands beside it (上午 the morning; 中午 午饭 午餐 正午
  noon; 下午 午后 the afternoon; 午夜 midnight), 凌晨 the small hours, 下班/放学 after work; in English
  morning/breakfast/brunch, noon/lunch/midday, afternoon, evening/tonight/dinner/supper/after work,
  night, midnight, a.m./p.m. A 早 or 晚 that grades something else is not a part of the day: "早点/
  晚一点" (a bit earlier, later), "最晚/太早/提早/稍晚" (at the latest, too early, ahead, a little late);
- **scope**: an hour takes the nearest part of the day in its own clause (before it first, then after
  it), else one in the clause just before or after it that names no hour of its own.

Each reading keeps its span and its part of the day; :meth:`ClockTime.values` gives the times it can
mean (one when the part of the day is said, "八点" alone is 08:00 or 20:00).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .negation import clause_span
from ..base.numerals import CN_NUMERAL_CHARS, parse_cn_number, read_numbers

_HOUR = rf"(\d{{1,2}}|[{CN_NUMERAL_CHARS}]{{1,3}})"
_ZH_CLOCK = re.compile(_HOUR + rf"\s{{0,2}}(?:点钟|点|时(?!间|候)|[:：])\s{{0,2}}(半|一刻|三刻|\d{{1,2}}|[{CN_NUMERAL_CHARS}]{{1,3}})?"
                       r"(\s{0,2}分)?")
_EN_CLOCK = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s?(am|pm|a\.m\.|p\.m\.|o'clock)")
_EN_HOUR_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
_EN_SPOKEN = re.compile(r"\b(?:(half|quarter)\s(past|to)\s)?(\d{1,2}|" + "|".join(_EN_HOUR_WORDS) + r")"
                        r"(?:\s(o'clock)|(-?ish))?(?=(\s(?:[a-z]+\s)?(?:in the (?:morning|afternoon|evening)"
                        r"|this (?:morning|afternoon|evening)|tonight|at night))|\b)")
_TIME_VALUE = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")

# The part of the day each English word names.
_EN_PERIOD_WORDS = {"morning": "morning", "mornings": "morning", "breakfast": "morning", "brunch": "morning",
                    "a.m.": "morning", "am": "morning", "noon": "noon", "midday": "noon", "lunch": "noon",
                    "lunchtime": "noon", "afternoon": "afternoon", "evening": "evening", "tonight": "evening",
                    "dinner": "evening", "supper": "evening", "p.m.": "evening", "pm": "evening", "night": "night",
                    "midnight": "night"}
_EN_SUFFIX = re.compile(r"\d\s?(am|pm|a\.m\.|p\.m\.)(?![a-z])")
_EN_AT_HOUR = re.compile(r"\b(?:at|around|till|until|by)(?:\s(?:about|around|roughly))?\s(\d{1,2}|"
                         + "|".join(_EN_HOUR_WORDS) + r")(?:-?ish)?\b(?![:.]?\d)"
                         r"(?!\s(?:people|persons|guests|of|adults|kids|children|days|nights|hours|minutes|mins|pm|am))")
_EN_AFTER_WORK = re.compile(r"\bafter (?:work|school|the office)\b")
_EN_PERIOD = re.compile(r"(?<![a-z.])(" + "|".join(re.escape(w) for w in sorted(_EN_PERIOD_WORDS, key=len,
                                                                                  reverse=True)) + r")(?![a-z])")
# 早 and 晚 grading something else: "最晚", "太早", "提早", "晚一点", "早些".
_GRADE_BEFORE = "最太提稍更较越不很挺偏"
_GRADE_AFTER = ("点", "一点", "些", "一些", "了", "于", "到", "退", "走", "起", "就", "已")


@dataclass(frozen=True)
class ClockTime:
    """One time of day a text states: the hour as said, its minutes, the part of the day that governs it
    ("" when none does) and where the hour phrase stands."""

    hour: int
    minute: int
    period: str
    start: int
    end: int

    def values(self) -> tuple:
        """The times (HH:MM) this reading can mean, in order of likelihood."""
        return tuple(f"{h:02d}:{self.minute:02d}" for h in hours_in_period(self.hour, self.period))


def hours_in_period(hour: int, period: str) -> tuple:
    """The 24-hour clock hours an hour said within a part of the day can be."""
    if hour > 12 or hour == 0:
        return (hour % 24,)
    if period in ("morning", "am"):
        return (0 if hour == 12 and period == "am" else hour,)
    if period == "small":
        return (0 if hour == 12 else hour,)
    if period == "noon":
        return (hour if hour >= 11 else hour + 12,) if hour >= 11 or hour <= 6 else (hour,)
    if period in ("afternoon", "pm"):
        return (hour if hour == 12 else hour + 12,)
    if period == "evening":
        return (0,) if hour == 12 else (hour,) if hour <= 3 else (hour + 12,)
    if period == "night":
        return (0,) if hour == 12 else (hour,) if hour <= 5 else (hour + 12,)
    return (hour,) if hour == 12 else (hour, hour + 12)


# ---------------------------------------------------------------- parts of the day

def _zh_periods(raw: str) -> list[tuple[int, int, str]]:
    """(start, end, part of the day) of every Chinese part-of-the-day morpheme in the text."""
    found = []
    for index, char in enumerate(raw):
        if char == "午":
            before, after = raw[index - 1:index], raw[index + 1:index + 2]
            period = ("morning" if before == "上" else "afternoon" if before == "下" or after == "后"
                      else "night" if after == "夜" else "noon")
            start = index - 1 if before in ("上", "下", "中", "正") else index
            found.append((start, index + 1 + (1 if after and after in "后夜饭餐间" else 0), period))
        elif char == "昏":  # 黄昏: dusk
            found.append((index, index + 1, "evening"))
        elif char == "中" and raw[index + 1:index + 2] == "饭":  # 中饭: lunch (中餐 is also "Chinese food")
            found.append((index, index + 2, "noon"))
        elif char == "凌" and raw[index + 1:index + 2] == "晨":
            found.append((index, index + 2, "small"))
        elif char in "早晨晚夜宵" and not (char == "晨" and raw[index - 1:index] == "凌"):
            if char in "早晚" and _grades(raw, index):
                continue
            period = "morning" if char in "早晨" else "night" if char in "夜宵" else "evening"
            tail = 1 if raw[index + 1:index + 2] and raw[index + 1] in "上晨间里饭餐茶宵" else 0  # 早上, 晚饭, 夜里
            found.append((index, index + 1 + tail, period))
        elif raw.startswith(("下班", "放学", "收工"), index):
            found.append((index, index + 2, "evening"))
    return found


def _grades(raw: str, index: int) -> bool:
    """Whether the 早 or 晚 at ``index`` grades something ("晚一点", "最早", "提早") instead of naming a part of
    the day ("晚上", "早茶", "今晚", "早8点")."""
    before, rest = raw[index - 1:index], raw[index + 1:]
    if before and before in _GRADE_BEFORE:
        return True
    if before and before in "明今昨一大清":  # 明早, 今晚, 一早, 大清早: a part of the day, whatever follows
        return False
    if rest[:1] and (rest[:1].isdecimal() or rest[:1] in CN_NUMERAL_CHARS and not rest.startswith("一点")):
        return False  # "早8点", "晚七点": the part of the day right before its hour
    return rest.startswith(_GRADE_AFTER) and not rest.startswith(("点心", "点儿饭"))


def _en_periods(lower: str) -> list[tuple[int, int, str]]:
    found = [(m.start(), m.end(), _EN_PERIOD_WORDS[m.group(1)]) for m in _EN_PERIOD.finditer(lower)
             if m.group(1) not in ("am", "pm", "a.m.", "p.m.")]
    found += [(m.start(), m.end(), "evening") for m in _EN_AFTER_WORK.finditer(lower)]
    found += [(m.start(1), m.end(1), "am" if m.group(1)[0] == "a" else "pm") for m in _EN_SUFFIX.finditer(lower)]
    return found


def periods_in(raw: str) -> list[tuple[int, int, str]]:
    """Every part of the day the text names, as (start, end, part) in order."""
    lower = raw.lower()
    found = _zh_periods(raw) if any("\u4e00" <= ch <= "\u9fff" for ch in raw) else []
    if any(ch.isascii() and ch.isalpha() for ch in lower):
        found += _en_periods(lower)
    return sorted(found)


def _governing(raw: str, start: int, end: int, periods: list, hours: list) -> str:
    """The part of the day that governs the hour phrase at [start, end) (see the module's scope rule)."""
    left, right = clause_span(raw, start, start)
    before = [p for p in periods if left <= p[0] and p[1] <= start]
    if before:
        return before[-1][2]
    after = [p for p in periods if end <= p[0] and p[1] <= right]
    if after:
        return after[0][2]
    for side in (left - 1, right + 1):
        if side < 0 or side > len(raw):
            continue
        at = max(0, min(side, len(raw) - 1))
        near_left, near_right = clause_span(raw, at, at)
        if (near_left, near_right) == (left, right):
            continue
        if any(near_left <= h[0] < near_right for h in hours):
            continue
        near = [p for p in periods if near_left <= p[0] and p[1] <= near_right]
        if near:
            return near[-1][2] if side < left else near[0][2]
    return ""


# ---------------------------------------------------------------- hour phrases

def _number(token: str) -> float | None:
    if not token:
        return None
    if token[0].isdigit():
        try:
            return float(token)
        except ValueError:
            return None
    value = parse_cn_number(token)
    return None if value is None else float(value)


def _minutes(token: str | None) -> int:
    if not token:
        return 0
    if token == "半":
        return 30
    if token == "一刻":
        return 15
    if token == "三刻":
        return 45
    value = _number(token)
    return int(value) if value is not None and 0 <= value < 60 else -1


# Before a bare "一点", what makes it one o'clock ("还是一点吧", "明天一点", "到一点"); after any other Chinese
# character it is "a bit" ("安静一点的", "便宜一点", "快一点").
_CLOCK_BEFORE_ONE = frozenset("到在是为成约至从或和及与订定等天日号今明后午晨钟凌吧了") | frozenset(CN_NUMERAL_CHARS)


def _a_bit(raw: str, match: re.Match) -> bool:
    """Whether a clock match is the "一点" that means "a bit": the hour 一 with 点 and nothing after it that
    tells the time (分, 半, 钟), and before it a word that does not set a time — "晚一点"/"早一点" (a bit
    later, earlier) included; "一点点", "一点儿", "一点都不" never tell a time."""
    if match.group(1) != "一" or match.group(2) or raw[match.end(1):match.end()].strip() != "点":
        return False
    after = raw[match.end():match.end() + 1]
    if after and after in "点儿都也":
        return True
    left = clause_span(raw, match.start(1), match.start(1))[0]
    if any(left <= start and end <= match.start(1) for start, end, _ in _zh_periods(raw)):
        return False  # "早上一点", "早上大概一点", "午饭一点": a part of the day before it in its clause tells a time
    before = raw[:match.start(1)].rstrip()[-1:]
    return bool(before) and "\u4e00" <= before <= "\u9fff" and before not in _CLOCK_BEFORE_ONE


def _hour_phrases(raw: str) -> list[tuple[int, int, int, int, str]]:
    """(start, end, hour, minute, suffix period) of every hour phrase; ``suffix``: am/pm said with it."""
    found = []
    for match in _ZH_CLOCK.finditer(raw):
        hour, minute = _number(match.group(1)), _minutes(match.group(2))
        if hour is None or not 0 <= hour <= 24 or hour != int(hour) or _a_bit(raw, match) or minute < 0:
            continue
        found.append((match.start(), match.end(), int(hour) % 24 if hour == 24 else int(hour), minute, ""))
        # "八点三个人": a lone digit after 点 without 分 may start the next phrase, not the minutes
        if match.group(2) and not match.group(3) and match.group(2) not in ("半", "一刻", "三刻") \
                and len(match.group(2)) == 1:
            found.append((match.start(), match.end(1) + 1, int(hour), 0, ""))
    lower = raw.lower()
    if not any(ch.isascii() and ch.isalpha() for ch in lower):
        return found
    for match in _EN_CLOCK.finditer(lower):
        hour, minute, suffix = int(match.group(1)), int(match.group(2) or 0), match.group(3)
        if hour <= 24 and minute <= 59 and not any(s <= match.start() < e for s, e, *_ in found):
            period = "pm" if suffix.startswith("p") else "am" if suffix.startswith("a") else ""
            found.append((match.start(), match.end(), hour, minute, period))
    for match in _EN_SPOKEN.finditer(lower):
        fraction, direction, hour_text, oclock = match.group(1), match.group(2), match.group(3), match.group(4)
        if any(s <= match.start() < e for s, e, *_ in found) or not (fraction or oclock or match.group(5)
                                                                        or match.group(6)):
            continue
        if not (fraction or oclock) and lower[:match.start()].rstrip().endswith(" for"):  # "a table for six tonight"
            continue
        hour = int(hour_text) if hour_text.isdigit() else _EN_HOUR_WORDS.index(hour_text) + 1
        minute = 0 if not fraction else 30 if fraction == "half" else 15
        if direction == "to":
            hour, minute = hour - 1, 60 - minute
        if 0 <= hour <= 24:
            found.append((match.start(), match.end(), hour % 24, minute, ""))
    for match in _EN_AT_HOUR.finditer(lower):  # "tonight at 8": an hour after "at" with no unit after it
        if any(s <= match.start(1) < e for s, e, *_ in found):
            continue
        word = match.group(1)
        hour = int(word) if word.isdigit() else _EN_HOUR_WORDS.index(word) + 1
        if 1 <= hour <= 24:
            found.append((match.start(1), match.end(1), hour % 24, 0, ""))
    return found


def read_clocks(raw: str) -> list[ClockTime]:
    """Every time of day the text states, each with the part of the day that governs it."""
    phrases = sorted(_hour_phrases(raw))
    if not phrases:
        return []
    periods = periods_in(raw)
    return [ClockTime(hour, minute, suffix or _governing(raw, start, end, periods, phrases), start, end)
            for start, end, hour, minute, suffix in phrases]


# What makes a lone number a count of something else than hours: "Six, please" answers "What time?", "six
# people" does not.
_UNIT_AFTER = re.compile(r"\s*(?:个|位|人|名|份|张|间|天|晚|元|块|号|日|月|年|people|persons|guests|of us|adults|kids"
                         r"|days?|nights?|rooms?|tables?|dollars?|yuan)", re.IGNORECASE)


def answered_hours(raw: str) -> list[ClockTime]:
    """A lone hour given as the answer to "what time?": the message's one number, a whole number from 1 to
    24 with no unit after it ("Six, please", "8吧", "2 then"), read like a bare hour. Only for a message that
    answers a time slot asked last turn; any other message's numbers are not hours."""
    numbers = read_numbers(raw)
    if len(numbers) != 1 or numbers[0].other is not None or read_clocks(raw):
        return []
    number = numbers[0]
    if number.value != int(number.value) or not 1 <= number.value <= 24 or _UNIT_AFTER.match(raw, number.end):
        return []
    periods = periods_in(raw)
    return [ClockTime(int(number.value) % 24, 0, _governing(raw, number.start, number.end, periods, []),
                      number.start, number.end)]


def times_in(raw: str) -> set[str]:
    """Clock times the text states, as HH:MM: "晚上七点" -> 19:00, "8点" -> 08:00 and 20:00, "7:30 pm"; a
    bare noon or midnight ("中午", "at midnight") when no hour is said."""
    found = {value for clock in read_clocks(raw) for value in clock.values()}
    if not found:
        lower = raw.lower()
        if "中午" in raw or "正午" in raw or re.search(r"\bnoon\b", lower):
            found.add("12:00")
        elif "午夜" in raw or re.search(r"\bmidnight\b", lower):
            found.add("00:00")
    return found


def is_clock(value: Any) -> bool:
    """Whether a value is a clock time as slots store it (HH:MM, "7:00" too)."""
    return isinstance(value, str) and _TIME_VALUE.match(value.strip()) is not None


def clock_form(value: Any) -> Any:
    """A clock value in the slot's own form, HH:MM ("8:00" -> "08:00"); anything else as it is."""
    match = _TIME_VALUE.match(value.strip()) if isinstance(value, str) else None
    return f"{int(match.group(1)):02d}:{match.group(2)}" if match else value


def half_of_day(value: Any) -> str:
    """"am" or "pm" for a clock value (12:00 and later is pm), "" for anything else."""
    match = _TIME_VALUE.match(value.strip()) if isinstance(value, str) else None
    return "" if match is None else "pm" if int(match.group(1)) >= 12 else "am"


def in_half(value: str, half: str) -> str:
    """The clock value moved into the half of the day ``half`` ("08:00", "pm" -> "20:00")."""
    hour, minute = value.split(":")
    hour_value = int(hour) % 12 + (12 if half == "pm" else 0)
    return f"{hour_value:02d}:{minute}"


def clock_value(text: Any) -> str | None:
    """The one clock time a text states, as HH:MM ("晚上七点" -> 19:00, "中午" -> 12:00); None when it
    states none, or several ("8点" is 08:00 or 20:00). For a model that writes the user's words into
    a slot that wants HH:MM."""
    if not isinstance(text, str) or len(text) > 40:
        return None
    found = times_in(text.lower())
    return next(iter(found)) if len(found) == 1 else None


def split_clock(text: Any) -> tuple[str, str | None]:
    """(the text without its time-of-day words, the one clock time they name) — "周五晚上8点" -> ("周五",
    "20:00"), "周日中午" -> ("周日", "12:00"), "周日三点半" -> ("周日", None): the words of one time of day
    are taken out even when they leave its half of the day open; (text, None) when the text names no
    time of day, or several, or nothing but one."""
    if not isinstance(text, str) or len(text) > 60:
        return text, None
    raw = text.lower()
    clocks = read_clocks(raw)
    periods = periods_in(raw)
    if len(clocks) > 1 or not clocks and not periods:
        return text, None
    values = clocks[0].values() if clocks else ()
    clock = values[0] if len(values) == 1 else None if clocks else clock_value(raw)
    spans = ([(clocks[0].start, clocks[0].end)] if clocks else []) + [(s, e) for s, e, _ in periods]
    source = text if len(text) == len(raw) else raw  # cut from the text as written (its letter case)
    rest = "".join(ch for index, ch in enumerate(source) if not any(s <= index < e for s, e in spans))
    rest = re.sub(r"[上里间钟]+$", "", rest.strip(" ，,、的")).strip(" ，,、的")
    return (rest, clock) if rest else (text, None)


def same_half_day(value: Any, old: Any, raw: str) -> Any:
    """An hour said without a part of the day ("改成七点") keeps the half of the day of the time it
    replaces: 20:00 -> "七点" is 19:00, not the 07:00 a model may write. Only an hour the message says bare
    (no part of the day governs it: "午后两点" is 14:00 whatever stood before); any other value comes back
    as it is."""
    if not (is_clock(value) and is_clock(old)) or half_of_day(value) == half_of_day(old):
        return value
    value = clock_form(value)
    other = in_half(value, half_of_day(old))
    for clock in read_clocks(raw):
        if not clock.period and value in clock.values() and other in clock.values():
            return other
    return value


# ---------------------------------------------------------------- shifts of a time

_DURATION_RE = re.compile(
    rf"(半|\d{{1,3}}|[{CN_NUMERAL_CHARS}]{{1,4}})\s{{0,2}}个?\s{{0,2}}(半)?\s{{0,2}}(小时|钟头|分钟|分)"
    r"|\b(an?|\d{1,3}|half an?)\s(hours?|minutes?|mins?)\b")
_EARLIER = ("提前", "提早", "早点", "早一", "往前", "前移", "earlier", "before")
_LATER = ("推迟", "延后", "推后", "晚点", "晚一", "往后", "延迟", "后移", "later", "after")


def durations_in(raw: str) -> tuple[set[int], set[int]]:
    """(minutes, signs) of the shifts the text states: "提前一小时" -> ({60}, {-1})."""
    minutes: set[int] = set()
    for match in _DURATION_RE.finditer(raw):
        if match.group(3):
            amount, half, unit = match.group(1), match.group(2), match.group(3)
            value = 0.5 if amount == "半" else _number(amount)
            if value is None:
                continue
            total = value * 60 if unit in ("小时", "钟头") else value
            minutes.add(int(total + (30 if half else 0)))
        else:
            amount, unit = match.group(4), match.group(5)
            value = 0.5 if amount.startswith("half") else 1 if amount in ("a", "an") else float(amount)
            minutes.add(int(value * 60 if unit.startswith("hour") else value))
    signs = set()
    if any(w in raw for w in _EARLIER):
        signs.add(-1)
    if any(w in raw for w in _LATER):
        signs.add(1)
    return minutes, signs or {-1, 1}


def shift_said(raw: str, negated_at: Any = None) -> bool:
    """Whether the message states one shift of a time plainly: one duration and one direction
    ("推迟半小时", "half an hour later"), the direction not negated ("不用提前一小时了" is none;
    ``negated_at`` reads negation, dskit.rules.cues)."""
    words = [w for w in _EARLIER + _LATER if w in raw]
    if not words:
        return False
    minutes, _ = durations_in(raw)
    spans = [(m.start(), m.end()) for w in words for m in re.finditer(re.escape(w), raw)]
    return len(minutes) == 1 and len({w in _LATER for w in words}) == 1 \
        and not (negated_at is not None and any(negated_at(raw, start, end) for start, end in spans))


def shifted_times(old: Any, raw: str) -> set[str]:
    """The times ``old`` (HH:MM) becomes by the shifts the message states ("提前一小时" -> 18:00 from 19:00;
    both directions when it names none)."""
    match = _TIME_VALUE.match(old) if isinstance(old, str) else None
    if not match:
        return set()
    base = int(match.group(1)) * 60 + int(match.group(2))
    minutes, signs = durations_in(raw)
    return {f"{((base + s * m) // 60) % 24:02d}:{(base + s * m) % 60:02d}" for m in minutes for s in signs}


__all__ = ["ClockTime", "read_clocks", "answered_hours", "periods_in", "times_in", "is_clock", "clock_form", "half_of_day", "in_half",
           "clock_value", "split_clock", "durations_in", "shift_said", "shifted_times", "hours_in_period",
           "same_half_day"]
