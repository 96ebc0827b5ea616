"""The token estimator (dskit.base.tokens): cheap, monotone, nearly additive, never raising."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from dskit.base.tokens import TOKEN_WEIGHTS, estimate_tokens, token_counts, truncate_to_tokens

MIXED = st.text(alphabet=st.sampled_from(list("订餐明天晚上七点北京，。？！ab cdXYZ0123:-\n\t😀é")), max_size=200)


def test_empty_and_non_strings_are_zero() -> None:
    for value in ("", None, 12, 3.5, b"bytes", ["a"], {"a": 1}):
        assert estimate_tokens(value) == 0


def test_weights_cover_every_count() -> None:
    assert set(token_counts("混合 text 123！")) == set(TOKEN_WEIGHTS)


def test_counts_by_class() -> None:
    counts = token_counts("我想订 2 张票, ok?\n\n谢谢！")
    assert counts["cjk"] == 7
    assert counts["digit"] == 1
    assert counts["word"] == 1 and counts["word_char"] == 2
    assert counts["cjk_punct"] == 1
    assert counts["punct"] == 2
    assert counts["newline_run"] == 1


def test_chinese_costs_about_two_thirds_of_a_token_per_character() -> None:
    text = "我想订一张明天下午从北京到上海的高铁票，二等座靠窗" * 4
    chars = len(text)
    assert 0.5 * chars <= estimate_tokens(text) <= 0.8 * chars


def test_english_costs_about_a_token_per_word() -> None:
    text = "Please book a table for four people tomorrow evening at the usual place " * 3
    words = len(text.split())
    assert 0.8 * words <= estimate_tokens(text) <= 1.6 * words


@given(MIXED)
def test_estimate_grows_with_every_character(text: str) -> None:
    previous = 0
    for end in range(0, len(text) + 1, 7):
        value = estimate_tokens(text[:end])
        assert value >= previous
        previous = value


@given(MIXED, MIXED)
def test_concatenation_never_costs_more_than_its_parts(a: str, b: str) -> None:
    assert estimate_tokens(a + b) <= estimate_tokens(a) + estimate_tokens(b)


@settings(max_examples=60)
@given(MIXED, st.integers(min_value=0, max_value=80))
def test_truncate_fits_and_keeps_a_prefix(text: str, budget: int) -> None:
    cut = truncate_to_tokens(text, budget)
    assert estimate_tokens(cut) <= budget
    if estimate_tokens(text) <= budget:
        assert cut == text
    elif cut:
        assert cut.endswith("…") and text.startswith(cut[:-1])


def test_truncate_rejects_nonsense_without_raising() -> None:
    assert truncate_to_tokens(None, 10) == ""  # type: ignore[arg-type]
    assert truncate_to_tokens("很长的文本" * 10, 0) == ""


# The character classes as first written, as regexes: the counting replaced them with code point
# ranges (cheaper to set up in a fresh sandbox process) and must count exactly what they matched.
_REGEX_CLASSES = {
    "cjk": re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff]"),
    "cjk_punct": re.compile(r"[\u3000-\u303f\uff00-\uffef\u2010-\u2027\u3040-\u30ff]"),
    "digit": re.compile(r"[0-9]"),
    "punct": re.compile(r"[!-/:-@\[-`{-~]"),
}


def _regex_other(text: str) -> int:
    words = re.findall(r"[A-Za-z]+", text)
    classified = sum(len(rx.findall(text)) for rx in _REGEX_CLASSES.values()) + sum(map(len, words))
    return max(0, len(text) - classified - len(re.findall(r"\s", text)))


def test_every_code_point_falls_in_the_class_its_regex_gave_it() -> None:
    for start in range(0, 0x110000, 0x1000):
        text = "".join(chr(c) for c in range(start, start + 0x1000) if not 0xD800 <= c <= 0xDFFF)
        counts = token_counts(text)
        for key, rx in _REGEX_CLASSES.items():
            assert counts[key] == len(rx.findall(text)), (hex(start), key)
        assert counts["other"] == _regex_other(text), hex(start)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80)
       | st.text(alphabet="好的，。 \u3000\t\n7aZ!🙂𠀀", max_size=80))
def test_counts_match_the_regex_definitions(text: str) -> None:
    counts = token_counts(text)
    for key, rx in _REGEX_CLASSES.items():
        assert counts[key] == len(rx.findall(text)), key
    assert counts["other"] == _regex_other(text)
