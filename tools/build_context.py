"""build_context: the five zones (system, state, memory, history, external) within token budgets."""

from collections.abc import Generator, Mapping
from typing import Any

from dify_plugin import Tool
from dify_plugin.entities.tool import ToolInvokeMessage

from dskit.context.context import CONTEXT_TOTAL_BUDGET, CONTEXT_ZONE_BUDGETS, assemble_context
from dskit.base.messages import norm_lang
from tools._common import MAX_HISTORY_CHARS, catalog_param, choice_param, int_param, run_tool, text_param

_BIG = 1_000_000


def _build(params: Mapping[str, Any], lang: str | None) -> tuple[dict, str]:
    zones = {
        "system": text_param(params, "system", lang, max_chars=100_000),
        "state": text_param(params, "state", lang, max_chars=200_000),
        "memory": text_param(params, "memory", lang, max_chars=100_000),
        "history": text_param(params, "history", lang, max_chars=MAX_HISTORY_CHARS),
        "summary": text_param(params, "summary", lang, max_chars=50_000),
        "external": text_param(params, "external", lang, max_chars=MAX_HISTORY_CHARS),
    }
    total = int_param(params, "total_budget", lang, default=CONTEXT_TOTAL_BUDGET, low=1, high=_BIG)
    budgets = {zone: int_param(params, f"{zone}_budget", lang, default=CONTEXT_ZONE_BUDGETS[zone], low=0, high=_BIG)
               for zone in ("history", "memory", "external")}
    view = choice_param(params, "state_view", lang, ("compact", "raw"), "compact")
    catalog = catalog_param(params, lang) if params.get("catalog") else None
    result = assemble_context(**zones, total_budget=total, budgets={k: v for k, v in budgets.items() if v},
                              lang=norm_lang(lang or (catalog.language if catalog else None)), state_view=view,
                              catalog=catalog)
    report = result["report"]
    payload = {
        "context": result["text"],
        "tokens": report["total"],
        "over_budget": report["over_budget"],
        "zone_tokens": report["tokens"],
        "report": report,
    }
    return payload, result["text"]


def _defaults(params: Mapping[str, Any]) -> dict:
    return {"context": "", "tokens": 0, "over_budget": False, "zone_tokens": {}, "report": {}}


class BuildContextTool(Tool):
    """Assemble the prompt context from five zones, cutting by priority to fit the budgets."""

    def _invoke(self, tool_parameters: dict[str, Any]) -> Generator[ToolInvokeMessage, None, None]:
        yield from run_tool(self, tool_parameters, _build, _defaults)
