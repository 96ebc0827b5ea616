"""Live LLM calls for ``dskit chat``: any OpenAI-compatible ``/chat/completions`` endpoint.

The Chatflow runs in graphon exactly as in the tests; only the responder differs: each LLM node's
messages go to the endpoint, with the node's temperature. A tiny keyword retriever over a text file
stands in for the knowledge base (passages separated by blank lines).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from dskit.tooling.dslrun.graphon import LLMRequest

Poster = Callable[[str, Mapping[str, str], Mapping[str, Any], float], Mapping[str, Any]]


class LiveLLMError(RuntimeError):
    """The endpoint refused or answered something that is not a chat completion."""


def _post_json(url: str, headers: Mapping[str, str], body: Mapping[str, Any], timeout: float
               ) -> Mapping[str, Any]:
    import httpx  # noqa: PLC0415

    try:
        response = httpx.post(url, headers=dict(headers), json=dict(body), timeout=timeout)
    except httpx.HTTPError as error:
        raise LiveLLMError(f"cannot reach {url}: {error}") from error
    if response.status_code >= 400:
        raise LiveLLMError(f"{url} answered {response.status_code}: {response.text[:300]}")
    try:
        return response.json()
    except ValueError as error:
        raise LiveLLMError(f"{url} did not answer JSON") from error


class OpenAICompatible:
    """A responder for :class:`dskit.tooling.dslrun.graphon.Conversation` backed by a live model."""

    def __init__(self, base_url: str, model: str, api_key: str = "", *, timeout: float = 60.0,
                 temperatures: Mapping[str, float] | None = None, post: Poster | None = None) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.temperatures = dict(temperatures or {})
        self.post = post or _post_json

    def __call__(self, request: LLMRequest) -> str:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        messages = [{"role": role if role in {"system", "user", "assistant"} else "user", "content": text}
                    for role, text in request.messages if text]
        body = {"model": self.model, "messages": messages,
                "temperature": self.temperatures.get(request.node_id, 0.2)}
        data = self.post(self.url, headers, body, self.timeout)
        try:
            return str(data["choices"][0]["message"]["content"] or "")
        except (KeyError, IndexError, TypeError) as error:
            raise LiveLLMError(f"unexpected answer from {self.url}: {str(data)[:300]}") from error


def node_temperatures(doc: Mapping[str, Any]) -> dict[str, float]:
    """Each LLM-backed node's temperature as the DSL sets it."""
    temps = {}
    for node in doc["workflow"]["graph"]["nodes"]:
        model = (node.get("data") or {}).get("model") or {}
        value = (model.get("completion_params") or {}).get("temperature")
        if isinstance(value, int | float):
            temps[str(node["id"])] = float(value)
    return temps


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
