"""Node ``data`` builders for a Dify Chatflow DSL, one small function per node type.

Why functions and not YAML templates: each function writes the exact shape Dify's editor exports
(and its import accepts without checking) and graphon validates, so a typo in a hand-written template cannot slip into a flow.
They return the node's ``data`` mapping only; :class:`dskit.tooling.dslbuild.builder.Flow` wraps it with
id, position and size.

Selectors are lists like ``["state", "next_action"]``; text fields use Dify's ``{{#node.var#}}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Selector = Sequence[str]


def ref(selector: Selector) -> str:
    """``["state", "question"]`` -> ``{{#state.question#}}`` for use inside text fields."""
    return "{{#" + ".".join(selector) + "#}}"


def _base(node_type: str, title: str, desc: str) -> dict[str, Any]:
    return {"type": node_type, "title": title, "desc": desc, "selected": False}


def model_config(provider: str, name: str, temperature: float = 0.2,
                 extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``model`` block of every LLM-backed node."""
    params: dict[str, Any] = {"temperature": temperature}
    params.update(extra or {})
    return {"provider": provider, "name": name, "mode": "chat", "completion_params": params}


def start(title: str = "开始", desc: str = "") -> dict[str, Any]:
    """A Chatflow's start node; ``sys.query`` and friends come with it."""
    return {**_base("start", title, desc), "variables": []}


def answer(text: str, title: str = "直接回复", desc: str = "") -> dict[str, Any]:
    return {**_base("answer", title, desc), "answer": text, "variables": []}


def llm(model: Mapping[str, Any], system: str, user: str, *, title: str, desc: str = "",
        context: Selector | None = None) -> dict[str, Any]:
    """An LLM node with a system and a user message; no window memory (history is passed in text)."""
    prompt = [
        {"id": f"{title}-system", "role": "system", "text": system},
        {"id": f"{title}-user", "role": "user", "text": user},
    ]
    return {
        **_base("llm", title, desc),
        "model": dict(model),
        "prompt_template": prompt,
        "context": {"enabled": context is not None, "variable_selector": list(context or [])},
        "vision": {"enabled": False},
        "variables": [],
    }


def structured_output(data: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """An LLM node's ``data`` asking for structured output with ``schema`` — the keys Dify's LLM node
    reads (``structured_output_enabled`` is the DSL's name of its ``structured_output_switch_on``;
    ``structured_output.schema`` the JSON schema). The node's ``text`` output stays the model's text;
    the parsed object is ``structured_output``."""
    return {**data, "structured_output_enabled": True, "structured_output": {"schema": dict(schema)}}


def code(source: str, inputs: Sequence[tuple[str, Selector]], outputs: Mapping[str, str], *,
         title: str, desc: str = "") -> dict[str, Any]:
    """A python3 code node; ``outputs`` maps each returned key to its Dify type."""
    return {
        **_base("code", title, desc),
        "code_language": "python3",
        "code": source,
        "variables": [{"variable": name, "value_selector": list(sel)} for name, sel in inputs],
        "outputs": {name: {"type": kind, "children": None} for name, kind in outputs.items()},
    }


def condition(selector: Selector, operator: str, value: str = "", var_type: str = "string",
              cond_id: str = "") -> dict[str, Any]:
    """One if-else condition; ``operator`` is Dify's (is, is not, contains, empty, not empty, =, ...)."""
    return {
        "id": cond_id or f"{'-'.join(selector)}-{operator}-{value}".replace(" ", "_"),
        "varType": var_type,
        "variable_selector": list(selector),
        "comparison_operator": operator,
        "value": value,
    }


def case(case_id: str, conditions: Sequence[Mapping[str, Any]], logical_operator: str = "and"
         ) -> dict[str, Any]:
    """One if-else case; its ``case_id`` is also the source handle of the edge it takes."""
    return {"id": case_id, "case_id": case_id, "logical_operator": logical_operator,
            "conditions": [dict(c) for c in conditions]}


def if_else(cases: Sequence[Mapping[str, Any]], *, title: str, desc: str = "") -> dict[str, Any]:
    """An if-else node; the else branch's edge uses the handle ``"false"``."""
    return {**_base("if-else", title, desc), "cases": [dict(c) for c in cases]}


def assigner(items: Sequence[tuple[str, Selector]], *, title: str, desc: str = "",
             clears: Sequence[str] = ()) -> dict[str, Any]:
    """A version-2 variable assigner that over-writes each conversation variable from a selector, then
    clears each of ``clears`` (a string variable becomes ``''``)."""
    return {
        **_base("assigner", title, desc),
        "version": "2",
        "items": [
            {"variable_selector": ["conversation", name], "input_type": "variable",
             "operation": "over-write", "write_mode": "over-write", "value": list(sel)}
            for name, sel in items
        ] + [
            {"variable_selector": ["conversation", name], "input_type": "variable",
             "operation": "clear", "write_mode": "clear", "value": []}
            for name in clears
        ],
    }


def template(text: str, inputs: Sequence[tuple[str, Selector]], *, title: str, desc: str = ""
             ) -> dict[str, Any]:
    """A template-transform (Jinja2) node; output ``output``."""
    return {
        **_base("template-transform", title, desc),
        "template": text,
        "variables": [{"variable": name, "value_selector": list(sel)} for name, sel in inputs],
    }


def aggregator(variables: Sequence[Selector], *, title: str, desc: str = "", output_type: str = "string",
               groups: Mapping[str, Sequence[Selector]] | None = None,
               group_types: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A variable aggregator joining exclusive branches.

    Without ``groups`` its output is ``output``; with groups each group ``g`` outputs ``g.output``
    (Dify's "aggregation group" setting), of type ``group_types[g]`` (default ``output_type``). The
    first variable that exists wins, so list the branch-specific variables before any that every path
    produces.
    """
    group_types = group_types or {}
    data = {**_base("variable-aggregator", title, desc), "output_type": output_type,
            "variables": [list(v) for v in variables]}
    if groups:
        data["variables"] = [list(v) for v in next(iter(groups.values()))]
        data["advanced_settings"] = {
            "group_enabled": True,
            "groups": [
                {"group_name": name, "groupId": name, "output_type": group_types.get(name, output_type),
                 "variables": [list(v) for v in sels]}
                for name, sels in groups.items()
            ],
        }
    return data


def http_request(url: str, body_json: str, *, title: str, desc: str = "",
                 default_outputs: Mapping[str, Any] | None = None, timeout_s: int = 10,
                 headers: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A POST with a JSON body and ``headers`` besides its Content-Type (Dify's ``key:value`` lines, a
    value may hold ``{{#node.var#}}``); failures take default values instead of stopping the run.

    ``error_strategy: default-value`` is Dify's "on failure: output default values": a refused
    connection or a non-2xx status then gives ``status_code`` 0 and ``error_message``, which the
    next node turns into an honest reply.
    """
    defaults = dict(default_outputs or {"status_code": 0, "body": ""})
    default_value = [
        {"key": key, "type": "number" if isinstance(value, int | float) else "string", "value": value}
        for key, value in defaults.items()
    ]
    return {
        **_base("http-request", title, desc),
        "method": "post",
        "url": url,
        "authorization": {"type": "no-auth", "config": None},
        "headers": "\n".join(f"{key}:{value}" for key, value in
                              {"Content-Type": "application/json", **dict(headers or {})}.items()),
        "params": "",
        "body": {"type": "json", "data": [{"id": "body", "key": "", "type": "text", "value": body_json}]},
        "timeout": {"connect": timeout_s, "read": timeout_s, "write": timeout_s,
                    "max_connect_timeout": 0, "max_read_timeout": 0, "max_write_timeout": 0},
        "retry_config": {"retry_enabled": False, "max_retries": 0, "retry_interval": 100},
        "ssl_verify": True,
        "error_strategy": "default-value",
        "default_value": default_value,
        "variables": [],
    }


# ---------------------------------------------------------------- failure handling (any node)
#
# Dify's per-node settings (graphon entities/base_node_data.py ``RetryConfig``, ``ErrorStrategy``,
# ``DefaultValue``): a node retries ``max_retries`` times ``retry_interval`` ms apart (code, LLM, tool
# and HTTP nodes), then fails the run unless it has an error strategy: ``fail-branch`` takes the
# node's ``fail-branch`` edge (none: the branch just ends), ``default-value`` continues with the
# given outputs.

def with_retry(data: Mapping[str, Any], max_retries: int = 2, interval_ms: int = 200) -> dict[str, Any]:
    """``data`` retried on failure: code nodes are pure, so a retry only costs time (dify-sandbox's
    intermittent seccomp failure, #274, passes on the next run)."""
    return {**data, "retry_config": {"retry_enabled": True, "max_retries": max_retries,
                                     "retry_interval": interval_ms}}


def fail_branch(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` that, when it fails for good, takes its ``fail-branch`` edge instead of ending the run."""
    return {**data, "error_strategy": "fail-branch"}


def default_values(data: Mapping[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` that, when it fails for good, continues with ``values`` as its outputs."""
    typed = [{"key": key, "type": "number" if isinstance(value, int | float) else "string", "value": value}
             for key, value in values.items()]
    return {**data, "error_strategy": "default-value", "default_value": typed}


def knowledge_retrieval(query: Selector, *, title: str, desc: str = "", top_k: int = 4
                        ) -> dict[str, Any]:
    """Knowledge retrieval with no dataset: the user picks one after import (README explains)."""
    return {
        **_base("knowledge-retrieval", title, desc),
        "query_variable_selector": list(query),
        "dataset_ids": [],
        "retrieval_mode": "multiple",
        "multiple_retrieval_config": {"top_k": top_k, "reranking_enable": False,
                                      "score_threshold": None},
    }


def question_classifier(model: Mapping[str, Any], query: Selector,
                        classes: Sequence[tuple[str, str]], instruction: str, *, title: str,
                        desc: str = "") -> dict[str, Any]:
    """A question classifier; each class ``(id, name)`` gets an edge with handle ``id``."""
    return {
        **_base("question-classifier", title, desc),
        "model": dict(model),
        "query_variable_selector": list(query),
        "classes": [{"id": cid, "name": name} for cid, name in classes],
        "instruction": instruction,
        "instructions": instruction,
        "topics": [],
        "vision": {"enabled": False},
    }


def parameter_extractor(model: Mapping[str, Any], query: Selector,
                        parameters: Sequence[Mapping[str, Any]], instruction: str, *, title: str,
                        desc: str = "", reasoning_mode: str = "prompt") -> dict[str, Any]:
    """A parameter extractor; outputs each parameter plus ``__is_success`` and ``__reason``."""
    return {
        **_base("parameter-extractor", title, desc),
        "model": dict(model),
        "query": list(query),
        "parameters": [dict(p) for p in parameters],
        "instruction": instruction,
        "reasoning_mode": reasoning_mode,
        "vision": {"enabled": False},
    }


# Outputs each node type produces for references elsewhere in the graph (check-dsl reads these).
STATIC_OUTPUTS: dict[str, tuple[str, ...]] = {
    "start": ("query", "files"),
    "answer": ("answer", "files"),
    "llm": ("text", "usage", "reasoning_content", "finish_reason", "structured_output"),
    "template-transform": ("output",),
    "knowledge-retrieval": ("result",),
    "http-request": ("status_code", "body", "headers", "files"),
    "question-classifier": ("class_name", "class_id", "class_label", "usage"),
    "if-else": ("result", "selected_case_id"),
    "assigner": (),
}
ERROR_OUTPUTS = ("error_message", "error_type")


def node_outputs(data: Mapping[str, Any]) -> set[str]:
    """Names another node may reference on this node (first selector element after the node id)."""
    kind = str(data.get("type", ""))
    names = set(STATIC_OUTPUTS.get(kind, ()))
    if kind == "start":
        names |= {str(v.get("variable")) for v in data.get("variables") or [] if isinstance(v, Mapping)}
    elif kind == "code":
        names |= set((data.get("outputs") or {}).keys())
    elif kind == "parameter-extractor":
        names |= {str(p.get("name")) for p in data.get("parameters") or [] if isinstance(p, Mapping)}
        names |= {"__is_success", "__reason", "__usage", "usage"}
    elif kind == "variable-aggregator":
        settings = data.get("advanced_settings") or {}
        if settings.get("group_enabled"):
            names |= {str(g.get("group_name")) for g in settings.get("groups") or []}
        else:
            names.add("output")
    if data.get("error_strategy"):
        names |= set(ERROR_OUTPUTS)
    return names
