"""``dskit eval --target flow --layout plugin``: the plugin Chatflow in graphon, our tools behind its tool
nodes, every model call — the LLM nodes' and the tools' through the plugin daemon — on one client.

The model is a local OpenAI-compatible server (tests/fakes/openai_server.py) playing either the perfect
model of tests/fixtures/eval/oracle.yaml or the 1.5B model's recorded answers
(tests/cassettes/heldout_before_fast_answers.jsonl, by user message); replays use the client's cassette
with no server at all. Figures are checked as counts.

Import ``dify_plugin`` first: it monkey-patches with gevent.
"""

from __future__ import annotations

import pytest

import dify_plugin  # noqa: F401  (first: gevent monkey-patching)

import json
from collections import Counter
from pathlib import Path
from typing import Any

from dskit.tooling.cli import main
from dskit.tooling.eval.flow_target import FlowTarget
from dskit.tooling.eval.runner import run_suites
from dskit.tooling.eval.suite import SUITE_DIR, Suite, load_suite
from dskit.tooling.llm import Cache, ClientConfig, LLMClient
from evalkit import latest_message, model
from fakes.openai_server import fake_openai

pytestmark = pytest.mark.slow  # generation, graphon runs or recorded-model replays: `-m "not slow"` skips them

ROOT = Path(__file__).resolve().parents[1]
HELDOUT = SUITE_DIR / "heldout" / "seed000_booking.yaml"
RECORDED = ROOT / "tests" / "cassettes" / "heldout_before_fast_answers.jsonl"
CONVERSATION_VARIABLES = ("history", "summary", "sys_context_str")  # the same three in both layouts


def suite(name: str) -> Suite:
    return load_suite(SUITE_DIR / f"{name}.yaml")


def recorded_model(suite_name: str) -> Any:
    """The 1.5B model's recorded understanding answers for one held-out conversation, by user message;
    any other call (FAQ, chitchat, a repair request) gets a short sentence."""
    answers = {}
    for line in RECORDED.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if entry["suite"] == suite_name:
            answers[entry["user"]] = entry["understand"]

    def answer(body: dict[str, Any]) -> str:
        return answers.get(latest_message(body) or "", "好的。")

    return answer


# ------------------------------------------------------------------------------ replay, no network


def test_the_plugin_layout_replays_recorded_answers_with_no_network(tmp_path: Path, capsys) -> None:
    """Recorded once (the 1.5B model's answers, served locally), then replayed from the cassette with no
    endpoint at all: the same turns, the state of each turn read from the Chatflow's conversation
    variable, one track_state call a turn plus the answer LLMs, every one from the cassette."""
    cassette, first, again = tmp_path / "plugin.jsonl", tmp_path / "first.jsonl", tmp_path / "again.jsonl"
    common = ["eval", str(HELDOUT), "--target", "flow", "--layout", "plugin", "--model", "qwen-1.5b", "--json"]
    with fake_openai(("answer", recorded_model("heldout_seed000_booking"))) as fake:
        assert main([*common, "--base-url", fake.base_url, "--record", str(cassette), "--trace", str(first)]) == 0
        asked = len(fake.requests)
    recorded = json.loads(capsys.readouterr().out)["runs"][0]
    assert main([*common, "--replay", str(cassette), "--trace", str(again)]) == 0  # replay.invalid: never contacted
    replayed = json.loads(capsys.readouterr().out)["runs"][0]

    turns = [json.loads(line) for line in again.read_text(encoding="utf-8").splitlines()]
    before = [json.loads(line) for line in first.read_text(encoding="utf-8").splitlines()]
    count = len(load_suite(HELDOUT).turns)
    assert len(turns) == count == 5 and not any(t["error"] for t in turns)
    calls = [c for t in turns for c in t["calls"]]
    assert all(c["cached"] for c in calls) and not any(c["cached"] for t in before for c in t["calls"])
    assert [c["node"] for t in turns for c in t["calls"]].count("track_state") == count
    assert len(calls) == asked == sum(t["llm_calls"] for t in turns)
    assert sum(c["prompt_tokens"] for c in calls) == sum(t["prompt_tokens"] for t in turns) > 0
    # the state each turn is what the Chatflow saved, the same as when it was recorded
    assert [t["state"] for t in turns] == [t["state"] for t in before]
    assert turns[0]["state"][0]["task"] == "book_restaurant" and turns[0]["state"][0]["slots"]["people"] == 3
    for key in ("turns", "jga", "task_success", "wrongful_executions", "llm_calls_per_turn", "prompt_tokens_per_turn"):
        assert replayed["figures"][key] == recorded["figures"][key], key
    assert replayed["figures"]["llm_calls_per_turn"] == round(asked / count, 3)


def test_the_plugin_layout_reaches_the_fast_layouts_state_from_the_same_answers() -> None:
    """The same recorded answers through the fast Chatflow (code nodes) and the plugin Chatflow (the
    tools): every turn ends in the same dialogue state, read from each flow's conversation variable."""
    answer = recorded_model("heldout_seed000_booking")
    states = {}
    for layout in ("fast", "plugin"):
        with fake_openai(("answer", answer)) as fake:
            run = run_suites(FlowTarget(LLMClient(ClientConfig(fake.base_url, "qwen-1.5b")), layout=layout),
                             [load_suite(HELDOUT)])
        assert not run.errors()
        states[layout] = [t["state"] for t in run.traces]
    assert states["plugin"] == states["fast"] and len(states["fast"]) == 5


def test_a_model_that_fails_is_the_turns_one_line_error_in_the_plugin_layout() -> None:
    """track_state reports a failed model call in its outputs and the flow goes on; the eval still counts
    the turn as not run, with the reason, as for an LLM node of the other layouts."""
    with fake_openai(("status", 500, {"error": {"message": "model crashed"}})) as fake:
        client = LLMClient(ClientConfig(fake.base_url, "m", retries=0))
        run = run_suites(FlowTarget(client, layout="plugin"), [suite("zh_booking_table")])
    [error] = run.errors()
    assert "turn 1: track_state:" in error and "HTTP 500: model crashed" in error
    assert run.figures()["errors"] == 1 and len(fake.requests) == 1


# ------------------------------------------------------------------------------ the same requests as fast


def _in_step(shipped: list[Suite], share: Cache | None = None) -> dict[str, list[tuple[str, dict]]]:
    """Both layouts turn by turn, the plugin conversation given the fast one's conversation variables
    before each turn (the same state, history and summary; the history as the fast one's next turn reads
    it, with the last FAQ or small-talk answer in its place): each request the model got, by layout, and
    under "after_answer" whether each turn followed such an answer (one flag per turn)."""
    from dskit.tooling.dslrun.scenarios import memory_text

    requests: dict[str, list[tuple[str, dict]]] = {"fast": [], "plugin": []}
    after_answer: list[tuple[str, dict]] = []
    with fake_openai(("answer", model())) as fake:
        clients = {layout: LLMClient(ClientConfig(fake.base_url, "scripted"), cache=share)
                   for layout in requests}
        for item in shipped:
            flows = {layout: FlowTarget(clients[layout], layout=layout).conversation(item, f"{item.name}-1")
                     for layout in requests}
            for turn in item.turns:
                fast_variables = flows["fast"].conversation.variables
                flows["plugin"].conversation.variables.update(
                    {name: fast_variables[name] for name in CONVERSATION_VARIABLES}, history=memory_text(fast_variables))
                after_answer.append((turn.user, {"pending": bool(fast_variables["reply_pending"])}))
                for layout, flow in flows.items():
                    seen = len(fake.requests)
                    output = flow.turn(turn.user)
                    assert not output.error, (layout, turn.user, output.error)
                    nodes = [c.node for c in output.calls if not c.cached]
                    requests[layout] += list(zip(nodes, fake.requests[seen:], strict=True))
    return {**requests, "after_answer": after_answer}


def test_the_plugin_layout_sends_the_fast_layouts_understanding_request_byte_for_byte() -> None:
    """Same turn, same conversation variables: track_state's model call (through the SDK and the daemon)
    and the fast Chatflow's understand node send the same request — messages, temperature 0, seed,
    max_tokens, JSON mode — so a cache or cassette recorded with one layout answers the other."""
    shipped = [suite("zh_travel_insurance"), suite("en_errands"), suite("zh_noise_reset_handoff")]
    requests = _in_step(shipped)
    after_answer = [flag["pending"] for _, flag in requests.pop("after_answer")]
    understand = {layout: [body for node, body in calls if node in ("understand", "track_state")]
                  for layout, calls in requests.items()}
    assert len(understand["fast"]) == len(understand["plugin"]) == sum(len(s.turns) for s in shipped)
    # Issue 40: no turn reads a FAQ or small-talk answer (the memory keeps the engine's own text of such a
    # turn), so every turn, the one after such an answer too, sends the same bytes.
    assert sum(after_answer) == 0
    assert understand["plugin"] == understand["fast"]
    first = understand["plugin"][0]
    assert first["temperature"] == 0.0 and first["seed"] == 42 and first["max_tokens"] == 512
    assert first["response_format"] == {"type": "json_object"}
    assert [m["role"] for m in first["messages"]] == ["system", "user"]


def test_with_one_cache_the_plugin_layout_reuses_every_understanding_answer(tmp_path: Path) -> None:
    """One cache for both layouts: the plugin layout asks the model for none of its understanding calls."""
    shipped = [suite("zh_travel_insurance"), suite("en_errands")]
    requests = _in_step(shipped, Cache(tmp_path / "shared.jsonl"))
    after_answer = sum(flag["pending"] for _, flag in requests.pop("after_answer"))
    assert Counter(node for node, _ in requests["fast"])["understand"] == sum(len(s.turns) for s in shipped)
    # but on the turns right after a FAQ or small-talk answer (see above)
    assert len([node for node, _ in requests["plugin"] if node == "track_state"]) <= after_answer


def test_the_answer_llms_of_the_two_layouts_are_asked_differently() -> None:
    """Where the layouts' own Chatflows differ, so do the requests (and a cache shared between them
    misses): the plugin's FAQ answer is asked the rewritten message plus the recalled long-term
    memories (the fast one: the question of the FAQ command); its chitchat prompt names the current task
    by its name, the fast one by its label, and adds the memories. Same node parameters."""
    shipped = [suite("zh_travel_insurance"), suite("en_errands")]
    requests = _in_step(shipped)
    requests.pop("after_answer")
    answers = {layout: [(node, body) for node, body in calls if node in ("faq_answer", "chat_answer")]
               for layout, calls in requests.items()}
    assert [n for n, _ in answers["plugin"]] == [n for n, _ in answers["fast"]] and answers["fast"]
    for (node, fast), (_, plugin) in zip(answers["fast"], answers["plugin"], strict=True):
        assert {k: v for k, v in fast.items() if k != "messages"} == {k: v for k, v in plugin.items() if k != "messages"}
        assert plugin["messages"] != fast["messages"]
        if node == "faq_answer":
            assert plugin["messages"][0] == fast["messages"][0]  # the same passages, the same instructions
            assert plugin["messages"][1]["content"].endswith("\n\n")  # no memories recalled: an empty block
        else:
            assert plugin["messages"][1]["content"] == fast["messages"][1]["content"] + "\n\n"
