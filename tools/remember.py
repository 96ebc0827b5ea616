"""remember: keep a fact about the user in long-term memory ("值得记住才记").

``text`` is one fact, or a JSON array of candidates (strings or {"text", "type", "subject"}
objects, e.g. what an LLM extracted at the end of a conversation). Only a text that is a valid JSON
array as a whole is a batch: "[重要] 我对花生过敏" is one fact (see :func:`_json_array`). A batch is validated as a whole
before anything is written; each candidate is then added, de-duplicated, replaced or rejected.
"""

import json
import re
from collections.abc import Generator, Mapping
from typing import Any

from dify_plugin import Tool
from dify_plugin.entities.tool import ToolInvokeMessage

from tools._common import ParamError, run_tool, t, text_param
from tools._memory import memory_owner, memory_store, memory_type_param, raise_if_bad

MAX_BATCH = 20
_BATCH_OPENING = re.compile(r'\[\s*["{\]]')  # [" [{ [] : meant as a JSON array


def _candidates(params: Mapping[str, Any], lang: str | None) -> list[dict]:
    """The facts to remember, from ``text`` (+ ``type`` and ``subject`` for a single fact)."""
    raw = params.get("text")
    if isinstance(raw, list):
        items: Any = raw
    else:
        text = text_param(params, "text", lang, max_chars=20_000, required=True)
        items = _json_array(text, lang)
        if items is None:  # one fact, even one that starts with "[" ("[重要] 我对花生过敏")
            return [{"text": text, "type": memory_type_param(params, "type", lang, allow_all=False),
                     "subject": text_param(params, "subject", lang, max_chars=200)}]
    if not isinstance(items, list) or not items:
        raise ParamError("text", t("required", lang), lang)
    if len(items) > MAX_BATCH:
        raise ParamError("text", t("too_long", lang, n=len(items), limit=MAX_BATCH), lang)
    default_type = memory_type_param(params, "type", lang, allow_all=False)
    out = []
    for item in items:
        if isinstance(item, str):
            item = {"text": item}
        if not isinstance(item, dict):
            raise ParamError("text", t("not_text", lang, kind=type(item).__name__), lang)
        out.append({"text": item.get("text"), "type": item.get("type") or default_type,
                    "subject": item.get("subject") or ""})
    return out


def _json_array(text: str, lang: str | None) -> list | None:
    """The batch in ``text``: a valid JSON array as a whole; None for a single fact.

    A fact may start with "[" ("[重要] 我对花生过敏", "[2024] 搬到上海"). A text that opens like a JSON
    array of strings or objects (``["`` or ``[{``) but does not parse is a cut batch, not a fact:
    refused with the JSON error, so a model's truncated list is never stored as one garbled fact.
    """
    stripped = text.strip()
    if not stripped.startswith("["):
        return None
    try:
        items = json.loads(stripped)
    except (ValueError, RecursionError) as exc:
        if _BATCH_OPENING.match(stripped):
            raise ParamError("text", t("not_json", lang, detail=str(exc)[:80]), lang) from None
        return None
    return items if isinstance(items, list) else None


def _remember(tool: Tool, params: Mapping[str, Any], lang: str | None) -> tuple[dict, str]:
    user, space = memory_owner(tool, params, lang)
    source = text_param(params, "source", lang, max_chars=200)
    candidates = _candidates(params, lang)
    store = memory_store(tool)
    for c in candidates:  # all or nothing for bad input
        bad = store.check_fact(user, c["text"], type=c["type"], subject=c["subject"], source=source,
                               space=space, lang=lang)
        if bad:
            raise_if_bad(bad, lang)
    results = [store.remember(user, c["text"], type=c["type"], subject=c["subject"], source=source, space=space,
                              lang=lang)
               for c in candidates]
    saved = [r["fact"] for r in results if r.get("action") in ("added", "replaced", "duplicate") and r.get("fact")]
    failures = [r["message"] for r in results if not r.get("ok")]
    payload = {
        "results": [{"action": r.get("action"), "message": r["message"], "fact": r.get("fact")} for r in results],
        "saved": saved,
        "added": sum(r.get("action") == "added" for r in results),
        "replaced": sum(r.get("action") == "replaced" for r in results),
        "duplicates": sum(r.get("action") == "duplicate" for r in results),
        "rejected": sum(r.get("action") == "rejected" for r in results),
    }
    if failures:
        payload["ok"] = False
        payload["error"] = failures[0]
    return payload, "\n".join(r["message"] for r in results)


def _defaults(params: Mapping[str, Any]) -> dict:
    return {"results": [], "saved": [], "added": 0, "replaced": 0, "duplicates": 0, "rejected": 0}


class RememberTool(Tool):
    """Store facts worth keeping about the user in the plugin's own storage."""

    def _invoke(self, tool_parameters: dict[str, Any]) -> Generator[ToolInvokeMessage, None, None]:
        yield from run_tool(self, tool_parameters, lambda p, lang: _remember(self, p, lang), _defaults)
