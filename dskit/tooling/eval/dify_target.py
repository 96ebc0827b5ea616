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

What the figures can and cannot see:

- **The title call.** Dify names a conversation by asking the workspace's default model on its first
  message unless the request says ``auto_generate_name: false`` (Service API default true;
  api/core/app/task_pipeline/message_cycle_manager.py ``generate_conversation_name``). That call runs
  outside the workflow and is in no usage the API returns, so it is switched off by default;
  ``auto_generate_name=True`` keeps Dify's default and the run says the title call is not counted.
- **Calls and tokens.** Streaming: each LLM-backed node's ``node_finished`` event carries its outputs and
  process data (api/core/app/apps/common/workflow_response_converter.py
  ``workflow_node_finish_to_stream_response``), so every call is counted with its own usage and the
  model's text (``outputs.text`` of an LLM node, ``process_data.llm_text`` of a parameter extractor; a
  question classifier shows only the class it chose). Blocking: the answer has only the turn's summed
  ``metadata.usage``, so the number of calls is *unknown* (``TurnOutput.calls_known`` false) and the
  tokens are the turn's total, on one entry.
- **The catalog.** A suite is scored only against an app that carries the suite's catalog. With console
  access (:mod:`.dify_console`: the console API base, the app's id and a way to sign in, the web UI's
  login first) the app's ``TASK_CATALOG`` environment variable is read and must equal the suite's
  catalog (its name, description and format version aside), else the suite is refused before its first
  message. When the console cannot be used (none given, sign-in refused, a secret variable), the state
  is the only evidence: a task in the app's state that the suite's catalog does not have stops the
  conversation with the same refusal, and the state's ``catalog_checked`` (the mark of the catalog text
  the app's engine checked, dskit.turn.machine.catalog_mark) equal to the mark of the suite's catalog text
  verifies the app. A conversation verified neither way is scored, but a turn of it that is not right
  is put down to the unverified catalog (cause ``catalog_unverified``), never to the model: an app built
  from another catalog fails every turn, and blaming the model for that would be false. The run's
  ``catalog_check`` says which case each conversation was in.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from .dify_console import ConsoleAccess, ConsoleError, error_line, read_catalog_variable
from .suite import Suite
from .turn import Call, TurnOutput

LLM_NODE_TYPES = frozenset({"llm", "question-classifier", "parameter-extractor", "agent"})
STATE_VARIABLE = "sys_context_str"
CATALOG_VARIABLE = "TASK_CATALOG"
TITLE_CALL_NOT_COUNTED = ("auto_generate_name is on: Dify asks its default model for a conversation title on "
                          "each conversation's first message; that call is not counted in any figure")
BLOCKING_CALLS_UNKNOWN = "unknown (blocking mode: Dify returns only the turn's summed usage)"


class DifyError(RuntimeError):
    """A Service API call that did not give what a turn needs; one line."""


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


def _usage_of(data: dict[str, Any]) -> dict[str, Any] | None:
    """A node's own usage: ``outputs.usage`` (LLM, question classifier), ``process_data.usage`` (every
    LLM-backed node, graphon's nodes/*/node.py) or ``outputs.__usage`` (parameter extractor)."""
    outputs = data.get("outputs") if isinstance(data.get("outputs"), dict) else {}
    process = data.get("process_data") if isinstance(data.get("process_data"), dict) else {}
    for usage in (outputs.get("usage"), process.get("usage"), outputs.get("__usage")):
        if isinstance(usage, dict) and ("prompt_tokens" in usage or "completion_tokens" in usage):
            return usage
    return None


def _text_of(data: dict[str, Any]) -> str:
    """The model's text as the event shows it: an LLM node's ``text``, a parameter extractor's
    ``llm_text``; a question classifier exposes only its class (its raw answer is not in the event)."""
    outputs = data.get("outputs") if isinstance(data.get("outputs"), dict) else {}
    process = data.get("process_data") if isinstance(data.get("process_data"), dict) else {}
    for text in (outputs.get("text"), process.get("llm_text")):
        if isinstance(text, str):
            return text
    return ""


def _tokens(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def stream_calls(nodes: list[dict[str, Any]], total: dict[str, Any]) -> tuple[list[Call], list[str]]:
    """One :class:`Call` per finished LLM-backed node, with its own tokens and text; and the nodes whose
    usage the events did not show (their tokens: what the turn's total leaves, on the first of them)."""
    calls, unknown = [], []
    for data in nodes:
        usage = _usage_of(data)
        name = str(data.get("node_id") or data.get("title") or "llm")
        call = Call(name, _text_of(data), latency=float(data.get("elapsed_time") or 0.0))
        if usage is None:
            unknown.append(name)
        else:
            call.prompt_tokens = _tokens(usage.get("prompt_tokens"))
            call.completion_tokens = _tokens(usage.get("completion_tokens"))
        calls.append(call)
    if unknown:
        first = next(c for c in calls if c.node == unknown[0])
        first.prompt_tokens = max(0, _tokens(total.get("prompt_tokens")) - sum(c.prompt_tokens for c in calls))
        first.completion_tokens = max(0, _tokens(total.get("completion_tokens"))
                                      - sum(c.completion_tokens for c in calls))
    return calls, unknown


def _task_names(state_text: str) -> set[str]:
    """Tasks the app's state names (open or done): evidence of the catalog the app runs with."""
    try:
        state = json.loads(state_text) if state_text else {}
    except ValueError:
        return set()
    if not isinstance(state, dict):
        return set()
    names = set()
    for entry in list(state.get("task_stack") or []) + list(state.get("done") or []):
        if isinstance(entry, dict):
            name = entry.get("name") or entry.get("task")
            if isinstance(name, str) and name:
                names.add(name)
    return names


def _checked_mark(state_text: str) -> str:
    """The state's ``catalog_checked``: the mark of the ``TASK_CATALOG`` text the app's engine checked."""
    try:
        state = json.loads(state_text) if state_text else {}
    except ValueError:
        return ""
    mark = state.get("catalog_checked") if isinstance(state, dict) else ""
    return mark if isinstance(mark, str) else ""


def suite_marks(suite: Suite) -> frozenset[str]:
    """The marks an app carrying the suite's catalog shows in its state: that of the catalog's text as
    ``dskit new`` and ``dskit gen --catalog`` write it (compact JSON) and, for a suite whose catalog acts
    as the shipped one, that of the shipped Chatflows' ``TASK_CATALOG``. A catalog pasted in another
    layout has another mark: such an app is verified only through the console."""
    from dskit.turn.machine import catalog_mark  # noqa: PLC0415
    from dskit.tooling.dslbuild.flows import FlowOptions, catalog_text, default_catalog  # noqa: PLC0415

    texts = {suite.catalog_json}
    if not catalog_difference(default_catalog(), suite.catalog_data):
        texts.add(catalog_text(FlowOptions()))
    return frozenset(catalog_mark(text) for text in texts)


# Fields that name or describe a catalog and change nothing the engine does.
CATALOG_LABELS = frozenset({"name", "description", "version"})


def catalog_difference(app: Any, suite: dict[str, Any]) -> str:
    """'' when the app's catalog acts as the suite's (tasks, policy, language...; its name, description and
    format version aside); else what differs, in one line."""
    if not isinstance(app, dict):
        return "the app's TASK_CATALOG is not a JSON object"
    app = {k: v for k, v in app.items() if k not in CATALOG_LABELS}
    suite = {k: v for k, v in suite.items() if k not in CATALOG_LABELS}
    if app == suite:
        return ""
    app_tasks, suite_tasks = dict(app.get("tasks") or {}), dict(suite.get("tasks") or {})
    parts = []
    if set(app_tasks) - set(suite_tasks):
        parts.append(f"tasks only in the app: {', '.join(sorted(set(app_tasks) - set(suite_tasks)))}")
    if set(suite_tasks) - set(app_tasks):
        parts.append(f"tasks only in the suite: {', '.join(sorted(set(suite_tasks) - set(app_tasks)))}")
    changed = sorted(name for name in set(app_tasks) & set(suite_tasks) if app_tasks[name] != suite_tasks[name])
    if changed:
        parts.append(f"tasks defined differently: {', '.join(changed)}")
    other = sorted(key for key in set(app) | set(suite) if key != "tasks" and app.get(key) != suite.get(key))
    if other:
        parts.append(f"other fields differ: {', '.join(other)}")
    return "; ".join(parts) or "the catalogs differ"


class CatalogMismatch(RuntimeError):
    """The app does not carry the suite's catalog: its turns would be scored against the wrong tasks."""


class DifyConversation:
    """One Dify conversation, its id learnt from the first answer."""

    def __init__(self, target: DifyTarget, user: str, suite: Suite | None = None, verified: str = "") -> None:
        from dskit.tooling.llm.http import new_session  # noqa: PLC0415

        self.target = target
        self.suite_tasks = set((suite.catalog_data.get("tasks") or {}) if suite is not None else ())
        self.suite_marks = suite_marks(suite) if suite is not None else frozenset()
        self.verified = verified  # "console", "mark" (the state's catalog mark), "" (not known)
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
                "conversation_id": self.conversation_id, "user": self.user,
                "auto_generate_name": self.target.auto_generate_name}
        response = request_with_deadline(self.session, "POST", f"{self.target.base_url}/chat-messages",
                                         deadline=self.target.deadline, headers=self._headers(), json_body=body)
        if response.status >= 400:
            raise DifyError(error_line(response.status, response.text()))
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
                raise DifyError("reading conversation variables: " + error_line(response.status, response.text()))
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
        first = not self.conversation_id
        try:
            result = self._send(user)
            self.conversation_id = result["conversation_id"] or self.conversation_id
            if not self.conversation_id:
                raise DifyError("the answer named no conversation_id")
            state = self._state()
            foreign = sorted(_task_names(state) - self.suite_tasks) if self.suite_tasks else []
            if foreign:
                raise CatalogMismatch(f"the app's catalog is not the suite's: its state has task(s) "
                                      f"{', '.join(foreign)} that the suite's catalog does not; not scored")
            self.state = state
            if not self.verified and _checked_mark(state) in self.suite_marks:
                self.verified = "mark"
        except (DifyError, CatalogMismatch, DeadlineExceeded, TransportError) as error:
            return TurnOutput(state_text=self.state, error=" ".join(str(error).split())[:300],
                              seconds=time.monotonic() - started,
                              catalog_unverified="" if self.verified else self.target.unverified_reason())
        usage = result.get("usage") or {}
        detail: dict[str, Any] = {"conversation_id": self.conversation_id, "usage": usage}
        nodes = list(result.get("llm_nodes") or [])
        # A stream without node events (an app or proxy that drops them) cannot tell the calls apart either.
        calls_known = self.target.mode == "streaming" and (bool(nodes) or not _tokens(usage.get("total_tokens")
                                                                                      or usage.get("prompt_tokens")))
        if calls_known:
            calls, unknown = stream_calls(nodes, usage)
            if unknown:
                detail["per_call_tokens"] = (f"unknown for {', '.join(unknown)} (no usage in the event): the "
                                             "turn's remaining tokens are on the first of them")
        else:
            calls = [Call("app (all LLM calls of the turn)", "", prompt_tokens=_tokens(usage.get("prompt_tokens")),
                          completion_tokens=_tokens(usage.get("completion_tokens")),
                          latency=float(usage.get("latency") or 0.0))]
            detail["llm_calls"] = BLOCKING_CALLS_UNKNOWN if self.target.mode == "blocking" else \
                "unknown (the stream carried no node_finished event of an LLM node, only the turn's usage)"
        if first and self.target.auto_generate_name:
            detail["title_call"] = TITLE_CALL_NOT_COUNTED
        return TurnOutput(answer=result["answer"], state_text=self.state, calls=calls, calls_known=calls_known,
                          seconds=time.monotonic() - started, detail=detail,
                          catalog_unverified="" if self.verified else self.target.unverified_reason())


class DifyTarget:
    """``--target dify``: a deployed app over Dify's Service API (blocking or streaming)."""

    name = "dify"

    def __init__(self, base_url: str, api_key: str, *, mode: str = "blocking", deadline: float = 120.0,
                 user_prefix: str = "dskit-eval", auto_generate_name: bool = False,
                 console: ConsoleAccess | None = None) -> None:
        if mode not in ("blocking", "streaming"):
            raise ValueError(f"mode must be blocking or streaming, not {mode!r}")
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"--dify-url must start with http:// or https://, not {base_url!r}")
        if console is not None and not console.base_url.startswith(("http://", "https://")):
            raise ValueError(f"--dify-console-url must start with http:// or https://, not {console.base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.mode = mode
        self.deadline = deadline
        self.user_prefix = user_prefix
        self.auto_generate_name = auto_generate_name
        self.console = console
        self._app_catalog: Any = None
        self._console_source = ""  # where the console read the catalog: "published" or "draft"
        self.console_problem = ""  # why the console check could not run ("" when it ran or was not asked for)
        self._conversations: list[DifyConversation] = []
        self._lock = threading.Lock()

    def app_catalog(self) -> Any:
        """The app's ``TASK_CATALOG`` read through the console, parsed (read once); None when the console
        could not be used (``console_problem`` says why). Raises :class:`CatalogMismatch` for an app
        that has no readable ``TASK_CATALOG``: nothing of a suite can be scored against it."""
        assert self.console is not None
        with self._lock:
            if self._app_catalog is None and not self.console_problem:
                try:
                    value, self._console_source = read_catalog_variable(self.console, CATALOG_VARIABLE,
                                                                        self.deadline)
                except ConsoleError as error:
                    self.console_problem = " ".join(str(error).split())[:300]
                    return None
                except (OSError, ValueError) as error:  # the console is unreachable (refused, deadline, TLS)
                    self.console_problem = f"the console API did not answer: {' '.join(str(error).split())[:200]}"
                    return None
                if value is None:
                    raise CatalogMismatch(f"the app has no {CATALOG_VARIABLE} environment variable: not a dskit "
                                          "Chatflow, or not published")
                try:
                    self._app_catalog = json.loads(value)
                except ValueError:
                    raise CatalogMismatch(f"the app's {CATALOG_VARIABLE} is not readable JSON") from None
            return self._app_catalog

    def conversation(self, suite: Suite, run_id: str) -> DifyConversation:
        verified = ""
        if self.console is not None:
            catalog = self.app_catalog()
            if catalog is not None:
                difference = catalog_difference(catalog, suite.catalog_data)
                if difference:
                    raise CatalogMismatch(f"not scored: the app's {CATALOG_VARIABLE} is not the suite's catalog "
                                          f"({difference})")
                verified = "console"
        conversation = DifyConversation(self, f"{self.user_prefix}-{run_id}", suite, verified=verified)
        with self._lock:
            self._conversations.append(conversation)
        return conversation

    def unverified_reason(self) -> str:
        """Why a conversation's catalog is not known to be its suite's, in one line."""
        if self.console is None:
            cause = "no console access (--dify-console-url, --dify-app-id and a sign-in)"
        elif self.console_problem:
            cause = f"the console check could not run: {self.console_problem}"
        else:
            cause = "the console check did not run"
        return (f"the app's catalog is not known to be the suite's ({cause}; the app's state does not carry the "
                "mark of the suite's catalog text)")

    def catalog_check(self) -> str:
        """What the run knows of the app's catalog, for the table: plain about what was not checked."""
        counts = {"console": 0, "mark": 0, "": 0}
        with self._lock:
            for conversation in self._conversations:
                counts[conversation.verified] += 1
        if self.console is not None and not self.console_problem:
            how = self.console.how()
            return (f"{CATALOG_VARIABLE} compared through the console API ({self._console_source or 'not read yet'} "
                    f"workflow, {how} sign-in)" + (": the draft, as Dify 1.12 refuses the published workflow to a "
                                                   "sign-in without the login's CSRF token"
                                                   if self._console_source == "draft" else ""))
        head = ("NOT RUN: no console access" if self.console is None
                else f"COULD NOT RUN: {self.console_problem}")
        total = sum(counts.values())
        return (f"{head}; {counts['mark']} of {total} conversation(s) verified by the catalog mark in the app's "
                f"state, {counts['']} unverified: a turn there that is not right is counted as 'catalog not "
                "verified', never blamed on the model")

    def describe(self) -> dict[str, Any]:
        return {"target": "dify", "mode": self.mode, "base_url": self.base_url,
                "auto_generate_name": self.auto_generate_name,
                "title_call": TITLE_CALL_NOT_COUNTED if self.auto_generate_name else "off (auto_generate_name: false)",
                "llm_calls": "counted per LLM node (node_finished events)" if self.mode == "streaming"
                else BLOCKING_CALLS_UNKNOWN,
                "catalog_check": self.catalog_check(),
                "catalog_check_failed": bool(self.console is not None and self.console_problem)}
