"""track_state and compress_history: the tools that call a model, through the SDK and a fake daemon."""

from __future__ import annotations

import dify_plugin  # noqa: F401  (first: gevent monkey-patching)

import json

import pytest

from dskit.context.history import render_history
from dskit.tooling.dslrun.plugin_daemon import FakeDaemon, FakeDaemonError
from dskit.tooling.dslrun.plugin_tools import PLUGIN_ROOT, invoke
from fakes.sdk import assert_consistent

CATALOG = (PLUGIN_ROOT / "examples/catalogs/restaurant.json").read_text(encoding="utf-8")
MODEL = {"provider": "langgenius/openai/openai", "model": "gpt-4o-mini", "model_type": "llm", "mode": "chat",
         "completion_params": {"temperature": 0}}
START = json.dumps({"rewritten_query": "订周五晚上8点三个人", "commands": [
    {"type": "start_task", "task": "book_restaurant", "slots": {"date": "周五", "time": "20:00", "people": 3}}]},
    ensure_ascii=False)


def daemon_with(monkeypatch: pytest.MonkeyPatch, *replies, **kwargs) -> FakeDaemon:
    return FakeDaemon(manifest=PLUGIN_ROOT / "manifest.yaml", llm_replies=replies, **kwargs).patch(monkeypatch)


def track(**params):
    return invoke("track_state", {"query": "帮我订周五晚上8点，三个人", "catalog": CATALOG, "model": MODEL, **params})


# ------------------------------------------------------------------ track_state


def test_track_state_samples_greedily_whatever_the_selector_says(monkeypatch: pytest.MonkeyPatch) -> None:
    daemon = daemon_with(monkeypatch, START)
    track(model={**MODEL, "completion_params": {"temperature": 0.9, "max_tokens": 300, "seed": 1}})
    assert daemon.llm_requests[0]["completion_params"] == {"temperature": 0.0, "seed": 42, "max_tokens": 300}


def test_track_state_one_call(monkeypatch: pytest.MonkeyPatch) -> None:
    daemon = daemon_with(monkeypatch, "```json\n" + START + "\n```")
    out = track(history="user: 你好\n\nassistant: 您好，请问有什么可以帮您？")
    assert_consistent("track_state", out)
    v = out.variables
    assert v["ok"] is True and v["next_action"] == "ask_slot" and v["slot"] == "restaurant"
    assert v["attempts"] == 1 and v["usage"]["calls"] == 1 and v["usage"]["total_tokens"] > 0
    assert v["understanding"].startswith("```json")
    request = daemon.llm_requests[0]
    assert request["provider"] == MODEL["provider"] and request["model"] == MODEL["model"]
    # greedy with a fixed seed whatever the selector holds (dskit.context.prompts.UNDERSTANDING_SAMPLING)
    assert request["completion_params"] == {"temperature": 0.0, "seed": 42} and request["stream"] is False
    system, user = request["prompt_messages"]
    assert system["role"] == "system" and "start_task" in system["content"]
    assert "book_restaurant" in user["content"] and "帮我订周五晚上8点，三个人" in user["content"]
    assert "你好" not in user["content"]  # a greeting turn is noise: left out of the prompt


def test_track_state_retries_an_unusable_answer_once(monkeypatch: pytest.MonkeyPatch) -> None:
    daemon = daemon_with(monkeypatch, "抱歉，我不太明白。", START)
    v = track().variables
    assert v["attempts"] == 2 and v["usage"]["calls"] == 2 and v["next_action"] == "ask_slot"
    second = daemon.llm_requests[1]["prompt_messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert second[2]["content"] == "抱歉，我不太明白。" and "JSON" in second[3]["content"]


def test_track_state_two_unusable_answers_fall_back(monkeypatch: pytest.MonkeyPatch) -> None:
    daemon_with(monkeypatch, "no idea", "still no idea")
    v = track().variables
    assert v["ok"] is True and v["attempts"] == 2 and v["next_action"] == "fallback" and v["question"]
    assert json.loads(v["sys_context_str"])["counters"]["parse_failures"] == 1


def test_track_state_model_failure_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    daemon_with(monkeypatch, START)
    state = track().variables["sys_context_str"]
    daemon_with(monkeypatch, FakeDaemonError("invoke llm failed: quota exceeded"))
    out = track(sys_context_str=state)
    v = out.variables
    assert v["ok"] is False and v["error_param"] == "model" and "quota exceeded" in out.text
    assert v["sys_context_str"] == state and v["next_action"] == "fallback"


def test_track_state_needs_a_model(monkeypatch: pytest.MonkeyPatch) -> None:
    daemon = daemon_with(monkeypatch, START)
    for model in (None, {}, {"provider": "x"}, "gpt-4o"):
        out = track(model=model)
        assert out.variables["ok"] is False and out.variables["error_param"] == "model"
    assert daemon.llm_requests == []


def test_track_state_without_llm_permission(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text((PLUGIN_ROOT / "manifest.yaml").read_text(encoding="utf-8").replace("llm: true", "llm: false"),
                        encoding="utf-8")
    FakeDaemon(manifest=manifest, llm_replies=[START]).patch(monkeypatch)
    out = track()
    assert out.variables["ok"] is False and "permission denied" in out.text


def test_track_state_bad_catalog_calls_no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    daemon = daemon_with(monkeypatch, START)
    out = track(catalog="{}")
    assert out.variables["error_param"] == "catalog"
    assert daemon.llm_requests == []


def test_track_state_english(monkeypatch: pytest.MonkeyPatch) -> None:
    daemon = daemon_with(monkeypatch, START)
    v = track(lang="en").variables
    assert "You are the dialogue understanding step" in daemon.llm_requests[0]["prompt_messages"][0]["content"]
    assert v["question"].startswith("OK, noted")  # engine text in English; the catalog's own texts stay as written


# ------------------------------------------------------------------ compress_history


def long_history(n: int) -> str:
    turns = [{"user": f"第{i}轮：我想订{i}号的位子，{i + 1}个人", "assistant": f"好的，已记下日期：{i}号，人数：{i + 1}",
              "tag": ""} for i in range(n)]
    return render_history(turns)


def compress(**params):
    return invoke("compress_history", {"history": long_history(6), "user_query": "改到7点",
                                       "answer": "好的，已记下时间：19:00", "max_turns": 3, **params})


def test_no_overflow_no_summary_no_call(monkeypatch: pytest.MonkeyPatch) -> None:
    daemon = daemon_with(monkeypatch, "unused")
    out = invoke("compress_history", {"history": "", "user_query": "你好", "answer": "您好", "model": MODEL})
    assert_consistent("compress_history", out)
    v = out.variables
    assert v["summarized"] is False and v["summary_source"] == "" and v["turns"] == 1
    assert daemon.llm_requests == [] and v["usage"]["calls"] == 0


def test_overflow_summarised_by_the_picked_model(monkeypatch: pytest.MonkeyPatch) -> None:
    daemon = daemon_with(monkeypatch, "- 用户先后订过0号到3号的位子")
    out = compress(model=MODEL)
    v = out.variables
    assert v["summarized"] is True and v["summary_source"] == "model" and v["overflow_turns"] == 4
    assert v["turns"] == 3 and v["usage"]["calls"] == 1
    assert v["summary"].startswith("- 用户先后订过0号到3号的位子")
    assert "第0轮" in daemon.llm_requests[0]["prompt_messages"][1]["content"]
    assert "第6轮" not in v["history"] and "改到7点" in v["history"]


def test_overflow_summarised_extractively_without_a_model(monkeypatch: pytest.MonkeyPatch) -> None:
    daemon = daemon_with(monkeypatch)
    v = compress().variables
    assert v["summarized"] is True and v["summary_source"] == "extractive" and v["summary"]
    assert daemon.calls == []


def test_a_saved_workspace_summarizer_uses_the_picked_model_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dify's summary call returns short text unchanged (api/core/plugin/backwards_invocation/model.py
    ``invoke_summary``: under 60% of the default model's context window), so it is never used: an app
    saved with ``summarizer = workspace`` gets the picked model (or the extractive merge) and a notice."""
    daemon = daemon_with(monkeypatch, "- 用户订过多次位子，最近一次4号、5个人",
                         summary=lambda text, instruction: text)
    v = compress(summarizer="workspace", model=MODEL).variables
    assert v["summary_source"] == "model" and "4号" in v["summary"] and "自动" in v["notice"]
    assert daemon.summary_requests == [] and len(daemon.llm_requests) == 1
    v = compress(summarizer="workspace").variables
    assert v["summary_source"] == "extractive" and v["summary"] and daemon.summary_requests == []


def test_model_failure_falls_back_to_extractive(monkeypatch: pytest.MonkeyPatch) -> None:
    daemon_with(monkeypatch, FakeDaemonError("invoke llm failed: model not found"))
    out = compress(model=MODEL)
    v = out.variables
    assert v["ok"] is True and v["summary_source"] == "extractive" and "model not found" in v["notice"]
    assert v["summary"]


def test_refusing_model_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    daemon_with(monkeypatch, "抱歉，我无法完成这个请求。")
    v = compress(model=MODEL).variables
    assert v["summary_source"] == "extractive"


@pytest.mark.parametrize("params, param_name", [
    ({"max_turns": 0}, "max_turns"), ({"max_bytes": 10}, "max_bytes"), ({"tag": "important"}, "tag"),
    ({"summarizer": "gpt"}, "summarizer"), ({"model": "gpt-4o"}, "model"), ({"answer": "x" * 60_000}, "answer"),
])
def test_compress_bad_input(monkeypatch: pytest.MonkeyPatch, params: dict, param_name: str) -> None:
    daemon_with(monkeypatch)
    out = compress(**params)
    v = out.variables
    assert v["ok"] is False and v["error_param"] == param_name and param_name in out.text
    assert v["history"] == long_history(6)  # handed back unchanged


def test_track_state_asks_for_structured_output_with_the_catalogs_schema_when_told(monkeypatch: pytest.MonkeyPatch) -> None:
    daemon = daemon_with(monkeypatch, START)
    out = track(structured_output="true")
    assert out.variables["ok"] is True and out.variables["attempts"] == 1
    schema = daemon.structured_requests[0]["structured_output_schema"]
    assert "book_restaurant" in json.dumps(schema) and daemon.calls.count("llm_structured_output") == 1


def test_track_state_falls_back_to_the_plain_call_when_dify_refuses_structured_output(monkeypatch: pytest.MonkeyPatch) -> None:
    daemon = daemon_with(monkeypatch, START, structured_refusal="unsupported invoke type: llm_structured_output")
    out = track(structured_output="true")
    assert out.variables["ok"] is True and out.variables["next_action"] == "ask_slot"
    assert out.variables["attempts"] == 2 and daemon.calls.count("llm") == 1
