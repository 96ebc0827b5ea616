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

from ..catalog.catalog import Catalog, SlotSpec, TaskSpec
from .clock import (answered_hours, clock_form, clock_value, durations_in, is_clock, read_clocks, same_half_day, shift_said, shifted_times,
                    split_clock, times_in)
from .counts import changes_in, numbers_in
from ..base.numerals import parse_cn_number
from .cues import DOING_EN, DOING_ZH, QUESTION_WORDS_ZH, WANT_ZH, asks, asks_about, clauses, social_clause, indifferent_at, negated_at, says_cancel, says_reset, says_revert, says_yes
from .matching import exact_match, near_match, normal_form, range_said, segments, words_match
from .negation import denies_only

# Longest message (and recent turn) the rules read: grounding is lexical, and a pasted document
# must not make every value look grounded or cost seconds of matching.
MAX_EVIDENCE_CHARS = 2_000
# Recent user turns a value may come from, besides this message.
RECENT_TURNS = 4

_CN_NUM = "零〇一二两三四五六七八九十百千万"

# Dates, against the reference date.
_DAY_WORDS = {"今天": 0, "今日": 0, "today": 0, "明天": 1, "明日": 1, "tomorrow": 1, "后天": 2, "大后天": 3,
              "昨天": -1, "yesterday": -1, "前天": -2}
_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5,
             "1": 0, "2": 1, "3": 2, "4": 3, "5": 4, "6": 5, "7": 6}
# "查一下周六" is this Saturday: the 下 of "一下" ("a bit") is not "next".
_WEEKDAY_RE = re.compile(r"((?<!一)下下个?|(?<!一)下个?|这个?|本|上个?)?(?:周|星期|礼拜)([一二三四五六日天末1-7])")
_EN_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_EN_WEEKDAY_RE = re.compile(r"\b(next |this |last )?(" + "|".join(_EN_WEEKDAYS) + r")\b")
_ISO_DATE_RE = re.compile(r"(\d{4})\s{0,2}[-/.年]\s{0,2}(\d{1,2})\s{0,2}[-/.月]\s{0,2}(\d{1,2})")
_ISO_MONTH_RE = re.compile(r"(\d{4})\s{0,2}[-/.年]\s{0,2}(\d{1,2})(?!\d)")
_MONTH_DAY_RE = re.compile(rf"(\d{{1,2}}|[{_CN_NUM}]{{1,3}})\s{{0,2}}月\s{{0,2}}(\d{{1,2}}|[{_CN_NUM}]{{1,3}})\s{{0,2}}[日号]")
_DAY_ONLY_RE = re.compile(rf"(?<![月\d{_CN_NUM}])(\d{{1,2}}|[{_CN_NUM}]{{1,3}})\s{{0,2}}[日号]")
_MONTH_RE = re.compile(rf"(\d{{1,2}}|[{_CN_NUM}]{{1,3}})\s{{0,2}}月(?!\s{{0,2}}(?:\d|[{_CN_NUM}])+\s{{0,2}}[日号])")
_MONTH_WORDS = {"本月": 0, "这个月": 0, "这月": 0, "当月": 0, "this month": 0, "上个月": -1, "上月": -1,
                "last month": -1, "上上个月": -2, "上上月": -2, "下个月": 1, "下月": 1, "next month": 1}
_YEAR_BEFORE = re.compile(r"(?:(\d{4})\s{0,2}年|[今去明前]年)\s{0,2}$")
_DATE_VALUE = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?$")

@dataclass(frozen=True)
class Evidence:
    """What the user said that the engine may trust this turn."""

    message: str  # this turn's message, folded
    recent: tuple[str, ...] = ()  # earlier user turns, newest first, folded
    raw: str = ""  # this turn's message as said (lower case), for the time and date rules
    raw_recent: tuple[str, ...] = ()
    reference: date | None = None
    offered: str = ""  # the assistant's last reply (lower case): what it offered, for "就这家" (dskit.rules.offers)
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


def one_shift_said(raw: str) -> bool:
    """Whether the message states one shift of a time plainly, the direction not negated
    (:func:`dskit.rules.clock.shift_said` with this engine's negation scope)."""
    return shift_said(raw, negated_at)


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
    assistant's last reply; ``offers``: the values it offered per slot (dskit.rules.offers).
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


# A slot that counts people: its name, label or description says so.
_PEOPLE_WORDS = ("人数", "几位", "几个人", "多少人", "people", "persons", "guests", "party size", "travelers",
                 "travellers", "passengers", "headcount")


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
        said = _YEAR_BEFORE.search(raw, 0, match.start())  # "2025年一月": the year said
        years = (int(said.group(1)),) if said and said.group(1) else (reference.year, reference.year - 1)
        if month is not None and 1 <= month <= 12:
            found.update(f"{year:04d}-{int(month):02d}" for year in years)
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


def month_spans(raw: str) -> list[tuple[int, int]]:
    """Where the text states a month and no day of it ("上个月", "3月份", "去年12月", "2026年3月", "last month"), in
    order; of overlapping words the longest, with the 月/份 that closes it; a month inside a date ("3月5号")
    is the date's, not a month of its own."""
    found = [(m.start(), m.end()) for m in (*_ISO_MONTH_RE.finditer(raw), *_MONTH_RE.finditer(raw))]
    for word in _MONTH_WORDS:
        start = raw.find(word)
        while start >= 0:
            found.append((start, start + len(word)))
            start = raw.find(word, start + 1)
    days = date_spans(raw)
    kept: list[tuple[int, int]] = []
    for start, end in sorted(found, key=lambda span: (span[0] - span[1], span[0])):
        end += raw[end:end + 1] == "月" and not raw[start:end].endswith("月")  # "2026年3" of 2026年3月
        end += raw[end:end + 1] == "份"
        year = _YEAR_BEFORE.search(raw, 0, start)  # "去年12月", "2025年一月": the year is the user's too
        start = year.start() if year else start
        if not any(start < e and s < end for s, e in (*kept, *days)):
            kept.append((start, end))
    return sorted(kept)


# ---------------------------------------------------------------- values

def text_grounded(value: str, folded: str, raw: str | None = None) -> bool:
    """A free-text value in what the user said (:mod:`dskit.rules.matching`): English by whole words, Chinese
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
    words: set[str] = set()
    for name in (n for n in (spec.label, spec.name.replace("_", " ")) if n):
        words |= {name.lower()} | (((_windows(name) if spec.label else slot_words(spec)) | extra) - common)
    # a yes/no slot's aliases for yes are its other names ("包厢": true beside the label 包间)
    words |= {str(a).lower() for a, target in spec.aliases.items() if spec.type == "boolean" and target is True}
    for word in words:
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
             if not asks_about(raw, a, b) or _topic_answer(raw, a, b) is not None]
    if not spans or any(indifferent_at(raw, start, end) for start, end in spans):
        return None  # not named, or "无所谓": neither yes nor no
    return any(_answered(raw, start, end) for start, end in spans)


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
        if float(value) in numbers_in(raw, counts=True, people=counts_people(spec)):
            return True
        return current and isinstance(old, (int, float)) and not isinstance(old, bool) \
            and any(abs(float(value) - float(old)) == n for n in changes_in(raw) if n)
    if not isinstance(value, str):
        return False
    if is_clock(value):  # a time is read by the clock grammar, never found as text ("11:15 at night" is 23:15)
        clock = clock_form(value)
        answered = asked and current and any(clock in c.values() for c in answered_hours(raw))
        return clock in times_in(raw) or answered or (current and clock in shifted_times(old, raw))
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
    """A yes to a confirmation question, said as words (:func:`dskit.rules.cues.says_yes`): a clause that only
    says yes, none that asks or says no."""
    return says_yes(ev.raw)


def asks_something(ev: Evidence) -> bool:
    """Whether the message asks a question (then it is not a yes by itself: the question is answered)."""
    return asks(ev.raw)


def cancel_grounded(ev: Evidence, spec: TaskSpec | None) -> bool:
    """A cancellation, said as words (:func:`dskit.rules.cues.says_cancel`): a clause of cancel words and
    references to the task, never a preference that starts with one ("不要辣的"); or a clause that refuses
    the task's doing and nothing else (:func:`refuses_doing`)."""
    return says_cancel(ev.raw, () if spec is None else task_words(spec)) or spec is not None and refuses_doing(spec, ev.raw)


def refuses_doing(spec: TaskSpec, raw: str) -> bool:
    """Whether a clause of the message is nothing but a refusal of the doing of the task's label: "不用修了",
    "好了，别修了" refuse the repair (修 of 故障报修); "包间不用订了" refuses the private room, "还没修" reports
    (:func:`dskit.rules.negation.denies_only`)."""
    label = spec.label or ""
    doings = [verb for verb in DOING_ZH if verb in label]
    return bool(doings) and any(denies_only(c, verb) for c in clauses(raw) for verb in doings)


def task_words(spec: TaskSpec) -> tuple[str, ...]:
    """The words that name a task: its label, name (also with spaces) and display name, and the leading
    words of a Chinese label, which name the thing the task is about ("路由器" of 路由器租赁, "宽带" of
    宽带办理: "路由器不要了" drops the rental)."""
    words = [w for w in (spec.label, spec.name, spec.name.replace("_", " "), spec.display) if w]
    label = spec.label or ""
    if label and not label.isascii():
        words += [label[:end] for end in range(2, len(label))]
    return tuple(words)


def nothing_beyond_task(spec: TaskSpec, raw: str, read: tuple[str, ...] = ()) -> bool:
    """Whether a message says nothing but the task: with the task's own words (its label and the pieces of
    it, its name), the doings of a request (查, 订, check) and the words that carry no meaning of their own
    (我, 帮, 一下, please, my) taken out, nothing is left. "帮我查一下话费" is only the bill enquiry; in
    "查一下我上个月的话费" the month is left, a value the task could take — unless it is among ``read``, the
    values the engine read from the message by their form (the month 上个月). A clause of greeting or
    thanks ("你好，", "，谢谢") says nothing of the task either way."""
    text = " ".join(c for c in clauses(raw.lower()) if not social_clause(c))
    words = {w.lower() for w in (*task_words(spec), *read)} | set(_windows(spec.label or "")) | {
        part for part in spec.name.lower().split("_") if len(part) >= 3}
    for word in sorted(words, key=len, reverse=True):
        text = text.replace(word, " ")
    if text.isascii():
        words = re.findall(r"[a-z0-9]+", text)
        return all(w in _FUNCTION_WORDS or w in DOING_EN or w in ("i", "a", "an", "to", "do", "check", "up", "out")
                   for w in words)
    for verb in sorted(DOING_ZH + WANT_ZH, key=len, reverse=True):
        text = text.replace(verb, " ")
    return all(ch in _FUNCTION_CHARS or not ch.isalnum() for ch in text)


def reset_grounded(ev: Evidence) -> bool:
    """Starting over, said as a clause of its own (:func:`dskit.rules.cues.says_reset`)."""
    return says_reset(ev.raw)


def revert_said(ev: Evidence) -> bool:
    """Words that take a change back (:func:`dskit.rules.cues.says_revert`; a bare 还是 is not one)."""
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
    return len({w for w in _task_words(spec, naming=True) - other_words if w in folded}) >= 2


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


def _task_words(spec: TaskSpec, naming: bool = False) -> set[str]:
    """Two-character words (English: words) of a task's description and examples, digits left out.

    ``naming``: only words that can name the task — none made with a question word ("多少" of the example
    "上个月话费多少" asks; "三百兆的多少钱一个月？" asks about a price, not for the bill)."""
    words: set[str] = set()
    for text in (spec.description, *spec.examples):
        pieces = _QUESTION_SPLIT.split(text) if naming else [text]
        words |= {w for piece in pieces for w in _windows(piece) if not any(ch.isdigit() for ch in w)}
    return words


# The question words of both languages (:mod:`dskit.rules.cues`): the places a task's example is cut
# before its words are read as the task's own.
_QUESTION_SPLIT = re.compile("|".join(re.escape(w) for w in sorted(QUESTION_WORDS_ZH, key=len, reverse=True))
                             + r"|\b(?:how much|how many|what|when|which|where|who)\b", re.I)


__all__ = ["month_spans", "refuses_doing", "asks_about_task", "nothing_beyond_task", "task_words", "Evidence", "make_evidence", "fold", "value_grounded", "slot_touched", "common_words", "other_slot_value",
           "task_mentioned",
           "confirm_grounded", "asks_something", "cancel_grounded", "reset_grounded", "revert_said", "numbers_in", "times_in",
           "dates_in", "date_spans", "durations_in", "text_grounded", "parse_reference_date", "clock_value", "split_clock",
           "same_half_day", "is_clock",
           "RECENT_TURNS"]
