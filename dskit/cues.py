"""The engine's one vocabulary of conversational cues: yes, no, drop it, start over, take it back,
and the social words (greetings, acknowledgements, thanks) that carry no content.

Three parts of the engine read these words and must agree on them: grounding (does this message say
yes to the confirmation question?), the history's noise rules (is "好的" small talk or the answer to a
confirmation?) and long-term memory (is "好的" a fact worth keeping?). Each word list lives here once.
"""

from __future__ import annotations

# Words that say yes (grounding: a confirm needs one of them, and none of NO).
YES = ("是", "对", "好", "行", "可以", "确认", "确定", "没问题", "没错", "嗯", "恩", "同意", "提交", "办吧", "就这样",
       "就这么", "再试", "重试", "试一次", "ok", "okay", "yes", "yep", "sure", "confirm", "correct", "right",
       "go ahead", "do it", "try again", "retry", "please do", "fine", "sounds good")
# Phrases built from a no-word that say yes ("没问题": no problem).
YES_DESPITE_NO = ("没问题", "没错", "不错", "没毛病", "不用改", "不用再改", "no problem")
# Words that say no.
NO = ("不", "别", "否", "没", "算了", "取消", "等等", "再想想", "错", "no", "not", "don't", "dont", "wait", "cancel",
      "wrong", "stop")
# Words that drop something (a task, a value).
CANCEL = ("不要", "不用", "不需要", "不想", "取消", "算了", "不办", "不订", "不装", "不修", "不租", "不查", "不去", "不买",
          "放弃", "退掉", "撤销", "不了", "作罢", "cancel", "never mind", "nevermind", "forget", "drop", "don't want",
          "no longer", "stop")
# Words that ask to start over.
RESET = ("重来", "重新来", "重新开始", "从头", "全部清空", "都清空", "清空", "重置", "全部取消", "都不要", "start over", "reset",
         "restart", "from scratch", "clear everything")
# Words that take a change back.
REVERT = ("原来", "之前", "刚才", "改回", "还是", "恢复", "撤回", "回去", "算了", "back", "undo", "previous",
          "original", "as before", "revert")

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


__all__ = ["YES", "YES_DESPITE_NO", "NO", "CANCEL", "RESET", "REVERT", "YES_NO_REPLIES", "SOCIAL_REPLIES", "FILLERS"]
