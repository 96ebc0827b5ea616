"""One HTTP POST bounded by one deadline for the whole request, not per read.

Why: ``requests`` (like urllib3 and httpx) applies its read timeout to each socket read, so a server
that sends one byte every ten seconds never times out: ``dskit chat`` hung past 100 s on one. Here the
request runs in a worker thread; the caller waits at most ``deadline`` seconds for the status line,
the headers and the whole body. When the deadline passes, the sockets the request was reading from are
shut down, which wakes the worker at once, and the caller gets :class:`DeadlineExceeded`.

The sockets are found through a urllib3 connection class that notes its socket, in a per-request list,
just before it reads a response (so a kept-alive connection is noted too). Nothing else of requests
or urllib3 is changed.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_LOCAL = threading.local()


class DeadlineExceeded(TimeoutError):
    """The whole request took longer than its deadline."""


class TransportError(ConnectionError):
    """The request could not be sent or its answer not read (refused, reset, DNS, TLS...)."""


@dataclass(frozen=True)
class RawResponse:
    """What came back: status, headers and the whole body."""

    status: int
    headers: Mapping[str, str]
    body: bytes

    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


def _tracked_classes() -> tuple[type, type]:
    """Connection pools whose connections note their socket before reading a response."""
    import urllib3.connection  # noqa: PLC0415
    import urllib3.connectionpool  # noqa: PLC0415

    def note(conn: Any) -> None:
        sockets = getattr(_LOCAL, "sockets", None)
        if sockets is not None and conn.sock is not None:
            sockets.append(conn.sock)

    class TrackedHTTPConnection(urllib3.connection.HTTPConnection):
        def getresponse(self) -> Any:  # type: ignore[override]
            note(self)
            return super().getresponse()

    class TrackedHTTPSConnection(urllib3.connection.HTTPSConnection):
        def getresponse(self) -> Any:  # type: ignore[override]
            note(self)
            return super().getresponse()

    class TrackedHTTPPool(urllib3.connectionpool.HTTPConnectionPool):
        ConnectionCls = TrackedHTTPConnection

    class TrackedHTTPSPool(urllib3.connectionpool.HTTPSConnectionPool):
        ConnectionCls = TrackedHTTPSConnection

    return TrackedHTTPPool, TrackedHTTPSPool


def new_session() -> Any:
    """A ``requests.Session`` whose connections can be cut at a deadline (no automatic retries)."""
    import requests  # noqa: PLC0415
    from requests.adapters import HTTPAdapter  # noqa: PLC0415

    http_pool, https_pool = _tracked_classes()

    class DeadlineAdapter(HTTPAdapter):
        def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = {"http": http_pool, "https": https_pool}

    session = requests.Session()
    adapter = DeadlineAdapter(max_retries=0)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def _cut(sockets: list[Any]) -> None:
    for sock in list(sockets):
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def request_with_deadline(session: Any, method: str, url: str, *, deadline: float,
                          headers: Mapping[str, str] | None = None, json_body: Any = None,
                          params: Mapping[str, Any] | None = None, stream_to: Any = None) -> RawResponse:
    """Send one request and read its whole answer within ``deadline`` seconds.

    ``stream_to`` (optional) is called with each chunk of the body as it arrives (used for server-sent
    events); the body is still returned whole. Raises :class:`DeadlineExceeded` or
    :class:`TransportError`; any HTTP status is returned, not raised.
    """
    import requests  # noqa: PLC0415

    box: dict[str, Any] = {}
    sockets: list[Any] = []
    done = threading.Event()

    def work() -> None:
        _LOCAL.sockets = sockets
        try:
            with session.request(method, url, headers=dict(headers or {}), json=json_body, params=params,
                                 timeout=(min(deadline, 30.0), deadline), stream=True) as response:
                chunks = []
                for chunk in response.iter_content(chunk_size=None):
                    if done.is_set():
                        return
                    chunks.append(chunk)
                    if stream_to is not None:
                        stream_to(chunk)
                box["response"] = RawResponse(response.status_code, dict(response.headers), b"".join(chunks))
        except requests.RequestException as error:
            box["error"] = TransportError(_one_line(error))
        except Exception as error:  # noqa: BLE001 - reported to the caller, never lost in a thread
            box["error"] = TransportError(f"{type(error).__name__}: {_one_line(error)}")
        finally:
            _LOCAL.sockets = None
            done.set()

    worker = threading.Thread(target=work, name="dskit-http", daemon=True)
    worker.start()
    if not done.wait(deadline):
        done.set()
        _cut(sockets)
        raise DeadlineExceeded(f"no complete answer from {url} within {deadline:g} s")
    if "error" in box:
        raise box["error"]
    return box["response"]


def _one_line(error: BaseException) -> str:
    """An exception as one short line (urllib3 nests reasons several levels deep)."""
    text = str(error) or type(error).__name__
    for marker in ("Caused by ", "Failed to establish a new connection: "):
        if marker in text:
            text = text.split(marker, 1)[1].rstrip("')\" ")
    return " ".join(text.split())[:300]
