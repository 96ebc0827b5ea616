"""check-dsl: our DSLs pass, and a copy broken in each way fails with the node and the field named.

Dify imports all of these broken copies without complaint (dify-facts §1); these checks are why a
user never has to find out in the editor or at run time.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("yaml")

from dskit.tooling.dslbuild.builder import dump_yaml  # noqa: E402
from dskit.tooling.dslbuild.check import Problem, check_dsl  # noqa: E402
from dskit.tooling.dslbuild.flows import build_classic, build_fast  # noqa: E402


@pytest.fixture(scope="module")
def fast() -> dict[str, Any]:
    return build_fast().to_dict()


@pytest.fixture(scope="module")
def classic() -> dict[str, Any]:
    return build_classic().to_dict()


def _node(doc: dict[str, Any], node_id: str) -> dict[str, Any]:
    return next(n for n in doc["workflow"]["graph"]["nodes"] if n["id"] == node_id)


def _edges(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return doc["workflow"]["graph"]["edges"]


def _has(problems: list[Problem], node: str, field: str, words: str = "") -> bool:
    return any(p.node == node and p.field.startswith(field) and words in p.message for p in problems)


def test_generated_dsls_pass_every_check(fast: dict, classic: dict) -> None:
    assert check_dsl(fast) == []
    assert check_dsl(classic) == []
    assert check_dsl(dump_yaml(fast)) == []  # and as YAML text


def test_duplicate_node_id(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    doc["workflow"]["graph"]["nodes"].append(copy.deepcopy(_node(doc, "answer")))
    problems = check_dsl(doc)
    assert _has(problems, "answer", "id", "duplicate")


def test_edge_to_missing_node(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    edge = next(e for e in _edges(doc) if e["source"] == "reply")
    edge["target"] = "answr"
    problems = check_dsl(doc)
    assert any(p.field.endswith(".target") and "'answr' is not a node" in p.message for p in problems)


def test_if_else_case_without_edge(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    doc["workflow"]["graph"]["edges"] = [e for e in _edges(doc)
                                         if not (e["source"] == "route" and e["sourceHandle"] == "faq")]
    problems = check_dsl(doc)
    assert _has(problems, "route", "data.cases[0]", "'faq' has no edge")


def test_if_else_else_branch_without_edge(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    doc["workflow"]["graph"]["edges"] = [e for e in _edges(doc)
                                         if not (e["source"] == "route" and e["sourceHandle"] == "false")]
    assert _has(check_dsl(doc), "route", "data.else", "'false' has no edge")


def test_classifier_class_without_edge(classic: dict) -> None:
    doc = copy.deepcopy(classic)
    doc["workflow"]["graph"]["edges"] = [e for e in _edges(doc)
                                         if not (e["source"] == "classify" and e["sourceHandle"] == "faq")]
    problems = check_dsl(doc)
    classes = _node(doc, "classify")["data"]["classes"]
    index = next(i for i, c in enumerate(classes) if c["id"] == "faq")
    assert _has(problems, "classify", f"data.classes[{index}]", "has no edge")


def test_edge_from_unknown_branch_handle(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    next(e for e in _edges(doc) if e["source"] == "route" and e["sourceHandle"] == "faq")["sourceHandle"] = "FAQ"
    assert _has(check_dsl(doc), "route", "edges[", "'FAQ' is not an output branch")


def test_reference_to_missing_output_in_text(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    _node(doc, "answer")["data"]["answer"] = "{{#reply.replies.output#}}"
    assert _has(check_dsl(doc), "answer", "data.answer", "reply.replies is not an output")


def test_reference_dify_would_not_parse(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    _node(doc, "answer")["data"]["answer"] = "{{#state.next-action#}}"
    assert _has(check_dsl(doc), "answer", "data.answer", "not a reference Dify understands")


def test_value_selector_to_missing_node(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    variables = _node(doc, "state")["data"]["variables"]
    variables[0]["value_selector"] = ["understnd", "text"]
    assert _has(check_dsl(doc), "state", "data.variables[0].value_selector", "'understnd', which is not a node")


def test_unknown_conversation_and_env_variables(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    variables = _node(doc, "state")["data"]["variables"]
    variables[1]["value_selector"] = ["conversation", "sys_context"]
    variables[2]["value_selector"] = ["env", "CATALOG"]
    problems = check_dsl(doc)
    assert _has(problems, "state", "data.variables[1].value_selector", "not a conversation variable")
    assert _has(problems, "state", "data.variables[2].value_selector", "not an environment variable")


def test_reference_to_node_that_runs_later(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    _node(doc, "understand")["data"]["prompt_template"][1]["text"] += "{{#state.question#}}"
    assert _has(check_dsl(doc), "understand", "data.prompt_template[1].text", "does not run before")


def test_if_else_condition_selector(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    _node(doc, "route")["data"]["cases"][1]["conditions"][0]["variable_selector"] = ["state", "action"]
    assert _has(check_dsl(doc), "route", "data.cases[1].conditions[0].variable_selector", "state.action")


def test_assigner_writes_unknown_conversation_variable(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    _node(doc, "save")["data"]["items"][0]["variable_selector"] = ["conversation", "histories"]
    assert _has(check_dsl(doc), "save", "data.items[0].variable_selector", "not a conversation variable")


def test_grouped_aggregator_read_without_output(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    _node(doc, "save_all")["data"]["items"][0]["value"] = ["reply", "sys_context_str"]
    assert _has(check_dsl(doc), "save_all", "data.items[0].value", "[reply, sys_context_str, output]")


def test_code_variable_not_in_main_signature(fast: dict) -> None:
    # Generated nodes take **extra, so a hand-edited main() without it is what this check catches.
    doc = copy.deepcopy(fast)
    data = _node(doc, "outcome")["data"]
    data["code"] = data["code"].replace("    **extra,\n) -> dict:", ") -> dict:")
    assert "**extra" not in data["code"].split("def main(", 1)[1].split(") -> dict:", 1)[0]
    data["variables"].append({"variable": "bogus", "value_selector": ["sys", "query"]})
    assert _has(check_dsl(doc), "outcome", "data.variables", "'bogus' is declared but main() has no such")


def test_code_output_declared_but_not_returned_static(fast: dict) -> None:
    """A main() returning dict literals is checked without running anything."""
    doc = copy.deepcopy(fast)
    data = _node(doc, "outcome")["data"]
    data["code"] = "def main(**inputs) -> dict:\n    return {" + ", ".join(
        f"{name!r}: ''" for name in data["outputs"]) + "}\n"
    data["outputs"]["answer"] = {"type": "string", "children": None}
    assert _has(check_dsl(doc), "outcome", "data.outputs", "'answer' is declared but main() does not return")
    data["code"] = data["code"].replace("'reply': '', ", "")
    assert _has(check_dsl(doc), "outcome", "data.outputs", "'reply' is declared but main() does not return")


def test_code_output_returned_but_not_declared_dynamic(fast: dict) -> None:
    """Engine nodes return a dict built at run time: --run-code runs main() once to compare keys."""
    doc = copy.deepcopy(fast)
    del _node(doc, "state")["data"]["outputs"]["next_action"]
    assert not _has(check_dsl(doc), "state", "data.outputs")  # static by default: nothing runs
    assert _has(check_dsl(doc, run_code=True), "state", "data.outputs",
                "returns 'next_action' but it is not a declared output")


def test_code_output_type_mismatch_dynamic(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    _node(doc, "state")["data"]["outputs"]["stack_depth"]["type"] = "string"
    assert _has(check_dsl(doc, run_code=True), "state", "data.outputs.stack_depth.type", "declared string")


def test_code_syntax_error(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    _node(doc, "outcome")["data"]["code"] += "\ndef broken(:\n"
    assert _has(check_dsl(doc), "outcome", "data.code", "syntax error")


def test_unreachable_node(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    doc["workflow"]["graph"]["edges"] = [e for e in _edges(doc) if e["target"] != "chat_answer"]
    doc["workflow"]["graph"]["edges"].append({"id": "x", "source": "route", "sourceHandle": "chitchat",
                                              "target": "reply", "targetHandle": "target"})
    assert _has(check_dsl(doc), "chat_answer", "", "unreachable")


def test_path_that_never_answers(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    edges = [e for e in _edges(doc) if "answer" not in (e["source"], e["target"])]
    doc["workflow"]["graph"]["edges"] = edges
    problems = check_dsl(doc)
    assert _has(problems, "save", "", "without an answer node")
    assert _has(problems, "answer", "", "unreachable")


def test_cycle(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    _edges(doc).append({"id": "loop", "source": "save", "sourceHandle": "source", "target": "state",
                        "targetHandle": "target"})
    assert any("cycle" in p.message for p in check_dsl(doc))


def test_llm_provider_without_dependency(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    doc["dependencies"] = []
    assert _has(check_dsl(doc), "understand", "data.model.provider", "no dependencies entry")


def test_llm_provider_shape(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    _node(doc, "understand")["data"]["model"]["provider"] = "openai"
    assert _has(check_dsl(doc), "understand", "data.model.provider", "ORG/PLUGIN/PROVIDER")


def test_overlapping_nodes(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    _node(doc, "faq_answer")["position"] = dict(_node(doc, "faq_search")["position"])
    problems = check_dsl(doc)
    assert any(p.field == "position" and "overlaps" in p.message
               and {p.node, p.message.split("'")[1]} == {"faq_answer", "faq_search"} for p in problems)


def test_document_level_problems(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    doc["version"] = 0.3
    doc["workflow"]["conversation_variables"][0]["value"] = None
    problems = check_dsl(doc)
    assert _has(problems, "document", "version", "string")
    assert _has(problems, "document", "workflow.conversation_variables[0].value", "must not be null")
    doc = copy.deepcopy(fast)
    doc["app"]["mode"] = "workflow"
    assert _has(check_dsl(doc), "document", "app.mode", "advanced-chat")


def test_not_yaml() -> None:
    assert check_dsl("a: [b") and check_dsl("a: [b")[0].node == "document"


def test_problem_text_names_node_and_field() -> None:
    assert str(Problem("state", "data.variables[0]", "x")) == "state: data.variables[0]: x"


def test_a_deleted_edge_is_reported_as_its_cause_then_its_consequences_in_one_line(fast: dict) -> None:
    """check-dsl on a deleted edge used to list every node after it as unreachable (21 lines) before the
    cause: now the node left without a way out comes first, then the node that lost its way in, with the
    nodes after it summarised and the edge that is probably missing."""
    doc = copy.deepcopy(fast)
    lost = next(e for e in _edges(doc) if e["source"] == "understand")
    doc["workflow"]["graph"]["edges"] = [e for e in _edges(doc) if e is not lost]
    problems = check_dsl(doc)
    target = lost["target"]
    assert problems[0].node == "understand" and "without an answer node" in problems[0].message
    assert problems[1].node == target and "unreachable" in problems[1].message
    assert f"is the edge understand -> {target} missing?" in problems[1].message
    assert "nodes after it never run either" in problems[1].message
    assert len(problems) == 2, [str(p) for p in problems]  # no line per unreachable node, no stale references


def test_a_lost_branch_names_its_branch_first_and_only_the_nodes_it_alone_led_to(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    lost = next(e for e in _edges(doc) if e["source"] == "route" and e["sourceHandle"] == "chitchat")
    doc["workflow"]["graph"]["edges"] = [e for e in _edges(doc) if e is not lost]
    problems = check_dsl(doc)
    assert "has no edge" in problems[0].message and problems[0].node == "route"
    entry = next(p for p in problems if p.node == lost["target"])
    assert "unreachable" in entry.message and "reply" not in entry.message  # reply still runs from other branches
    assert sum("unreachable" in p.message for p in problems) == 1


def test_a_text_over_difys_ten_megabytes_is_refused_before_reading() -> None:
    problems = check_dsl("a: b\n" + "#" * (10 * 1024 * 1024))
    assert len(problems) == 1 and problems[0].node == "document" and "DSL_MAX_SIZE" in problems[0].message


# ------------------------------------------------------------------------------- YAML line numbers

LINE_BREAKS = ("\x85", "\u2028", "\u2029")  # what YAML (and str.splitlines) reads as a line break besides \n


def test_every_generated_document_reads_back_as_built(fast: dict, classic: dict) -> None:
    """Written raw, NEL (the fast Chatflow's if-else tests the message for it) was read back as a space, so
    "the message holds no line break" failed for every message with a space in it."""
    import yaml

    for doc in (fast, classic):
        assert yaml.safe_load(dump_yaml(doc)) == doc


def test_no_generated_file_holds_a_line_break_other_than_newline() -> None:
    """The fast Chatflow's if-else tests the message for these characters; written raw, they made every
    YAML error after them 3 lines off. The dumper escapes them (\\N, \\L, \\P) and the value stays the same."""
    import yaml

    from dskit.tooling.dslbuild.builder import YAML_LINE_BREAKS

    assert set(YAML_LINE_BREAKS) == set(LINE_BREAKS)
    root = Path(__file__).resolve().parents[1]
    for path in sorted((root / "dsl").glob("*.yml")) + sorted((root / "code_nodes").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert not [c for c in LINE_BREAKS if c in text], path.name
        assert len(text.splitlines()) == text.count("\n") + (not text.endswith("\n")), path.name
    doc = {"value": "a\u2028b", "code": "x = 1\ny = '\x85'\n", "plain": "\u2029"}
    assert yaml.safe_load(dump_yaml(doc)) == doc and not [c for c in LINE_BREAKS if c in dump_yaml(doc)]


def test_a_yaml_errors_line_number_is_the_line_an_editor_shows() -> None:
    root = Path(__file__).resolve().parents[1]
    lines = (root / "dsl" / "dialogue_chatflow.yml").read_text(encoding="utf-8").split("\n")
    broken = len(lines) - 20
    lines[broken] += ": ]: ["
    problems = check_dsl("\n".join(lines))
    assert len(problems) == 1 and f"at line {broken + 1}, column" in problems[0].message, problems[0].message
    # a file of someone else's that holds such a character: the line is still counted by \n alone
    raw = "a: '\u2028'\nb: '\x85'\nc: [1\nd: 2\n"
    assert "at line 4, column" in check_dsl(raw)[0].message
