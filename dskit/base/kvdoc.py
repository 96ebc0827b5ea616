"""One JSON document per owner in a get/set/delete/exist store, safe with concurrent writers.

Why this exists: Dify gives a plugin one key-value store per workspace with get, set, delete and
exist — no listing, no transactions, no compare-and-set. Two tool calls for the same user can run
at once (parallel branches, an Agent calling tools in parallel, several plugin instances), and a
plain read-modify-write of a shared key then loses one of the writes. This module keeps each
owner's data as *versions* of one document and lets concurrent writers agree on who writes which
version, using nothing but those four operations.

Keys of one owner (``P`` the prefix, ``T`` a hash of the owner):

* ``P:T:d:N`` — the document of version N, written once, by the writer that won version N;
* ``P:T:x:N`` / ``P:T:y:N`` — the two markers by which writers compete for version N;
* ``P:T:h`` — a hint: the last version a writer knew to be current (it may lag; never trusted alone).

Version 0 is the empty document and has no keys.

**Winning a version** is Moir and Anderson's splitter (1995): set ``x:N`` to my random id; if
``y:N`` exists, I lost; set ``y:N``; I won if ``x:N`` still holds my id. With atomic per-key
operations at most one writer wins N. Sometimes nobody wins (N stays a *hole*); writers then move on
to N+1. ``y`` markers are kept (they are one byte each): a writer that was paused for a long time can
then never win an old version again.

**A write** (:meth:`KVDocument.update`): find the current document (version n) and the highest
claimed version (top); apply the change; win a version k above top (re-reading the versions between
n and k, one may have been written in the meantime, and applying the change to the newest); write
``d:k``; then look at ``x:k+1``. If nobody has touched version k+1 yet, every later writer will claim
k+1 or higher *after* this moment and read the versions below its claim after that, so it builds on
``d:k``: the write is **durable**. If someone has, it may have read below k and will not build on
``d:k``: the document is withdrawn (deleted) and the change is applied again on the newest document.
Every change carries a random id that the document keeps (the last 64), so a change that did reach
the newest document is not applied twice: it is written again unchanged until it is durable.

**Reading** (:meth:`KVDocument.read`): from the hint, walk forward over the ``y`` markers to the
highest claimed version, take the newest document present at or below it, then check that nothing
was claimed above it meanwhile (else read again). Every document present above the newest durable
one builds on it, so a reader never sees a state from before a finished write.

**Clean-up**: only after a durable write are older documents deleted (its base and any version it
skipped); a withdrawn document is deleted by its writer. So after a write, at most the current
document holds the owner's data (:meth:`KVDocument.erase_older` sweeps what a failed delete left).

Assumption: each storage operation on one key is atomic and a read returns the last completed
write. Dify's daemon holds loaded values in a cache for 5 minutes (internal/core/persistence/
persistence.go); a load that races a save or delete of the same key can keep an older value there,
which this design tolerates for documents (written once) and hints, but not for the ``x`` marker
compared by value — a race of three writers within that window could let two win one version.
"""

from __future__ import annotations

import copy
import json
import random
import secrets
import time
from collections.abc import Callable
from typing import Any, Protocol


class KVStore(Protocol):
    """What the store needs: Dify's ``session.storage`` (``get`` raises on a missing key)."""

    def get(self, key: str) -> bytes: ...

    def set(self, key: str, val: bytes) -> None: ...

    def delete(self, key: str) -> None: ...

    def exist(self, key: str) -> bool: ...


class KVDocError(Exception):
    """The document could not be read or written; ``kind`` is storage, busy or corrupt."""

    def __init__(self, kind: str, detail: str = "") -> None:
        self.kind = kind
        self.detail = detail
        super().__init__(f"{kind}: {detail}" if detail else kind)


KVDOC_RESERVED = ("n", "ids", "old")  # keys of a document that belong to this module
_IDS_KEPT = 64
_X_KEPT = 64
_WAITS = 3  # times a writer waits for another one's claimed version, per update


def kvdoc_pause(attempt: int, unit: float = 0.002) -> None:
    """Randomised exponential back-off between attempts, so competing writers spread out.

    ``unit`` is about one storage round trip (measured by :class:`KVDocument`), so writers wait
    in proportion to how slow the storage is, not by a fixed clock.
    """
    time.sleep(random.uniform(0, min(0.5, unit * 2 ** min(attempt, 8))))


def _dumps(data: object) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8")


class KVDocument:
    """The versioned document of one owner (``tag``: a key-safe hash) under ``prefix``."""

    def __init__(
        self,
        kv: KVStore,
        prefix: str,
        tag: str,
        *,
        attempts: int = 40,
        pause: Callable[[int], None] | None = None,
    ) -> None:
        self.kv = kv
        self.base = f"{prefix}:{tag}"
        self.attempts = attempts
        self.pause = pause or self._backoff
        self.requests = 0  # storage requests made (tests and benchmarks count them)
        self.durable = 0  # the version this object last wrote durably
        self._spent = 0.0  # seconds spent in storage requests

    def _backoff(self, attempt: int) -> None:
        unit = self._spent / self.requests if self.requests else 0.002
        kvdoc_pause(attempt, max(0.0005, 4 * unit))

    # ---- keys

    def doc_key(self, version: int) -> str:
        return f"{self.base}:d:{version}"

    def x_key(self, version: int) -> str:
        return f"{self.base}:x:{version}"

    def y_key(self, version: int) -> str:
        return f"{self.base}:y:{version}"

    def head_key(self) -> str:
        return f"{self.base}:h"

    # ---- storage primitives (every failure becomes KVDocError("storage"))

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        self.requests += 1
        started = time.monotonic()
        try:
            return fn(*args)
        except Exception as exc:  # a remote call: anything can happen
            raise KVDocError("storage", " ".join(str(exc).split())[:160] or type(exc).__name__) from None
        finally:
            self._spent += time.monotonic() - started

    def _exists(self, key: str) -> bool:
        return bool(self._call(self.kv.exist, key))

    def _get(self, key: str) -> bytes | None:
        """The value, or None when the key does not exist (a failed get is told apart by exist).

        A get that fails on a key that exists right after was usually racing the write that
        created it: it is tried again before it counts as a storage failure.
        """
        for _ in range(3):
            try:
                return bytes(self._call(self.kv.get, key))
            except KVDocError as exc:
                if not self._exists(key):
                    return None
                error = exc
        raise error

    def _delete(self, key: str) -> bool:
        """Delete ``key``; True when it is gone afterwards (missing already counts as gone)."""
        try:
            self._call(self.kv.delete, key)
            return True
        except KVDocError:
            try:
                return not self._exists(key)
            except KVDocError:
                return False

    def _load(self, version: int, *, lenient: bool = False) -> dict | None:
        """Document ``version`` (None when absent); undecodable: KVDocError("corrupt") or, lenient, {}."""
        if version <= 0:
            return {"n": 0, "ids": [], "old": []}
        raw = self._get(self.doc_key(version))
        if raw is None:
            return None
        try:
            doc = json.loads(raw.decode("utf-8"))
            if not isinstance(doc, dict) or doc.get("n") != version or not isinstance(doc.get("ids"), list):
                raise ValueError("not a document")
        except (ValueError, UnicodeDecodeError, RecursionError):
            if lenient:
                return {"n": version, "ids": [], "old": []}
            raise KVDocError("corrupt", f"version {version}") from None
        return doc

    def _head(self) -> tuple[int, list[int]]:
        """The hinted version and the versions a previous writer failed to delete."""
        raw = self._get(self.head_key())
        try:
            hint = json.loads(raw.decode("utf-8")) if raw is not None else {}
            version = int(hint.get("v", 0))
            failed = [int(v) for v in hint.get("failed", []) if int(v) > 0][:32]
            return max(0, version), failed
        except (ValueError, TypeError, AttributeError, UnicodeDecodeError, RecursionError):
            return 0, []  # a broken hint costs a longer walk, nothing else

    # ---- reading

    def _find(self, *, lenient: bool = False) -> tuple[int, dict, int, list[int]]:
        """(version, document, highest claimed version, head's failed deletes) of the current state."""
        for attempt in range(self.attempts):
            if attempt:
                self.pause(attempt)
            hint, failed = self._head()
            if hint > 0:  # the common case: the hinted document, nothing claimed after it
                doc = self._load(hint, lenient=lenient)
                if doc is not None and not self._exists(self.y_key(hint + 1)):
                    return hint, doc, hint, failed
            top = hint
            while self._exists(self.y_key(top + 1)):
                top += 1
            found = None
            for version in range(top, hint - 1 if hint > 0 else -1, -1):
                doc = self._load(version, lenient=lenient)
                if doc is not None:
                    found = (version, doc)
                    break
            if found is None or self._exists(self.y_key(top + 1)) or self._head()[0] > found[0]:
                continue  # a write finished or was claimed above what we found: look again
            return found[0], found[1], top, failed
        raise KVDocError("busy", "the document kept changing while it was read")

    def read(self) -> tuple[int, dict]:
        """The current document (``{"n": 0, ...}`` when the owner has none)."""
        version, doc, _top, _failed = self._find()
        return version, doc

    # ---- writing

    def _claim(self, version: int, me: str) -> bool:
        """The splitter: True when this writer alone won ``version``."""
        self._call(self.kv.set, self.x_key(version), me.encode("ascii"))
        if self._exists(self.y_key(version)):
            return False
        self._call(self.kv.set, self.y_key(version), b"1")
        return self._get(self.x_key(version)) == me.encode("ascii")

    def update(
        self,
        change: Callable[[dict], tuple[dict | None, Any]],
        *,
        lenient: bool = False,
    ) -> tuple[Any, list[str]]:
        """Apply ``change`` once, durably; returns (its result, clean-up failures).

        ``change(document) -> (new document | None, result)`` gets a copy of the current document and
        may be called several times (each time on the newest document) until one write is durable;
        None means "nothing to write" and ends the update with that result. ``lenient`` reads an
        undecodable document as empty (to let a wipe recover). Raises KVDocError.
        """
        me = secrets.token_hex(8)
        result: Any = None
        waits = 0
        for attempt in range(self.attempts):
            if attempt:
                self.pause(attempt)
            version, doc, top, failed = self._find(lenient=lenient)
            while top > version and waits < _WAITS:
                # A version above the newest document is claimed: its winner is about to write
                # it (two requests away), and claiming above it now would make it withdraw. Give
                # it that long; it may also be a hole nobody won, so only briefly.
                waits += 1
                self.pause(1)
                version, doc, top, failed = self._find(lenient=lenient)
            planned = self._plan(doc, me, change)
            if planned[0] is None:
                return planned[1], []
            target = top + 1
            if not self._claim(target, me):
                continue
            base_version, base = version, doc
            for older in range(target - 1, version, -1):  # written while we were claiming?
                newer = self._load(older, lenient=lenient)
                if newer is not None:
                    base_version, base = older, newer
                    planned = self._plan(base, me, change)
                    break
            new, result_now = planned
            if new is None:
                return result_now, []  # the version stays a hole
            result = result_now if result_now is not None else result
            skipped = list(range(base_version + 1, target))
            new = dict(new, n=target, old=sorted({base_version, *skipped, *failed} - {0}))
            try:
                self._call(self.kv.set, self.doc_key(target), _dumps(new))
            except KVDocError:
                # The write may have happened although its answer was lost (a timeout): withdraw
                # it, so that "not written" stays true. The version becomes a hole.
                self._delete(self.doc_key(target))
                raise
            if self._exists(self.x_key(target + 1)):
                self._delete(self.doc_key(target))  # withdrawn: a later writer may not build on it
                continue
            self.durable = target
            return result, self._collect(target, new["old"])
        raise KVDocError("busy", "too many writers at once")

    def _plan(self, doc: dict, me: str, change: Callable[[dict], tuple[dict | None, Any]]) -> tuple[dict | None, Any]:
        """The document to write on top of ``doc``: unchanged if it already holds this change."""
        ids = [i for i in doc.get("ids", []) if isinstance(i, str)]
        if me in ids:
            return dict(doc), None
        new, result = change(copy.deepcopy(doc))
        if new is None:
            return None, result
        return dict(new, ids=(ids + [me])[-_IDS_KEPT:]), result

    def _collect(self, version: int, old: list[int]) -> list[str]:
        """After a durable write: delete older documents, an old marker, and move the hint."""
        failures = [str(v) for v in old if not self._delete(self.doc_key(v))]
        if version > _X_KEPT:
            self._delete(self.x_key(version - _X_KEPT))
        try:
            self._call(self.kv.set, self.head_key(),
                       _dumps({"v": version, "failed": [int(v) for v in failures]}))
        except KVDocError:
            pass  # only a hint: readers walk forward from an older one
        return failures

    def erase_older(self, window: int = 64) -> list[str]:
        """Delete documents older than the last durable one (up to ``window`` versions back).

        A forget must leave no copy of what it removed; a delete that failed during an earlier
        write would leave one, so forgetting sweeps. Only versions below a *durable* document are
        touched — this object's last write, else the hint, which only ever names durable ones — so
        the sweep never removes the document the current state depends on. Returns the versions
        it could not delete.
        """
        hint, failed = self._head()
        below = max(self.durable, hint)
        failures = []
        for old in sorted(set(range(max(1, below - window), below)) | {v for v in failed if v < below}):
            if self._exists(self.doc_key(old)) and not self._delete(self.doc_key(old)):
                failures.append(str(old))
        return failures
