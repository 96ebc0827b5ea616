"""A fake Dify plugin daemon: what answers the plugin's reverse calls (storage, LLM, summary).

The daemon (Go, with Dify's database and model providers behind it) cannot run here, so this is the
one stand-in for it, shared by the tests and by ``dskit eval --target flow --layout plugin``
(:mod:`.plugin_tools` runs the plugin's real tools in graphon's tool nodes against it).

It sits exactly where the real daemon sits for the SDK — behind
``BackwardsInvocation._backwards_invoke`` (:func:`install` replaces that method once; the daemon
answering a call is the one :func:`serving` names for the current thread, else the default set by
:meth:`FakeDaemon.patch`) — and answers with the dicts the daemon sends, so the
SDK's own code (hex encoding, chunk accumulation, ``data_type(**data)`` parsing, error events
raised as plain ``Exception``) runs unchanged. Its rules are the daemon's, read from
langgenius/dify-plugin-daemon (internal/core/persistence/persistence.go,
internal/core/io_tunnel/backwards_invocation/task.go):

* storage keys are checked after Go's ``path.Clean``: refused when they contain ``..``, ``//`` or
  ``\\``; a key longer than 256 characters is refused on ``set``;
* ``set`` fails with "allocated size is greater than max storage size" when the plugin's total
  would exceed ``resource.permission.storage.size``; overwriting counts only the difference;
* ``get`` and ``del`` of a missing key fail; ``exist`` answers a bool;
* every call needs its permission in the manifest (storage, model.llm; summary needs llm too);
* each storage request is one atomic step on the daemon's side (persistence.go serves it with one
  read or write of the object storage): a request either happens whole or not at all, and requests
  from several plugin threads or instances interleave only between requests.

The fake can also be slow and unreliable at that boundary, to measure what the plugin does then:
``latency`` (seconds, split between the way there and the way back, so concurrent callers
interleave as they would over the daemon's pipe), ``fail`` (``(op, key) ->`` False, True — the
daemon's error before the request is applied — or ``"after"`` — applied, but the answer is lost on
the way back, as with a timeout) and ``gate`` (called before every
request; tests use it to choose the interleaving step by step).

The model behind the LLM reverse call is either a script (``llm_replies``, for tests) or ``model``, a
callable that gets the request as the daemon receives it and the calling tool's name, and returns the
answer with its usage: the eval passes one that sends the request to the live model through
:mod:`dskit.tooling.llm`, as Dify would forward it to the model provider the tool's model-selector names.

This module imports nothing from ``dify_plugin`` at import time, so engine tests can use
:class:`FakeKV` alone.
"""

from __future__ import annotations

import binascii
import json
import contextvars
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class FakeDaemonError(Exception):
    """What the SDK raises when the daemon answers with an error event."""


def go_path_clean(p: str) -> str:
    """Go's ``path.Clean`` (the daemon cleans keys before checking them)."""
    if p == "":
        return "."
    rooted = p.startswith("/")
    parts: list[str] = []
    for seg in p.split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            elif not rooted:
                parts.append("..")
            continue
        parts.append(seg)
    out = "/".join(parts)
    if rooted:
        out = "/" + out
    return out or "."


def daemon_key_problem(key: str, op: str) -> str:
    """The daemon's error for ``key`` under ``op`` ("" when the daemon accepts it)."""
    if not isinstance(key, str) or key == "":
        return "Key: 'InvokeStorageRequest.Key' Error:Field validation for 'Key' failed on the 'required' tag"
    cleaned = go_path_clean(key)
    if ".." in cleaned or "//" in cleaned or "\\" in cleaned:
        return "invalid key: path traversal attempt detected"
    if op == "set" and len(key) > 256:
        return "key length must be less than 256 characters"
    return ""


class FakeStorage:
    """The daemon's persistence for one (tenant, plugin): a dict with the daemon's rules."""

    def __init__(
        self,
        max_bytes: int = 1024 * 1024,
        *,
        latency: float = 0.0,
        jitter: float = 0.5,
        seed: int = 0,
        fail: Callable[[str, str], bool | str] | None = None,
        gate: Callable[[str, str], None] | None = None,
    ) -> None:
        self.max_bytes = max_bytes
        self.data: dict[str, bytes] = {}
        self.log: list[tuple[str, str]] = []
        self.refused: list[tuple[str, str, str]] = []
        self.fail_next: deque[str] = deque()  # ops ("set", "get", ...) forced to fail once
        self.latency = latency
        self.jitter = jitter
        self.fail = fail
        self.gate = gate
        self._rng = random.Random(seed)
        self._lock = threading.RLock()

    def _travel(self) -> None:
        """Half the round trip of one request (jittered, so concurrent callers reorder)."""
        if self.latency > 0:
            with self._lock:
                factor = 1 + self.jitter * (2 * self._rng.random() - 1)
            time.sleep(self.latency / 2 * factor)

    @property
    def used(self) -> int:
        return sum(len(v) for v in self.data.values())

    def _refuse(self, op: str, key: str, reason: str) -> None:
        self.refused.append((op, key, reason))
        raise FakeDaemonError(reason)

    def handle(self, request: dict) -> dict:
        """Answer one storage request ``{opt, key, value?}`` like the daemon does.

        The request travels (``latency``), passes the ``gate``, is applied atomically, and the
        answer travels back; ``fail`` decides whether it fails before being applied or after.
        """
        self._travel()
        if self.gate is not None:
            self.gate(str(request.get("opt")), str(request.get("key")))
        verdict = self.fail(str(request.get("opt")), str(request.get("key"))) if self.fail else False
        with self._lock:
            if verdict is True:
                self._refuse(str(request.get("opt")), str(request.get("key")),
                             f"{request.get('opt')} data failed: injected failure")
            answer = self._apply(request)
        self._travel()
        if verdict == "after":
            raise FakeDaemonError(f"{request.get('opt')} data failed: injected timeout after the request was applied")
        return answer

    def _apply(self, request: dict) -> dict:
        op, key = request.get("opt"), request.get("key")
        self.log.append((str(op), str(key)))
        if op not in ("get", "set", "del", "exist"):
            self._refuse(str(op), str(key), "Key: 'InvokeStorageRequest.Opt' Error: storage_opt")
        problem = daemon_key_problem(key, op)
        if problem:
            self._refuse(op, key, problem if op != "set" else f"save data failed: {problem}")
        if self.fail_next and self.fail_next[0] == op:
            self.fail_next.popleft()
            self._refuse(op, key, f"{op} data failed: injected failure")
        if op == "get":
            if key not in self.data:
                self._refuse(op, key, "load data failed, please check if the key is correct or you have not set it")
            return {"data": self.data[key].hex()}
        if op == "set":
            try:
                value = binascii.unhexlify(request.get("value", ""))
            except (binascii.Error, ValueError) as exc:
                self._refuse(op, key, f"decode data failed: {exc}")
            diff = len(value) - len(self.data.get(key, b""))
            if self.used + diff > self.max_bytes:
                self._refuse(op, key, "save data failed: allocated size is greater than max storage size")
            self.data[key] = value
            return {"data": "ok"}
        if op == "del":
            if key not in self.data:
                self._refuse(op, key, "delete data failed: no such file or directory")
            del self.data[key]
            return {"data": "ok", "deleted_num": 1}
        return {"data": key in self.data, "exist_num": int(key in self.data)}


class FakeKV:
    """``get/set/delete/exist`` straight onto a :class:`FakeStorage` (no SDK), for engine tests."""

    def __init__(self, storage: FakeStorage | None = None) -> None:
        self.storage = storage or FakeStorage()

    def get(self, key: str) -> bytes:
        return binascii.unhexlify(self.storage.handle({"opt": "get", "key": key})["data"])

    def set(self, key: str, val: bytes) -> None:
        self.storage.handle({"opt": "set", "key": key, "value": binascii.hexlify(val).decode()})

    def delete(self, key: str) -> None:
        self.storage.handle({"opt": "del", "key": key})

    def exist(self, key: str) -> bool:
        return bool(self.storage.handle({"opt": "exist", "key": key})["data"])


LLMReply = str | Exception | Callable[[dict], str]


@dataclass(frozen=True)
class ModelAnswer:
    """What a ``model`` callable returns: the text and what the call cost (streamed back as LLMUsage)."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency: float = 0.0


Model = Callable[[dict, str], ModelAnswer]  # (request as the daemon receives it, calling tool) -> answer


def _usage(prompt_tokens: int, completion_tokens: int, latency: float = 0.5) -> dict:
    """An LLMUsage dict as the daemon streams it in the last chunk."""
    return {
        "prompt_tokens": prompt_tokens, "prompt_unit_price": "0.001", "prompt_price_unit": "0.001",
        "prompt_price": str(prompt_tokens * 0.000001),
        "completion_tokens": completion_tokens, "completion_unit_price": "0.002",
        "completion_price_unit": "0.001", "completion_price": str(completion_tokens * 0.000002),
        "total_tokens": prompt_tokens + completion_tokens,
        "total_price": str(prompt_tokens * 0.000001 + completion_tokens * 0.000002),
        "currency": "USD", "latency": latency,
    }


class FakeDaemon:
    """Storage + LLM + summary behind the SDK's reverse-call method.

    ``llm_replies`` are consumed one per LLM call: a string is the model's text, an exception is
    raised as the daemon's error, a callable gets the request and returns the text. With ``model``
    every LLM call goes to it instead (an exception it raises is the daemon's error).
    """

    def __init__(
        self,
        *,
        storage_size: int | None = None,
        manifest: str | Path | None = None,
        llm_replies: Iterable[LLMReply] = (),
        summary: Callable[[str, str], str] | None = None,
        model: Model | None = None,
        structured_refusal: str = "",
    ) -> None:
        permission = _manifest_permission(manifest) if manifest else {
            "storage": {"enabled": True, "size": storage_size or 1024 * 1024},
            "model": {"enabled": True, "llm": True},
        }
        self.permission = permission
        size = storage_size or int((permission.get("storage") or {}).get("size") or 1024 * 1024)
        self.storage = FakeStorage(size)
        self.llm_replies: deque[LLMReply] = deque(llm_replies)
        self.model = model
        self.llm_requests: list[dict] = []
        # llm_structured_output calls (their schema in ``structured_output_schema``); with ``structured_refusal``
        # the daemon answers them with that error, as a Dify without the endpoint or a parse failure does
        self.structured_requests: list[dict] = []
        self.structured_refusal = structured_refusal
        self.summary_fn = summary or (lambda text, instruction: "摘要：" + text[:60])
        self.summary_requests: list[dict] = []
        self.calls: list[str] = []

    # -- permissions

    def _allowed(self, kind: str) -> str:
        perm = self.permission or {}
        if kind == "storage":
            ok = bool((perm.get("storage") or {}).get("enabled"))
            return "" if ok else "permission denied, you need to enable storage access in plugin manifest"
        model = perm.get("model") or {}
        ok = bool(model.get("enabled")) and bool(model.get("llm"))
        return "" if ok else "permission denied, you need to enable llm access in plugin manifest"

    # -- the reverse call

    def invoke(self, type_value: str, data: dict, caller: str = "") -> Generator[dict, None, None]:
        """Yield the response dicts for one reverse call of tool ``caller`` (raising on an error event)."""
        self.calls.append(type_value)
        data = _over_the_wire(data)
        if type_value == "storage":
            denied = self._allowed("storage")
            if denied:
                raise FakeDaemonError(denied)
            yield self.storage.handle(data)
            return
        if type_value == "llm":
            denied = self._allowed("llm")
            if denied:
                raise FakeDaemonError(denied)
            yield from self._llm(data, caller)
            return
        if type_value == "llm_structured_output":  # Dify's invoke_llm_with_structured_output behind it
            denied = self._allowed("llm")
            if denied:
                raise FakeDaemonError(denied)
            if self.structured_refusal:
                raise FakeDaemonError(self.structured_refusal)
            self.structured_requests.append(data)
            yield from self._llm(dict(data), caller, structured=True)
            return
        if type_value == "system_summary":
            denied = self._allowed("llm")
            if denied:
                raise FakeDaemonError(denied)
            self.summary_requests.append(data)
            yield {"summary": self.summary_fn(data["text"], data["instruction"])}
            return
        raise FakeDaemonError(f"unsupported invoke type: {type_value}")

    def _answer(self, data: dict, caller: str) -> ModelAnswer:
        """The model's answer to one LLM request: ``model``'s, else the next scripted reply."""
        if self.model is not None:
            return self.model(data, caller)
        if not self.llm_replies:
            raise FakeDaemonError("invoke llm failed: no scripted reply left")
        reply = self.llm_replies.popleft()
        if isinstance(reply, Exception):
            raise reply
        text = reply(data) if callable(reply) else reply
        prompt_chars = sum(len(str(m.get("content") or "")) for m in data["prompt_messages"])
        return ModelAnswer(text, prompt_chars // 2 + 1, max(1, len(text) // 2), 0.5)

    def _llm(self, data: dict, caller: str, structured: bool = False) -> Generator[dict, None, None]:
        for key in ("provider", "model", "model_type", "mode", "prompt_messages", "stream"):
            if key not in data:
                raise FakeDaemonError(f"invalid llm request: missing {key}")
        self.llm_requests.append(data)
        answer = self._answer(data, caller)
        text = answer.text
        if structured:  # as Dify does: the text parsed, or the call fails (its OutputParserError)
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            if not isinstance(parsed, dict):
                raise FakeDaemonError(f"Failed to parse structured output: {text[:80]}")
        half = len(text) // 2
        pieces = [text[:half], text[half:]] if text else [""]
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            yield {
                "model": data["model"],
                "prompt_messages": [],
                "delta": {
                    "index": i,
                    "message": {"role": "assistant", "content": piece, "tool_calls": []},
                    "usage": _usage(answer.prompt_tokens, answer.completion_tokens, answer.latency) if last else None,
                    "finish_reason": "stop" if last else None,
                },
                **({"structured_output": parsed} if structured and last else {}),
            }

    def patch(self, monkeypatch: Any) -> "FakeDaemon":
        """Answer every reverse call of the SDK made outside :func:`serving` (undone with ``monkeypatch``)."""
        install()
        monkeypatch.setattr(_DEFAULT, "daemon", self)
        return self


class _Default:
    """The daemon answering calls made outside :func:`serving` (tests set it with ``patch``)."""

    daemon: FakeDaemon | None = None


_DEFAULT = _Default()
_SERVING: contextvars.ContextVar[tuple[FakeDaemon, str] | None] = contextvars.ContextVar("dskit_daemon", default=None)
_INSTALL_LOCK = threading.Lock()


@contextmanager
def serving(daemon: FakeDaemon, caller: str) -> Iterator[None]:
    """Reverse calls made in this thread meanwhile go to ``daemon``, on behalf of tool ``caller``.

    Per thread (a context variable), so conversations running in parallel each reach their own
    daemon, as each Dify tenant's plugin reaches its own storage.
    """
    install()
    token = _SERVING.set((daemon, caller))
    try:
        yield
    finally:
        _SERVING.reset(token)


def install() -> None:
    """Route the SDK's ``BackwardsInvocation._backwards_invoke`` to the serving daemon (once).

    A call with no daemon serving and no default goes to the SDK's own method (which needs a real
    daemon), so nothing else in the process changes.
    """
    from dify_plugin.core.runtime import BackwardsInvocation  # noqa: PLC0415

    with _INSTALL_LOCK:
        original = BackwardsInvocation._backwards_invoke  # noqa: SLF001
        if getattr(original, "_dskit_daemon", False):
            return

        def backwards_invoke(self_: Any, type: Any, data_type: type, data: dict):  # noqa: A002
            current = _SERVING.get()
            daemon, caller = current if current is not None else (_DEFAULT.daemon, "")
            if daemon is None:
                return original(self_, type, data_type, data)

            def gen():
                for answer in daemon.invoke(type.value, data, caller):
                    try:
                        yield data_type(**answer)
                    except Exception as exc:  # the SDK wraps parse failures the same way
                        raise Exception(f"Failed to parse response: {exc!s}") from exc
            return gen()

        backwards_invoke._dskit_daemon = True  # type: ignore[attr-defined]
        BackwardsInvocation._backwards_invoke = backwards_invoke  # noqa: SLF001


def _over_the_wire(data: dict) -> dict:
    """The request as the daemon receives it: JSON (enums become their values)."""
    import enum
    import json

    def default(value: Any) -> Any:
        if isinstance(value, enum.Enum):
            return value.value
        if hasattr(value, "model_dump"):
            return value.model_dump(mode="json")
        raise TypeError(f"not JSON serialisable: {type(value).__name__}")

    return json.loads(json.dumps(data, default=default))


def _manifest_permission(manifest: str | Path) -> dict:
    """``resource.permission`` of a manifest.yaml."""
    import yaml  # noqa: PLC0415

    data = yaml.safe_load(Path(manifest).read_text(encoding="utf-8"))
    return ((data or {}).get("resource") or {}).get("permission") or {}
