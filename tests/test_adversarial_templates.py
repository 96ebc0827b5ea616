"""Catalog text is data (issue 19, class 11): template syntax in a catalog never reaches a template.

How Dify renders (graphon 0.8.0, Dify's workflow engine; the same rule in langgenius/dify
api/core/workflow/nodes/question_classifier/question_classifier_node.py):
``QuestionClassifierNode._prepare_run_context`` passes every class name through ``convert_template``
(graphon/variables/template_resolution.py, ``VARIABLE_PATTERN`` = ``{{#node.var#}}``), so a task label
holding ``{{#env.TASK_CATALOG#}}`` or ``{{#conversation.sys_context_str#}}`` pastes that variable into the
classifier prompt and into ``class_name``. The first test shows it on a real graphon run of the
classic layout; the others keep the rule: ``validate`` / ``load_catalog`` refuse any template delimiter
(Dify's ``{{#…#}}``, Jinja2's ``{{ }}`` ``{% %}`` ``{# #}``, half of a pair included) in every catalog
text with its JSON path, ``dskit gen --catalog`` refuses such a catalog, and ``check-dsl`` flags template
syntax wherever a DSL does not mean a template.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dskit.catalog.catalog import TEMPLATE_DELIMITERS, CatalogError, load_catalog, template_syntax, validate_catalog
from dskit.tooling.cli import main
from dskit.tooling.dslbuild.plugin_flow import build_plugin
from dskit.tooling.dslbuild.check import check_dsl
from dskit.tooling.dslbuild.flows import FlowOptions, build_classic, build_fast

ROOT = Path(__file__).resolve().parents[1]
BASE = json.loads((ROOT / "examples/catalogs/restaurant.json").read_text(encoding="utf-8"))
TASK = "book_restaurant"
PAYLOADS = ["{{#sys.query#}}", "订餐{{#conversation.sys_context_str#}}", "{{#env.TASK_CATALOG#}}", "{{#context#}}",
            "{{#histories#}}", "{{#query#}}", "{{#1711528915811.text#}}", "{{ state }}", "{{state.slots}}",
            "{% for x in y %}{{x}}{% endfor %}", "{# note #}", "a {{- lipsum.__globals__ -}} b", "{{#sys.user_id#}}x",
            "订餐{{", "}}订餐", "{%", "50%}", "{#", "#}"]


def put(catalog: dict, where: str, text: str) -> tuple[dict, str]:
    """``catalog`` with ``text`` at ``where``; returns it and the JSON path a problem must name."""
    d = copy.deepcopy(catalog)
    task = d["tasks"][TASK]
    slot = task["slots"]["date"]
    path = f"$.tasks.{TASK}"
    if where == "label":
        task["label"] = text
        return d, f"{path}.label"
    if where == "description":
        task["description"] = text
        return d, f"{path}.description"
    if where == "examples":
        task["examples"] = ["订个位子", text]
        return d, f"{path}.examples[1]"
    if where in ("ask", "slot_label", "slot_description"):
        key = where.removeprefix("slot_")
        slot[key] = text
        return d, f"{path}.slots.date.{key}"
    if where == "enum":
        slot["enum"] = ["周五", text]
        return d, f"{path}.slots.date.enum[1]"
    if where == "alias":
        slot["aliases"] = {text: "周五"}
        return d, f"{path}.slots.date.aliases"
    if where == "alias_target":
        slot["aliases"] = {"礼拜五": text}
        return d, f"{path}.slots.date.aliases.礼拜五"
    d[where] = text  # name, catalog description
    return d, f"$.{where}"


PLACES = ["label", "description", "examples", "ask", "slot_label", "slot_description", "enum", "alias",
          "alias_target", "name"]


def test_dify_renders_a_class_name_so_a_label_pastes_variables_into_the_prompt() -> None:
    """The failure itself, on graphon: the classic layout built from a label with a reference."""
    from dskit.tooling.dslrun.graphon import Conversation

    hostile, _ = put(BASE, "label", "订餐{{#env.TASK_CATALOG#}}")
    text = json.dumps(hostile, ensure_ascii=False)
    dsl = build_classic(FlowOptions(catalog_json=text)).to_yaml()
    seen: dict[str, str] = {}

    def answer(request: Any) -> str:
        if request.node_id == "classify":
            seen["prompt"] = "\n".join(t for _role, t in request.messages)
            return json.dumps({"category_id": "chitchat", "category_name": "闲聊"}, ensure_ascii=False)
        return "你好"

    Conversation(dsl, responder=answer).turn("你好", raise_on_error=False)
    assert '"tasks"' in seen["prompt"] and "book_restaurant" in seen["prompt"]  # the catalog, pasted in
    # ... and each layer now says so:
    problems = [str(p) for p in check_dsl(dsl, sandbox=False)]
    assert any("classify: data.classes[0].name: holds template syntax" in p for p in problems), problems
    assert any("$.tasks.book_restaurant.label: holds template syntax" in p for p in validate_catalog(text))
    with pytest.raises(CatalogError):
        load_catalog(text)


@pytest.mark.parametrize("where", PLACES)
@pytest.mark.parametrize("payload", PAYLOADS)
def test_validate_refuses_template_syntax_with_its_path(where: str, payload: str) -> None:
    catalog, path = put(BASE, where, payload)
    problems = validate_catalog(catalog)
    assert any(p.startswith(path + ":") and "template syntax" in p for p in problems), (path, problems)
    with pytest.raises(CatalogError):
        load_catalog(json.dumps(catalog, ensure_ascii=False))


@pytest.mark.parametrize("text", ["订餐", "预订 {座位}", "{周五}", "100%", "#1 餐厅", "C# 课程", "{ {", "} }",
                                  "价格 {50} 优惠", "满100减20%", "请问几位？", "a{b}c", "f(x) = {x | x > 0}"])
def test_ordinary_braces_and_signs_are_still_text(text: str) -> None:
    catalog, _ = put(BASE, "label", text)
    assert validate_catalog(catalog) == []


@settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(where=st.sampled_from(PLACES), before=st.text(max_size=20), after=st.text(max_size=20),
       delimiter=st.sampled_from(TEMPLATE_DELIMITERS))
def test_any_text_holding_a_delimiter_is_refused_at_its_path(where: str, before: str, after: str,
                                                             delimiter: str) -> None:
    text = before + delimiter + after
    catalog, path = put(BASE, where, text)
    problems = validate_catalog(catalog)
    assert any(p.startswith(path + ":") and "template syntax" in p for p in problems), (path, problems)


@settings(max_examples=150, deadline=None, database=None)
@given(text=st.text(max_size=60))
def test_template_syntax_finds_exactly_the_delimiters(text: str) -> None:
    assert bool(template_syntax(text)) == any(d in text for d in TEMPLATE_DELIMITERS)


def test_gen_refuses_a_hostile_catalog(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    catalog, path = put(BASE, "slot_description", "日期{{#sys.query#}}")
    file = tmp_path / "hostile.json"
    file.write_text(json.dumps(catalog, ensure_ascii=False), encoding="utf-8")
    assert main(["gen", "--catalog", str(file), "--out", str(tmp_path / "out")]) == 2
    assert path in capsys.readouterr().err and not (tmp_path / "out").exists()
    assert main(["validate", str(file)]) == 1
    assert path in capsys.readouterr().out


# ------------------------------------------------------------------ check-dsl, on any DSL


def nodes(doc: dict) -> list[dict]:
    return doc["workflow"]["graph"]["nodes"]


def node(doc: dict, node_id: str) -> dict:
    return next(n for n in nodes(doc) if n["id"] == node_id)["data"]


@pytest.fixture(scope="module")
def classic() -> dict:
    return build_classic().to_dict()


@pytest.fixture(scope="module")
def fast() -> dict:
    return build_fast().to_dict()


def flagged(doc: dict, node_id: str, field: str) -> list[str]:
    return [str(p) for p in check_dsl(doc, sandbox=False) if p.node == node_id and p.field == field]


def test_the_shipped_dsls_have_no_template_problem(classic: dict, fast: dict) -> None:
    for doc in (classic, fast):
        assert not [p for p in check_dsl(doc, sandbox=False) if "template" in p.message or "render" in p.message]


@pytest.mark.parametrize("payload", ["{{#sys.query#}}", "{{#conversation.sys_context_str#}}", "{{ x }}", "{% if %}"])
def test_a_class_name_or_extractor_text_with_template_syntax_is_flagged(classic: dict, payload: str) -> None:
    doc = copy.deepcopy(classic)
    node(doc, "classify")["classes"][0]["name"] = "订餐" + payload
    node(doc, "extract")["parameters"][0]["description"] = "日期" + payload
    assert flagged(doc, "classify", "data.classes[0].name")
    assert flagged(doc, "extract", "data.parameters[0].description")


def test_references_where_dify_renders_nothing_are_flagged(fast: dict) -> None:
    doc = copy.deepcopy(fast)
    doc["workflow"]["features"]["opening_statement"] = "您好 {{#sys.query#}}"
    doc["workflow"]["features"]["suggested_questions"] = ["{{#conversation.sys_context_str#}}"]
    doc["workflow"]["conversation_variables"][0]["value"] = "{{#sys.user_id#}}"
    http = next(n["data"] for n in nodes(doc) if n["data"].get("default_value"))
    http["default_value"][-1]["value"] = "{{#sys.query#}}"
    problems = [str(p) for p in check_dsl(doc, sandbox=False)]
    for field in ("workflow.features.opening_statement", "workflow.features.suggested_questions[0]",
                  "workflow.conversation_variables[0].value", "default_value["):
        assert any(field in p and "does not render" in p for p in problems), (field, problems)


def test_a_dify_reference_in_a_jinja_template_is_flagged() -> None:
    # the plugin Chatflow writes its replies with template-transform nodes (the fast one no longer has any)
    doc = build_plugin().to_dict()
    template = next(n for n in nodes(doc) if n["data"]["type"] == "template-transform")
    template["data"]["template"] = "{{ answer }} {{#sys.query#}}"
    assert flagged(doc, template["id"], "data.template")
    template["data"]["template"] = "{{ answer }}{% if question %}{{ question }}{% endif %}"
    assert not flagged(doc, template["id"], "data.template")  # Jinja2 in a Jinja2 template is fine
