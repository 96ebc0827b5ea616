"""Numbers as people write them, read by a small grammar: Arabic, Chinese numerals, English words.

A number is read whole. "十五" is fifteen and nothing else: neither the ten nor the five is a number the
user said, so a model that stores 5 for "十五位" stores what nobody said. The grammar:

- **Arabic**: a maximal run of digits, with a decimal part ("4.5") and thousands commas ("1,200").
- **Chinese**: a maximal run of numeral characters, parsed by :func:`parse_cn_number` — digits before
  the units 十 百 千 万 亿, 零 for a gap, a leading 十 for ten, and the colloquial tail ("一百二" is 120,
  "三千五" 3,500). A run that is not one number is read only as an *approximate range* when it is one:
  two neighbouring digits side by side ("三四个人": three or four; "十五六": fifteen or sixteen); any
  other run says no number.
- **English**: words (zero to nineteen, the tens, "hundred", "thousand", "a dozen", "a couple"), joined
  by spaces, hyphens and "and" ("twenty-one", "one hundred and five"), as whole words.
- **Colloquial**: 俩 (two), 仨 (three).

Every reading keeps its span, so the rules that use it (a count is not the hour of a time, a part is not
the whole: :mod:`dskit.rules.grounding`) read what stands around the number, not the number alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10_000, "亿": 100_000_000}
CN_NUMERAL_CHARS = "".join(_CN_DIGITS) + "".join(_CN_UNITS)
_CN_RUN = re.compile(f"[{CN_NUMERAL_CHARS}]+")
_ARABIC_RUN = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")
_EN_UNITS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
             "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
             "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19}
_EN_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
            "ninety": 90}
_EN_SCALES = {"hundred": 100, "thousand": 1000}
_EN_PHRASES = {"a dozen": 12, "a couple of": 2, "a couple": 2, "a pair of": 2}
_COLLOQUIAL = {"俩": 2, "仨": 3}
_EN_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class NumberSaid:
    """One number a text states: its value, where it stands, and — for an approximate range ("三四个") —
    the other value it also says."""

    value: float
    start: int
    end: int
    script: str
    other: float | None = None

    def values(self) -> tuple:
        return (self.value,) if self.other is None else (self.value, self.other)


# ---------------------------------------------------------------- Chinese

def _section(text: str) -> int | None:
    """A Chinese number below ten thousand ("三千零五", "二十", "十五", "一百二"), or None."""
    value, unit_before, digit, zero = 0, 10_000, None, False
    for index, char in enumerate(text):
        if char in ("零", "〇"):
            if digit is not None:
                return None  # "二零" is a run of digits, not one number
            zero = True
            continue
        if char in _CN_DIGITS:
            if digit is not None:
                return None  # two digits side by side: not one number
            if char == "两" and index + 1 == len(text) and value:
                return None  # a trailing 两 ("十两") is not a digit of the number
            digit = _CN_DIGITS[char]
            continue
        unit = _CN_UNITS[char]
        if unit >= unit_before or unit > 1000:
            return None
        if digit is None and not (unit == 10 and index == 0):
            return None  # a unit with no digit before it, but the leading 十 of "十五"
        value += (1 if digit is None else digit) * unit
        unit_before, digit, zero = unit, None, False
    if digit is not None:
        # "二十五": ones; "一百二" / "三千五": the colloquial next unit down (not after a 零: "一百零二" is 102)
        value += digit * (unit_before // 10 if unit_before in (100, 1000) and not zero else 1)
    elif zero:
        return None  # a trailing 零 says nothing
    return value


def parse_cn_number(text: str) -> int | None:
    """A Chinese numeral as one whole number ("三" 3, "十二" 12, "两百零五" 205, "三万五千" 35,000, "一百二"
    120); None when the text is not one number ("三四" is a range, "二零" digits, "十两" not a numeral)."""
    if not text or any(ch not in _CN_DIGITS and ch not in _CN_UNITS for ch in text):
        return None
    if text in ("零", "〇"):
        return 0
    if len(text) == 1 and text in _CN_UNITS and text != "十":
        return None
    for big in ("亿", "万"):
        if big in text:
            head, _, tail = text.partition(big)
            high = parse_cn_number(head) if head else None
            if high is None or (big == "万" and "亿" in tail):
                return None
            if not tail:
                return high * _CN_UNITS[big]
            if len(tail) == 1 and tail in _CN_DIGITS:  # "两万五": 25,000
                return high * _CN_UNITS[big] + _CN_DIGITS[tail] * _CN_UNITS[big] // 10
            low = parse_cn_number(tail.lstrip("零〇"))
            return None if low is None else high * _CN_UNITS[big] + low
    return _section(text)


def _cn_range(run: str) -> tuple[int, int] | None:
    """Two neighbouring numbers said side by side, the end of the first doubled ("三四" 3–4, "十五六"
    15–16, "两三" 2–3); None for anything else."""
    if len(run) < 2 or run[-1] not in _CN_DIGITS or run[-2] not in _CN_DIGITS:
        return None
    first = parse_cn_number(run[:-1])
    second = _CN_DIGITS[run[-1]]
    if first is None:
        return None
    if first % 10 + 1 == second and second != 0:
        return first, first + 1
    return None


# ---------------------------------------------------------------- English

def _english(words: list[str]) -> int | None:
    """English number words as one number ("twenty one", "one hundred and five"); None if not one."""
    total, current, seen = 0, 0, False
    for word in words:
        if word == "and" and seen:
            continue
        if word in _EN_UNITS:
            if current % 10 or (current and current < 20 and current >= 10):
                return None
            current += _EN_UNITS[word]
        elif word in _EN_TENS:
            if current % 100:
                return None
            current += _EN_TENS[word]
        elif word in _EN_SCALES:
            if not current:
                current = 1
            if _EN_SCALES[word] == 1000:
                total, current = (total + current) * 1000, 0
            else:
                current *= 100
        else:
            return None
        seen = True
    return total + current if seen else None


def _english_numbers(lower: str) -> list[NumberSaid]:
    found = []
    taken: list[tuple[int, int]] = []
    for phrase, value in _EN_PHRASES.items():
        for match in re.finditer(r"(?<![a-z])" + re.escape(phrase) + r"(?![a-z])", lower):
            if not any(s < match.end() and match.start() < e for s, e in taken):
                found.append(NumberSaid(float(value), match.start(), match.end(), "english"))
                taken.append(match.span())
    words = [(m.group(), m.start(), m.end()) for m in _EN_WORD.finditer(lower)]
    index = 0
    while index < len(words):
        word, start, end = words[index]
        if word not in _EN_UNITS and word not in _EN_TENS or any(s < end and start < e for s, e in taken):
            index += 1
            continue
        best = None
        stop = index
        while stop < len(words) and (words[stop][0] in _EN_UNITS or words[stop][0] in _EN_TENS
                                     or words[stop][0] in _EN_SCALES or words[stop][0] == "and"):
            gap = lower[words[stop - 1][2]:words[stop][1]] if stop > index else ""
            if gap.strip(" -"):
                break
            value = _english([w for w, _, _ in words[index:stop + 1]])
            if value is not None and words[stop][0] != "and":
                best = (value, stop)
            stop += 1
        if best is None:
            index += 1
            continue
        found.append(NumberSaid(float(best[0]), start, words[best[1]][2], "english"))
        index = best[1] + 1
    return found


# ---------------------------------------------------------------- all of them

def read_numbers(raw: str) -> list[NumberSaid]:
    """Every number the text states, whole, in the order they stand (see the module's grammar)."""
    found: list[NumberSaid] = []
    if any(ch.isdecimal() for ch in raw):
        for match in _ARABIC_RUN.finditer(raw):
            before = raw[match.start() - 1:match.start()]
            if before.isdecimal() or (before == "." and raw[match.start() - 2:match.start() - 1].isdecimal()):
                continue
            found.append(NumberSaid(float(match.group().replace(",", "")), match.start(), match.end(), "arabic"))
    if any(ch in CN_NUMERAL_CHARS for ch in raw):
        for match in _CN_RUN.finditer(raw):
            run = match.group()
            value = parse_cn_number(run)
            if value is not None:
                found.append(NumberSaid(float(value), match.start(), match.end(), "chinese"))
                continue
            span = _cn_range(run)
            if span is not None:
                found.append(NumberSaid(float(span[0]), match.start(), match.end(), "chinese", float(span[1])))
    for word, value in _COLLOQUIAL.items():
        start = raw.find(word)
        while start >= 0:
            found.append(NumberSaid(float(value), start, start + 1, "chinese"))
            start = raw.find(word, start + 1)
    lower = raw.lower()
    if any(ch.isascii() and ch.isalpha() for ch in lower):
        found += _english_numbers(lower)
    return sorted(found, key=lambda number: number.start)


__all__ = ["NumberSaid", "read_numbers", "parse_cn_number", "CN_NUMERAL_CHARS"]
