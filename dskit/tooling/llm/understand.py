"""The understanding call as the fast Chatflow's ``understand`` LLM node makes it, in one place.

``dskit eval --target engine`` and ``dskit replay --from llm`` both stand for that node: the same two
messages (the context node's instructions and prompt), the same completion parameters as the shipped
fast DSL sets them, and the same answer when the model is cut at ``max_tokens`` (the node passes the cut
text on, :func:`.completion.node_output`). They held the call and the fallback twice; this module is
the one copy, so the two can never send different requests or treat a cut answer differently.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from .completion import Completion, LLMError, node_output

FAST_DSL = Path(__file__).resolve().parents[3] / "dsl" / "dialogue_chatflow.yml"
UNDERSTAND_NODE = "understand"


@cache
def understand_parameters(dsl_path: str = str(FAST_DSL)) -> dict[str, Any]:
    """The understand node's completion parameters in the shipped fast DSL (temperature, max_tokens, seed)."""
    import yaml  # noqa: PLC0415

    doc = yaml.safe_load(Path(dsl_path).read_text(encoding="utf-8"))
    for node in doc["workflow"]["graph"]["nodes"]:
        if node["id"] == UNDERSTAND_NODE:
            params = dict((node["data"].get("model") or {}).get("completion_params") or {})
            return {k: params[k] for k in ("temperature", "max_tokens", "seed") if k in params}
    return {}


def understanding_messages(context: Mapping[str, Any]) -> list[dict[str, str]]:
    """The two messages of the understand node: system = instructions, user = the assembled context
    (the outputs of :func:`dskit.surfaces.nodes.context_node`)."""
    return [{"role": "system", "content": str(context["instructions"])},
            {"role": "user", "content": str(context["context"])}]


def understand(client: Any, context: Mapping[str, Any], params: Mapping[str, Any] | None = None,
               schema: Mapping[str, Any] | None = None) -> Completion:
    """The model's answer to the understanding prompt ``context``, as the understand node outputs it.

    ``params`` defaults to :func:`understand_parameters`. An answer cut at ``max_tokens`` is returned like
    any other (the node passes its text on, and the state node reads what it can); any other failure
    raises the client's :class:`LLMError`, as the node fails. ``schema`` (the catalog's command schema) is
    sent only when the client's structured output is on; the seed only when the DSL sets one."""
    params = understand_parameters() if params is None else params
    try:
        return client.complete(understanding_messages(context), temperature=params.get("temperature"),
                               max_tokens=params.get("max_tokens"), want_json=True,
                               schema=schema, seed=params.get("seed"))
    except LLMError as error:
        answer = node_output(error)
        if answer is None:
            raise
        return answer


__all__ = ["FAST_DSL", "UNDERSTAND_NODE", "understand", "understand_parameters", "understanding_messages"]
