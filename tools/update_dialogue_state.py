"""update_dialogue_state: understanding text + state + catalog -> new state and the next action."""

from collections.abc import Generator, Mapping
from typing import Any

from dify_plugin import Tool
from dify_plugin.entities.tool import ToolInvokeMessage

from dskit.turn.machine import run_turn
from tools._common import (MAX_UNDERSTANDING_CHARS, catalog_param, decision_defaults, decision_payload,
                           grounding_params, run_tool, session_conversation, state_param,
                           text_param)


def _update(tool: Tool, params: Mapping[str, Any], lang: str | None) -> tuple[dict, str]:
    catalog = catalog_param(params, lang)
    state = state_param(params, lang)
    understanding = text_param(params, "understanding", lang, max_chars=MAX_UNDERSTANDING_CHARS, required=True)
    result = run_turn(state, understanding, catalog, lang=lang, **grounding_params(params, lang))
    return decision_payload(result, catalog, session_conversation(tool)), result.decision.get("question") or ""


class UpdateDialogueStateTool(Tool):
    """Apply one turn's understanding to the dialogue state (seed 000's state machine)."""

    def _invoke(self, tool_parameters: dict[str, Any]) -> Generator[ToolInvokeMessage, None, None]:
        yield from run_tool(self, tool_parameters, lambda p, lang: _update(self, p, lang), decision_defaults)
