"""``dskit eval --target dify`` against a local fake of Dify's Service API (tests/fakes/dify_service.py).

Behind the fake runs the real fast Chatflow in graphon with the perfect model of
tests/fixtures/eval/oracle.yaml, so a Dify run must score exactly as the flow target does; the
conversation variables come back through the documented paginated endpoint.
"""

from __future__ import annotations

import json

import pytest

from dskit.tooling.cli import main
from dskit.tooling.dslrun.live import ClientResponder, node_parameters
from dskit.tooling.eval.dify_target import DifyTarget, parse_stream
from dskit.tooling.eval.flow_target import SHIPPED
from dskit.tooling.eval.runner import run_suites
from dskit.tooling.eval.suite import SUITE_DIR, load_suite
from dskit.tooling.dslrun.graphon import Conversation
from dskit.tooling.llm import ClientConfig, LLMClient
from evalkit import model
from fakes.dify_service import AppFailure, AppTurn, fake_dify
from fakes.openai_server import fake_openai

LLM_TYPES = {"llm", "question-classifier", "parameter-extractor"}


class ChatflowApp:
    """The fast Chatflow in graphon, one Conversation per Dify conversation id, on a scripted model."""

    def __init__(self, model_url: str, fail_on: str = "") -> None:
        import yaml

        self.text = SHIPPED["fast"].read_text(encoding="utf-8")
        self.doc = yaml.safe_load(self.text)
        self.types = {n["id"]: n["data"]["type"] for n in self.doc["workflow"]["graph"]["nodes"]}
        self.client = LLMClient(ClientConfig(model_url, "scripted"))
        self.conversations: dict[str, Conversation] = {}
        self.fail_on = fail_on

    def __call__(self, conversation_id: str, query: str) -> AppTurn:
        if query == self.fail_on:
            raise AppFailure("Node 理解：改写+路由+槽位 run failed: model timed out")
        conversation = self.conversations.setdefault(conversation_id, Conversation(
            self.text, responder=ClientResponder(self.client, node_parameters(self.doc))))
        result = conversation.turn(query)
        nodes = [(node, self.types[node], node) for node in result.path if self.types.get(node) in LLM_TYPES]
        return AppTurn(answer=result.answer, variables=dict(result.variables), nodes=nodes,
                       usage={"prompt_tokens": 100 * len(nodes), "completion_tokens": 10 * len(nodes),
                              "latency": 1.5})


@pytest.mark.parametrize("mode", ["blocking", "streaming"])
def test_a_dify_app_is_scored_like_the_flow_target(mode: str) -> None:
    suite = load_suite(SUITE_DIR / "zh_travel_insurance.yaml")
    with fake_openai(("answer", model())) as llm, fake_dify(ChatflowApp(llm.base_url)) as dify:
        run = run_suites(DifyTarget(dify.base_url, dify.api_key, mode=mode), [suite])
    figures = run.figures()
    assert figures["turn_accuracy"] == 1.0 and figures["wrongful_executions"] == 0 and figures["errors"] == 0
    assert figures["prompt_tokens_per_turn"] > 0
    posts = [r for r in dify.requests if r[0] == "POST"]
    assert [p[2]["conversation_id"] for p in posts][0] == ""
    assert len({p[2]["conversation_id"] for p in posts[1:]}) == 1 and all(p[2]["response_mode"] == mode for p in posts)
    pages = [r for r in dify.requests if r[0] == "GET"]
    assert len(pages) > len(posts)  # five variables at two a page: has_more was followed
    if mode == "streaming":  # node_finished events: one understand call a turn, plus the FAQ answer
        nodes = [c["node"] for t in run.traces for c in t["calls"]]
        assert nodes.count("understand") == 6 and nodes.count("faq_answer") == 1


def test_documented_errors_become_one_line_turn_errors() -> None:
    suite = load_suite(SUITE_DIR / "zh_multi_intent.yaml")
    with fake_openai(("answer", model())) as llm, fake_dify(ChatflowApp(llm.base_url)) as dify:
        dify.faults.extend([("http", 400, "app_unavailable", "App unavailable, please check your app configurations."),
                            ("http", 429, "too_many_requests", "Too many requests. Please try again later.")])
        first = run_suites(DifyTarget(dify.base_url, dify.api_key), [suite])
        second = run_suites(DifyTarget(dify.base_url, dify.api_key), [suite])
        dify.faults.append(("stream_error", "provider_quota_exceeded", "Your quota has been exhausted."))
        stream = run_suites(DifyTarget(dify.base_url, dify.api_key, mode="streaming"), [suite])
        wrong_key = run_suites(DifyTarget(dify.base_url, "app-wrong"), [suite])
        posts = len([r for r in dify.requests if r[0] == "POST"])
    assert first.errors() == ["zh_multi_intent (run 1): turn 1: HTTP 400 app_unavailable: App unavailable, "
                              "please check your app configurations."]
    assert second.errors() == ["zh_multi_intent (run 1): turn 1: HTTP 429 too_many_requests: Too many requests. "
                               "Please try again later."]
    assert stream.errors() == ["zh_multi_intent (run 1): turn 1: stream error 400 provider_quota_exceeded: "
                               "Your quota has been exhausted."]
    assert "HTTP 401 unauthorized" in wrong_key.errors()[0]
    assert posts == 4  # no chat message was ever sent twice
    assert first.figures()["not_run"] == len(suite.turns) - 1


def test_a_failed_workflow_mid_conversation_stops_it_and_keeps_the_earlier_state() -> None:
    suite = load_suite(SUITE_DIR / "zh_multi_intent.yaml")
    with fake_openai(("answer", model())) as llm, \
            fake_dify(ChatflowApp(llm.base_url, fail_on=suite.turns[2].user)) as dify:
        run = run_suites(DifyTarget(dify.base_url, dify.api_key, mode="streaming"), [suite])
    assert run.errors() == ["zh_multi_intent (run 1): turn 3: stream error 400 completion_request_error: "
                            "Node 理解：改写+路由+槽位 run failed: model timed out"]
    assert [t["passed"] for t in run.traces] == [True, True, False]
    assert run.traces[2]["state"] == run.traces[1]["state"]


def test_stream_parsing_follows_the_documented_events() -> None:
    body = ("event: ping\n\n"
            'data: {"event": "message", "conversation_id": "c1", "answer": "你"}\n\n'
            'data: {"event": "message", "conversation_id": "c1", "answer": "好"}\n\n'
            'data: {"event": "message_replace", "conversation_id": "c1", "answer": "已替换"}\n\n'
            'data: {"event": "node_finished", "data": {"node_id": "understand", "node_type": "llm"}}\n\n'
            'data: {"event": "node_finished", "data": {"node_id": "state", "node_type": "code"}}\n\n'
            'data: {"event": "message_end", "metadata": {"usage": {"prompt_tokens": 9}}}\n\n'
            'data: {"event": "workflow_finished", "data": {"status": "succeeded"}}\n\n')
    result = parse_stream(body)
    assert result["answer"] == "已替换" and result["conversation_id"] == "c1"
    assert [n["node_id"] for n in result["llm_nodes"]] == ["understand"] and result["usage"] == {"prompt_tokens": 9}
    assert result["error"] == "" and result["status"] == "succeeded"


def test_the_cli_needs_a_dify_url(capsys) -> None:
    assert main(["eval", "--target", "dify"]) == 2
    assert "--dify-url" in capsys.readouterr().err


def test_the_cli_runs_a_dify_app(capsys, monkeypatch) -> None:
    with fake_openai(("answer", model())) as llm, fake_dify(ChatflowApp(llm.base_url)) as dify:
        monkeypatch.setenv("DIFY_TEST_KEY", dify.api_key)
        code = main(["eval", str(SUITE_DIR / "zh_multi_intent.yaml"), "--target", "dify", "--dify-url",
                     dify.base_url, "--dify-key-env", "DIFY_TEST_KEY", "--dify-mode", "streaming", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["runs"][0]["figures"]["turn_accuracy"] == 1.0
    assert result["runs"][0]["label"] == "dify:streaming"
