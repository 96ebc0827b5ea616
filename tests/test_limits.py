"""dskit.base.limits measures strings the way Dify 1.8 does (the minimum supported version)."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dskit.base.limits import (CODE_MAX_STRING_LENGTH, MAX_VARIABLE_SIZE, MIN_DIFY_VERSION, fits_dify_string,
                          segment_size, string_excess)

SAMPLES = ["", "a", "abc" * 1000, "é" * 10, "中文" * 500, "😀", "a😀" * 100, "\x00", "\uffff", "ÿ" * 3]


@pytest.mark.parametrize("text", SAMPLES, ids=lambda t: f"{len(t)}:{t[:3]!r}")
def test_segment_size_is_what_graphon_reports_or_a_little_more(text):
    """Dify compares Segment.size (sys.getsizeof of the value, graphon variables/segments.py) with
    MAX_VARIABLE_SIZE; our estimate uses the larger CPython 3.10/3.11 headers, so it never undershoots."""
    segments = pytest.importorskip("graphon.variables.segments")
    actual = segments.StringSegment(value=text).size
    assert actual == sys.getsizeof(text)
    assert 0 <= segment_size(text) - actual <= 24


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec=None), max_size=300))
def test_segment_size_never_undershoots(text):
    assert segment_size(text) >= sys.getsizeof(text)


def test_the_figures_of_dify_1_8():
    assert MIN_DIFY_VERSION == "1.8.0"
    assert CODE_MAX_STRING_LENGTH == 80_000 and MAX_VARIABLE_SIZE == 204_800


def test_one_emoji_makes_every_character_four_bytes():
    assert fits_dify_string("中" * 80_000)  # 2 bytes a character: 160 KB
    assert not fits_dify_string("中" * 80_001)  # one character over the code-node limit
    text = "中" * 51_500 + "😀"  # 51,501 characters of 4 bytes: 206 KB
    assert len(text) < CODE_MAX_STRING_LENGTH and not fits_dify_string(text)
    trimmed = text[string_excess(text):]
    assert fits_dify_string(trimmed) and not fits_dify_string("x" + trimmed) and len(trimmed) > 51_000


def test_excess_counts_characters_to_remove_with_room_to_spare():
    assert string_excess("a" * 100) == 0
    assert string_excess("a" * (CODE_MAX_STRING_LENGTH + 7)) == 7
    assert string_excess("a" * CODE_MAX_STRING_LENGTH, reserve=10) == 10
