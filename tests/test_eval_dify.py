"""``dskit eval --target dify`` against a local fake of Dify's Service API (tests/fakes/dify_service.py).

Behind the fake runs the real fast Chatflow in graphon with the perfect model of
tests/fixtures/eval/oracle.yaml, so a Dify run must score exactly as the flow target does; the
conversation variables come back through the documented paginated endpoint.
"""

from __future__ import annotations

import base64
import json

import pytest

from dskit.tooling.cli import main
from dskit.tooling.dslrun.live import ClientResponder, node_parameters
from dskit.tooling.eval.dify_console import ConsoleAccess
from dskit.tooling.eval.dify_target import DifyTarget, parse_stream, stream_calls
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


def _console(dify, app: ChatflowApp, **sign_in: str) -> ConsoleAccess:
    """Console access to the fake, its published TASK_CATALOG the app's; signed in with the account's
    email and password (the web UI's login) unless ``sign_in`` says otherwise."""
    catalog = next(v["value"] for v in app.doc["workflow"]["environment_variables"] if v["name"] == "TASK_CATALOG")
    dify.environment["TASK_CATALOG"] = catalog
    return ConsoleAccess(dify.base_url.replace("/v1", "/console/api"), dify.app_id,
                         **(sign_in or {"email": dify.email, "password": dify.password}))


def test_a_suite_is_refused_against_an_app_with_another_catalog() -> None:
    own, english = load_suite(SUITE_DIR / "zh_multi_intent.yaml"), load_suite(SUITE_DIR / "en_booking.yaml")
    with fake_openai(("answer", model())) as llm, fake_dify(app := ChatflowApp(llm.base_url)) as dify:
        run = run_suites(DifyTarget(dify.base_url, dify.api_key, console=_console(dify, app)), [english, own])
        posts = [r for r in dify.requests if r[0] == "POST" and r[1] == "/v1/chat-messages"]
    assert len(posts) == len(own.turns)  # not one message of the English suite was sent
    errors = run.errors()
    assert len(errors) == 1 and errors[0].startswith("en_booking (run 1): ")
    assert "not scored: the app's TASK_CATALOG is not the suite's catalog" in errors[0]
    assert "tasks defined differently" in errors[0]
    per_suite = run.per_suite()
    assert per_suite["zh_multi_intent"]["turn_accuracy"] == 1.0
    assert per_suite["en_booking"]["not_run"] == len(english.turns)
    assert run.target["catalog_check"].startswith("TASK_CATALOG compared through the console API (published")
    assert not run.target["catalog_check_failed"]


def test_the_console_check_logs_in_as_the_web_ui_and_sends_the_csrf_token() -> None:
    """Dify 1.12 checks X-CSRF-Token against the csrf_token cookie on every console call (api/libs/login.py,
    api/libs/token.py): a login's cookies and that header read the published workflow, on http and on
    https (where the cookies are named __Host-...)."""
    suite = load_suite(SUITE_DIR / "zh_multi_intent.yaml")
    for secure in (False, True):
        with fake_openai(("answer", model())) as llm, \
                fake_dify(app := ChatflowApp(llm.base_url), secure=secure) as dify:
            dify.draft_environment = {"TASK_CATALOG": "{}"}  # the draft differs: only the published one matches
            run = run_suites(DifyTarget(dify.base_url, dify.api_key, console=_console(dify, app)), [suite])
        assert run.figures()["turn_accuracy"] == 1.0 and run.errors() == []
        assert [json.loads(json.dumps(b)) for b in dify.logins] == [
            {"email": dify.email, "password": base64.b64encode(dify.password.encode()).decode(), "remember_me": False}]
        (read,) = dify.console_headers  # the published workflow, read once, with the login's CSRF token
        prefix = "__Host-" if secure else ""
        cookies = dict(part.strip().split("=", 1) for part in read["Cookie"].split(";"))
        assert read["X-CSRF-Token"] == cookies[f"{prefix}csrf_token"] and f"{prefix}access_token" in cookies
        assert "published workflow, login sign-in" in run.target["catalog_check"]


def test_without_a_login_the_check_reads_the_draft_as_dify_allows() -> None:
    """A bearer token or an admin API key (with its workspace header) carries no CSRF token: Dify 1.12
    refuses it the published workflow and lets it read the draft (CSRF_WHITE_LIST); the check says so."""
    suite = load_suite(SUITE_DIR / "zh_multi_intent.yaml")
    with fake_openai(("answer", model())) as llm, \
            fake_dify(app := ChatflowApp(llm.base_url), admin_api_key="admin-key") as dify:
        token = run_suites(DifyTarget(dify.base_url, dify.api_key,
                                      console=_console(dify, app, token=dify.console_token)), [suite])
        admin = run_suites(DifyTarget(dify.base_url, dify.api_key, console=_console(
            dify, app, admin_key="admin-key", workspace_id=dify.workspace_id)), [suite])
        other = run_suites(DifyTarget(dify.base_url, dify.api_key, console=_console(
            dify, app, admin_key="admin-key", workspace_id="another-workspace")), [suite])
    for run in (token, admin):
        assert run.figures()["turn_accuracy"] == 1.0 and run.errors() == []
        assert "(draft workflow" in run.target["catalog_check"] and "CSRF" in run.target["catalog_check"]
    assert [h.get("X-WORKSPACE-ID") for h in dify.console_headers[2:4]] == [dify.workspace_id] * 2
    assert other.target["catalog_check"].startswith("COULD NOT RUN: reading the app's published workflow: HTTP 401")


def test_an_older_dify_login_is_read_from_its_body() -> None:
    """Before the cookie login: the password as typed, the tokens in the answer, no CSRF check."""
    suite = load_suite(SUITE_DIR / "zh_multi_intent.yaml")
    with fake_openai(("answer", model())) as llm, fake_dify(app := ChatflowApp(llm.base_url), release="1.8") as dify:
        run = run_suites(DifyTarget(dify.base_url, dify.api_key, console=_console(dify, app)), [suite])
    assert [b["password"] for b in dify.logins] == [base64.b64encode(dify.password.encode()).decode(), dify.password]
    assert run.errors() == [] and "published workflow, login sign-in" in run.target["catalog_check"]
    assert dify.console_headers[0]["Authorization"].startswith("Bearer ")


def test_when_the_check_cannot_run_no_turn_of_another_catalog_is_blamed_on_the_model() -> None:
    """The shipped Chatflow (restaurant and travel) asked the telecom suite: every turn goes wrong. With
    the console check refused, or without one, the table says the check did not run and puts those turns
    down to the unverified catalog, never to the model (it scored 0% as "model failed" before)."""
    telecom = load_suite(SUITE_DIR / "zh_telecom_subtask.yaml")
    with fake_openai(("answer", model())) as llm, fake_dify(app := ChatflowApp(llm.base_url)) as dify:
        refused = run_suites(DifyTarget(dify.base_url, dify.api_key, console=_console(
            dify, app, email=dify.email, password="wrong")), [telecom])
        without = run_suites(DifyTarget(dify.base_url, dify.api_key), [telecom])
    for run in (refused, without):
        figures = run.figures()
        failed = [t for t in run.traces if not t["passed"]]
        assert figures["turns"] == len(telecom.turns) and len(failed) >= len(telecom.turns) - 2
        assert {t["cause"] for t in failed} == {"catalog_unverified"}
        assert figures["causes"]["catalog_unverified"] == len(failed)
        assert not any(figures["causes"][c] for c in ("model_failed", "model_omitted", "model_wrong"))
        assert "0 of 1 conversation(s) verified by the catalog mark in the app's state, 1 unverified" in \
            run.target["catalog_check"]
    assert refused.target["catalog_check"].startswith("COULD NOT RUN: console login: HTTP 401 authentication_failed")
    assert refused.target["catalog_check_failed"] and refused.errors() == []
    assert without.target["catalog_check"].startswith("NOT RUN: no console access")


def test_without_console_access_the_state_mark_verifies_the_app() -> None:
    """An app carrying the suite's catalog text has its mark in the state (catalog_checked): its turns are
    verified, and a wrong one is attributed as usual."""
    suite = load_suite(SUITE_DIR / "zh_multi_intent.yaml")
    wrong = {suite.turns[1].user: {"commands": []}}  # the model leaves the second message out
    with fake_openai(("answer", model(wrong))) as llm, fake_dify(ChatflowApp(llm.base_url)) as dify:
        run = run_suites(DifyTarget(dify.base_url, dify.api_key), [suite])
    assert "1 of 1 conversation(s) verified by the catalog mark" in run.target["catalog_check"]
    causes = run.figures()["causes"]
    assert causes["catalog_unverified"] == 0 and causes["model_omitted"] >= 1


def test_a_secret_catalog_variable_cannot_be_compared_and_says_so() -> None:
    suite = load_suite(SUITE_DIR / "zh_multi_intent.yaml")
    with fake_openai(("answer", model())) as llm, \
            fake_dify(app := ChatflowApp(llm.base_url), secret=frozenset({"TASK_CATALOG"})) as dify:
        run = run_suites(DifyTarget(dify.base_url, dify.api_key, console=_console(dify, app)), [suite])
    assert run.target["catalog_check"].startswith("COULD NOT RUN: the app's TASK_CATALOG is a secret variable")
    assert run.figures()["turn_accuracy"] == 1.0  # the state's mark still verifies it


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
    assert run.target["catalog_check"].startswith("NOT RUN: no console access")


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
        monkeypatch.setenv("DIFY_CONSOLE_EMAIL", dify.email)
        monkeypatch.setenv("DIFY_CONSOLE_PASSWORD", dify.password)
        code = main(["eval", str(SUITE_DIR / "zh_multi_intent.yaml"), str(SUITE_DIR / "en_booking.yaml"),
                     "--target", "dify", "--dify-url", dify.base_url, "--dify-key-env", "DIFY_TEST_KEY",
                     "--dify-mode", "streaming", "--dify-auto-name", "--dify-console-url", console.base_url,
                     "--dify-app-id", dify.app_id, "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 1  # the English suite was refused
    assert result["runs"][0]["label"] == "dify:streaming"
    assert result["runs"][0]["suites"]["zh_multi_intent"]["turn_accuracy"] == 1.0
    assert result["runs"][0]["auto_generate_name"] is True and dify.title_calls == 1


def test_the_cli_needs_the_whole_console_access(capsys, monkeypatch) -> None:
    for name in ("DIFY_CONSOLE_EMAIL", "DIFY_CONSOLE_PASSWORD", "DIFY_ADMIN_API_KEY", "DIFY_CONSOLE_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    base = ["eval", "--target", "dify", "--dify-url", "http://127.0.0.1:9/v1",
            "--dify-console-url", "http://127.0.0.1:9/console/api"]
    assert main(base) == 2
    assert "--dify-app-id" in capsys.readouterr().err
    assert main([*base, "--dify-app-id", "3c1e7a52-6f0e-4b7e-9d55-2f4b1a0c9e11"]) == 2
    assert "needs a sign-in: DIFY_CONSOLE_EMAIL and DIFY_CONSOLE_PASSWORD" in capsys.readouterr().err
    monkeypatch.setenv("DIFY_ADMIN_API_KEY", "admin-key")
    assert main([*base, "--dify-app-id", "3c1e7a52-6f0e-4b7e-9d55-2f4b1a0c9e11"]) == 2
    assert "--dify-workspace-id" in capsys.readouterr().err


def test_the_cli_exits_1_and_says_why_when_the_check_cannot_run(capsys, monkeypatch) -> None:
    with fake_openai(("answer", model())) as llm, fake_dify(ChatflowApp(llm.base_url)) as dify:
        monkeypatch.setenv("DIFY_TEST_KEY", dify.api_key)
        monkeypatch.setenv("DIFY_CONSOLE_EMAIL", dify.email)
        monkeypatch.setenv("DIFY_CONSOLE_PASSWORD", "not the password")
        code = main(["eval", str(SUITE_DIR / "zh_multi_intent.yaml"), "--target", "dify", "--dify-url",
                     dify.base_url, "--dify-key-env", "DIFY_TEST_KEY", "--dify-console-url",
                     dify.base_url.replace("/v1", "/console/api"), "--dify-app-id", dify.app_id])
    out = capsys.readouterr().out
    assert code == 1
    assert "catalog check dify:blocking: COULD NOT RUN: console login: HTTP 401 authentication_failed" in \
        " ".join(out.split())


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
