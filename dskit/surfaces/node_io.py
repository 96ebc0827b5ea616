"""Input and output hygiene of the code nodes: anything in, only what Dify accepts out.

A Dify code node fails the whole run when it raises or returns a value of the wrong type, so every
entry function (:mod:`dskit.surfaces.nodes`) reads its variables through :func:`text_in` (a string is
expected, but ``None``, numbers, objects, 1 MB of text or another tool's JSON must not break it) and
returns :func:`conform` of its result: exactly the declared outputs, strings, numbers and booleans,
objects and arrays as compact JSON text. Conversation variables are string-typed; JSON travels as text.

Two Dify rules shape the outputs: a string that looks like scientific notation (``"1e+5"``) is
turned into a float by Dify before it checks types, so such a string gets a trailing space; and a
string output may not exceed 80,000 characters on Dify 1.8 (:mod:`dskit.base.limits`), so every text is capped.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..base.limits import CODE_MAX_STRING_LENGTH, fits_dify_string

NODE_MAX_STRING = CODE_MAX_STRING_LENGTH
_SCIENTIFIC = re.compile(r"^-?\d+\.?\d*e[+-]\d+$", re.IGNORECASE)
# The documented spellings of an API outcome (docs/plugin.md, "record_task_result"), lower-cased.
_TRUE_WORDS = frozenset({"true", "yes", "y", "ok", "success", "succeeded", "1", "是", "成功"})
_FALSE_WORDS = frozenset({"false", "no", "n", "0", "fail", "failed", "failure", "error", "否", "失败"})


def text_in(value: Any) -> str:
    """Any incoming variable as text: None -> "", objects -> JSON, bytes decoded."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        try:
            return str(value)
        except Exception:  # noqa: BLE001 - a value whose str() fails is simply no text
            return ""


def _scientific(text: str) -> bool:
    """Whether Dify would read ``text`` as a number in scientific notation. The pattern is tried only on
    a text that starts as a number and holds an e (a code node compiles every pattern it uses on every
    run, and a state or a reply never starts with a digit)."""
    head = text[1:2] if text[:1] == "-" else text[:1]
    return head.isdecimal() and ("e" in text or "E" in text) and _SCIENTIFIC.match(text) is not None


def text_out(value: Any, limit: int = NODE_MAX_STRING) -> str:
    """A string Dify will accept as-is: capped, and never mistaken for a number."""
    text = text_in(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    if _scientific(text):
        text += " "
    return text


def json_out(value: Any, limit: int = NODE_MAX_STRING) -> str:
    """Compact JSON text for a string output; an over-long document becomes a short marker object."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError, RecursionError):
        text = json.dumps({"unserialisable": True})
    if len(text) > limit:
        text = json.dumps({"truncated": True, "chars": len(text)})
    return text


def node_types(kinds: dict[str, str]) -> dict[str, str]:
    """The Dify output types of a code node for values of these kinds: objects and arrays are
    declared as strings (their JSON text), numbers and booleans as themselves."""
    return {name: kind if kind in ("number", "boolean") else "string" for name, kind in kinds.items()}


def conform(result: Any, types: dict[str, str]) -> dict:
    """Exactly the declared outputs with Dify-valid values, whatever ``result`` holds (last line of defence).

    Missing keys get an empty value of their type; objects and arrays become compact JSON; strings
    are capped and kept out of scientific notation; numbers are finite and within Dify's range;
    booleans are real booleans.
    """
    source = result if isinstance(result, dict) else {}
    out: dict = {}
    for name, kind in types.items():
        value = source.get(name)
        if kind == "number":
            if isinstance(value, bool):
                value = int(value)
            if not isinstance(value, (int, float)) or value != value or value in (float("inf"), float("-inf")):
                value = 0
            if isinstance(value, float):  # Dify refuses more than 20 decimal places
                value = round(value, 10)
            out[name] = max(min(value, 2 ** 63 - 1), -(2 ** 63 - 1))
        elif kind == "boolean":
            out[name] = value if isinstance(value, bool) else False
        elif isinstance(value, (dict, list)):
            out[name] = json_out(value)
        else:
            out[name] = text_out(value)
    return out


def keep_state(state_text: str) -> str:
    """The incoming state, returned unchanged when the turn cannot be processed (if Dify can take it back)."""
    return state_text if fits_dify_string(state_text) and not _scientific(state_text) else ""


def outcome(value: Any) -> bool | None:
    """An API outcome read strictly: True, False, or None when it is none of the documented spellings.

    True: a real true, 1, an HTTP status 200-299, or one of ``_TRUE_WORDS`` (any case, spaces around);
    False: a real false, 0, an HTTP status 300-599, or one of ``_FALSE_WORDS``. Anything else (``"maybe"``,
    ``42``, ``"成功了吗"``) is None, so a caller can refuse it instead of guessing a failure.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        if value != value or value in (float("inf"), float("-inf")) or value != int(value):
            return None
        number = int(value)
        if number == 1 or 200 <= number < 300:
            return True
        if number == 0 or 300 <= number < 600:
            return False
        return None
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    if text.isdecimal() and len(text) <= 6:  # any script's digits; int() reads every decimal digit
        return outcome(int(text))
    if text in _TRUE_WORDS:
        return True
    if text in _FALSE_WORDS:
        return False
    return None


def truthy(value: Any) -> bool:
    """An API outcome as a boolean for a code node, which must not fail: only a documented true is true."""
    if not isinstance(value, (bool, int, float, str)):
        value = text_in(value)
    return outcome(value) is True


def tail_lines(value: Any, max_lines: int, max_chars: int) -> str:
    """The newest part of a text (a summary the user may have grown): its last lines, within a cap."""
    text = text_in(value)
    if len(text) > max_chars:
        text = text[-max_chars:]
    lines = text.split("\n")
    return "\n".join(lines[-max_lines:]) if len(lines) > max_lines else text
