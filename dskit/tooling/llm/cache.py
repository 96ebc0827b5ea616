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

Modes: ``readwrite`` (``--cache``: use what is there, add what is new), ``record`` (``--record``: the
same, into a cassette meant to be checked in), ``replay`` (``--replay``: never call; an answer that is
not recorded is an error, so a test can never reach the network by accident).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .client import Completion

MODES = ("readwrite", "record", "replay")


class NotRecorded(LookupError):
    """Replay mode met a request that the cassette does not hold."""


def cache_key(model: str, messages: Sequence[Mapping[str, str]], params: Mapping[str, Any]) -> str:
    """The identity of a request: model + messages + answer-changing parameters."""
    payload = {"model": model, "messages": [[m["role"], m["content"]] for m in messages],
               "params": {k: params[k] for k in sorted(params)}}
    text = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Cache:
    """Recorded answers by key, loaded from and appended to one JSON-lines file."""

    def __init__(self, path: str | Path, mode: str = "readwrite") -> None:
        if mode not in MODES:
            raise ValueError(f"cache mode must be one of {MODES}, not {mode!r}")
        self.path = Path(path)
        self.mode = mode
        self.entries: dict[str, dict[str, Any]] = {}
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._load()

    def _load(self) -> None:
        if not self.path.exists():
            if self.mode == "replay":
                raise FileNotFoundError(f"no cassette at {self.path}")
            return
        for number, line in enumerate(self._text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                raise ValueError(f"{self.path}:{number}: not a JSON line") from None
            if isinstance(entry, dict) and isinstance(entry.get("key"), str) and isinstance(entry.get("text"), str):
                self.entries[entry["key"]] = entry

    def _text(self) -> str:
        if self.path.suffix == ".gz":
            try:
                return gzip.decompress(self.path.read_bytes()).decode("utf-8")
            except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
                raise ValueError(f"{self.path}: not a gzip file ({exc})") from None
        return self.path.read_text(encoding="utf-8")

    def get(self, key: str) -> Completion | None:
        """The recorded answer for ``key``; None (readwrite/record) or :class:`NotRecorded` (replay)."""
        from .client import Completion  # noqa: PLC0415

        with self._lock:
            entry = self.entries.get(key)
            if entry is None:
                self.misses += 1
                if self.mode == "replay":
                    raise NotRecorded(f"request {key[:12]} is not in the cassette {self.path.name}")
                return None
            self.hits += 1
        return Completion(text=entry["text"], prompt_tokens=int(entry.get("prompt_tokens") or 0),
                          completion_tokens=int(entry.get("completion_tokens") or 0),
                          latency=float(entry.get("latency") or 0.0), cached=True, attempts=0,
                          json_mode=bool(entry.get("json_mode")),
                          usage_estimated=bool(entry.get("usage_estimated")),
                          finish_reason=str(entry.get("finish_reason") or ""))

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
        with self._lock:
            if key in self.entries:
                return
            self.entries[key] = entry
            self.path.parent.mkdir(parents=True, exist_ok=True)
            line = json.dumps(entry, ensure_ascii=False) + "\n"
            if self.path.suffix == ".gz":
                with gzip.open(self.path, "at", encoding="utf-8") as handle:
                    handle.write(line)
            else:
                with self.path.open("a", encoding="utf-8") as handle:
                    handle.write(line)
