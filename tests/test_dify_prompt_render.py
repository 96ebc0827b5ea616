"""Every model prompt of every Chatflow, rendered the way a real Dify renders it: no raw placeholder.

Dify (langgenius/dify, api/core/workflow/nodes/llm/node.py, ``LLMNode.handle_list_messages``) fills
the knowledge context into a basic prompt message only when the retrieval returned something::

    if context:
        template = message.text.replace("{#context#}", context)
    else:
        template = message.text
    segment_group = variable_pool.convert_template(template)

and ``convert_template`` replaces only ``{{#node.var#}}`` selectors (a dot and a node id:
``VARIABLE_PATTERN`` in graphon/variables/template_resolution.py, the same as Dify's), so with an
empty or missing knowledge base a prompt holding ``{{#context#}}`` reaches the model verbatim (and a
filled one keeps the outer braces: "{passages}"). graphon substitutes the whole placeholder, an empty
string when there is nothing, so no graphon run can see it. This test renders each prompt with Dify's
rule, for an empty and a non-empty context, and finds no placeholder. The code-node Chatflows' FAQ
answer reads ``{{#context#}}`` — and runs only on the branch of an if-else whose condition is that its
context variable is not empty (``has_passages``: issue 39, a template node before it was one more
sandbox run), so Dify always fills it; the plugin layout's reads the ``faq_knowledge`` template's text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]
# Dify's / graphon's selector pattern (graphon/variables/template_resolution.py VARIABLE_PATTERN).
VARIABLE_PATTERN = re.compile(r"\{\{#([a-zA-Z0-9_]{1,50}(?:\.[a-zA-Z_][a-zA-Z0-9_]{0,29}){1,10})#\}\}")
CONTEXT_PLACEHOLDER = "{{#context#}}"
PLACEHOLDER = re.compile(r"\{\{?#[^#]*#\}\}?")


def render_like_dify(text: str, context: str) -> str:
    """One basic prompt message as Dify renders it: the context only when non-empty (Dify replaces
    ``{#context#}``, inside the placeholder's outer braces), then every ``{{#node.var#}}`` selector by its
    value (here: a stand-in naming the selector)."""
    template = text.replace("{#context#}", context) if context else text
    return VARIABLE_PATTERN.sub(lambda m: f"<{m.group(1)}>", template)


def prompt_texts(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """(node id, text) of every text a model node sends: LLM messages, classifier and extractor
    instructions."""
    out = []
    for node in doc["workflow"]["graph"]["nodes"]:
        data = node["data"]
        if data.get("type") == "llm":
            out += [(node["id"], m.get("text", "")) for m in data.get("prompt_template") or []]
        elif data.get("type") in {"question-classifier", "parameter-extractor"}:
            out.append((node["id"], data.get("instruction") or ""))
    return out


def guarded_by_its_context(doc: dict[str, Any], node_id: str) -> bool:
    """Whether LLM node ``node_id`` runs only when its context variable is not empty: its context is
    enabled, and every edge into it leaves an if-else case whose conditions (all of them) include that
    variable "not empty"."""
    nodes = {n["id"]: n["data"] for n in doc["workflow"]["graph"]["nodes"]}
    context = nodes[node_id].get("context") or {}
    selector = list(context.get("variable_selector") or [])
    edges = [e for e in doc["workflow"]["graph"]["edges"] if e["target"] == node_id]
    if not context.get("enabled") or not selector or not edges:
        return False
    for edge in edges:
        source = nodes[edge["source"]]
        case = next((c for c in source.get("cases") or [] if c.get("case_id") == edge["sourceHandle"]), None)
        if source.get("type") != "if-else" or case is None or case.get("logical_operator") != "and" or not any(
                c.get("variable_selector") == selector and c.get("comparison_operator") == "not empty"
                for c in case.get("conditions") or []):
            return False
    return True


def _documents() -> dict[str, dict[str, Any]]:
    from dskit.tooling.dslbuild.code_sources import shipped_code_nodes
    from dskit.tooling.dslbuild.flows import FlowOptions, build_classic, build_fast
    from dskit.tooling.dslbuild.plugin_flow import build_plugin

    docs = {path.name: yaml.safe_load(path.read_text(encoding="utf-8")) for path in sorted((ROOT / "dsl").glob("*.yml"))}
    for name in ("bike_repair_en", "pet_clinic_zh"):
        catalog = json.loads((ROOT / "examples" / "catalogs" / f"{name}.json").read_text(encoding="utf-8"))
        options = FlowOptions(catalog_json=json.dumps(catalog, ensure_ascii=False), lang=catalog["language"],
                              localized=True)
        with shipped_code_nodes():  # prompts only: the code nodes' text does not matter here
            for layout, build in (("fast", build_fast), ("classic", build_classic), ("plugin", build_plugin)):
                docs[f"{name}:{layout}"] = build(options).to_dict()
    return docs


DOCS = _documents()


def test_the_renderer_sees_what_dify_leaves_behind() -> None:
    """A prompt reading the context, rendered with an empty one, shows the model the raw placeholder."""
    old = "## Knowledge\n{{#context#}}\n{{#state.faq_question#}}"
    assert CONTEXT_PLACEHOLDER in render_like_dify(old, "")
    assert render_like_dify(old, "passage") == "## Knowledge\n{passage}\n<state.faq_question>"


@pytest.mark.parametrize("name", sorted(DOCS))
@pytest.mark.parametrize("context", ["", "Passage one.\n\nPassage two."])
def test_no_prompt_shows_a_placeholder_to_the_model(name, context) -> None:
    """A node that reads the context runs only with a non-empty one (below): rendered with that."""
    texts = prompt_texts(DOCS[name])
    assert texts, name
    for node_id, text in texts:
        guarded = CONTEXT_PLACEHOLDER in text and guarded_by_its_context(DOCS[name], node_id)
        rendered = render_like_dify(text, context or ("Passage." if guarded else ""))
        assert not PLACEHOLDER.search(rendered), f"{name} {node_id}: {rendered[:200]!r}"


@pytest.mark.parametrize("name", sorted(DOCS))
def test_a_prompt_reads_the_context_only_where_it_is_never_empty(name) -> None:
    """A model node reading ``{{#context#}}`` runs only on the branch that found passages; the code-node
    layouts' FAQ answer does, the plugin layout's reads the template's text."""
    readers = [node["id"] for node in DOCS[name]["workflow"]["graph"]["nodes"] if node["data"].get("type") == "llm"
               and any(CONTEXT_PLACEHOLDER in m.get("text", "") for m in node["data"]["prompt_template"])]
    for node_id in readers:
        assert guarded_by_its_context(DOCS[name], node_id), (name, node_id)
    assert readers == ([] if "plugin" in name else ["faq_answer"]), name


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_knowledge_text_is_what_dify_makes_of_the_passages(lang) -> None:
    """The faq_knowledge template renders a retrieval result as Dify's and graphon's LLM node build the
    context from it (graphon/nodes/llm/node.py ``_build_array_context_event``: each item's summary, if
    any, and content, each followed by a newline, the whole stripped), and as "" for no passage."""
    jinja2 = pytest.importorskip("jinja2")
    from dskit.tooling.dslbuild.prompts import KNOWLEDGE_TEMPLATE

    def dify_context(items: list[dict[str, Any]]) -> str:
        return "".join((f"{i['summary']}\n" if i.get("summary") else "") + f"{i['content']}\n" for i in items).strip()

    template = jinja2.Environment(undefined=jinja2.StrictUndefined).from_string(KNOWLEDGE_TEMPLATE[lang])
    for items in ([], [{"content": "Open 9-18.", "title": "hours"}],
                  [{"content": " A\n", "title": "a"}, {"content": "B", "summary": "S", "title": "b"}]):
        assert template.render(result=items) == dify_context(items), items
