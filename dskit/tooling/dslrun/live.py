"""Live LLM calls for a Chatflow run in graphon (``dskit chat``, ``dskit eval --target flow``).

The Chatflow runs in graphon exactly as in the tests; only the responder differs: each LLM node's
messages go to the model through the shared client (:mod:`dskit.tooling.llm`: one deadline per
request, retries, JSON mode, usage, cache), with the node's own parameters from the DSL (temperature,
max_tokens). A tiny keyword retriever over a text file stands in for the knowledge base.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dskit.tooling.dslrun.graphon import LLMRequest

# Node types whose answer graphon parses as JSON; LLM nodes named here answer JSON too, and so do the
# model calls of the plugin tool named here (the same understanding, made by the tool: plugin_tools.py).
JSON_NODE_TYPES = frozenset({"question-classifier", "parameter-extractor"})
JSON_LLM_NODES = frozenset({"understand", "track_state"})


class LiveLLMError(RuntimeError):
    """A node's model call failed; the message is one line (graphon shows it as the node's error)."""


def node_parameters(doc: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Each LLM-backed node's completion parameters as the DSL sets them (temperature, max_tokens...)."""
    params: dict[str, dict[str, Any]] = {}
    for node in doc["workflow"]["graph"]["nodes"]:
        data = node.get("data") or {}
        model = data.get("model") or {}
        if not model:
            continue
        values = dict(model.get("completion_params") or {})
        values["_type"] = str(data.get("type") or "")
        params[str(node["id"])] = values
    return params


def dsl_schema(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    """The understanding's JSON schema for the catalog a DSL carries in ``TASK_CATALOG`` (None when it
    has none that loads): what ``--structured`` sends for its understanding calls."""
    from dskit.catalog.catalog import load_catalog  # noqa: PLC0415
    from dskit.turn.command_schema import command_schema  # noqa: PLC0415

    for variable in (doc.get("workflow") or {}).get("environment_variables") or []:
        if isinstance(variable, Mapping) and variable.get("name") == "TASK_CATALOG":
            try:
                return command_schema(load_catalog(variable.get("value") or ""))
            except (ValueError, TypeError):
                return None
    return None


class ClientResponder:
    """A responder for :class:`dskit.tooling.dslrun.graphon.Conversation` backed by :class:`LLMClient`.

    Every call is kept in ``calls`` (node id, completion or error) until :meth:`take` hands them over,
    so a caller can attribute calls, tokens and latency to the turn that made them.
    """

    def __init__(self, client: Any, parameters: Mapping[str, Mapping[str, Any]],
                 schema: Mapping[str, Any] | None = None) -> None:
        self.client = client
        self.schema = schema  # the understanding's JSON schema (dskit.turn.command_schema), for JSON_LLM_NODES
        self.parameters = {k: dict(v) for k, v in parameters.items()}
        self.calls: list[tuple[str, Any]] = []
        self._lock = threading.Lock()
        self.before_call: Callable[[str], None] | None = None  # told the node (its title) before each call

    def wants_json(self, request: LLMRequest) -> bool:
        return self._wants_json(request.node_id, request.node_type, self.parameters.get(request.node_id, {}))

    @staticmethod
    def _wants_json(node: str, node_type: str, params: Mapping[str, Any]) -> bool:
        return (node_type in JSON_NODE_TYPES or node in JSON_LLM_NODES
                or "json" in str(params.get("response_format") or "").lower())

    def __call__(self, request: LLMRequest) -> str:
        params = self.parameters.get(request.node_id, {})
        if self.before_call is not None:
            self.before_call(request.title or request.node_id)
        return self.ask(request.node_id, request.messages, params, node_type=request.node_type).text

    def ask(self, node: str, messages: Sequence[tuple[str, str]], params: Mapping[str, Any], *,
            node_type: str = "") -> Any:
        """One call for ``node`` (an LLM node, or a plugin tool calling the model): the client's
        Completion. ``params`` are the completion parameters the DSL gives it (temperature, max_tokens,
        response_format, seed), and the understanding's schema for the understanding calls; empty messages are left out, other roles than system/assistant are user."""
        from dskit.tooling.llm import LLMError  # noqa: PLC0415
        from dskit.tooling.llm.completion import node_output  # noqa: PLC0415

        chat = [{"role": role if role in {"system", "user", "assistant"} else "user", "content": text}
                for role, text in messages if text]
        max_tokens = params.get("max_tokens")
        seed = params.get("seed")
        extra: dict[str, Any] = {}
        if node in JSON_LLM_NODES and self.schema is not None:
            extra["schema"] = self.schema  # the client sends it only when its structured output is on
        if isinstance(seed, int) and not isinstance(seed, bool):
            extra["seed"] = seed
        try:
            answer = self.client.complete(chat, temperature=params.get("temperature"),
                                          max_tokens=max_tokens if isinstance(max_tokens, int) else None,
                                          want_json=self._wants_json(node, node_type, params), **extra)
        except LLMError as error:
            answer = node_output(error)  # an answer cut at max_tokens: graphon's LLM node outputs its text
            if answer is None:
                with self._lock:
                    self.calls.append((node, error))
                raise LiveLLMError(f"{node}: {error}") from None
        with self._lock:
            self.calls.append((node, answer))
        return answer

    def take(self) -> list[tuple[str, Any]]:
        """The calls made since the last take (node id, Completion or LLMError)."""
        with self._lock:
            calls, self.calls = self.calls, []
        return calls


_QUIET_LOCK = threading.Lock()
_QUIET = {"depth": 0, "saved": logging.NOTSET}  # parallel conversations share one logger


@contextmanager
def quiet_graphon() -> Iterator[None]:
    """Keep graphon's own error logging (full tracebacks) off the terminal while live turns run; the
    turn's result says what failed, in one line."""
    logger = logging.getLogger("graphon")
    with _QUIET_LOCK:
        if not _QUIET["depth"]:
            _QUIET["saved"] = logger.level
            logger.setLevel(logging.CRITICAL + 1)
        _QUIET["depth"] += 1
    try:
        yield
    finally:
        with _QUIET_LOCK:
            _QUIET["depth"] -= 1
            if not _QUIET["depth"]:
                logger.setLevel(_QUIET["saved"])


def turn_error(result: Any) -> str:
    """One line saying why a graphon turn failed (the first node error, else the graph's)."""
    text = next(iter(result.errors.values()), "") or result.graph_error or "the run failed"
    return " ".join(str(text).split())[:300]


def keyword_knowledge(path: Path, top_k: int = 3) -> Callable[[str], Sequence[Mapping[str, Any]]]:
    """Passages of a text file (blank-line separated), ranked by shared characters/words with the query."""
    passages = [p.strip() for p in re.split(r"\n\s*\n", path.read_text(encoding="utf-8")) if p.strip()]

    def tokens(text: str) -> set[str]:
        words = set(re.findall(r"[A-Za-z0-9]+", text.lower()))
        chars = {text[i:i + 2] for i in range(len(text) - 1) if not text[i:i + 2].isascii()}
        return words | chars

    def retrieve(query: str) -> list[dict[str, Any]]:
        wanted = tokens(query)
        scored = sorted(((len(wanted & tokens(p)), i, p) for i, p in enumerate(passages)), reverse=True)
        return [{"content": p, "title": f"{path.name} #{i + 1}", "score": s}
                for s, i, p in scored[:top_k] if s > 0]

    return retrieve
