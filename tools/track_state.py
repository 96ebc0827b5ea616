"""track_state: seed 000's whole loop in one call — understand with the user's model, then step.

The model gets the understanding prompt of :func:`dskit.context.prompts.understanding_prompt` — byte for byte
what the code-node Chatflow's context node builds from the same state, history and summary — at
temperature 0 with a fixed seed whatever the model selector holds (:data:`dskit.context.prompts.UNDERSTANDING_SAMPLING`:
the answer decides the state, and the same message in the same state must give the same state). An
unusable answer is retried once with the reason; then the state machine applies it. The result is
update_dialogue_state's, plus the raw understanding, the number of model calls and their token usage.
"""

from collections.abc import Generator, Mapping
from typing import Any

from dify_plugin import Tool
from dify_plugin.entities.tool import ToolInvokeMessage

from dskit.base.messages import norm_lang
from dskit.context.prompts import UNDERSTANDING_SAMPLING, understanding_prompt
from dskit.surfaces.turn_inputs import MAX_QUERY_CHARS
from dskit.turn.command_schema import command_schema
from dskit.turn.machine import run_turn
from dskit.turn.understanding import parse_understanding
from tools._common import (MAX_HISTORY_CHARS, ParamError, bool_param, catalog_param, decision_defaults,
                           decision_payload, grounding_params, run_tool, session_conversation, state_param,
                           text_param)
from tools._llm import ModelCallError, call_llm, chat, empty_usage, model_param, repair

_RETRY = {
    "zh": "你上一条输出无法使用（{error}）。请只输出一个 JSON 对象："
          "{{\"rewritten_query\": \"...\", \"commands\": [...]}}，不要任何其他文字。",
    "en": "Your last output could not be used ({error}). Output only one JSON object: "
          "{{\"rewritten_query\": \"...\", \"commands\": [...]}} and nothing else.",
}


def _track(tool: Tool, params: Mapping[str, Any], lang: str | None) -> tuple[dict, str]:
    catalog = catalog_param(params, lang)
    state = state_param(params, lang)
    query = text_param(params, "query", lang, max_chars=MAX_QUERY_CHARS, required=True)
    grounding = grounding_params(params, lang)  # checked before the model is called
    history = text_param(params, "history", lang, max_chars=MAX_HISTORY_CHARS)
    summary = text_param(params, "summary", lang, max_chars=50_000)
    config = model_param(params, "model", lang, required=True)
    # greedy with a fixed seed whatever the selector says: the answer decides the state (UNDERSTANDING_SAMPLING)
    config.completion_params = {**config.completion_params, **UNDERSTANDING_SAMPLING}
    prompt_lang = norm_lang(lang or catalog.language)

    structured = bool_param(params, "structured_output", lang, default=False)

    prompt = understanding_prompt(catalog, state, query, history=history, summary=summary, lang=prompt_lang)
    messages = chat(prompt["system"], prompt["user"])
    usage = empty_usage()
    try:
        answer, attempts = _understand(tool, config, messages, usage, lang, command_schema(catalog) if structured else None)
        parsed = parse_understanding(answer, catalog)
        if not parsed["usable"]:
            retry = _RETRY[prompt_lang].format(error=parsed["error"] or "no JSON")
            answer = call_llm(tool, config, repair(messages, answer, retry), usage, lang)
            attempts += 1
            parsed = parse_understanding(answer, catalog)
    except ModelCallError as exc:
        raise ParamError("model", str(exc), lang, message=str(exc)) from None
    result = run_turn(state, answer, catalog, lang=lang, parsed=parsed, **grounding)
    payload = decision_payload(result, catalog, session_conversation(tool)) | {
        "understanding": answer, "attempts": attempts, "usage": usage}
    return payload, result.decision.get("question") or ""


def _understand(tool: Tool, config: Any, messages: list, usage: dict, lang: str | None,
                schema: dict | None) -> tuple[str, int]:
    """(answer, model calls): with ``schema`` through Dify's structured-output call first; when Dify
    refuses it (a release without it, an answer its parser cannot read) the plain call, once."""
    if schema is not None:
        try:
            return call_llm(tool, config, messages, usage, lang, schema=schema), 1
        except ModelCallError:
            return call_llm(tool, config, messages, usage, lang), 2
    return call_llm(tool, config, messages, usage, lang), 1


def _defaults(params: Mapping[str, Any]) -> dict:
    return decision_defaults(params) | {"understanding": "", "attempts": 0, "usage": empty_usage()}


class TrackStateTool(Tool):
    """Understand the user's message with the chosen model and update the dialogue state."""

    def _invoke(self, tool_parameters: dict[str, Any]) -> Generator[ToolInvokeMessage, None, None]:
        yield from run_tool(self, tool_parameters, lambda p, lang: _track(self, p, lang), _defaults)
