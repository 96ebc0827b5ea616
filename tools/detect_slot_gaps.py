"""detect_slot_gaps: which required slots a task still lacks, in ask order, and the next question."""

from collections.abc import Generator, Mapping
from typing import Any

from dify_plugin import Tool
from dify_plugin.entities.tool import ToolInvokeMessage

from dskit.state.gaps import find_gaps
from dskit.state.state import load_state
from tools._common import ParamError, catalog_param, state_param, t, text_param, run_tool


def _gaps(params: Mapping[str, Any], lang: str | None) -> tuple[dict, str]:
    catalog = catalog_param(params, lang)
    state = state_param(params, lang)
    task = text_param(params, "task", lang, max_chars=200).strip()
    if task:
        spec = catalog.task(task)  # a name or a label
        if spec is not None:
            task = spec.name
        elif not any(entry["id"] == task for entry in load_state(state)[0]["task_stack"]):
            raise ParamError("task", t("unknown_task", lang, task=task), lang)
    gaps = find_gaps(state, catalog, task or None, lang=lang)
    payload = {
        "task": gaps["task"] or {},
        "missing_slots": list(gaps["missing"]),
        "next_slot": gaps["next_slot"] or "",
        "question": gaps["question"] or "",
        "complete": bool(gaps["task"]) and not gaps["missing"],
    }
    return payload, payload["question"]


def _defaults(params: Mapping[str, Any]) -> dict:
    return {"task": {}, "missing_slots": [], "next_slot": "", "question": "", "complete": False}


class DetectSlotGapsTool(Tool):
    """Report the missing required slots of the current (or a named) task."""

    def _invoke(self, tool_parameters: dict[str, Any]) -> Generator[ToolInvokeMessage, None, None]:
        yield from run_tool(self, tool_parameters, _gaps, _defaults)
