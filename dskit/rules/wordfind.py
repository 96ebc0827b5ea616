"""Finding cue words in a text with string methods, where a regular expression would cost more to build.

Why: a code node runs in a fresh interpreter on every sandbox call, and ``re`` compiles each pattern it
is given in pure Python — an alternation of a few dozen CJK words costs an ordinary turn as much as
compiling a page of code. The cue lists of :mod:`dskit.rules.noise` are words, words between word boundaries
and two words a short gap apart; these helpers answer the same question as the pattern search
(``bool(pattern.search(text))``) with ``str.find`` running in C. Each definition says which pattern
construct it stands for; tests/test_pattern_free.py holds every use to the pattern it replaced.
"""

from __future__ import annotations


def is_word_char(char: str) -> bool:
    """re's ``\\w`` on str: a letter or digit of any script (``str.isalnum``), or ``_``."""
    return char.isalnum() or char == "_"


def has_any(text: str, words: tuple[str, ...]) -> bool:
    """``word1|word2|...`` of plain words: whether any of them occurs in ``text``."""
    return any(word in text for word in words)


def has_word(text: str, word: str, *, left: bool = True, right: bool = True) -> bool:
    """``\\bword\\b`` (``left``/``right`` say which boundary the pattern has) for a word that begins and
    ends with a word character: an occurrence with no word character just before and/or after it."""
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        if (not left or start == 0 or not is_word_char(text[start - 1])) and \
                (not right or end == len(text) or not is_word_char(text[end])):
            return True
        start = text.find(word, start + 1)
    return False


def has_words(text: str, words: tuple[str, ...]) -> bool:
    """``\\b(?:word1|word2|...)\\b``: whether any of the words occurs between word boundaries."""
    return any(has_word(text, word) for word in words)


def has_gap(text: str, head: str, tails: str, limit: int) -> bool:
    """``head.{0,limit}[tails]``: ``head``, then at most ``limit`` characters other than a newline (what
    ``.`` matches), then one of the characters ``tails``."""
    start = text.find(head)
    while start >= 0:
        after = start + len(head)
        for char in text[after:after + limit + 1]:
            if char in tails:
                return True
            if char == "\n":
                break
        start = text.find(head, start + 1)
    return False


def has_counted(text: str, numerals: str, units: tuple[str, ...]) -> bool:
    """``[numerals]+\\s*(?:unit1|unit2|...)`` for units that start with neither a numeral nor a space: a
    run of numerals, then any white space (``str.isspace``, re's ``\\s``), then a unit. Only the end of
    a whole run can be followed by a unit, so each run is tried once."""
    if not any(numeral in text for numeral in numerals):
        return False
    index, size = 0, len(text)
    while index < size:
        if text[index] not in numerals:
            index += 1
            continue
        while index < size and text[index] in numerals:
            index += 1
        after = index
        while after < size and text[after].isspace():
            after += 1
        if text.startswith(units, after):
            return True
    return False
