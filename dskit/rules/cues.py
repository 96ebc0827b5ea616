"""The engine's one vocabulary of conversational cues: yes, no, drop it, start over, take it back,
and the social words (greetings, acknowledgements, thanks) that carry no content.

Three parts of the engine read these words and must agree on them: grounding (does this message say
yes to the confirmation question?), the history's noise rules (is "好的" small talk or the answer to a
confirmation?) and long-term memory (is "好的" a fact worth keeping?). Each word list lives here once.
"""

from __future__ import annotations

import re

from .negation import A_NOT_A, EN_WORD, NOT_NEGATING_ZH, blank_a_not_a, clause_span, negated_at

# Phrases built from a no-word that say yes ("没问题": no problem).
YES_DESPITE_NO = ("没问题", "没错", "不错", "没毛病", "不用改", "不用再改", "no problem")

# Whole replies that only say yes or no: small talk, unless they answer a confirmation question.
YES_NO_REPLIES = ("是", "是的", "对", "对的", "没错", "没问题", "可以", "可以的", "行", "行的", "好", "好的", "嗯", "确认", "确定",
                  "同意", "就这样", "就这么办", "办吧", "不是", "不对", "不用", "不用了", "不要", "不要了", "不行", "算了", "取消",
                  "否", "yes", "yep", "yeah", "no", "nope", "ok", "okay", "sure", "correct", "right", "confirm",
                  "confirmed")
# Whole messages that are only social: greetings, acknowledgements, thanks, laughter, goodbyes.
SOCIAL_REPLIES = (
    "你好", "您好", "你们好", "嗨", "哈喽", "哈啰", "在吗", "在不在", "有人吗", "早上好", "早安", "上午好",
    "中午好", "下午好", "晚上好", "晚安", "再见", "拜拜", "回见", "嗯嗯", "嗯", "恩", "哦哦", "哦", "噢", "喔",
    "啊", "呃", "额", "好的好的", "好的", "好滴", "好嘞", "好吧", "好", "行吧", "行", "收到", "知道了", "明白了",
    "明白", "了解了", "了解", "懂了", "谢谢你", "谢谢您", "谢谢啦", "谢谢", "多谢", "感谢", "谢了", "辛苦了",
    "麻烦了", "不客气", "没事", "不用了", "不用", "没有了", "没了", "不需要了", "不需要", "哈哈哈", "哈哈", "呵呵",
    "嘿嘿", "ok", "okay", "k", "hi", "hello", "hey",
    "thanks", "thank you", "thx", "bye", "goodbye", "good morning", "good night", "got it", "cool", "sure",
    "alright", "yeah", "yep", "hmm", "lol",
)
# A message made only of one of these is never a fact worth remembering.
FILLERS = frozenset(SOCIAL_REPLIES) | frozenset(YES_NO_REPLIES) | {"fine"}



# ---------------------------------------------------------------- words, not characters
#
# A cue counts only as a word of its own, in a clause that says nothing else: "好" in "好像", "对" in
# "对了" (by the way), "行" in "行李", "right" in "the right address", "reset" in "reset my password" are
# not the act. A message that asks something (a question clause) is never a yes by itself. The rules
# below tokenise a clause with a small lexicon (longest match first) and accept it only when every
# piece is a word of the act, a filler or a particle; English clauses are read by their words.

_CLAUSE_SPLIT = re.compile(r"[，,。.！!？?；;：:、\n\r~～…]+|\s{2,}|(?<=[^\x00-\x7f])\s(?=[^\x00-\x7f])")
_PARTICLES = ("的", "了", "啊", "呀", "吧", "哈", "嘞", "滴", "咯", "哦", "喔", "嘛", "哇", "呐", "啦", "耶", "呢")
# Read beside _PARTICLES wherever they are read (哦 and 吧 are particles).
_FILLERS_ZH = ("那", "那就", "就", "嗯", "嗯嗯", "噢", "诶", "欸", "哎", "呃", "额", "这样", "那样", "也", "都", "我", "我们",
               "咱们", "麻烦", "麻烦你", "请", "谢谢", "谢谢你", "谢啦", "多谢", "帮我", "给我", "帮忙", "先", "还是", "这么", "那么")
# "对了" is "by the way", never a yes; matched before 对 so that it wins.
_NOT_YES_ZH = ("对了", "对于", "对面", "好像", "好多", "好奇", "行李", "行程", "是否", "可以的话")
# A clause is cut into these words (_zh_clause_is), so a yes word with a particle after it ("是的", "好吧", "行啊")
# or with a doing ("确认办理") is not listed again.
YES_ZH = ("是", "对", "没错", "没问题", "没毛病", "不错", "好", "好哒", "行", "可以", "嗯", "恩", "确认", "确定", "同意",
          "就这样", "就这么办", "就这么定", "就这个", "就它", "就这家", "妥", "成", "再试", "重试", "再试一次", "试一次",
          "再来一次", "无误")
# What a yes may say besides yes: go ahead with it ("订吧", "帮我订", "就办" are cut into these and the fillers).
ACTION_ZH = ("订", "预订", "办", "办理", "提交", "下单", "去办", "去订", "安排", "这个", "这家", "一下", "吧", "帮我")
YES_EN = ("yes", "yeah", "yep", "yup", "sure", "ok", "okay", "correct", "right", "fine", "confirm", "confirmed",
          "absolutely", "definitely", "exactly", "perfect", "great", "alright", "agreed", "proceed", "retry")
ASSENT_EN = YES_EN + ("that", "that's", "thats", "is", "it", "go", "ahead", "do", "please", "book", "sounds", "good",
                      "thanks", "thank", "you", "let's", "lets", "all", "of", "course", "looks", "works", "for", "me",
                      "submit", "try", "again", "indeed", "thing", "so", "then", "and", "just", "now")
QUESTION_WORDS_ZH = ("什么", "怎么", "为什么", "为啥", "哪", "多少", "几点", "几号", "几个", "几位", "几天", "几月", "谁",
                      "如何", "多久", "多远", "多长", "请问", "问一下", "问下", "想问", "想知道", "是否")
# An A-not-A question (正反问句): a character, 不 or 没, the same character again — 是不是, 能不能, 有没有,
# 可不可以, 需不需要, 去不去. It asks (is_question) and it does not refuse (negated_at).
_QUESTION_END_ZH = ("吗", "么")
_WH_EN = ("what", "where", "when", "why", "how", "which", "who", "whom", "whose")
# The modals that ask, first in a clause: "can you…", "could we…" (asks_for_action reads them too).
_MODALS_EN = ("can", "could", "would", "will", "may")
_QUESTION_WORDS_EN = ("is", "are", "was", "were", "do", "does", "did", "should", "shall", "might", "isn't", "aren't",
                      "don't", "doesn't", "won't", "can't") + _MODALS_EN + _WH_EN
# An auxiliary first asks only with a subject after it ("is it", "can you"); "do it" and "will do" do not.
_SUBJECTS_EN = {"i", "you", "we", "they", "he", "she", "it", "that", "this", "there", "these", "those", "my", "your"}


def _en_at(text: str, phrase: str) -> list[tuple[int, int]]:
    """Where an English word or phrase stands in ``text`` as whole words, never inside a longer word."""
    return [m.span() for m in re.finditer(r"(?<![a-z])" + re.escape(phrase) + r"(?![a-z])", text)]


def clauses(raw: str) -> list[str]:
    """The clauses of a message (split at punctuation), lower case, spaces kept inside."""
    return [c.strip() for c in _CLAUSE_SPLIT.split(raw.lower()) if c.strip()]


def _question_marks(raw: str) -> list[str]:
    """The clauses of a message that end with a question mark (kept for the question test)."""
    return [m.group(1) for m in re.finditer(r"([^，,。.！!；;\n]*?)[？?]", raw)]


# Words a clause may open with before its question: "and", "also", "so", "oh".
_LEADING_EN = frozenset({"and", "also", "so", "oh", "but", "then", "plus", "ok", "okay", "well", "btw"})


def is_question(clause: str) -> bool:
    """Whether a clause asks something: an A-not-A form, a question word, a question particle at its
    end, or (English) an auxiliary or wh-word first."""
    text = clause.strip().lower()
    if not text:
        return False
    if text.isascii():
        words = EN_WORD.findall(text)
        while words and words[0] in _LEADING_EN:  # "and what was my bill?", "oh, is it open?"
            words = words[1:]
        if not words:
            return False
        if words[0] in _WH_EN:
            return True
        subjects = _SUBJECTS_EN - ({"it", "that", "this"} if words[0] in ("do", "don't") else set())
        return words[0] in _QUESTION_WORDS_EN and len(words) > 1 and words[1] in subjects
    compact = text.replace(" ", "")
    if compact.endswith("呢"):  # "停车场呢" asks; "好的呢" is a friendly yes
        return not _zh_clause_is(compact[:-1], YES_ZH, ACTION_ZH)
    return bool(A_NOT_A.search(compact)) or any(_asking_word(compact, w) for w in QUESTION_WORDS_ZH) \
        or compact.endswith(_QUESTION_END_ZH)


def _asking_word(text: str, word: str) -> bool:
    """A question word that asks: after a negation it is an indefinite ("不会去做什么", "没什么")."""
    at = text.find(word)
    while at >= 0:
        if not any(n in text[max(0, at - 4):at] for n in ("不", "没", "别", "无")):
            return True
        at = text.find(word, at + 1)
    return False


def asks(raw: str) -> bool:
    """Whether a message asks something: a question mark, or a clause that is a question."""
    return bool(_question_marks(raw)) or any(is_question(c) for c in clauses(raw))


def tokenize(text: str, lexicon: tuple[str, ...]) -> list[str] | None:
    """``text`` (no spaces) cut into words of ``lexicon``, longest first; None when some part is not one."""
    words = sorted(set(lexicon), key=len, reverse=True)
    out: list[str] = []
    at = 0
    while at < len(text):
        word = next((w for w in words if text.startswith(w, at)), None)
        if word is None:
            return None
        out.append(word)
        at += len(word)
    return out


def _zh_clause_is(clause: str, acts: tuple[str, ...], extra: tuple[str, ...] = ()) -> bool:
    """A Chinese clause made only of the act's words, fillers, particles and ``extra``, with one of ``acts``
    (any way of cutting it will do: "那就这么办" is 那 + 就这么办). A clause holding a word that looks like
    an act but is another word ("对了", "好像", "行李") never is one."""
    compact = clause.replace(" ", "")
    if not compact or any(w in compact for w in _NOT_YES_ZH):
        return False
    acts_set = set(acts)
    words = sorted(set(acts + extra + _FILLERS_ZH + _PARTICLES), key=len, reverse=True)
    reach = {0: False}  # position -> whether some cut up to it holds an act
    for at in range(len(compact)):
        if at not in reach:
            continue
        for word in words:
            if compact.startswith(word, at):
                end = at + len(word)
                reach[end] = reach.get(end, False) or reach[at] or word in acts_set
    return reach.get(len(compact), False)


def _en_clause_is(clause: str, acts: tuple[str, ...], allowed: tuple[str, ...]) -> bool:
    """An English clause whose every word is ``allowed`` and that holds one of ``acts`` (words or phrases)."""
    words = EN_WORD.findall(clause)
    if not words or any(w not in allowed for w in words):
        return False
    joined = " " + " ".join(words) + " "
    return any(f" {a} " in joined for a in acts)


def says_yes(raw: str) -> bool:
    """A yes to a confirmation question: a clause that only says yes (and go ahead), no clause that asks
    or says no. "好的，订吧" and "Yes, book it" are yes; "对了，有停车场吗" and "Is that right?" are not."""
    if asks(raw) or says_no(raw):
        return False
    found = False
    for clause in clauses(raw):
        if clause.isascii():
            found = found or _en_clause_is(clause, YES_EN + ("go ahead", "do it", "sounds good", "that's it",
                                                             "please do", "book it", "works for me", "that works"),
                                          ASSENT_EN)
        else:
            found = found or _zh_clause_is(clause, YES_ZH, ACTION_ZH)
    return found


HANDOFF_ZH = ("人工", "真人", "找客服")  # read inside a clause: "人工" covers "转人工", "人工客服", "找人工"
HANDOFF_EN = ("human", "real person", "a person", "an agent", "live agent", "representative", "operator",
              "someone real", "talk to someone", "speak to someone")


def asks_for_human(raw: str) -> bool:
    """A clause that asks for a person ("转人工", "let me talk to a human"), not a question about one
    ("人工客服几点下班？")."""
    for clause in clauses(raw):
        if _question_clause(raw, clause):
            continue
        if any(w in clause for w in HANDOFF_ZH) or any(_en_at(clause, w) for w in HANDOFF_EN):
            return True
    return False


HESITATION = ("想想", "考虑", "等等", "等一下", "稍等", "再看看", "再说", "犹豫", "let me think", "wait", "hold on",
              "hang on", "not sure")


def says_refusal(raw: str) -> bool:
    """A plain no ("不对", "先别办", "no, that's wrong"): it says no, not yes, and does not hesitate ("我再
    想想" keeps a question open)."""
    text = raw.lower()
    return says_no(text) and not says_yes(text) and not any(h in text for h in HESITATION)


def only_yes(raw: str) -> bool:
    """A message that says yes and nothing else ("没错，就这么订", "Yes, book it"): every clause a yes or
    small talk. Then a change the model read into it is the model's, not the user's."""
    if not says_yes(raw):
        return False
    for clause in clauses(raw):
        if clause.isascii():
            if not _en_clause_is(clause, YES_EN + ("go ahead", "do it", "book it", "please do", "thanks"), ASSENT_EN):
                return False
        elif not _zh_clause_is(clause, YES_ZH + SOCIAL_REPLIES + ACTION_ZH):
            return False
    return True


_NO_ZH = ("不", "别", "否", "没", "算了", "取消", "等等", "等一下", "稍等", "想想", "考虑", "再看看", "再说", "错")
# A hesitation says no for now ("wait", "hold on"); its Chinese words never stand among English ones.
_NO_EN = ("no", "not", "don't", "dont", "cancel", "wrong", "stop", "nope", "later") + HESITATION
_NOT_NO = YES_DESPITE_NO + ("不过", "不好意思", "不客气", "没关系", "不用谢") + NOT_NEGATING_ZH


def says_no(raw: str) -> bool:
    """Whether a message says no anywhere ("没问题", "不错" and "no problem" say yes; "不过" is "but")."""
    text = blank_a_not_a(raw.lower())  # "好不好？" asks
    for phrase in _NOT_NO:
        text = text.replace(phrase, " ")
    if any(w in text for w in _NO_ZH):
        return True
    words = " " + " ".join(EN_WORD.findall(text)) + " "
    return any(f" {w} " in words for w in _NO_EN)


# Cut into words with the fillers and particles: "不订了" is 不订 + 了, "取消吧" 取消 + 吧, "不想要了" 不想 + 要 + 了.
CANCEL_ZH = ("不要了", "不用了", "不需要了", "不想了", "算了", "取消", "不弄了", "不做了", "作罢", "放弃", "撤销", "退掉",
             "不要", "不用", "不需要", "不想", "不订", "不办", "不去", "不买", "不租", "不装", "不修", "不查")
_CANCEL_OBJECTS_ZH = ("这个", "那个", "这单", "这笔", "预订", "订单", "预约", "它", "刚才的", "刚才那个", "任务", "订", "办",
                      "去", "买", "租", "装", "修", "查", "掉", "要")
CANCEL_EN = ("cancel", "never mind", "nevermind", "forget it", "forget about it", "forget that", "drop it",
             "don't want", "dont want", "no longer", "stop", "call it off", "scrap that", "scrap it", "don't book",
             "dont book", "do not book", "don't order", "don't reserve")
# What a cancel clause may say besides: the words of its phrases, and these.
_CANCEL_ALLOWED_EN = tuple(w for phrase in CANCEL_EN for w in phrase.split()) + (
    "this", "the", "booking", "reservation", "request", "please", "i", "need", "anymore", "just", "ok", "okay",
    "actually", "my", "a", "an", "oh", "well", "sorry", "anything", "thanks", "thank", "you", "any", "more")


# "这顿饭不吃了", "我不要订这个位子了": not doing the task's verb any more, said at the end of a clause.
_STOP_DOING = re.compile(r"不(?:要|想|用|需要|打算)?(?:再)?(?:[订办去吃买租装修查弄搞玩住约]|预订|预约|办理)"
                         r"(?:[这那][^，,。！!？?]{0,6})?了?$")  # only "这个…"/"那…" may follow: "不去包间了" keeps it
# A dismissal that does not say what it drops: a cancellation only when the message says nothing else.
WEAK_CANCEL_ZH = ("算了", "不要了", "不用了", "不需要了", "不想了")
WEAK_CANCEL_EN = ("never mind", "nevermind", "forget it", "forget about it", "forget that")
_LATER_ZH = ("下次", "以后再说", "再说吧", "改天", "回头再说")


def _question_clause(raw: str, clause: str) -> bool:
    return clause in (c.strip().lower() for c in _question_marks(raw)) or is_question(clause)


def _cancel_clause(clause: str, task_words: tuple[str, ...]) -> str:
    """"strong" for a clause that drops a task, "weak" for a bare dismissal ("算了"), "" otherwise."""
    if clause.isascii():
        allowed = _CANCEL_ALLOWED_EN + tuple(w for t in task_words if t.isascii() for w in EN_WORD.findall(t.lower()))
        if not _en_clause_is(clause, CANCEL_EN, allowed):
            return ""
        return "weak" if _en_clause_is(clause, WEAK_CANCEL_EN, allowed) and \
            not _en_clause_is(clause, tuple(c for c in CANCEL_EN if c not in WEAK_CANCEL_EN), allowed) else "strong"
    compact = clause.replace(" ", "").rstrip("".join(_PARTICLES))
    objects = _CANCEL_OBJECTS_ZH + tuple(t for t in task_words if not t.isascii())
    if _zh_clause_is(clause, CANCEL_ZH, objects):
        pieces = tokenize(compact, CANCEL_ZH + objects + _FILLERS_ZH + _PARTICLES) or []
        return "strong" if any(p in CANCEL_ZH and p not in WEAK_CANCEL_ZH for p in pieces) else "weak"
    return "strong" if _STOP_DOING.search(compact) and not any(w in compact for w in ("太", "别太", "那么")) else ""


def says_cancel(raw: str, task_words: tuple[str, ...] = ()) -> bool:
    """A clause that drops a task: cancel words with references to the task ("取消订餐", "这个预订不要了",
    "cancel the booking"), or the task's verb stopped ("这顿饭不吃了"); a bare dismissal ("算了", "never
    mind") only when the message says nothing else ("算了算了，辣的也行" keeps the booking). Never a
    preference that starts with a cancel word ("不要辣的", "Don't forget the high chair"), never a question."""
    weak = content = False
    for clause in clauses(raw):
        kind = _cancel_clause(clause, task_words)
        if kind and _question_clause(raw, clause):
            return False
        if kind == "strong":
            return True
        weak = weak or kind == "weak"
        if not kind and not _zh_clause_is(clause, _LATER_ZH + SOCIAL_REPLIES) \
                and not (clause.isascii() and _en_clause_is(clause, SOCIAL_REPLIES, SOCIAL_REPLIES + ("please",))):
            content = True
    return weak and not content


def says_cancel_clause(raw: str, task_words: tuple[str, ...] = ()) -> bool:
    """:func:`says_cancel` by a clause that stops the task itself ("他那边宽带先不装了", "这个不要了",
    "cancel that"); a bare dismissal ("算了", "不用了谢谢") is not enough here."""
    return says_cancel(raw, task_words) and any(_cancel_clause(c, task_words) == "strong" for c in clauses(raw))


# Cut into words with these objects, the fillers and particles ("全部清空" is 全部 + 清空, "都重来吧" 都 + 重来 + 吧).
RESET_ZH = ("重来", "重新来", "重新开始", "从头开始", "从头来", "清空", "重置", "全部取消", "都不要了", "重新来过", "从头再来",
            "推倒重来")
_RESET_OBJECTS_ZH = ("全部", "所有", "一切", "一下", "再", "要", "想", "一遍", "一次", "信息", "内容", "记录", "东西", "数据",
                     "掉")
RESET_EN = ("start over", "reset", "restart", "from scratch", "clear everything", "begin again", "start again")
_RESET_ALLOWED_EN = tuple(w for phrase in RESET_EN for w in phrase.split()) + (
    "all", "let's", "lets", "please", "can", "we", "i", "want", "to", "the", "whole", "thing", "conversation", "just",
    "ok", "okay")


def says_reset(raw: str) -> bool:
    """A clause that asks to start over, and nothing else ("全部重来", "start over"; not "reset my account
    password", not "从头到尾都要安静")."""
    parts = clauses(raw)
    for index, clause in enumerate(parts):
        found = _en_clause_is(clause, RESET_EN, _RESET_ALLOWED_EN) if clause.isascii() else \
            _zh_clause_is(clause, RESET_ZH, _RESET_OBJECTS_ZH)
        if found:  # "start over? no no, keep everything" asks, then refuses
            return not _question_clause(raw, clause) and not any(says_no(c) for c in parts[index + 1:])
    return False


REVERT_PHRASES = ("原来的", "原来那个", "之前的", "之前那个", "刚才的", "刚才那个", "改回", "恢复", "撤回", "撤销修改",
                  "回到原来", "还是原来", "还是之前", "还是刚才", "换回", "变回", "照旧", "不改了", "别改了",
                  "change it back", "back to", "undo", "as before", "previous", "original", "revert", "go back")


def says_revert(raw: str) -> bool:
    """Words that take a change back ("还是原来的", "改回去", "undo"): a bare 还是 ("still", "rather") is not."""
    text = raw.lower()
    return any(p in text if not p.isascii() else _en_at(text, p) for p in REVERT_PHRASES)


_SOCIAL_EN_WORDS = frozenset(w for phrase in SOCIAL_REPLIES if phrase.isascii() for w in phrase.split()) | {
    "there", "again", "so", "much", "a", "lot", "very", "all", "everyone", "guys", "man", "yes", "no", "nope", "for",
    "your", "help", "great", "nice", "see", "ya", "later", "ty"}


def is_social(raw: str) -> bool:
    """Whether a message is only greetings, acknowledgements, thanks or yes/no words, in any mix
    ("好的谢谢", "谢谢哈", "hi there", "ok cool")."""
    parts = clauses(raw)
    if not parts:
        return True
    for clause in parts:
        if clause.isascii():
            words = EN_WORD.findall(clause)
            if any(w not in _SOCIAL_EN_WORDS for w in words):
                return False
        elif tokenize(clause.replace(" ", ""), SOCIAL_REPLIES + YES_NO_REPLIES + _PARTICLES + _FILLERS_ZH) is None:
            return False
    return True


# ---------------------------------------------------------------- what a question asks for

# A question that asks for an action — the ability or leave to do something, said before the doing ("能派车来接吗",
# "可以帮我订吗", "could we have a quiet table?") — is a request, not a question about a thing. What may stand
# between the modal and the doing.
_MODALS_ZH = ("能不能", "可不可以", "能否", "可否", "能", "可以", "麻烦", "请", "帮我", "帮忙", "给我", "给我们")
_BEING_ZH = "有是"
_SUBJECTS_ASKED_EN = ("you", "we", "i", "u")
# How a suggestion asks whether it suits: "…怎么样", "…行不行", "…好吗".
_SUGGESTING_ZH = ("怎么样", "如何", "好不好", "行不行", "行吗", "好吗", "可以吗", "成吗", "可好")


# Words that open an English clause without changing what it does: interjections and connectives.
_DISCOURSE_EN = frozenset({"oh", "and", "also", "so", "well", "um", "uh", "actually", "then", "ok", "okay", "hey",
                           "hi", "hello", "but", "plus", "now", "ah", "right"})


def asks_for_action(clause: str) -> bool:
    """Whether a question asks the assistant to do something (a modal of ability or leave before a doing:
    "能订周五的吗", "could you get us a private room?") rather than asks about a thing ("有海鲜吗", "多少钱",
    "do you have a set menu?", "is it quiet?")."""
    text = clause.strip().lower()
    if text.isascii():
        words = EN_WORD.findall(text)
        while len(words) > 3 and words[0] in _DISCOURSE_EN:
            words = words[1:]  # "oh, and could you get us a private room?": a marker before the mood is no mood
        if words[:2] in (["how", "about"], ["what", "about"], ["why", "not"]):
            return True  # a suggestion: "how about Thai?"
        return len(words) > 2 and words[0] in _MODALS_EN and words[1] in _SUBJECTS_ASKED_EN and words[2] != "be" \
            and not any(w in _WH_EN for w in words)
    compact = text.replace(" ", "")
    if compact.rstrip("？?呢吧").endswith(_SUGGESTING_ZH) and any(verb in compact for verb in DOING_ZH + ("吃", "来")):
        return True  # a suggestion: "吃泰国菜怎么样", "改到周六行不行"
    for modal in _MODALS_ZH:
        at = compact.find(modal)
        if at >= 0:
            after = compact[at + len(modal):].lstrip("我们你您帮给")
            return bool(after) and after[0] not in _BEING_ZH and not any(w in compact for w in ("多少", "几", "什么"))
    return False


def asks_about(raw: str, start: int, end: int) -> bool:
    """Whether the words at ``raw[start:end]`` stand in a question about a thing — a clause that asks, not for
    an action (:func:`asks_for_action`): what the user asks about is not what they want ("包间有最低消费吗？",
    "湘菜贵不贵？", "Do you do Thai food?")."""
    left, right = clause_span(raw, start, end)
    clause = raw[left:right]
    marked = raw[right:right + 1] in ("？", "?")
    asking = marked or asks(clause) and not _only_few(clause)
    return asking and not asks_for_action(clause)


def _only_few(clause: str) -> bool:
    """A clause whose only question word is a 几 that may mean "a few" ("去海南玩几天"): not a question by itself."""
    compact = clause.replace(" ", "")
    return "几" in compact and not compact.endswith(_QUESTION_END_ZH + ("呢",)) and not A_NOT_A.search(compact) \
        and not any(_asking_word(compact, w) for w in QUESTION_WORDS_ZH if "几" not in w)


# ---------------------------------------------------------------- asking for something, or remarking

# The marks of a request in a clause: a wish, a need or a plea (想, 要, 需要, 麻烦, 请, 帮, 能不能…, I'd like,
# can you, please), or the clause opens with the doing itself (订, 约, 查, book, reserve: an imperative).
WANT_ZH = ("想", "要", "需要", "打算", "准备", "希望", "麻烦", "请", "帮", "给我", "能不能", "能否", "可不可以", "可否", "可以",
            "有没有", "申请", "来个", "来一")
DOING_ZH = ("订", "约", "预订", "预约", "安排", "办", "查", "装", "修", "报修", "买", "租", "开", "换", "改", "取消", "看")
WANT_EN = ("want", "would like", "'d like", "need", "can i", "could i", "can you", "could you", "can we", "could we",
            "please", "let's", "lets", "get me", "looking for", "i'll take", "we'll take", "i wanna", "may i", "help me",
            "is there", "are there", "do you have")
DOING_EN = ("book", "reserve", "schedule", "check", "find", "order", "set up", "sign", "fix", "repair", "plan",
             "cancel", "change", "make")
# A doing with its measure: "约个疫苗", "订一桌", "查一下", "修一下" — an action asked for, wherever it stands.
_DOING_A_THING = re.compile("(?:" + "|".join(DOING_ZH) + ")(?:个|一|下|张|份|间|桌|位)")
# The marks of a remark: what was (a past time or a thing done), or how something is.
_WAS_ZH = ("上次", "上回", "之前", "以前", "前天", "昨天", "上周", "上礼拜", "那次", "那回", "已经", "一直", "过了")
_WAS_EN = ("last time", "yesterday", "last week", "last month", "the other day", "we had", "i had", "was", "were",
           "came in", "picked", "went", "enjoyed", "loved", "already", "i've seen", "seen it")
_HOW_ZH = ("不错", "挺好", "很好", "真好", "特别好", "好吃", "好用", "专业", "有点", "真麻烦", "下雨", "好冷", "好热", "太冷",
           "太热", "记得", "没问题", "正常")
_HOW_EN = ("great", "lovely", "amazing", "delicious", "excellent", "wonderful", "terrible", "awful", "like new",
           "pouring", "freezing", "raining", "sunny", "cold", "hot")


# A question tagged onto a remark asks for nothing ("…, isn't it", "…对吧").
_TAG_QUESTIONS = ("isn't it", "is it", "right", "don't you think", "aren't they", "wasn't it", "对吧", "是吧", "对不对",
                  "是不是", "对不", "是不")
# Thanks and goodbyes, said to someone: "谢谢医生", "谢谢你们", "Cheers!", "thanks guys".
_THANKS_BYE = ("谢谢", "感谢", "多谢", "再见", "拜拜", "辛苦", "thanks", "thank you", "cheers", "bye", "goodbye",
               "see you", "talk soon")


# A report of trouble asks for help: what cannot be done ("连不上", "打不开", "用不了"), what is broken or wrong.
_CANNOT_ZH = re.compile(r"[\u4e00-\u9fff]不(?:上|了|开|动|通|进|出|着)|没法|坏|故障|毛病|出问题|有问题|不舒服|疼|发烧|咳嗽")
_CANNOT_EN = ("not working", "doesn't work", "does not work", "won't", "broke", "stopped working", "keeps",
              "can't get", "cannot get", "is down", "no signal", "hurts", "sick")


def requests_in(clause: str) -> bool:
    """Whether a clause asks for something: a wish, a need or a plea, a question (not one tagged onto a
    remark: "isn't it", "对吧"), a report of trouble ("网连不上了", "the chain keeps slipping"), or it opens
    with the doing itself (an imperative: "订个位子", "book a table")."""
    text = clause.strip().lower()
    if text.rstrip("?？ ") in _TAG_QUESTIONS:
        return False
    if is_question(text) or text.endswith(("?", "？")):
        return True
    if any(w in text for w in _CANNOT_EN) or not text.isascii() and _CANNOT_ZH.search(text):
        return True
    if text.isascii():
        padded = " " + " ".join(EN_WORD.findall(text)) + " "
        wants = [w for w in WANT_EN if f" {w} " in padded and not _denied(padded, f" {w} ")]
        return bool(wants) or "'d like" in text or text.startswith(DOING_EN)
    compact = text.replace(" ", "")
    plea = any(compact.startswith("麻烦") or f"麻烦{w}" in compact for w in "你您帮给")
    return plea or compact.startswith(DOING_ZH) or bool(_DOING_A_THING.search(compact)) or any(
        w in compact and not _denied(compact, w) for w in WANT_ZH if w != "要" or "要是" not in compact)


def _denied(text: str, word: str) -> bool:
    """Whether the first ``word`` of ``text`` is denied ("不需要", "no need", "don't want"): no wish."""
    at = text.find(word)
    return at >= 0 and negated_at(text, at, at + len(word))


def social_clause(clause: str) -> bool:
    """A clause that is only social: greetings, acknowledgements, thanks, goodbyes (:func:`is_social`), or
    thanks and goodbyes said to someone ("谢谢医生", "thanks guys", "Cheers!")."""
    text = clause.strip().lower().rstrip("!！。. ")
    if is_social(text):
        return True
    head = next((w for w in _THANKS_BYE if text.startswith(w)), "")
    rest = text[len(head):].strip()
    return bool(head) and (len(EN_WORD.findall(rest)) <= 2 if text.isascii() else len(rest) <= 3)


def remarks_in(clause: str) -> bool:
    """Whether a clause remarks on what was or how something is, and asks for nothing."""
    text = clause.strip().lower()
    if requests_in(text):
        return False
    if text.isascii():
        padded = " " + " ".join(EN_WORD.findall(text)) + " "
        return any(f" {w.strip()} " in padded for w in _WAS_EN + _HOW_EN)
    return any(w in text for w in _WAS_ZH + _HOW_ZH)


def asks_for_nothing(raw: str) -> bool:
    """A message that asks for nothing: no clause requests anything, and every clause is social (thanks, a
    goodbye, an acknowledgement), a remark or a question tagged onto one ("上次那个叉烧有点咸，谢谢", "It's
    pouring out there", "We came in last month and the staff were great, thanks")."""
    parts = clauses(raw)
    return bool(parts) and not any(requests_in(c) for c in parts) and all(
        social_clause(c) or remarks_in(c) or c.strip().rstrip("?？ ") in _TAG_QUESTIONS for c in parts)


# ---------------------------------------------------------------- accepting what was offered

REFERENCE_ZH = ("就这", "就它", "就那", "这个", "那个", "这家", "那家", "这里", "那里", "这儿", "那儿", "它", "该", "这座", "那座",
                "这所", "那所", "这款", "那款", "这种", "那种", "这条", "那条", "这位", "前者", "后者", "就去", "就选", "就要",
                "就订", "就住", "就吃", "就买", "就用", "那就", "就它了", "就这个", "选这", "要这", "定这", "推荐的", "你说的",
                "刚说的", "上面的", "第一", "第二", "第三", "第四", "第五", "最后一")
REFERENCE_EN = ("that one", "this one", "the first", "the second", "the third", "the last", "that", "this", "it",
                "those", "them", "the one", "sounds good", "let's go with", "go with", "i'll take", "we'll take")
_ORDINALS = {"第一": 0, "第1": 0, "头一": 0, "第二": 1, "第2": 1, "第三": 2, "第3": 2, "第四": 3, "第4": 3, "第五": 4,
             "第5": 4, "the first": 0, "first one": 0, "the second": 1, "second one": 1, "the third": 2,
             "third one": 2, "the fourth": 3, "the fifth": 4}


# "这" followed by anything but these points at a thing ("这餐馆", "这酒店"): 这样, 这么, 这次 ... do not.
_THIS = re.compile(r"这(?![样么次会时边种般些])")


def refers_back(raw: str) -> bool:
    """Whether a message points back at something just offered ("这家", "这餐馆", "它的地址", "他家",
    "那里", "that one") and does not refuse it ("不要这家", "不去那儿" refuse)."""
    text = raw.lower()
    spans = [(m.start(), m.end()) for r in REFERENCE_ZH + ("他家", "他的", "她家") for m in re.finditer(re.escape(r), text)]
    spans += [m.span() for m in _THIS.finditer(text)]
    spans += [span for r in REFERENCE_EN for span in _en_at(text, r)]
    return any(not negated_at(text, start, end) for start, end in spans)


# An earlier request's time or place taken into this one ("广州那天天气怎么样": the day of the route).
EARLIER_TIME_PLACE_ZH = ("那天", "当天", "同一天", "同天", "那时", "那会", "那边", "那地方", "同一个地方", "同样", "一样")
EARLIER_TIME_PLACE_EN = ("that day", "same day", "same time", "same place", "there")


def points_back(raw: str) -> bool:
    """Whether a message takes something said before into this one: what :func:`refers_back` finds, or an
    earlier request's time or place ("那天", "同一天", "same day", "there")."""
    text = raw.lower()
    return (any(word in text for word in EARLIER_TIME_PLACE_ZH)
            or any(_en_at(text, word) for word in EARLIER_TIME_PLACE_EN)
            or refers_back(text))


def says_accept(raw: str) -> bool:
    """Whether a message takes something the assistant offered: it refers back to it ("就这家", "它的
    地址是？", "that one") or says yes, and refuses nothing ("不要那家" does not accept)."""
    return refers_back(raw) or says_yes(raw)


# The longest (in letters and digits) an elliptical question about the thing just recommended is taken to be.
DETAIL_MAX_CHARS = 20
# A detail of a place or thing: what a user asks for about the one the assistant just recommended.
_DETAILS = ("地址", "电话", "号码", "联系方式", "价格", "多少钱", "价位", "营业", "开门", "门票", "票价", "时长",
            "多久", "评分", "周边", "附近", "周围", "提供", "设施", "怎么走", "怎么去", "在哪", "哪里", "房价",
            "address", "phone", "number", "price", "cost", "open", "hours", "rating", "nearby", "around")
# Asking for it: a question, or "give me / tell me".
_ASKING = re.compile(r"[?？]|吗|呢|什么|多少|多久|几点|哪|怎么|给我|发我|告诉我|说说|说一下|查查|查一下|看看|"
                     r"\b(?:what|where|how|when|give me|send me|tell me)\b")
# ...and nothing that looks elsewhere: another one, a change, a refusal, a new search ("给我推荐一个",
# "帮我找一家"), or a requirement, which carries a number ("评分4.5分以上的").
_ELSEWHERE = re.compile(r"别的|其他|其它|另外|另一|换|不要|不想|不去|不喜欢|不行|算了|不满意|推荐|找|一家|一个|[0-9]"
                        r"|\b(?:another|other|else|instead|recommend|find|search)\b")


def asks_detail(raw: str) -> bool:
    """Whether a message asks for a detail of something without naming it ("把地址给我吧", "价格呢？",
    "酒店周边有餐馆吗？") and looks nowhere else ("有别的吗" asks for another). Right after the assistant
    recommended one thing, that thing is what it asks about (dskit.rules.offers). Such a question is short
    (:data:`DETAIL_MAX_CHARS` letters) and names nothing in brackets: "匹夫涮肉城(黄村店)的营业时间是？" asks
    about the place it names."""
    text = raw.lower()
    letters = "".join(ch for ch in text if ch.isalnum())
    return len(letters) <= DETAIL_MAX_CHARS and not any(b in text for b in "(（[【") \
        and any(d in text for d in _DETAILS) and bool(_ASKING.search(text)) and not _ELSEWHERE.search(text) \
        and not says_no(raw)


# Asking the assistant to pick one: "给我推荐一个…的景点", "帮我找一家", "这些酒店中哪家…？", "这几个景点中哪几个…？".
# Not "哪些" or "别的": "这个景点周边都有哪些餐馆？" asks about what is around the thing it takes.
_ASKS_FOR_A_PICK = re.compile(r"(?:推荐|找)[^，,。.！!？?；;]{0,3}?[一几两个家]|哪家|哪几"
                              r"|\b(?:which (?:one|of)|recommend)\b")


def asks_for_a_pick(raw: str) -> bool:
    """Whether a message asks the assistant to choose or find one (or another) rather than taking one it
    offered: a yes or a "这家" in such a message ("好的，请在这家酒店周边景点里给我推荐一个…") points at what it
    acknowledges or where to look, not at the thing it will be given."""
    return bool(_ASKS_FOR_A_PICK.search(raw.lower()))


def offered_index(raw: str) -> int | None:
    """The ordinal a message picks ("第二个" -> 1, "the first" -> 0), None when it names none."""
    text = raw.lower()
    found = [(text.find(k), v) for k, v in _ORDINALS.items() if k in text]
    return min(found)[1] if found else None


# ---------------------------------------------------------------- indifference

INDIFFERENT = ("无所谓", "都行", "都可以", "随便", "whatever", "don't care", "doesn't matter", "either way")


def indifferent_at(raw: str, start: int, end: int) -> bool:
    """Whether the clause of ``raw[start:end]`` says it does not matter ("安静不安静无所谓")."""
    text = raw.lower()
    left, right = clause_span(text, start, end)
    return any(p in text[left:right] for p in INDIFFERENT)


__all__ = ["QUESTION_WORDS_ZH", "WANT_ZH", "WANT_EN", "YES_DESPITE_NO", "YES_NO_REPLIES", "SOCIAL_REPLIES", "FILLERS",
           "clauses", "is_question", "asks", "tokenize", "says_yes", "says_no", "says_cancel", "says_reset",
           "says_revert", "says_cancel_clause", "negated_at", "YES_ZH", "YES_EN", "CANCEL_ZH", "CANCEL_EN", "RESET_ZH", "RESET_EN",
           "REVERT_PHRASES", "says_accept", "refers_back", "offered_index", "indifferent_at", "is_social", "requests_in", "remarks_in", "social_clause", "asks_for_nothing", "asks_for_action", "asks_about", "only_yes", "asks_for_human", "says_refusal"]
