"""forget: delete one fact (by id), the facts about a subject, or everything a user has."""

from collections.abc import Generator, Mapping
from typing import Any

from dify_plugin import Tool
from dify_plugin.entities.tool import ToolInvokeMessage

from tools._common import bool_param, run_tool, text_param
from tools._memory import memory_owner, memory_store, memory_type_param, raise_if_bad


def _forget(tool: Tool, params: Mapping[str, Any], lang: str | None) -> tuple[dict, str]:
    user, space = memory_owner(tool, params, lang)
    fact_id = text_param(params, "fact_id", lang, max_chars=64).strip()
    subject = text_param(params, "subject", lang, max_chars=200).strip()
    kind = memory_type_param(params, "type", lang, allow_all=True)
    wipe = bool_param(params, "all", lang, default=False)
    result = memory_store(tool).forget(user, fact_id=fact_id, subject=subject,
                                       type=None if kind == "all" else kind, all=wipe, space=space, lang=lang)
    raise_if_bad(result, lang)
    payload = {"deleted": result.get("deleted", []), "count": len(result.get("deleted", []))}
    if not result.get("ok"):
        payload |= {"ok": False, "error": result["message"]}
    return payload, result["message"]


def _defaults(params: Mapping[str, Any]) -> dict:
    return {"deleted": [], "count": 0}


class ForgetTool(Tool):
    """Delete long-term facts of the user (out of memory first, then every stored copy)."""

    def _invoke(self, tool_parameters: dict[str, Any]) -> Generator[ToolInvokeMessage, None, None]:
        yield from run_tool(self, tool_parameters, lambda p, lang: _forget(self, p, lang), _defaults)
