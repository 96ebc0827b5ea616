"""The on-disk answer cache, which is also the cassette format the tests replay.

A cache file is JSON lines, one recorded answer a line::

    {"key": "9f2c…", "model": "qwen-1.5b", "text": "{\\"rewritten_query\\": …}", "prompt_tokens": 812,
     "completion_tokens": 41, "latency": 6.2, "json_mode": true, "finish_reason": "stop",
     "asked": "…the last 80 characters of the prompt…"}

The key is a SHA-256 of the model name, the messages and the parameters that change the answer
(temperature, max_tokens, JSON mode) — not the endpoint's address, so a cassette recorded against one
server replays anywhere. The prompt itself is not stored (it is long and the key already pins it);
``asked`` keeps its tail so that a person can tell the lines apart. A path ending in ``.gz`` is the same
lines gzip-compressed (a large recorded run checked in as a cassette: model answers are repetitive JSON
and shrink about fivefold); new answers are appended as another gzip member, which readers join.

Reading is bounded and forgiving only where damage is expected. The file is read in chunks (a
``.gz`` one decompressed as it is read, never whole), at most :data:`MAX_LINE_BYTES` a line and
:data:`MAX_CASSETTE_BYTES` in all, so a small gzip of newlines that inflates to gigabytes costs a
chunk of memory and stops at the cap. A damaged tail — a last line cut short by an interrupted write,
an interrupted gzip append — is skipped with a warning (``Cache.warnings``) and the good answers are
kept; the next answer written rewrites the file without it. A line in the middle that is not JSON, or a
field of the wrong type, is a :class:`CassetteError` naming the file, the line and the field.

Modes: ``readwrite`` (``--cache``: use what is there, add what is new), ``record`` (``--record``: the
same, into a cassette meant to be checked in), ``replay`` (``--replay``: never call; an answer that is
not recorded is an error, so a test can never reach the network by accident).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import math
import os
import tempfile
import threading
import zlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from .completion import Completion, token_count

MODES = ("readwrite", "record", "replay")
MAX_LINE_BYTES = 1024 * 1024  # one recorded answer is kilobytes
MAX_CASSETTE_BYTES = 64 * 1024 * 1024  # the largest checked-in cassette is about 1 MB uncompressed
READ_CHUNK = 1024 * 1024
_TEXT_FIELDS = ("model", "asked", "finish_reason", "refused", "refused_kind")
# The model's own unusable answers, recorded so that a replay fails the turn as the live run did (a cut
# answer is the same cut answer every time at temperature 0); never the transport's failures.
RECORDED_REFUSALS = ("length", "no_text")
_FLAG_FIELDS = ("json_mode", "usage_estimated")
logger = logging.getLogger(__name__)


class NotRecorded(LookupError):
    """Replay mode met a request that the cassette does not hold."""


class RecordedRefusal(Exception):
    """The cassette holds the model's unusable answer to this request (cut at max_tokens, no text): the
    client refused it when it was recorded and refuses it again, with the same message."""

    def __init__(self, message: str, kind: str, cut: Completion | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.cut = cut  # the recorded text of an answer cut at max_tokens (LLMError.cut)


class CassetteError(ValueError):
    """A cassette that cannot be read as recorded answers; the message names the file and the line."""


def cache_key(model: str, messages: Sequence[Mapping[str, str]], params: Mapping[str, Any]) -> str:
    """The identity of a request: model + messages + answer-changing parameters."""
    payload = {"model": model, "messages": [[m["role"], m["content"]] for m in messages],
               "params": {k: params[k] for k in sorted(params)}}
    text = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def recorded_entry(data: Any, where: str) -> dict[str, Any]:
    """One line's recorded answer, its fields checked; :class:`CassetteError` naming ``where`` if not."""
    if not isinstance(data, dict):
        raise CassetteError(f"{where}: not a recorded answer (a JSON object), got {type(data).__name__}")
    for name in ("key", "text"):
        if not isinstance(data.get(name), str) or (name == "key" and not data[name]):
            raise CassetteError(f"{where}: field {name!r} must be a string, got {_shown(data.get(name))}")
    for name in _TEXT_FIELDS:
        if data.get(name) is not None and not isinstance(data[name], str):
            raise CassetteError(f"{where}: field {name!r} must be a string, got {_shown(data[name])}")
    for name in ("prompt_tokens", "completion_tokens"):
        if data.get(name) is not None and token_count(data[name]) is None:
            raise CassetteError(f"{where}: field {name!r} must be a whole number from 0 to 10,000,000, "
                                f"got {_shown(data[name])}")
    latency = data.get("latency")
    if latency is not None and (isinstance(latency, bool) or not isinstance(latency, int | float)
                                or not math.isfinite(latency) or not 0 <= latency <= 86_400):
        raise CassetteError(f"{where}: field 'latency' must be seconds from 0 to 86400, got {_shown(latency)}")
    for name in _FLAG_FIELDS:
        if data.get(name) is not None and not isinstance(data[name], bool):
            raise CassetteError(f"{where}: field {name!r} must be true or false, got {_shown(data[name])}")
    return data


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return f"{type(value).__name__} {text[:40]}"


def _completion(entry: dict[str, Any]) -> Completion:
    """A recorded answer as the client returns it (``cached``)."""
    return Completion(text=entry["text"], prompt_tokens=entry.get("prompt_tokens") or 0,
                      completion_tokens=entry.get("completion_tokens") or 0,
                      latency=float(entry.get("latency") or 0.0), cached=True, attempts=0,
                      json_mode=bool(entry.get("json_mode")), usage_estimated=bool(entry.get("usage_estimated")),
                      finish_reason=entry.get("finish_reason") or "")


class Cache:
    """Recorded answers by key, loaded from and appended to one JSON-lines file."""

    def __init__(self, path: str | Path, mode: str = "readwrite") -> None:
        if mode not in MODES:
            raise ValueError(f"cache mode must be one of {MODES}, not {mode!r}")
        self.path = Path(path)
        self.mode = mode
        self.entries: dict[str, dict[str, Any]] = {}
        self.warnings: list[str] = []
        self.hits = 0
        self.misses = 0
        self._rewrite = False  # a damaged tail was skipped: the next write rewrites the file without it
        self._lock = threading.Lock()
        self._load()

    # ------------------------------------------------------------------ reading

    def _load(self) -> None:
        if not self.path.exists():
            if self.mode == "replay":
                raise FileNotFoundError(f"no cassette at {self.path}")
            return
        for number, line, whole in self._lines():
            if not line.strip():
                continue
            where = f"{self.path}:{number}"
            try:
                data = json.loads(line)
            except (ValueError, RecursionError):
                if whole:
                    raise CassetteError(f"{where}: not a JSON line") from None
                self._damaged(f"{where}: the last line is cut short (an interrupted write); skipped")
                continue
            entry = recorded_entry(data, where)
            self.entries[entry["key"]] = entry
        cut = sum((e.get("finish_reason") == "length" or not e["text"].strip()) and not e.get("refused")
                  for e in self.entries.values())
        if cut:
            self.warnings.append(f"{self.path}: {cut} of {len(self.entries)} answers were recorded cut at "
                                 "max_tokens or empty (before the client refused them); they replay as recorded")

    def _damaged(self, warning: str) -> None:
        self.warnings.append(warning)
        self._rewrite = True
        logger.warning("%s", warning)

    def _lines(self) -> Iterator[tuple[int, bytes, bool]]:
        """(line number, bytes, ended by a newline) of the file, read in bounded chunks."""
        number, pending, total = 0, b"", 0
        for chunk in self._chunks():
            total += len(chunk)
            if total > MAX_CASSETTE_BYTES:
                raise CassetteError(f"{self.path}: more than {MAX_CASSETTE_BYTES:,} bytes of answers "
                                    "(reading stopped there); split the cassette")
            if not pending and not chunk.strip():  # blank lines (a newline bomb) cost one count per chunk
                number += chunk.count(b"\n")
                continue
            parts = (pending + chunk).split(b"\n")
            pending = parts.pop()
            for part in parts:
                number += 1
                yield number, part, True
            if len(pending) > MAX_LINE_BYTES:
                raise CassetteError(f"{self.path}:{number + 1}: a line longer than {MAX_LINE_BYTES:,} bytes")
        if pending:
            yield number + 1, pending, False

    def _chunks(self) -> Iterator[bytes]:
        """The file's bytes, decompressed for ``.gz``; a damaged gzip tail ends them with a warning."""
        try:
            if self.path.suffix != ".gz":
                with self.path.open("rb") as handle:
                    while chunk := handle.read(READ_CHUNK):
                        yield chunk
                return
            read = 0
            with gzip.open(self.path, "rb") as handle:
                while True:
                    try:
                        chunk = handle.read1(READ_CHUNK)
                    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
                        if not read:
                            raise CassetteError(f"{self.path}: not a gzip file ({exc})") from None
                        self._damaged(f"{self.path}: the gzip data ends damaged after {read:,} bytes "
                                      f"(an interrupted append: {exc}); the answers before it are kept")
                        return
                    if not chunk:
                        return
                    read += len(chunk)
                    yield chunk
        except OSError as exc:
            raise CassetteError(f"{self.path}: cannot read ({exc})") from None

    def get(self, key: str) -> Completion | None:
        """The recorded answer for ``key``; None (readwrite/record) or :class:`NotRecorded` (replay)."""
        with self._lock:
            entry = self.entries.get(key)
            if entry is None:
                self.misses += 1
                if self.mode == "replay":
                    raise NotRecorded(f"request {key[:12]} is not in the cassette {self.path.name}")
                return None
            self.hits += 1
        if entry.get("refused"):
            kind = entry.get("refused_kind") or "length"
            cut = _completion(entry) if kind == "length" and entry["text"].strip() else None
            raise RecordedRefusal(f"{entry['refused']} (as recorded)", kind, cut)
        return _completion(entry)

    # ------------------------------------------------------------------ writing

    def put(self, key: str, completion: Completion, messages: Sequence[Mapping[str, str]], model: str = ""
            ) -> None:
        """Record an answer (appended at once, so an interrupted run keeps what it paid for)."""
        if self.mode == "replay":
            return
        last = str(messages[-1]["content"]) if messages else ""
        entry = {"key": key, "model": model, "text": completion.text,
                 "prompt_tokens": completion.prompt_tokens, "completion_tokens": completion.completion_tokens,
                 "latency": completion.latency, "json_mode": completion.json_mode,
                 "usage_estimated": completion.usage_estimated, "finish_reason": completion.finish_reason,
                 "asked": " ".join(last[-80:].split())}
        self._append(key, entry)

    def put_refusal(self, key: str, kind: str, message: str, messages: Sequence[Mapping[str, str]],
                    model: str = "", *, cut: Completion | None = None) -> None:
        """Record the model's unusable answer (``kind`` in :data:`RECORDED_REFUSALS`) as a refusal — only
        in ``record`` mode: a cassette must replay the run as it was, while a working cache (``--cache``)
        asks again next time (a larger max_tokens, another model)."""
        if kind not in RECORDED_REFUSALS or self.mode != "record":
            return
        last = str(messages[-1]["content"]) if messages else ""
        entry = {"key": key, "model": model, "text": "", "prompt_tokens": 0, "completion_tokens": 0, "latency": 0.0}
        if cut is not None:  # the cut text, which a Chatflow's LLM node passes on (completion.node_output)
            entry.update(text=cut.text, prompt_tokens=cut.prompt_tokens, completion_tokens=cut.completion_tokens,
                         latency=cut.latency, json_mode=cut.json_mode, usage_estimated=cut.usage_estimated,
                         finish_reason=cut.finish_reason)
        self._append(key, {**entry, "refused": message, "refused_kind": kind, "asked": " ".join(last[-80:].split())})

    def _append(self, key: str, entry: dict[str, Any]) -> None:
        if self.mode == "replay":
            return
        with self._lock:
            if key in self.entries:
                return
            self.entries[key] = entry
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self._rewrite:
                self._write_all()
                self._rewrite = False
                return
            line = json.dumps(entry, ensure_ascii=False) + "\n"
            if self.path.suffix == ".gz":
                with gzip.open(self.path, "at", encoding="utf-8") as handle:
                    handle.write(line)
            else:
                with self.path.open("a", encoding="utf-8") as handle:
                    handle.write(line)

    def _write_all(self) -> None:
        """Every entry, into a new file that replaces the damaged one in one step."""
        text = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in self.entries.values())
        data = text.encode("utf-8")
        if self.path.suffix == ".gz":
            data = gzip.compress(data)
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
