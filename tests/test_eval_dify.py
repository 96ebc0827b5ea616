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
from dskit.tooling.eval.dify_target import ConsoleAccess, DifyTarget, parse_stream, stream_calls
from dskit.tooling.eval.flow_target import SHIPPED
from dskit.tooling.eval.runner import run_suites
from dskit.tooling.eval.suite import SUITE_DIR, load_suite
from dskit.tooling.dslrun.graphon import Conversation
from dskit.tooling.llm import ClientConfig, LLMClient
from evalkit import model
from fakes.dify_service import AppFailure, AppTurn, fake_dify, llm_node_data
from fakes.openai_server import fake_openai

LLM_TYPES = {"llm", "question-classifier", "parameter-extractor"}


class ChatflowApp:
    """The fast Chatflow in graphon, one Conversation per Dify conversation id, on a scripted model."""

    def __init__(self, model_url: str, fail_on: str = "", knowledge: list | None = None) -> None:
        import yaml

        self.text = SHIPPED["fast"].read_text(encoding="utf-8")
        self.doc = yaml.safe_load(self.text)
        self.types = {n["id"]: n["data"]["type"] for n in self.doc["workflow"]["graph"]["nodes"]}
        self.client = LLMClient(ClientConfig(model_url, "scripted"))
        self.conversations: dict[str, Conversation] = {}
        self.fail_on = fail_on
        self.turns: list = []  # graphon's TurnResult of every turn, in order
        self.knowledge = list(knowledge or [])  # what the app's knowledge base finds (none: the FAQ model is not called)

    def __call__(self, conversation_id: str, query: str) -> AppTurn:
        if query == self.fail_on:
            raise AppFailure("Node 理解：改写+路由+槽位 run failed: model timed out")
        conversation = self.conversations.setdefault(conversation_id, Conversation(
            self.text, responder=ClientResponder(self.client, node_parameters(self.doc)),
            knowledge=(lambda q: self.knowledge) if self.knowledge else None))
        result = conversation.turn(query)
        nodes = [(node, self.types[node], node) for node in result.path if self.types.get(node) in LLM_TYPES]
        shown, usage = {}, {"prompt_tokens": 0, "completion_tokens": 0, "latency": 1.5}
        for call in result.llm_calls:  # each call's own usage: its prompt and answer lengths
            own = {"prompt_tokens": call.prompt_chars, "completion_tokens": len(call.response), "latency": 0.5}
            shown[call.node_id] = llm_node_data(self.types[call.node_id], call.response, own)
            usage["prompt_tokens"] += own["prompt_tokens"]
            usage["completion_tokens"] += own["completion_tokens"]
        self.turns.append(result)
        return AppTurn(answer=result.answer, variables=dict(result.variables), nodes=nodes, usage=usage,
                       node_data=shown)


@pytest.mark.parametrize("mode", ["blocking", "streaming"])
def test_a_dify_app_is_scored_like_the_flow_target(mode: str) -> None:
    suite = load_suite(SUITE_DIR / "zh_travel_insurance.yaml")
    with fake_openai(("answer", model())) as llm, \
            fake_dify(app := ChatflowApp(llm.base_url, knowledge=suite.knowledge)) as dify:
        run = run_suites(DifyTarget(dify.base_url, dify.api_key, mode=mode), [suite])
    figures = run.figures()
    assert figures["turn_accuracy"] == 1.0 and figures["wrongful_executions"] == 0 and figures["errors"] == 0
    posts = [r for r in dify.requests if r[0] == "POST"]
    assert [p[2]["conversation_id"] for p in posts][0] == ""
    assert len({p[2]["conversation_id"] for p in posts[1:]}) == 1 and all(p[2]["response_mode"] == mode for p in posts)
    pages = [r for r in dify.requests if r[0] == "GET"]
    assert len(pages) > len(posts)  # five variables at two a page: has_more was followed
    # no title call: every message says auto_generate_name false, and Dify made none
    assert all(p[2]["auto_generate_name"] is False for p in posts) and dify.title_calls == 0
    assert run.target["title_call"].startswith("off")
    # tokens: the turn's own, in either mode
    for trace, turn in zip(run.traces, app.turns, strict=True):
        assert trace["prompt_tokens"] == sum(c.prompt_chars for c in turn.llm_calls)
        assert trace["completion_tokens"] == sum(len(c.response) for c in turn.llm_calls)
    if mode == "streaming":  # node_finished events: every call with its own tokens and the model's text
        for trace, turn in zip(run.traces, app.turns, strict=True):
            assert trace["llm_calls"] == len(turn.llm_calls)
            assert [(c["node"], c["text"], c["prompt_tokens"], c["completion_tokens"]) for c in trace["calls"]] == [
                (c.node_id, c.response, c.prompt_chars, len(c.response)) for c in turn.llm_calls]
        nodes = [c["node"] for t in run.traces for c in t["calls"]]
        assert nodes.count("understand") == 6 and nodes.count("faq_answer") == 1
        assert figures["llm_calls_per_turn"] == round(7 / 6, 3)
    else:  # the blocking answer has only the sum: the count is unknown, said so, never a made-up 1
        assert figures["llm_calls_per_turn"] == "unknown" and run.target["llm_calls"].startswith("unknown")
        assert all(t["llm_calls"] is None and t["detail"]["llm_calls"].startswith("unknown") for t in run.traces)


def test_keeping_dify_title_call_is_said_to_be_uncounted() -> None:
    suite = load_suite(SUITE_DIR / "zh_multi_intent.yaml")
    with fake_openai(("answer", model())) as llm, fake_dify(ChatflowApp(llm.base_url)) as dify:
        run = run_suites(DifyTarget(dify.base_url, dify.api_key, mode="streaming", auto_generate_name=True),
                         [suite], repeat=2)
    posts = [r[2] for r in dify.requests if r[0] == "POST"]
    assert all(p["auto_generate_name"] is True for p in posts)
    assert dify.title_calls == 2  # one per conversation, on its first message (message_cycle_manager.py)
    assert "not counted" in run.target["title_call"]
    firsts = [t for t in run.traces if t["turn"] == 1]
    assert len(firsts) == 2 and all("not counted" in t["detail"]["title_call"] for t in firsts)
    assert not any("title_call" in t["detail"] for t in run.traces if t["turn"] > 1)
    assert all(t["llm_calls"] == len(t["calls"]) for t in run.traces)  # the workflow's calls only


def _console(dify, app: ChatflowApp, token: str = "") -> ConsoleAccess:
    catalog = next(v["value"] for v in app.doc["workflow"]["environment_variables"] if v["name"] == "TASK_CATALOG")
    dify.environment["TASK_CATALOG"] = catalog
    return ConsoleAccess(dify.base_url.replace("/v1", "/console/api"), token or dify.console_token, dify.app_id)


def test_a_suite_is_refused_against_an_app_with_another_catalog() -> None:
    own, english = load_suite(SUITE_DIR / "zh_multi_intent.yaml"), load_suite(SUITE_DIR / "en_booking.yaml")
    with fake_openai(("answer", model())) as llm, fake_dify(app := ChatflowApp(llm.base_url)) as dify:
        run = run_suites(DifyTarget(dify.base_url, dify.api_key, console=_console(dify, app)), [english, own])
        posts = [r for r in dify.requests if r[0] == "POST"]
        wrong = run_suites(DifyTarget(dify.base_url, dify.api_key, console=_console(dify, app, "nope")), [own])
    assert len(posts) == len(own.turns)  # not one message of the English suite was sent
    errors = run.errors()
    assert len(errors) == 1 and errors[0].startswith("en_booking (run 1): ")
    assert "not scored: the app's TASK_CATALOG is not the suite's catalog" in errors[0]
    assert "tasks defined differently" in errors[0]
    per_suite = run.per_suite()
    assert per_suite["zh_multi_intent"]["turn_accuracy"] == 1.0
    assert per_suite["en_booking"]["not_run"] == len(english.turns)
    assert run.target["catalog_check"].startswith("TASK_CATALOG compared")
    assert "HTTP 401 unauthorized" in wrong.errors()[0]


def test_without_console_access_a_task_the_suite_does_not_know_stops_scoring() -> None:
    suite = load_suite(SUITE_DIR / "zh_telecom_subtask.yaml")
    state = json.dumps({"turn": 1, "task_stack": [{"id": "t1", "name": "book_restaurant", "slots": {},
                                                   "stage": "COLLECTING"}], "done": []})

    def restaurant_app(conversation_id: str, query: str) -> AppTurn:
        return AppTurn(answer="请问几位？", variables={"sys_context_str": state})

    with fake_dify(restaurant_app) as dify:
        run = run_suites(DifyTarget(dify.base_url, dify.api_key), [suite])
    assert run.errors() == ["zh_telecom_subtask (run 1): turn 1: the app's catalog is not the suite's: its state "
                            "has task(s) book_restaurant that the suite's catalog does not; not scored"]
    assert run.figures()["not_run"] == len(suite.turns) - 1
    assert "unnoticed" in run.target["catalog_check"]


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


def test_each_call_keeps_its_own_tokens_and_text_and_says_when_the_event_hides_them() -> None:
    usage = {"prompt_tokens": 30, "completion_tokens": 4}
    nodes = [{"node_id": "understand", "node_type": "llm", **llm_node_data("llm", '{"commands": []}', usage)},
             {"node_id": "classify", "node_type": "question-classifier",
              **llm_node_data("question-classifier", "订餐", {"prompt_tokens": 20, "completion_tokens": 2})},
             {"node_id": "extract", "node_type": "parameter-extractor",
              **llm_node_data("parameter-extractor", '{"people": "2"}', {"prompt_tokens": 10, "completion_tokens": 3})}]
    calls, unknown = stream_calls(nodes, {"prompt_tokens": 60, "completion_tokens": 9})
    assert unknown == []
    assert [(c.node, c.text, c.prompt_tokens, c.completion_tokens) for c in calls] == [
        ("understand", '{"commands": []}', 30, 4), ("classify", "", 20, 2), ("extract", '{"people": "2"}', 10, 3)]
    hidden = [nodes[0], {"node_id": "faq_answer", "node_type": "llm", "outputs": {}, "process_data": None}]
    calls, unknown = stream_calls(hidden, {"prompt_tokens": 100, "completion_tokens": 10})
    assert unknown == ["faq_answer"] and (calls[1].prompt_tokens, calls[1].completion_tokens) == (70, 6)


def test_the_cli_needs_a_dify_url(capsys) -> None:
    assert main(["eval", "--target", "dify"]) == 2
    assert "--dify-url" in capsys.readouterr().err


def test_the_cli_runs_a_dify_app(capsys, monkeypatch) -> None:
    with fake_openai(("answer", model())) as llm, fake_dify(app := ChatflowApp(llm.base_url)) as dify:
        console = _console(dify, app)
        monkeypatch.setenv("DIFY_TEST_KEY", dify.api_key)
        monkeypatch.setenv("DIFY_TEST_CONSOLE", dify.console_token)
        code = main(["eval", str(SUITE_DIR / "zh_multi_intent.yaml"), str(SUITE_DIR / "en_booking.yaml"),
                     "--target", "dify", "--dify-url", dify.base_url, "--dify-key-env", "DIFY_TEST_KEY",
                     "--dify-mode", "streaming", "--dify-auto-name", "--dify-console-url", console.base_url,
                     "--dify-app-id", dify.app_id, "--dify-console-token-env", "DIFY_TEST_CONSOLE", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 1  # the English suite was refused
    assert result["runs"][0]["label"] == "dify:streaming"
    assert result["runs"][0]["suites"]["zh_multi_intent"]["turn_accuracy"] == 1.0
    assert result["runs"][0]["auto_generate_name"] is True and dify.title_calls == 1


def test_the_cli_needs_the_whole_console_access(capsys) -> None:
    assert main(["eval", "--target", "dify", "--dify-url", "http://127.0.0.1:9/v1",
                 "--dify-console-url", "http://127.0.0.1:9/console/api"]) == 2
    assert "--dify-app-id" in capsys.readouterr().err


def test_a_stream_without_node_events_reports_calls_as_unknown() -> None:
    suite = load_suite(SUITE_DIR / "zh_telecom_subtask.yaml")

    def quiet_app(conversation_id: str, query: str) -> AppTurn:  # usage, but no LLM node in the events
        return AppTurn(answer="好的", variables={"sys_context_str": json.dumps({"turn": 1, "task_stack": []})},
                       usage={"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55})

    with fake_dify(quiet_app) as dify:
        run = run_suites(DifyTarget(dify.base_url, dify.api_key, mode="streaming"), [suite])
    first = run.traces[0]
    assert first["llm_calls"] is None and (first["prompt_tokens"], first["completion_tokens"]) == (50, 5)
    assert first["detail"]["llm_calls"].startswith("unknown (the stream carried no node_finished")
    assert run.figures()["llm_calls_per_turn"] == "unknown"
