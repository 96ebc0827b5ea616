"""What real Dify refuses that graphon cannot show (issue 9), each rule as Dify's source states it.

graphon (Dify's engine, which the other DSL tests run) has no database, no plugin daemon and no
sandbox of an older release. Each test here encodes one rule of those parts as their source states
it (file and rule cited), checks that our generated files obey it, and that ``check-dsl`` is
stricter than the rule on a hand-edited copy (dskit/tooling/dslbuild/dify_rules.py).
"""

from __future__ import annotations

import copy
import json
import re
import uuid
from typing import Any

import pytest

pytest.importorskip("yaml")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from dskit.base.limits import CODE_MAX_STRING_LENGTH, MAX_VARIABLE_SIZE, segment_size  # noqa: E402
from dskit.tooling.codegen.nodespecs import HISTORY, HISTORY_CODE_NODE_MAX_BYTES  # noqa: E402
from dskit.tooling.dslbuild.check import Problem, check_dsl  # noqa: E402
from dskit.tooling.dslbuild.dify_rules import dependency_problems, variable_id_problems  # noqa: E402
from dskit.tooling.dslbuild.dify_versions import DEFAULT_TARGET, DSL_VERSIONS, Target  # noqa: E402
from dskit.tooling.dslbuild.flows import FlowOptions, build_classic, build_fast  # noqa: E402
from dskit.tooling.dslbuild.plugin_flow import build_plugin  # noqa: E402

pytestmark = pytest.mark.slow  # generation, graphon runs or recorded-model replays: `-m "not slow"` skips them


@pytest.fixture(scope="module")
def docs() -> dict[str, dict[str, Any]]:
    return {"fast": build_fast().to_dict(), "classic": build_classic().to_dict(), "plugin": build_plugin().to_dict()}


def _node(doc: dict[str, Any], node_id: str) -> dict[str, Any]:
    return next(n for n in doc["workflow"]["graph"]["nodes"] if n["id"] == node_id)


def _has(problems: list[Problem], node: str, field: str, words: str = "") -> bool:
    return any(p.node == node and p.field.startswith(field) and words in p.message for p in problems)


def _variables(doc: dict[str, Any]) -> list[dict[str, Any]]:
    workflow = doc["workflow"]
    return list(workflow["conversation_variables"]) + list(workflow["environment_variables"])


# --------------------------------------------------------------------------------------------------
# 1. Variable ids: Dify's database column is a UUID
# --------------------------------------------------------------------------------------------------


def _postgres_accepts_uuid(value: str) -> bool:
    """Dify stores a conversation variable under its DSL id (api/models/workflow.py,
    ``ConversationVariable.id = mapped_column(StringUUID, primary_key=True)``); ``StringUUID``
    (api/models/types.py) is PostgreSQL's ``UUID()``, whose input accepts the forms ``uuid.UUID``
    parses. Anything else: ``invalid input syntax for type uuid`` (langgenius/dify PR #37196)."""
    try:
        uuid.UUID(value)
    except (ValueError, TypeError, AttributeError):
        return False
    return True


def test_variable_ids_are_uuids_stable_and_distinct(docs: dict) -> None:
    for doc in docs.values():
        ids = [v["id"] for v in _variables(doc)]
        assert all(_postgres_accepts_uuid(i) and str(uuid.UUID(i)) == i for i in ids)
        assert len(set(ids)) == len(ids)
        assert variable_id_problems(doc["workflow"]) == []
    again = build_fast().to_dict()
    assert [v["id"] for v in _variables(again)] == [v["id"] for v in _variables(docs["fast"])]
    history = {layout: next(v["id"] for v in _variables(doc) if v["name"] == "history") for layout, doc in docs.items()}
    assert len(set(history.values())) == 1  # one variable, one id, whichever layout


@pytest.mark.parametrize(("bad", "why"), [
    ("conv-history", "not a UUID"),  # what the files said before: the first chat message failed
    ("8F14E45F-CEEA-467F-A0E6-1B5D3C7F1E2A", "not a UUID"),  # PostgreSQL takes it; exports never look so
    ("{8f14e45f-ceea-467f-a0e6-1b5d3c7f1e2a}", "not a UUID"),
    ("", "not a UUID"),
])
def test_a_hand_edited_variable_id_is_refused(docs: dict, bad: str, why: str) -> None:
    doc = copy.deepcopy(docs["fast"])
    doc["workflow"]["conversation_variables"][0]["id"] = bad
    assert _has(check_dsl(doc), "document", "workflow.conversation_variables[0].id", why)


def test_two_variables_with_one_id_are_refused(docs: dict) -> None:
    doc = copy.deepcopy(docs["fast"])
    doc["workflow"]["environment_variables"][0]["id"] = doc["workflow"]["conversation_variables"][0]["id"]
    assert _has(check_dsl(doc), "document", "workflow.environment_variables[0].id", "also used by")


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.uuids().map(str), st.uuids().map(lambda u: str(u).upper()), st.text(max_size=40)))
def test_every_id_check_dsl_accepts_is_one_postgres_accepts(value: str) -> None:
    """Stricter than the database: whatever passes check-dsl also passes the uuid column."""
    problems = variable_id_problems({"conversation_variables": [{"id": value}]})
    if not problems:
        assert _postgres_accepts_uuid(value)


# --------------------------------------------------------------------------------------------------
# 2. Dependency identifiers: the plugin daemon wants the checksum
# --------------------------------------------------------------------------------------------------

# dify-plugin-daemon pkg/entities/plugin_entities/identity.go, ``pluginUniqueIdentifierRegexp``
# (verbatim); internal/server/controllers/plugins.go ``FetchMissingPluginInstallations`` validates
# every identifier of the request with it and answers 400 for the whole request when one fails.
DAEMON_IDENTIFIER = re.compile(
    r"^(?:([a-z0-9_-]{1,64})\/)?([a-z0-9_-]{1,255}):([0-9]{1,4})(\.[0-9]{1,4}){1,3}(-\w{1,16})?@[a-f0-9]{32,64}$")


def _identifiers(doc: dict[str, Any]) -> list[str]:
    out = []
    for dep in doc["dependencies"]:
        out += [v for k, v in dep["value"].items() if k.endswith("unique_identifier")]
    return out


def test_every_dependency_identifier_passes_the_daemon(docs: dict) -> None:
    for doc in docs.values():
        idents = _identifiers(doc)
        assert idents and all(DAEMON_IDENTIFIER.match(i) for i in idents)
    tools = [n["data"] for n in docs["plugin"]["workflow"]["graph"]["nodes"] if n["data"]["type"] == "tool"]
    package = next(d for d in docs["plugin"]["dependencies"] if d["type"] == "package")["value"]
    assert package["plugin_unique_identifier"].startswith("dskit/dialogue_state_kit:0.2.0@")
    assert {t["plugin_unique_identifier"] for t in tools} == {package["plugin_unique_identifier"]}


@pytest.mark.parametrize("bad", [
    "dskit/dialogue_state_kit:0.1.0",  # what the plugin file said before
    "dskit/dialogue_state_kit:0.1.0@ABCDEF0123456789ABCDEF0123456789",  # upper case
    "dskit/dialogue_state_kit:0.1.0@abc",  # too short
    "dialogue_state_kit:0.1.0@" + "a" * 64,  # no author: the daemon takes it, our check does not
])
def test_a_hand_edited_identifier_is_refused(docs: dict, bad: str) -> None:
    doc = copy.deepcopy(docs["plugin"])
    dep = next(d for d in doc["dependencies"] if d["type"] == "package")
    index = doc["dependencies"].index(dep)
    dep["value"]["plugin_unique_identifier"] = bad
    assert _has(check_dsl(doc), "document", f"dependencies[{index}].value.plugin_unique_identifier",
                "author/name:version@checksum")


def test_a_dependency_of_unknown_type_is_refused(docs: dict) -> None:
    doc = copy.deepcopy(docs["fast"])
    doc["dependencies"][0]["type"] = "pypi"
    assert _has(dependency_problems(doc), "document", "dependencies[0].type", "not one of")


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.from_regex(DAEMON_IDENTIFIER, fullmatch=True), st.text(max_size=90)))
def test_every_identifier_check_dsl_accepts_is_one_the_daemon_accepts(ident: str) -> None:
    doc = {"dependencies": [{"type": "marketplace", "value": {"marketplace_plugin_unique_identifier": ident}}]}
    if not dependency_problems(doc):
        assert DAEMON_IDENTIFIER.match(ident)


# --------------------------------------------------------------------------------------------------
# 5. Minimum version: the DSL version and the features of the targeted release
# --------------------------------------------------------------------------------------------------


def _dify_import_status(imported: str, current: str) -> str:
    """Dify's ``_check_version_compatibility`` (api/services/app_dsl_service.py, 1.7.0 and 1.9.1;
    api/services/dsl_version.py later): newer than the server's or an older major -> pending (the
    user must confirm, and ``confirm_import`` skips the dependency prompt); an older minor ->
    completed with warnings; else completed."""
    def key(version: str) -> tuple[int, ...]:
        return tuple(int(p) for p in version.split("."))
    mine, server = key(imported), key(current)
    if mine > server or mine[0] < server[0]:
        return "pending"
    return "completed-with-warnings" if mine[1] < server[1] else "completed"


# CURRENT_DSL_VERSION from Dify's source: 1.7.0 "0.3.1", 1.9.1 "0.4.0", main (late 2026) "0.6.0";
# 1.8.x lies between 1.7.0 and 1.9.1, so it is one of the first two.
RELEASE_DSL = {"1.7.0": "0.3.1", "1.8.x (low)": "0.3.1", "1.8.x (high)": "0.4.0", "1.9.1": "0.4.0", "main": "0.6.0"}


def test_the_files_import_without_confirmation_on_every_supported_release(docs: dict) -> None:
    for doc in docs.values():
        assert doc["version"] == DEFAULT_TARGET.dsl_version == "0.3.1"
        for release, server in RELEASE_DSL.items():
            assert _dify_import_status(doc["version"], server) != "pending", release


def test_the_dsl_version_table_matches_difys_rule() -> None:
    """A file built for a release never stops at that release's confirmation."""
    for (first, version) in DSL_VERSIONS:
        assert _dify_import_status(Target(first).dsl_version, version) == "completed"


@pytest.mark.parametrize(("version", "target", "refused"), [
    ("0.6.0", DEFAULT_TARGET, True),  # what the files said before: 1.8 asked to confirm, then no plugins
    ("0.4.0", DEFAULT_TARGET, True),  # 1.8.x may be 0.3.1
    ("0.4.0", Target((1, 9)), False),
    ("1.0.0", Target((1, 9)), True),
    ("0.3.1", DEFAULT_TARGET, False),
])
def test_check_dsl_reports_a_version_the_target_would_question(docs: dict, version: str, target: Target,
                                                             refused: bool) -> None:
    doc = copy.deepcopy(docs["fast"])
    doc["version"] = version
    assert _has(check_dsl(doc, target=target), "document", "version", "asks the user to confirm") is refused


def test_files_for_dify_1_7_use_numbers_for_booleans(docs: dict) -> None:
    """Booleans in code outputs and if-else need Dify 1.8 (PR #24437); 1.7.0's code node outputs are
    ``Literal["string", "number", "object", "array[...]"]`` (api/core/workflow/nodes/code/entities.py)."""
    target = Target((1, 7))
    problems = check_dsl(docs["fast"], target=target)
    assert _has(problems, "state", "data.outputs.memory_ready.type", "needs Dify 1.8")
    assert _has(problems, "need_summary", "data.cases[0].conditions[0]", "needs Dify 1.8")
    assert _has(problems, "route", "data.cases[2].conditions[0]", "needs Dify 1.8")  # memory_ready is false
    old = build_fast(FlowOptions(target=target)).to_dict()
    assert old["version"] == "0.3.1" and check_dsl(old, target=target) == []
    assert all("boolean" not in spec["type"] for n in old["workflow"]["graph"]["nodes"] if n["data"]["type"] == "code"
               for spec in n["data"]["outputs"].values())
    assert build_fast(FlowOptions(target=Target((1, 2)))).to_dict()["version"] == "0.1.5"


def test_the_1_7_history_node_returns_one_or_zero() -> None:
    from dskit.tooling.codegen.sandbox import run_code_node
    from dskit.tooling.dslbuild.code_sources import code_source

    source = code_source("history", booleans=False)
    assert source.outputs["summary_due"] == "number"
    out = run_code_node(source.code, {"old_history": "", "summary": "", "user_query": "你好", "answer": "您好"},
                        source.outputs)
    assert type(out["summary_due"]) is int and out["summary_due"] == 0


def test_gen_and_check_dsl_take_a_dify_version(tmp_path, capsys) -> None:  # noqa: ANN001
    from dskit.tooling.cli import main

    assert main(["gen", "--dify-version", "1.7", "--out", str(tmp_path)]) == 0
    files = sorted(tmp_path.glob("*.yml"))
    assert len(files) == 3
    assert main(["check-dsl", "--dify-version", "1.7", *map(str, files)]) == 0
    capsys.readouterr()
    assert main(["check-dsl", "--dify-version", "1.7", "dsl/dialogue_chatflow.yml"]) == 1
    assert "needs Dify 1.8" in capsys.readouterr().out
    assert main(["gen", "--dify-version", "0.15", "--out", str(tmp_path / "x")]) == 2


# --------------------------------------------------------------------------------------------------
# 3. Output limits of the oldest supported Dify
# --------------------------------------------------------------------------------------------------


def test_the_history_cap_fits_the_minimum_release(docs: dict) -> None:
    default = next(s for s in HISTORY.settings if s.name == "max_bytes").default
    assert int(default) == HISTORY_CODE_NODE_MAX_BYTES <= CODE_MAX_STRING_LENGTH - 20_000
    doc = copy.deepcopy(docs["fast"])
    for node_id in ("state", "outcome"):  # the nodes that keep the memory
        data = _node(doc, node_id)["data"]
        assert f"max_bytes: int = {HISTORY_CODE_NODE_MAX_BYTES}" in data["code"]
        data["code"] = data["code"].replace(f"max_bytes: int = {HISTORY_CODE_NODE_MAX_BYTES}", "max_bytes: int = 150000")
        assert _has(check_dsl(doc), node_id, "data.code", "80,000-character limit")


@pytest.fixture(scope="module")
def history_main():  # noqa: ANN201
    from dskit.tooling.codegen.code_nodes import node_script
    from dskit.tooling.codegen.sandbox import main_in_process

    return main_in_process(node_script(HISTORY), "history_limits")


@settings(max_examples=12, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30_000), st.sampled_from(["a", "中", "😀", "é"])), min_size=1, max_size=8))
def test_no_history_output_exceeds_the_minimum_releases_limits(history_main, turns) -> None:  # noqa: ANN001
    """Dify 1.8 fails a code node returning a string over CODE_MAX_STRING_LENGTH characters
    (api/core/workflow/nodes/code/code_node.py ``_check_string``), and breaks every later turn when a
    conversation variable is over MAX_VARIABLE_SIZE (api/factories/variable_factory.py). With its
    defaults the history node stays under both, whatever the turns (long, wide or astral)."""
    history, summary = "", ""
    for length, char in turns:
        out = history_main(old_history=history, summary=summary, user_query="x" * length + char,
                           answer=char * (length // 2), llm_summary=True)
        for name, value in out.items():
            if isinstance(value, str):
                assert len(value) <= CODE_MAX_STRING_LENGTH, name
        assert segment_size(out["history"]) <= MAX_VARIABLE_SIZE
        history, summary = out["history"], out["summary"]


# --------------------------------------------------------------------------------------------------
# 4. A failing node after the answer must not lose the state
# --------------------------------------------------------------------------------------------------


def test_the_state_is_saved_before_the_answer_in_every_layout(docs: dict) -> None:
    """Every answer node comes right after an assigner that writes the state; no assigner after an answer
    writes it (the code-node layouts write the state, the memory and the next prompt in one assigner)."""
    for doc in docs.values():
        nodes = {n["id"]: n["data"] for n in doc["workflow"]["graph"]["nodes"]}
        edges = doc["workflow"]["graph"]["edges"]
        answers = [node for node, data in nodes.items() if data["type"] == "answer"]
        assert answers
        for answer in answers:
            (before,) = [e["source"] for e in edges if e["target"] == answer]
            assert nodes[before]["type"] == "assigner", answer
            assert "sys_context_str" in [i["variable_selector"][1] for i in nodes[before]["items"]], answer
        for node, data in nodes.items():
            if data["type"] == "assigner" and all(e["target"] != answer for e in edges if e["source"] == node
                                                  for answer in answers):
                assert "sys_context_str" not in [i["variable_selector"][1] for i in data["items"]], node


def _old_layout(doc: dict[str, Any]) -> dict[str, Any]:
    """The layout before issue 9: the state written at the very end, behind the summary's nodes."""
    doc = copy.deepcopy(doc)
    graph = doc["workflow"]["graph"]
    save_all = _node(doc, "save_all")["data"]
    state_items = [i for i in save_all["items"] if i["variable_selector"][1] == "sys_context_str"]
    save_all["items"] = [i for i in save_all["items"] if i not in state_items]
    _node(doc, "save_summary")["data"]["items"] += state_items
    for node_id in ("summary_check", "summarize"):
        data = _node(doc, node_id)["data"]
        data.pop("error_strategy", None)
        data.pop("default_value", None)
    graph["edges"] = [e for e in graph["edges"] if e.get("sourceHandle") != "fail-branch"]
    return doc


def test_check_dsl_refuses_a_state_saved_behind_fallible_nodes(docs: dict) -> None:
    problems = check_dsl(_old_layout(docs["fast"]))
    assert _has(problems, "save_summary", "data.items", "writes conversation.sys_context_str after the answer")
    for node_id in ("summarize", "summary_check"):
        assert _has(problems, node_id, "data.error_strategy", "never writes")
    doc = copy.deepcopy(docs["fast"])
    del _node(doc, "summarize")["data"]["error_strategy"]
    assert _has(check_dsl(doc), "summarize", "data.error_strategy", "runs after the answer")


# -- proved in graphon: a summary model that raises, a history node that fails --------------------

graphon = pytest.importorskip("graphon")

UNDERSTAND = json.dumps({"rewritten_query": "订明天晚上7点的餐厅", "commands": [
    {"type": "start_task", "task": "book_restaurant", "slots": {"date": "明天", "time": "19:00"}}]},
    ensure_ascii=False)


def _ten_turns() -> tuple[str, str]:
    """A history window that is full, so the next turn overflows and a summary is due."""
    from dskit.tooling.codegen.code_nodes import node_script
    from dskit.tooling.codegen.sandbox import main_in_process

    main = main_in_process(node_script(HISTORY), "history_fill")
    history, summary = "", ""
    for turn in range(10):
        out = main(old_history=history, summary=summary, user_query=f"第{turn}轮：查一下北京的天气",
                   answer=f"北京第{turn}天：晴")
        history, summary = out["history"], out["summary"]
    return history, summary


CHITCHAT = json.dumps({"rewritten_query": "你好", "commands": [{"type": "chitchat"}]}, ensure_ascii=False)


class _Failing:
    """A code executor whose ``node`` code node fails every time (as dify-sandbox's seccomp failure does)."""

    def __init__(self, node: str) -> None:
        from dskit.tooling.codegen.sandbox import LocalCodeExecutor

        self.inner = LocalCodeExecutor()
        self.marker = f"dskit code node: {node}"
        self.runs = 0

    def execute(self, *, language: Any, code: str, inputs: Any) -> Any:
        from dskit.tooling.codegen.sandbox import CodeNodeError

        if self.marker in code[:400]:
            self.runs += 1
            raise CodeNodeError("error: bad system call (SIGSYS)")
        return self.inner.execute(language=language, code=code, inputs=inputs)

    def is_execution_error(self, error: Exception) -> bool:
        return self.inner.is_execution_error(error)


def _conversation(text: str, **kwargs: Any):  # noqa: ANN202
    from dskit.tooling.dslrun.graphon import Conversation

    conversation = Conversation(text, **kwargs)
    history, summary = _ten_turns()
    conversation.variables.update(history=history, summary=summary)
    return conversation, history


def test_a_summary_model_that_raises_keeps_the_new_state_and_the_memory() -> None:
    from dskit.tooling.dslbuild.builder import dump_yaml

    def raising(request: Any) -> str:
        raise TimeoutError("the summary model timed out")

    conversation, old_history = _conversation(dump_yaml(build_fast().to_dict()))
    result = conversation.turn("我想订明天晚上7点的餐厅", {"understand": UNDERSTAND, "summarize": raising})
    assert result.succeeded and "summarize" in result.errors
    assert "book_restaurant" in result.variables["sys_context_str"]
    assert "订明天晚上7点" in result.variables["history"] and result.variables["history"] != old_history
    assert "第0轮" in result.variables["summary"]  # the extractive summary took the overflow


def test_a_summary_check_that_fails_keeps_the_new_state_and_the_memory() -> None:
    """The summary is due (the window is full): the state, the history and the extractive summary are saved
    before the answer, so a summary check failing for good (two retries, then its fail branch) loses
    nothing but the LLM's better summary."""
    from dskit.tooling.dslbuild.builder import dump_yaml

    executor = _Failing("summary")
    conversation, old_history = _conversation(dump_yaml(build_fast().to_dict()), code_executor=executor)
    old_state = conversation.variables["sys_context_str"]
    result = conversation.turn("我想订明天晚上7点的餐厅", {"understand": UNDERSTAND, "summarize": "新的摘要"})
    assert result.succeeded and executor.runs == 3 and "summary_check" in result.errors
    assert "book_restaurant" in result.variables["sys_context_str"] != old_state  # the new state is kept
    assert "订明天晚上7点" in result.variables["history"] and result.variables["history"] != old_history
    assert "第0轮" in result.variables["summary"]  # the extractive summary took the overflow
    assert result.variables["prompt_head"]  # and the next prompt built with it


def test_the_old_layout_lost_the_state_when_the_summary_check_failed(docs: dict) -> None:
    """Why the rule exists: the same failure in the layout before issue 9 shows a reply and loses the turn."""
    from dskit.tooling.dslbuild.builder import dump_yaml

    conversation, _ = _conversation(dump_yaml(_old_layout(docs["fast"])), code_executor=_Failing("summary"))
    before = conversation.variables["sys_context_str"]
    result = conversation.turn("我想订明天晚上7点的餐厅", {"understand": UNDERSTAND, "summarize": "新的摘要"},
                               raise_on_error=False)
    assert result.answer and not result.succeeded
    assert result.variables["sys_context_str"] == before
