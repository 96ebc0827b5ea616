"""The model client against a local OpenAI-compatible server that misbehaves on purpose.

Counts, not clocks: how many HTTP requests were sent, how many backoff waits were asked for and how
long each was meant to be (the client's sleep is recorded, not slept), how many bytes a dripping server
got out before the deadline cut it off.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from dskit.tooling.llm import Cache, ClientConfig, LLMClient, LLMError
from fakes.openai_server import fake_openai

MESSAGES = [{"role": "system", "content": "只输出 JSON"}, {"role": "user", "content": "订周五的"}]


def client(base_url: str, *, cache: Cache | None = None, **config) -> tuple[LLMClient, list[float]]:
    waits: list[float] = []
    settings = {"deadline": 10.0, "retries": 3, "backoff": 1.0, **config}
    return LLMClient(ClientConfig(base_url, "fake-model", api_key="k", **settings), cache=cache,
                     sleep=waits.append), waits


def test_usage_latency_and_the_request_body_are_what_an_openai_endpoint_expects() -> None:
    with fake_openai(("ok", '{"commands": []}')) as fake:
        llm, waits = client(fake.base_url)
        answer = llm.complete(MESSAGES, temperature=0.1, max_tokens=64)
    assert answer.text == '{"commands": []}'
    assert (answer.prompt_tokens, answer.completion_tokens, answer.usage_estimated) == (11, 7, False)
    assert answer.latency >= 0 and answer.attempts == 1 and not answer.cached
    sent = fake.requests[0]
    assert sent == {"model": "fake-model", "messages": MESSAGES, "temperature": 0.1, "max_tokens": 64}
    assert llm.http_requests == 1 and waits == []


def test_missing_usage_is_estimated_and_says_so() -> None:
    with fake_openai(("ok_no_usage", "好的，已为您记下")) as fake:
        answer = client(fake.base_url)[0].complete(MESSAGES)
    assert answer.usage_estimated and answer.prompt_tokens > 0 and answer.completion_tokens > 0


def test_429_and_5xx_are_retried_with_exponential_backoff_and_retry_after() -> None:
    steps = [("status", 429, {"error": {"message": "rate limited"}}, {"Retry-After": "7"}),
             ("status", 500, {"error": {"message": "boom"}}),
             ("status", 503, {"error": {"message": "busy"}}),
             ("ok", "{}")]
    with fake_openai(*steps) as fake:
        llm, waits = client(fake.base_url)
        answer = llm.complete(MESSAGES)
    assert answer.text == "{}" and answer.attempts == 4
    assert llm.http_requests == 4 and len(fake.requests) == 4
    assert waits == [7.0, 2.0, 4.0]  # Retry-After first, then 1 s doubling per attempt


def test_retries_are_bounded_and_the_error_is_one_line_with_the_server_message() -> None:
    with fake_openai(("status", 502, {"error": {"message": "upstream\nexploded"}})) as fake:
        llm, waits = client(fake.base_url, retries=2)
        with pytest.raises(LLMError) as info:
            llm.complete(MESSAGES)
    assert info.value.kind == "http" and info.value.attempts == 3
    assert len(fake.requests) == 3 and len(waits) == 2
    assert "HTTP 502" in str(info.value) and "upstream exploded" in str(info.value)
    assert "\n" not in str(info.value)


def test_a_client_error_is_not_retried() -> None:
    with fake_openai(("status", 401, {"error": {"message": "bad key"}})) as fake:
        llm, waits = client(fake.base_url)
        with pytest.raises(LLMError, match="HTTP 401: bad key"):
            llm.complete(MESSAGES)
    assert len(fake.requests) == 1 and waits == []


def test_dropped_connections_are_retried_then_reported() -> None:
    with fake_openai(("drop",), ("drop",), ("ok", "{}")) as fake:
        llm, waits = client(fake.base_url)
        assert llm.complete(MESSAGES).text == "{}"
    assert len(fake.requests) == 3 and waits == [1.0, 2.0]
    with fake_openai(("drop",)) as fake:
        llm, _ = client(fake.base_url, retries=1)
        with pytest.raises(LLMError) as info:
            llm.complete(MESSAGES)
    assert info.value.kind == "transport" and len(fake.requests) == 2


def test_an_unreachable_endpoint_is_a_one_line_error() -> None:
    llm, waits = client("http://127.0.0.1:9/v1", retries=1)
    with pytest.raises(LLMError) as info:
        llm.complete(MESSAGES)
    assert info.value.kind == "transport" and "cannot reach" in str(info.value)
    assert "Traceback" not in str(info.value) and len(waits) == 1


@pytest.mark.parametrize("kind", ["drip", "drip_all"])
def test_a_server_sending_one_byte_at_a_time_hits_the_whole_request_deadline(kind: str) -> None:
    """Each byte arrives well within any per-read timeout; only a deadline on the whole request ends it.

    The answer is ~250 bytes at one byte per 0.05 s (~12 s); the deadline is 0.6 s. The server must get
    only a handful of bytes out, the request is not retried (a second try would wait as long), and the
    dripping connection is cut rather than left reading in the background.
    """
    with fake_openai((kind, 0.05, '{"commands": []}')) as fake:
        llm, waits = client(fake.base_url, deadline=0.6)
        with pytest.raises(LLMError) as info:
            llm.complete(MESSAGES)
        total = len(json.dumps({"id": "x"})) + 200
        assert info.value.kind == "deadline" and "0.6 s" in str(info.value)
        assert len(fake.requests) == 1 and waits == []
        assert fake.bytes_sent < total // 4
        sent_at_deadline = fake.bytes_sent
        fake.stop.wait(0.3)
        assert fake.bytes_sent <= sent_at_deadline + 1  # the socket was shut: the drip stopped


def test_json_mode_is_used_where_accepted() -> None:
    with fake_openai(("ok", "{}")) as fake:
        llm, _ = client(fake.base_url)
        answer = llm.complete(MESSAGES, want_json=True)
        llm.complete(MESSAGES + [{"role": "user", "content": "再来"}], want_json=True)
    assert answer.json_mode and llm.json_supported is True
    assert [r.get("response_format") for r in fake.requests] == [{"type": "json_object"}] * 2


def test_json_mode_refused_once_is_detected_and_never_asked_again() -> None:
    with fake_openai(("refuse_json", "{}")) as fake:
        llm, _ = client(fake.base_url)
        first = llm.complete(MESSAGES, want_json=True)
        second = llm.complete(MESSAGES + [{"role": "user", "content": "再来"}], want_json=True)
    assert llm.json_supported is False and not first.json_mode and not second.json_mode
    assert ["response_format" in r for r in fake.requests] == [True, False, False]


def test_json_mode_off_never_sends_it_and_plain_calls_never_do() -> None:
    with fake_openai(("ok", "{}")) as fake:
        client(fake.base_url, json_mode="off")[0].complete(MESSAGES, want_json=True)
        client(fake.base_url)[0].complete(MESSAGES)
    assert all("response_format" not in r for r in fake.requests)


SCHEMA = {"type": "object", "properties": {"commands": {"type": "array"}}, "required": ["commands"]}


def test_a_schema_goes_in_the_first_form_the_endpoint_takes_and_only_that_one_after() -> None:
    """llama-cpp-python answers HTTP 500 to OpenAI's json_schema form and takes its own json_object +
    schema: the first call finds that out, the next one asks for it directly."""
    with fake_openai(("refuse_format", ("json_schema",), 500, '{"commands": []}')) as fake:
        llm, waits = client(fake.base_url, structured="auto")
        first = llm.complete(MESSAGES, want_json=True, schema=SCHEMA)
        llm.complete(MESSAGES + [{"role": "user", "content": "再来"}], want_json=True, schema=SCHEMA)
    forms = [r.get("response_format") for r in fake.requests]
    assert forms[0] == {"type": "json_schema", "json_schema": {"name": "understanding", "schema": SCHEMA}}
    assert forms[1:] == [{"type": "json_object", "schema": SCHEMA}] * 2
    assert llm.schema_form == "json_object_schema" and first.json_mode and waits == []


def test_an_endpoint_that_takes_no_schema_gets_the_plain_path() -> None:
    with fake_openai(("refuse_format", ("json_schema", "json_object_schema"), 400, "{}")) as fake:
        llm, _ = client(fake.base_url, structured="auto")
        llm.complete(MESSAGES, want_json=True, schema=SCHEMA)
        llm.complete(MESSAGES + [{"role": "user", "content": "再来"}], want_json=True, schema=SCHEMA)
    forms = [(r.get("response_format") or {}).get("type") for r in fake.requests]
    assert forms == ["json_schema", "json_object", "json_object", "json_object"]
    assert "schema" not in fake.requests[-1]["response_format"] and llm.schema_form == ""


def test_no_schema_is_sent_when_structured_output_is_off_and_a_seed_is_sent_as_given() -> None:
    with fake_openai(("ok", "{}")) as fake:
        client(fake.base_url)[0].complete(MESSAGES, want_json=True, schema=SCHEMA, seed=7, temperature=0)
    assert fake.requests[0]["response_format"] == {"type": "json_object"}
    assert fake.requests[0]["seed"] == 7 and fake.requests[0]["temperature"] == 0


def test_answers_recorded_without_a_schema_or_seed_keep_their_keys(tmp_path: Path) -> None:
    """The schema and the seed enter the cache key only when sent: every cassette recorded before them
    still answers the same request."""
    from dskit.tooling.llm.cache import cache_key  # noqa: PLC0415

    path = tmp_path / "c.jsonl"
    with fake_openai(("ok", '{"commands": []}')) as fake:
        llm, _ = client(fake.base_url, cache=Cache(path, "record"), structured="auto")
        llm.complete(MESSAGES, temperature=0.1, max_tokens=64, want_json=True)
        llm.complete(MESSAGES, temperature=0, max_tokens=64, want_json=True, schema=SCHEMA, seed=7)
    keys = [json.loads(line)["key"] for line in path.read_text(encoding="utf-8").splitlines()]
    assert keys[0] == cache_key("fake-model", MESSAGES, {"temperature": 0.1, "max_tokens": 64, "json": True})
    assert len(set(keys)) == 2


def test_an_answer_that_is_not_a_chat_completion_is_a_protocol_error() -> None:
    with fake_openai(("garbage", "<html>gateway</html>")) as fake:
        with pytest.raises(LLMError) as info:
            client(fake.base_url)[0].complete(MESSAGES)
    assert info.value.kind == "protocol" and "<html>" in str(info.value)


def test_cache_hit_is_no_call_and_replay_never_calls(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    with fake_openai(("ok", '{"a": 1}')) as fake:
        llm, _ = client(fake.base_url, cache=Cache(path))
        first = llm.complete(MESSAGES, temperature=0.1)
        again = llm.complete(MESSAGES, temperature=0.1)
        other = llm.complete(MESSAGES, temperature=0.7)  # another parameter, another answer
        assert len(fake.requests) == 2 and llm.http_requests == 2
    assert not first.cached and again.cached and not other.cached
    assert (again.text, again.prompt_tokens, again.latency) == (first.text, first.prompt_tokens, first.latency)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and "订周五的" in json.loads(lines[0])["asked"]
    assert "只输出" not in lines[0]  # the prompt is pinned by the key, not stored

    replay, _ = client("http://127.0.0.1:9/v1", cache=Cache(path, "replay"))
    assert replay.complete(MESSAGES, temperature=0.1).text == '{"a": 1}'
    with pytest.raises(LLMError) as info:
        replay.complete(MESSAGES, temperature=0.2)
    assert info.value.kind == "not_recorded" and replay.http_requests == 0


def test_a_gzip_cassette_records_and_replays_like_a_plain_one(tmp_path: Path) -> None:
    """Large recorded runs are checked in compressed (tests/cassettes/*.jsonl.gz)."""
    path = tmp_path / "answers.jsonl.gz"
    with fake_openai(("ok", '{"a": 1}'), ("ok", '{"b": 2}')) as fake:
        llm, _ = client(fake.base_url, cache=Cache(path))
        llm.complete(MESSAGES, temperature=0.1)
        llm.complete(MESSAGES, temperature=0.3)  # appended as a second gzip member
        assert len(fake.requests) == 2
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    replay, _ = client("http://127.0.0.1:9/v1", cache=Cache(path, "replay"))
    assert [replay.complete(MESSAGES, temperature=t).text for t in (0.1, 0.3)] == ['{"a": 1}', '{"b": 2}']
    (tmp_path / "broken.jsonl.gz").write_bytes(b"not gzip")
    with pytest.raises(ValueError, match="not a gzip file"):
        Cache(tmp_path / "broken.jsonl.gz", "replay")


def test_many_conversations_in_parallel_share_one_client() -> None:
    with fake_openai(("answer", lambda body: body["messages"][-1]["content"])) as fake:
        llm, _ = client(fake.base_url)
        results: dict[int, str] = {}

        def ask(i: int) -> None:
            results[i] = llm.complete([{"role": "user", "content": f"第{i}个"}]).text

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
    assert results == {i: f"第{i}个" for i in range(8)} and len(fake.requests) == 8
