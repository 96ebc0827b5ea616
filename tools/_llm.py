"""LLM glue for the tools that call the model the user picked (a ``model-selector`` parameter).

No ``Tool`` subclass here (the SDK wants exactly one per tool file).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dify_plugin.entities.model.llm import LLMModelConfig
from dify_plugin.entities.model.message import AssistantPromptMessage, PromptMessage, SystemPromptMessage, UserPromptMessage

from tools._common import ParamError

_TEXTS = {
    "zh": {"model": "请选择一个大语言模型（需要 provider 和 model）", "failed": "模型调用失败：{detail}"},
    "en": {"model": "pick a large language model (provider and model are needed)", "failed": "the model call failed: {detail}"},
}


def _t(key: str, lang: str | None, **values: Any) -> str:
    from dskit.base.messages import norm_lang

    return _TEXTS[norm_lang(lang)][key].format(**values)


class ModelCallError(Exception):
    """The daemon or the model refused the call; carries a short, user-facing reason."""


def model_param(params: Mapping[str, Any], name: str, lang: str | None, *, required: bool) -> LLMModelConfig | None:
    """The model-selector value Dify sends ({provider, model, mode, completion_params, ...})."""
    value = params.get(name)
    if value in (None, "", {}):
        if required:
            raise ParamError(name, _t("model", lang), lang)
        return None
    if not isinstance(value, Mapping) or not all(isinstance(value.get(k), str) and value.get(k) for k in ("provider", "model")):
        raise ParamError(name, _t("model", lang), lang)
    completion = value.get("completion_params")
    return LLMModelConfig(
        provider=value["provider"],
        model=value["model"],
        mode=str(value.get("mode") or "chat"),
        completion_params=dict(completion) if isinstance(completion, Mapping) else {},
    )


def empty_usage() -> dict:
    return {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "total_price": 0.0,
            "currency": ""}


def add_usage(total: dict, usage: Any) -> dict:
    """Add one call's LLMUsage into a plain, JSON-friendly total."""
    total["calls"] += 1
    if usage is not None:
        total["prompt_tokens"] += int(getattr(usage, "prompt_tokens", 0) or 0)
        total["completion_tokens"] += int(getattr(usage, "completion_tokens", 0) or 0)
        total["total_tokens"] += int(getattr(usage, "total_tokens", 0) or 0)
        total["total_price"] = round(total["total_price"] + float(getattr(usage, "total_price", 0) or 0), 8)
        total["currency"] = str(getattr(usage, "currency", "") or total["currency"])
    return total


def call_llm(tool: Any, config: LLMModelConfig, messages: list[PromptMessage], usage: dict, lang: str | None,
             schema: Mapping[str, Any] | None = None) -> str:
    """One blocking LLM call through Dify; the answer's text. Raises ModelCallError (short reason).
    ``schema``: asked through Dify's structured-output call (``llm_structured_output``), which constrains
    a model with native structured output and only prompts any other; the text is what is returned."""
    try:
        if schema is not None:
            result = tool.session.model.llm_structured_output.invoke(
                model_config=config, prompt_messages=messages, structured_output_schema=dict(schema), stream=False)
        else:
            result = tool.session.model.llm.invoke(model_config=config, prompt_messages=messages, stream=False)
    except Exception as exc:  # the daemon reports errors as plain exceptions
        usage["calls"] += 1
        raise ModelCallError(_t("failed", lang, detail=" ".join(str(exc).split())[:200] or type(exc).__name__)) from None
    add_usage(usage, result.usage)
    return result.message.get_text_content() if hasattr(result.message, "get_text_content") else str(result.message.content or "")


def chat(system: str, user: str) -> list[PromptMessage]:
    """A system + user prompt."""
    return [SystemPromptMessage(content=system), UserPromptMessage(content=user)]


def repair(messages: list[PromptMessage], answer: str, request: str) -> list[PromptMessage]:
    """The conversation so far, the unusable answer, and a request to fix it."""
    return [*messages, AssistantPromptMessage(content=answer), UserPromptMessage(content=request)]
