"""Grounding: whether what the model proposes can be traced to what the user said.

A small model copies values from its prompt, repeats last turn's commands and invents values nobody
gave. The engine's guards stop a task from running with a required slot *empty*; grounding stops it
from storing a value — or running a task — that the user did not say. The rules (docs/grounding.md):

- a **value** is grounded when it appears in the user's message or a recent user turn (after the
  folding below: width, case, spaces and punctuation do not count; a free-text value may differ from
  the user's words in a few characters, never in its digits), when it is a catalog option whose
  option text or alias the user said, or when it is the result of one of the documented
  normalisations of what the user said: numbers (两, 三, 十二, 3人), clock times (晚上七点 -> 19:00,
  8点 -> 08:00 or 20:00, 7 pm), a shift of the old value (提前一小时), and dates relative to the
  reference date the flow passes in (明天, 下周三, 上个月 -> 2026-11);
- a **change** of a slot that already holds a value, and a **deletion**, must be touched by this
  message: the message names the slot (its label, or two characters of it: "地址" for 安装地址) or
  says the new value; a value from an earlier turn cannot silently overwrite a newer one;
- a **start** of a task that is open or has just run must be asked for again: the message names the
  task, or gives a new value for it;
- **confirm**, **cancel** and **reset** need the words that say so ("好的", "不要了", "重新开始").

Grounding is only as strong as this lexical evidence: it cannot tell a paraphrase it does not know
from an invention, so it errs on the side of asking again. With no user message (replaying stored
commands) there is no evidence and the engine applies commands unchecked.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from .catalog import Catalog, SlotSpec, TaskSpec, parse_cn_number
from .cues import asks, indifferent_at, negated_at, says_cancel, says_reset, says_revert, says_yes
from .matching import exact_match, near_match, normal_form, range_said, segments, words_match

# Longest message (and recent turn) the rules read: grounding is lexical, and a pasted document
# must not make every value look grounded or cost seconds of matching.
MAX_EVIDENCE_CHARS = 2_000
# Recent user turns a value may come from, besides this message.
RECENT_TURNS = 4

_CN_NUM = "零〇一二两三四五六七八九十百千万"
_CN_NUM_RE = re.compile(f"[{_CN_NUM}]{{1,8}}")
_ARABIC_RE = re.compile(r"\d{1,12}(?:\.\d{1,6})?")
_EN_NUMBERS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
               "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
               "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
               "thirty": 30, "forty": 40, "fifty": 50, "a couple": 2, "a dozen": 12}
_EN_NUMBER_RE = re.compile(r"\b(" + "|".join(sorted(_EN_NUMBERS, key=len, reverse=True)) + r")\b")

# Clock times. The hour may be Arabic or Chinese; the period word decides am/pm when present.
_HOUR = rf"(\d{{1,2}}|[{_CN_NUM}]{{1,3}})"
_CLOCK_RE = re.compile(
    r"(凌晨|早上|早晨|清晨|上午|明早|今早|一早|大早|早|中午|下午|傍晚|晚上|夜里|夜间|今晚|明晚|晚)?\s{0,2}" + _HOUR
    + rf"\s{{0,2}}(?:点钟|点|时|[:：])\s{{0,2}}(半|一刻|三刻|\d{{1,2}}|[{_CN_NUM}]{{1,3}})?(\s{{0,2}}分)?")
_EN_CLOCK_RE = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s?(am|pm|a\.m\.|p\.m\.|o'clock)")
_EN_HOUR_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
# "half past seven in the evening", "quarter to eight", "seven in the evening": spoken English times
# (a bare "six" is not a time: "a table for six" must not ground 18:00).
_EN_SPOKEN_CLOCK_RE = re.compile(
    r"\b(?:(half|quarter)\s(past|to)\s)?(\d{1,2}|" + "|".join(_EN_HOUR_WORDS) + r")"
    r"(?:\s(o'clock))?(?:\s(in the morning|this morning|in the afternoon|this afternoon|in the evening"
    r"|this evening|tonight|at night))?\b")
_EN_PERIODS = {"in the morning": "上午", "this morning": "上午", "in the afternoon": "下午",
               "this afternoon": "下午", "in the evening": "晚上", "this evening": "晚上", "tonight": "晚上",
               "at night": "晚上"}
_PM = ("下午", "傍晚", "晚上", "夜里", "夜间", "今晚", "明晚", "晚")
_AM = ("凌晨", "早上", "早晨", "清晨", "上午", "明早", "今早", "一早", "大早", "早")
_TIME_VALUE = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")

# Durations for a relative change of a time ("提前一小时", "推迟半小时", "an hour earlier").
_DURATION_RE = re.compile(
    rf"(半|\d{{1,3}}|[{_CN_NUM}]{{1,4}})\s{{0,2}}个?\s{{0,2}}(半)?\s{{0,2}}(小时|钟头|分钟|分)"
    r"|\b(an?|\d{1,3}|half an?)\s(hours?|minutes?|mins?)\b")
_EARLIER = ("提前", "提早", "早点", "早一", "往前", "前移", "earlier", "before")
_LATER = ("推迟", "延后", "推后", "晚点", "晚一", "往后", "延迟", "后移", "later", "after")

# Dates, against the reference date.
_DAY_WORDS = {"今天": 0, "今日": 0, "today": 0, "明天": 1, "明日": 1, "tomorrow": 1, "后天": 2, "大后天": 3,
              "昨天": -1, "yesterday": -1, "前天": -2}
_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5,
             "1": 0, "2": 1, "3": 2, "4": 3, "5": 4, "6": 5, "7": 6}
# "查一下周六" is this Saturday: the 下 of "一下" ("a bit") is not "next".
_WEEKDAY_RE = re.compile(r"(下下个?|(?<!一)下个?|这个?|本|上个?)?(?:周|星期|礼拜)([一二三四五六日天末1-7])")
_EN_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_EN_WEEKDAY_RE = re.compile(r"\b(next |this |last )?(" + "|".join(_EN_WEEKDAYS) + r")\b")
_ISO_DATE_RE = re.compile(r"(\d{4})\s{0,2}[-/.年]\s{0,2}(\d{1,2})\s{0,2}[-/.月]\s{0,2}(\d{1,2})")
_ISO_MONTH_RE = re.compile(r"(\d{4})\s{0,2}[-/.年]\s{0,2}(\d{1,2})(?!\d)")
_MONTH_DAY_RE = re.compile(rf"(\d{{1,2}}|[{_CN_NUM}]{{1,3}})\s{{0,2}}月\s{{0,2}}(\d{{1,2}}|[{_CN_NUM}]{{1,3}})\s{{0,2}}[日号]")
_DAY_ONLY_RE = re.compile(rf"(?<![月\d{_CN_NUM}])(\d{{1,2}}|[{_CN_NUM}]{{1,3}})\s{{0,2}}[日号]")
_MONTH_RE = re.compile(rf"(\d{{1,2}}|[{_CN_NUM}]{{1,3}})\s{{0,2}}月(?!\s{{0,2}}(?:\d|[{_CN_NUM}])+\s{{0,2}}[日号])")
_MONTH_WORDS = {"本月": 0, "这个月": 0, "这月": 0, "当月": 0, "this month": 0, "上个月": -1, "上月": -1,
                "last month": -1, "上上个月": -2, "上上月": -2, "下个月": 1, "下月": 1, "next month": 1}
_DATE_VALUE = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?$")

@dataclass(frozen=True)
class Evidence:
    """What the user said that the engine may trust this turn."""

    message: str  # this turn's message, folded
    recent: tuple[str, ...] = ()  # earlier user turns, newest first, folded
    raw: str = ""  # this turn's message as said (lower case), for the time and date rules
    raw_recent: tuple[str, ...] = ()
    reference: date | None = None
    offered: str = ""  # the assistant's last reply (lower case): what it offered, for "就这家" (dskit.offers)
    offers: tuple = ()  # structured offers of the last reply: ((task, slot, (values...)), ...)
    cased: str = ""  # this turn's message as said, in its own letter case (``raw`` before lower-casing)

    def keeping_recent(self, keep: list[int]) -> Evidence:
        """The same evidence with only the recent turns at ``keep`` (indexes into ``recent``). Written out
        field by field, not with ``dataclasses.replace``: a code node carries this class as a plain one."""
        return Evidence(message=self.message, recent=tuple(self.recent[i] for i in keep), raw=self.raw,
                        raw_recent=tuple(self.raw_recent[i] for i in keep), reference=self.reference,
                        offered=self.offered, offers=self.offers, cased=self.cased)

    def texts(self, recent: bool) -> list[tuple[str, str]]:
        """(folded, raw) texts to search: this message, and the recent turns with ``recent``."""
        pairs = [(self.message, self.raw)]
        if recent:
            pairs += list(zip(self.recent, self.raw_recent))
        return pairs


def fold(text: Any) -> str:
    """Text as the rules compare it: NFKC (full-width -> half-width), lower case, only letters,
    digits and CJK characters (spaces, punctuation and symbols do not count)."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    text = unicodedata.normalize("NFKC", text[:MAX_EVIDENCE_CHARS]).lower()
    return "".join(ch for ch in text if ch.isalnum())


def _raw(text: str) -> str:
    return unicodedata.normalize("NFKC", text[:MAX_EVIDENCE_CHARS]).lower()


def parse_reference_date(value: Any) -> date | None:
    """A reference date from a date, or "YYYY-MM-DD" text (anything else: None)."""
    if isinstance(value, date):
        return value
    if isinstance(value, str) and value.lstrip()[:1].isdecimal():  # what \s* then \d needs: no compile for ""
        match = re.match(r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})", value)
        if match:
            try:
                return date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
            except ValueError:
                return None
    return None


def make_evidence(query: Any, recent: Any = (), reference_date: Any = None, offered: Any = "",
                  offers: Any = ()) -> Evidence | None:
    """The evidence of a turn; None (grounding off) when there is no user message at all.

    ``recent``: earlier user messages, oldest first (a history's user turns); only the last
    :data:`RECENT_TURNS` count. ``reference_date``: "YYYY-MM-DD" (or a date) that 明天/上个月 are
    counted from; without it, only dates the user wrote out in full are normalised. ``offered``: the
    assistant's last reply; ``offers``: the values it offered per slot (dskit.offers).
    """
    if query is None:
        return None
    message = query if isinstance(query, str) else str(query)
    earlier = [r if isinstance(r, str) else str(r) for r in (recent or []) if r]
    earlier = earlier[-RECENT_TURNS:][::-1]
    return Evidence(message=fold(message), recent=tuple(fold(r) for r in earlier), raw=_raw(message),
                    raw_recent=tuple(_raw(r) for r in earlier), reference=parse_reference_date(reference_date),
                    offered=_raw(offered) if isinstance(offered, str) else "",
                    offers=tuple(o for o in (offers or ()) if isinstance(o, tuple) and len(o) == 3),
                    cased=unicodedata.normalize("NFKC", message[:MAX_EVIDENCE_CHARS]))


# ---------------------------------------------------------------- numbers, times, dates

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


# What follows the hour of a clock time or the day of a date: such a number is not a count ("8点" is
# not eight people, "十八号" not eighteen).
_NOT_A_COUNT = re.compile(r"\s{0,2}(?:点|時|时(?!间|候)|号|日|月|年|[:：]\d|am\b|pm\b|a\.m|p\.m|o'clock"
                          r"|楼|层|栋|幢|单元|室|路|排|号线|(?:st|nd|rd|th)\b|floor"
                          # words that start with 一 and count nothing: "查一下", "一些", "一起", "一直", "一定"
                          r"|下(?!午)|些|起|直|样|般|定|会儿?)")
# What follows a count of something other than people: "买一份" is one policy, not one insured person.
_NOT_PEOPLE = re.compile(r"\s{0,2}(?:份|张|间|晚|天|元|块|次|件|台|辆|套|瓶|杯|碗|盘|道|本|斤|公斤|公里|米|岁|小时|分钟"
                         r"|周|个月|个小时|个星期)")
# A slot that counts people: its name, label or description says so.
_PEOPLE_WORDS = ("人数", "几位", "几个人", "多少人", "people", "persons", "guests", "party size", "travelers",
                 "travellers", "passengers", "headcount")
# A numeral right after these names a weekday or a rank, not a count ("周六" is Saturday, not six).
_NOT_A_COUNT_AFTER = re.compile(r"(?:周|星期|礼拜|第|no\.?|#)\s{0,1}$", re.IGNORECASE)
# Colloquial numbers: "就我俩" is two.
_COLLOQUIAL_NUMBERS = {"俩": 2, "仨": 3, "a couple of": 2}


def numbers_in(raw: str, counts: bool = False, people: bool = False) -> set[float]:
    """Every number the text states: Arabic, Chinese (两, 十二, 二十五) and English words; with ``counts``,
    only those that can be a count or an amount (not the hour of a time, the day of a date, a weekday
    or a rank: "周六" is not six); with ``people`` too, not a count of other things ("一份", "两间")."""
    def keep(match: re.Match) -> bool:
        return not counts or not (_NOT_A_COUNT.match(raw, match.end())
                                  or _NOT_A_COUNT_AFTER.search(raw[max(0, match.start() - 4):match.start()])
                                  or (people and _NOT_PEOPLE.match(raw, match.end())))

    # Each pattern is tried only on a text that holds what it needs (a decimal digit, a Chinese numeral,
    # an English number word): a code node compiles every pattern it uses on every run, 0.3-2 M
    # instructions each, and most messages hold no English number.
    found = {float(m.group()) for m in _ARABIC_RE.finditer(raw) if keep(m)} \
        if any(ch.isdecimal() for ch in raw) else set()
    for match in _CN_NUM_RE.finditer(raw) if any(ch in raw for ch in _CN_NUM) else ():
        if not keep(match):
            continue
        value = parse_cn_number(match.group())
        if value is not None:
            found.add(float(value))
        for ch in match.group():  # "三四个人": each digit is a candidate too
            single = parse_cn_number(ch)
            if single is not None and ch not in "十百千万":
                found.add(float(single))
    for match in _EN_NUMBER_RE.finditer(raw) if any(word in raw for word in _EN_NUMBERS) else ():
        found.add(float(_EN_NUMBERS[match.group(1)]))
    found.update(float(n) for word, n in _COLLOQUIAL_NUMBERS.items() if word in raw)
    return found


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
_CLOCK_BEFORE_ONE = frozenset("到在是为成约至从或和及与订定等天日号今明后午晨钟凌吧了") | frozenset(_CN_NUM)


def _a_bit(raw: str, match: re.Match) -> bool:
    """Whether a clock match is the "一点" that means "a bit": the hour 一 with 点 and nothing after it
    that tells the time (分, 半, 钟), and before it a word that does not set a time — "晚一点"/"早一点" (a bit
    later, earlier) included; "一点点", "一点儿", "一点都不" never tell a time."""
    period, hour_text = match.group(1), match.group(2)
    if hour_text != "一" or match.group(3) or raw[match.end(2):match.end()].strip() != "点":
        return False
    after = raw[match.end():match.end() + 1]
    if after and after in "点儿都也":
        return True
    if period:
        return period in ("早", "晚")
    before = raw[:match.start(2)].rstrip()[-1:]
    return bool(before) and "\u4e00" <= before <= "\u9fff" and before not in _CLOCK_BEFORE_ONE


def times_in(raw: str) -> set[str]:
    """Clock times the text states, as HH:MM: "晚上七点" -> 19:00, "8点" -> 08:00 and 20:00, "7:30 pm"."""
    found: set[str] = set()
    for match in _CLOCK_RE.finditer(raw):
        period, hour_text, minute_text = match.group(1), match.group(2), match.group(3)
        hour = _number(hour_text)
        minute = _minutes(minute_text)
        if hour is None or not 0 <= hour <= 24 or hour != int(hour) or hour_text == "一" and _a_bit(raw, match):
            continue
        if minute >= 0:
            found.update(_clock(int(hour), minute, period))
        # "八点三个人": a lone digit after 点 without 分 may start the next phrase, not the minutes
        if minute_text and not match.group(4) and minute_text not in ("半", "一刻", "三刻") and len(minute_text) == 1:
            found.update(_clock(int(hour), 0, period))
    if not found and re.search(r"中午|正午|\bnoon\b", raw):  # noon with no hour said
        found.add("12:00")
    for match in _EN_CLOCK_RE.finditer(raw):
        hour, minute, suffix = int(match.group(1)), int(match.group(2) or 0), match.group(3)
        if hour > 24 or minute > 59:
            continue
        period = "下午" if suffix.startswith("p") else "上午" if suffix.startswith("a") else None
        found.update(_clock(hour, minute, period))
    for match in _EN_SPOKEN_CLOCK_RE.finditer(raw):
        fraction, direction, hour_text, oclock, period_words = match.groups()
        if not (fraction or oclock or period_words):
            continue
        hour = int(hour_text) if hour_text.isdigit() else _EN_HOUR_WORDS.index(hour_text) + 1
        minute = 0 if not fraction else 30 if fraction == "half" else 15
        if direction == "to":
            hour, minute = hour - 1, 60 - minute
        if 0 <= hour <= 24:
            found.update(_clock(hour % 24, minute, _EN_PERIODS.get(period_words or "")))
    return found


def is_clock(value: Any) -> bool:
    """Whether a value is a clock time as slots store it (HH:MM, "7:00" too)."""
    return isinstance(value, str) and _TIME_VALUE.match(value.strip()) is not None


def same_half_day(value: Any, old: Any, raw: str) -> Any:
    """An hour said without morning or evening ("改成七点") keeps the half of the day of the time it
    replaces: 20:00 -> "七点" is 19:00, not the 07:00 a model may write; 08:00 -> "nine" is 09:00.
    Any other value comes back as it is."""
    new, before = (_TIME_VALUE.match(v) if isinstance(v, str) else None for v in (value, old))
    if not new or not before:
        return value
    hour, minute = int(new.group(1)), new.group(2)
    other = hour + 12 if hour < 12 else hour - 12
    if (hour >= 12) == (int(before.group(1)) >= 12) or not 0 <= other <= 23:
        return value
    candidate = f"{other:02d}:{minute}"
    said = times_in(raw)
    return candidate if candidate in said and f"{hour:02d}:{minute}" in said else value


def clock_value(text: Any) -> str | None:
    """The one clock time a text states, as HH:MM ("晚上七点" -> 19:00, "中午" -> 12:00); None when it
    states none, or several ("8点" is 08:00 or 20:00). For a model that writes the user's words into
    a slot that wants HH:MM."""
    if not isinstance(text, str) or len(text) > 40:
        return None
    found = times_in(_raw(text))
    return next(iter(found)) if len(found) == 1 else None


def split_clock(text: Any) -> tuple[str, str | None]:
    """(the text without its clock phrase, the one clock time it names) — "周五晚上8点" -> ("周五",
    "20:00"), "周日中午" -> ("周日", "12:00"); (text, None) when it names no single clock time."""
    if not isinstance(text, str) or len(text) > 60:
        return text, None
    raw = _raw(text)
    match = next((m for m in _CLOCK_RE.finditer(raw) if m.group(1)), None) or re.search(r"中午|正午", raw)
    if match is None:
        return text, None
    clock = clock_value(match.group())
    rest = (raw[:match.start()] + raw[match.end():]).strip(" ，,、的")
    return (rest, clock) if clock and rest else (text, None)


def _clock(hour: int, minute: int, period: str | None) -> set[str]:
    hours: set[int]
    if period in _PM:
        hours = {hour + 12 if hour < 12 else hour % 24}
    elif period == "中午":
        hours = {hour if hour >= 11 else hour + 12}
    elif period in _AM:
        hours = {0 if hour == 12 and period == "凌晨" else hour}
    else:
        hours = {hour % 24} | ({hour + 12} if hour < 12 else set())
    return {f"{h:02d}:{minute:02d}" for h in hours if 0 <= h <= 23}


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


def one_shift_said(raw: str) -> bool:
    """Whether the message states one shift of a time plainly: one duration and one direction
    ("推迟半小时", "half an hour later"), the direction not negated ("不用提前一小时了" is none)."""
    words = [w for w in _EARLIER + _LATER if w in raw]
    if not words:
        return False
    minutes, _ = durations_in(raw)
    spans = [(m.start(), m.end()) for w in words for m in re.finditer(re.escape(w), raw)]
    return len(minutes) == 1 and len({w in _LATER for w in words}) == 1 \
        and not any(negated_at(raw, start, end) for start, end in spans)


def shifted_times(old: Any, raw: str) -> set[str]:
    """The times ``old`` (HH:MM) becomes by the shifts the message states ("提前一小时" -> 18:00 from 19:00;
    both directions when it names none)."""
    match = _TIME_VALUE.match(old) if isinstance(old, str) else None
    if not match:
        return set()
    base = int(match.group(1)) * 60 + int(match.group(2))
    minutes, signs = durations_in(raw)
    return {f"{((base + s * m) // 60) % 24:02d}:{(base + s * m) % 60:02d}" for m in minutes for s in signs}


def _add_months(day: date, months: int) -> str:
    index = day.year * 12 + day.month - 1 + months
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def _iso(day: date) -> str:
    return day.isoformat()


def dates_in(raw: str, reference: date | None) -> set[str]:
    """Dates (YYYY-MM-DD) and months (YYYY-MM) the text states, relative ones against ``reference``:
    明天, 后天, 周五 (this week's and the next), 下周三, 3月5号, 上个月, 3月份; and dates written in full."""
    found: set[str] = set()
    for match in _ISO_DATE_RE.finditer(raw):
        try:
            found.add(_iso(date(int(match.group(1)), int(match.group(2)), int(match.group(3)))))
        except ValueError:
            pass
    for match in _ISO_MONTH_RE.finditer(raw):
        if 1 <= int(match.group(2)) <= 12:
            found.add(f"{int(match.group(1)):04d}-{int(match.group(2)):02d}")
    if reference is None:
        return found
    for word, days in _DAY_WORDS.items():
        if word in raw:
            found.add(_iso(reference + timedelta(days=days)))
    monday = reference - timedelta(days=reference.weekday())
    for match in _WEEKDAY_RE.finditer(raw):
        prefix, day = match.group(1) or "", _WEEKDAYS[match.group(2)]
        weeks = {"下下": 2, "下下个": 2, "下": 1, "下个": 1, "上": -1, "上个": -1}.get(prefix)
        offsets = {weeks} if weeks is not None else {0} if prefix else {0, 1}
        found.update(_iso(monday + timedelta(days=7 * w + day)) for w in offsets)
    for match in _EN_WEEKDAY_RE.finditer(raw):
        prefix, day = (match.group(1) or "").strip(), _EN_WEEKDAYS.index(match.group(2))
        offsets = {"next": {1}, "last": {-1}, "this": {0}}.get(prefix, {0, 1})
        found.update(_iso(monday + timedelta(days=7 * w + day)) for w in offsets)
    for match in _MONTH_DAY_RE.finditer(raw):
        month, day = _number(match.group(1)), _number(match.group(2))
        for year in (reference.year, reference.year + 1):
            try:
                found.add(_iso(date(year, int(month or 0), int(day or 0))))
            except ValueError:
                pass
    for match in _DAY_ONLY_RE.finditer(raw):
        day = _number(match.group(1))
        for months in (0, 1):
            try:
                first = date.fromisoformat(_add_months(reference, months) + "-01")
                found.add(_iso(first.replace(day=int(day or 0))))
            except ValueError:
                pass
    for word, months in _MONTH_WORDS.items():
        if word in raw:
            found.add(_add_months(reference, months))
    for match in _MONTH_RE.finditer(raw):
        month = _number(match.group(1))
        if month is not None and 1 <= month <= 12:
            found.update(f"{year:04d}-{int(month):02d}" for year in (reference.year, reference.year - 1))
    return found



def date_spans(raw: str) -> list[tuple[int, int]]:
    """Where the text states a date ("下周三", "明天", "3月5号", "saturday"), in order; of overlapping
    words the longest ("大后天" holds "后天"): what a slot that keeps the user's words would hold."""
    # Each pattern called by name: a code node compiles a module pattern on its first use only
    # (dskit.tooling.codegen.lean), which a tuple of the patterns would defeat.
    found = (*_ISO_DATE_RE.finditer(raw), *_WEEKDAY_RE.finditer(raw), *_EN_WEEKDAY_RE.finditer(raw),
             *_MONTH_DAY_RE.finditer(raw), *_DAY_ONLY_RE.finditer(raw))
    spans = [(m.start(), m.end()) for m in found]
    for word in _DAY_WORDS:
        start = raw.find(word)
        while start >= 0:
            spans.append((start, start + len(word)))
            start = raw.find(word, start + 1)
    kept: list[tuple[int, int]] = []
    for start, end in sorted(spans, key=lambda span: (span[0] - span[1], span[0])):
        if not any(start < e and s < end for s, e in kept):
            kept.append((start, end))
    return sorted(kept)


# ---------------------------------------------------------------- values

def text_grounded(value: str, folded: str, raw: str | None = None) -> bool:
    """A free-text value in what the user said (:mod:`dskit.matching`): English by whole words, Chinese
    as a part of the text that cuts no number and joins no two words, or nearly (same numbers, same
    contrasts). ``raw``: the text as said (its spaces and punctuation mark the words); without it the
    folded text is read as one word."""
    target = "".join(segments(str(value)))  # folded, a decimal point kept inside its number
    if not target or not folded:
        return False
    text = raw if raw is not None else folded
    if target.isascii():  # 26 letters are in any sentence: English is matched by its words
        return words_match(str(value), text)
    if exact_match(target, text, str(value)):
        return True
    if target in "".join(segments(text)):  # there, but only as part of other words ("八号" in "十八号")
        return False
    if near_match(target, text):
        return True
    normal = normal_form(str(value))  # "本月" for "这个月", "100元" for "一百块": the normal form of what was said
    said = normal_form(text)
    if exact_match("".join(segments(normal)), said, normal) or range_said(normal, said):
        return True
    pieces = segments(str(value))  # "中式餐厅 早餐服务": several things said apart, each said
    return len(pieces) > 1 and all(text_grounded(piece, folded, raw) for piece in pieces)


def _windows(text: str) -> set[str]:
    folded = fold(text)
    if len(folded) <= 2:
        return {folded} if folded else set()
    if folded.isascii():
        return {w for w in re.split(r"[^a-z0-9]+", text.lower()) if len(w) >= 3}
    return {folded[i:i + 2] for i in range(len(folded) - 1)}


def common_words(task: TaskSpec, slot: str) -> frozenset[str]:
    """Words of a task's label and of its other slots' names, labels, descriptions and questions: a
    message that says them does not name ``slot`` ("table" in "book us a table" does not name the slot
    "quiet table")."""
    words: set[str] = set()
    for text in (task.name.replace("_", " "), task.label,
                 *(t for other in task.slots.values() if other.name != slot
                   for t in (other.name.replace("_", " "), other.label, other.description, other.ask))):
        if text:
            words |= _windows(text)
    return frozenset(words)


# Characters of the words that carry no meaning of their own in a question or description ("请问您的…是").
_QUESTION_FUNCTION_CHARS = frozenset("的是您你请问吗呢了吧一个哪几多少什么怎这那要需和或与及在为把被给让")
_GENERIC_WORDS = frozenset({"用户", "原话", "保留", "输出", "填写", "告诉", "提供", "说明", "格式", "例如", "比如"})


def slot_words(spec: SlotSpec) -> set[str]:
    """The words that name a slot: its label and name; for a slot without a label (the catalog gives
    it none), also the content words of its description and its question ("电话" for a slot
    ``contact`` whose question is "请问您的联系电话是？")."""
    texts = [spec.name.replace("_", " ")] + ([spec.label] if spec.label else [spec.description, spec.ask])
    words: set[str] = set()
    for index, text in enumerate(t for t in texts if t):
        found = _windows(text)
        if index > 0 and not spec.label:
            found = {w for w in found if w.isascii() or not (set(w) & _QUESTION_FUNCTION_CHARS or w in _GENERIC_WORDS)}
        words |= found
    return words


def slot_touched(spec: SlotSpec, folded: str, common: frozenset[str] = frozenset()) -> bool:
    """Whether a text names the slot: its label or name, two characters (English: a word) of it that
    are not ``common`` ("地址" for 安装地址; see :func:`common_words`), or one of its options or aliases."""
    if not folded:
        return False
    names = {spec.name.replace("_", " ")} | ({spec.label} if spec.label else set())
    if any(fold(name) and fold(name) in folded for name in names):
        return True
    if any(w in folded for w in slot_words(spec) - common):
        return True
    options = [str(o) for o in spec.enum] + [str(a) for a in spec.aliases]
    return any(fold(o) and fold(o) in folded for o in options)


# English words of a question that name nothing ("Will the trip include climbing?" is named by "climbing").
_QUESTION_STOPWORDS = frozenset({"will", "would", "the", "your", "you", "any", "other", "include", "includes", "does",
                                 "have", "has", "want", "need", "like", "please", "there", "which", "what", "this",
                                 "that", "with", "for", "and", "are", "trip", "should", "could", "can"})


def slot_mentions(spec: SlotSpec, raw: str, common: frozenset[str] = frozenset(),
                  asked: bool = False) -> list[tuple[int, int]]:
    """Where a text names the slot (as :func:`slot_touched` finds it), as (start, end) spans of ``raw``;
    with ``asked``, the content words of the slot's question name it too."""
    found: list[tuple[int, int]] = []
    extra = {w for w in _windows(spec.ask) if w not in _QUESTION_STOPWORDS and (w.isascii() or not (
        set(w) & _QUESTION_FUNCTION_CHARS))} if asked and spec.ask else set()
    for name in (n for n in (spec.label, spec.name.replace("_", " ")) if n):
        for word in {name.lower()} | (((_windows(name) if spec.label else slot_words(spec)) | extra) - common):
            pattern = (r"(?<![a-z])" + re.escape(word) + r"(?![a-z])") if word.isascii() else re.escape(word)
            found += [m.span() for m in re.finditer(pattern, raw)] if word else []
    spans: list[tuple[int, int]] = []
    for start, end in sorted(found):  # overlapping pieces of one mention make one span ("高风"+"风险"+...)
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))
    return spans


def bool_said(spec: SlotSpec, raw: str, common: frozenset[str] = frozenset(), asked: bool = False) -> bool | None:
    """The yes or no a message gives a yes/no slot it names: True when it names the slot un-negated
    ("要个包间"), False when every mention is negated ("不要包间", "包间就不用了", "no private room"),
    None when it does not name it, says it does not matter, or only asks about it ("你们包间有最低消费
    吗？" is a question, not a wish). ``asked``: the slot was asked last turn, so the content words of its
    question name it too ("No climbing" answers "Will the trip include climbing …?")."""
    spans = [(a, b) for a, b in slot_mentions(spec, raw, common, asked)
             if not _in_question(raw, a, b) or _topic_answer(raw, a, b) is not None]
    if not spans or any(indifferent_at(raw, start, end) for start, end in spans):
        return None  # not named, or "无所谓": neither yes nor no
    return any(_answered(raw, start, end) for start, end in spans)


def _in_question(raw: str, start: int, end: int) -> bool:
    """Whether the words at ``raw[start:end]`` stand in a clause that asks something."""
    left = max((raw.rfind(ch, 0, start) for ch in "，,。.！!？?；;\n"), default=-1) + 1
    rights = [i for i in (raw.find(ch, end) for ch in "，,。.！!？?；;\n") if i >= 0]
    right = min(rights) if rights else len(raw)
    return raw[right:right + 1] in ("？", "?") or asks(raw[left:right])


def _topic_answer(raw: str, start: int, end: int) -> bool | None:
    """A mention alone in its clause, answered right after ("包间？不需要", "private room? nah"): that
    bare answer; None otherwise."""
    rest = raw[end:].lstrip()
    alone = not raw[:start].rstrip().rstrip("，,。.！!？?；;") or raw[:start].rstrip()[-1:] in "，,。.！!？?；;"
    if alone and rest[:1] in "？?，,":
        return bare_answer(re.split(r"[，,。.！!？?；;]", rest[1:].strip())[0])
    return None


def _answered(raw: str, start: int, end: int) -> bool:
    """The polarity of one mention: the answer after it when it stands alone as a topic, else negated or not."""
    answer = _topic_answer(raw, start, end)
    return answer if answer is not None else not negated_at(raw, start, end)


_BARE_YES = ("要", "需要", "有", "要的", "需要的", "有的", "要吧", "好", "好的", "是", "是的", "对", "可以", "yes", "yeah",
             "sure", "please", "yes please", "ok", "okay")
_BARE_NO = ("不要", "不用", "不需要", "没有", "无", "不", "不是", "不用了", "不要了", "不需要了", "不考虑", "没必要", "不包括",
            "no", "nope", "no thanks", "no thank you", "none", "nah", "no need", "not needed")


def bare_answer(raw: str) -> bool | None:
    """A bare yes or no to the question just asked ("要", "不用了", "no thanks"); None for anything else."""
    text = re.sub(r"[\s，,。.！!~]+", " ", raw.lower()).strip().rstrip("吧啊呀的了").strip()
    if text in _BARE_NO:
        return False
    if text in _BARE_YES:
        return True
    return None


def other_slot_value(task: TaskSpec, slot: str, value: Any) -> str:
    """The other slot of the task whose option or alias ``value`` is ("城东" is the area's, an alias
    of 东区), when ``slot`` itself has no options; "" otherwise. One thing said fills one slot. A list
    of one value (["城东"] for a slot that takes one text) is that value."""
    spec = task.slots.get(slot)
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if spec is None or spec.enum or not isinstance(value, str) or not fold(value):
        return ""
    target = fold(value)
    for other in task.slots.values():
        if other.name != slot and any(fold(str(w)) == target or _option_and_filler(str(w), value)
                                      for w in (*other.enum, *other.aliases)):
            return other.name
    return ""


# Words that only place or soften an option ("somewhere downtown", "城东附近"): with them, the option is still
# all the value says.
_FILLER_EN = frozenset({"somewhere", "anywhere", "around", "near", "in", "the", "a", "an", "at", "area", "part",
                        "side", "of", "some", "place", "please", "maybe", "preferably", "ideally"})
_FILLER_ZH = ("附近", "一带", "周边", "周围", "那边", "这边", "区域", "地区", "那块", "这块", "那儿", "那里", "这里",
              "左右", "最好", "的", "吧", "在")


def _option_and_filler(option: str, value: str) -> bool:
    """Whether ``value`` is ``option`` with only placing or softening words around it ("Somewhere downtown"
    for the area's "downtown"): the option's, not a value of another slot."""
    if option.isascii():
        words, option_words = value.lower().split(), option.lower().split()
        size = len(option_words)
        for i in range(len(words) - size + 1):
            if words[i:i + size] == option_words:
                rest = words[:i] + words[i + size:]
                return bool(rest) and all(w.strip(".,!?") in _FILLER_EN for w in rest)
        return False
    folded, target = fold(value), fold(option)
    if not target or target not in folded or folded == target:
        return False
    rest = folded.replace(target, "", 1)
    for filler in _FILLER_ZH:
        rest = rest.replace(filler, "")
    return not rest


def _option_grounded(spec: SlotSpec, value: Any, folded: str, raw: str | None = None) -> bool:
    """An option value whose text or one of whose aliases the text holds, as a whole word or number
    ("三百兆" does not hold the option 百兆)."""
    if value not in spec.enum and value not in spec.aliases.values():
        return False  # not an option: a number or a text is grounded by its own rules
    words = [str(value)] + [str(alias) for alias, target in spec.aliases.items() if target == value]
    text = raw if raw is not None else folded
    # Compared as text_grounded does: folded with a decimal point kept inside its number ("4.5分")
    targets = [("".join(segments(w)), w) for w in words]
    return any(t and (words_match(w, text) if t.isascii() else exact_match(t, text, w)) for t, w in targets)


def _one_value_grounded(spec: SlotSpec, value: Any, old: Any, folded: str, raw: str, ev: Evidence,
                        asked: bool, current: bool, common: frozenset[str]) -> bool:
    if spec.type == "boolean":
        said = bool_said(spec, raw, common, asked and current)
        if said is None and asked and current:
            said = bare_answer(raw)
        return said is not None and said == bool(value)
    if _option_grounded(spec, value, folded, raw):
        return True
    if spec.type in ("integer", "number"):
        if not isinstance(value, (int, float)):
            return False
        numbers = numbers_in(raw, counts=True, people=counts_people(spec))
        if float(value) in numbers:
            return True
        return current and isinstance(old, (int, float)) and not isinstance(old, bool) \
            and any(abs(float(value) - float(old)) == n for n in numbers if n)
    if not isinstance(value, str):
        return False
    if _TIME_VALUE.match(value):
        clock = f"{int(value.split(':')[0]):02d}:{value.split(':')[1]}"
        if clock in times_in(raw) or (current and clock in shifted_times(old, raw)):
            return True
    if _DATE_VALUE.match(value) and value in dates_in(raw, ev.reference):
        return True
    return text_grounded(value, folded, raw)


def counts_people(spec: SlotSpec) -> bool:
    """Whether a number slot counts people (its name, label or description says so): "一份" fills none."""
    words = f"{spec.name} {spec.label} {spec.description}".lower().replace("_", " ")
    return spec.type in ("integer", "number") and any(word in words for word in _PEOPLE_WORDS)


def value_grounded(spec: SlotSpec, value: Any, ev: Evidence, *, old: Any = None, asked: bool = False,
                   recent: bool = True, common: frozenset[str] = frozenset()) -> bool:
    """Whether ``value`` (already coerced to the slot) is traceable to this message, or with
    ``recent`` to a recent user turn too. ``old``: the slot's value before, for relative changes
    ("提前一小时"); ``asked``: the slot was asked last turn, so a bare "要"/"不用" answers it;
    ``common``: words that do not name the slot (:func:`common_words`)."""
    items = value if isinstance(value, list) else [value]
    for item in items:
        if not any(_one_value_grounded(spec, item, old, folded, raw, ev, asked, index == 0, common)
                   for index, (folded, raw) in enumerate(ev.texts(recent))):
            return False
    return True


def confirm_grounded(ev: Evidence) -> bool:
    """A yes to a confirmation question, said as words (:func:`dskit.cues.says_yes`): a clause that only
    says yes, none that asks or says no."""
    return says_yes(ev.raw)


def asks_something(ev: Evidence) -> bool:
    """Whether the message asks a question (then it is not a yes by itself: the question is answered)."""
    return asks(ev.raw)


def cancel_grounded(ev: Evidence, spec: TaskSpec | None) -> bool:
    """A cancellation, said as words (:func:`dskit.cues.says_cancel`): a clause of cancel words and
    references to the task, never a preference that starts with one ("不要辣的")."""
    return says_cancel(ev.raw, () if spec is None else task_words(spec))


def task_words(spec: TaskSpec) -> tuple[str, ...]:
    """The words that name a task: its label, name (also with spaces) and display name, and the leading
    words of a Chinese label, which name the thing the task is about ("路由器" of 路由器租赁, "宽带" of
    宽带办理: "路由器不要了" drops the rental)."""
    words = [w for w in (spec.label, spec.name, spec.name.replace("_", " "), spec.display) if w]
    label = spec.label or ""
    if label and not label.isascii():
        words += [label[:end] for end in range(2, len(label))]
    return tuple(words)


def reset_grounded(ev: Evidence) -> bool:
    """Starting over, said as a clause of its own (:func:`dskit.cues.says_reset`)."""
    return says_reset(ev.raw)


def revert_said(ev: Evidence) -> bool:
    """Words that take a change back (:func:`dskit.cues.says_revert`; a bare 还是 is not one)."""
    return says_revert(ev.raw)


def task_mentioned(spec: TaskSpec, catalog: Catalog | None, folded: str) -> bool:
    """Whether a text names the task: its label or name, two characters of its label that no other
    task's label has ("话费" for 话费查询, not "查询" when 查询天气 exists too), or two words of its
    description and examples that no other task uses ("连不"+"不上" for a repair whose example is
    "宽带连不上")."""
    if not folded:
        return False
    for name in (spec.name.replace("_", " "), spec.label):
        if name and fold(name) in folded:
            return True
    others = [t for t in (catalog.tasks.values() if catalog is not None else []) if t.name != spec.name]
    other_labels = set().union(*(_windows(t.label or t.name) for t in others)) if others else set()
    if any(w in folded and w not in other_labels for w in _windows(spec.label or spec.name)):
        return True
    if spec.label and spec.name.isascii():  # "check my phone bill" names bill_enquiry (labelled 话费查询)
        other_names = set().union(*(_windows(t.name.replace("_", " ")) for t in others)) if others else set()
        if any(w in folded for w in _windows(spec.name.replace("_", " ")) - other_names):
            return True
    other_words = other_labels.union(*(_task_words(t) for t in others)) if others else other_labels
    return len({w for w in _task_words(spec) - other_words if w in folded}) >= 2


# Characters of the words that carry no meaning of their own in a task's examples ("我想", "可以").
_FUNCTION_CHARS = frozenset("我你您他她它的是了吗呢吧啊呀么一下个请帮给在有和与就也都还要想能可以这那")
_FUNCTION_WORDS = {"the", "and", "for", "you", "your", "what", "how", "can", "please", "with", "this", "that", "is",
                   "are", "my", "me", "want", "would", "like", "need"}


def asks_about_task(spec: TaskSpec, folded: str) -> bool:
    """Whether a text shares a content word with the task's own words (label, name, description,
    examples): "卡里还剩多少钱" with an enquiry whose example is "我的账户余额是多少" ("多少"). Weaker
    than :func:`task_mentioned` (the word may be another task's too): it only tells a question *about*
    the task from one about anything else ("拉萨冷不冷啊" shares nothing with a balance enquiry)."""
    words = _task_words(spec) | _windows(spec.label or "") | _windows(spec.name.replace("_", " "))
    return any(w in folded for w in words
               if not set(w) <= _FUNCTION_CHARS and w not in _FUNCTION_WORDS)


def _task_words(spec: TaskSpec) -> set[str]:
    """Two-character words (English: words) of a task's description and examples, digits left out."""
    words: set[str] = set()
    for text in (spec.description, *spec.examples):
        words |= {w for w in _windows(text) if not any(ch.isdigit() for ch in w)}
    return words


__all__ = ["asks_about_task", "task_words", "Evidence", "make_evidence", "fold", "value_grounded", "slot_touched", "common_words", "other_slot_value",
           "task_mentioned",
           "confirm_grounded", "asks_something", "cancel_grounded", "reset_grounded", "revert_said", "numbers_in", "times_in",
           "dates_in", "date_spans", "durations_in", "text_grounded", "parse_reference_date", "clock_value", "split_clock",
           "same_half_day", "is_clock",
           "RECENT_TURNS"]
