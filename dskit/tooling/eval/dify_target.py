"""The ``dify`` target: a Chatflow deployed in Dify, driven over its Service API.

Per turn (Dify's API reference, "Send Chat Message" and "List Conversation Variables" of the Chatflow
App API, https://docs.dify.ai/en/api-reference/chatflows/send-chat-message):

- ``POST {base}/chat-messages`` with ``{"inputs": {}, "query": ..., "response_mode": "blocking" |
  "streaming", "conversation_id": ..., "user": ...}`` and ``Authorization: Bearer {app key}``. The first
  message of a conversation sends ``conversation_id: ""``; the answer names the conversation.
  Blocking: one JSON object (``answer``, ``conversation_id``, ``metadata.usage``). Streaming:
  server-sent events, ``data: {json}`` lines: ``message`` chunks (concatenated), ``message_replace``,
  ``node_finished`` (we count the LLM-backed nodes), ``message_end`` (usage), ``workflow_finished``
  (``status: failed`` is a failed turn), ``error`` (``status``, ``code``, ``message``; HTTP stays 200);
  ``event: ping`` keep-alives are skipped.
- Errors: HTTP 4xx/5xx with ``{"status", "code", "message"}`` (``app_unavailable``, ``not_found``
  "Conversation Not Exists.", ``too_many_requests``, ``internal_server_error``...) become the turn's
  one-line error. A chat message is never retried: a second POST would be a second user message.
- Then ``GET {base}/conversations/{id}/variables?user=...&limit=100`` (following ``has_more`` /
  ``last_id``) reads ``sys_context_str``, the state every metric is computed from.
"""

from __future__ import annotations

import json
import time
from typing import Any

from .suite import Suite
from .turn import Call, TurnOutput

LLM_NODE_TYPES = frozenset({"llm", "question-classifier", "parameter-extractor", "agent"})
STATE_VARIABLE = "sys_context_str"


class DifyError(RuntimeError):
    """A Service API call that did not give what a turn needs; one line."""


def _error_line(status: int, body: str) -> str:
    try:
        data = json.loads(body)
    except ValueError:
        return f"HTTP {status}: {' '.join(body.split())[:160] or '(empty body)'}"
    if isinstance(data, dict):
        return f"HTTP {status} {data.get('code') or ''}: {data.get('message') or ''}".replace(" :", ":")[:240]
    return f"HTTP {status}: {str(data)[:160]}"


def parse_stream(body: str) -> dict[str, Any]:
    """Fold a chat-messages event stream into {answer, conversation_id, usage, llm_nodes, error}."""
    out: dict[str, Any] = {"answer": "", "conversation_id": "", "usage": {}, "llm_nodes": [], "error": "",
                           "status": ""}
    for block in body.replace("\r\n", "\n").split("\n\n"):
        data_lines = [line[5:].strip() for line in block.split("\n") if line.startswith("data:")]
        if not data_lines:
            continue  # "event: ping" and blank keep-alives carry no data
        try:
            event = json.loads("\n".join(data_lines))
        except ValueError:
            out["error"] = out["error"] or f"unreadable event: {data_lines[0][:80]}"
            continue
        if not isinstance(event, dict):
            continue
        kind = event.get("event")
        out["conversation_id"] = event.get("conversation_id") or out["conversation_id"]
        if kind in ("message", "agent_message"):
            out["answer"] += str(event.get("answer") or "")
        elif kind == "message_replace":
            out["answer"] = str(event.get("answer") or "")
        elif kind == "message_end":
            out["usage"] = ((event.get("metadata") or {}).get("usage")) or {}
        elif kind == "node_finished":
            data = event.get("data") or {}
            if data.get("node_type") in LLM_NODE_TYPES:
                out["llm_nodes"].append(data)
        elif kind == "workflow_finished":
            data = event.get("data") or {}
            out["status"] = str(data.get("status") or "")
            if out["status"] == "failed" and not out["error"]:
                out["error"] = f"workflow failed: {data.get('error') or 'no reason given'}"
        elif kind == "error":
            out["error"] = f"stream error {event.get('status') or ''} {event.get('code') or ''}: " \
                           f"{event.get('message') or ''}"
    return out


class DifyConversation:
    """One Dify conversation, its id learnt from the first answer."""

    def __init__(self, target: DifyTarget, user: str) -> None:
        from dskit.tooling.llm.http import new_session  # noqa: PLC0415

        self.target = target
        self.session = new_session()  # one per conversation: conversations may run in parallel
        self.user = user
        self.conversation_id = ""
        self.state = ""

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.target.api_key:
            headers["Authorization"] = f"Bearer {self.target.api_key}"
        return headers

    def _send(self, query: str) -> dict[str, Any]:
        from dskit.tooling.llm.http import request_with_deadline  # noqa: PLC0415

        body = {"inputs": {}, "query": query, "response_mode": self.target.mode,
                "conversation_id": self.conversation_id, "user": self.user}
        response = request_with_deadline(self.session, "POST", f"{self.target.base_url}/chat-messages",
                                         deadline=self.target.deadline, headers=self._headers(), json_body=body)
        if response.status >= 400:
            raise DifyError(_error_line(response.status, response.text()))
        if self.target.mode == "streaming":
            result = parse_stream(response.text())
            if result["error"]:
                raise DifyError(result["error"])
            return result
        try:
            data = json.loads(response.text())
        except ValueError:
            raise DifyError(f"blocking answer is not JSON: {response.text()[:120]!r}") from None
        if not isinstance(data, dict) or "answer" not in data:
            raise DifyError(f"blocking answer has no 'answer': {str(data)[:120]}")
        return {"answer": str(data.get("answer") or ""), "conversation_id": str(data.get("conversation_id") or ""),
                "usage": ((data.get("metadata") or {}).get("usage")) or {}, "llm_nodes": []}

    def _state(self) -> str:
        from dskit.tooling.llm.http import request_with_deadline  # noqa: PLC0415

        last_id = None
        for _ in range(50):  # 100 variables a page: far more than any Chatflow has
            params = {"user": self.user, "limit": 100, **({"last_id": last_id} if last_id else {})}
            response = request_with_deadline(
                self.session, "GET", f"{self.target.base_url}/conversations/{self.conversation_id}/variables",
                deadline=self.target.deadline, headers=self._headers(), params=params)
            if response.status >= 400:
                raise DifyError("reading conversation variables: " + _error_line(response.status, response.text()))
            try:
                page = json.loads(response.text())
                items = list(page.get("data") or [])
            except (ValueError, AttributeError, TypeError):
                raise DifyError("conversation variables: not the documented {data, has_more} object") from None
            for item in items:
                if isinstance(item, dict) and item.get("name") == STATE_VARIABLE:
                    return str(item.get("value") or "")
            if not page.get("has_more") or not items:
                break
            last_id = items[-1].get("id")
        raise DifyError(f"the app has no conversation variable {STATE_VARIABLE!r} (is it a dskit Chatflow?)")

    def turn(self, user: str) -> TurnOutput:
        from dskit.tooling.llm.http import DeadlineExceeded, TransportError  # noqa: PLC0415

        started = time.monotonic()
        try:
            result = self._send(user)
            self.conversation_id = result["conversation_id"] or self.conversation_id
            if not self.conversation_id:
                raise DifyError("the answer named no conversation_id")
            self.state = self._state()
        except (DifyError, DeadlineExceeded, TransportError) as error:
            return TurnOutput(state_text=self.state, error=" ".join(str(error).split())[:300],
                              seconds=time.monotonic() - started)
        usage = result.get("usage") or {}
        calls = [Call(str(node.get("node_id") or node.get("title") or "llm"), "",
                      latency=float(node.get("elapsed_time") or 0.0)) for node in result.get("llm_nodes") or []]
        if not calls:
            calls = [Call("app", "", latency=float(usage.get("latency") or 0.0))]
        calls[0].prompt_tokens = int(usage.get("prompt_tokens") or 0)
        calls[0].completion_tokens = int(usage.get("completion_tokens") or 0)
        return TurnOutput(answer=result["answer"], state_text=self.state, calls=calls,
                          seconds=time.monotonic() - started,
                          detail={"conversation_id": self.conversation_id, "usage": usage})


class DifyTarget:
    """``--target dify``: a deployed app over Dify's Service API (blocking or streaming)."""

    name = "dify"

    def __init__(self, base_url: str, api_key: str, *, mode: str = "blocking", deadline: float = 120.0,
                 user_prefix: str = "dskit-eval") -> None:
        if mode not in ("blocking", "streaming"):
            raise ValueError(f"mode must be blocking or streaming, not {mode!r}")
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"--dify-url must start with http:// or https://, not {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.mode = mode
        self.deadline = deadline
        self.user_prefix = user_prefix

    def conversation(self, suite: Suite, run_id: str) -> DifyConversation:
        _ = suite
        return DifyConversation(self, f"{self.user_prefix}-{run_id}")

    def describe(self) -> dict[str, Any]:
        return {"target": "dify", "mode": self.mode, "base_url": self.base_url}
