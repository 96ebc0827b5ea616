"""A local fake of Dify's Service API for Chatflow apps: what ``dskit eval --target dify`` talks to.

Written from Dify's API reference (langgenius/dify-docs, en/api-reference/openapi_chatflow.json;
https://docs.dify.ai/en/api-reference/chatflows/send-chat-message and
https://docs.dify.ai/en/api-reference/conversations/list-conversation-variables):

- ``POST /v1/chat-messages`` ``{inputs, query, response_mode, conversation_id, user}`` with
  ``Authorization: Bearer {key}``. ``conversation_id: ""`` starts a conversation; an unknown id, or one
  of another user, is 404 ``{"status": 404, "code": "not_found", "message": "Conversation Not Exists."}``.
- blocking: ``{"event": "message", "task_id", "id", "message_id", "conversation_id", "mode":
  "advanced-chat", "answer", "metadata": {"usage": {...}}, "created_at"}``;
- streaming (``text/event-stream``): ``data: {json}`` blocks: ``workflow_started``, ``node_started`` /
  ``node_finished`` per node, ``message`` chunks, ``message_end`` (usage), ``workflow_finished``; a
  keep-alive ``event: ping`` block; on failure ``workflow_finished`` with ``status: failed`` then
  ``error`` (``status``, ``code``, ``message``), no ``message_end``, HTTP still 200;
- errors as ``{"status", "code", "message"}``: 400 ``invalid_param`` / ``app_unavailable``, 401 for a
  wrong key, 404 ``not_found``, 429 ``too_many_requests``, 500 ``internal_server_error``;
- ``GET /v1/conversations/{id}/variables?user=&last_id=&limit=`` → ``{"limit", "has_more", "data":
  [{"id", "name", "value_type", "value", "description", "created_at", "updated_at"}]}``.

Three rules of Dify's source that the figures depend on, mimicked here:

- **The title call**: a conversation's first message makes one more model call, for its name, unless the
  request says ``auto_generate_name: false`` (api/controllers/service_api/app/completion.py: the flag
  defaults to true; api/core/app/task_pipeline/message_cycle_manager.py ``generate_conversation_name``:
  only when ``auto_generate_conversation_name`` and the message is the conversation's first). It runs
  outside the workflow: no event and no usage show it. ``title_calls`` counts them.
- **node_finished carries the node's outputs and process data** (api/core/app/apps/common/
  workflow_response_converter.py ``workflow_node_finish_to_stream_response``), as graphon's nodes set
  them: an LLM node ``outputs{text, usage}`` and ``process_data{usage, ...}`` (graphon/nodes/llm/node.py),
  a question classifier ``outputs{class_name, class_id, usage}``, a parameter extractor
  ``process_data{llm_text, usage}`` and ``outputs{__usage}``. The blocking answer has only the summed
  ``metadata.usage``.
- **The console's published workflow** (``GET /console/api/apps/{app_id}/workflows/publish``;
  api/controllers/console/app/workflow.py ``PublishedWorkflowApi``, ``null`` when nothing is published)
  and draft (``…/workflows/draft``) list ``environment_variables`` ``[{id, name, value, value_type,
  description}]``, a secret one's value as ``[__HIDDEN__]``: how a client reads the app's ``TASK_CATALOG``.

The console signs callers in as Dify 1.12 does (``release="1.12"``, read from langgenius/dify):

- ``POST /console/api/login`` ``{email, password, remember_me}`` (api/controllers/console/auth/login.py):
  the password arrives Base64-encoded and is decoded first (``decrypt_password_field``,
  api/libs/encryption.py: ``base64.b64decode(text).decode("utf-8")``; a failure is 401
  ``authentication_failed`` "Invalid encrypted data"); a wrong one is 401 ``authentication_failed``.
  Success answers ``{"result": "success"}`` and sets the ``access_token``, ``refresh_token`` and
  ``csrf_token`` cookies (``__Host-`` prefixed when ``secure``, api/libs/token.py ``_real_cookie_name``).
- every console call (api/extensions/ext_login.py ``load_user_from_request``): the access token is the
  cookie's, else the bearer's; with ``admin_api_key`` set (``ADMIN_API_KEY_ENABLE``), that key as bearer
  plus ``X-WORKSPACE-ID`` naming the workspace acts as its owner; anything else is 401.
- then the CSRF check (api/libs/login.py ``login_required`` → api/libs/token.py ``check_csrf_token``),
  GET included: ``X-CSRF-Token`` must equal the ``csrf_token`` cookie and be a token issued to this
  user, else 401 "CSRF token is missing or invalid."; paths matching ``CSRF_WHITE_LIST``
  (``/console/api/apps/[a-f0-9-]+/workflows/draft``, ``re.match``) skip it.

``release="1.8"`` is the login before that: the password as typed, the tokens in the body
(``{"result": "success", "data": {"access_token", "refresh_token"}}``), no cookie and no CSRF check.

Behind it runs an *app*: ``app(conversation_id, query) -> AppTurn`` (the tests use the real fast
Chatflow in graphon with a scripted model). ``faults`` lets a test make the next chat message fail the
documented ways: ``("http", status, code, message)`` or ``("stream_error", code, message)``.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse


@dataclass
class AppTurn:
    answer: str
    variables: dict[str, Any]
    nodes: list[tuple[str, str, str]] = field(default_factory=list)  # (node_id, node_type, title)
    usage: dict[str, Any] = field(default_factory=dict)
    # node_id -> {"outputs": ..., "process_data": ...} as node_finished shows them (see llm_node_data)
    node_data: dict[str, dict[str, Any]] = field(default_factory=dict)


def llm_node_data(node_type: str, text: str, usage: dict[str, Any]) -> dict[str, Any]:
    """A finished LLM-backed node's outputs and process data, shaped as graphon's node sets them."""
    process = {"model_mode": "chat", "prompts": [], "usage": usage, "finish_reason": "stop"}
    if node_type == "question-classifier":
        return {"outputs": {"class_name": text, "class_id": "1", "usage": usage}, "process_data": process}
    if node_type == "parameter-extractor":
        return {"outputs": {"__is_success": 1, "__reason": None, "__usage": usage},
                "process_data": {**process, "llm_text": text, "tool_call": None}}
    return {"outputs": {"text": text, "reasoning_content": "", "usage": usage, "finish_reason": "stop"},
            "process_data": process}


class AppFailure(RuntimeError):
    """The app's run failed (a node error): a failed workflow in Dify's terms."""


App = Callable[[str, str], AppTurn]


@dataclass
class FakeDify:
    app: App
    api_key: str = "app-test-key"
    base_url: str = ""
    page_size: int = 2  # small, so that readers must follow has_more
    faults: deque = field(default_factory=deque)
    console_token: str = "console-test-token"  # an access token already issued to the account (a bearer)
    app_id: str = "3c1e7a52-6f0e-4b7e-9d55-2f4b1a0c9e11"
    environment: dict[str, str] = field(default_factory=dict)  # the published workflow's env variables
    draft_environment: dict[str, str] | None = None  # the draft's (None: the same as the published)
    published: bool = True
    secret: frozenset[str] = frozenset()  # environment variables of type secret (shown masked)
    release: str = "1.12"  # "1.12": cookie login and CSRF check; "1.8": tokens in the body, no CSRF
    secure: bool = False  # the console on https: cookie names get the __Host- prefix
    email: str = "owner@example.com"
    password: str = "S3cret!pw"
    admin_api_key: str = ""  # ADMIN_API_KEY with ADMIN_API_KEY_ENABLE; "" when disabled
    workspace_id: str = "6a1f8c1e-0d2b-4f57-8d8e-3b0c2a9e7f10"
    access_tokens: dict[str, str] = field(default_factory=dict)  # token -> account id
    csrf_tokens: dict[str, str] = field(default_factory=dict)  # token -> account id
    logins: list[dict[str, Any]] = field(default_factory=list)  # every login body, as sent
    console_headers: list[dict[str, str]] = field(default_factory=list)  # the headers of every console GET
    title_calls: int = 0  # conversation-name model calls (auto_generate_name)
    owners: dict[str, str] = field(default_factory=dict)  # conversation id -> user
    variables: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[tuple[str, str, Any]] = field(default_factory=list)


def _error(status: int, code: str, message: str) -> dict[str, Any]:
    return {"status": status, "code": code, "message": message}


def _handler(fake: FakeDify) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            _ = format, args

        def _json(self, status: int, body: Any) -> None:
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _authorized(self) -> bool:
            if self.headers.get("Authorization") != f"Bearer {fake.api_key}":
                self._json(401, _error(401, "unauthorized", "Access token is invalid"))
                return False
            return True

        def do_GET(self) -> None:  # noqa: N802
            url = urlparse(self.path)
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            fake.requests.append(("GET", url.path, query))
            if url.path.startswith("/console/api/"):
                fake.console_headers.append(dict(self.headers))
                self._console(url.path)
                return
            if not self._authorized():
                return
            parts = url.path.strip("/").split("/")
            if len(parts) != 4 or parts[:2] != ["v1", "conversations"] or parts[3] != "variables":
                self._json(404, _error(404, "not_found", "The requested URL was not found on the server."))
                return
            cid = parts[2]
            if fake.owners.get(cid) != query.get("user"):
                self._json(404, _error(404, "not_found", "Conversation Not Exists."))
                return
            items = [{"id": f"var-{name}", "name": name, "value_type": "string", "value": value,
                      "description": "", "created_at": 1705407629, "updated_at": 1705407629}
                     for name, value in fake.variables[cid].items()]
            limit = min(int(query.get("limit") or 20), fake.page_size)
            start = 0
            if query.get("last_id"):
                start = next((i + 1 for i, item in enumerate(items) if item["id"] == query["last_id"]), len(items))
            page = items[start:start + limit]
            self._json(200, {"limit": limit, "has_more": start + limit < len(items), "data": page})

        def _cookies(self) -> dict[str, str]:
            jar: dict[str, str] = {}
            for part in (self.headers.get("Cookie") or "").split(";"):
                name, _, value = part.strip().partition("=")
                if name:
                    jar[name] = value
            return jar

        def _cookie_name(self, name: str) -> str:
            return f"__Host-{name}" if fake.secure else name

        def _console_user(self) -> str | None:
            """The caller's account id (ext_login.load_user_from_request), None after a 401 was sent."""
            bearer = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            token = self._cookies().get(self._cookie_name("access_token")) or bearer
            if fake.admin_api_key and token == fake.admin_api_key:
                if self.headers.get("X-WORKSPACE-ID") == fake.workspace_id:
                    return "owner"
            elif token == fake.console_token or token in fake.access_tokens:
                return fake.access_tokens.get(token, "owner")
            self._json(401, _error(401, "unauthorized", "Invalid Authorization token."))
            return None

        def _csrf_holds(self, path: str, user: str) -> bool:
            """api/libs/token.py check_csrf_token (Dify 1.12); sends the 401 when it fails."""
            if fake.release == "1.8" or re.match(r"/console/api/apps/[a-f0-9-]+/workflows/draft", path):
                return True
            header = self.headers.get("X-CSRF-Token")
            cookie = self._cookies().get(self._cookie_name("csrf_token"))
            if header and header == cookie and fake.csrf_tokens.get(header) == user:
                return True
            self._json(401, _error(401, "unauthorized", "CSRF token is missing or invalid."))
            return False

        def _console(self, path: str) -> None:
            user = self._console_user()
            if user is None or not self._csrf_holds(path, user):
                return
            app = f"/console/api/apps/{fake.app_id}/workflows"
            if path not in (f"{app}/publish", f"{app}/draft"):
                self._json(404, _error(404, "not_found", "App not found"))
                return
            if path.endswith("/publish") and not fake.published:
                self._json(200, None)
                return
            environment = fake.environment
            if path.endswith("/draft") and fake.draft_environment is not None:
                environment = fake.draft_environment
            variables = [{"id": str(uuid.uuid5(uuid.NAMESPACE_OID, name)), "name": name,
                          "value": "[__HIDDEN__]" if name in fake.secret else value,
                          "value_type": "secret" if name in fake.secret else "string", "description": ""}
                         for name, value in environment.items()]
            self._json(200, {"id": "wf", "graph": {}, "features": {}, "environment_variables": variables,
                             "conversation_variables": [], "hash": "h"})

        def _login(self, body: Any) -> None:
            """POST /console/api/login as api/controllers/console/auth/login.py answers it."""
            fake.logins.append(dict(body) if isinstance(body, dict) else {})
            body = body if isinstance(body, dict) else {}
            password = str(body.get("password") or "")
            if fake.release != "1.8":  # decrypt_password_field: a Base64 decode, or 401
                try:
                    password = base64.b64decode(password).decode("utf-8")
                except (ValueError, UnicodeDecodeError):
                    self._json(401, _error(401, "authentication_failed", "Invalid encrypted data"))
                    return
            if body.get("email") != fake.email or password != fake.password:
                self._json(401, _error(401, "authentication_failed", "Invalid email or password."))
                return
            access, refresh, csrf = (secrets.token_hex(16) for _ in range(3))
            fake.access_tokens[access] = "owner"
            if fake.release == "1.8":
                self._json(200, {"result": "success", "data": {"access_token": access, "refresh_token": refresh}})
                return
            fake.csrf_tokens[csrf] = "owner"
            data = json.dumps({"result": "success"}).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            flags = "; Secure" if fake.secure else ""
            for name, value, http_only in (("access_token", access, True), ("refresh_token", refresh, True),
                                           ("csrf_token", csrf, False)):
                self.send_header("Set-Cookie", f"{self._cookie_name(name)}={value}; Path=/; SameSite=Lax"
                                               f"{'; HttpOnly' if http_only else ''}{flags}")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length).decode("utf-8") or "{}")
            except ValueError:
                body = None
            fake.requests.append(("POST", self.path, body))
            if self.path == "/console/api/login":
                self._login(body)
                return
            if not self._authorized():
                return
            if self.path != "/v1/chat-messages":
                self._json(404, _error(404, "not_found", "The requested URL was not found on the server."))
                return
            if not isinstance(body, dict) or not str(body.get("query") or "").strip() or not body.get("user"):
                self._json(400, _error(400, "invalid_param", "query and user are required"))
                return
            mode = body.get("response_mode") or "blocking"
            if mode not in ("blocking", "streaming"):
                self._json(400, _error(400, "invalid_param", "response_mode must be blocking or streaming"))
                return
            cid = str(body.get("conversation_id") or "")
            if cid and fake.owners.get(cid) != body["user"]:
                self._json(404, _error(404, "not_found", "Conversation Not Exists."))
                return
            fault = fake.faults.popleft() if fake.faults else None
            if fault and fault[0] == "http":
                self._json(fault[1], _error(fault[1], fault[2], fault[3]))
                return
            if not cid:
                cid = str(uuid.uuid4())
                fake.owners[cid] = body["user"]
                fake.variables[cid] = {}
                if body.get("auto_generate_name", True) is not False:
                    fake.title_calls += 1
            try:
                turn = fake.app(cid, body["query"])
                failure = fault[2] if fault and fault[0] == "stream_error" else None
                if failure is None:
                    fake.variables[cid] = {k: v for k, v in turn.variables.items()}
            except AppFailure as error:
                turn, failure = None, str(error)
            if mode == "blocking":
                if turn is None or failure:
                    self._json(400, _error(400, "completion_request_error", failure or "Completion request failed."))
                    return
                self._json(200, {"event": "message", "task_id": str(uuid.uuid4()), "id": str(uuid.uuid4()),
                                 "message_id": str(uuid.uuid4()), "conversation_id": cid, "mode": "advanced-chat",
                                 "answer": turn.answer, "metadata": {"usage": turn.usage, "retriever_resources": []},
                                 "created_at": int(time.time())})
                return
            self._stream(cid, turn, failure, fault[1] if fault and fault[0] == "stream_error" else "")

        def _stream(self, cid: str, turn: AppTurn | None, failure: str | None, code: str) -> None:
            ids = {"task_id": str(uuid.uuid4()), "message_id": str(uuid.uuid4()), "conversation_id": cid}
            run_id = str(uuid.uuid4())
            now = int(time.time())
            events: list[str] = []

            def emit(event: dict[str, Any]) -> None:
                events.append("data: " + json.dumps(event, ensure_ascii=False) + "\n\n")

            emit({"event": "workflow_started", **ids, "workflow_run_id": run_id, "created_at": now,
                  "data": {"id": run_id, "workflow_id": "wf", "inputs": {}, "created_at": now}})
            events.append("event: ping\n\n")
            for index, (node_id, node_type, title) in enumerate(turn.nodes if turn else [], 1):
                node = {"id": f"ne-{index}", "node_id": node_id, "node_type": node_type, "title": title,
                        "index": index, "created_at": now}
                emit({"event": "node_started", **ids, "workflow_run_id": run_id, "created_at": now, "data": node})
                shown = turn.node_data.get(node_id, {}) if turn else {}
                emit({"event": "node_finished", **ids, "workflow_run_id": run_id, "created_at": now,
                      "data": {**node, "status": "succeeded", "elapsed_time": 0.5, "inputs": {},
                               "outputs": shown.get("outputs") or {}, "process_data": shown.get("process_data"),
                               "execution_metadata": {}}})
            if failure is None and turn is not None:
                text = turn.answer
                for start in range(0, len(text), 7):
                    emit({"event": "message", **ids, "answer": text[start:start + 7], "created_at": now})
                emit({"event": "message_end", **ids, "created_at": now,
                      "metadata": {"usage": turn.usage, "retriever_resources": []}})
                emit({"event": "workflow_finished", **ids, "workflow_run_id": run_id, "created_at": now,
                      "data": {"id": run_id, "workflow_id": "wf", "status": "succeeded", "outputs": {},
                               "elapsed_time": 1.0, "total_tokens": 0, "total_steps": len(turn.nodes),
                               "created_at": now, "finished_at": now}})
            else:
                emit({"event": "workflow_finished", **ids, "workflow_run_id": run_id, "created_at": now,
                      "data": {"id": run_id, "workflow_id": "wf", "status": "failed", "error": failure,
                               "outputs": {}, "elapsed_time": 1.0, "total_tokens": 0, "total_steps": 1,
                               "created_at": now, "finished_at": now}})
                emit({"event": "error", "conversation_id": cid, "message_id": ids["message_id"], "created_at": now,
                      "status": 400, "code": code or "completion_request_error", "message": failure})
            data = "".join(events).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for chunk in (data[i:i + 200] for i in range(0, len(data), 200)):
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")

    return Handler


@contextmanager
def fake_dify(app: App, **options: Any) -> Iterator[FakeDify]:
    """Serve the fake Service API at ``fake.base_url`` (ends in /v1) for the duration of the block."""
    fake = FakeDify(app=app, **options)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, name="fake-dify", daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
