"""Finding a value in what the user said: by words and numbers, never across them.

Grounding (docs/grounding.md) asks whether a free-text value appears in the user's message. Folding
the text (width, case, spaces and punctuation removed) lets "西湖区 文三路" match "西湖区文三路", but a
match on folded characters alone is not faithful:

- **numbers are compared as numbers, whatever the script**: "八号" is not in "十八号" and "五单元" is not
  "三单元" — a number of the value must be a whole number the user said (Arabic, Chinese numerals);
- **a match never joins the end of one word to the start of the next**: English values are matched by
  whole words ("from Osaka to Kyoto" does not hold "Tokyo"); a Chinese match that spans the user's
  punctuation must keep at least two characters on each side ("去北京，南京也行" does not hold the station
  "北京南");
- **a near match may differ in wording, never in a contrast**: a free-text value that differs from the
  user's words in a few characters is accepted only within one stretch of them (between two
  punctuation marks) and when it keeps every direction and opposite it has (东/西, 南/北, 上/下, 大/小,
  新/旧...) — "东门" is not "西门".
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

from ..base.numerals import parse_cn_number, read_numbers

# A free-text value is grounded in a text that holds this share of its characters (numbers aside).
TEXT_COVERAGE = 0.75
# Characters that make two otherwise similar names different places or things.
CONTRAST_CHARS = frozenset("东南西北上下左右前后内外大小新旧老正副男女单双里外头尾")
_NUMERAL_CHARS = frozenset("零〇一二两三四五六七八九十百千万0123456789")
_NUMBER_RUN = re.compile(r"\d+(?:\.\d+)?|[零〇一二两三四五六七八九十百千万]+")
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SEPARATOR = re.compile(r"(?<!\d)\.|\.(?!\d)|[^\w.]|_")  # a decimal point stays inside its number


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def segments(text: str) -> list[str]:
    """The folded pieces of a text between its spaces and punctuation ("去北京，南京" -> 去北京, 南京)."""
    return [piece for piece in _SEPARATOR.split(_norm(text)) if piece]


def number_tokens(text: str) -> Counter:
    """Every whole number a text states, as numbers: "文三路5号三单元" -> {3: 2, 5: 1} (a run of Chinese
    numerals that does not read as one number counts its digits)."""
    found: Counter = Counter()
    for match in _NUMBER_RUN.finditer(_norm(text)):
        token = match.group()
        if token[0].isdigit():
            found[float(token)] += 1
            continue
        value = parse_cn_number(token)
        if value is not None:
            found[float(value)] += 1
        else:
            found.update(float(parse_cn_number(ch) or 0) for ch in token if ch not in "十百千万")
    return found


# Spellings of one meaning (relative days and months, weekdays): each group's first is its normal form.
_SYNONYMS = (("本月", "这个月", "这月", "当月"), ("今天", "今日"), ("明天", "明日"), ("昨天", "昨日"),
             ("明天早上", "明早", "明天上午", "明儿早上"), ("今天早上", "今早"), ("今天晚上", "今晚"),
             ("明天晚上", "明晚"), ("下月", "下个月"), ("上月", "上个月"), ("下周", "下个星期", "下星期", "下礼拜"),
             ("本周", "这周", "这个星期", "这星期", "这礼拜"), ("周日", "周天", "星期日", "星期天", "礼拜日", "礼拜天"),
             ("1.5小时", "一个半小时", "一个半钟头", "1个半小时"), ("0.5小时", "半个小时", "半小时", "半个钟头"))
_SYNONYM_OF = {s: group[0] for group in _SYNONYMS for s in sorted(group, key=len, reverse=True)}
_WEEKDAY = re.compile(r"(?:星期|礼拜)([一二三四五六])")
_MONEY = re.compile(r"(\d+(?:\.\d+)?)\s*(?:块钱|块|元钱|元|rmb|yuan)")
_PEOPLE = re.compile(r"(\d+)\s*(?:个人|位|名|口人|人)")
_HOURS = re.compile(r"(\d+(?:\.\d+)?)\s*个?(?:小时|钟头)")
# No charge, said as a fee or ticket that is not taken, not needed or waived: "免费" (not "没有门票",
# which can mean sold out; not "没有钱").
_FREE = re.compile(r"(?:不收取?|不要|不用|不需要?|无需|免)(?:门票费?|票钱|费用?|收费)|没有(?:门票费用?|费用|收费)"
                   r"|免票|不要钱|不用钱|不收钱")
# A bound after a number (and its unit), spelled another way: "50元以内" and "50元之内" are "50元以下",
# "4分及以上" is "4分以上"; and "20元一下", the pinyin input method's common slip for 以下, after digits.
_AMOUNT = r"(\d+(?:\.\d+)?\s*(?:元|块|人|小时|分钟|分|天|公里|米|岁|间|张|晚|个)?)"
_BELOW_SLIP = re.compile(_AMOUNT + "一下")
_BELOW = re.compile(_AMOUNT + "(?:以内|之内|及以下|或以下)")
_ABOVE = re.compile(_AMOUNT + "(?:及以上|或以上)")
# A range of numbers ("100-150", "200到300"), and what may not follow it for it to stand for the same
# range with the value's unit: another unit.
_RANGE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(?:-|~|到|至)\s*(\d+(?:\.\d+)?)(?![\d.])")
_RANGE_VALUE = re.compile(r"(\d+(?:\.\d+)?)\s*(?:-|~|到|至)\s*(\d+(?:\.\d+)?)\s*(元|人|小时|分钟|天|公里)")
_UNIT_START = frozenset("元块人位个小分天公米岁号点层楼月年日周星%:：")


def normal_form(text: str) -> str:
    """A text in its normal spelling, for comparing a model's normalised value with the user's words:
    numerals as Arabic numbers (十八 -> 18), 块/元钱 as 元, 位/个人 as 人, 个小时/钟头 as 小时 (半个小时 ->
    0.5小时), one spelling per relative day, month or weekday (这个月 -> 本月, 明早 -> 明天早上, 星期五 ->
    周五), no charge as 免费 (不收门票, 没有门票费), and a bound as 以下/以上 (50元以内 -> 50元以下)."""
    out = _FREE.sub("免费", _BELOW_SLIP.sub(r"\1以下", _norm(text)))
    for spelling in sorted(_SYNONYM_OF, key=len, reverse=True):
        if spelling in out and spelling != _SYNONYM_OF[spelling]:
            out = out.replace(spelling, _SYNONYM_OF[spelling])
    out = _WEEKDAY.sub(r"周\1", out)

    def arabic(match: re.Match) -> str:
        value = parse_cn_number(match.group())
        return str(value) if value is not None else match.group()
    out = re.sub(r"[零〇一二两三四五六七八九十百千万]+", arabic, out)
    out = _HOURS.sub(r"\1小时", _PEOPLE.sub(r"\1人", _MONEY.sub(r"\1元", out)))
    return _ABOVE.sub(r"\1以上", _BELOW.sub(r"\1以下", out))


def range_said(normal: str, said: str) -> bool:
    """A range with its unit ("100-150元") said as the same range without one ("票价100-150的",
    "200-300之间"): the unit is the slot's, as long as the user gave the range no other unit. Both are
    normal forms (:func:`normal_form`): the value's and the text's."""
    wanted = _RANGE_VALUE.fullmatch(normal)
    if not wanted:
        return False
    for found in _RANGE.finditer(said):
        if (float(found.group(1)), float(found.group(2))) == (float(wanted.group(1)), float(wanted.group(2))):
            rest = said[found.end():].lstrip()
            if not rest or rest[0] not in _UNIT_START or rest.startswith(wanted.group(3)):
                return True
    return False


def _words(text: str) -> list[str]:
    return _WORD.findall(_norm(text))


# What turns a place name into the name of another thing — a road, a street, a county, a campus ("南京路" is a
# road in Shanghai, "长沙县" a county of Changsha, "Houston Street" a street in New York) — after the name,
# with a position or an ordinal between them ("四川北路", "中山一路"). A station, an airport, 市 or 省 stay
# the place's own ("杭州东站", "北京市").
_OTHER_THING_ZH = ("大道", "大街", "胡同", "路", "街", "巷", "弄", "桥", "广场", "公园", "县", "区", "镇", "乡", "村", "小区",
                   "花园", "大厦", "商场", "大学", "学院", "医院", "中学", "小学")
_POSITION_ZH = "东西南北中一二三四五六七八九十"
# Besides those, what makes an option's word the name of a place ("大巴车站", "高铁新城"): the engine's own
# reading of an option (dskit.turn.backup) never takes a word that heads one.
_PLACE_NOUNS_ZH = ("车站", "站", "新城", "城", "中心", "公司", "店")
_OTHER_THING_EN = frozenset({"street", "st", "road", "rd", "avenue", "ave", "boulevard", "blvd", "drive", "dr", "lane",
                             "ln", "way", "place", "square", "bridge", "county", "heights", "plaza", "court",
                             "terrace", "parkway", "highway", "alley", "university", "college", "hospital"})


def inside_longer_name(folded: str, end: int, cuts: set[int], places: bool = False) -> bool:
    """Whether a Chinese match ending at ``end`` is the head of a longer name that names another thing: the
    text goes on, within the same stretch of words, with at most two characters of position or order and
    then a word such as 路, 街, 县, 区, 大学 (:data:`_OTHER_THING_ZH`); with ``places``, also a station, a town
    or a shop (:data:`_PLACE_NOUNS_ZH`)."""
    at = end
    for _ in range(3):
        if at in cuts or at >= len(folded):
            return False
        if folded.startswith(_OTHER_THING_ZH, at) or places and folded.startswith(_PLACE_NOUNS_ZH, at):
            return True
        if folded[at] not in _POSITION_ZH:
            return False
        at += 1
    return False


def words_match(value: str, text: str) -> bool:
    """An English (ASCII) value in a text, by whole words: all of them in a row — never as the head of a
    longer name ("Houston Street" does not say Houston) —, or (a value of several words) three quarters of
    its longer words, at least two, as whole words of the text."""
    value_words = _words(value)
    text_words = _words(text)
    if not value_words or not text_words:
        return False
    size = len(value_words)
    if any(text_words[i:i + size] == value_words and (i + size >= len(text_words)
                                                      or text_words[i + size] not in _OTHER_THING_EN)
           for i in range(len(text_words) - size + 1)):
        return True
    long_words = [w for w in value_words if len(w) >= 3]
    present = set(text_words)
    return len(long_words) >= 2 and sum(w in present for w in long_words) >= max(2, -(-len(long_words) * 3 // 4)) \
        and number_tokens(value) - number_tokens(text) == Counter()


def _number_cut(folded: str, start: int, end: int, cuts: set[int]) -> bool:
    """Whether a match [start, end) cuts a number of the text in two ("八号" inside "十八号"); the
    user's own spaces and punctuation (``cuts``) end a number, and so does the end of what reads as one
    number ("周二一桌" is Tuesday, then one table: "二一" is no number)."""
    return any(0 < at < len(folded) and at not in cuts and folded[at - 1] in _NUMERAL_CHARS
               and folded[at] in _NUMERAL_CHARS and _one_number_across(folded, at) for at in (start, end))


def _one_number_across(folded: str, at: int) -> bool:
    """Whether the run of numerals around ``at`` reads as one number (or one range) across it."""
    left, right = at, at
    while left > 0 and folded[left - 1] in _NUMERAL_CHARS:
        left -= 1
    while right < len(folded) and folded[right] in _NUMERAL_CHARS:
        right += 1
    run = folded[left:right]
    return run.isdigit() or any(read.start == 0 and read.end == len(run) for read in read_numbers(run))


def _cuts(pieces: list[str]) -> set[int]:
    cuts, at = set(), 0
    for piece in pieces[:-1]:
        at += len(piece)
        cuts.add(at)
    return cuts


def exact_match(target: str, text: str, value: str | None = None, places: bool = False) -> bool:
    """A folded value inside a text: whole numbers, never the head of a longer name
    (:func:`inside_longer_name`; ``places`` as there), and across the user's punctuation only where the value
    has punctuation too (``value``: the value as written), or with two or more characters on each side."""
    own = _cuts(segments(value)) if value is not None else set()
    pieces = segments(text)
    folded = "".join(pieces)
    cuts = _cuts(pieces)
    start = folded.find(target)
    while start >= 0:
        end = start + len(target)
        inner = sorted(c for c in cuts if start < c < end and c - start not in own)
        lengths = [b - a for a, b in zip([start] + inner, inner + [end])]
        cut_word = end < len(folded) and end not in cuts and folded[end - 1:end + 1] in DIRECTION_WORDS
        if not _number_cut(folded, start, end, cuts) and (not inner or min(lengths) >= 2) and not cut_word \
                and not inside_longer_name(folded, end, cuts, places):
            return True
        start = folded.find(target, start + 1)
    return False


def _kept_in_place(target: str, index: int, piece: str) -> bool:
    """Whether the text holds the value's character at ``index`` beside one of its neighbours in the value
    ("北口" or "路北" for the second 北 of "北苑路北口"): a contrast is compared where it stands."""
    return any(target[a:b] in piece for a, b in ((index - 1, index + 1), (index, index + 2)) if a >= 0 and b <= len(target))


# Words that start with a direction: a value ending in that direction, followed by the rest of such a word,
# stops inside it ("杭州西湖" does not hold "杭州西"; "去北京南站" holds "北京南" before 站, "去海南玩" holds 海南).
DIRECTION_WORDS = frozenset({
    "东京", "东莞", "东北", "东方", "东城", "东营", "东海", "东湖", "东山", "东风", "东四", "东单", "东直", "东三",
    "西湖", "西安", "西宁", "西藏", "西单", "西直", "西城", "西双", "西山", "西沙", "西溪", "西塘", "西昌", "西四",
    "南京", "南昌", "南宁", "南通", "南充", "南阳", "南平", "南海", "南山", "南湖", "南锣", "南沙", "南岸", "南开",
    "北京", "北海", "北戴", "北碚", "北湖", "北山", "北辰", "北苑", "北仑", "北大",
    "上海", "上饶", "下沙", "大连", "大理", "大同", "小店", "前门", "后海", "中关"})


def near_match(target: str, text: str) -> bool:
    """A Chinese value the user said in slightly other words ("固话无拨号音" for "固话没有拨号音"): three
    quarters of its characters, a two-character run of it, the same numbers, and every contrast
    character it has."""
    letters = [ch for ch in target if ch not in _NUMERAL_CHARS]
    if len(target) < 3 or not letters or number_tokens(target) - number_tokens(text) != Counter():
        return False
    for piece in segments(text):  # within one stretch of the user's words, never gathered across them
        present = set(piece)
        if any(ch in CONTRAST_CHARS and not _kept_in_place(target, i, piece) for i, ch in enumerate(target)):
            continue
        if sum(1 for ch in letters if ch in present) < TEXT_COVERAGE * len(letters):
            continue
        once = list(dict.fromkeys(letters))  # "1天 - 2天" for "1-2天": a repeated character is one
        if _in_order(once, piece) >= TEXT_COVERAGE * len(once) and any(
                target[i:i + 2] in piece for i in range(len(target) - 1)):
            return True
    return False


def _in_order(letters: list[str], piece: str) -> int:
    """How many of the value's characters the text holds in the value's order (the longest common
    subsequence): a paraphrase keeps the user's order ("固话无拨号音" for "固话没有拨号音"); a value made of
    the user's words put back to front is the model's own ("宽带故障" for "故障现象是宽带无法上网")."""
    row = [0] * (len(piece) + 1)
    for ch in letters:
        previous = 0  # row[j - 1] of the row above
        for j, other in enumerate(piece, 1):
            above = row[j]
            row[j] = previous + 1 if ch == other else max(row[j], row[j - 1])
            previous = above
    return row[-1]


__all__ = ["normal_form", "segments", "number_tokens", "words_match", "exact_match", "near_match", "TEXT_COVERAGE",
           "CONTRAST_CHARS"]
