"""A tiny task API on 127.0.0.1 for the execute branch's tests and the demo.

Real HTTP, so graphon's own http-request node does the call (status codes, timeouts, connection
errors and Dify's "default value on failure" behave as in Dify). Endpoints, all POST with the
state node's ``execute_payload`` as JSON body:

- ``/ok``: 200 ``{"ok": true, "order_id": ...}``;
- ``/fail``: 500 ``{"ok": false, "error": "..."}``;
- ``/flaky``: 503 on every odd-numbered call for a task id, 200 on the next (a retry succeeds);
- ``/drop``: closes the connection without answering (an unreachable service);
- ``/late``: an API that honours ``Idempotency-Key`` and answers too late: the first request with a key
  acts (an order is made) and then closes the connection without answering, as a read timeout looks to
  the caller; a request with a key it has seen is the same submission, answered again (200, the same
  order) without acting twice — what docs/dify.md asks of a task API.

Every request is kept with its headers (``requests``, ``headers``); ``acted`` lists the keys ``/late``
acted on, once each.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class TaskApi:
    """The running server: its base URL and every request it received."""

    base_url: str
    requests: list[tuple[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    calls: dict[str, int] = field(default_factory=dict)
    orders: dict[str, str] = field(default_factory=dict)  # Idempotency-Key -> the order made for it
    acted: list[str] = field(default_factory=list)


def _handler(api: TaskApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            _ = format, args

        def _reply(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:  # noqa: N802 - stdlib naming
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode("utf-8", "replace")
            try:
                payload = json.loads(raw) if raw else None
            except ValueError:
                payload = raw
            api.requests.append((self.path, payload))
            api.headers.append({name.lower(): value for name, value in self.headers.items()})
            task_id = str(payload.get("task_id")) if isinstance(payload, dict) else ""
            key = self.headers.get("Idempotency-Key") or ""
            if self.path == "/ok":
                self._reply(200, {"ok": True, "order_id": f"order-{task_id}"})
            elif self.path == "/fail":
                self._reply(500, {"ok": False, "error": "库存不足 / out of stock"})
            elif self.path == "/flaky":
                api.calls[task_id] = api.calls.get(task_id, 0) + 1
                if api.calls[task_id] % 2 == 0:
                    self._reply(200, {"ok": True, "order_id": f"order-{task_id}"})
                else:
                    self._reply(503, {"ok": False, "error": "temporarily unavailable"})
            elif self.path == "/drop":
                self.close_connection = True
                self.connection.close()
            elif self.path == "/late" and key in api.orders:  # the same submission: answer again, act not
                self._reply(200, {"ok": True, "order_id": api.orders[key], "repeated": True})
            elif self.path == "/late":
                api.orders[key] = f"order-{task_id}-{len(api.orders) + 1}"
                api.acted.append(key)
                self.close_connection = True
                self.connection.close()
            else:
                self._reply(404, {"ok": False, "error": "no such endpoint"})

    return Handler


@contextmanager
def task_api() -> Iterator[TaskApi]:
    """Serve the task API on a free port of 127.0.0.1 for the duration of the block."""
    api = TaskApi(base_url="")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(api))
    api.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, name="dskit-task-api", daemon=True)
    thread.start()
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
