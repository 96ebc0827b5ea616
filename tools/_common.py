"""Glue shared by the tools: reading parameters, shaping outputs, and a guard around every call.

Tools stay thin: they read parameters here, call ``dskit``, and hand the result to :func:`emit`.
All rules live in ``dskit``. This module defines no ``Tool`` subclass on purpose: the SDK loads
each tool file and insists on exactly one subclass of ``Tool`` in it.

Every tool returns the same envelope, so a workflow can branch on it without parsing text:
``ok`` (bool) and ``error`` ("" or a sentence naming the parameter and the problem), as variables
and inside the JSON message. On bad input the other variables keep their neutral defaults — the
state variable is handed back exactly as it came in — so a variable assigner after the tool never
writes something broken.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Generator, Mapping
from typing import Any

from dskit.catalog.catalog import Catalog, CatalogError, load_catalog
from dskit.turn.machine import catalog_mark
from dskit.base.messages import msg, norm_lang
from dskit.state.state import MAX_STATE_CHARS, load_state
from dskit.state.views import failed_outputs, workflow_outputs

logger = logging.getLogger(__name__)

MAX_CATALOG_CHARS = 200_000
MAX_UNDERSTANDING_CHARS = 50_000
MAX_SHORT_CHARS = 2_000
MAX_HISTORY_CHARS = 400_000

def t(key: str, lang: str | None, **values: Any) -> str:
    """A parameter-error text in ``lang`` (zh by default): ``tool_<key>`` in dskit/base/messages.py."""
    return msg(f"tool_{key}", lang or "zh", **values)


class ParamError(Exception):
    """Bad input: carries the parameter name and the user-facing sentence."""

    def __init__(self, param: str, problem: str, lang: str | None, *, message: str = "") -> None:
        self.param = param
        self.message = message or t("bad_param", lang, param=param, problem=problem)
        super().__init__(self.message)


# ---------------------------------------------------------------- parameters


def tool_lang(params: Mapping[str, Any]) -> str | None:
    """``lang`` parameter: "zh" / "en", or None ("auto": the catalog's language, else Chinese)."""
    value = params.get("lang")
    if isinstance(value, str) and value.strip().lower() in ("zh", "en", "zh_hans", "en_us"):
        return norm_lang(value.strip())
    return None


def text_param(
    params: Mapping[str, Any],
    name: str,
    lang: str | None,
    *,
    max_chars: int = MAX_SHORT_CHARS,
    required: bool = False,
    default: str = "",
) -> str:
    """A string parameter; objects and arrays (Dify object variables) arrive as JSON text."""
    value = params.get(name)
    if value is None:
        value = default
    elif isinstance(value, (dict, list)):
        value = json.dumps(value, ensure_ascii=False)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise ParamError(name, t("not_text", lang, kind=type(value).__name__), lang)
    if len(value) > max_chars:
        raise ParamError(name, t("too_long", lang, n=len(value), limit=max_chars), lang)
    if required and not value.strip():
        raise ParamError(name, t("required", lang), lang)
    return value


def int_param(params: Mapping[str, Any], name: str, lang: str | None, *, default: int, low: int, high: int) -> int:
    """An integer parameter within [low, high]; Dify sends numbers as int or float."""
    value = params.get(name)
    if value is None or value == "":
        return default
    try:
        number = float(value)
        if isinstance(value, bool) or number != int(number):
            raise ValueError
        number = int(number)
    except (TypeError, ValueError, OverflowError):
        raise ParamError(name, t("not_int", lang, low=low, high=high), lang) from None
    if not low <= number <= high:
        raise ParamError(name, t("not_int", lang, low=low, high=high), lang)
    return number


# The documented spellings of a yes/no parameter (docs/plugin.md), lower-cased; anything else is refused.
FLAG_TRUE = frozenset({"true", "1", "yes", "y", "是", "on"})
FLAG_FALSE = frozenset({"false", "0", "no", "n", "否", "off"})


def _read_flag(value: Any) -> bool | None:
    """A yes/no value: a real boolean, 1/0, or one of the documented words; None for anything else."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return {1: True, 0: False}.get(value) if value == value else None
    if isinstance(value, str):
        word = value.strip().lower()
        return True if word in FLAG_TRUE else False if word in FLAG_FALSE else None
    return None


def bool_param(params: Mapping[str, Any], name: str, lang: str | None, *, default: bool | None = None,
               outcome: bool = False) -> bool:
    """A boolean parameter read strictly: a real boolean or a documented spelling, else a clear error.

    Why strict: a guess is silently unsafe either way (reading "成功" as false re-runs a booked task,
    reading "否" as true wipes a memory). ``outcome`` adds an API's words and HTTP status codes
    (:func:`dskit.surfaces.node_io.outcome`). Missing or blank: ``default``, or "must not be empty" without one.
    The YAML declares such parameters as ``string`` so the host hands the raw value over (docs/plugin.md).
    """
    from dskit.surfaces.node_io import outcome as read_outcome

    value = params.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        if default is None:
            raise ParamError(name, t("required", lang), lang)
        return default
    read = read_outcome(value) if outcome else _read_flag(value)
    if read is None:
        shown = json.dumps(value, ensure_ascii=False, default=str)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise ParamError(name, t("not_outcome" if outcome else "not_bool", lang, value=shown), lang)
    return read


def choice_param(params: Mapping[str, Any], name: str, lang: str | None, choices: tuple[str, ...], default: str) -> str:
    """A select parameter (its value must be one of ``choices``)."""
    value = params.get(name)
    if value is None or value == "":
        return default
    if isinstance(value, str) and value.strip() in choices:
        return value.strip()
    raise ParamError(name, t("not_choice", lang, choices=", ".join(choices)), lang)


def catalog_param(params: Mapping[str, Any], lang: str | None, name: str = "catalog") -> Catalog:
    """The task catalog (JSON text or object), validated by the engine; problems listed on failure."""
    raw = params.get(name)
    if isinstance(raw, dict):
        source: Any = raw
    else:
        source = text_param(params, name, lang, max_chars=MAX_CATALOG_CHARS, required=True)
    try:  # marked like the state node's, so a tool's state remembers the catalog it was checked against
        return load_catalog(source, mark=catalog_mark(source) if isinstance(source, str) else "")
    except CatalogError as exc:
        shown = "; ".join(exc.problems[:5]) + (f" (+{len(exc.problems) - 5})" if len(exc.problems) > 5 else "")
        raise ParamError(name, t("catalog", lang, problems=shown), lang) from None


def state_param(params: Mapping[str, Any], lang: str | None, name: str = "sys_context_str") -> str:
    """The dialogue state string; an unusable one is refused unless ``bad_state`` is "restart"."""
    raw = params.get(name)
    if isinstance(raw, dict):
        raw = json.dumps(raw, ensure_ascii=False)
        params = {**params, name: raw}
    mode = choice_param(params, "bad_state", lang, ("refuse", "restart"), "refuse")
    text = text_param(params, name, lang, max_chars=MAX_STATE_CHARS)
    _state, errors = load_state(text)
    if errors and mode == "refuse":
        raise ParamError(name, t("bad_state", lang, detail=errors[0]), lang)
    return text


def grounding_params(params: Mapping[str, Any], lang: str | None) -> dict[str, Any]:
    """``step``'s grounding inputs, built by :func:`dskit.surfaces.turn_inputs.turn_inputs` exactly as the state
    code node builds them (one message limit, one reference-date rule): the user's message (required:
    a missing or blank one is refused, never taken as "grounding off"), their recent messages and the
    assistant's last reply from the history, and the reference date (empty: today).
    docs/grounding.md."""
    from dskit.surfaces.turn_inputs import MAX_QUERY_CHARS, turn_inputs

    query = text_param(params, "query", lang, max_chars=MAX_QUERY_CHARS)
    if not query.strip():  # an Agent can omit it: grounding must never be switched off by silence
        raise ParamError("query", t("query_required", lang), lang)
    history = text_param(params, "history", lang, max_chars=MAX_HISTORY_CHARS)
    day = text_param(params, "reference_date", lang, max_chars=40)
    inputs = turn_inputs(query, history, day)
    if inputs.problem:
        raise ParamError(inputs.problem_input, inputs.problem.partition(": ")[2] or "YYYY-MM-DD", lang)
    return inputs.step_args()


def json_param(params: Mapping[str, Any], name: str, lang: str | None, *, max_chars: int, default: Any) -> Any:
    """A JSON parameter (text or an already-decoded object/array)."""
    raw = params.get(name)
    if isinstance(raw, (dict, list)):
        return raw
    text = text_param(params, name, lang, max_chars=max_chars)
    if not text.strip():
        return default
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ParamError(name, t("not_json", lang, detail=str(exc)[:80]), lang) from None


# ---------------------------------------------------------------- outputs


Body = Callable[[Mapping[str, Any], "str | None"], tuple[dict, str]]


def emit(tool: Any, payload: dict, text: str) -> Generator[Any, None, None]:
    """One text message (if any), one JSON message with everything, one variable per key."""
    if text:
        yield tool.create_text_message(text)
    yield tool.create_json_message(payload)
    for key, value in payload.items():
        yield tool.create_variable_message(key, value)


def run_tool(
    tool: Any,
    params: Mapping[str, Any],
    body: Body,
    defaults: Callable[[Mapping[str, Any]], dict],
) -> Generator[Any, None, None]:
    """Run ``body`` and emit its result; bad input or a bug becomes a message, never a traceback.

    ``body`` returns (payload, text) and must not write anything before it has validated its
    input, so an error leaves state and memory as they were. ``defaults`` gives the neutral value
    of every output variable (the state is echoed back unchanged).
    """
    lang = tool_lang(params)
    try:
        payload, text = body(params, lang)
        out = {"ok": True, "error": "", "error_param": ""} | payload
    except ParamError as exc:
        out = _failure(params, defaults, exc.message, exc.param)
        text = exc.message
    except Exception as exc:  # a bug: say so without leaking internals
        logger.exception("tool %s failed", type(tool).__name__)
        message = t("internal", lang, name=type(exc).__name__)
        out = _failure(params, defaults, message, "")
        text = message
    yield from emit(tool, out, text)


def _failure(params: Mapping[str, Any], defaults: Callable[[Mapping[str, Any]], dict], message: str, param: str) -> dict:
    """The neutral outputs with the envelope saying what went wrong (in ``decision`` too, if there is one)."""
    try:
        base = defaults(params)
    except Exception:
        base = {}
    if isinstance(base.get("decision"), dict) and "error" in base["decision"]:
        base["decision"] = {**base["decision"], "error": message}
    return {"ok": False, "error": message, "error_param": param} | base | {"error": message}


def echo_state(params: Mapping[str, Any], name: str = "sys_context_str") -> str:
    """The incoming state as it was (for error outputs), or "" when it was not text."""
    raw = params.get(name)
    if isinstance(raw, str):
        return raw
    if isinstance(raw, dict):
        return json.dumps(raw, ensure_ascii=False)
    return ""


# ---------------------------------------------------------------- dialogue outputs


def decision_payload(result: Any, catalog: Catalog, conversation_id: Any = "") -> dict:
    """What the state tools return for a :class:`dskit.turn.machine.TurnResult`: :func:`dskit.state.views.workflow_outputs`,
    the same names and values the state code node has (its objects and arrays are JSON text there,
    objects here); the new state is not decoded again. ``conversation_id`` (the tool session's) keys an
    execution for the task API (``execute_key``)."""
    return workflow_outputs(result.text, result.decision, catalog, state=result.state,
                            conversation_id=conversation_id if isinstance(conversation_id, str) else "")


def session_conversation(tool: Any) -> str:
    """The Dify conversation the tool runs in ("" outside a Chatflow, or when the session has none)."""
    value = getattr(getattr(tool, "session", None), "conversation_id", None)
    return value if isinstance(value, str) else ""


def decision_defaults(params: Mapping[str, Any]) -> dict:
    """The state tools' outputs when the call is refused: the state echoed back, a fallback question
    (the error itself is added by :func:`run_tool`)."""
    lang = tool_lang(params) or "zh"
    return failed_outputs(echo_state(params), msg("internal", lang), "", lang)
