"""A client for any OpenAI-compatible ``/chat/completions`` endpoint, made for measuring.

What it adds to a bare POST, and why:

- **one deadline for the whole call** (:mod:`.http`), retries and their waits included: a slow,
  stuck or failing server costs at most ``deadline`` seconds, never an open-ended wait nor
  ``(retries + 1) × deadline``; a wait that would end past the deadline is not started;
- **retries with exponential backoff** on HTTP 429, 5xx and connection errors (``Retry-After`` is
  honoured up to ``backoff_max``); a request that ran into the deadline is not retried;
- **only a text answer is a completion**: ``content: null``, a ``tool_calls``-only answer, an empty
  text and an answer cut by ``finish_reason: length`` are errors (never cached as answers: a cut JSON
  list of commands is a different list of commands; the cache records them as refusals, so a replay
  fails that turn as the live run did). Cassettes recorded before this rule hold some cut
  answers; they replay as recorded, so published figures stay reproducible, and the cache says how
  many (``Cache.warnings``);
- **bounded answers**: a body over ``max_body_bytes`` is refused while it is read (:mod:`.http`), and
  usage figures that are not plain non-negative integers within reason are treated as unknown;
- **JSON mode where the endpoint accepts it**: a call that expects JSON asks for
  ``response_format: {"type": "json_object"}``; when the endpoint answers HTTP 400/422 to the first such
  call, the call is sent once more without it, and if that succeeds JSON mode is off for good (detected
  once per client: servers word the refusal differently, the retry is what tells);
- **output constrained to a JSON schema where the endpoint can** (``structured``): a call that carries a
  schema (the understanding call: :func:`dskit.turn.command_schema.command_schema`) asks for it in the form
  the endpoint accepts — OpenAI's ``{"type": "json_schema", "json_schema": {...}}`` (OpenAI, vLLM,
  llama.cpp's own server) or llama-cpp-python's ``{"type": "json_object", "schema": {...}}``, which
  answers HTTP 500 to the first form. ``auto`` tries them in that order on the first such call and
  keeps the first the endpoint answers; when it takes neither, the call goes without a schema (JSON
  mode as configured) for the rest of the run: the plain path;
- **a seed where asked** (``seed``): sent as the request's ``seed``, which llama.cpp, vLLM and OpenAI
  honour (best effort at OpenAI); with temperature 0 it makes a rerun give the same answer;
- **usage and latency of every call** in :class:`Completion` (token counts from the endpoint's
  ``usage``, estimated with :func:`dskit.base.tokens.estimate_tokens` when it sends none);
- **an on-disk cache** (:class:`.cache.Cache`) keyed by model, messages and parameters: a rerun costs
  nothing, and tests replay recorded answers of a real model;
- one ``requests`` session per thread, so N conversations can run in parallel on one client.

Every failure is an :class:`LLMError` with a one-line message; nothing else escapes :meth:`complete`.
The API key comes from the caller (the CLI reads it from an environment variable) and is never stored.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .cache import Cache, NotRecorded, RecordedRefusal, cache_key
from .completion import Completion, LLMError, token_count
from .http import (BodyTooLarge, DeadlineExceeded, RawResponse, TransportError, new_session,
                   request_with_deadline)

Message = Mapping[str, str]  # {"role": ..., "content": ...}
JSON_MODES = ("auto", "on", "off")
# How a JSON schema is sent: "auto" detects it once; "json_schema" is OpenAI's form, "json_object_schema"
# llama-cpp-python's; "off" never sends one (the plain path).
STRUCTURED_MODES = ("off", "auto", "json_schema", "json_object_schema")
SCHEMA_FORMS = ("json_schema", "json_object_schema")
# Statuses with which an endpoint refuses a response_format it does not take (llama-cpp-python: 500).
_REFUSES_FORMAT = frozenset({400, 404, 415, 422, 500, 501})
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class ClientConfig:
    """Everything that decides how calls are made (the CLI fills it from its options)."""

    base_url: str
    model: str
    api_key: str = ""
    deadline: float = 120.0
    retries: int = 3
    backoff: float = 1.0
    backoff_max: float = 30.0
    json_mode: str = "auto"
    structured: str = "off"  # STRUCTURED_MODES: how (whether) a call's JSON schema is sent
    max_tokens: int | None = None  # a cap on every call's max_tokens (None: the caller's value)
    max_body_bytes: int = 4 * 1024 * 1024  # a chat completion is kilobytes; more is refused while read


class LLMClient:
    """OpenAI-compatible chat completions with a deadline, retries, JSON mode, usage and a cache."""

    def __init__(self, config: ClientConfig, *, cache: Cache | None = None,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic
                 ) -> None:
        if config.json_mode not in JSON_MODES:
            raise ValueError(f"json_mode must be one of {JSON_MODES}, not {config.json_mode!r}")
        if config.structured not in STRUCTURED_MODES:
            raise ValueError(f"structured must be one of {STRUCTURED_MODES}, not {config.structured!r}")
        self.config = config
        self.url = config.base_url.rstrip("/") + "/chat/completions"
        self.cache = cache
        self.sleep = sleep
        self.clock = clock
        self._json_supported: bool | None = {"on": True, "off": False}.get(config.json_mode)
        # The schema form the endpoint takes: None until known, "" when it takes none
        self._schema_form: str | None = {"off": "", "auto": None}.get(config.structured, config.structured)
        self._lock = threading.Lock()
        self._local = threading.local()
        self.http_requests = 0  # requests actually sent (retries included): what tests count

    # ------------------------------------------------------------------ public

    @property
    def json_supported(self) -> bool | None:
        """True/False once known; None until the first call that asked for JSON."""
        return self._json_supported

    @property
    def schema_form(self) -> str | None:
        """How a schema is sent: "json_schema" / "json_object_schema" once known, "" for never, None
        until the first call that carried one."""
        return self._schema_form

    def complete(self, messages: Sequence[Message], *, temperature: float | None = None,
                 max_tokens: int | None = None, want_json: bool = False, schema: Mapping[str, Any] | None = None,
                 seed: int | None = None) -> Completion:
        """One completion for ``messages``; raises :class:`LLMError` (one line) when there is none.
        ``schema`` constrains the answer where the endpoint can (``structured``); ``seed`` is sent as is."""
        clean = [{"role": str(m.get("role") or "user"), "content": str(m.get("content") or "")} for m in messages]
        if self.config.max_tokens is not None:
            max_tokens = min(max_tokens or self.config.max_tokens, self.config.max_tokens)
        asks_json = want_json and self.config.json_mode != "off"
        schema = schema if schema and self.config.structured != "off" else None
        params: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens, "json": asks_json}
        if schema is not None:  # only then: the keys of answers recorded without a schema stay as they were
            params["schema"] = schema_digest(schema)
        if seed is not None:
            params["seed"] = seed
        key = cache_key(self.config.model, clean, params)
        if self.cache is not None:
            try:
                hit = self.cache.get(key)
            except NotRecorded as error:
                raise LLMError(str(error), kind="not_recorded") from None
            except RecordedRefusal as refusal:
                raise LLMError(str(refusal), kind=refusal.kind, cut=refusal.cut) from None
            if hit is not None:  # as recorded (answers cut at max_tokens before the rule: Cache.warnings)
                return hit
        try:
            completion = self._call(clean, temperature, max_tokens, asks_json, schema, seed)
        except LLMError as error:  # the model's own unusable answer is recorded, so a replay fails alike
            if self.cache is not None:
                self.cache.put_refusal(key, error.kind, str(error), clean, self.config.model, cut=error.cut)
            raise
        if self.cache is not None:
            self.cache.put(key, completion, clean, self.config.model)
        return completion

    # ------------------------------------------------------------------ the call

    def _session(self) -> Any:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = new_session()
        return session

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        return headers

    def _body(self, messages: list[dict[str, str]], temperature: float | None, max_tokens: int | None,
              json_mode: bool, schema: Mapping[str, Any] | None = None, form: str = "",
              seed: int | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.config.model, "messages": messages}
        if temperature is not None:
            body["temperature"] = temperature
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if seed is not None:
            body["seed"] = seed
        if schema is not None and form == "json_schema":
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": "understanding", "schema": dict(schema)}}
        elif schema is not None and form == "json_object_schema":
            body["response_format"] = {"type": "json_object", "schema": dict(schema)}
        elif json_mode:
            body["response_format"] = {"type": "json_object"}
        return body

    def _schema_forms(self, schema: Mapping[str, Any] | None) -> list[str]:
        """The schema forms to try for this call, in order ("" last: no schema)."""
        if schema is None or self._schema_form == "":
            return [""]
        if self._schema_form:
            return [self._schema_form]
        return [*SCHEMA_FORMS, ""]

    def _call(self, messages: list[dict[str, str]], temperature: float | None, max_tokens: int | None,
              asks_json: bool, schema: Mapping[str, Any] | None = None, seed: int | None = None) -> Completion:
        forms = self._schema_forms(schema)
        form = forms.pop(0)
        json_mode = asks_json and self._json_supported is not False
        probing = False  # JSON mode was refused once: this attempt goes without it
        attempts = 0
        end = self.clock() + self.config.deadline  # one deadline for every attempt and wait
        while True:
            attempts += 1
            started = self.clock()
            remaining = end - started
            if remaining <= 0:
                raise self._out_of_time(attempts - 1, "")
            try:
                body = self._body(messages, temperature, max_tokens, json_mode, schema if form else None, form, seed)
                response = self._send(body, remaining)
            except DeadlineExceeded:
                raise self._out_of_time(attempts, "") from None
            except BodyTooLarge as error:
                raise LLMError(f"{self.url}: {error}", kind="too_large", attempts=attempts) from None
            except TransportError as error:
                if attempts > self.config.retries:
                    raise LLMError(f"cannot reach {self.url}: {error}", kind="transport",
                                   attempts=attempts) from None
                self._wait(attempts, None, end, f"cannot reach {self.url}: {error}")
                continue
            latency = self.clock() - started
            if response.status < 400:
                if asks_json and self._json_supported is None and not form:
                    self._set_json(not probing)
                if schema is not None and self._schema_form is None:
                    self._set_schema_form(form)
                return self._completion(response, latency, attempts, json_mode or bool(form), messages)
            if forms and response.status in _REFUSES_FORMAT:  # this schema form refused: the next one
                form = forms.pop(0)
                continue
            if json_mode and self._json_supported is None and response.status in (400, 422):
                json_mode, probing = False, True
                continue
            why = f"{self.url} answered HTTP {response.status}: {_error_text(response)}"
            if response.status in RETRY_STATUSES or response.status >= 500:
                if attempts <= self.config.retries:
                    self._wait(attempts, response.headers, end, why)
                    continue
            raise LLMError(why, kind="http", attempts=attempts)

    def _send(self, body: dict[str, Any], deadline: float) -> RawResponse:
        with self._lock:
            self.http_requests += 1
        return request_with_deadline(self._session(), "POST", self.url, deadline=deadline,
                                     headers=self._headers(), json_body=body,
                                     max_bytes=self.config.max_body_bytes)

    def _out_of_time(self, attempts: int, why: str) -> LLMError:
        tried = f"{attempts} attempt{'s' if attempts != 1 else ''}{', the last: ' + why if why else ''}"
        return LLMError(f"no complete answer from {self.url} within {self.config.deadline:g} s (the deadline of "
                        f"the whole call; {tried})", kind="deadline", attempts=attempts)

    def _wait(self, attempt: int, headers: Mapping[str, str] | None, end: float, why: str) -> None:
        """Sleep before the next attempt, or give up now when the wait would end past the deadline."""
        wait = self._backoff(attempt, headers)
        if self.clock() + wait >= end:
            raise self._out_of_time(attempt, why)
        self.sleep(wait)

    def _set_schema_form(self, form: str) -> None:
        with self._lock:
            if self._schema_form is None:
                self._schema_form = form

    def _set_json(self, supported: bool) -> None:
        with self._lock:
            if self._json_supported is None:
                self._json_supported = supported

    def _backoff(self, attempt: int, headers: Mapping[str, str] | None) -> float:
        """Seconds to wait before the next attempt: Retry-After when given, else exponential."""
        retry_after = None
        for name, value in (headers or {}).items():
            if name.lower() == "retry-after":
                try:
                    retry_after = float(value)
                except ValueError:
                    retry_after = None
        wait = retry_after if retry_after is not None else self.config.backoff * 2 ** (attempt - 1)
        return max(0.0, min(wait, self.config.backoff_max))

    def _completion(self, response: RawResponse, latency: float, attempts: int, json_mode: bool,
                    messages: list[dict[str, str]]) -> Completion:
        try:
            data = json.loads(response.text())
            choice = data["choices"][0]
            message = choice["message"]
            text = message.get("content")
            finish = choice.get("finish_reason")
            finish = finish if isinstance(finish, str) else ""
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError):
            raise LLMError(f"{self.url} answered something that is not a chat completion: "
                           f"{response.text()[:160]!r}", kind="protocol", attempts=attempts) from None
        refused = unusable(text, finish, tool_calls=bool(message.get("tool_calls")))
        if refused and refused[0] != "length":
            raise LLMError(f"{self.url} answered {refused[1]}", kind=refused[0], attempts=attempts)
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        prompt, completion = token_count(usage.get("prompt_tokens")), token_count(usage.get("completion_tokens"))
        estimated = prompt is None or completion is None
        if estimated:
            from dskit.base.tokens import estimate_tokens  # noqa: PLC0415

            if prompt is None:
                prompt = sum(estimate_tokens(m["content"]) for m in messages)
            if completion is None:
                completion = estimate_tokens(text)
        answer = Completion(text=text, prompt_tokens=prompt, completion_tokens=completion,
                            latency=round(latency, 3), attempts=attempts, json_mode=json_mode,
                            usage_estimated=estimated, finish_reason=finish)
        if refused:  # cut at max_tokens: an error, carrying the text a Dify LLM node would output anyway
            raise LLMError(f"{self.url} answered {refused[1]}", kind=refused[0], attempts=attempts, cut=answer)
        return answer


def schema_digest(schema: Mapping[str, Any]) -> str:
    """A short, stable name of a schema for the cache key (the schema itself is long)."""
    text = json.dumps(schema, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def unusable(text: Any, finish_reason: str, *, tool_calls: bool = False) -> tuple[str, str] | None:
    """(kind, why) when an answer is not a usable completion, else None: no text (``content: null``,
    tool calls only, empty), or a text cut at ``max_tokens`` (``finish_reason: length``)."""
    if not isinstance(text, str) or not text.strip():
        what = "tool calls" if tool_calls else "no text content"
        return "no_text", f"{what} (finish_reason {finish_reason or 'none'}), not a text"
    if finish_reason == "length":
        return "length", f"a text cut at max_tokens (finish_reason length, {len(text)} characters)"
    return None


def _error_text(response: RawResponse) -> str:
    """The error message of an error body ({"error": {"message": ...}} or any text), one line."""
    text = response.text()
    try:
        data = json.loads(text)
    except ValueError:
        return " ".join(text.split())[:200] or "(empty body)"
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            return str(error.get("message") or error.get("detail") or error)[:200]
        return str(error)[:200]
    return str(data)[:200]
