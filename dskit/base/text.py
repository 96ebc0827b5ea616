"""Text hygiene shared by the engine: clean text from anything, one-line rendering, bounded integers.

Inputs arrive from Dify variables, model output and users; each helper here is the one rule for its
job, so the history, the context and the code nodes cannot disagree about what "clean" means.
"""

from __future__ import annotations

import json
import re
import unicodedata

from .jsonish import scrub_surrogates

# Control characters other than tab and newline.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# What a model or tokenizer may read as a line break (str.splitlines' list). A Chatflow that pastes the
# raw message after "> " checks for each of them (dskit/tooling/dslbuild/flows.py).
LINE_BREAK_CHARS = ("\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
_BREAKS = "".join(LINE_BREAK_CHARS)
LINE_MARK = " ⏎ "


def clean_text(value: object, max_chars: int | None = None) -> str:
    """Any input as a clean string: str() of non-strings, lone surrogates replaced, control
    characters out, line ends as "\\n". ``max_chars`` keeps the tail of an over-long text."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    if max_chars is not None and len(text) > max_chars:
        text = text[-max_chars:]
    text = text.encode("utf-8", "replace").decode("utf-8", "replace")
    return without_controls(text.replace("\r\n", "\n").replace("\r", "\n"))


def without_controls(text: str) -> str:
    """``text`` without C0 control characters (but tab, line feed and carriage return) and DEL."""
    return _CONTROL.sub("", text)


def _invisible(char: str) -> bool:
    """Zero-width and direction marks (Unicode "format" characters): invisible, yet they let a line
    that starts with one (``"\\u200bassistant:"``) slip past a check for a role label."""
    return unicodedata.category(char) == "Cf"


def one_line(value: object) -> str:
    """User-provided text for a prompt: on one line (breaks shown as ``⏎``), invisible characters out.

    Text on one line cannot start a line, so it cannot pass itself off as a zone header or a role
    label that the engine writes at the start of a line (docs/context.md, "What the model can trust").
    """
    text = "".join(ch for ch in clean_text(value) if not _invisible(ch))
    return marked_breaks(text.strip())


def marked_breaks(text: str) -> str:
    """``text`` with every line break written as LINE_MARK, ``"\\r\\n"`` as one.

    str.replace rather than a pattern: a code node compiles each pattern it uses on every sandbox run,
    in re's pure-Python compiler. The same result as substituting ``\\r\\n|[<LINE_BREAK_CHARS>]``:
    "\\r\\n" pairs cannot overlap, so collapsing them first leaves one break per match, and the mark
    holds no break."""
    text = text.replace("\r\n", "\n")
    for char in LINE_BREAK_CHARS:
        text = text.replace(char, LINE_MARK)
    return text


def escape_invisible(text: str) -> str:
    """``text`` with line separators and invisible characters written as ``\\uXXXX`` escapes
    (for JSON text, which leaves them raw)."""
    return "".join(f"\\u{ord(c):04x}" if c in _BREAKS or _invisible(c) else c for c in text)


def is_int(value: object) -> bool:
    """An integer that is not a boolean (JSON's true is not 1 here)."""
    return isinstance(value, int) and not isinstance(value, bool)


def bounded_int(value: object, default: int, low: int | None = None, high: int | None = None) -> int:
    """An integer from an int, a float or their text ("3000", "3e3"), clamped to [low, high];
    ``default`` when it is not a finite number (booleans included)."""
    if isinstance(value, bool):
        return default
    try:
        number = int(float(value.strip() if isinstance(value, str) else value))  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return default
    if low is not None:
        number = max(number, low)
    if high is not None:
        number = min(number, high)
    return number


def short_text(value: object) -> str:
    """A command or value as a short string for the timeline, the decision and refusal reasons. Never
    raises."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        try:
            text = repr(value)
        except Exception:  # noqa: BLE001 - RecursionError, or a repr that fails
            text = f"<{type(value).__name__}>"
    return scrub_surrogates(text[:160])
