"""``dskit eval``: the shipped suites, the metrics, the engine and flow targets, errors and reports.

A local OpenAI-compatible server plays the model (tests/fakes/openai_server.py): the perfect model of
tests/fixtures/eval/oracle.yaml, or scripted bad answers. Figures are checked as counts.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from dskit.state.state import load_state, new_state
from dskit.tooling.cli import main
from dskit.tooling.eval.engine_target import EngineTarget
from dskit.tooling.eval.flow_target import FlowTarget
from dskit.tooling.eval.metrics import ConversationScorer
from dskit.tooling.eval.runner import run_suites
from dskit.tooling.eval.suite import SUITE_DIR, Suite, SuiteError, load_suite, load_suites
from dskit.tooling.eval.turn import TurnOutput
from dskit.tooling.llm import ClientConfig, LLMClient
from evalkit import latest_message, model
from fakes.openai_server import fake_openai


def engine_run(suites: list[Suite], overrides: dict | None = None, **kwargs):
    with fake_openai(("answer", model(overrides))) as fake:
        run = run_suites(EngineTarget(LLMClient(ClientConfig(fake.base_url, "scripted"))), suites, **kwargs)
    return run, fake


def suite(name: str) -> Suite:
    return load_suite(SUITE_DIR / f"{name}.yaml")


# ------------------------------------------------------------------------------ the shipped suites


def test_shipped_suites_have_60_user_turns_in_chinese_and_english() -> None:
    suites = load_suites()
    assert sum(len(s.turns) for s in suites) >= 60
    assert {s.lang for s in suites} == {"zh", "en"}
    assert len({t.user for s in suites for t in s.turns}) == sum(len(s.turns) for s in suites)


def test_with_perfect_answers_every_turn_is_right() -> None:
    """The suites are consistent: with correct understanding the engine meets every expectation,
    and its grounding refuses nothing the user did say ("half past seven in the evening" is 19:30,
    "全部重新来吧" is a reset: the two gaps the first ceiling run found)."""
    run, _ = engine_run(load_suites())
    figures = run.figures()
    failing = {(t["suite"], t["turn"]) for t in run.traces if not t["passed"]}
    assert failing == set()
    assert figures["turns"] == 74 and figures["turn_accuracy"] == 1.0
    assert figures["wrongful_executions"] == figures["unasked_writes"] == figures["wrong_writes"] == 0
    assert figures["errors"] == figures["forbidden"] == 0


def test_the_suites_exercise_every_engine_behaviour_the_issue_lists() -> None:
    run, _ = engine_run(load_suites())
    applied = Counter(a.split(" ", 1)[0] for t in run.traces for a in t["applied"])
    dropped = [d["reason"] for t in run.traces for d in t["dropped"]]
    actions = Counter(t["action"] for t in run.traces)
    answers = " ".join(t["answer"] for t in run.traces)
    assert applied["rollback"] >= 2  # zh and en
    assert applied["cancel"] >= 2  # cancel-then-restart
    asked = Counter(c["type"] for t in run.traces for text in t["model_text"] for c in json.loads(text)["commands"])
    assert asked["reset"] >= 1 and applied["reset"] >= 1 and applied["deny"] >= 1
    assert actions["faq"] >= 3 and actions["handoff"] >= 2 and actions["chitchat"] >= 4
    assert any(r.startswith("refused: required slot") for r in dropped)  # the guard
    assert "已一并取消" in answers or "cancelled too" in answers  # the cascade
    assert "我们继续刚才的" in answers or "Let's continue with" in answers  # resume after an interruption
    multi = [t for t in run.traces if len({a.split(' ', 1)[0] for a in t["applied"]} & {"start", "set"}) == 2
             and any(a.startswith("start") for a in t["applied"])]
    assert multi  # two intents in one message
    dependent = [t for t in run.traces for s in t["state"] if s["task"] == "travel_insurance"]
    assert dependent  # a sub-task (depends_on), cancelled by a change of its parent
    waiting = [t for t in run.traces if any(s["stage"] == "WAITING" for s in t["state"])]
    together = [t for t in run.traces if len(t["executed"]) == 2 and t["executed"][1]["task"] == "router_rental"]
    assert len(waiting) >= 2 and together  # a sub-task waits for its parent and is submitted with it


def test_suite_errors_name_the_file_and_place(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nturns:\n  - user: 订个位子\n    expect: {slots: {people: 3}}\n", encoding="utf-8")
    with pytest.raises(SuiteError, match=r"bad.yaml: turns\[0\].expect: slots needs task"):
        load_suite(bad)
    bad.write_text("turns:\n  - user: 订个位子\n    understanding: {commands: []}\n", encoding="utf-8")
    with pytest.raises(SuiteError, match="unknown keys .'understanding'."):
        load_suite(bad)
    bad.write_text("turns:\n  - user: 订\n    expect: {task: book_restaurant, slots: {people: 0}}\n", encoding="utf-8")
    with pytest.raises(SuiteError, match="people: 0 is not a valid value"):
        load_suite(bad)


# ------------------------------------------------------------------------------ the engine target


def test_engine_target_sends_exactly_the_fast_chatflows_understanding_prompt() -> None:
    """Same conversation, same perfect model: the understand requests of the engine target and of the
    fast Chatflow in graphon are identical, message for message (system and user). Up to the first FAQ
    or chitchat turn: there the Chatflow's answer LLM speaks, and its reply enters the history."""
    route = suite("zh_travel_insurance")
    route.turns = route.turns[:3]  # the third turn is a FAQ: its prompt is still the same
    suites = [suite("zh_multi_intent"), route]
    _, engine_fake = engine_run(suites)
    with fake_openai(("answer", model())) as flow_fake:
        run_suites(FlowTarget(LLMClient(ClientConfig(flow_fake.base_url, "scripted")), layout="fast"), suites)

    def understand(fake) -> list:
        return [(r["messages"], r.get("temperature")) for r in fake.requests if latest_message(r) is not None]

    assert understand(engine_fake) == understand(flow_fake)
    assert len(understand(engine_fake)) == sum(len(s.turns) for s in suites)


def test_flow_target_scores_like_the_engine_target_and_counts_every_llm_node() -> None:
    with fake_openai(("answer", model())) as fake:
        run = run_suites(FlowTarget(LLMClient(ClientConfig(fake.base_url, "scripted"))),
                         [suite("zh_travel_insurance")])
    figures = run.figures()
    assert figures["turn_accuracy"] == 1.0 and figures["wrongful_executions"] == 0
    nodes = [c["node"] for t in run.traces for c in t["calls"]]
    assert nodes.count("understand") == 6 and nodes.count("faq_answer") == 1  # one FAQ turn
    assert figures["llm_calls_per_turn"] == round(len(nodes) / 6, 3)


# ------------------------------------------------------------------------------ the metrics


UNASKED = """
name: unasked
catalog: default
turns:
  - user: 我明天去杭州，帮我订个那边的位子，两个人
    expect: {next_action: ask_slot, task: book_restaurant, slots: {date: 明天, people: 2}}
    forbid: {execute: true}
"""
# A real small model's kind of mistake that the engine cannot refuse: every value is in the message,
# and the weather check is read-only (runs at once), but nobody asked for it.
UNASKED_ANSWER = {"我明天去杭州，帮我订个那边的位子，两个人": {"commands": [
    {"type": "start_task", "task": "weather", "slots": {"city": "杭州", "date": "明天"}},
    {"type": "start_task", "task": "book_restaurant", "slots": {"date": "明天", "people": 2}}]}}

WRONG_SLOT = """
name: wrong_slot
catalog: default
turns:
  - user: 订后天七点的位子，蜀香阁，我们三个人
    expect:
      next_action: confirm
      task: book_restaurant
      slots: {date: 后天, time: "19:00", people: 3, restaurant: 蜀香阁}
  - user: 确认
    expect:
      next_action: execute
      task: ""
      execute: {task: book_restaurant, slots: {date: 后天, time: "19:00", people: 3, restaurant: 蜀香阁}}
"""
# "七点" with no part of the day is 07:00 or 19:00: the model's reading of the two stands (dskit.rules.admission), so
# its wrong choice reaches the confirmation, and a user who does not read it confirms.
WRONG_SLOT_ANSWER = {"订后天七点的位子，蜀香阁，我们三个人": {"commands": [
    {"type": "start_task", "task": "book_restaurant",
     "slots": {"date": "后天", "time": "07:00", "people": 3, "restaurant": "蜀香阁"}}]},
                     "确认": {"commands": [{"type": "confirm"}]}}


def write_suite(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_an_execution_nobody_asked_for_is_wrongful_and_its_writes_are_unasked(tmp_path: Path) -> None:
    run, _ = engine_run([load_suite(write_suite(tmp_path, UNASKED))], UNASKED_ANSWER)
    figures = run.figures()
    first = run.traces[0]
    assert [(e["task"], e["wrongful"], e["reasons"]) for e in first["executed"]] == [
        ("weather", True, ["nobody asked for it"])]
    assert {(w["task"], w["slot"], w["kind"]) for w in first["writes"]} == {
        ("weather", "city", "unasked"), ("weather", "date", "unasked"),
        ("book_restaurant", "date", "asked"), ("book_restaurant", "people", "asked")}
    assert figures["wrongful_executions"] == figures["executions"] == 1
    assert figures["unasked_writes"] == 2 and figures["forbidden"] == 1
    assert figures["jga"] == 1.0 and figures["turn_accuracy"] == 0.0  # the state is right, the turn is not


def test_an_execution_with_a_wrong_slot_is_wrongful_and_names_the_slot(tmp_path: Path) -> None:
    """The model took the wrong half of the day; the user confirmed without reading."""
    run, _ = engine_run([load_suite(write_suite(tmp_path, WRONG_SLOT))], WRONG_SLOT_ANSWER)
    figures = run.figures()
    assert [w["kind"] for w in run.traces[0]["writes"] if w["slot"] == "time"] == ["wrong"]
    last = run.traces[-1]
    assert last["executed"][0]["wrongful"] and last["executed"][0]["reasons"] == ["slots time='07:00' (expected '19:00')"]
    assert figures["wrongful_executions"] == 1 and figures["task_success"] == 0.0 and figures["wrong_writes"] == 1


def test_an_execution_without_the_catalogs_confirmation_is_wrongful() -> None:
    """Strict even where the engine's guard makes it impossible: read from the states alone."""
    route = suite("zh_travel_insurance")
    slots = {"origin": "成都", "destination": "三亚", "date": "下周三", "mode": "自驾"}
    before = dict(new_state(), turn=5, next_task_seq=2, task_stack=[
        {"id": "t1", "name": "plan_route", "label": "路线规划", "stage": "COLLECTING", "slots": slots,
         "history": {}, "parent_id": None, "opened_turn": 1}])
    after = dict(before, turn=6, task_stack=[], done=[{"task_id": "t1", "task": "plan_route", "label": "路线规划",
                                                        "slots": slots, "status": "pending", "turn": 6}],
                 timeline=[{"turn": 6, "query": "", "applied": [], "dropped": [], "action": "execute"}])
    assert load_state(json.dumps(after))[1] == []  # a state the engine would accept
    scorer = ConversationScorer(route.catalog, route.turns)
    for index in range(5):
        scorer._register(index)
    score = scorer.score(5, json.dumps(before), TurnOutput(state_text=json.dumps(after)))
    assert score.wrongful == 1
    assert score.executions[0].reasons == ["the catalog asks for confirmation and the user did not confirm these slots"]
    assert score.expected_executions[0]["success"] is False


def test_a_late_execution_with_the_right_slots_completes_the_task_but_fails_the_turn(tmp_path: Path) -> None:
    path = tmp_path / "late.yaml"
    path.write_text("""
name: late
catalog: default
turns:
  - user: 下周三想从成都自驾去拉萨
    expect: {next_action: confirm, task: plan_route, slots: {origin: 成都, destination: 拉萨, date: 下周三, mode: 自驾}}
  - user: 差不多吧
    expect:
      next_action: execute
      task: ""
      execute: {task: plan_route, slots: {origin: 成都, destination: 拉萨, date: 下周三, mode: 自驾}}
  - user: 好的谢谢
    expect: {task: ""}
""", encoding="utf-8")
    # "差不多吧" is no plain yes, so the engine does not back up the model's small talk with a confirm
    overrides = {"差不多吧": {"commands": [{"type": "chitchat"}]}, "好的谢谢": {"commands": [{"type": "confirm"}]}}
    run, _ = engine_run([load_suite(path)], overrides)
    figures = run.figures()
    assert figures["wrongful_executions"] == 0 and figures["task_success"] == 1.0
    assert figures["turns_to_completion"] == 3 and figures["turns_to_completion_scripted"] == 2
    assert [t["passed"] for t in run.traces] == [True, False, False]


def test_unreadable_answers_count_as_fallbacks_then_hand_over() -> None:
    overrides = {t.user: "I am not sure what you mean." for t in suite("zh_booking_table").turns}
    run, _ = engine_run([suite("zh_booking_table")], overrides)
    figures = run.figures()
    actions = [t["action"] for t in run.traces]
    assert actions[:3] == ["fallback", "fallback", "handoff"]  # policy: 3 unusable outputs in a row
    assert figures["unreadable_rate"] == 1.0 and figures["errors"] == 0
    assert figures["executions"] == 0
    assert figures["jga"] == 1 / 8  # only the last turn, which expects no open task, is right


def test_consistency_over_repeats_is_the_share_agreeing_with_the_majority() -> None:
    answers = iter([json.dumps({"commands": [{"type": "start_task", "task": "weather", "slots": {"city": c}}]})
                    for c in ("上海", "上海", "北京")])
    case = Suite(name="w", description="", turns=suite("zh_noise_reset_handoff").turns[5:6],
                 catalog_data=suite("zh_noise_reset_handoff").catalog_data)
    with fake_openai(("answer", lambda body: next(answers))) as fake:
        run = run_suites(EngineTarget(LLMClient(ClientConfig(fake.base_url, "m"))), [case], repeat=3)
    assert run.figures()["consistency"] == round(2 / 3, 4)
    assert len(run.conversations) == 3


# ------------------------------------------------------------------------------ failures and the CLI


def test_an_unreachable_endpoint_is_one_line_per_conversation_and_exit_1(capsys) -> None:
    code = main(["eval", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--retries", "0", "--json"])
    out, err = capsys.readouterr()
    result = json.loads(out)
    run = result["runs"][0]
    assert code == 1 and "Traceback" not in err
    assert run["figures"]["errors"] == run["figures"]["conversations"] == len(run["errors"])
    assert run["figures"]["not_run"] == run["figures"]["turns"] - run["figures"]["errors"]
    assert all("turn 1: cannot reach" in line and "\n" not in line for line in run["errors"])



class _FailsOnce:
    """A client that fails the ``at``-th call with an LLMError of ``kind`` and passes the others on."""

    def __init__(self, client: LLMClient, at: int, kind: str) -> None:
        self.client, self.at, self.kind, self.calls = client, at, kind, 0

    def complete(self, messages, **kwargs):
        from dskit.tooling.llm import LLMError  # noqa: PLC0415

        self.calls += 1
        if self.calls == self.at:
            raise LLMError(f"a failure of kind {self.kind}", kind=self.kind)
        return self.client.complete(messages, **kwargs)


@pytest.mark.parametrize("kind, goes_on", [("length", True), ("no_text", True), ("transport", False),
                                           ("deadline", False), ("http", False)])
def test_an_answer_cut_or_empty_fails_its_turn_and_the_conversation_goes_on(kind, goes_on) -> None:
    """In Dify the user sends the next message after a turn whose model answered unusably; an endpoint
    that did not answer would fail the turns after it too, so those are not run."""
    case = suite("zh_booking_table")
    with fake_openai(("answer", model())) as fake:
        client = _FailsOnce(LLMClient(ClientConfig(fake.base_url, "scripted")), 2, kind)
        run = run_suites(EngineTarget(client), [case])
    turns = run.conversations[0].turns
    assert turns[1].error and not turns[1].not_run and not turns[0].error
    assert all(not t.not_run for t in turns[2:]) is goes_on
    assert run.figures()["not_run"] == (0 if goes_on else len(turns) - 2)
    if goes_on:  # the turns after it ran on the state before the failed one
        assert run.traces[2]["failures"] == [] or run.traces[2]["cause"] != "model_failed"


class _CutOnce(_FailsOnce):
    """The ``at``-th answer comes back cut at max_tokens: its last three characters are missing."""

    def complete(self, messages, **kwargs):
        from dskit.tooling.llm import LLMError  # noqa: PLC0415
        from dskit.tooling.llm.completion import Completion  # noqa: PLC0415

        answer = self.client.complete(messages, **kwargs)
        self.calls += 1
        if self.calls != self.at:
            return answer
        cut = Completion(text=answer.text.rstrip()[:-3], prompt_tokens=answer.prompt_tokens,
                         completion_tokens=answer.completion_tokens, latency=answer.latency, finish_reason="length")
        raise LLMError("a text cut at max_tokens", kind="length", cut=cut)


@pytest.mark.parametrize("target", ["engine", "flow"])
def test_an_answer_cut_at_max_tokens_goes_on_as_dify_passes_it_to_the_state_node(target) -> None:
    """Dify's LLM node outputs a cut text like any other (graphon/nodes/llm/node.py,
    LLMNode._build_run_outputs); the state node reads what it can of it. The engine and flow targets do
    the same: a cut answer whose commands were whole gives the turn the whole answer gives."""
    case = suite("zh_booking_table")
    outcomes = []
    for wrapper in (_FailsOnce, _CutOnce):
        with fake_openai(("answer", model())) as fake:
            client = wrapper(LLMClient(ClientConfig(fake.base_url, "scripted")), 2 if wrapper is _CutOnce else 0, "")
            made = EngineTarget(client) if target == "engine" else FlowTarget(client)
            run = run_suites(made, [case])
        turns = run.conversations[0].turns
        assert not any(t.error for t in turns) and not any(t.not_run for t in turns)
        outcomes.append([(t.passed, t.action) for t in turns])
        cut = [c for trace in run.traces for c in trace.get("calls", []) if c.get("cut")]
        assert len(cut) == (wrapper is _CutOnce)
    assert outcomes[0] == outcomes[1]


def test_a_dripping_server_hits_the_deadline_on_each_conversation(capsys) -> None:
    with fake_openai(("drip", 0.05, "{}")) as fake:
        code = main(["eval", str(SUITE_DIR / "zh_multi_intent.yaml"), str(SUITE_DIR / "en_booking.yaml"),
                     "--base-url", fake.base_url, "--model", "m", "--deadline", "0.4", "--json"])
        assert len(fake.requests) == 2  # one request per conversation, not retried
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert code == 1 and len(run["errors"]) == 2
    assert all("within 0.4 s" in line for line in run["errors"])


def test_bad_options_and_suites_exit_2_with_one_line(capsys, tmp_path: Path) -> None:
    assert main(["eval", "--model", "m"]) == 2
    assert "--base-url is required" in capsys.readouterr().err
    assert main(["eval", str(tmp_path / "none.yaml"), "--base-url", "http://x/v1", "--model", "m"]) == 2
    assert "no such suite" in capsys.readouterr().err
    assert main(["eval", "--target", "flow", "--parallel", "0", "--base-url", "http://x/v1", "--model", "m"]) == 2
    assert "must be at least 1" in capsys.readouterr().err


def test_runs_report_the_median_and_worst_and_the_cassette_keeps_the_median_run(capsys, tmp_path: Path) -> None:
    """Three live runs of an eight-turn conversation: perfect, then answering nothing, then perfect but for
    half the restaurant's name (its last two turns wrong, one wrongful execution). The figures are the
    median run's (6 of 8), the worst is the second run's, few turns have the same outcome in all three,
    and the --record file is the median run's cassette."""
    perfect = model()
    calls = {"n": 0}

    def answer(body: dict) -> str:
        run, calls["n"] = calls["n"] // 8, calls["n"] + 1
        if run == 2 and calls["n"] % 8 == 7:  # half the restaurant's name: confirmed and run as said
            return '{"commands": [{"type": "set_slots", "task": "book_restaurant", "slots": {"restaurant": "蜀香"}}]}'
        return '{"commands": []}' if run == 1 else perfect(body)

    cassette = tmp_path / "engine.jsonl"
    with fake_openai(("answer", answer)) as fake:
        code = main(["eval", str(SUITE_DIR / "zh_booking_table.yaml"), "--base-url", fake.base_url, "--model", "m",
                     "--runs", "3", "--record", str(cassette), "--json", "--quiet"])
    run = json.loads(capsys.readouterr().out)["runs"][0]
    spread = run["spread"]
    assert code == 0 and spread["runs"] == 3 and spread["median_run"] == 3
    assert [r["turns_right"] for r in spread["per_run"]] == [8, spread["turns_right"]["worst"], 6]
    assert spread["turns_right"]["median"] == 6 and spread["turns_right"]["worst"] < 6
    assert spread["wrongful_executions"] == {"median": 0, "worst": 1}
    assert run["figures"]["turn_accuracy"] == 6 / 8 and spread["consistency"] < 0.5
    runs = [tmp_path / f"engine.run{i}.jsonl" for i in (1, 2, 3)]
    assert all(path.exists() for path in runs) and cassette.read_bytes() == runs[2].read_bytes()
    assert main(["eval", "--runs", "3", "--replay", str(cassette), "--model", "m"]) == 2


def test_json_trace_and_report(capsys, tmp_path: Path) -> None:
    with fake_openai(("answer", model(UNASKED_ANSWER))) as fake:
        code = main(["eval", str(write_suite(tmp_path, UNASKED)), str(SUITE_DIR / "zh_booking_table.yaml"),
                     "--base-url", fake.base_url, "--model",
                     "m", "--json", "--quantization", "none", "--trace", str(tmp_path / "t.jsonl"),
                     "--report", str(tmp_path / "report")])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["model"] == "m" and result["machine"] and result["date"]
    figures = result["runs"][0]["figures"]
    assert figures["wrongful_executions"] == 1 and result["runs"][0]["suites"]["zh_booking_table"]["turns"] == 8
    assert result["runs"][0]["suites"]["unasked"]["wrongful_executions"] == 1
    lines = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 9 and lines[0]["model_text"] and lines[0]["applied"][0].startswith("start")
    assert {"user", "answer", "dropped", "state", "calls", "prompt_tokens", "llm_seconds"} <= set(lines[0])
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert "WRONGFUL" in page and "nobody asked for it" in page and "class='n bad'" in page
    assert (tmp_path / "report" / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_table_shows_wrongful_executions_in_red(tmp_path: Path) -> None:
    from rich.console import Console

    from dskit.tooling.eval.report import print_table

    run, _ = engine_run([load_suite(write_suite(tmp_path, UNASKED))], UNASKED_ANSWER)
    console = Console(record=True, force_terminal=True, width=120)
    print_table([run], {"model": "m", "date": "today"}, console)
    text = console.export_text(styles=True)
    row = next(line for line in text.splitlines() if "WRONGFUL" in line)
    assert "\x1b[1;31m1" in row or "\x1b[31m1" in row.replace("\x1b[1m", "")


# ------------------------------------------------------------------------------ why a turn is not right


def test_every_turn_that_is_not_right_is_attributed_to_one_cause() -> None:
    """Issue 20: a failed turn says whether the model left a value out, wrote a wrong one, failed, or the
    engine refused / let through / decided otherwise — in the figures, the trace and the report."""
    booking = suite("zh_booking_table")
    booking.turns = booking.turns[:2]
    first, second = (t.user for t in booking.turns)
    omitted = {first: {"rewritten_query": first, "commands": [
        {"type": "start_task", "task": "book_restaurant", "slots": {"date": "周六", "time": "20:00"}}]}}  # no people
    wrong = {first: {"rewritten_query": first, "commands": [
        {"type": "start_task", "task": "book_restaurant", "slots": {"date": "周六", "time": "20:00", "people": 6}}]}}
    unreadable = {second: "好的，我明白了。"}
    for overrides, cause in ((omitted, "model_omitted"), (wrong, "model_wrong"), (unreadable, "model_failed")):
        run, _ = engine_run([booking], overrides)
        figures = run.figures()
        failing = [t for t in run.traces if not t["passed"]]
        assert failing and failing[0]["cause"] == cause, (cause, failing[0]["failures"], failing[0]["cause"])
        assert sum(figures["causes"].values()) == len(failing)  # every failed turn once
    run, _ = engine_run([booking])
    assert sum(run.figures()["causes"].values()) == 0 and all(t["cause"] == "" for t in run.traces)


# ---------------------------------------------------------------- the baseline: a model that answers nothing


def test_answers_nothing_scores_the_state_staying_as_it_is(capsys) -> None:
    """No model, no network: every request gets no command. Nothing runs, nothing is written, every
    turn is scored."""
    code = main(["eval", "--answers-nothing", "--suite", "en_booking", "--json", "--quiet"])
    out = json.loads(capsys.readouterr().out)
    figures = out["runs"][0]["figures"]
    assert code == 0 and out["model"] == "answers-nothing"
    assert figures["executions"] == 0 and figures["unasked_writes"] == 0 and figures["wrong_writes"] == 0
    assert figures["errors"] == 0 and figures["prompt_tokens_per_turn"] == 0
    assert figures["turn_accuracy"] < 1 and figures["jga_turns"] > 0


def test_answers_nothing_takes_no_model(capsys) -> None:
    assert main(["eval", "--answers-nothing", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]) == 2
    assert "without a model" in capsys.readouterr().err
    assert main(["eval", "--answers-nothing", "--target", "dify", "--dify-url", "http://127.0.0.1:9/v1"]) == 2
    assert "not a deployed app" in capsys.readouterr().err
