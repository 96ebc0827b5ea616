"""record_task_result: write a task API's outcome back into the state (after next_action = execute)."""

from collections.abc import Generator, Mapping
from typing import Any

from dify_plugin import Tool
from dify_plugin.entities.tool import ToolInvokeMessage

from dskit.turn.machine import record_result
from dskit.base.messages import norm_lang
from dskit.state.state import load_state
from tools._common import ParamError, bool_param, echo_state, json_param, run_tool, state_param, t, text_param


def _record(params: Mapping[str, Any], lang: str | None) -> tuple[dict, str]:
    state = state_param(params, lang)
    task_id = text_param(params, "task_id", lang, max_chars=200).strip()
    if not task_id:
        payload = json_param(params, "execute", lang, max_chars=200_000, default={})
        task_id = str(payload.get("task_id") or "").strip() if isinstance(payload, dict) else ""
    if not task_id:
        raise ParamError("task_id", t("required", lang), lang)
    if not any(d.get("task_id") == task_id for d in load_state(state)[0]["done"]):
        raise ParamError("task_id", t("unknown_task", lang, task=task_id), lang)
    ok = bool_param(params, "success", lang, outcome=True)  # required: no outcome is never "failed"
    detail = text_param(params, "detail", lang, max_chars=2_000)
    new_state = record_result(state, task_id, ok, detail, lang=norm_lang(lang))
    return {"sys_context_str": new_state, "task_id": task_id, "success": ok}, ""


def _defaults(params: Mapping[str, Any]) -> dict:
    return {"sys_context_str": echo_state(params), "task_id": "", "success": False}


class RecordTaskResultTool(Tool):
    """Mark an executed task as succeeded or failed; a failed one comes back for a retry."""

    def _invoke(self, tool_parameters: dict[str, Any]) -> Generator[ToolInvokeMessage, None, None]:
        yield from run_tool(self, tool_parameters, _record, _defaults)
