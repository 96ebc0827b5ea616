"""Where long-term memory is kept: one versioned document per (user, space) over Dify's key-value
storage, keys that never hold a personal identifier, and the 0.1.0 layout read once and erased.

:class:`MemoryStorage` is the storage side of :class:`dskit.context.memory.MemoryStore`: it reads and
updates a user's document durably (:mod:`dskit.base.kvdoc`, safe with concurrent writers) and knows the
keys. What a fact is, how it is checked and found, stays in :mod:`dskit.context.memory`.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Callable
from typing import Any

from ..base.kvdoc import KVDocument, KVStore

MEMORY_KEY_PREFIX = "dskit_mem_v2"
MEMORY_LEGACY_PREFIX = "dskit_mem_v1"  # 0.1.0: one index key and one key per fact
MEMORY_MAX_KEY_CHARS = 256
_UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


class MemoryDictKV:
    """An in-process key-value store with Dify's semantics, for tests and code nodes."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}

    def get(self, key: str) -> bytes:
        if key not in self.data:
            raise Exception("load data failed, please check if the key is correct or you have not set it")
        return self.data[key]

    def set(self, key: str, val: bytes) -> None:
        self.data[key] = bytes(val)

    def delete(self, key: str) -> None:
        if key not in self.data:
            raise Exception("delete data failed: not found")
        del self.data[key]

    def exist(self, key: str) -> bool:
        return key in self.data


# ---------------------------------------------------------------- users and keys


def memory_user_id(value: object) -> str:
    """The canonical form of a user id or space name ("" when there is none).

    NFKC (full-width letters become ASCII), invisible characters removed, any run of spaces made
    one space, ends trimmed; a UUID (Dify's ids) in lower case. So ``" ABC "``, ``"ＡＢＣ"`` and
    ``"A\\u200bBC"`` are one user — one bucket — while ``"abc"`` and ``"ABC"`` stay two (ids other
    than UUIDs may be case-sensitive).
    """
    if not isinstance(value, str):
        return ""
    text = "".join(" " if unicodedata.category(ch) in ("Zs", "Zl", "Zp", "Cc") else ch
                   for ch in unicodedata.normalize("NFKC", value)
                   if unicodedata.category(ch) != "Cf")
    text = " ".join(text.split())
    return text.lower() if _UUID_RE.fullmatch(text) else text


def memory_user_tag(user: str, space: str = "") -> str:
    """A fixed-length, key-safe tag for (user, space): neither ever appears in a key.

    Hashing (not escaping) also keeps the stored keys free of personal identifiers. The empty space
    hashes exactly as the user alone did in 0.1.0, so a user's existing data keeps its keys.
    """
    owner = memory_user_id(user)
    space = memory_user_id(space)
    if space:
        owner = f"{owner}\x00{space}"
    return hashlib.sha256(("dskit-user\x00" + owner).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def memory_document(kv: KVStore, user: str, space: str = "", **options: Any) -> KVDocument:
    """The versioned document that holds (user, space)'s memory."""
    return KVDocument(kv, MEMORY_KEY_PREFIX, memory_user_tag(user, space), **options)


def memory_key_problem(key: str) -> str:
    """Why Dify's daemon would refuse ``key`` ("" when it is fine); our keys must always pass."""
    if not key:
        return "empty key"
    if len(key) > MEMORY_MAX_KEY_CHARS:
        return "key longer than 256 characters"
    if ".." in key or "//" in key or "\\" in key:
        return "key contains '..', '//' or '\\'"
    return ""


def _legacy_index_key(tag: str) -> str:
    return f"{MEMORY_LEGACY_PREFIX}:{tag}:idx"


def _legacy_fact_key(tag: str, fact_id: str) -> str:
    if not re.fullmatch(r"[0-9a-f]{16}", fact_id or ""):
        fact_id = hashlib.sha256(str(fact_id).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{MEMORY_LEGACY_PREFIX}:{tag}:f:{fact_id}"



class MemoryStorage:
    """The documents of every (user, space) in one key-value store."""

    def __init__(self, kv: KVStore, pause: Callable[[int], None] | None = None) -> None:
        self.kv = kv
        self.pause = pause


    def document(self, user: str, space: str) -> KVDocument:
        options = {"pause": self.pause} if self.pause else {}
        return memory_document(self.kv, user, space, **options)

    def read(self, user: str, space: str) -> tuple[KVDocument, dict]:
        """The user's current document, with the facts of a 0.1.0 store when there is none yet."""
        document = self.document(user, space)
        version, doc = document.read()
        if version == 0:
            doc = dict(doc, items=self.legacy_items(memory_user_tag(user, space)))
        return document, doc

    def legacy_items(self, tag: str) -> list[dict]:
        """Facts kept by 0.1.0 (an index key and one key per fact), so an upgrade loses nothing."""
        try:
            if not self.kv.exist(_legacy_index_key(tag)):
                return []
            index = json.loads(bytes(self.kv.get(_legacy_index_key(tag))).decode("utf-8"))
            out = []
            for entry in index.get("items", []):
                record = {"id": entry["id"], "type": entry.get("type", "preference"),
                          "subject": entry.get("subject", ""), "text": entry.get("text", ""),
                          "created": entry.get("updated"), "updated": entry.get("updated"),
                          "seen": 1, "source": "", "history": []}
                key = _legacy_fact_key(tag, entry["id"])
                if self.kv.exist(key):
                    stored = json.loads(bytes(self.kv.get(key)).decode("utf-8"))
                    record.update({k: stored[k] for k in record if k in stored and k != "id"})
                out.append(record)
            return out
        except Exception:  # unreadable old data: start clean rather than fail every call
            return []

    def legacy_erase(self, tag: str) -> bool:
        """Delete 0.1.0's keys of this user once their facts are in the new document."""
        key = _legacy_index_key(tag)
        try:
            if not self.kv.exist(key):
                return True
            index = json.loads(bytes(self.kv.get(key)).decode("utf-8"))
            for entry in index.get("items", []):
                fact_key = _legacy_fact_key(tag, str(entry.get("id", "")))
                if self.kv.exist(fact_key):
                    self.kv.delete(fact_key)
            self.kv.delete(key)
            return True
        except Exception:
            return False

    def update(self, user: str, space: str, change: Callable[[dict], tuple[dict | None, Any]],
                *, lenient: bool = False) -> tuple[Any, list[str], KVDocument]:
        """Apply ``change`` to the user's document durably (see :meth:`KVDocument.update`)."""
        document = self.document(user, space)
        tag = memory_user_tag(user, space)
        legacy: list[bool] = []

        def with_legacy(doc: dict) -> tuple[dict | None, Any]:
            if doc.get("n") == 0:
                items = self.legacy_items(tag)
                legacy.append(bool(items))
                doc = dict(doc, items=items)
            return change(doc)

        result, failures = document.update(with_legacy, lenient=lenient)
        if (any(legacy) or lenient) and not self.legacy_erase(tag):
            failures = failures + ["0.1.0 keys"]
        return result, failures, document


__all__ = ["MemoryDictKV", "MemoryStorage", "memory_user_id", "memory_user_tag", "memory_document",
           "memory_key_problem", "MEMORY_KEY_PREFIX", "MEMORY_LEGACY_PREFIX", "MEMORY_MAX_KEY_CHARS"]
