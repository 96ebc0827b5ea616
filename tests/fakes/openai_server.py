"""A local OpenAI-compatible ``/chat/completions`` server whose misbehaviour a test scripts.

Real HTTP on 127.0.0.1, so the client's own sockets, timeouts and retries are what is tested. Each
request takes the next step of ``FakeOpenAI.steps`` (the last one repeats); a step is one of:

- ``("ok", text)``: 200 with a chat completion of ``text`` and a ``usage`` block;
- ``("ok_no_usage", text)``: the same without ``usage``;
- ``("status", code, body_dict, headers_dict)``: that HTTP status and JSON body (429, 500, 400...);
- ``("refuse_json", text)``: 400 ``{"error": {"message": "response_format is not supported"}}`` when the
  request has ``response_format``, else like ``ok`` (how some OpenAI-compatible servers refuse JSON mode);
- ``("refuse_format", kinds, status, text)``: ``status`` with an error body when the request's
  ``response_format`` is one of ``kinds`` ("json_schema", "json_object_schema" for a json_object with a
  ``schema``, "json_object"), else like ``ok`` (llama-cpp-python answers 500 to OpenAI's schema form);
- ``("drop",)``: close the connection without answering (a crashed server);
- ``("garbage", raw_text)``: 200 with a body that is not a chat completion;
- ``("drip", seconds, text)``: the status line and headers, then every byte of the body ``seconds`` apart
  (a server that never stops sending but never finishes); ``("drip_all", seconds, text)``: every byte,
  headers included, ``seconds`` apart;
- ``("answer", fn)``: 200 with ``fn(request_json)`` as the completion text (a scripted model);
- ``("big", n_bytes, declared)``: 200 with a completion of ``n_bytes`` of text, generated and written in
  64 KiB pieces (never held whole), with its Content-Length when ``declared``, else until the server
  closes; ``("gzip_bomb", n_bytes)``: the same completion gzip-compressed (``Content-Encoding: gzip``),
  compressed as it is written: a few hundred KB on the wire for hundreds of MB inflated.

``requests`` holds every request body received; ``bytes_sent`` counts bytes written by ``drip``,
``big`` and ``gzip_bomb``.
"""

from __future__ import annotations

import json
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class FakeOpenAI:
    base_url: str = ""
    steps: list[tuple] = field(default_factory=lambda: [("ok", "{}")])
    requests: list[dict[str, Any]] = field(default_factory=list)
    bytes_sent: int = 0
    stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def next_step(self, body: dict[str, Any]) -> tuple:
        with self._lock:
            self.requests.append(body)
            index = min(len(self.requests), len(self.steps)) - 1
            return self.steps[index]


def completion(text: str, usage: bool = True) -> dict[str, Any]:
    data: dict[str, Any] = {"id": "chatcmpl-fake", "object": "chat.completion", "model": "fake",
                            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                         "finish_reason": "stop"}]}
    if usage:
        data["usage"] = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    return data


def _handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            _ = format, args

        def _json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode("utf-8", "replace")
            try:
                body = json.loads(raw)
            except ValueError:
                body = {"raw": raw}
            step = fake.next_step(body)
            kind = step[0]
            if kind == "ok":
                self._json(200, completion(step[1]))
            elif kind == "ok_no_usage":
                self._json(200, completion(step[1], usage=False))
            elif kind == "answer":
                self._json(200, completion(step[1](body)))
            elif kind == "status":
                self._json(step[1], step[2], step[3] if len(step) > 3 else None)
            elif kind == "refuse_json":
                if "response_format" in body:
                    self._json(400, {"error": {"message": "response_format is not supported",
                                               "type": "invalid_request_error"}})
                else:
                    self._json(200, completion(step[1]))
            elif kind == "refuse_format":
                form = body.get("response_format") or {}
                name = form.get("type", "")
                name = "json_object_schema" if name == "json_object" and "schema" in form else name
                if name in step[1]:
                    self._json(step[2], {"error": {"message": f"response_format {name} is not supported"}})
                else:
                    self._json(200, completion(step[3]))
            elif kind == "garbage":
                data = step[1].encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            elif kind == "drop":
                self.close_connection = True
                self.connection.close()
            elif kind in ("drip", "drip_all"):
                self._drip(step[1], json.dumps(completion(step[2])).encode("utf-8"), kind == "drip_all")
            elif kind == "big":
                self._big(step[1], step[2])
            elif kind == "gzip_bomb":
                self._bomb(step[1])

        def _pieces(self, n_bytes: int) -> Iterator[bytes]:
            """A chat completion whose text is ``n_bytes`` of "x", in 64 KiB pieces."""
            yield b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "'
            piece = b"x" * 65536
            for _ in range(n_bytes // len(piece)):
                yield piece
            yield b"x" * (n_bytes % len(piece))
            yield b'"}, "finish_reason": "stop"}]}'

        def _send_pieces(self, pieces: Iterator[bytes]) -> None:
            try:
                for piece in pieces:
                    if piece:
                        self.wfile.write(piece)
                        with fake._lock:
                            fake.bytes_sent += len(piece)
            except OSError:
                return

        def _big(self, n_bytes: int, declared: bool) -> None:
            self.close_connection = True
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if declared:
                self.send_header("Content-Length", str(n_bytes + 100))
            self.end_headers()
            self._send_pieces(self._pieces(n_bytes))

        def _bomb(self, n_bytes: int) -> None:
            self.close_connection = True
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Encoding", "gzip")
            self.end_headers()
            packer = zlib.compressobj(9, zlib.DEFLATED, 31)
            self._send_pieces(packer.compress(piece) for piece in [*self._pieces(n_bytes), b""])
            self._send_pieces(iter([packer.flush()]))

        def _drip(self, interval: float, data: bytes, headers_too: bool) -> None:
            self.close_connection = True
            head = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(data)}\r\n\r\n".encode())
            try:
                if not headers_too:
                    self.wfile.write(head)
                    self.wfile.flush()
                for byte in (head + data if headers_too else data):
                    if fake.stop.wait(interval):
                        return
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    with fake._lock:
                        fake.bytes_sent += 1
            except OSError:
                return

    return Handler


@contextmanager
def fake_openai(*steps: tuple) -> Iterator[FakeOpenAI]:
    """Serve a fake endpoint at ``fake.base_url`` (ends in /v1) for the duration of the block."""
    fake = FakeOpenAI(steps=list(steps) or [("ok", "{}")])
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, name="fake-openai", daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.stop.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
        time.sleep(0)
