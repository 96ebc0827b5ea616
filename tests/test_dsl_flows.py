"""The two Chatflows: shape, layout, options, and every scenario suite run turn by turn in graphon.

Each suite in tests/scenarios runs through each layout it supports, with scripted LLM answers, the
generated code nodes executed in separate processes, a knowledge-retrieval stand-in and a real task
API on 127.0.0.1. After every turn the answer and every conversation variable are checked, and so is
the LLM-call budget (fast: <= 1 call before the state update, <= 2 a turn, +1 when a summary is due).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("graphon")

from dskit.surfaces.nodes import classic_adapter_node, context_node  # noqa: E402
from dskit.tooling.dslbuild.builder import DEFAULT_MODEL, DEFAULT_PROVIDER  # noqa: E402
from dskit.tooling.dslbuild.check import check_dsl  # noqa: E402
from dskit.tooling.dslbuild.flows import (  # noqa: E402
    CLASSIC_FILE,
    FAST_FILE,
    FlowOptions,
    build_classic,
    build_fast,
    default_catalog,
)
from dskit.tooling.dslbuild.generate import dsl_texts  # noqa: E402
from dskit.tooling.dslbuild.plugin_flow import PLUGIN_FILE  # noqa: E402
from dskit.tooling.dslbuild.layout import overlaps  # noqa: E402
from dskit.tooling.codegen.sandbox import CodeNodeError, LocalCodeExecutor  # noqa: E402
from dskit.tooling.dslrun.scenarios import (  # noqa: E402
    SCENARIO_DIR,
    ScenarioError,
    ScenarioTurn,
    _prompt_failures,
    derive_classic,
    focused_task,
    format_outcomes,
    load_scenarios,
    run_scenario,
    turn_script,
)
from dskit.tooling.dslrun.taskapi import task_api  # noqa: E402
from dskit.tooling.dslrun.graphon import Conversation  # noqa: E402

pytestmark = pytest.mark.slow  # generation, graphon runs or recorded-model replays: `-m "not slow"` skips them

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = load_scenarios(SCENARIO_DIR)
LLM_TYPES = {"llm", "question-classifier", "parameter-extractor"}


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    return {"fast": build_fast().to_yaml(), "classic": build_classic().to_yaml()}


@pytest.fixture(scope="module")
def docs() -> dict[str, dict[str, Any]]:
    return {"fast": build_fast().to_dict(), "classic": build_classic().to_dict()}


@pytest.fixture(scope="module")
def api():  # noqa: ANN201 - a TaskApi
    with task_api() as server:
        yield server


def _nodes(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return doc["workflow"]["graph"]["nodes"]


# --------------------------------------------------------------------------------------------- shape


def test_committed_dsl_files_are_the_generated_ones() -> None:
    for path, text in dsl_texts().items():
        on_disk = ROOT / path
        assert on_disk.is_file(), f"{path} missing: run `dskit gen`"
        assert on_disk.read_text(encoding="utf-8") == text, f"{path} is stale: run `dskit gen`"
    assert set(dsl_texts()) == {FAST_FILE, CLASSIC_FILE, PLUGIN_FILE}


@pytest.mark.parametrize("layout", ["fast", "classic"])
def test_document_basics(docs: dict, layout: str) -> None:
    doc = docs[layout]
    assert doc["version"] == "0.3.1" and doc["kind"] == "app"  # Dify 1.8 imports it without a confirmation
    assert doc["app"]["mode"] == "advanced-chat"
    conv = {v["name"]: v for v in doc["workflow"]["conversation_variables"]}
    # Derived from the state, only the next turn's prompt is stored, and only what the layout's prompts read
    # (with the last turn's model answer and the head's rest after it: issue 39).
    prompt = {"fast": {"prompt_system", "prompt_head"}, "classic": {"prompt_head", "prompt_state"}}[layout]
    assert set(conv) == {"history", "summary", "sys_context_str", "prompt_tail", "reply_pending"} | prompt
    assert all(v["value_type"] == "string" for v in conv.values())
    # a new conversation starts with the prompt of an empty one, the context node's for this catalog
    fresh = context_node("", "", "", "", json.dumps(default_catalog(), ensure_ascii=False))
    wanted = {"prompt_system": fresh["instructions"], "prompt_head": fresh["head"], "prompt_state": fresh["state_text"]}
    assert {name: v["value"] for name, v in conv.items() if v["value"]} == {name: wanted[name] for name in prompt}
    env = {v["name"]: v["value"] for v in doc["workflow"]["environment_variables"]}
    assert env["TASK_API_URL"] == ""
    catalog = json.loads(env["TASK_CATALOG"])
    assert set(catalog["tasks"]) == {"book_restaurant", "plan_route", "weather", "travel_insurance",
                                     "account_balance"}
    assert catalog == default_catalog()


@pytest.mark.parametrize("layout", ["fast", "classic"])
def test_layout_left_to_right_without_overlaps(docs: dict, layout: str) -> None:
    doc = docs[layout]
    nodes = {n["id"]: n for n in _nodes(doc)}
    boxes = {i: (n["position"]["x"], n["position"]["y"], n["width"], n["height"]) for i, n in nodes.items()}
    assert overlaps(boxes) == []
    for edge in doc["workflow"]["graph"]["edges"]:
        assert nodes[edge["target"]]["position"]["x"] > nodes[edge["source"]]["position"]["x"], edge["id"]


@pytest.mark.parametrize("layout", ["fast", "classic"])
def test_titles_chinese_descriptions_bilingual(docs: dict, layout: str) -> None:
    for node in _nodes(docs[layout]):
        data = node["data"]
        assert re.search(r"[\u4e00-\u9fff]", data["title"]) or data["title"] == "FAQ 回答", node["id"]
        assert re.search(r"[\u4e00-\u9fff]", data["desc"]) and re.search(r"[A-Za-z]{3}", data["desc"]), node["id"]


def test_fast_layout_has_one_llm_before_the_state_node(docs: dict) -> None:
    doc = docs["fast"]
    edges = doc["workflow"]["graph"]["edges"]
    preds: dict[str, set[str]] = {}
    for edge in edges:
        preds.setdefault(edge["target"], set()).add(edge["source"])
    upstream, stack = set(), ["state"]
    while stack:
        for src in preds.get(stack.pop(), ()):
            if src not in upstream:
                upstream.add(src)
                stack.append(src)
    types = {n["id"]: n["data"]["type"] for n in _nodes(doc)}
    assert sorted(i for i in upstream if types[i] in LLM_TYPES) == ["understand"]


def test_classic_layout_is_seed003s(docs: dict) -> None:
    types = {n["id"]: n["data"]["type"] for n in _nodes(docs["classic"])}
    assert types["rewrite"] == "llm" and types["classify"] == "question-classifier"
    assert types["extract"] == "parameter-extractor" and types["adapter"] == "code"
    extract = next(n for n in _nodes(docs["classic"]) if n["id"] == "extract")["data"]
    assert all(p["type"] == "string" for p in extract["parameters"])  # no 0/false defaults


@pytest.mark.parametrize("layout", ["fast", "classic"])
def test_default_model_everywhere(docs: dict, layout: str) -> None:
    doc = docs[layout]
    for node in _nodes(doc):
        if node["data"]["type"] in LLM_TYPES:
            assert node["data"]["model"]["provider"] == DEFAULT_PROVIDER
            assert node["data"]["model"]["name"] == DEFAULT_MODEL
    idents = [d["value"]["marketplace_plugin_unique_identifier"] for d in doc["dependencies"]]
    assert len(idents) == 1 and idents[0].startswith("langgenius/openai:")


# A well-formed identifier for a provider whose checksum we do not know (tests only: a real one comes
# from a Chatflow Dify exported, see `dskit gen --plugin-identifier`).
TONGYI = "langgenius/tongyi:0.1.0@" + "ab" * 32
DEEPSEEK = "langgenius/deepseek:0.1.0@" + "cd" * 32


def test_provider_and_model_options() -> None:
    options = FlowOptions(provider="langgenius/tongyi/tongyi", model="qwen-plus", plugin_identifier=TONGYI)
    for build in (build_fast, build_classic):
        doc = build(options).to_dict()
        models = [n["data"]["model"] for n in _nodes(doc) if n["data"]["type"] in LLM_TYPES]
        assert models and all(m["provider"] == "langgenius/tongyi/tongyi" and m["name"] == "qwen-plus"
                              for m in models)
        idents = [d["value"]["marketplace_plugin_unique_identifier"] for d in doc["dependencies"]]
        assert idents == [TONGYI]
        assert check_dsl(doc, run_code=False) == []


def test_bad_provider_is_refused() -> None:
    with pytest.raises(ValueError, match="ORG/PLUGIN/PROVIDER"):
        build_fast(FlowOptions(provider="openai"))


def test_unknown_provider_needs_its_full_identifier() -> None:
    """No made-up identifier: the daemon refuses one without a checksum (dify_rules)."""
    with pytest.raises(ValueError, match="VERSION@CHECKSUM"):
        build_fast(FlowOptions(provider="langgenius/tongyi/tongyi", model="qwen-plus"))


@pytest.mark.parametrize("layout", ["fast", "classic"])
def test_graphon_loads_the_dsl(texts: dict, layout: str) -> None:
    """graphon.dsl.loads builds the whole graph (every node validated) for both layouts."""
    engine = Conversation(texts[layout]).build_engine("hi")
    node_ids = {n["id"] for n in _nodes(build_fast().to_dict() if layout == "fast" else build_classic().to_dict())}
    assert set(engine.graph.nodes) == node_ids


# --------------------------------------------------------------------------------------------- suites


def test_suites_exist_and_cover_the_issue() -> None:
    names = {s.name for s in SCENARIOS}
    for wanted in ("seed000_booking", "seed003_travel", "faq_interruption", "handoff", "rollback",
                   "multi_intent", "reset", "task_api_failure", "long_conversation"):
        assert wanted in names


def _cases() -> list[Any]:
    return [pytest.param(s, layout, id=f"{s.name}-{layout}") for s in SCENARIOS for layout in s.layouts]


@pytest.mark.parametrize(("scenario", "layout"), _cases())
def test_scenario(scenario, layout: str, texts: dict, api) -> None:  # noqa: ANN001
    outcomes = run_scenario(scenario, layout, texts[layout], default_catalog(), api_base=api.base_url)
    report = format_outcomes(scenario, layout, outcomes)
    assert not report, "\n" + report
    assert len(outcomes) == len(scenario.turns)


def test_task_api_receives_the_execute_payload(texts: dict, api) -> None:  # noqa: ANN001
    scenario = next(s for s in SCENARIOS if s.name == "task_api")
    before = len(api.requests)
    run_scenario(scenario, "fast", texts["fast"], default_catalog(), api_base=api.base_url)
    path, payload = api.requests[before]
    assert path == "/ok"
    assert payload["task"] == "account_balance" and payload["task_id"] and payload["slots"] == {}


WEATHER = ScenarioTurn("帮我查下北京天气", {"rewritten_query": "查询北京天气", "commands": [
    {"type": "start_task", "task": "weather", "slots": {"city": "北京"}}]})
RETRY = ScenarioTurn("再试一次", {"rewritten_query": "重试", "commands": [{"type": "confirm"}]})


@pytest.mark.parametrize("layout", ["fast", "classic"])
def test_a_retry_after_a_late_answer_is_the_same_submission(texts: dict, api, layout: str) -> None:  # noqa: ANN001
    """Issue 39: the task API acts, then its answer is lost (here the connection closes, as a read timeout
    looks to Dify); the turn records a failure and the user's "再试一次" submits again — with the same
    Idempotency-Key header, also the payload's idempotency_key, so the API answers it again without acting
    twice. Another conversation asking the same gets another key."""
    catalog = default_catalog()
    keys = []
    for conversation_id in (f"{layout}-conv-a", f"{layout}-conv-b"):
        conversation = Conversation(texts[layout], env={"TASK_API_URL": api.base_url + "/late"},
                                    conversation_id=conversation_id)
        before = len(api.requests)
        failed = conversation.turn(WEATHER.user, turn_script(WEATHER, layout, catalog, ""))
        assert "办理失败" in failed.answer and "call_api" in failed.path
        retried = conversation.turn(RETRY.user, turn_script(RETRY, layout, catalog, "weather"))
        assert retried.answer.startswith("「查询天气」已办理完成"), retried.answer
        sent = [(payload, headers) for (path, payload), headers in
                zip(api.requests[before:], api.headers[before:], strict=True)]
        assert len(sent) == 2
        (first, first_headers), (second, second_headers) = sent
        key = first_headers["idempotency-key"]
        assert key.startswith("dskit-") and key == first["idempotency_key"]
        assert second_headers["idempotency-key"] == key == second["idempotency_key"]
        assert second["task_id"] == first["task_id"] and second["slots"] == first["slots"]
        keys.append(key)
    assert keys[0] != keys[1]  # the same task and values in another conversation: another submission
    assert [key for key in api.acted if key in keys] == keys  # the API acted once per conversation


def test_classic_derivation_refuses_what_it_cannot_express() -> None:
    catalog = default_catalog()
    two = {"commands": [{"type": "chitchat"}, {"type": "faq", "question": "q"}]}
    with pytest.raises(ScenarioError):
        derive_classic(two, catalog, "")
    with pytest.raises(ScenarioError):
        derive_classic({"commands": [{"type": "rollback_slot", "slot": "time"}]}, catalog, "book_restaurant")
    with pytest.raises(ScenarioError):
        derive_classic({"commands": [{"type": "set_slots", "task": "plan_route", "slots": {"a": 1}}]},
                       catalog, "travel_insurance")
    spec = derive_classic({"rewritten_query": "q", "commands": [{"type": "start_task", "task": "weather",
                                                                 "slots": {"city": "北京"}}]}, catalog, "")
    assert spec == {"rewrite": "q", "classify": ("task_weather", "查询天气"), "extract": {"city": "北京"}}


def test_generator_options_reach_every_file() -> None:
    from dskit.tooling.dslbuild.generate import dsl_texts

    files = dsl_texts(FlowOptions(provider="langgenius/deepseek/deepseek", model="deepseek-chat",
                                  plugin_identifier=DEEPSEEK))
    for text in files.values():
        assert "provider: langgenius/deepseek/deepseek" in text and "name: deepseek-chat" in text
        assert "marketplace_plugin_unique_identifier: langgenius/deepseek:" in text
        assert "langgenius/openai" not in text


@pytest.mark.parametrize("layout", ["fast", "classic"])
def test_every_llm_node_reads_the_state_through_the_prompt_aggregator(docs: dict, layout: str) -> None:
    """One view of the state for the model: no prompt pastes the raw catalog, state or a task copy; the
    understanding prompt comes from the ``prompt`` aggregator (the context node's or the stored one)."""
    doc = docs[layout]
    text = json.dumps([n["data"] for n in _nodes(doc) if n["data"]["type"] in
                       ("llm", "question-classifier", "parameter-extractor")], ensure_ascii=False)
    for raw in ("{{#env.TASK_CATALOG#}}", "{{#conversation.sys_context_str#}}", "{{#conversation.current_task",
                "{{#context.", "{{#conversation.prompt_"):
        assert raw not in text, raw
    user = ("{{#prompt.head.output#}}{{#prompt.pending.output#}}{{#prompt.tail.output#}}"
            "{{#prompt.message.output#}}")
    wanted = {"fast": [user, "{{#prompt.system.output#}}"], "classic": [user, "{{#prompt.state.output#}}"]}[layout]
    for ref in wanted:
        assert ref in text, ref


def test_classic_classifier_lists_the_classes_the_adapter_reads() -> None:
    from dskit.surfaces.classic import CLASSIC_CLASSES
    from dskit.tooling.dslbuild.flows import classic_classes

    catalog = default_catalog()
    for lang in ("zh", "en"):
        classes = dict(classic_classes(catalog, lang))
        for entry in CLASSIC_CLASSES:
            label = classes[entry.id]
            adapted = classic_adapter_node(label, "q", json.dumps(catalog, ensure_ascii=False))
            commands = json.loads(adapted["understanding"])["commands"]
            expected = entry.command or "cannot_handle"  # more info with no task open: nothing to add to
            assert commands[0]["type"] == expected, (lang, label)


def test_opening_statement_names_the_catalog_tasks(docs: dict) -> None:
    opening = docs["fast"]["workflow"]["features"]["opening_statement"]
    for label in ("订餐", "路线规划", "查询天气", "旅游保险", "查询余额"):
        assert label in opening


# --------------------------------------------------------------------------------------------- before the model

UNDERSTANDING_NODE = {"fast": "understand", "classic": "rewrite"}
FAQ_ONE_LINE = "包间最低消费800元，需提前一天预订。"
FAQ_TWO_LINES = "包间最低消费800元。\n需提前一天预订。"
PROMPT_TURNS = [  # (turn, whether the context node runs before the model) — a booking: the first message (the
    # file's own prompt for an empty conversation), two ordinary turns, a FAQ answered on one line and the turn
    # after it (the answer read between the stored head and tail), the execution (no task API: the state node
    # says it), a FAQ answered on two lines and the turn after it (the answer is put on one line by the context
    # node), and a message with a line break
    (ScenarioTurn("我想订明天晚上七点的位子", {"rewritten_query": "订明天19:00的位子", "commands": [
        {"type": "start_task", "task": "book_restaurant", "slots": {"date": "明天", "time": "19:00"}}]}), False),
    (ScenarioTurn("四个人", {"rewritten_query": "四个人", "commands": [{"type": "set_slots", "slots": {"people": 4}}]}),
     False),
    (ScenarioTurn("你们包间有最低消费吗？", {"rewritten_query": "包间有最低消费吗？", "commands": [
        {"type": "faq", "question": "包间有最低消费吗？"}]}, llm={"faq_answer": FAQ_ONE_LINE}), False),
    (ScenarioTurn("就订江南小馆", {"rewritten_query": "订江南小馆", "commands": [
        {"type": "set_slots", "slots": {"restaurant": "江南小馆"}}]}), False),
    (ScenarioTurn("好的，订吧", {"rewritten_query": "确认预订", "commands": [{"type": "confirm"}]}), False),
    (ScenarioTurn("包间要提前多久订？", {"rewritten_query": "包间要提前多久预订？", "commands": [
        {"type": "faq", "question": "包间要提前多久预订？"}]}, llm={"faq_answer": FAQ_TWO_LINES}), False),
    (ScenarioTurn("北京天气怎么样", {"rewritten_query": "查询北京天气", "commands": [
        {"type": "start_task", "task": "weather", "slots": {"city": "北京"}}]}), False),
    (ScenarioTurn("再帮我查一下\n上海的天气", {"rewritten_query": "查询上海天气", "commands": [
        {"type": "start_task", "task": "weather", "slots": {"city": "上海"}}]}), True),
]
FAQ_PASSAGES = [{"title": "包间", "content": "本店包间需提前一天预订，最低消费800元。"}]


def _code_before(result, layout: str, types: dict[str, str]) -> list[str]:
    path = result.path
    return [node for node in path[:path.index(UNDERSTANDING_NODE[layout])] if types[node] == "code"]


@pytest.mark.parametrize("layout", ["fast", "classic"])
def test_only_a_turn_without_a_stored_prompt_runs_a_code_node_before_the_model(texts: dict, docs: dict,
                                                                               layout: str) -> None:
    """Issues 22, 39 and 40: every turn calls the model with the very prompt the context node would build
    for the stored state and memory — the first message with the file's own prompt for an empty
    conversation, a turn after a FAQ answer with the engine's own text of that turn, not the answer — and
    no code node runs before the model, but on a turn whose message has a line break (the context node
    puts it on one line)."""
    catalog = default_catalog()
    catalog_json = json.dumps(catalog, ensure_ascii=False)
    types = {n["id"]: n["data"]["type"] for n in _nodes(docs[layout])}
    conversation = Conversation(texts[layout], knowledge=lambda query: FAQ_PASSAGES)
    for index, (turn, via_context) in enumerate(PROMPT_TURNS):
        before = dict(conversation.variables)
        result = conversation.turn(turn.user, turn_script(turn, layout, catalog, focused_task(before)[0]))
        assert _code_before(result, layout, types) == (["context"] if via_context else []), index
        built = context_node(turn.user, before["sys_context_str"], before["history"], before["summary"], catalog_json,
                             reply_pending=before["reply_pending"])
        calls = {call.node_id: call.request for call in result.llm_calls}
        assert calls[UNDERSTANDING_NODE[layout]].user == built["context"], index  # byte for byte
        if layout == "fast":
            assert calls["understand"].system == built["instructions"]
        else:
            assert built["state_text"] in "".join(text for _, text in calls["classify"].messages)
        assert result.output("state", "memory_ready") is True and "history" not in result.path, index
        assert result.variables["prompt_head"] and not _prompt_failures(result.variables, catalog), index
    after_faq = [t.request.user for t in conversation.turns[3].llm_calls if t.node_id == UNDERSTANDING_NODE[layout]][0]
    assert FAQ_ONE_LINE not in after_faq and "你们包间有最低消费吗？" in after_faq  # issue 40: the answer is not recorded
    assert "包间最低消费800元" not in conversation.turns[6].llm_calls[0].request.user
    assert "> 再帮我查一下 ⏎ 上海的天气" in conversation.turns[-1].llm_calls[0].request.user  # one line


def test_an_edited_catalog_sends_the_first_message_through_the_context_node(texts: dict, docs: dict) -> None:
    """The file's own first prompt shows the catalog it was generated with: once TASK_CATALOG is edited in
    Dify, the first message's prompt is built by the context node from the catalog in use."""
    catalog = default_catalog()
    edited = {**catalog, "tasks": {name: spec for name, spec in catalog["tasks"].items() if name != "weather"}}
    edited_json = json.dumps(edited, ensure_ascii=False)
    types = {n["id"]: n["data"]["type"] for n in _nodes(docs["fast"])}
    conversation = Conversation(texts["fast"], env={"TASK_CATALOG": edited_json})
    turn = PROMPT_TURNS[0][0]
    result = conversation.turn(turn.user, turn_script(turn, "fast", edited, ""))
    assert _code_before(result, "fast", types) == ["context"]
    assert result.llm_calls[0].request.user == context_node(turn.user, "", "", "", edited_json)["context"]
    assert "weather" not in result.llm_calls[0].request.user


def test_an_ordinary_turn_runs_one_sandbox_node(texts: dict, docs: dict) -> None:
    """An ask or confirm turn, the first message and a FAQ turn: the state node alone in the sandbox (code or
    template) — it keeps the memory itself — and the model is the first thing that runs after two Dify
    nodes; an ordinary turn runs eight nodes in all (issue 39: fourteen before)."""
    catalog = default_catalog()
    types = {n["id"]: n["data"]["type"] for n in _nodes(docs["fast"])}
    conversation = Conversation(texts["fast"], knowledge=lambda query: FAQ_PASSAGES)
    for turn, _ in PROMPT_TURNS[:4]:
        before = dict(conversation.variables)
        result = conversation.turn(turn.user, turn_script(turn, "fast", catalog, focused_task(before)[0]))
        assert [n for n in result.path if types[n] in {"code", "template-transform"}] == ["state"], turn.user
        assert result.path[:4] == ["start", "has_prompt", "prompt", "understand"]
    first, ask, faq, confirm = conversation.turns
    assert confirm.output("state", "next_action") == "confirm" and faq.output("state", "next_action") == "faq"
    for ordinary in (first, ask, confirm):
        assert ordinary.path == ["start", "has_prompt", "prompt", "understand", "state", "route", "save", "answer"]
