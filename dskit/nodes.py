"""Code-node entry functions: the engine as Dify code nodes call it.

``dskit gen`` bundles each function here, with the engine modules it needs, into one pasted script
(code_nodes/*.py). A Dify code node fails the whole run when it raises or returns a value of the
wrong type, so every function here accepts anything (a string is expected, but ``None``, numbers,
objects, 1 MB of text or another tool's JSON must not break it), never raises, and returns only
strings, numbers and booleans: conversation variables are string-typed and JSON travels as text.

Two Dify quirks shape the outputs: a string that looks like scientific notation (``"1e+5"``) is
turned into a float by Dify before it checks types, so such a string is given a trailing space; and
a string output may not exceed 400,000 characters, so every text is capped.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .catalog import CatalogError, catalog_compact, load_catalog
from .context import CONTEXT_TOTAL_BUDGET, CONTEXT_ZONE_BUDGETS, assemble_context
from .history import HISTORY_NODE_OUTPUTS, history_tag_from_applied, history_update, parse_history
from .machine import execute_reply, record_result, step
from .messages import msg, norm_lang
from .prompts import understanding_instructions
from .state import current_task, load_state
from .summary import SUMMARY_MAX_TOKENS, summary_accept
from .tokens import estimate_tokens, truncate_to_tokens

NODES_MAX_STRING = 400_000
_NODES_SCIENTIFIC = re.compile(r"^-?\d+\.?\d*e[+-]\d+$", re.IGNORECASE)
STATE_NODE_OUTPUTS = {
    "sys_context_str": "string", "next_action": "string", "question": "string", "current_task": "string",
    "current_task_label": "string", "current_task_stage": "string", "current_task_slots": "string",
    "slot": "string", "missing_slots": "string", "execute_payload": "string", "execute_task": "string",
    "faq_question": "string", "handoff_reason": "string", "rewritten_query": "string", "notices": "string",
    "resumed_task": "string", "stack_depth": "number", "decision": "string", "error": "string",
}


# ---------------------------------------------------------------- input and output hygiene

def nodes_text_in(value: Any) -> str:
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


def nodes_text_out(value: Any, limit: int = NODES_MAX_STRING) -> str:
    """A string Dify will accept as-is: capped, and never mistaken for a number."""
    text = nodes_text_in(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    if _NODES_SCIENTIFIC.match(text):
        text += " "
    return text


def nodes_json_out(value: Any, limit: int = NODES_MAX_STRING) -> str:
    """Compact JSON text for a string output; an over-long document becomes a short marker object."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError, RecursionError):
        text = json.dumps({"unserialisable": True})
    if len(text) > limit:
        text = json.dumps({"truncated": True, "chars": len(text)})
    return text


def nodes_conform(result: Any, types: dict) -> dict:
    """Exactly the declared outputs with Dify-valid values, whatever ``result`` holds (last line of defence).

    Missing keys get an empty value of their type; strings are capped and kept out of scientific
    notation; numbers are finite and within Dify's range; booleans are real booleans.
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
        else:
            out[name] = nodes_text_out(value)
    return out


def _nodes_lang(lang: Any) -> str | None:
    text = nodes_text_in(lang).strip()
    return norm_lang(text) if text else None


def _nodes_say(key: str, lang: str | None) -> str:
    return msg(key, lang or "zh")


def _nodes_catalog_lang(task_catalog: str) -> str | None:
    """The catalog's language when it can be read at all (for texts when the catalog is broken)."""
    try:
        data = json.loads(task_catalog)
    except (ValueError, RecursionError):
        return None
    return data.get("language") if isinstance(data, dict) and isinstance(data.get("language"), str) else None


def _nodes_keep_state(sys_context_str: str) -> str:
    """The incoming state, returned unchanged when the turn cannot be processed (if it fits)."""
    return sys_context_str if len(sys_context_str) <= NODES_MAX_STRING and not _NODES_SCIENTIFIC.match(
        sys_context_str) else ""


# ---------------------------------------------------------------- state node

def _nodes_task_slots(state: dict, catalog: Any) -> dict:
    """The current task's slots in catalog order, ``null`` for the empty ones (seed 003's view)."""
    task = current_task(state)
    if task is None:
        return {}
    spec = catalog.tasks.get(task["name"]) if catalog is not None else None
    slots: dict = {name: task["slots"].get(name) for name in (spec.slots if spec else {})}
    for name, value in task["slots"].items():
        slots.setdefault(name, value)
    return slots


def _nodes_state_outputs(new_state: str, decision: dict, state: dict, catalog: Any, error: str) -> dict:
    task = decision.get("task") or {}
    executed = decision.get("execute") or None
    faq = decision.get("faq") or {}
    handoff = decision.get("handoff") or {}
    resumed = decision.get("resumed") or {}
    return {
        "sys_context_str": new_state,
        "next_action": nodes_text_out(decision.get("next_action") or "fallback"),
        "question": nodes_text_out(decision.get("question") or ""),
        "current_task": nodes_text_out(task.get("name") or ""),
        "current_task_label": nodes_text_out(task.get("label") or ""),
        "current_task_stage": nodes_text_out(task.get("stage") or ""),
        "current_task_slots": nodes_json_out(_nodes_task_slots(state, catalog)),
        "slot": nodes_text_out(decision.get("slot") or ""),
        "missing_slots": nodes_json_out(list(decision.get("missing_slots") or [])),
        "execute_payload": nodes_json_out(executed) if executed else "",
        "execute_task": nodes_text_out(executed.get("task") or "") if executed else "",
        "faq_question": nodes_text_out(faq.get("question") or ""),
        "handoff_reason": nodes_text_out(handoff.get("reason") or ""),
        "rewritten_query": nodes_text_out(decision.get("rewritten_query") or ""),
        "notices": nodes_text_out("\n".join(str(n) for n in decision.get("notices") or [])),
        "resumed_task": nodes_text_out(resumed.get("task") or ""),
        "stack_depth": len(state.get("task_stack") or []),
        "decision": nodes_json_out(decision),
        "error": nodes_text_out(error or decision.get("error") or ""),
    }


def _nodes_failed_turn(sys_context_str: str, key: str, lang: str | None, error: str) -> dict:
    """Outputs for a turn that could not run: state unchanged, a polite fallback, the error named."""
    kept = _nodes_keep_state(sys_context_str)
    state, _ = load_state(kept)
    top = current_task(state)
    decision = {"next_action": "fallback", "question": _nodes_say(key, lang), "error": error,
                "task": None if top is None else {"id": top["id"], "name": top["name"],
                                                  "label": top.get("label") or top["name"], "stage": top["stage"]}}
    return _nodes_state_outputs(kept, decision, state, None, error)


def state_node(understanding: Any = "", sys_context_str: Any = "", task_catalog: Any = "",
               lang: Any = "") -> dict:
    """One dialogue turn: the understanding LLM's raw text + the state + the catalog -> new state + decision.

    ``lang`` "" means the catalog's language. A broken catalog leaves the state untouched and says so in
    ``error``; so does anything unexpected. Outputs: see ``STATE_NODE_OUTPUTS``.
    """
    state_text = nodes_text_in(sys_context_str)
    catalog_text = task_catalog if isinstance(task_catalog, dict) else nodes_text_in(task_catalog)
    language = _nodes_lang(lang)
    try:
        catalog = load_catalog(catalog_text)
    except CatalogError as exc:
        fallback_lang = language or _nodes_catalog_lang(nodes_text_in(task_catalog))
        return _nodes_failed_turn(state_text, "broken_catalog", fallback_lang, nodes_text_out(str(exc), 2000))
    except Exception as exc:  # noqa: BLE001 - a code node must not raise
        error = f"catalog: {type(exc).__name__}: {exc}"[:2000]
        return _nodes_failed_turn(state_text, "broken_catalog", language, error)
    try:
        raw = understanding if isinstance(understanding, (dict, list)) else nodes_text_in(understanding)
        new_state, decision = step(state_text, raw, catalog, lang=language)
        if len(new_state) > NODES_MAX_STRING:
            return _nodes_failed_turn(state_text, "internal", language or catalog.language,
                                      f"new state is {len(new_state)} characters, over Dify's limit")
        state, _ = load_state(new_state)
        return _nodes_state_outputs(new_state, decision, state, catalog, "")
    except Exception as exc:  # noqa: BLE001
        return _nodes_failed_turn(state_text, "internal", language or catalog.language,
                                  f"{type(exc).__name__}: {exc}"[:2000])


# ---------------------------------------------------------------- result node

RESULT_NODE_OUTPUTS = {"sys_context_str": "string", "ok": "boolean", "error": "string"}
_NODES_TRUE = {"true", "yes", "y", "ok", "success", "succeeded", "1", "是", "成功"}


def _nodes_truthy(value: Any) -> bool:
    """An API outcome as a boolean: true/1/"success"/"成功", or an HTTP status from 200 to 299."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value == 1 or 200 <= value < 300
    text = nodes_text_in(value).strip().lower()
    if text.isdigit():
        return _nodes_truthy(int(text[:6]))
    return text in _NODES_TRUE


def result_node(sys_context_str: Any = "", execute_payload: Any = "", ok: Any = "", detail: Any = "") -> dict:
    """Write a task API's outcome back into the state (``record_result``); never raises."""
    state_text = nodes_text_in(sys_context_str)
    try:
        payload = json.loads(nodes_text_in(execute_payload) or "{}")
        task_id = payload.get("task_id") if isinstance(payload, dict) else None
        if not isinstance(task_id, str) or not task_id:
            return {"sys_context_str": _nodes_keep_state(state_text), "ok": False,
                    "error": "execute_payload has no task_id"}
        success = _nodes_truthy(ok)
        new_state = record_result(state_text, task_id, success, nodes_text_in(detail)[:300])
        if len(new_state) > NODES_MAX_STRING:
            return {"sys_context_str": _nodes_keep_state(state_text), "ok": success, "error": "state too large"}
        return {"sys_context_str": new_state, "ok": success, "error": ""}
    except Exception as exc:  # noqa: BLE001
        return {"sys_context_str": _nodes_keep_state(state_text), "ok": False,
                "error": nodes_text_out(f"{type(exc).__name__}: {exc}", 2000)}


EXECUTE_REPLY_OUTPUTS = {"reply": "string", "sys_context_str": "string", "current_task": "string",
                         "current_task_slots": "string"}


def execute_reply_node(execute_payload: Any = "", question: Any = "", api_url: Any = "", sys_context_str: Any = "",
                       recorded_state: Any = None, ok: Any = None, status_code: Any = None, error_message: Any = "",
                       task_catalog: Any = "") -> dict:
    """The execute branch's reply, and the state and task in focus once the outcome is recorded.

    ``recorded_state`` and ``ok`` come from the result node, which runs only when TASK_API_URL is set;
    otherwise they are None and the state node's ``sys_context_str`` stands. A failed task is back on
    top awaiting a retry, so its reply asks to retry instead of moving on to the next question.
    """
    called = bool(nodes_text_in(api_url).strip())
    state_text = nodes_text_in(recorded_state) if called and nodes_text_in(recorded_state) else nodes_text_in(sys_context_str)
    try:
        catalog = load_catalog(task_catalog if isinstance(task_catalog, dict) else nodes_text_in(task_catalog))
    except CatalogError as exc:
        return nodes_conform({"reply": _nodes_say("broken_catalog", None), "sys_context_str": _nodes_keep_state(state_text),
                              "current_task": "", "current_task_slots": "{}", "error": str(exc)}, EXECUTE_REPLY_OUTPUTS)
    try:
        payload = json.loads(nodes_text_in(execute_payload) or "{}")
        payload = payload if isinstance(payload, dict) else {}
        success = called and _nodes_truthy(ok)
        detail = nodes_text_in(error_message).strip()
        if not detail and status_code not in (None, "", 0, "0"):
            detail = f"HTTP {nodes_text_in(status_code)}"
        text = execute_reply(catalog, payload, called=called, ok=success, detail=detail)
        tail = nodes_text_in(question) if not called or success else ""
        state, _ = load_state(state_text)
        top = current_task(state)
        return nodes_conform({
            "reply": text + ("\n\n" + tail if tail else ""),
            "sys_context_str": _nodes_keep_state(state_text),
            "current_task": top["name"] if top else "",
            "current_task_slots": nodes_json_out(_nodes_task_slots(state, catalog)),
        }, EXECUTE_REPLY_OUTPUTS)
    except Exception:  # noqa: BLE001 - a code node must never stop the Chatflow
        return nodes_conform({"reply": _nodes_say("internal", None), "sys_context_str": _nodes_keep_state(state_text),
                              "current_task": "", "current_task_slots": "{}"}, EXECUTE_REPLY_OUTPUTS)


# ---------------------------------------------------------------- classic adapter (seed 003 layout)

CLASSIC_ADAPTER_OUTPUTS = {"understanding": "string", "rewritten_query": "string", "error": "string"}
# Class names of a question classifier that mean a non-task command, in Chinese and English.
_NODES_CLASS_WORDS = {
    "faq": ("faq", "知识问答", "问答", "咨询", "常见问题", "question", "knowledge"),
    "handoff": ("转人工", "人工", "人工客服", "handoff", "human", "agent"),
    "chitchat": ("闲聊", "聊天", "chitchat", "chat", "small talk", "smalltalk", "other", "其他"),
    "confirm": ("确认", "同意", "confirm", "yes"),
    "deny": ("否认", "拒绝", "deny", "no"),
    "cancel_task": ("取消", "cancel"),
    "reset": ("重置", "重新开始", "reset", "restart"),
}
# Generic class names that say "a task" without naming it (seed 003: 单轮任务 / 多轮任务).
_NODES_GENERIC_TASK = ("单轮任务", "多轮任务", "任务", "业务办理", "task", "single_turn", "multi_turn")
_NODES_TASK_KEYS = ("task", "intent", "task_name", "任务")
_NODES_EMPTY = ("", "null", "none", "nil", "undefined", "无", "空", "未知", "unknown", "n/a")


def _nodes_norm(text: str) -> str:
    return re.sub(r"[\s_\-]+", " ", text.strip().lower())


def _nodes_class_command(class_name: str) -> str:
    name = _nodes_norm(class_name)
    for command, words in _NODES_CLASS_WORDS.items():
        if name in {_nodes_norm(w) for w in words}:
            return command
    return ""


def _nodes_is_empty(value: Any) -> bool:
    if value is None or value == [] or value == {}:
        return True
    return isinstance(value, str) and value.strip().lower() in _NODES_EMPTY


def _nodes_params(params: dict, params_json: str) -> dict:
    """Extractor outputs: the extra input variables, merged over an optional JSON object."""
    merged: dict = {}
    text = params_json.strip()
    if text:
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            data = None
        if isinstance(data, dict):
            merged.update(data)
    for key, value in params.items():
        if isinstance(key, str) and not key.startswith("__"):
            merged[key] = value
    return merged


def _nodes_pick_task(catalog: Any, class_name: str, params: dict) -> Any:
    """The catalog task a classifier class (or an extractor's task/intent parameter) names."""
    spec = catalog.task(class_name.strip()) if class_name.strip() else None
    if spec is None:
        for key in _NODES_TASK_KEYS:
            value = params.get(key)
            if isinstance(value, str) and value.strip():
                spec = catalog.task(value.strip())
                if spec is not None:
                    break
    return spec


def _nodes_adapter_commands(class_name: str, params: dict, query: str, catalog: Any, state: dict) -> list:
    command = _nodes_class_command(class_name)
    current = current_task(state)
    spec = _nodes_pick_task(catalog, class_name, params)
    if spec is None and command:
        if command == "faq":
            return [{"type": "faq", "question": query}]
        if command == "handoff":
            return [{"type": "handoff", "reason": "user_request"}]
        return [{"type": command}]
    target = spec or (catalog.tasks.get(current["name"]) if current else None)
    if target is None:
        return [{"type": "cannot_handle"}]
    slots = {}
    for key, value in params.items():
        if key in target.slots and not _nodes_is_empty(value):
            slots[key] = value.strip() if isinstance(value, str) else value
    if spec is not None and (current is None or current["name"] != spec.name):
        return [{"type": "start_task", "task": spec.name, "slots": slots}]
    if slots:
        return [{"type": "set_slots", "task": target.name, "slots": slots}]
    is_generic = _nodes_norm(class_name) in {_nodes_norm(w) for w in _NODES_GENERIC_TASK}
    return [{"type": "start_task", "task": target.name, "slots": {}}] if spec or is_generic else \
        [{"type": "cannot_handle"}]


def classic_adapter_node(class_name: Any = "", query: Any = "", task_catalog: Any = "",
                         sys_context_str: Any = "", params_json: Any = "", **params: Any) -> dict:
    """A question classifier's class + a parameter extractor's outputs -> the understanding contract.

    For seed 003's layout (classifier -> extractor) without an understanding LLM: ``class_name`` is a task
    name or label, a generic task class (单轮任务/多轮任务, the task then read from a ``task`` or
    ``intent`` parameter), or a non-task class (FAQ/转人工/闲聊/确认/取消...). Every other input variable
    is an extractor parameter named after its slot; empty values are skipped. Never raises.
    """
    query_text = nodes_text_in(query).strip()[:2000]
    try:
        catalog = load_catalog(task_catalog if isinstance(task_catalog, dict) else nodes_text_in(task_catalog))
    except Exception as exc:  # noqa: BLE001 - CatalogError and anything else
        understanding = {"rewritten_query": query_text, "commands": [{"type": "cannot_handle"}]}
        return {"understanding": nodes_json_out(understanding), "rewritten_query": nodes_text_out(query_text),
                "error": nodes_text_out(f"catalog: {exc}", 2000)}
    try:
        state, _ = load_state(nodes_text_in(sys_context_str))
        merged = _nodes_params(params, nodes_text_in(params_json))
        commands = _nodes_adapter_commands(nodes_text_in(class_name), merged, query_text, catalog, state)
        understanding = {"rewritten_query": query_text, "commands": commands}
        return {"understanding": nodes_json_out(understanding), "rewritten_query": nodes_text_out(query_text),
                "error": ""}
    except Exception as exc:  # noqa: BLE001
        understanding = {"rewritten_query": query_text, "commands": [{"type": "cannot_handle"}]}
        return {"understanding": nodes_json_out(understanding), "rewritten_query": nodes_text_out(query_text),
                "error": nodes_text_out(f"{type(exc).__name__}: {exc}", 2000)}


# ---------------------------------------------------------------- history node

HISTORY_NODE_TYPES = dict(HISTORY_NODE_OUTPUTS)
# A summary the engine wrote is a few dozen lines under 5 KB; a longer one was edited or came from
# elsewhere. Its newest part is kept so that trimming it stays fast inside the sandbox's time limit.
NODES_SUMMARY_MAX_LINES = 100
NODES_SUMMARY_MAX_CHARS = 20_000
# One message longer than this cannot be kept whole in the history anyway (its byte cap cuts it);
# reading only its opening keeps the noise rules fast on a megabyte of text.
NODES_TURN_MAX_CHARS = 100_000


def _nodes_turn_text(value: Any) -> str:
    text = nodes_text_in(value)
    return text if len(text) <= NODES_TURN_MAX_CHARS else text[:NODES_TURN_MAX_CHARS] + "…"


def nodes_summary_tail(text: Any) -> str:
    """The newest part of an incoming summary: its last lines, within a character cap."""
    value = nodes_text_in(text)
    if len(value) > NODES_SUMMARY_MAX_CHARS:
        value = value[-NODES_SUMMARY_MAX_CHARS:]
    lines = value.split("\n")
    if len(lines) > NODES_SUMMARY_MAX_LINES:
        value = "\n".join(lines[-NODES_SUMMARY_MAX_LINES:])
    return value


def _nodes_history_tag(tag: Any, decision: Any) -> str:
    """The turn's tag: an explicit ``tag``, else "essential" when the state node's decision applied something."""
    text = nodes_text_in(tag).strip()
    if text:
        return text
    raw = nodes_text_in(decision).strip()
    if not raw:
        return ""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return history_tag_from_applied(raw)
    return history_tag_from_applied(data.get("applied") if isinstance(data, dict) else data)


def history_node(old_history: Any = "", summary: Any = "", user_query: Any = "", answer: Any = "",
                 decision: Any = "", tag: Any = "", max_turns: Any = 10, max_bytes: Any = 150_000,
                 summary_max_tokens: Any = SUMMARY_MAX_TOKENS, llm_summary: Any = False, lang: Any = "zh",
                 **other_answers: Any) -> dict:
    """Append this turn to the history, keep the window under its caps, roll overflow into the summary.

    ``decision`` is the state node's decision JSON: a turn that set, changed or confirmed something is
    tagged essential and survives the window longest. When ``answer`` is empty the first non-empty
    extra input is used (one input per answer branch, as in seed 003). Never raises.
    """
    try:
        result = history_update(
            nodes_text_in(old_history), nodes_summary_tail(summary), _nodes_turn_text(user_query),
            _nodes_turn_text(answer), tag=_nodes_history_tag(tag, decision), max_turns=max_turns,
            max_bytes=max_bytes, summary_max_tokens=summary_max_tokens,
            llm_summary=nodes_text_in(llm_summary).strip().lower() in ("true", "1", "yes"),
            lang=nodes_text_in(lang) or "zh",
            **{k: _nodes_turn_text(v) for k, v in other_answers.items() if isinstance(k, str)})
    except Exception as exc:  # noqa: BLE001
        kept = nodes_text_in(old_history)
        result = {"history": kept if len(kept) <= NODES_MAX_STRING else "", "summary": nodes_text_in(summary),
                  "summary_prompt": f"error: {type(exc).__name__}"}
    return nodes_conform(result, HISTORY_NODE_TYPES)


# ---------------------------------------------------------------- summary node (optional LLM summary)

SUMMARY_NODE_OUTPUTS = {"summary": "string", "source": "string", "added_facts": "number"}


def summary_node(llm_text: Any = "", summary: Any = "", overflow: Any = "",
                 summary_max_tokens: Any = SUMMARY_MAX_TOKENS, lang: Any = "zh") -> dict:
    """Check the summary LLM's answer; fall back to the history node's extractive summary.

    Values (numbers, names) of the overflow turns that the LLM dropped are added back as fact lines.
    """
    fallback = nodes_summary_tail(summary)
    try:
        try:
            limit = int(nodes_text_in(summary_max_tokens) or SUMMARY_MAX_TOKENS)
        except ValueError:
            limit = SUMMARY_MAX_TOKENS
        limit = min(max(limit, 50), 4000)
        result = summary_accept(nodes_summary_tail(llm_text), fallback, parse_history(nodes_text_in(overflow)),
                                limit, "en" if nodes_text_in(lang).lower().startswith("en") else "zh")
    except Exception:  # noqa: BLE001
        result = {"summary": fallback, "source": "extractive", "added_facts": 0}
    return nodes_conform(result, SUMMARY_NODE_OUTPUTS)


# ---------------------------------------------------------------- context node

CONTEXT_NODE_TYPES = {"context": "string", "instructions": "string", "tokens": "number", "over_budget": "boolean",
                      "report": "string", "error": "string"}
_NODES_CONTEXT_HEADERS = {"zh": ("## 任务目录", "## 用户最新输入"), "en": ("## Task catalog", "## User's latest message")}
NODES_QUERY_MAX_TOKENS = 1_000


def _nodes_int(value: Any, default: int, low: int, high: int) -> int:
    try:
        number = int(float(nodes_text_in(value).strip() or default))
    except (ValueError, OverflowError):
        return default
    return min(max(number, low), high)


def context_node(query: Any = "", sys_context_str: Any = "", history: Any = "", summary: Any = "",
                 task_catalog: Any = "", memory: Any = "", total_budget: Any = CONTEXT_TOTAL_BUDGET,
                 history_budget: Any = CONTEXT_ZONE_BUDGETS["history"],
                 memory_budget: Any = CONTEXT_ZONE_BUDGETS["memory"], lang: Any = "") -> dict:
    """The understanding LLM's prompt: catalog, state, memory, summary and recent turns (noise out) within
    a token budget, then the user's latest message; ``instructions`` is the matching system prompt.

    The state is never cut (it anchors "改成明天吧"); history goes first when over budget. A broken
    catalog leaves its section out and says so in ``error``. Never raises.
    """
    error = ""
    catalog_text = ""
    language = _nodes_lang(lang)
    try:
        catalog = load_catalog(task_catalog if isinstance(task_catalog, dict) else nodes_text_in(task_catalog))
        catalog_text = catalog_compact(catalog)
        language = language or norm_lang(catalog.language)
    except Exception as exc:  # noqa: BLE001 - CatalogError and anything else
        error = nodes_text_out(f"catalog: {exc}", 2000)
    language = language or "zh"
    headers = _NODES_CONTEXT_HEADERS[language]
    try:
        latest = truncate_to_tokens(nodes_text_in(query).strip()[:20_000], NODES_QUERY_MAX_TOKENS)
        tail = f"{headers[1]}\n{latest}"
        budget = _nodes_int(total_budget, CONTEXT_TOTAL_BUDGET, 200, 1_000_000)
        result = assemble_context(
            system=f"{headers[0]}\n{catalog_text}" if catalog_text else "",
            state=nodes_text_in(sys_context_str), memory=nodes_text_in(memory),
            history=nodes_text_in(history), summary=nodes_summary_tail(summary),
            total_budget=max(100, budget - estimate_tokens(tail)),
            budgets={"history": _nodes_int(history_budget, CONTEXT_ZONE_BUDGETS["history"], 0, 1_000_000),
                     "memory": _nodes_int(memory_budget, CONTEXT_ZONE_BUDGETS["memory"], 0, 1_000_000)},
            lang=language)
        report = result["report"]
        context = (result["text"] + "\n\n" + tail).strip()
        outputs = {"context": context, "instructions": understanding_instructions(language),
                   "tokens": estimate_tokens(context), "over_budget": bool(report.get("over_budget")),
                   "report": nodes_json_out(report, 100_000), "error": error}
    except Exception as exc:  # noqa: BLE001
        outputs = {"context": nodes_text_in(query)[:2000], "instructions": understanding_instructions(language),
                   "error": nodes_text_out(f"{type(exc).__name__}: {exc}", 2000)}
    return nodes_conform(outputs, CONTEXT_NODE_TYPES)
