"""compress_history: append the new turn, keep the window, roll what leaves it into the summary.

The summary is written by the model the user picked (``model``), else extractively (no model).
A model's summary is checked by ``dskit.context.summary.summary_accept``: refused, empty or bloated answers
fall back to the extractive merge, and values the model dropped are added back.

There is no "workspace default model" option any more: Dify's built-in summary call
(``session.model.summary.invoke``) returns its input unchanged unless the text exceeds 60% of the
default model's context window (Dify api/core/plugin/backwards_invocation/model.py
``invoke_summary``), so for a few turns of overflow it never summarised and the tool silently fell
back. A saved ``summarizer = workspace`` still works: it acts as ``auto`` and says so in ``notice``.
"""

from collections.abc import Generator, Mapping
from typing import Any

from dify_plugin import Tool
from dify_plugin.entities.tool import ToolInvokeMessage

from dskit.base.jsonish import loads_strict_or_none
from dskit.base.messages import norm_lang
from dskit.context.history import HISTORY_MAX_BYTES, HISTORY_MAX_TURNS, history_update, parse_history
from dskit.context.summary import SUMMARY_MAX_TOKENS, summary_accept
from dskit.state.views import history_tag, memory_reply
from tools._common import MAX_HISTORY_CHARS, choice_param, int_param, run_tool, text_param
from tools._llm import ModelCallError, call_llm, chat, empty_usage, model_param


_WORKSPACE_NOTICE = {
    "zh": "“工作区默认模型”方式已取消（Dify 内置摘要不会摘要较短的文本），已按“自动”处理：选了摘要模型就用它，否则抽取式。",
    "en": "the 'workspace default model' summarizer is gone (Dify's built-in summary leaves short text "
          "unsummarised); treated as auto: the picked model if any, else extractive.",
}


def _summarize(tool: Tool, config: Any, prompt: dict, usage: dict, lang: str | None) -> tuple[str, str]:
    """(model text, notice): the picked model's merged summary, or "" and why when there is none."""
    try:
        return call_llm(tool, config, chat(prompt["system"], prompt["user"]), usage, lang), ""
    except ModelCallError as exc:
        return "", str(exc)


def _compress(tool: Tool, params: Mapping[str, Any], lang: str | None) -> tuple[dict, str]:
    history = text_param(params, "history", lang, max_chars=MAX_HISTORY_CHARS)
    user_query = text_param(params, "user_query", lang, max_chars=50_000)
    answer = text_param(params, "answer", lang, max_chars=50_000)
    follow_up = text_param(params, "follow_up", lang, max_chars=50_000)
    decision = loads_strict_or_none(text_param(params, "decision", lang, max_chars=MAX_HISTORY_CHARS))
    decision = decision if isinstance(decision, dict) else None
    summary = text_param(params, "summary", lang, max_chars=50_000)
    tag = choice_param(params, "tag", lang, ("auto", "essential", "optional", "noise"), "auto")
    max_turns = int_param(params, "max_turns", lang, default=HISTORY_MAX_TURNS, low=1, high=200)
    max_bytes = int_param(params, "max_bytes", lang, default=HISTORY_MAX_BYTES, low=1_024, high=190_000)
    max_tokens = int_param(params, "summary_max_tokens", lang, default=SUMMARY_MAX_TOKENS, low=50, high=4_000)
    mode = choice_param(params, "summarizer", lang, ("auto", "workspace", "extractive"), "auto")
    config = model_param(params, "model", lang, required=False)
    out_lang = norm_lang(lang)
    retired = _WORKSPACE_NOTICE[out_lang] if mode == "workspace" else ""
    if mode in ("auto", "workspace"):
        mode = "model" if config is not None else "extractive"

    if decision is not None:  # kept as the Chatflows keep it (dskit.state.views.memory_reply, history_tag)
        answer = memory_reply(decision, answer, follow_up)
        tag = history_tag(decision) or "" if tag == "auto" else tag
    elif follow_up and answer:
        answer += follow_up
    result = history_update(history, summary, user_query, answer, tag="" if tag == "auto" else tag,
                            max_turns=max_turns, max_bytes=max_bytes, summary_max_tokens=max_tokens,
                            llm_summary=mode != "extractive", lang=out_lang)
    usage = empty_usage()
    new_summary, source, notice = result["summary"], "extractive" if result["overflow_turns"] else "", ""
    if result["summary_due"]:
        prompt = {"system": result["summary_system"], "user": result["summary_prompt"]}
        text, notice = _summarize(tool, config, prompt, usage, lang)
        if text:
            checked = summary_accept(text, result["summary"], parse_history(result["overflow"]), max_tokens, out_lang)
            new_summary = checked["summary"]
            source = "model" if checked["source"] == "llm" else "extractive"
    notice = " ".join(part for part in (retired, notice) if part)
    payload = {
        "history": result["history"],
        "model_history": result["model_history"],
        "summary": new_summary,
        "summarized": bool(result["overflow_turns"]),
        "summary_source": source,
        "overflow_turns": result["overflow_turns"],
        "turns": result["turns"],
        "tag": result["tag"],
        "truncated": result["truncated"],
        "notice": notice,
        "usage": usage,
    }
    return payload, ""


def _defaults(params: Mapping[str, Any]) -> dict:
    history = params.get("history") if isinstance(params.get("history"), str) else ""
    summary = params.get("summary") if isinstance(params.get("summary"), str) else ""
    return {"history": history, "model_history": history, "summary": summary, "summarized": False,
            "summary_source": "", "overflow_turns": 0, "turns": 0, "tag": "", "truncated": 0, "notice": "",
            "usage": empty_usage()}


class CompressHistoryTool(Tool):
    """Keep the history window and a rolling summary of what left it."""

    def _invoke(self, tool_parameters: dict[str, Any]) -> Generator[ToolInvokeMessage, None, None]:
        yield from run_tool(self, tool_parameters, lambda p, lang: _compress(self, p, lang), _defaults)
