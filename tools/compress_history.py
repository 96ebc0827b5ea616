"""compress_history: append the new turn, keep the window, roll what leaves it into the summary.

The summary is written by the model the user picked (``model``), or by Dify's built-in summary
with the workspace's default model (``summarizer = workspace``), else extractively (no model).
A model's summary is checked by ``dskit.summary.summary_accept``: refused, empty or bloated answers
fall back to the extractive merge, and values the model dropped are added back.
"""

from collections.abc import Generator, Mapping
from typing import Any

from dify_plugin import Tool
from dify_plugin.entities.tool import ToolInvokeMessage

from dskit.history import HISTORY_MAX_BYTES, HISTORY_MAX_TURNS, history_update, parse_history
from dskit.messages import norm_lang
from dskit.summary import SUMMARY_MAX_TOKENS, summary_accept
from tools._common import MAX_HISTORY_CHARS, choice_param, int_param, run_tool, text_param
from tools._llm import ModelCallError, call_llm, chat, empty_usage, model_param


def _summarize(tool: Tool, mode: str, config: Any, prompt: dict, usage: dict, lang: str | None) -> tuple[str, str]:
    """(model text, notice): the model's merged summary, or "" and why when there is none."""
    try:
        if mode == "workspace":
            usage["calls"] += 1
            text = tool.session.model.summary.invoke(text=prompt["user"], instruction=prompt["system"],
                                                     min_summarize_length=0)
            return text, ""
        return call_llm(tool, config, chat(prompt["system"], prompt["user"]), usage, lang), ""
    except ModelCallError as exc:
        return "", str(exc)
    except Exception as exc:  # the summary call reports errors as plain exceptions
        return "", " ".join(str(exc).split())[:200] or type(exc).__name__


def _compress(tool: Tool, params: Mapping[str, Any], lang: str | None) -> tuple[dict, str]:
    history = text_param(params, "history", lang, max_chars=MAX_HISTORY_CHARS)
    user_query = text_param(params, "user_query", lang, max_chars=50_000)
    answer = text_param(params, "answer", lang, max_chars=50_000)
    summary = text_param(params, "summary", lang, max_chars=50_000)
    tag = choice_param(params, "tag", lang, ("auto", "essential", "optional", "noise"), "auto")
    max_turns = int_param(params, "max_turns", lang, default=HISTORY_MAX_TURNS, low=1, high=200)
    max_bytes = int_param(params, "max_bytes", lang, default=HISTORY_MAX_BYTES, low=1_024, high=190_000)
    max_tokens = int_param(params, "summary_max_tokens", lang, default=SUMMARY_MAX_TOKENS, low=50, high=4_000)
    mode = choice_param(params, "summarizer", lang, ("auto", "workspace", "extractive"), "auto")
    config = model_param(params, "model", lang, required=False)
    if mode == "auto":
        mode = "model" if config is not None else "extractive"
    out_lang = norm_lang(lang)

    result = history_update(history, summary, user_query, answer, tag="" if tag == "auto" else tag,
                            max_turns=max_turns, max_bytes=max_bytes, summary_max_tokens=max_tokens,
                            llm_summary=mode != "extractive", lang=out_lang)
    usage = empty_usage()
    new_summary, source, notice = result["summary"], "extractive" if result["overflow_turns"] else "", ""
    if result["summary_due"]:
        prompt = {"system": result["summary_system"], "user": result["summary_prompt"]}
        text, notice = _summarize(tool, mode, config, prompt, usage, lang)
        if text:
            checked = summary_accept(text, result["summary"], parse_history(result["overflow"]), max_tokens, out_lang)
            new_summary = checked["summary"]
            source = ("workspace" if mode == "workspace" else "model") if checked["source"] == "llm" else "extractive"
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
