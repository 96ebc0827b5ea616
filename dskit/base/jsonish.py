"""Lenient JSON from raw LLM text.

LLM answers arrive wrapped in prose, code fences and apologies, written with Python literals,
single quotes, trailing commas, comments or Chinese punctuation, and sometimes cut off mid-way when
the model hits its token limit. A code node that feeds such text to ``json.loads`` fails the whole
turn, so the engine reads it with :func:`extract_json` instead, which returns what is recoverable
and a short reason when nothing is.

Design, in the order it matters:

* never raise, on any input, because it runs inside a Dify code node on every turn;
* stay linear in the input size: candidate starts are found by a regular expression (``{`` before
  a key, ``[`` before a value); a strict ``json`` decode is tried first (C speed), then the lenient
  recursive-descent parser below; failed attempts draw on a budget, after which scanning resumes at
  the failure point instead of one character later. Ordinary answers take well under a millisecond
  per kilobyte; a megabyte of adversarial brackets a few seconds at worst;
* valid JSON always means the same as for ``json.loads`` (the lenient grammar is a superset);
* truncated text keeps only what is complete: open containers are closed, but a string, number or
  literal cut by the end of the text is dropped together with its key, because a half value
  (``"北京大"`` for ``"北京大学"``) written into dialogue state is worse than a missing one;
* no lone surrogate (``"\\ud800"`` in a model's JSON) survives parsing: UTF-8 cannot encode one, so
  it would break every later serialisation of the state, the execute payload or a plugin message.
  Each becomes U+FFFD; a high and a low surrogate side by side become the character they encode.

Standard library only (engine module).
"""

from __future__ import annotations

import json
import re

__all__ = ["extract_json", "loads_strict_or_none", "scrub_surrogates", "jsonish_scrub"]

# Deep nesting is never a real LLM answer; the limit also keeps recursion far from Python's limit.
_MAX_DEPTH = 64
# Whitespace (including full-width and no-break spaces, BOM) and //, #, /* */ comments.
_SKIP = re.compile(r"(?:[\s\ufeff]+|//[^\n]*|#[^\n]*|/\*.*?(?:\*/|\Z))*", re.S)
_SPACE = re.compile(r"[ \t\r\n\u3000\xa0]*")
# Where a container may start: "{" before a key, "}" or a comment, "[" before a value or "]".
# The look-ahead runs in C and skips prose such as "{name}" or "x{" without a Python-level attempt;
# its backtracking is bounded by the word or space run after the bracket (no possessive quantifiers:
# the Dify sandbox may run Python 3.10).
_OBJECT_AHEAD = (
    r"\{(?=[\s\ufeff]*(?:\Z|[}\"'\u201c\u201d\u2018,\uff0c#]|//|/\*"
    r"|[\w$.+-]+[\s\ufeff]*(?:[:\uff1a]|\Z)))"
)
_START_OBJECT = re.compile(_OBJECT_AHEAD)
_START = re.compile(
    _OBJECT_AHEAD
    + r"|\[(?=[\s\ufeff]*(?:\Z|[\]\[{\"'\u201c\u201d\u2018,\uff0c#+\-.\dtfnTFNIu]|//|/\*))"
)
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_NUMBER_TAIL = re.compile(r"[\w.+-]*")
_WORD = re.compile(r"[^\W\d]\w*")
_BARE_KEY = re.compile(r"[\w$.+-]+")
# Opening quote -> (closing quotes, regex for a run of ordinary characters). The patterns are compiled
# when a string with that quote is read (re keeps them): a code node compiles every pattern it uses on
# every run, and most answers hold only ASCII double quotes, or none outside strict JSON.
_QUOTES = {
    '"': ('"', r'[^"\\]+'),
    "'": ("'", r"[^'\\]+"),
    "\u201c": ("\u201d\u201c", r"[^\u201d\u201c\\]+"),  # “…” (and sloppy “…“)
    "\u201d": ("\u201d\u201c", r"[^\u201d\u201c\\]+"),  # ”…”
    "\u2018": ("\u2019\u2018", r"[^\u2019\u2018\\]+"),  # ‘…’
}
_ESCAPES = {
    '"': '"', "\\": "\\", "/": "/", "'": "'",
    "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
}
_HEX = "0123456789abcdefABCDEF"
_LITERALS = {
    "true": True, "false": False, "null": None,
    "True": True, "False": False, "None": None,
    "NaN": float("nan"), "Infinity": float("inf"), "undefined": None,
}
_COMMAS = ",\uff0c"   # , ，
_COLONS = ":\uff1a"   # : ：
_BUDGET_FLOOR = 20_000
# json's errors count newlines up to the failure (O(position)), so strict decoding stops being tried
# after a few failures; successes are cheap and keep it on (prose + JSON blocks run at C speed).
_STRICT_FAILURES = 8
# Failed attempts allowed before giving up on the rest of the text: real answers have a handful of
# bracketed prose fragments at most; this bounds the time spent on adversarial text.
_MAX_FAILURES = 5_000
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def _join_pair(match: re.Match) -> str:
    high, low = match.group()
    return chr(0x10000 + ((ord(high) - 0xD800) << 10) + (ord(low) - 0xDC00))


def has_surrogates(text: str) -> bool:
    """Whether ``text`` holds a surrogate code point (U+D800-U+DFFF): exactly the code points that UTF-8
    cannot encode. Why not ``_SURROGATE.search``: re compiles a class of that range in pure Python, a
    fifth of a millisecond of every code node run that writes a state; encoding runs in C."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def scrub_surrogates(text: str) -> str:
    """``text`` without surrogate code points: a high+low pair becomes its character, a lone one U+FFFD."""
    if not has_surrogates(text):
        return text
    return _SURROGATE.sub("\ufffd", _SURROGATE_PAIR.sub(_join_pair, text))


def jsonish_scrub(value: object) -> object:
    """Scrub every string of a decoded JSON value in place (keys too); returns the value.

    Iterative, so that nesting as deep as ``json.loads`` accepts cannot exhaust the call stack.
    """
    if isinstance(value, str):
        return scrub_surrogates(value)
    stack = [value] if isinstance(value, (dict, list)) else []
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, list):
            for index, child in enumerate(item):
                if isinstance(child, str):
                    item[index] = scrub_surrogates(child)
                elif isinstance(child, (dict, list)):
                    stack.append(child)
            continue
        for key in list(item):
            child = item[key]
            if isinstance(child, str):
                child = item[key] = scrub_surrogates(child)
            elif isinstance(child, (dict, list)):
                stack.append(child)
            if isinstance(key, str) and has_surrogates(key):
                del item[key]
                item[scrub_surrogates(key)] = child
    return value


class _JsonishFail(Exception):
    """The text at ``pos`` cannot continue the value being parsed."""

    def __init__(self, pos: int) -> None:
        super().__init__(pos)
        self.pos = pos


class _JsonishCut:
    """Marker for a scalar cut off by the end of the text (dropped, never returned)."""


_CUT = _JsonishCut()


class _JsonishParser:
    """Recursive-descent reader for the lenient grammar; one instance per text.

    Each method takes a position and returns ``(value, next_position)``; it raises
    :class:`_JsonishFail` on text that cannot be JSON-ish, and returns :data:`_CUT` for a
    scalar that the end of the text interrupted.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.n = len(text)

    def skip(self, pos: int) -> int:
        return _SKIP.match(self.text, pos).end()

    def parse(self, pos: int) -> tuple[object, int]:
        """Parse the container starting at ``pos`` (a ``{`` or ``[``)."""
        return self.value(pos, 0, "")

    def value(self, pos: int, depth: int, stack: str) -> tuple[object, int]:
        text = self.text
        char = text[pos]
        if char == "{" or char == "[":
            if depth >= _MAX_DEPTH:
                raise _JsonishFail(pos)
            if char == "{":
                return self.object(pos + 1, depth + 1, stack + "{")
            return self.array(pos + 1, depth + 1, stack + "[")
        if char in _QUOTES:
            return self.string(pos, False)
        if char in "+-" and text.startswith("Infinity", pos + 1):
            return (float("-inf") if char == "-" else float("inf")), pos + 9
        if char in "+-.0123456789":
            return self.number(pos)
        return self.word(pos)

    def object(self, pos: int, depth: int, stack: str) -> tuple[dict, int]:
        text, n = self.text, self.n
        result: dict = {}
        while True:
            pos = self.skip(pos)
            if pos >= n:
                return result, n
            char = text[pos]
            if char == "}":
                return result, pos + 1
            if char == "]" and "[" in stack:
                return result, pos  # mismatched closer: close this object, let the array take it
            if char in _COMMAS:
                pos += 1  # trailing or doubled comma
                continue
            key, pos = self.key(pos)
            if key is _CUT:
                return result, n
            pos = self.skip(pos)
            if pos >= n:
                return result, n  # dangling key without value
            if text[pos] not in _COLONS:
                raise _JsonishFail(pos)
            pos = self.skip(pos + 1)
            if pos >= n:
                return result, n
            item, pos = self.value(pos, depth, stack)
            if item is _CUT:
                return result, n
            result[key] = item
            pos = self.after_item(pos, "}")

    def array(self, pos: int, depth: int, stack: str) -> tuple[list, int]:
        text, n = self.text, self.n
        result: list = []
        while True:
            pos = self.skip(pos)
            if pos >= n:
                return result, n
            char = text[pos]
            if char == "]":
                return result, pos + 1
            if char == "}" and "{" in stack:
                return result, pos
            if char in _COMMAS:
                pos += 1
                continue
            item, pos = self.value(pos, depth, stack)
            if item is _CUT:
                return result, n
            result.append(item)
            pos = self.after_item(pos, "]")

    def after_item(self, pos: int, closer: str) -> int:
        """Consume the separator after a member; a missing comma is tolerated, junk is not."""
        pos = self.skip(pos)
        if pos >= self.n:
            return pos
        char = self.text[pos]
        if char in _COMMAS:
            return pos + 1
        if char in "}]" or char in _QUOTES or char in "{[+-." or char.isalnum() or char == "_":
            return pos  # closer (checked by the caller) or the next member without a comma
        raise _JsonishFail(pos)

    def key(self, pos: int) -> tuple[object, int]:
        char = self.text[pos]
        if char in _QUOTES:
            return self.string(pos, True)
        match = _BARE_KEY.match(self.text, pos)
        if not match:
            raise _JsonishFail(pos)
        if match.end() >= self.n:
            return _CUT, self.n
        return match.group(), match.end()

    def string(self, pos: int, is_key: bool) -> tuple[object, int]:
        text, n = self.text, self.n
        closers, run = _QUOTES[text[pos]]
        plain = re.compile(run)
        ascii_quote = closers in ('"', "'")
        parts: list[str] = []
        pos += 1
        while True:
            match = plain.match(text, pos)
            if match:
                parts.append(match.group())
                pos = match.end()
            if pos >= n:
                return _CUT, n
            char = text[pos]
            if char == "\\":
                piece, pos = self.escape(pos)
                if piece is None:
                    return _CUT, n
                parts.append(piece)
                continue
            pos += 1
            if not ascii_quote or self.quote_closes(pos, is_key):
                return "".join(parts), pos
            parts.append(char)  # an unescaped quote inside the text, e.g. 推荐"全聚德"烤鸭

    def quote_closes(self, pos: int, is_key: bool) -> bool:
        """Whether an ASCII quote just before ``pos`` ends the string (vs. a stray inner quote).

        In valid JSON a closing quote is always followed by ``, } ] :`` or the end; a quote followed by
        anything else is taken as part of the text. Also closing: a newline then a quote (missing comma
        between lines), a full-width comma then a quote, and a full-width colon after a key.
        """
        text = self.text
        end = _SPACE.match(text, pos).end()
        if end >= self.n:
            return True
        char = text[end]
        if char in ",}]:":
            return True
        if is_key and char == "\uff1a":
            return True
        if char == "\uff0c":  # "北京"，"人数" closes; 他说"你好"，然后 does not
            after = _SPACE.match(text, end + 1).end()
            return after < self.n and text[after] in _QUOTES
        if char == "/" and text.startswith(("//", "/*"), end):
            return True
        return char in "\"'" and text.find("\n", pos, end) >= 0

    def escape(self, pos: int) -> tuple[str | None, int]:
        """Decode the escape at ``pos`` (a backslash); ``None`` when the text ends inside it."""
        text = self.text
        if pos + 1 >= self.n:
            return None, self.n
        char = text[pos + 1]
        if char in _ESCAPES:
            return _ESCAPES[char], pos + 2
        if char == "x":  # Python's \xNN (JSON never has it)
            digits = text[pos + 2:pos + 4]
            if len(digits) == 2 and all(c in _HEX for c in digits):
                return chr(int(digits, 16)), pos + 4
            if pos + 2 + len(digits) >= self.n and all(c in _HEX for c in digits):
                return None, self.n
        if char != "u":
            return "\\" + char, pos + 2  # unknown escape kept as written, like Python
        code, end = self.hex4(pos + 2)
        if code is None:
            return (None, self.n) if end >= self.n else ("\\u", pos + 2)
        if 0xD800 <= code <= 0xDBFF and text.startswith("\\u", end):
            low, low_end = self.hex4(end + 2)
            if low is not None and 0xDC00 <= low <= 0xDFFF:
                return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)), low_end
        return chr(code), end

    def hex4(self, pos: int) -> tuple[int | None, int]:
        digits = self.text[pos:pos + 4]
        if len(digits) == 4 and all(c in _HEX for c in digits):
            return int(digits, 16), pos + 4
        if len(digits) < 4 and all(c in _HEX for c in digits):
            return None, self.n  # cut by the end of the text
        return None, pos

    def number(self, pos: int) -> tuple[object, int]:
        text, n = self.text, self.n
        match = _NUMBER.match(text, pos)
        if not match:
            if _NUMBER_TAIL.match(text, pos).end() >= n:
                return _CUT, n  # "-" or "." at the very end
            raise _JsonishFail(pos)
        end = match.end()
        if end >= n:
            return _CUT, n  # 12 may have been 123
        if text[end].isalnum() or text[end] in "._+-":
            if _NUMBER_TAIL.match(text, end).end() >= n:
                return _CUT, n  # 1e / 1.5E+ at the very end
            raise _JsonishFail(end)
        literal = match.group()
        try:
            if any(c in literal for c in ".eE"):
                return float(literal), end
            return int(literal), end
        except ValueError:  # e.g. more digits than int() accepts
            raise _JsonishFail(pos) from None

    def word(self, pos: int) -> tuple[object, int]:
        match = _WORD.match(self.text, pos)
        if not match:
            raise _JsonishFail(pos)
        word = match.group()
        if word in _LITERALS:
            return _LITERALS[word], match.end()
        if match.end() >= self.n and any(lit.startswith(word) for lit in _LITERALS):
            return _CUT, self.n
        raise _JsonishFail(pos)


def _pick(text: str, prefer_keys: tuple[str, ...]) -> tuple[object | None, str]:
    """Scan left to right and choose: the first dict with a preferred key, else the first dict,
    else the first list.

    Once a list is kept, only ``{`` starts are looked for. Failed attempts spend a budget; while it
    lasts, scanning resumes one character after a failed start (robust for prose full of brackets),
    afterwards at the failure point, so that adversarial input stays linear; after
    ``_MAX_FAILURES`` failures the rest of the text is ignored.
    """
    decoder = json.JSONDecoder()
    parser = _JsonishParser(text)
    budget = _BUDGET_FLOOR + len(text) // 4
    strict_failures = failures = 0
    first_dict = first_list = None
    attempted = False
    pos = 0
    while True:
        # each name used only as NAME.search(...): the bundle compiles it on first use (codegen/lean.py)
        match = _START.search(text, pos) if first_list is None else _START_OBJECT.search(text, pos)
        if not match:
            break
        attempted = True
        start = match.start()
        strict = strict_failures < _STRICT_FAILURES
        value, end, failed_at, strict_ok = _attempt(text, start, decoder, parser, strict)
        strict_failures += strict and not strict_ok
        if failed_at >= 0:
            failures += 1
            if failures >= _MAX_FAILURES:
                break
            budget -= failed_at - start + 1
            pos = start + 1 if budget > 0 else max(start + 1, failed_at)
            continue
        pos = max(end, start + 1)
        if isinstance(value, dict):
            if not prefer_keys or any(key in value for key in prefer_keys):
                return value, ""
            if first_dict is None:
                first_dict = value
        elif isinstance(value, list) and first_list is None:
            first_list = value
    if first_dict is not None:
        return first_dict, ""
    if first_list is not None:
        return first_list, ""
    if attempted:
        return None, "no parsable JSON object found"
    return None, "no JSON object found"


def _attempt(
    text: str, start: int, decoder: json.JSONDecoder, parser: _JsonishParser, strict: bool
) -> tuple[object, int, int, bool]:
    """Read one container at ``start``: ``(value, end, -1, strict_ok)`` or
    ``(None, 0, failure position, False)``."""
    strict_fail = start
    if strict:
        try:
            value, end = decoder.raw_decode(text, start)
            return value, end, -1, True
        except (ValueError, RecursionError) as exc:
            strict_fail = getattr(exc, "pos", start) or start
    try:
        value, end = parser.parse(start)
    except _JsonishFail as fail:
        return None, 0, max(fail.pos, strict_fail), False
    return value, end, -1, False


def _keys(prefer_keys: object) -> tuple[str, ...]:
    if isinstance(prefer_keys, str):
        return (prefer_keys,)
    try:
        return tuple(key for key in prefer_keys if isinstance(key, str))  # type: ignore[union-attr]
    except TypeError:
        return ()


def extract_json(text: str, prefer_keys: tuple[str, ...] = ()) -> tuple[object | None, str]:
    """Return ``(value, error)``: the JSON object (or list) found in ``text`` and ``""``, or
    ``(None, reason)``. Never raises.

    Among several objects the first one containing any of ``prefer_keys`` wins, else the first
    object, else the first list. Whole-text JSON that is a string holding JSON (double-encoded) is
    unwrapped once.
    """
    try:
        if text is None:
            return None, "no text"
        if isinstance(text, (bytes, bytearray)):
            text = bytes(text).decode("utf-8", errors="replace")
        if not isinstance(text, str):
            return None, "input is not text"
        if not text.strip():
            return None, "empty text"
        keys = _keys(prefer_keys)
        whole = loads_strict_or_none(text)
        if isinstance(whole, (dict, list)):
            return jsonish_scrub(whole), ""
        if isinstance(whole, str) and whole.strip():
            inner, _error = _pick(whole, keys)
            if inner is not None:
                return jsonish_scrub(inner), ""
        value, error = _pick(text, keys)
        return jsonish_scrub(value), error
    except Exception as exc:  # last line of defence: the code node must not fail
        return None, f"could not read JSON ({type(exc).__name__})"


def loads_strict_or_none(text: object) -> object | None:
    """``json.loads`` of the stripped text, or ``None`` when it is not exactly one JSON value."""
    if not isinstance(text, str):
        return None
    stripped = text.strip().lstrip("\ufeff")
    if not stripped:
        return None
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        return None
