"""Long-term memory per user over a tiny key-value store ("值得记住才记").

Why this shape: Dify gives a plugin one key-value store per (workspace, plugin) with get / set /
delete / exist and nothing else — no listing, no transactions, keys at most 256 characters and no
``..``, ``//`` or ``\\`` in them. So this module

* scopes every key by a *hash* of the user id (a raw id never reaches a key, whatever it contains);
* keeps one index key per user (the store cannot list), holding what recall needs, so a recall is a
  single read; each fact's full record (with its history) sits in its own key;
* keeps facts typed (preference / profile / constraint), de-duplicates them, and lets a
  contradicting fact replace the old one while the old value stays in the fact's history;
* refuses what is not worth remembering (empty, filler, questions, secrets) and what would
  break the per-user item and byte limits, with a message a person can act on;
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
from typing import Any, Callable, Protocol

from .messages import norm_lang

MEMORY_TYPES = ("preference", "profile", "constraint")
MEMORY_KEY_PREFIX = "dskit_mem_v1"
MEMORY_MAX_KEY_CHARS = 256
MEMORY_FORMAT_VERSION = 1

_MEM_TYPE_ALIASES = {
    "preference": "preference", "pref": "preference", "偏好": "preference", "喜好": "preference",
    "profile": "profile", "资料": "profile", "画像": "profile", "档案": "profile", "个人信息": "profile",
    "constraint": "constraint", "约束": "constraint", "限制": "constraint", "禁忌": "constraint",
}

_MEM_FILLERS = {
    "嗯", "嗯嗯", "哦", "哦哦", "噢", "啊", "好", "好的", "好吧", "行", "行吧", "可以", "收到", "知道了",
    "明白", "明白了", "了解", "谢谢", "谢谢你", "多谢", "感谢", "哈哈", "哈哈哈", "呵呵", "你好", "您好",
    "在吗", "再见", "拜拜", "是的", "对", "对的", "没问题", "ok", "okay", "k", "yes", "no", "yep",
    "thanks", "thank you", "thx", "hi", "hello", "bye", "sure", "fine", "cool", "lol", "hmm",
}
_MEM_SECRET_RE = re.compile(
    r"(密码|口令|验证码|支付密码|password|passwd|pass\s*word|api[\s_-]?key|secret|token|私钥|private\s*key|cvv)",
    re.IGNORECASE,
)
_MEM_LONG_DIGITS_RE = re.compile(r"\d[\d\s-]{14,}\d")
_MEM_SUBJECT_SPLIT_RE = re.compile(r"^\s*([^:：=]{1,20}?)\s*[:：=]\s*(.+)$", re.DOTALL)
_MEM_END_PUNCT = "。．.!！~～…,，;；、 "

_MEM_TEXTS = {
    "zh": {
        "added": "已记住：{text}",
        "duplicate": "这条已经记过了：{text}",
        "replaced": "已更新：{subject}从「{old}」改为「{text}」（旧值保留在历史里）",
        "rejected": "没有记住：{reason}",
        "recalled": "找到 {n} 条相关记忆",
        "recalled_none": "没有找到相关记忆",
        "forgot": "已删除 {n} 条记忆",
        "forgot_none": "没有找到要删除的记忆",
        "listed": "共 {n} 条记忆",
        "bad_param": "参数 {param} 有误：{problem}",
        "full_items": "长期记忆已满：该用户已有 {n} 条（上限 {limit} 条）。请先用 forget 删除不再需要的记忆。",
        "full_bytes": "长期记忆已满：该用户已用 {used} 字节，这条需要 {need} 字节，上限 {limit} 字节。请先用 forget 删除不再需要的记忆。",
        "storage_full": "插件存储空间已满（Dify 对插件存储的总量限制），这条记忆没有写入。请删除一些旧记忆。",
        "storage_error": "存储暂时不可用，记忆未改变：{detail}",
        "corrupt": "该用户的记忆索引已损坏，无法读取。可用 forget（all=true）清空后重新开始。",
        "r_empty": "内容为空",
        "r_short": "内容太短，不像一条值得长期记住的事实",
        "r_filler": "这是寒暄或附和，不值得长期记住",
        "r_question": "这是一个提问，不是关于用户的事实",
        "r_secret": "内容像是敏感信息（密码、密钥、验证码、证件或卡号），出于隐私不存入长期记忆",
        "p_type": "必须是 preference、profile 或 constraint 之一（也可写 偏好、资料、约束）",
        "p_too_long": "太长（{n} 个字符，上限 {limit}）",
        "p_empty": "不能为空",
        "p_k": "必须是 1 到 {limit} 之间的整数",
        "p_forget_target": "请给出 fact_id、subject 或 all=true 之一",
        "p_not_text": "必须是文本",
    },
    "en": {
        "added": "Remembered: {text}",
        "duplicate": "Already remembered: {text}",
        "replaced": "Updated {subject}: \"{old}\" -> \"{text}\" (the old value is kept in its history)",
        "rejected": "Not remembered: {reason}",
        "recalled": "Found {n} related memories",
        "recalled_none": "No related memories found",
        "forgot": "Deleted {n} memories",
        "forgot_none": "Nothing matched, nothing deleted",
        "listed": "{n} memories in total",
        "bad_param": "Parameter {param} is invalid: {problem}",
        "full_items": "Long-term memory is full: this user has {n} facts (limit {limit}). Use forget to delete facts that are no longer needed.",
        "full_bytes": "Long-term memory is full: this user uses {used} bytes, this fact needs {need} more, the limit is {limit} bytes. Use forget to delete facts that are no longer needed.",
        "storage_full": "The plugin's storage is full (Dify's cap on plugin storage); the fact was not written. Delete some old memories.",
        "storage_error": "Storage is unavailable right now; memory is unchanged: {detail}",
        "corrupt": "This user's memory index is damaged and cannot be read. Use forget with all=true to start afresh.",
        "r_empty": "the text is empty",
        "r_short": "the text is too short to be a fact worth keeping",
        "r_filler": "this is small talk or an acknowledgement, not worth keeping",
        "r_question": "this is a question, not a fact about the user",
        "r_secret": "this looks like sensitive data (password, key, code, ID or card number); it is not kept, for privacy",
        "p_type": "must be one of preference, profile or constraint",
        "p_too_long": "is too long ({n} characters, limit {limit})",
        "p_empty": "must not be empty",
        "p_k": "must be an integer from 1 to {limit}",
        "p_forget_target": "give one of fact_id, subject or all=true",
        "p_not_text": "must be text",
    },
}


def _mem_t(key: str, lang: str, **values: Any) -> str:
    """A memory text in ``lang`` (zh by default)."""
    return _MEM_TEXTS[norm_lang(lang)][key].format(**values)


class MemoryKV(Protocol):
    """The key-value protocol the store needs: Dify's ``session.storage`` satisfies it.

    ``get`` on a missing key raises (as Dify's does); values are bytes.
    """

    def get(self, key: str) -> bytes: ...

    def set(self, key: str, val: bytes) -> None: ...

    def delete(self, key: str) -> None: ...

    def exist(self, key: str) -> bool: ...


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


@dataclass(frozen=True)
class MemoryLimits:
    """Per-user limits; ``max_bytes`` counts the index plus every fact record of the user."""

    max_items: int = 200
    max_bytes: int = 64 * 1024
    max_text_chars: int = 500
    max_subject_chars: int = 64
    max_user_chars: int = 1024
    max_query_chars: int = 2000
    max_source_chars: int = 200
    max_history: int = 5
    max_k: int = 50


class _MemStorageError(Exception):
    """A storage call failed; carries the user-facing text."""


class _MemCorruptIndex(Exception):
    """The user's index could not be decoded."""


# ---------------------------------------------------------------- keys


def memory_user_tag(user: str) -> str:
    """A fixed-length, key-safe tag for a user id: the id itself never appears in a key.

    Hashing (not escaping) also keeps the stored keys free of personal identifiers.
    """
    return hashlib.sha256(("dskit-user\x00" + user).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def memory_index_key(user: str) -> str:
    """The key of a user's index."""
    return f"{MEMORY_KEY_PREFIX}:{memory_user_tag(user)}:idx"


def memory_fact_key(user: str, fact_id: str) -> str:
    """The key of one fact record; ``fact_id`` is re-hashed unless it is already a safe id."""
    if not re.fullmatch(r"[0-9a-f]{16}", fact_id or ""):
        fact_id = hashlib.sha256(str(fact_id).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{MEMORY_KEY_PREFIX}:{memory_user_tag(user)}:f:{fact_id}"


def memory_key_problem(key: str) -> str:
    """Why Dify's daemon would refuse ``key`` ("" when it is fine); our keys must always pass."""
    if not key:
        return "empty key"
    if len(key) > MEMORY_MAX_KEY_CHARS:
        return "key longer than 256 characters"
    if ".." in key or "//" in key or "\\" in key:
        return "key contains '..', '//' or '\\'"
    return ""


# ---------------------------------------------------------------- text


def _mem_norm(text: str) -> str:
    """Comparison form: NFKC, lower case, single spaces, no trailing punctuation."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = " ".join(text.split())
    return text.strip(_MEM_END_PUNCT)


def _mem_clean(text: str) -> str:
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


def memory_worthiness(text: str, lang: str = "zh") -> str:
    """Why ``text`` is not worth keeping ("" when it is): seed 001's "值得记住才记".

    Rules, in order: empty; fewer than two letters or characters; small talk / acknowledgements;
    a question; anything that looks like a secret (password, key, verification code) or a long
    number (ID or card numbers: 16 digits or more). Emotion and opinions are the caller's call.
    """
    norm = _mem_norm(text)
    if not norm:
        return _mem_t("r_empty", lang)
    if sum(1 for ch in norm if ch.isalnum()) < 2:
        return _mem_t("r_short", lang)
    if norm.strip("!！?？ ") in _MEM_FILLERS:
        return _mem_t("r_filler", lang)
    if norm.rstrip().endswith(("?", "？", "吗", "么")):
        return _mem_t("r_question", lang)
    if _MEM_SECRET_RE.search(norm) or _MEM_LONG_DIGITS_RE.search(norm):
        return _mem_t("r_secret", lang)
    return ""


def memory_type(value: object) -> str:
    """The canonical type for ``value`` ("" when unknown); empty means preference."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return "preference"
    if not isinstance(value, str):
        return ""
    return _MEM_TYPE_ALIASES.get(value.strip().lower(), "")


def _mem_fact_id(kind: str, subject: str, text: str) -> str:
    """Same type + subject -> same id (so a new value replaces); no subject -> id of the text."""
    basis = f"s\x00{kind}\x00{_mem_norm(subject)}" if subject else f"t\x00{kind}\x00{_mem_norm(text)}"
    return hashlib.sha256(basis.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _mem_split_subject(text: str, limits: MemoryLimits) -> tuple[str, str]:
    """``"座位：靠窗"`` -> (``座位``, ``靠窗``); text without a short prefix -> ("", text)."""
    m = _MEM_SUBJECT_SPLIT_RE.match(text)
    if not m or not m.group(2).strip():
        return "", text
    subject = m.group(1).strip()
    if not subject or len(subject) > min(20, limits.max_subject_chars) or "http" in subject.lower():
        return "", text
    return subject, m.group(2).strip()


def _mem_dumps(data: object) -> bytes:
    """Compact UTF-8 JSON (Chinese stays readable and small)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8")


def _mem_storage_text(exc: BaseException, lang: str) -> str:
    """A storage failure as a user-facing sentence, without a stack trace."""
    detail = " ".join(str(exc).split())[:160] or type(exc).__name__
    if "max storage size" in detail or "allocated size" in detail:
        return _mem_t("storage_full", lang)
    return _mem_t("storage_error", lang, detail=detail)


# ---------------------------------------------------------------- the store


class MemoryStore:
    """Typed long-term facts per user over a :class:`MemoryKV`.

    Every public method returns a dict with ``ok`` and ``message`` (and ``error``, a short code,
    when ``ok`` is false) and never raises. Bad input and full limits leave storage untouched.
    """

    def __init__(
        self,
        kv: MemoryKV,
        *,
        limits: MemoryLimits | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.kv = kv
        self.limits = limits or MemoryLimits()
        self.clock = clock or time.time

    # ---- storage helpers (raise _MemStorageError / _MemCorruptIndex)

    def _read_index(self, user: str, lang: str) -> dict:
        key = memory_index_key(user)
        try:
            if not self.kv.exist(key):
                return {"v": MEMORY_FORMAT_VERSION, "items": []}
            raw = self.kv.get(key)
        except Exception as exc:  # storage is a remote call: anything can happen
            raise _MemStorageError(_mem_storage_text(exc, lang)) from None
        try:
            data = json.loads(bytes(raw).decode("utf-8"))
            items = data["items"]
            if not isinstance(items, list) or not all(isinstance(i, dict) and "id" in i for i in items):
                raise ValueError("items")
        except Exception:
            raise _MemCorruptIndex() from None
        data["v"] = MEMORY_FORMAT_VERSION
        return data

    def _read_fact(self, user: str, fact_id: str, lang: str) -> dict | None:
        key = memory_fact_key(user, fact_id)
        try:
            if not self.kv.exist(key):
                return None
            raw = self.kv.get(key)
        except Exception as exc:
            raise _MemStorageError(_mem_storage_text(exc, lang)) from None
        try:
            fact = json.loads(bytes(raw).decode("utf-8"))
            return fact if isinstance(fact, dict) else None
        except Exception:
            return None

    def _write(self, key: str, data: bytes, lang: str) -> None:
        try:
            self.kv.set(key, data)
        except Exception as exc:
            raise _MemStorageError(_mem_storage_text(exc, lang)) from None

    def _delete(self, key: str) -> None:
        """Best effort: a missing key is already what we want."""
        try:
            self.kv.delete(key)
        except Exception:
            pass

    # ---- validation

    def _check_user(self, user: object, lang: str) -> tuple[str, dict | None]:
        if not isinstance(user, str):
            return "", self._bad("user", _mem_t("p_not_text", lang), lang)
        if not user.strip():
            return "", self._bad("user", _mem_t("p_empty", lang), lang)
        if len(user) > self.limits.max_user_chars:
            return "", self._bad(
                "user", _mem_t("p_too_long", lang, n=len(user), limit=self.limits.max_user_chars), lang
            )
        return user, None

    def _check_text(self, param: str, value: object, limit: int, lang: str, *, required: bool) -> tuple[str, dict | None]:
        if value is None:
            value = ""
        if not isinstance(value, str):
            return "", self._bad(param, _mem_t("p_not_text", lang), lang)
        if len(value) > limit:
            return "", self._bad(param, _mem_t("p_too_long", lang, n=len(value), limit=limit), lang)
        if required and not value.strip():
            return "", self._bad(param, _mem_t("p_empty", lang), lang)
        return value, None

    @staticmethod
    def _bad(param: str, problem: str, lang: str) -> dict:
        return {"ok": False, "error": "bad_param", "param": param,
                "message": _mem_t("bad_param", lang, param=param, problem=problem)}

    @staticmethod
    def _fail(error: str, message: str) -> dict:
        return {"ok": False, "error": error, "message": message}

    # ---- public API

    def remember(
        self,
        user: str,
        text: str,
        *,
        type: str | None = "preference",  # noqa: A002 - the parameter users see is "type"
        subject: str | None = "",
        source: str | None = "",
        lang: str | None = "zh",
    ) -> dict:
        """Store one fact for ``user``: added, duplicate, replaced (contradiction) or rejected.

        Returns ``{ok, action, fact, replaced, message}``; ``action`` is one of ``added``,
        ``duplicate``, ``replaced``, ``rejected`` (not worth keeping) or ``error``.
        """
        lang = norm_lang(lang)
        try:
            return self._remember(user, text, type, subject, source, lang)
        except _MemStorageError as exc:
            return self._fail("storage", str(exc)) | {"action": "error"}
        except _MemCorruptIndex:
            return self._fail("corrupt_index", _mem_t("corrupt", lang)) | {"action": "error"}
        except Exception as exc:  # last line of defence: never a stack trace
            return self._fail("internal", _mem_t("storage_error", lang, detail=memory_exc_name(exc))) | {"action": "error"}

    def check_fact(
        self,
        user: Any,
        text: Any,
        *,
        type: Any = "preference",  # noqa: A002
        subject: Any = "",
        source: Any = "",
        lang: str | None = "zh",
    ) -> dict | None:
        """The bad-parameter result :meth:`remember` would return, or None when the input is fine.

        Lets a caller validate a whole batch before writing any of it. Never raises.
        """
        try:
            checked = self._validate(user, text, type, subject, source, norm_lang(lang))
        except Exception as exc:
            return self._fail("internal", _mem_t("storage_error", norm_lang(lang), detail=memory_exc_name(exc)))
        return checked if isinstance(checked, dict) else None

    def _validate(self, user: Any, text: Any, kind_in: Any, subject_in: Any, source_in: Any,
                  lang: str) -> dict | tuple[str, str, str, str, str]:
        """(user, text, type, subject, source) when valid, else the bad-parameter result."""
        lim = self.limits
        user, bad = self._check_user(user, lang)
        if bad:
            return bad | {"action": "error"}
        text, bad = self._check_text("text", text, lim.max_text_chars, lang, required=True)
        if bad:
            return bad | {"action": "error"}
        subject, bad = self._check_text("subject", subject_in, lim.max_subject_chars, lang, required=False)
        if bad:
            return bad | {"action": "error"}
        source, bad = self._check_text("source", source_in, lim.max_source_chars, lang, required=False)
        if bad:
            return bad | {"action": "error"}
        kind = memory_type(kind_in)
        if not kind:
            return self._bad("type", _mem_t("p_type", lang), lang) | {"action": "error"}
        return user, text, kind, subject, source

    def _remember(self, user: Any, text: Any, kind_in: Any, subject_in: Any, source_in: Any, lang: str) -> dict:
        lim = self.limits
        checked = self._validate(user, text, kind_in, subject_in, source_in, lang)
        if isinstance(checked, dict):
            return checked
        user, text, kind, subject, source = checked

        text = _mem_clean(text)
        subject = _mem_clean(subject)
        if not subject:
            subject, text = _mem_split_subject(text, lim)
        reason = memory_worthiness(text, lang)
        if reason:
            return {"ok": True, "action": "rejected", "fact": None, "replaced": None, "reason": reason,
                    "message": _mem_t("rejected", lang, reason=reason)}

        index = self._read_index(user, lang)
        items: list[dict] = index["items"]
        now = round(float(self.clock()), 3)
        fact_id = _mem_fact_id(kind, subject, text)
        norm_text = _mem_norm(text)

        # De-duplication: same id with the same text, or the same text under the same type.
        same = next((i for i in items if i["id"] == fact_id), None)
        norm_subject = _mem_norm(subject)
        twin = same if same and _mem_norm(same.get("text", "")) == norm_text else next(
            (i for i in items if i.get("type") == kind and _mem_norm(i.get("text", "")) == norm_text
             and (not norm_subject or not i.get("subject") or _mem_norm(i["subject"]) == norm_subject)),
            None,
        )
        if twin is not None:
            record = self._read_fact(user, twin["id"], lang) or self._record_from_item(twin)
            record["seen"] = int(record.get("seen", 1)) + 1
            record["updated"] = now
            return self._commit(user, index, record, None, "duplicate", lang)

        old = self._read_fact(user, fact_id, lang) if same else None
        if same and old is None:
            old = self._record_from_item(same)
        history = list(old.get("history", [])) if old else []
        if old:
            history.append({"text": old.get("text", ""), "created": old.get("created"), "replaced": now,
                            "source": old.get("source", "")})
            history = history[-lim.max_history:]
        record = {
            "v": MEMORY_FORMAT_VERSION, "id": fact_id, "type": kind, "subject": subject, "text": text,
            "created": now, "updated": now, "seen": 1, "source": source, "history": history,
        }
        return self._commit(user, index, record, old, "replaced" if old else "added", lang)

    @staticmethod
    def _record_from_item(item: dict) -> dict:
        """Rebuild a record from its index entry when the fact key is missing (a past failure)."""
        return {"v": MEMORY_FORMAT_VERSION, "id": item["id"], "type": item.get("type", "preference"),
                "subject": item.get("subject", ""), "text": item.get("text", ""),
                "created": item.get("updated"), "updated": item.get("updated"), "seen": 1,
                "source": "", "history": []}

    def _commit(self, user: str, index: dict, record: dict, old: dict | None, action: str, lang: str) -> dict:
        """Check the limits, then write the fact and the index (rolling the fact back on failure)."""
        lim = self.limits
        items = [i for i in index["items"] if i["id"] != record["id"]]
        payload = _mem_dumps(record)
        entry = {"id": record["id"], "type": record["type"], "subject": record["subject"],
                 "text": record["text"], "updated": record["updated"], "size": len(payload)}
        new_items = items + [entry]
        if len(new_items) > lim.max_items:
            return self._fail("full", _mem_t("full_items", lang, n=len(items), limit=lim.max_items)) | {
                "action": "error"}
        new_index = {"v": MEMORY_FORMAT_VERSION, "items": new_items}
        index_bytes = _mem_dumps(new_index)
        used_before = len(_mem_dumps(index)) + sum(int(i.get("size", 0)) for i in index["items"]) if index["items"] else 0
        used_after = len(index_bytes) + sum(int(i.get("size", 0)) for i in new_items)
        if used_after > lim.max_bytes:
            return self._fail("full", _mem_t("full_bytes", lang, used=used_before,
                                             need=max(0, used_after - used_before), limit=lim.max_bytes)) | {
                "action": "error"}

        fact_key = memory_fact_key(user, record["id"])
        self._write(fact_key, payload, lang)
        try:
            self._write(memory_index_key(user), index_bytes, lang)
        except _MemStorageError:
            # Undo the fact write so storage matches the (unchanged) index.
            previous = next((i for i in index["items"] if i["id"] == record["id"]), None)
            if previous is None:
                self._delete(fact_key)
            elif old is not None:
                try:
                    self.kv.set(fact_key, _mem_dumps(old))
                except Exception:
                    pass
            raise

        fact = self._public_fact(record)
        text = record["text"]
        if action == "replaced":
            message = _mem_t("replaced", lang, subject=record["subject"], old=old.get("text", "") if old else "", text=text)
        else:
            message = _mem_t(action, lang, text=(record["subject"] + "：" if record["subject"] and lang == "zh" else
                                                 record["subject"] + ": " if record["subject"] else "") + text)
        return {"ok": True, "action": action, "fact": fact,
                "replaced": self._public_fact(old) if action == "replaced" and old else None,
                "message": message}

    @staticmethod
    def _public_fact(record: dict | None) -> dict | None:
        if not record:
            return None
        return {k: record.get(k) for k in ("id", "type", "subject", "text", "created", "updated", "seen", "source", "history")}

    def recall(
        self,
        user: str,
        query: str | None = "",
        *,
        k: int | None = 5,
        type: str | None = None,  # noqa: A002
        lang: str | None = "zh",
    ) -> dict:
        """The ``k`` facts of ``user`` most related to ``query`` (BM25 over bigrams).

        An empty query returns the ``k`` most recently updated facts. Returns
        ``{ok, items: [{id, type, subject, text, updated, score}], text, message}`` where ``text``
        is the items as lines ready for a prompt's memory zone.
        """
        lang = norm_lang(lang)
        try:
            return self._recall(user, query, k, type, lang)
        except _MemStorageError as exc:
            return self._fail("storage", str(exc)) | {"items": [], "text": ""}
        except _MemCorruptIndex:
            return self._fail("corrupt_index", _mem_t("corrupt", lang)) | {"items": [], "text": ""}
        except Exception as exc:
            return self._fail("internal", _mem_t("storage_error", lang, detail=memory_exc_name(exc))) | {"items": [], "text": ""}

    def _recall(self, user: Any, query: Any, k: Any, kind_in: Any, lang: str) -> dict:
        lim = self.limits
        empty = {"items": [], "text": ""}
        user, bad = self._check_user(user, lang)
        if bad:
            return bad | empty
        query, bad = self._check_text("query", query, lim.max_query_chars, lang, required=False)
        if bad:
            return bad | empty
        if k is None or k == "":
            k = 5
        try:
            k_int = int(k) if not isinstance(k, bool) and float(k) == int(float(k)) else -1
        except (TypeError, ValueError, OverflowError):
            k_int = -1
        if not 1 <= k_int <= lim.max_k:
            return self._bad("k", _mem_t("p_k", lang, limit=lim.max_k), lang) | empty
        kind = ""
        if kind_in not in (None, "", "all", "any"):
            kind = memory_type(kind_in)
            if not kind:
                return self._bad("type", _mem_t("p_type", lang), lang) | empty

        items = [i for i in self._read_index(user, lang)["items"] if not kind or i.get("type") == kind]
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
        message = _mem_t("recalled", lang, n=len(found)) if found else _mem_t("recalled_none", lang)
        return {"ok": True, "items": found, "text": "\n".join(lines), "message": message}

    def forget(
        self,
        user: str,
        *,
        fact_id: str | None = "",
        subject: str | None = "",
        type: str | None = None,  # noqa: A002
        all: bool = False,  # noqa: A002
        lang: str | None = "zh",
    ) -> dict:
        """Delete facts of ``user``: one by id, those with a subject (optionally of one type), or all.

        The index entry goes first, then the fact key, so a half-finished forget never leaves a
        fact that recall can still see. Returns ``{ok, deleted: [ids], message}``.
        """
        lang = norm_lang(lang)
        try:
            return self._forget(user, fact_id, subject, type, all, lang)
        except _MemStorageError as exc:
            return self._fail("storage", str(exc)) | {"deleted": []}
        except Exception as exc:
            return self._fail("internal", _mem_t("storage_error", lang, detail=memory_exc_name(exc))) | {"deleted": []}

    def _forget(self, user: Any, fact_id: Any, subject: Any, kind_in: Any, wipe: Any, lang: str) -> dict:
        lim = self.limits
        user, bad = self._check_user(user, lang)
        if bad:
            return bad | {"deleted": []}
        fact_id, bad = self._check_text("fact_id", fact_id, 64, lang, required=False)
        if bad:
            return bad | {"deleted": []}
        subject, bad = self._check_text("subject", subject, lim.max_subject_chars, lang, required=False)
        if bad:
            return bad | {"deleted": []}
        kind = ""
        if kind_in not in (None, "", "all", "any"):
            kind = memory_type(kind_in)
            if not kind:
                return self._bad("type", _mem_t("p_type", lang), lang) | {"deleted": []}
        wipe = wipe is True or (isinstance(wipe, str) and wipe.strip().lower() in ("true", "1", "yes"))
        if not wipe and not fact_id.strip() and not subject.strip():
            return self._bad("fact_id", _mem_t("p_forget_target", lang), lang) | {"deleted": []}

        index_key = memory_index_key(user)
        try:
            items = self._read_index(user, lang)["items"]
        except _MemCorruptIndex:
            if not wipe:
                return self._fail("corrupt_index", _mem_t("corrupt", lang)) | {"deleted": []}
            self._delete(index_key)  # unreadable: the fact keys cannot be found any more
            return {"ok": True, "deleted": [], "message": _mem_t("forgot", lang, n=0)}

        if wipe:
            doomed = list(items)
        elif fact_id.strip():
            doomed = [i for i in items if i["id"] == fact_id.strip()]
        else:
            norm_subject = _mem_norm(subject)
            doomed = [i for i in items if _mem_norm(i.get("subject", "")) == norm_subject
                      and (not kind or i.get("type") == kind)]
        if not doomed:
            return {"ok": True, "deleted": [], "message": _mem_t("forgot_none", lang)}

        gone = {i["id"] for i in doomed}
        keep = [i for i in items if i["id"] not in gone]
        if keep:
            self._write(index_key, _mem_dumps({"v": MEMORY_FORMAT_VERSION, "items": keep}), lang)
        else:
            try:
                self.kv.delete(index_key)
            except Exception as exc:
                raise _MemStorageError(_mem_storage_text(exc, lang)) from None
        for item in doomed:
            self._delete(memory_fact_key(user, item["id"]))
        return {"ok": True, "deleted": [i["id"] for i in doomed],
                "message": _mem_t("forgot", lang, n=len(doomed))}

    def facts(self, user: str, *, lang: str | None = "zh") -> dict:
        """Every fact of ``user`` with its history (one read per fact): for export and review."""
        lang = norm_lang(lang)
        try:
            user, bad = self._check_user(user, lang)
            if bad:
                return bad | {"items": []}
            items = self._read_index(user, lang)["items"]
            out = [self._public_fact(self._read_fact(user, i["id"], lang) or self._record_from_item(i)) for i in items]
            return {"ok": True, "items": out, "message": _mem_t("listed", lang, n=len(out))}
        except _MemStorageError as exc:
            return self._fail("storage", str(exc)) | {"items": []}
        except _MemCorruptIndex:
            return self._fail("corrupt_index", _mem_t("corrupt", lang)) | {"items": []}
        except Exception as exc:
            return self._fail("internal", _mem_t("storage_error", lang, detail=memory_exc_name(exc))) | {"items": []}

    def usage(self, user: str) -> dict:
        """``{items, bytes}`` the user occupies (index plus fact records); zeros when unreadable."""
        try:
            index = self._read_index(user, "zh")
        except Exception:
            return {"items": 0, "bytes": 0}
        items = index["items"]
        used = (len(_mem_dumps(index)) + sum(int(i.get("size", 0)) for i in items)) if items else 0
        return {"items": len(items), "bytes": used}


def memory_line(fact: dict, lang: str = "zh") -> str:
    """One fact as a prompt line: ``[偏好] 座位：靠窗``."""
    labels = {"zh": {"preference": "偏好", "profile": "资料", "constraint": "约束"},
              "en": {"preference": "preference", "profile": "profile", "constraint": "constraint"}}
    label = labels[norm_lang(lang)].get(str(fact.get("type")), str(fact.get("type")))
    subject = fact.get("subject") or ""
    sep = "：" if norm_lang(lang) == "zh" else ": "
    return f"[{label}] {subject}{sep if subject else ''}{fact.get('text', '')}"


def memory_exc_name(exc: BaseException) -> str:
    """An exception's class name only: details may hold data we must not echo."""
    return type(exc).__name__
