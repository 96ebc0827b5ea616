"""Long-term memory per user over a tiny key-value store ("值得记住才记").

Why this shape: Dify gives a plugin one key-value store per (workspace, plugin) with get / set /
delete / exist and nothing else — no listing, no transactions, keys at most 256 characters and no
``..``, ``//`` or ``\\`` in them. So this module

* keeps each user's memory as one document (the facts, each with its history), stored through
  :mod:`dskit.base.kvdoc`, which lets concurrent calls for the same user write without losing each
  other's facts and leaves no copy behind that ``forget`` cannot reach;
* scopes every key by a *hash* of the user (a raw id never reaches a key, whatever it contains);
  ids are normalised first (NFKC, invisible characters out, spaces collapsed) so that one user has
  one bucket; an optional *space* splits one user's memory further and never reaches another user's;
* keeps facts typed (preference / profile / constraint), de-duplicates them, and lets a
  contradicting fact replace the old one while the old value stays in the fact's history;
* refuses what is not worth remembering (empty, filler, questions) and, above all, secrets
  (:mod:`dskit.context.sensitive`: passwords, codes, keys, card and ID numbers) — checked on everything that
  would be stored, together — and what would break the per-user item and byte limits, each with a
  message a person can act on;
* recalls the top k facts by BM25 over character bigrams, which works for Chinese without a
  word segmenter.

"Contradiction" is defined simply, so users can predict it: two facts contradict when they have
the same type and the same subject (compared after normalising case, width and spaces) but a
different text. Facts without a subject never contradict; they are only de-duplicated by text.
A fact given as ``"subject: text"`` (or ``主题：内容``) with a short subject has its subject taken
from the text.

Standard library only; storage-agnostic (anything with get/set/delete/exist of bytes works, e.g.
the plugin's ``session.storage`` or :class:`MemoryDictKV`). Public methods never raise.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
import unicodedata
from dataclasses import dataclass
from typing import Any, Callable

from ..rules.cues import FILLERS
from ..base.kvdoc import KVDocError, KVStore
from .memory_storage import (MEMORY_KEY_PREFIX, MEMORY_LEGACY_PREFIX, MEMORY_MAX_KEY_CHARS, MemoryDictKV,
                             MemoryStorage, memory_document, memory_key_problem, memory_user_id, memory_user_tag)
from ..base.messages import memory_msg, norm_lang
from .sensitive import sensitive_kind

MEMORY_TYPES = ("preference", "profile", "constraint")
MEMORY_FORMAT_VERSION = 2

_TYPE_ALIASES = {
    "preference": "preference", "pref": "preference", "偏好": "preference", "喜好": "preference",
    "profile": "profile", "资料": "profile", "画像": "profile", "档案": "profile", "个人信息": "profile",
    "constraint": "constraint", "约束": "constraint", "限制": "constraint", "禁忌": "constraint",
}

_SUBJECT_SPLIT_RE = re.compile(r"^\s*([^:：=]{1,20}?)\s*[:：=]\s*(.+)$", re.DOTALL)
_END_PUNCT = "。．.!！~～…,，;；、 "
_ERASE_WINDOW = 64
_BOOKKEEPING_BYTES = 256  # what kvdoc adds to a document (its version and clean-up list) at most


def _t(key: str, lang: str, **values: Any) -> str:
    """A memory text in ``lang`` (zh by default)."""
    return memory_msg(key, lang, **values)


@dataclass(frozen=True)
class MemoryLimits:
    """Per-user limits; ``max_bytes`` counts the user's whole stored document."""

    max_items: int = 200
    max_bytes: int = 64 * 1024
    max_text_chars: int = 500
    max_subject_chars: int = 64
    max_user_chars: int = 1024
    max_query_chars: int = 2000
    max_source_chars: int = 200
    max_history: int = 5
    max_k: int = 50


# ---------------------------------------------------------------- text


def _norm(text: str) -> str:
    """Comparison form: NFKC, lower case, single spaces, no trailing punctuation."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = " ".join(text.split())
    return text.strip(_END_PUNCT)


def _clean(text: str) -> str:
    """Display form: NFKC and single spaces, kept as the user wrote it otherwise."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def memory_tokens(text: str, unigrams: bool = False) -> list[str]:
    """Tokens for BM25: ASCII-ish words whole, CJK runs as character bigrams.

    Scripts written without spaces (Chinese, Japanese, Korean) become overlapping bigrams, so
    "靠窗座位" matches "座位" without a dictionary. A one-character run stays a unigram.
    Documents are indexed with ``unigrams=True`` too, so a one-character query ("猫") still
    finds "喜欢猫"; a longer query only uses bigrams, which keeps its matches precise.
    """
    text = unicodedata.normalize("NFKC", text or "").lower()
    tokens: list[str] = []
    word: list[str] = []
    run: list[str] = []

    def flush_word() -> None:
        if word:
            tokens.append("".join(word))
            word.clear()

    def flush_run() -> None:
        if len(run) == 1:
            tokens.append(run[0])
        elif run:
            tokens.extend(run[i] + run[i + 1] for i in range(len(run) - 1))
            if unigrams:
                tokens.extend(run)
        run.clear()

    for ch in text:
        if ch.isalnum() and ord(ch) < 0x2E80:
            flush_run()
            word.append(ch)
        elif ch.isalnum():
            flush_word()
            run.append(ch)
        else:
            flush_word()
            flush_run()
    flush_word()
    flush_run()
    return tokens


def memory_bm25(query: str, docs: list[str], *, k1: float = 1.2, b: float = 0.75) -> list[float]:
    """BM25 score of each document for ``query`` (0.0 where nothing matches)."""
    doc_tokens = [memory_tokens(d, unigrams=True) for d in docs]
    q_tokens = list(dict.fromkeys(memory_tokens(query)))
    n = len(docs)
    if not n or not q_tokens:
        return [0.0] * n
    avg_len = sum(len(t) for t in doc_tokens) / n or 1.0
    df = {q: sum(1 for t in doc_tokens if q in t) for q in q_tokens}
    scores: list[float] = []
    for tokens in doc_tokens:
        counts: dict[str, int] = {}
        for tok in tokens:
            counts[tok] = counts.get(tok, 0) + 1
        score = 0.0
        for q in q_tokens:
            tf = counts.get(q, 0)
            if not tf:
                continue
            idf = math.log(1 + (n - df[q] + 0.5) / (df[q] + 0.5))
            score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(tokens) / avg_len))
        scores.append(score)
    return scores


def memory_worthiness(text: str, lang: str = "zh", *also: str) -> str:
    """Why ``text`` is not worth keeping ("" when it is): seed 001's "值得记住才记".

    Secrets first — anything :func:`dskit.context.sensitive.sensitive_kind` finds in ``text`` together with
    ``also`` (the subject and source that would be stored with it), with the kind said to the user —
    then: empty; fewer than two letters or characters; small talk / acknowledgements; a question.
    Emotion and opinions are the caller's call.
    """
    kind = sensitive_kind(text, *also)
    if kind:
        return _t(f"r_secret_{kind}", lang)
    norm = _norm(text)
    if not norm:
        return _t("r_empty", lang)
    if sum(1 for ch in norm if ch.isalnum()) < 2:
        return _t("r_short", lang)
    if norm.strip("!！?？ ") in FILLERS:
        return _t("r_filler", lang)
    if norm.rstrip().endswith(("?", "？", "吗", "么")):
        return _t("r_question", lang)
    return ""


def memory_type(value: object) -> str:
    """The canonical type for ``value`` ("" when unknown); empty means preference."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return "preference"
    if not isinstance(value, str):
        return ""
    return _TYPE_ALIASES.get(value.strip().lower(), "")


def _fact_id(kind: str, subject: str, text: str) -> str:
    """Same type + subject -> same id (so a new value replaces); no subject -> id of the text."""
    basis = f"s\x00{kind}\x00{_norm(subject)}" if subject else f"t\x00{kind}\x00{_norm(text)}"
    return hashlib.sha256(basis.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _split_subject(text: str, limits: MemoryLimits) -> tuple[str, str]:
    """``"座位：靠窗"`` -> (``座位``, ``靠窗``); text without a short prefix -> ("", text)."""
    m = _SUBJECT_SPLIT_RE.match(text)
    if not m or not m.group(2).strip():
        return "", text
    subject = m.group(1).strip()
    if not subject or len(subject) > min(20, limits.max_subject_chars) or "http" in subject.lower():
        return "", text
    return subject, m.group(2).strip()


def _dumps(data: object) -> bytes:
    """Compact UTF-8 JSON (Chinese stays readable and small); the form the document is stored in."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8")


def _storage_text(detail: str, lang: str) -> str:
    """A storage failure as a user-facing sentence, without a stack trace."""
    if "max storage size" in detail or "allocated size" in detail:
        return _t("storage_full", lang)
    return _t("storage_error", lang, detail=detail)


def _items(doc: dict) -> list[dict]:
    """The fact records of a document (anything malformed is dropped, never raised on)."""
    items = doc.get("items")
    if not isinstance(items, list):
        return []
    return [i for i in items if isinstance(i, dict) and isinstance(i.get("id"), str)]


def _public_fact(record: dict | None) -> dict | None:
    if not record:
        return None
    return {k: record.get(k) for k in ("id", "type", "subject", "text", "created", "updated", "seen", "source", "history")}


# ---------------------------------------------------------------- the store


# ---------------------------------------------------------------- checks and results


def _check_user(user: object, limits: MemoryLimits, lang: str) -> tuple[str, dict | None]:
    if not isinstance(user, str):
        return "", _bad("user", _t("p_not_text", lang), lang)
    if len(user) > limits.max_user_chars:
        return "", _bad(
            "user", _t("p_too_long", lang, n=len(user), limit=limits.max_user_chars), lang
        )
    user = memory_user_id(user)
    if not user:
        return "", _bad("user", _t("p_empty", lang), lang)
    return user, None

def _check_text(param: str, value: object, limit: int, lang: str, *, required: bool) -> tuple[str, dict | None]:
    if value is None:
        value = ""
    if not isinstance(value, str):
        return "", _bad(param, _t("p_not_text", lang), lang)
    if len(value) > limit:
        return "", _bad(param, _t("p_too_long", lang, n=len(value), limit=limit), lang)
    if required and not value.strip():
        return "", _bad(param, _t("p_empty", lang), lang)
    return value, None

def _check_space(space: object, limits: MemoryLimits, lang: str) -> tuple[str, dict | None]:
    space, bad = _check_text("space", space, limits.max_user_chars, lang, required=False)
    return memory_user_id(space), bad

def _bad(param: str, problem: str, lang: str) -> dict:
    return {"ok": False, "error": "bad_param", "param": param,
            "message": _t("bad_param", lang, param=param, problem=problem)}

def _fail(error: str, message: str) -> dict:
    return {"ok": False, "error": error, "message": message}

def _failure(exc: BaseException, lang: str) -> dict:
    """Any failure of a public method as its result dict (never a stack trace)."""
    if isinstance(exc, KVDocError):
        if exc.kind == "corrupt":
            return _fail("corrupt", _t("corrupt", lang))
        if exc.kind == "busy":
            return _fail("busy", _t("busy", lang))
        return _fail("storage", _storage_text(exc.detail, lang))
    return _fail("internal", _t("storage_error", lang, detail=memory_exc_name(exc)))


def _with_fact(doc: dict, kind: str, subject: str, text: str, source: str, now: float, lim: MemoryLimits,
               lang: str) -> tuple[dict | None, dict]:
    """The document with the fact added, replaced or seen again (None when a limit refuses it)."""
    items = _items(doc)
    fact_id = _fact_id(kind, subject, text)
    norm_text = _norm(text)
    norm_subject = _norm(subject)

    # De-duplication: same id with the same text, or the same text under the same type.
    same = next((i for i in items if i["id"] == fact_id), None)
    twin = same if same and _norm(same.get("text", "")) == norm_text else next(
        (i for i in items if i.get("type") == kind and _norm(i.get("text", "")) == norm_text
         and (not norm_subject or not i.get("subject") or _norm(i["subject"]) == norm_subject)),
        None,
    )
    old = None
    if twin is not None:
        record = dict(twin, seen=int(twin.get("seen", 1) or 1) + 1, updated=now)
        action = "duplicate"
    else:
        old = same
        history = list(old.get("history", [])) if old else []
        if old:
            history.append({"text": old.get("text", ""), "created": old.get("created"), "replaced": now,
                            "source": old.get("source", "")})
            history = history[-lim.max_history:]
        record = {"id": fact_id, "type": kind, "subject": subject, "text": text, "created": now,
                  "updated": now, "seen": 1, "source": source, "history": history}
        action = "replaced" if old else "added"

    others = [i for i in items if i["id"] != record["id"]]
    new_items = others + [record]
    if len(new_items) > lim.max_items:
        return None, _fail("full", _t("full_items", lang, n=len(others), limit=lim.max_items)) | {
            "action": "error"}
    new_doc = dict(doc, v=MEMORY_FORMAT_VERSION, items=new_items)
    used_before = len(_dumps(doc)) if items else 0
    used_after = len(_dumps(new_doc)) + _BOOKKEEPING_BYTES
    if used_after > lim.max_bytes:
        return None, _fail("full", _t("full_bytes", lang, used=used_before,
                                               need=max(0, used_after - used_before), limit=lim.max_bytes)) | {
            "action": "error"}

    if action == "replaced":
        message = _t("replaced", lang, subject=record["subject"], old=old.get("text", "") if old else "",
                         text=text)
    else:
        shown = (record["subject"] + _t("subject_sep", lang) if record["subject"] else "") + record["text"]
        message = _t(action, lang, text=shown)
    return new_doc, {"ok": True, "action": action, "fact": _public_fact(record),
                     "replaced": _public_fact(old) if action == "replaced" else None,
                     "message": message}


class MemoryStore:
    """Typed long-term facts per user over a get/set/delete/exist store.

    Every public method returns a dict with ``ok`` and ``message`` (and ``error``, a short code,
    when ``ok`` is false) and never raises. Bad input and full limits leave storage untouched.
    ``space`` (every method) keeps a separate memory for the same user; it never reaches another
    user's. ``pause`` is the back-off between attempts when other calls write the same memory.
    """

    def __init__(
        self,
        kv: KVStore,
        *,
        limits: MemoryLimits | None = None,
        clock: Callable[[], float] | None = None,
        pause: Callable[[int], None] | None = None,
    ) -> None:
        self.kv = kv
        self.limits = limits or MemoryLimits()
        self.clock = clock or time.time
        self.pause = pause
        self.storage = MemoryStorage(kv, pause)

    # ---- remember

    def remember(
        self,
        user: str,
        text: str,
        *,
        type: str | None = "preference",  # noqa: A002 - the parameter users see is "type"
        subject: str | None = "",
        source: str | None = "",
        space: str | None = "",
        lang: str | None = "zh",
    ) -> dict:
        """Store one fact for ``user``: added, duplicate, replaced (contradiction) or rejected.

        Returns ``{ok, action, fact, replaced, message}``; ``action`` is one of ``added``,
        ``duplicate``, ``replaced``, ``rejected`` (not worth keeping, or a secret: nothing is
        written and ``reason`` says why) or ``error``.
        """
        lang = norm_lang(lang)
        try:
            return self._remember(user, text, type, subject, source, space, lang)
        except Exception as exc:  # last line of defence: never a stack trace
            return _failure(exc, lang) | {"action": "error"}

    def check_fact(
        self,
        user: Any,
        text: Any,
        *,
        type: Any = "preference",  # noqa: A002
        subject: Any = "",
        source: Any = "",
        space: Any = "",
        lang: str | None = "zh",
    ) -> dict | None:
        """The bad-parameter result :meth:`remember` would return, or None when the input is fine.

        Lets a caller validate a whole batch before writing any of it. Never raises.
        """
        try:
            checked = self._validate(user, text, type, subject, source, space, norm_lang(lang))
        except Exception as exc:
            return _failure(exc, norm_lang(lang))
        return checked if isinstance(checked, dict) else None

    def _validate(self, user: Any, text: Any, kind_in: Any, subject_in: Any, source_in: Any, space_in: Any,
                  lang: str) -> dict | tuple[str, str, str, str, str, str]:
        """(user, text, type, subject, source, space) when valid, else the bad-parameter result."""
        lim = self.limits
        user, bad = _check_user(user, self.limits, lang)
        if bad:
            return bad | {"action": "error"}
        space, bad = _check_space(space_in, self.limits, lang)
        if bad:
            return bad | {"action": "error"}
        text, bad = _check_text("text", text, lim.max_text_chars, lang, required=True)
        if bad:
            return bad | {"action": "error"}
        subject, bad = _check_text("subject", subject_in, lim.max_subject_chars, lang, required=False)
        if bad:
            return bad | {"action": "error"}
        source, bad = _check_text("source", source_in, lim.max_source_chars, lang, required=False)
        if bad:
            return bad | {"action": "error"}
        kind = memory_type(kind_in)
        if not kind:
            return _bad("type", _t("p_type", lang), lang) | {"action": "error"}
        return user, text, kind, subject, source, space

    def _remember(self, user: Any, text: Any, kind_in: Any, subject_in: Any, source_in: Any, space_in: Any,
                  lang: str) -> dict:
        checked = self._validate(user, text, kind_in, subject_in, source_in, space_in, lang)
        if isinstance(checked, dict):
            return checked
        user, raw_text, kind, raw_subject, source, space = checked

        # Secrets are looked for in everything that would be stored, before any splitting.
        text = _clean(raw_text)
        subject = _clean(raw_subject)
        if not subject:
            subject, text = _split_subject(text, self.limits)
        stored_together = f"{raw_subject}：{raw_text}" if raw_subject.strip() else ""
        reason = memory_worthiness(raw_text, lang, stored_together, source) or memory_worthiness(text, lang)
        if reason:
            return {"ok": True, "action": "rejected", "fact": None, "replaced": None, "reason": reason,
                    "message": _t("rejected", lang, reason=reason)}

        now = round(float(self.clock()), 3)
        result, _failures, _document = self.storage.update(
            user, space, lambda doc: _with_fact(doc, kind, subject, text, source, now, self.limits, lang))
        return result

    # ---- recall

    def recall(
        self,
        user: str,
        query: str | None = "",
        *,
        k: int | None = 5,
        type: str | None = None,  # noqa: A002
        space: str | None = "",
        lang: str | None = "zh",
    ) -> dict:
        """The ``k`` facts of ``user`` most related to ``query`` (BM25 over bigrams).

        An empty query returns the ``k`` most recently updated facts. Returns
        ``{ok, items: [{id, type, subject, text, updated, score}], text, message}`` where ``text``
        is the items as lines ready for a prompt's memory zone.
        """
        lang = norm_lang(lang)
        try:
            return self._recall(user, query, k, type, space, lang)
        except Exception as exc:
            return _failure(exc, lang) | {"items": [], "text": ""}

    def _recall(self, user: Any, query: Any, k: Any, kind_in: Any, space_in: Any, lang: str) -> dict:
        lim = self.limits
        empty = {"items": [], "text": ""}
        user, bad = _check_user(user, self.limits, lang)
        if bad:
            return bad | empty
        space, bad = _check_space(space_in, self.limits, lang)
        if bad:
            return bad | empty
        query, bad = _check_text("query", query, lim.max_query_chars, lang, required=False)
        if bad:
            return bad | empty
        if k is None or k == "":
            k = 5
        try:
            k_int = int(k) if not isinstance(k, bool) and float(k) == int(float(k)) else -1
        except (TypeError, ValueError, OverflowError):
            k_int = -1
        if not 1 <= k_int <= lim.max_k:
            return _bad("k", _t("p_k", lang, limit=lim.max_k), lang) | empty
        kind = ""
        if kind_in not in (None, "", "all", "any"):
            kind = memory_type(kind_in)
            if not kind:
                return _bad("type", _t("p_type", lang), lang) | empty

        _document, doc = self.storage.read(user, space)
        items = [i for i in _items(doc) if not kind or i.get("type") == kind]
        if query.strip():
            scores = memory_bm25(query, [f"{i.get('subject', '')} {i.get('text', '')}" for i in items])
            ranked = sorted(
                ((s, i) for s, i in zip(scores, items) if s > 0),
                key=lambda p: (-p[0], -float(p[1].get("updated") or 0)),
            )
        else:
            ranked = sorted(((0.0, i) for i in items), key=lambda p: -float(p[1].get("updated") or 0))
        found = [
            {"id": i["id"], "type": i.get("type"), "subject": i.get("subject", ""), "text": i.get("text", ""),
             "updated": i.get("updated"), "score": round(s, 4)}
            for s, i in ranked[:k_int]
        ]
        lines = [memory_line(f, lang) for f in found]
        message = _t("recalled", lang, n=len(found)) if found else _t("recalled_none", lang)
        return {"ok": True, "items": found, "text": "\n".join(lines), "message": message}

    # ---- forget

    def forget(
        self,
        user: str,
        *,
        fact_id: str | None = "",
        subject: str | None = "",
        type: str | None = None,  # noqa: A002
        all: bool = False,  # noqa: A002
        space: str | None = "",
        lang: str | None = "zh",
    ) -> dict:
        """Delete facts of ``user``: one by id, those with a subject (optionally of one type), or all.

        The facts leave the current document first (so ``recall`` never returns them again), then
        every older stored copy is erased. Returns ``{ok, deleted: [ids], message}``; when an old
        copy could not be erased, ``ok`` is false, ``error`` is ``erase_incomplete`` and ``deleted``
        still lists what memory no longer holds — calling ``forget`` again retries the erasing.
        """
        lang = norm_lang(lang)
        try:
            return self._forget(user, fact_id, subject, type, all, space, lang)
        except Exception as exc:
            return _failure(exc, lang) | {"deleted": []}

    def _forget(self, user: Any, fact_id: Any, subject: Any, kind_in: Any, wipe: Any, space_in: Any,
                lang: str) -> dict:
        lim = self.limits
        user, bad = _check_user(user, self.limits, lang)
        if bad:
            return bad | {"deleted": []}
        space, bad = _check_space(space_in, self.limits, lang)
        if bad:
            return bad | {"deleted": []}
        fact_id, bad = _check_text("fact_id", fact_id, 64, lang, required=False)
        if bad:
            return bad | {"deleted": []}
        subject, bad = _check_text("subject", subject, lim.max_subject_chars, lang, required=False)
        if bad:
            return bad | {"deleted": []}
        kind = ""
        if kind_in not in (None, "", "all", "any"):
            kind = memory_type(kind_in)
            if not kind:
                return _bad("type", _t("p_type", lang), lang) | {"deleted": []}
        wipe = wipe is True or (isinstance(wipe, str) and wipe.strip().lower() in ("true", "1", "yes"))
        if not wipe and not fact_id.strip() and not subject.strip():
            return _bad("fact_id", _t("p_forget_target", lang), lang) | {"deleted": []}

        norm_subject = _norm(subject)

        def doomed_of(items: list[dict]) -> list[dict]:
            if wipe:
                return list(items)
            if fact_id.strip():
                return [i for i in items if i["id"] == fact_id.strip()]
            return [i for i in items if _norm(i.get("subject", "")) == norm_subject
                    and (not kind or i.get("type") == kind)]

        def change(doc: dict) -> tuple[dict | None, list[str]]:
            items = _items(doc)
            doomed = {i["id"] for i in doomed_of(items)}
            if not doomed and not wipe:
                return None, []
            kept = [i for i in items if i["id"] not in doomed]
            return dict(doc, v=MEMORY_FORMAT_VERSION, items=kept), sorted(doomed)

        deleted, failures, document = self.storage.update(user, space, change, lenient=wipe)
        deleted = deleted or []
        # The write deleted the copies it replaced; sweep once more for any a failed delete (now or
        # earlier) left behind, and report only what is still there.
        failures = [f for f in failures if not f.isdigit()]
        failures += document.erase_older(_ERASE_WINDOW)
        if failures:
            detail = ", ".join(sorted(set(failures)))[:120]
            return {"ok": False, "error": "erase_incomplete", "deleted": deleted,
                    "message": _t("erase_failed", lang, n=len(deleted), detail=detail)}
        if not deleted:
            return {"ok": True, "deleted": [], "message": _t("forgot_none", lang)}
        return {"ok": True, "deleted": deleted, "message": _t("forgot", lang, n=len(deleted))}

    # ---- export and usage

    def facts(self, user: str, *, space: str | None = "", lang: str | None = "zh") -> dict:
        """Every fact of ``user`` with its history: for export and review."""
        lang = norm_lang(lang)
        try:
            user, bad = _check_user(user, self.limits, lang)
            if bad:
                return bad | {"items": []}
            space, bad = _check_space(space, self.limits, lang)
            if bad:
                return bad | {"items": []}
            _document, doc = self.storage.read(user, space)
            out = [_public_fact(i) for i in _items(doc)]
            return {"ok": True, "items": out, "message": _t("listed", lang, n=len(out))}
        except Exception as exc:
            return _failure(exc, lang) | {"items": []}

    def usage(self, user: str, *, space: str | None = "") -> dict:
        """``{items, bytes}`` the user occupies (the stored document); zeros when unreadable."""
        try:
            _document, doc = self.storage.read(memory_user_id(user), memory_user_id(space))
        except Exception:
            return {"items": 0, "bytes": 0}
        items = _items(doc)
        return {"items": len(items), "bytes": len(_dumps(doc)) if items else 0}


def memory_line(fact: dict, lang: str = "zh") -> str:
    """One fact as a prompt line: ``[偏好] 座位：靠窗``."""
    kind = str(fact.get("type"))
    label = _t(f"label_{kind}", lang) if kind in MEMORY_TYPES else kind
    subject = fact.get("subject") or ""
    sep = _t("subject_sep", lang)
    return f"[{label}] {subject}{sep if subject else ''}{fact.get('text', '')}"


def memory_exc_name(exc: BaseException) -> str:
    """An exception's class name only: details may hold data we must not echo."""
    return type(exc).__name__


__all__ = ["MemoryStore", "MemoryLimits", "MEMORY_TYPES", "MEMORY_FORMAT_VERSION", "memory_tokens", "memory_bm25",
           "memory_worthiness", "memory_type", "memory_line", "memory_exc_name",
           # the storage side (dskit.context.memory_storage), named here too for the tools and older imports
           "MemoryDictKV", "MemoryStorage", "memory_document", "memory_key_problem", "memory_user_id",
           "memory_user_tag", "MEMORY_KEY_PREFIX", "MEMORY_LEGACY_PREFIX", "MEMORY_MAX_KEY_CHARS"]
