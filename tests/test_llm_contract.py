"""The model client keeps its contract (issue 19, class 12): every case found is kept here.

Counts, not clocks: the client's sleeps are recorded on a virtual clock (real time plus what it slept),
so "one deadline for the whole call" is checked as the sum of the waits it asked for and the requests
it sent; memory is checked with tracemalloc's peak, bytes with the fake server's count.
"""

from __future__ import annotations

import gzip
import json
import time
import tracemalloc
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dskit.tooling.llm import Cache, ClientConfig, LLMClient, LLMError
from dskit.tooling.llm.cache import MAX_CASSETTE_BYTES, CassetteError, cache_key
from dskit.tooling.llm.completion import MAX_USAGE_TOKENS
from fakes.openai_server import completion, fake_openai

ROOT = Path(__file__).resolve().parents[1]
MESSAGES = [{"role": "user", "content": "订周五的"}]


def client(base_url: str, *, cache: Cache | None = None, **config: Any) -> tuple[LLMClient, list[float]]:
    """A client on a virtual clock: real time plus every sleep it asked for (not slept)."""
    slept: list[float] = []
    settings_ = {"deadline": 1.0, "retries": 3, "backoff": 1.0, **config}
    return LLMClient(ClientConfig(base_url, "fake-model", **settings_), cache=cache, sleep=slept.append,
                     clock=lambda: time.monotonic() + sum(slept)), slept


# ------------------------------------------------------------------ one deadline for the whole call


@pytest.mark.parametrize("steps, requests_at_most", [
    ([("status", 500, {"error": {"message": "boom"}})], 1),        # backoff 1 s: no time for a second try
    ([("status", 429, {}, {"Retry-After": "0.6"})], 2),            # one 0.6 s wait fits, the next does not
    ([("status", 503, {}, {"Retry-After": "0.3"})], 4),            # 3 waits of 0.3 s fit in 1 s
    ([("drop",)], 1),
])
def test_retries_and_their_waits_stay_within_one_deadline(steps: list, requests_at_most: int) -> None:
    """Before: a 1 s deadline with 3 retries waited 1 + 2 + 4 s (7 s) on top of the attempts."""
    with fake_openai(*steps) as fake:
        llm, slept = client(fake.base_url, deadline=1.0)
        with pytest.raises(LLMError) as info:
            llm.complete(MESSAGES)
    assert info.value.kind in ("deadline", "transport", "http")
    assert sum(slept) < 1.0 and len(fake.requests) <= requests_at_most
    if info.value.kind == "deadline":
        assert "within 1 s (the deadline of the whole call" in str(info.value)


def test_a_retry_that_fits_still_succeeds() -> None:
    with fake_openai(("status", 503, {}, {"Retry-After": "0.2"}), ("ok", "{}")) as fake:
        llm, slept = client(fake.base_url, deadline=1.0)
        assert llm.complete(MESSAGES).text == "{}"
    assert slept == [0.2] and len(fake.requests) == 2


def test_the_json_mode_probe_is_inside_the_deadline_too() -> None:
    with fake_openai(("refuse_json", "{}")) as fake:
        llm, slept = client(fake.base_url, deadline=5.0)
        assert llm.complete(MESSAGES, want_json=True).text == "{}"
    assert len(fake.requests) == 2 and slept == []


# ------------------------------------------------------------------ only a text answer is a completion

NOT_A_TEXT = {
    "content null": ({"role": "assistant", "content": None}, "stop", "no_text"),
    "tool calls only": ({"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "set_slots", "arguments": "{}"}}]}, "tool_calls", "no_text"),
    "empty text": ({"role": "assistant", "content": " \n"}, "stop", "no_text"),
    "content a list": ({"role": "assistant", "content": [{"type": "text", "text": "{}"}]}, "stop", "no_text"),
    "cut by length": ({"role": "assistant", "content": '{"commands": [{"type": "start_task", "ta'}, "length",
                      "length"),
}


@pytest.mark.parametrize("name", sorted(NOT_A_TEXT))
def test_an_answer_without_a_whole_text_is_an_error_and_never_recorded(tmp_path: Path, name: str) -> None:
    message, finish, kind = NOT_A_TEXT[name]
    body = {"choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 5}}
    path = tmp_path / "answers.jsonl"
    with fake_openai(("status", 200, body)) as fake:
        llm, _ = client(fake.base_url, cache=Cache(path))
        with pytest.raises(LLMError) as info:
            llm.complete(MESSAGES)
        assert len(fake.requests) == 1  # not retried: the same request gets the same kind of answer
    assert info.value.kind == kind
    assert not path.exists()  # never recorded, so a rerun asks again


@pytest.mark.parametrize("name", sorted(NOT_A_TEXT))
def test_a_cassette_records_the_refusal_so_a_replay_fails_that_turn_alike(tmp_path: Path, name: str) -> None:
    """Recording a cassette (``--record``), the model's unusable answer is kept as a refusal: replaying
    raises the same kind of error without a request, where before the replay met "not in the cassette"
    and the whole recorded run could never be replayed."""
    message, finish, kind = NOT_A_TEXT[name]
    body = {"choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 5}}
    path = tmp_path / "cassette.jsonl"
    with fake_openai(("status", 200, body)) as fake:
        llm, _ = client(fake.base_url, cache=Cache(path, "record"))
        with pytest.raises(LLMError) as live:
            llm.complete(MESSAGES)
    replay = Cache(path, "replay")
    assert replay.warnings == []  # a refusal is not an answer recorded cut
    llm, _ = client("http://127.0.0.1:9/v1", cache=replay)
    with pytest.raises(LLMError) as replayed:
        llm.complete(MESSAGES)
    assert replayed.value.kind == live.value.kind == kind and llm.http_requests == 0
    assert str(live.value) in str(replayed.value)


def test_a_cut_answer_carries_the_text_a_dify_llm_node_would_output(tmp_path: Path) -> None:
    """The client keeps its contract (a text cut at max_tokens is an error), but the error carries the
    text: Dify's LLM node outputs it whatever the finish_reason (graphon/nodes/llm/node.py,
    LLMNode._build_run_outputs), so the state node of a Chatflow reads it, and the targets that stand for
    a Chatflow pass it on (completion.node_output). A cassette keeps it, and a replay gives it back."""
    from dskit.tooling.llm.completion import node_output  # noqa: PLC0415

    cut = '{"commands": [{"type": "set_slots", "slots": {"people": 2}}, {"type": "set_sl'
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": cut}, "finish_reason": "length"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 512}}
    path = tmp_path / "cassette.jsonl"
    with fake_openai(("status", 200, body)) as fake:
        llm, _ = client(fake.base_url, cache=Cache(path, "record"))
        with pytest.raises(LLMError) as live:
            llm.complete(MESSAGES)
    llm, _ = client("http://127.0.0.1:9/v1", cache=Cache(path, "replay"))
    with pytest.raises(LLMError) as replayed:
        llm.complete(MESSAGES)
    for error in (live.value, replayed.value):
        output = node_output(error)
        assert error.kind == "length" and output is not None and output.text == cut
        assert output.finish_reason == "length" and output.completion_tokens == 512
    for name in ("content null", "empty text", "tool calls only"):  # no text: the node fails, nothing passes on
        message, finish, _ = NOT_A_TEXT[name]
        with fake_openai(("status", 200, {"choices": [{"index": 0, "message": message, "finish_reason": finish}]})) as fake:
            with pytest.raises(LLMError) as info:
                client(fake.base_url)[0].complete(MESSAGES)
        assert node_output(info.value) is None


def test_a_recorded_cut_answer_replays_as_recorded_and_is_counted(tmp_path: Path) -> None:
    """Cassettes recorded before the rule hold such answers; the published figures are measured on them,
    so they replay as recorded, and the cache says how many there are."""
    params = {"temperature": None, "max_tokens": None, "json": False}
    key = cache_key("fake-model", MESSAGES, params)
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps({"key": key, "text": '{"commands": [', "finish_reason": "length"}) + "\n")
    cache = Cache(path, "replay")
    assert cache.warnings and "1 of 1 answers were recorded cut" in cache.warnings[0]
    llm, _ = client("http://127.0.0.1:9/v1", cache=cache)
    answer = llm.complete(MESSAGES)
    assert answer.text == '{"commands": [' and answer.finish_reason == "length" and llm.http_requests == 0


# ------------------------------------------------------------------ usage is sanitised

BAD_USAGE = [-5, -1, 10 ** 30, MAX_USAGE_TOKENS + 1, True, False, "12", 3.5, None, [1], {"n": 1}, float("nan")]


@pytest.mark.parametrize("bad", BAD_USAGE, ids=repr)
@pytest.mark.parametrize("field", ["prompt_tokens", "completion_tokens"])
def test_usage_that_is_not_a_plain_count_is_unknown(field: str, bad: Any) -> None:
    body = completion('{"commands": []}')
    body["usage"] = {"prompt_tokens": 11, "completion_tokens": 7, field: bad}
    if isinstance(bad, float) and bad != bad:
        body["usage"][field] = "NaN"
    with fake_openai(("status", 200, body)) as fake:
        answer = client(fake.base_url)[0].complete(MESSAGES)
    for value in (answer.prompt_tokens, answer.completion_tokens):
        assert type(value) is int and 0 <= value <= MAX_USAGE_TOKENS
    assert answer.usage_estimated
    kept = "completion_tokens" if field == "prompt_tokens" else "prompt_tokens"
    assert getattr(answer, kept) == {"prompt_tokens": 11, "completion_tokens": 7}[kept]  # the good one is kept


# ------------------------------------------------------------------ bounded bodies

CAP = 1024 * 1024


@pytest.mark.parametrize("declared", [True, False])
def test_a_huge_body_is_refused_while_it_is_read(declared: bool) -> None:
    """Before: a 60 MB body was read whole. Now reading stops at the cap (1 MiB here)."""
    with fake_openai(("big", 60 * 1024 * 1024, declared)) as fake:
        llm, _ = client(fake.base_url, deadline=30.0, max_body_bytes=CAP)
        with pytest.raises(LLMError) as info:
            llm.complete(MESSAGES)
        time.sleep(0.2)
        sent = fake.bytes_sent
    assert info.value.kind == "too_large" and len(fake.requests) == 1
    assert sent < 16 * CAP  # the connection was closed: the server could not push the 60 MB


def test_a_gzip_bomb_answer_is_refused_without_inflating_it() -> None:
    with fake_openai(("gzip_bomb", 256 * 1024 * 1024)) as fake:
        llm, _ = client(fake.base_url, deadline=60.0, max_body_bytes=CAP)
        tracemalloc.start()
        try:
            with pytest.raises(LLMError) as info:
                llm.complete(MESSAGES)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert info.value.kind == "too_large"
    assert peak < 24 * CAP  # the cap, a chunk and the server's own pieces; the bomb is 256 MiB inflated


def test_a_compressed_answer_within_the_cap_is_read() -> None:
    with fake_openai(("gzip_bomb", 1000)) as fake:
        answer = client(fake.base_url, max_body_bytes=CAP)[0].complete(MESSAGES)
    assert answer.text == "x" * 1000


# ------------------------------------------------------------------ cassettes

GOOD = [{"key": f"k{i}", "text": json.dumps({"n": i}), "prompt_tokens": 10, "completion_tokens": 3,
         "latency": 1.5, "json_mode": True, "usage_estimated": False, "finish_reason": "stop"} for i in range(4)]
LINES = "".join(json.dumps(e) + "\n" for e in GOOD)


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


DAMAGED_TAILS = {
    "plain, last line cut": (".jsonl", lambda: (LINES + '{"key": "k9", "te').encode()),
    "gzip, last line cut": (".jsonl.gz", lambda: gzip.compress((LINES + '{"key": "k9", "te').encode())),
    "gzip, interrupted append": (".jsonl.gz", lambda: gzip.compress(LINES.encode())
                                 + gzip.compress((json.dumps({"key": "k9", "text": "x"}) + "\n").encode() * 40)[:-9]),
    "gzip, garbage after a member": (".jsonl.gz", lambda: gzip.compress(LINES.encode()) + b"\x1f\x8bjunk"),
}


@pytest.mark.parametrize("name", sorted(DAMAGED_TAILS))
def test_a_damaged_tail_is_skipped_with_a_warning_and_the_good_answers_kept(tmp_path: Path, name: str) -> None:
    suffix, data = DAMAGED_TAILS[name]
    path = write(tmp_path / f"c{suffix}", data())
    cache = Cache(path, "readwrite")
    assert {f"k{i}" for i in range(4)} <= set(cache.entries)
    assert cache.warnings and str(path) in cache.warnings[0]
    # the next answer rewrites the file without the damage: it loads clean afterwards
    llm_answer = cache.get("k0")
    assert llm_answer is not None and llm_answer.text == '{"n": 0}'
    from dskit.tooling.llm import Completion

    cache.put("new", Completion("{}", 1, 1, 0.1), MESSAGES, "m")
    again = Cache(path, "replay")
    assert again.warnings == [] and {"k0", "k1", "k2", "k3", "new"} <= set(again.entries)


WRONG_TYPES = {
    "prompt_tokens text": {"prompt_tokens": "abc"}, "prompt_tokens negative": {"prompt_tokens": -3},
    "prompt_tokens huge": {"prompt_tokens": 10 ** 30}, "prompt_tokens a list": {"prompt_tokens": [1]},
    "completion_tokens true": {"completion_tokens": True}, "latency text": {"latency": "fast"},
    "latency negative": {"latency": -1}, "json_mode text": {"json_mode": "yes"}, "text a number": {"text": 5},
    "key missing": {"key": None}, "finish_reason a number": {"finish_reason": 1},
    "usage_estimated a number": {"usage_estimated": 0},
}


@pytest.mark.parametrize("name", sorted(WRONG_TYPES))
def test_a_field_of_the_wrong_type_is_a_clear_error_naming_the_line(tmp_path: Path, name: str) -> None:
    entry = {**GOOD[0], "key": "bad", **WRONG_TYPES[name]}
    path = write(tmp_path / "c.jsonl", (LINES + json.dumps(entry) + "\n" + LINES.replace('"k', '"j')).encode())
    with pytest.raises(CassetteError) as info:
        Cache(path, "replay")
    field = next(iter(WRONG_TYPES[name]))
    assert f"{path}:5:" in str(info.value) and repr(field) in str(info.value)


@pytest.mark.parametrize("line", ["[1, 2]", '"a string"', "{not json}", "\x00\x01"])
def test_a_bad_line_in_the_middle_is_an_error_naming_it(tmp_path: Path, line: str) -> None:
    path = write(tmp_path / "c.jsonl", (LINES + line + "\n" + LINES).encode())
    with pytest.raises(CassetteError, match=r"c\.jsonl:5:"):
        Cache(path, "replay")


def test_a_newline_bomb_stops_at_the_cap_without_the_memory(tmp_path: Path) -> None:
    """256 MiB of newlines in a 256 KB gzip: before, the whole text was decompressed and split in memory."""
    path = tmp_path / "bomb.jsonl.gz"
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    with path.open("wb") as out:
        out.write(packer.compress(LINES.encode()))
        newlines = b"\n" * (1024 * 1024)
        for _ in range(256):
            out.write(packer.compress(newlines))
        out.write(packer.flush())
    assert path.stat().st_size < 1024 * 1024
    tracemalloc.start()
    try:
        with pytest.raises(CassetteError, match="more than"):
            Cache(path, "replay")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024 * 1024 and MAX_CASSETTE_BYTES < 256 * 1024 * 1024


def test_one_endless_line_stops_at_the_line_cap(tmp_path: Path) -> None:
    path = tmp_path / "line.jsonl.gz"
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    with path.open("wb") as out:
        for _ in range(64):
            out.write(packer.compress(b"a" * (1024 * 1024)))
        out.write(packer.flush())
    with pytest.raises(CassetteError, match=r"line\.jsonl\.gz:1: a line longer than"):
        Cache(path, "replay")


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.floats(min_value=0.0, max_value=1.0), compressed=st.booleans())
def test_a_cassette_cut_anywhere_keeps_only_recorded_answers(tmp_path: Path, cut: float, compressed: bool) -> None:
    data = gzip.compress(LINES.encode()) if compressed else LINES.encode()
    end = int(len(data) * cut)
    path = write(tmp_path / ("c.jsonl.gz" if compressed else "c.jsonl"), data[:end])
    try:
        cache = Cache(path, "replay")
    except CassetteError as error:
        assert compressed and "not a gzip file" in str(error)  # the cut took the header itself
        return
    assert all(cache.entries[k] in GOOD for k in cache.entries)
    if not compressed:
        assert len(cache.entries) >= LINES.encode()[:end].count(b"\n")


@settings(max_examples=80, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(junk=st.binary(min_size=1, max_size=40), at=st.integers(min_value=0, max_value=len(LINES) - 1))
def test_a_damaged_cassette_raises_only_a_cassette_error(tmp_path: Path, junk: bytes, at: int) -> None:
    data = LINES.encode()
    path = write(tmp_path / "c.jsonl", data[:at] + junk + data[at:])
    try:
        Cache(path, "replay")
    except CassetteError as error:
        assert type(error) is CassetteError and str(path) in str(error)


def test_the_cache_does_not_import_the_client() -> None:
    """The cycle llm/cache.py <-> llm/client.py (hidden by a lazy import) is gone: what both need lives in
    llm/completion.py, which imports neither; the client imports the cache, never the reverse."""
    import ast

    def imported(name: str) -> set[str]:
        tree = ast.parse((ROOT / f"dskit/tooling/llm/{name}.py").read_text(encoding="utf-8"))
        return {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level}

    assert "client" not in imported("cache") and imported("completion") == set()
    assert "cache" in imported("client")
