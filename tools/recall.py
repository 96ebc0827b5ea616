"""recall: the user's facts most related to a query (BM25 over character bigrams)."""

from collections.abc import Generator, Mapping
from typing import Any

from dify_plugin import Tool
from dify_plugin.entities.tool import ToolInvokeMessage

from tools._common import int_param, run_tool, text_param
from tools._memory import memory_owner, memory_store, memory_type_param, raise_if_bad


def _recall(tool: Tool, params: Mapping[str, Any], lang: str | None) -> tuple[dict, str]:
    user, space = memory_owner(tool, params, lang)
    query = text_param(params, "query", lang, max_chars=2_000)
    k = int_param(params, "top_k", lang, default=5, low=1, high=50)
    kind = memory_type_param(params, "type", lang, allow_all=True)
    result = memory_store(tool).recall(user, query, k=k, type=None if kind == "all" else kind, space=space,
                                       lang=lang)
    raise_if_bad(result, lang)
    payload = {"memories": result.get("text", ""), "items": result.get("items", []),
               "count": len(result.get("items", []))}
    if not result.get("ok"):
        payload |= {"ok": False, "error": result["message"]}
    return payload, result.get("text") or result["message"]


def _defaults(params: Mapping[str, Any]) -> dict:
    return {"memories": "", "items": [], "count": 0}


class RecallTool(Tool):
    """Find the user's long-term facts related to the current message."""

    def _invoke(self, tool_parameters: dict[str, Any]) -> Generator[ToolInvokeMessage, None, None]:
        yield from run_tool(self, tool_parameters, lambda p, lang: _recall(self, p, lang), _defaults)
