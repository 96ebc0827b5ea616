"""Negation and its scope: whether the words at a span are said or denied.

A mention of a thing ("包间", "a quiet corner") is denied when an odd number of negations govern it, and
said when an even number do. Two negations make a yes: "没有包间可不行", "不能没有包间", "包间不能少",
"缺不了包间", "不可能不要包间", "can't do without a private room" ask for a private room. The grammar:

- **a negation** is a negative morpheme — 不 没 无 别 免 非 未 甭 勿; no, not, n't, never, without, nor,
  none, lack — or a verb of lacking beside one (缺, 少, 离: "缺不了", "少不得", "不能少", "离不开").
  Words built from them that deny nothing are not negations: 不错, 不过, 没问题, 不仅, 无论, 差不多,
  不知道 … and an A-not-A question ("有没有包间" asks, it denies nothing);
- **its scope** is its clause (up to the punctuation): the negations shortly before the mention (within
  eight characters, or four English words), and the short predicate right after it ("包间不要",
  "包间不能少", "…的位置可不行", "private room not needed"); a negative consequence of a condition the
  mention stands in ("没包间的话这顿饭吃不成") is one more;
- a negation of a degree word is not one of the thing: "不要太吵的包间" wants a room that is not too loud;
- a negation inside a modifier that 的 closes stays there ("不免费的景点", "有无烟房的酒店"); one of wanting
  takes the whole phrase ("不要辣的菜").
"""

from __future__ import annotations

import re

_NEGATORS_ZH = "不没无别免非未甭勿"
_LACKING_ZH = "缺少离忘漏"
# A modal asked rhetorically before a negation denies it: "怎么能没有包间" is "can't be without a private room"
# ("怎么能订到包间" asks how, and denies nothing).
_RHETORICAL_ZH = re.compile("(?:怎么能|怎么可以|怎能|哪能|哪里能|岂能)(?=[" + _NEGATORS_ZH + "])")
# English negations; any word ending in n't ("won't", "isn't", "couldn't") is one too (_en_negations).
NEGATION_EN = ("no", "not", "dont", "without", "never", "none", "nor", "skip", "cannot", "nah", "nope", "lack", "lacking",
               "neither")
# Words with 不/没 in them that negate nothing ("差不多吧" is a hedged yes, "不少" is "many").
NOT_NEGATING_ZH = ("差不多", "不少", "不久", "了不起", "不得不", "不停", "不断", "忍不住", "没多久")
# ...and, for the scope of a negation, more words whose negative morpheme denies nothing after them ("不错" is
# good, "不过" is but, "不知道他家几点营业" denies the knowing, "非常" is very, "免费" free, "别的" other).
_DENY_NOTHING_ZH = NOT_NEGATING_ZH + ("不错", "不过", "没问题", "不好意思", "不仅", "不但", "无论", "不知道", "不清楚", "非常",
                                      "无所谓", "别的", "别人", "别处", "特别", "分别", "区别", "个别", "差别", "类别", "级别",
                                      "性别", "告别", "识别", "无线", "免费", "未来", "不然", "要不", "非得",
                                      # a change denied keeps the thing: "5个不变", "时间没改"
                                      "不变", "没变", "不改", "没改", "不动", "没动", "不换", "没换")
_DEGREE = ("太", "很", "那么", "特别", "怎么", "这么")
# An A-not-A question asks: "有没有包间", "要不要", "可不可以", and the split "有包间没有".
A_NOT_A = re.compile(r"([\u4e00-\u9fff])[不没]\1")
_SPLIT_A_NOT_A = re.compile(r"(有[^，,。.！!？?；;\n]*?)(没有)(?=[啊呀吗呢嘛]*\s*(?:[？?!！。.，,；;\n]|$))")
# An English word, with its apostrophe ("don't", "that's"): how every English rule reads a clause.
EN_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_CLAUSE_MARKS = "，,。.！!？?；;\n"
# What may stand between a mention and the predicate after it without being part of the predicate.
_PREDICATE_LEAD = " 的也就都还可是真"
# The longest predicate after a mention read as its own ("不要", "不能少", "是不行的", "就不用了吧").
_PREDICATE_CHARS = 7
_DENYING_ENDS = ("没有", "不要", "不用", "不需要", "不考虑", "没必要", "不包括", "不含", "免了")


# A 不 or 没 that ends a question after a modal is its question particle: "能推荐一个餐馆不？", "有包间没？".
_ASKING_TAIL = re.compile(r"((?:能|可以|会|要|是|有|行|好)[^，,。.！!？?；;\n]*?)([不没])(?=[啊呀呢吗]*\s*(?:[？?]|$))")


def blank_a_not_a(text: str) -> str:
    """``text`` with the negation of its A-not-A questions blanked (same length, so positions hold): "有没有",
    "要不要", the split "有包间没有", and a question that ends in 不/没 after a modal ("能推荐一个不？")."""
    text = A_NOT_A.sub(lambda m: " " * len(m.group(0)), text)
    text = _SPLIT_A_NOT_A.sub(lambda m: m.group(1) + "  ", text)
    return _ASKING_TAIL.sub(lambda m: m.group(1) + " ", text)


def _blank(text: str) -> str:
    """``text`` (lower case) with what denies nothing blanked out, positions kept."""
    for phrase in _DENY_NOTHING_ZH:
        text = text.replace(phrase, " " * len(phrase))
    return blank_a_not_a(text)


def clause_span(text: str, start: int, end: int) -> tuple[int, int]:
    left = max((text.rfind(ch, 0, start) for ch in _CLAUSE_MARKS), default=-1) + 1
    rights = [i for i in (text.find(ch, end) for ch in _CLAUSE_MARKS) if i >= 0]
    return left, min(rights) if rights else len(text)


# A predicate that dismisses what it follows with no negative morpheme: "包间就算了", "包间拉倒吧".
_DISMISSING_ZH = ("算了", "拉倒", "作罢")


def _zh_negations(text: str) -> int:
    """Negations in a stretch of Chinese: each negative morpheme, a lacking verb beside one counts too, and
    a dismissal that ends the stretch ("…就算了"); a negation of a degree word ("不要太…") counts for nothing."""
    count = 1 if text.rstrip(" 啊吧呀了的哈").endswith(_DISMISSING_ZH) or text.rstrip(" 啊吧呀哈").endswith(
        _DISMISSING_ZH) else 0
    count += len(_RHETORICAL_ZH.findall(text))
    for index, char in enumerate(text):
        if char in _NEGATORS_ZH:
            rest = text[index + 1:].lstrip("要想用需")
            if rest.startswith(_DEGREE):
                continue
            count += 1
        elif char in _LACKING_ZH and _lack_said(text, index):
            count += 1
    return count


def _lack_said(text: str, index: int) -> bool:
    """Whether the verb of lacking at ``text[index]`` says a lack: beside a negation ("缺不了", "别忘了"),
    after a modal's negation a few characters before ("不能少", "不可或缺"), or a lack that happened ("缺了包间
    可不行", "少了包间不行"); "不少", "少一点" say nothing of lacking."""
    if any(near and near in _NEGATORS_ZH for near in (text[index - 1:index] if index else "",
                                                     text[index + 1:index + 2])):
        return True
    if any(modal in text[max(0, index - 4):index] for modal in ("不能", "不可", "不得")):
        return True
    return text[index] in "缺少" and text[index + 1:index + 2] == "了"


# English verbs of leaving a thing out: a negation of the thing they take ("skip the private room"; "don't forget
# the private room" is two). "leave" counts only as "leave out".
_OMITTING_EN = ("forget", "omit", "drop", "ditch", "lose")
# Words after a mention that deny needing it ("a private room is unnecessary", "isn't optional" is two).
_NOT_NEEDED_EN = ("unnecessary", "optional", "needless")
# A short clause after a negated mention that denies the whole doing makes it a condition: "No private room, no
# deal" wants one (the Chinese "没包间的话这顿饭吃不成" is read by its 的话).
_NO_DEAL_EN = re.compile(r"^\s*no (?:deal|booking|reservation|go|dice|way)\b")


def _en_negations(words: list[str]) -> int:
    return sum(1 for i, word in enumerate(words) if word in NEGATION_EN or word.endswith("n't")
               or word in _OMITTING_EN or word == "leave" and "out" in words[i + 1:i + 3])


# A negation of wanting, of a modal or of the copula takes the whole phrase after it ("不要辣的菜": no spicy dishes;
# "不能没有单独的包间"); any other negation before a
# 的 stays inside the modifier that 的 closes ("不免费的景点" is a sight that is not free, "有无烟房的酒店" a hotel
# with non-smoking rooms: neither denies the sight or the hotel).
_WANTING = ("要", "需", "想", "用", "必", "能", "可", "会", "许", "准", "是", "得")
# The negators that make an adjective or a verb inside a modifier (不免费, 无烟, 非吸烟); 没 and 别 deny having or
# doing, and take the whole phrase ("没单独的包间不行").
_MODIFYING_NEGATORS = "不无非未"


def _outside_modifiers(before: str) -> str:
    """The text before a mention with the negations that a 的 closes inside a modifier blanked out."""
    last = before.rfind("的")
    if last < 0:
        return before
    inside = "".join(" " if ch in _MODIFYING_NEGATORS and not before[i + 1:].startswith(_WANTING) else ch
                     for i, ch in enumerate(before[:last]))
    return inside + before[last:]


def negations_at(raw: str, start: int, end: int) -> int:
    """How many negations govern the words at ``raw[start:end]`` (see the module's scope)."""
    text = _blank(raw.lower())
    left, right = clause_span(text, start, end)
    before, after = text[left:start], text[end:right]
    if text[start:end].isascii() and before.isascii() and after.isascii():
        words_after = EN_WORD.findall(after)[:4]
        count = _en_negations(EN_WORD.findall(before)[-6:]) + _en_negations(words_after) + sum(
            1 for w in words_after if w in _NOT_NEEDED_EN)
        if count % 2 == 1 and right < len(text) and _NO_DEAL_EN.match(text[right + 1:]):
            count += 1
        return count
    count = _zh_negations(_outside_modifiers(before[-8:])) + _en_negations(EN_WORD.findall(before)[-3:])
    predicate, consequence = after, ""
    if "的话" in after:  # "没包间的话这顿饭吃不成": a condition, then what follows from it
        at = after.find("的话")
        predicate, consequence = after[:at], after[at + 2:]
        if not consequence.strip(" ，,") and right < len(text):
            consequence = text[right + 1:clause_span(text, right + 1, right + 1)[1]]
    predicate = predicate.lstrip(_PREDICATE_LEAD)
    if "非" in raw[left:start] and predicate.startswith(("不可", "不行", "不成")):
        return count - before[-8:].count("非")  # "非(得)要包间不可": the frame 非…不可 says must
    if len(predicate) <= _PREDICATE_CHARS or predicate[:1] in _NEGATORS_ZH:
        count += _zh_negations(predicate[:_PREDICATE_CHARS])
    elif predicate.rstrip(" 啊吧呀了的").endswith(_DENYING_ENDS):
        count += 1  # "高风险的项目一个都没有": the clause ends denying it
    if consequence and count % 2 == 1 and _zh_negations(consequence):
        count += 1  # without it, what the user wants does not happen: they want it
    return count


def negated_at(raw: str, start: int, end: int) -> bool:
    """Whether the words at ``raw[start:end]`` are denied: an odd number of negations govern them ("不要包间",
    "包间不考虑", "we won't do any high-risk sports"); two make a yes ("没有包间可不行", "包间不能少")."""
    return negations_at(raw, start, end) % 2 == 1


# What may stand with a refused doing in a clause that says nothing else: the negators that refuse (不, 别;
# not 没 or 未, which report what has not happened: "还没修"), their modals of need and wish (不用, 不要, 不需要),
# adverbs of time (先, 暂时, 再, 就), the speaker.
_REFUSING = "不别甭免勿"
_BESIDE_DENIAL = "用要需必再先暂时就也都我咱们"


def denies_only(clause: str, word: str) -> bool:
    """Whether a clause is nothing but a refusal of ``word`` — "不用修了", "先不装了", "别订了" of a doing —,
    with no object or topic of its own ("包间不用订了" refuses the private room, not the booking). The word
    ends the clause (particles aside) under an odd number of negations, and what stands before it is
    refusing negators, modals of need, adverbs of time and the speaker only ("还没修" reports, "不修不行"
    insists: neither refuses)."""
    text = clause.strip().rstrip(" 了吧啦啊呀哈嘛")
    before = text[:len(text) - len(word)]
    return bool(word) and text.endswith(word) and any(ch in _REFUSING for ch in before) and all(
        ch in _REFUSING + _BESIDE_DENIAL for ch in before) and negated_at(text, len(before), len(text))


__all__ = ["denies_only", "negated_at", "negations_at", "clause_span", "blank_a_not_a", "A_NOT_A", "EN_WORD", "NEGATION_EN",
           "NOT_NEGATING_ZH"]
