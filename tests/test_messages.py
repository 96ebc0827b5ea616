"""What the assistant says reads as sentences: in English one sentence after another has a space between
(issue 39: "Book a cleaning.What phone number ..."), in Chinese none."""

from __future__ import annotations

import re
import string

import pytest

from dskit.base.messages import MESSAGES, msg, sentences
from conftest import load_example_catalog
from enginekit import Dialogue, start

# A sentence of its own: it ends as a sentence does. The others are pieces put inside a sentence
# (a value, a separator, "clear {slot}").
SENTENCE_END = (".", "?", "!", ")", "。", "？", "！", "）")


def _filled(lang: str, key: str) -> str:
    """The message with every placeholder filled by a word of that language."""
    names = {name for _, name, _, _ in string.Formatter().parse(MESSAGES[lang][key]) if name}
    word = "Sunday" if lang == "en" else "周日"
    return msg(key, lang, **dict.fromkeys(names, word))


def _sentences(lang: str) -> list[str]:
    return [key for key, text in MESSAGES[lang].items() if text.rstrip().endswith(SENTENCE_END)
            and not text[:1].isspace() and not key.startswith("tool_")]


def test_every_english_message_pair_reads_as_two_sentences() -> None:
    keys = _sentences("en")
    assert len(keys) > 25
    for first in keys:
        for second in keys:
            a, b = _filled("en", first), _filled("en", second)
            joined = sentences("en", a, b)
            space = "" if a[-1].isspace() else " "  # a piece that ends in its own space ("... retry. ")
            assert joined == a + space + b, (first, second, joined)
            assert not re.search(r"[.?!][A-Z]", joined.replace("e.g.", "")), (first, second, joined)


def test_chinese_sentences_run_together_and_empty_parts_leave_no_space() -> None:
    for first in _sentences("zh"):
        a = _filled("zh", first)
        assert sentences("zh", a, "请问几位？") == a + "请问几位？"
    assert sentences("en", "", "What day?", "") == "What day?"
    assert sentences("en", "Done. ", "What day?") == "Done. What day?"  # no second space


def test_a_resumed_task_in_english_says_two_sentences() -> None:
    """The side enquiry runs, the booking comes back: "Let's continue with Book a bike repair. What ..."."""
    catalog = load_example_catalog("bike_repair_en")
    d = Dialogue(catalog, lang="en")
    d.say(start("book_repair", bike_type="e-bike"))
    d.say(start("repair_status", ticket="R1042"))
    question = d.decision["question"]
    assert d.decision["resumed"]["task"] == "book_repair", d.decision
    assert "Let's continue with Book a bike repair. " in question
    assert not re.search(r"[.?!][A-Z]", question), question


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_sub_task_sentences_of_an_execution_are_sentences(lang: str) -> None:
    from dskit.state.views import execute_reply

    catalog = load_example_catalog("telecom")
    task, sub = list(catalog["tasks"])[:2]
    payload = {"task": task, "slots": {}, "subtasks": [{"task": sub, "slots": {}}]}
    for called, ok in ((True, True), (False, False)):
        text = execute_reply(catalog, payload, called=called, ok=ok, lang=lang)
        if lang == "en":
            assert not re.search(r"[.?!:][A-Z]", text), text
        else:
            assert "。 " not in text and not text.startswith(" "), text
