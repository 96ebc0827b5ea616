"""One HTTP POST bounded by one deadline for the whole request, not per read.

Why: ``requests`` (like urllib3 and httpx) applies its read timeout to each socket read, so a server
that sends one byte every ten seconds never times out: ``dskit chat`` hung past 100 s on one. Here the
request runs in a worker thread; the caller waits at most ``deadline`` seconds for the status line,
the headers and the whole body. When the deadline passes, the sockets the request was reading from are
shut down, which wakes the worker at once, and the caller gets :class:`DeadlineExceeded`.

The sockets are found through a urllib3 connection class that notes its socket, in a per-request list,
just before it reads a response (so a kept-alive connection is noted too). Nothing else of requests
or urllib3 is changed.

The body is bounded too: it is read in chunks of at most :data:`CHUNK` bytes, undecoded, and a
``gzip``/``deflate`` body is inflated here with a limit on the output, so neither a huge body nor a
small compressed one that inflates to gigabytes is ever held: past ``max_bytes`` the read stops and
:class:`BodyTooLarge` is raised (a declared ``Content-Length`` over it is refused before reading).
"""

from __future__ import annotations

import socket
import threading
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_LOCAL = threading.local()
CHUNK = 64 * 1024
DEFAULT_MAX_BYTES = 32 * 1024 * 1024  # what any caller gets unless it asks for less


class DeadlineExceeded(TimeoutError):
    """The whole request took longer than its deadline."""


class TransportError(ConnectionError):
    """The request could not be sent or its answer not read (refused, reset, DNS, TLS...)."""


class BodyTooLarge(ValueError):
    """The answer's body is larger than the caller accepts (not retried: it would be as large again)."""


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


def _inflater(encoding: str) -> Any:
    """A decompressor for the body's Content-Encoding (None for an identity body)."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip", "deflate"):
        return zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib header, detected
    raise TransportError(f"the answer uses Content-Encoding {encoding!r}, which was not asked for")


def read_body(response: Any, max_bytes: int, *, stop: threading.Event | None = None,
              stream_to: Any = None) -> bytes | None:
    """The body of a streamed ``requests`` response, at most ``max_bytes`` after decoding.

    Raw chunks of at most :data:`CHUNK` bytes; an encoded body is inflated with ``max_length`` so one
    chunk never turns into more than the bytes still allowed. None when ``stop`` was set meanwhile.
    """
    declared = str(response.headers.get("Content-Length") or "")
    if declared.isdigit() and int(declared) > max_bytes and not response.headers.get("Content-Encoding"):
        raise BodyTooLarge(f"the answer declares {int(declared):,} bytes, over the {max_bytes:,} accepted")
    inflater = _inflater(str(response.headers.get("Content-Encoding") or ""))
    chunks: list[bytes] = []
    size = 0
    for raw in response.raw.stream(CHUNK, decode_content=False):
        if stop is not None and stop.is_set():
            return None
        chunk = raw
        if inflater is not None:
            chunk = inflater.decompress(raw, max_bytes - size + 1)
            if inflater.unconsumed_tail:
                size = max_bytes + 1
        size += len(chunk)
        if size > max_bytes:
            raise BodyTooLarge(f"the answer is over the {max_bytes:,} bytes accepted (reading stopped there)")
        chunks.append(chunk)
        if stream_to is not None:
            stream_to(chunk)
    if inflater is not None:
        tail = inflater.flush()
        if size + len(tail) > max_bytes:
            raise BodyTooLarge(f"the answer is over the {max_bytes:,} bytes accepted (reading stopped there)")
        chunks.append(tail)
    return b"".join(chunks)


def request_with_deadline(session: Any, method: str, url: str, *, deadline: float,
                          headers: Mapping[str, str] | None = None, json_body: Any = None,
                          params: Mapping[str, Any] | None = None, stream_to: Any = None,
                          max_bytes: int = DEFAULT_MAX_BYTES) -> RawResponse:
    """Send one request and read its whole answer within ``deadline`` seconds and ``max_bytes``.

    ``stream_to`` (optional) is called with each chunk of the body as it arrives (used for server-sent
    events); the body is still returned whole. Raises :class:`DeadlineExceeded`, :class:`BodyTooLarge`
    or :class:`TransportError`; any HTTP status is returned, not raised.
    """
    import requests  # noqa: PLC0415

    box: dict[str, Any] = {}
    sockets: list[Any] = []
    done = threading.Event()
    sent_headers = {"Accept-Encoding": "gzip, deflate", **dict(headers or {})}

    def work() -> None:
        _LOCAL.sockets = sockets
        try:
            with session.request(method, url, headers=sent_headers, json=json_body, params=params,
                                 timeout=(min(deadline, 30.0), deadline), stream=True) as response:
                body = read_body(response, max_bytes, stop=done, stream_to=stream_to)
                if body is None:
                    return
                box["response"] = RawResponse(response.status_code, dict(response.headers), body)
        except (BodyTooLarge, TransportError) as error:
            box["error"] = error
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
