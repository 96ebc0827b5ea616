"""Noise tags for dialogue turns: essential | optional | noise (docs/design.md, "Noise out").

Greetings, "嗯/好的/谢谢", venting, answers the user later corrected and failed system turns
pollute the context (a model starts agreeing with a complaint it once acknowledged) and waste
tokens, while the turns that set a slot or confirm something must survive until they are summarised. A turn is one user message and the
assistant's reply to it.

Tags come from two places:
- a *hint* from whoever knows better (the state machine knows which turn set slots or confirmed);
- rules, below, when there is no hint. Rules read the user text, the reply, and the previous reply
  (so "好的" answering "确认办理吗？" is a confirmation, not an acknowledgement).

Sequence rules run over a list of turns afterwards: a turn the user corrected in the next turn is
demoted to optional (reason ``corrected``), and the earlier of two consecutive identical questions is
folded into the later one (tag noise, reason ``duplicate``; the later turn counts ``repeats``).
Noise never enters the model's context (see :mod:`dskit.context.context`).
"""

from __future__ import annotations

import re

from .cues import SOCIAL_REPLIES, YES_NO_REPLIES
from .wordfind import has_any, has_counted, has_gap, has_word, has_words

NOISE_TAGS = ("essential", "optional", "noise")
NOISE_SCAN_CHARS = 2_000  # rules read the head of a message: enough to judge it, cheap on a huge one

# Whole-message social phrases: a message made only of these (and punctuation) is small talk.
_SOCIAL_NORM = tuple(sorted({re.sub(r"[\s\W_]+", "", p).lower() for p in SOCIAL_REPLIES}, key=len, reverse=True))
# The patterns below are written in lower case and read lower-cased text (a pattern compiled with
# re.IGNORECASE costs twice as much to compile, and every code node run compiles the ones it uses).
# Yes/no answers: small talk, unless they answer a confirmation question.
_YES_NO = re.compile(
    "^(?:" + "|".join(re.escape(w.lower()) for w in sorted(YES_NO_REPLIES, key=len, reverse=True)) + ")+$")
_VENT = re.compile(
    r"太差|太烂|太慢|太坑|好坑|垃圾|无语|气死|生气|烦死|烦人|什么破|破玩意|坑人|骗子|骗人|智障|傻|笨|失望|恶心|服了|"
    r"离谱|搞什么|搞啥|怎么回事|怎么这么|什么鬼|吐槽|受不了|投诉你|差评|terrible|useless|stupid|awful|"
    r"ridiculous|annoying|wtf|hate")
# The cue lists below stand for patterns written as words (dskit.rules.wordfind: building a pattern of them
# would cost every code node run more than reading the text with str.find); they read lower-cased text.
# Values a slot can take: digits, Chinese numbers with a unit, dates and times, quoted names, e-mails.
_DIGITS = tuple("0123456789０１２３４５６７８９")
_NUMERALS = "一二两三四五六七八九十百千万半"
_UNITS = ("个", "位", "人", "点", "号", "日", "天", "晚", "夜", "间", "张", "元", "块", "岁", "小时", "分钟", "公里", "斤",
          "份", "次", "楼", "层", "月", "年", "周", "星期", "折", "成", "台", "辆", "套", "件", "左右", "来")
_VALUE_WORDS = ("今天", "明天", "后天", "昨天", "前天", "今晚", "明晚", "上午", "下午", "晚上", "早上", "中午",
                "凌晨", "傍晚", "星期", "礼拜", "下周", "本周", "这周", "下个月", "月底", "月初", "点半", "「", "」",
                "“", "”", "《", "@")
_WEEK_DAYS = "一二三四五六日天末"
_VALUE_EN = ("today", "tomorrow", "tonight", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
             "sunday", "am", "pm")
# Corrections and take-backs ("不是七点，是八点", "还是原来的吧").
_CORRECTION_WORDS = ("改成", "改为", "改到", "改去", "改一下", "改下", "换成", "换到", "换一", "不对", "说错", "搞错", "弄错",
                     "打错", "写错", "更正", "纠正", "不去了", "不订了", "不要了", "算了", "提前", "推迟", "延后", "往后挪",
                     "往前挪", "早一点", "晚一点")
_CORRECTION_EN = ("instead", "change to", "change it to", "actually", "i meant")
# Decisions ("就这个", "帮我订").
_DECISION_WORDS = ("确认", "就这个", "就这样", "就它", "就订", "就要", "下单", "买一份", "订吧", "订了吧", "要这个", "提交",
                   "办理吧", "帮我办", "帮我订", "帮我买")
_DECISION_EN = ("go ahead", "book it")
# The previous reply asked for a confirmation.
_CONFIRM_ASK_WORDS = ("请确认", "对吗", "是否", "可以吗", "好吗", "行吗", "要不要")
_CONFIRM_ASK_EN = ("confirm", "shall i", "is that right", "is that correct", "go ahead")


def _carries_value(lower: str) -> bool:
    """A digit, a Chinese number with a unit, a day or time word, a weekday, a quote mark or an @."""
    return (has_any(lower, _DIGITS) or has_counted(lower, _NUMERALS, _UNITS) or has_any(lower, _VALUE_WORDS)
            or has_gap(lower, "周", _WEEK_DAYS, 0) or has_words(lower, _VALUE_EN))


def _corrects(lower: str) -> bool:
    """A correction or a take-back word, "不是…是/要" or "还是…吧" within a line."""
    return (has_any(lower, _CORRECTION_WORDS) or has_gap(lower, "不是", "是要", 12) or has_gap(lower, "还是", "吧", 12)
            or has_words(lower, _CORRECTION_EN))


def _decides(lower: str) -> bool:
    """A decision word ("就这个", "帮我订", "go ahead")."""
    return has_any(lower, _DECISION_WORDS) or has_words(lower, _DECISION_EN) or has_word(lower, "confirm", right=False)


def _asks_confirmation(lower: str) -> bool:
    """A request for confirmation ("请确认", "确认…吗", "对吗", "shall i")."""
    return (has_any(lower, _CONFIRM_ASK_WORDS) or has_gap(lower, "确认", "吗么", 20) or has_gap(lower, "需要", "吗", 10)
            or has_gap(lower, "确定", "吗", 10) or has_words(lower, _CONFIRM_ASK_EN))


# The previous reply asked a question.
_SLOT_ASK = re.compile(
    r"请问|哪|几|什么|多少|是否|怎么称呼|贵姓|\bwhich\b|\bwhat\b|\bwhen\b|\bwhere\b|\bhow many\b|\bwho\b")
# Replies that record or complete something (the engine's own texts included: "已记下", "已办理完成").
_DONE = re.compile(
    r"已记下|已为您|已经为您|已帮您|已办理|办理完成|已完成|预订成功|已预订|订好了|已确认|确认成功|已更新|已修改|"
    r"已改为|已将|已取消|已提交|下单成功|支付成功|\bnoted\b|\bbooked\b|\bconfirmed\b|\bis done\b|\bupdated\b|"
    r"\bcancell?ed\b")
_FAILED = re.compile(
    r"抱歉|对不起|无法|不能为您|失败|出错|错误|异常|系统繁忙|稍后再试|没太理解|没有理解|不太明白|不太确定|没听清|"
    r"超时|\bsorry\b|\bunable\b|\bfailed\b|\berror\b|\bcannot\b|\bcan't\b|\bcould not\b")
_STRIP = re.compile(r"[\s\W_]+", re.UNICODE)


def noise_norm(text: str) -> str:
    """The head of a text reduced to letters and digits, lower case: how two messages are compared."""
    return _STRIP.sub("", (text or "")[:NOISE_SCAN_CHARS]).lower()


def _is_social(text: str) -> bool:
    """True when the message is only greetings, acknowledgements and thanks."""
    rest = noise_norm(text)
    if not rest:
        return True
    if len(rest) > 40:
        return False
    for phrase in _SOCIAL_NORM:
        rest = rest.replace(phrase, "")
    return rest == ""


def _is_question(text: str) -> bool:
    """Ends in a question mark, or in 吗/呢 with at most one stop after it (string tests: no pattern to
    compile on every run)."""
    tail = (text or "")[-200:].rstrip()
    if tail.endswith(("?", "？")):
        return True
    if tail[-1:] and tail[-1] in "。.!！":
        tail = tail[:-1]
    return tail.endswith(("吗", "呢"))


def noise_user_signal(user: str, prev_assistant: str = "") -> str:
    """What the user message does, by rules.

    One of: ``confirmation`` (answers a confirmation question, or decides), ``correction``,
    ``value`` (carries a date, number, name...), ``answer`` (short reply to a slot question),
    ``social`` (greeting/ack/thanks only), ``vent``, ``empty``, ``other``.
    """
    text = (user or "")[:NOISE_SCAN_CHARS].strip()
    prev_assistant = (prev_assistant or "")[-NOISE_SCAN_CHARS:]
    if not text:
        return "empty"
    short = noise_norm(text)
    lower, prev_lower = text.lower(), prev_assistant.lower()
    asked_confirm = _asks_confirmation(prev_lower)
    if asked_confirm and (_YES_NO.match(short) or _decides(lower)):
        return "confirmation"
    if _corrects(lower):
        return "correction"
    if _decides(lower):
        return "confirmation"
    if _carries_value(lower):
        return "value"
    if _is_social(text):
        return "social"
    if _VENT.search(lower):
        return "vent"
    asked_slot = _is_question(prev_assistant) and bool(_SLOT_ASK.search(prev_lower))
    if asked_slot and len(short) <= 30 and not _is_question(text):
        return "answer"
    return "other"


def noise_reply_signal(assistant: str) -> str:
    """What the reply does: ``done`` (records/completes something), ``failed``, or ``other``."""
    text = (assistant or "")[:NOISE_SCAN_CHARS].strip().lower()
    if _DONE.search(text):
        return "done"
    if _FAILED.search(text):
        return "failed"
    return "other"


def noise_classify(user: str, assistant: str, prev_assistant: str = "",
                  hint: object = None) -> tuple[str, str]:
    """(tag, reason) for one turn. A valid ``hint`` (a tag, or True/False for essential) wins."""
    hinted = noise_hint_tag(hint)
    if hinted in NOISE_TAGS:
        return hinted, "hint"
    said = noise_user_signal(user, prev_assistant)
    replied = noise_reply_signal(assistant)
    if said in ("confirmation", "correction", "value", "answer"):
        tag, reason = "essential", said
    elif replied == "done":
        tag, reason = "essential", "recorded"
    elif said in ("social", "vent", "empty"):
        tag, reason = "noise", said
    else:
        tag, reason = "optional", said
    if replied == "failed":
        tag = "optional" if tag == "essential" else "noise"
        reason = f"{reason}+failed"
    if hinted == "chat" and tag == "essential":
        tag, reason = "optional", f"{reason}+chat"
    return tag, reason


def noise_hint_tag(hint: object) -> str:
    """A hint as a tag, or "chat", or '' when it says nothing.

    True -> "essential". False, or "chat", means "this turn set nothing" (the state machine saw only
    a question or small talk): the rules still decide between optional and noise, but never essential.
    """
    if isinstance(hint, (bool, int, float)):
        return "essential" if hint else "chat"
    if not isinstance(hint, str):
        return ""
    word = hint.strip().lower()
    if word in NOISE_TAGS:
        return word
    if word in ("true", "yes", "1", "是", "关键", "重要"):
        return "essential"
    if word in ("false", "no", "0", "否", "chat", "nonessential", "not_essential", "闲聊"):
        return "chat"
    if word in ("普通", "一般"):
        return "optional"
    if word in ("噪声", "噪音", "无关"):
        return "noise"
    return ""


def noise_tag_turns(turns: list[dict]) -> list[dict]:
    """Tags for a list of turns ``{"user", "assistant", "tag"?}``: ``[{"tag", "reason", "repeats"}]``.

    ``tag`` on a turn is a stored hint. Sequence rules (corrections, duplicate questions) run after
    the per-turn rules; see the module docstring.
    """
    out: list[dict] = []
    prev_assistant = ""
    for turn in turns:
        tag, reason = noise_classify(turn.get("user", ""), turn.get("assistant", ""), prev_assistant,
                                    turn.get("tag"))
        out.append({"tag": tag, "reason": reason, "repeats": 1,
                    "signal": noise_user_signal(turn.get("user", ""), prev_assistant)})
        prev_assistant = turn.get("assistant", "")
    _mark_corrected(turns, out)
    _fold_duplicates(turns, out)
    for info in out:
        info.pop("signal", None)
    return out


def _mark_corrected(turns: list[dict], tags: list[dict]) -> None:
    """A correction demotes the nearest earlier essential turn (what it corrected) to optional."""
    for i in range(1, len(turns)):
        if tags[i]["signal"] != "correction":
            continue
        for j in range(i - 1, max(-1, i - 11), -1):  # what it corrected is at most 10 turns back
            if tags[j]["tag"] == "essential" and tags[j]["reason"] != "corrected":
                tags[j]["tag"], tags[j]["reason"] = "optional", "corrected"
                break


def _fold_duplicates(turns: list[dict], tags: list[dict]) -> None:
    """The earlier of two consecutive identical user questions (or identical re-asks) becomes noise."""
    for i in range(len(turns) - 1):
        a, b = turns[i], turns[i + 1]
        same_user = noise_norm(a.get("user", "")) and noise_norm(a.get("user", "")) == noise_norm(b.get("user", ""))
        same_ask = (noise_norm(a.get("assistant", "")) and _is_question(a.get("assistant", ""))
                    and noise_norm(a.get("assistant", "")) == noise_norm(b.get("assistant", ""))
                    and tags[i]["tag"] != "essential")
        if same_user or same_ask:
            tags[i + 1]["repeats"] = tags[i]["repeats"] + 1
            tags[i]["tag"], tags[i]["reason"] = "noise", "duplicate"


def noise_carries_value(text: str) -> bool:
    """True when a sentence carries a slot value, a correction or a decision (what a summary keeps)."""
    text = (text or "")[:NOISE_SCAN_CHARS].lower()
    return _carries_value(text) or _corrects(text) or _decides(text)


def noise_records(reply: str) -> bool:
    """True when a reply records or completes something ("已记下…", "已办理完成", "booked")."""
    return bool(_DONE.search((reply or "")[:NOISE_SCAN_CHARS].lower()))


def noise_is_question(text: str) -> bool:
    """True when a message ends as a question."""
    return _is_question(text)
