"""Dify's limits that what the engine writes must fit, in one place, with where each comes from.

The minimum supported Dify is 1.8.0: it is the first release whose code nodes may output booleans
(langgenius/dify PR #24437), which the generated code nodes use. Every figure below is the one that
release enforces with its default configuration, read from Dify's source and, where graphon (Dify's
extracted workflow engine) carries the same rule, from graphon 0.8.0's source. A newer Dify is
never stricter.

Standard library only (engine module).
"""

from __future__ import annotations


MIN_DIFY_VERSION = "1.8.0"

# A code node's string output, in characters. Dify api/configs/feature/__init__.py
# CODE_MAX_STRING_LENGTH: 80,000 until PR #26592 (merged 2025-10-05) raised the default to 400,000.
# The check (graphon nodes/code/code_node.py ``_check_string``; Dify's CodeNode the same):
# ``len(value) > max_string_length`` fails the node; NUL characters are then removed from the value.
CODE_MAX_STRING_LENGTH = 80_000

# A conversation variable's size in bytes. Dify api/configs/feature/__init__.py MAX_VARIABLE_SIZE,
# default 200 KiB. api/factories/variable_factory.py ``_build_variable_from_mapping`` raises
# VariableError("variable size ... exceeds limit ...") when ``result.size > MAX_VARIABLE_SIZE`` as a
# conversation's variables are loaded for a run, so one oversized write breaks every later turn.
# ``Segment.size`` is ``sys.getsizeof(self.value)`` (graphon variables/segments.py; Dify
# core/variables/segments.py): for a string it depends on its widest character, not on UTF-8 bytes.
MAX_VARIABLE_SIZE = 200 * 1024

# sys.getsizeof(str) on 64-bit CPython is a header plus (len + 1) * width, the width being 1, 2 or 4
# bytes by the widest character (PEP 393). Headers: 3.10/3.11 48 (ASCII) and 72 (other); 3.12 40 and
# 56. The larger ones are used, so the estimate is never below what any of these versions reports.
_ASCII_HEADER = 48
_WIDE_HEADER = 72


def segment_size(text: str) -> int:
    """What Dify's ``Segment.size`` reports for ``text`` (``sys.getsizeof``), never underestimated."""
    if text.isascii():
        return _ASCII_HEADER + len(text) + 1
    try:
        text.encode("latin-1")
        width = 1
    except UnicodeEncodeError:
        width = 4 if max(text) > "\uffff" else 2  # a character beyond the BMP (no regex: see dskit.base.text)
    return _WIDE_HEADER + (len(text) + 1) * width


def char_width(text: str) -> int:
    """Bytes per character in ``segment_size``: 1, 2 or 4."""
    if text.isascii():
        return 1
    return max(1, (segment_size(text) - _WIDE_HEADER) // (len(text) + 1))


def string_excess(text: str, reserve: int = 0) -> int:
    """How many characters ``text`` must lose to be both a code-node output and a conversation
    variable of Dify 1.8.0, with room for ``reserve`` more characters (0 when it already fits)."""
    width = char_width(text)
    over_length = len(text) + reserve - CODE_MAX_STRING_LENGTH
    over_size = segment_size(text) + reserve * width - MAX_VARIABLE_SIZE
    return max(0, over_length, -(-over_size // width))


def fits_dify_string(text: str) -> bool:
    """Whether ``text`` can be written by a code node into a conversation variable and read back."""
    return string_excess(text) == 0
