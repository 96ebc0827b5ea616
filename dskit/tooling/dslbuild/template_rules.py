"""Template syntax where a DSL does not mean a template (issue 19, class 11: catalog text is data).

Dify renders ``{{#node.var#}}`` in more places than the ones meant as templates, and in some it never
renders it at all. Each rule below names the field and why, from graphon (Dify's workflow engine, the
same node classes as langgenius/dify api/core/workflow/nodes/):

- **Text that is rendered but is plain text in a design like ours** (any template delimiter, Dify's or
  Jinja2's, is flagged): a question-classifier class name goes through ``convert_template`` before it
  is put in the prompt (graphon nodes/question_classifier/question_classifier_node.py,
  ``_prepare_run_context``: ``rendered_classes``), so a task label ``{{#conversation.sys_context_str#}}``
  pastes the whole state into the classifier prompt and into ``class_name``; a parameter extractor's
  parameter names, descriptions and options are written into its prompt messages, which are compiled
  through the LLM node's ``fetch_prompt_messages`` -> ``convert_template`` (graphon
  nodes/parameter_extractor/parameter_extractor_node.py ``_generate_function_call_prompt``).
- **Text Dify never renders** (a ``{{#…#}}`` reference is flagged: it would reach the user or the model
  as literal braces, or paste user data if a release starts rendering it): the opening statement and
  suggested questions, start-variable defaults and options, error-strategy default values, and the
  values of conversation and environment variables (a value inserted into a template is not rendered
  again: ``convert_template`` makes one pass).
- **Jinja2 templates** (a template-transform's ``template``, an LLM message with ``edition_type:
  jinja2``): Dify does not substitute ``{{#…#}}`` there, and Jinja2 reads ``{{#`` as a syntax error.

Code-node sources are not checked: they are Python, and ``{{`` is ordinary there.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from dskit.catalog.catalog import template_syntax
from dskit.tooling.dslbuild.problems import Problem

# A Dify-style reference, valid or not (check.py reports malformed ones in template fields).
DIFY_REFERENCE = re.compile(r"\{\{#[^#{}\n]{0,200}#\}\}")


def template_problems(doc: Mapping[str, Any]) -> list[Problem]:
    """Every template expression in a field that is not a template of that kind (see the module doc)."""
    workflow = doc.get("workflow") if isinstance(doc, Mapping) else None
    if not isinstance(workflow, Mapping):
        return []
    problems: list[Problem] = []
    for where, field, text in _document_texts(workflow):
        problems += _reference_problem(where, field, text, "Dify does not render this field")
    graph = workflow.get("graph") if isinstance(workflow.get("graph"), Mapping) else {}
    for node in graph.get("nodes") or []:
        data = node.get("data") if isinstance(node, Mapping) else None
        if not isinstance(data, Mapping):
            continue
        node_id = str(node.get("id"))
        for field, text in _plain_rendered_texts(data):
            found = template_syntax(text)
            if found:
                problems.append(Problem(node_id, field, f"holds template syntax ({found!r}): Dify renders this "
                                        "field, so it would paste a variable (the user's message, the state) "
                                        "into the prompt; it must be plain text"))
        for field, text in _never_rendered_texts(data):
            problems += _reference_problem(node_id, field, text, "Dify does not render this field")
        for field, text in _jinja_texts(data):
            problems += _reference_problem(node_id, field, text,
                                           "this is a Jinja2 template: Dify does not substitute {{#…#}} here "
                                           "and Jinja2 reads it as a syntax error; declare a variable instead")
    return problems


def _reference_problem(where: str, field: str, text: Any, why: str) -> list[Problem]:
    if not isinstance(text, str):
        return []
    match = DIFY_REFERENCE.search(text)
    return [Problem(where, field, f"{match.group(0)}: {why}")] if match else []


def _document_texts(workflow: Mapping[str, Any]) -> Iterator[tuple[str, str, Any]]:
    features = workflow.get("features") if isinstance(workflow.get("features"), Mapping) else {}
    yield "document", "workflow.features.opening_statement", features.get("opening_statement")
    questions = features.get("suggested_questions")
    for i, question in enumerate(questions if isinstance(questions, list) else ()):
        yield "document", f"workflow.features.suggested_questions[{i}]", question
    for section in ("conversation_variables", "environment_variables"):
        items = workflow.get(section)
        for i, item in enumerate(items if isinstance(items, list) else ()):
            if isinstance(item, Mapping):
                yield "document", f"workflow.{section}[{i}].value", item.get("value")


def _plain_rendered_texts(data: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    kind = data.get("type")
    if kind == "question-classifier":
        for i, cls in enumerate(data.get("classes") or []):
            if isinstance(cls, Mapping):
                yield f"data.classes[{i}].name", cls.get("name")
    elif kind == "parameter-extractor":
        for i, param in enumerate(data.get("parameters") or []):
            if not isinstance(param, Mapping):
                continue
            yield f"data.parameters[{i}].name", param.get("name")
            yield f"data.parameters[{i}].description", param.get("description")
            for j, option in enumerate(param.get("options") or []):
                yield f"data.parameters[{i}].options[{j}]", option


def _never_rendered_texts(data: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    for i, item in enumerate(data.get("default_value") or []):
        if isinstance(item, Mapping):
            yield f"data.default_value[{i}].value", item.get("value")
    if data.get("type") == "start":
        for i, var in enumerate(data.get("variables") or []):
            if not isinstance(var, Mapping):
                continue
            yield f"data.variables[{i}].default", var.get("default")
            for j, option in enumerate(var.get("options") or []):
                yield f"data.variables[{i}].options[{j}]", option


def _jinja_texts(data: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    if data.get("type") == "template-transform":
        yield "data.template", data.get("template")
    elif data.get("type") == "llm":
        for i, message in enumerate(data.get("prompt_template") or []):
            if isinstance(message, Mapping) and message.get("edition_type") == "jinja2":
                yield f"data.prompt_template[{i}].jinja2_text", message.get("jinja2_text")


__all__ = ["template_problems", "DIFY_REFERENCE"]
