"""check-dsl rules that read the task catalog: the classic layout's wiring, and bounded model calls.

The classic layout bakes the catalog into three places that must agree with ``TASK_CATALOG``: the
question classifier's classes (one per task, plus the non-task classes of
:data:`dskit.surfaces.classic.CLASSIC_CLASSES`), the parameter extractor's parameters (one per slot name) and
the adapter code node's inputs (one per parameter, bound to the extractor). A hand edit that breaks
one of them imports and runs, and then silently never starts a task or never fills a slot. Each rule
returns ``(node, field, message)`` triples; :func:`dskit.tooling.dslbuild.check.check_dsl` makes
them problems.

Every model call must also be bounded: an LLM node without ``max_tokens`` lets a small model generate
until the provider's own limit (a parameter extractor once ran for 14 minutes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dskit.catalog.catalog import Catalog, CatalogError, load_catalog
from dskit.surfaces.classic import GENERIC_TASK_CLASSES, TASK_PARAMETER_KEYS, class_of

Found = tuple[str, str, str]
MODEL_NODE_TYPES = ("llm", "question-classifier", "parameter-extractor")
ADAPTER_INPUTS = ("class_name", "query", "task_catalog", "sys_context_str")


def _nodes(doc: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    graph = ((doc.get("workflow") or {}).get("graph") or {}) if isinstance(doc, Mapping) else {}
    found = {}
    for node in graph.get("nodes") or []:
        if isinstance(node, Mapping) and isinstance(node.get("data"), Mapping):
            found[str(node.get("id"))] = node["data"]
    return found


def _catalog(doc: Mapping[str, Any]) -> Catalog | None:
    for item in (doc.get("workflow") or {}).get("environment_variables") or []:
        if isinstance(item, Mapping) and item.get("name") == "TASK_CATALOG":
            try:
                return load_catalog(str(item.get("value") or ""))
            except (CatalogError, ValueError):
                return None
    return None


def bound_problems(doc: Mapping[str, Any]) -> list[Found]:
    """Every LLM-backed node, and every model chosen for a tool, sets a positive ``max_tokens``."""
    found: list[Found] = []
    for node_id, data in _nodes(doc).items():
        if data.get("type") in MODEL_NODE_TYPES:
            params = (data.get("model") or {}).get("completion_params") or {}
            if not _positive(params.get("max_tokens")):
                found.append((node_id, "data.model.completion_params.max_tokens",
                              "not set: a model that does not stop runs until the provider's limit"))
        elif data.get("type") == "tool":
            for key, config in (data.get("tool_configurations") or {}).items():
                value = config.get("value") if isinstance(config, Mapping) else None
                if isinstance(value, Mapping) and value.get("type") == "model-selector":
                    params = value.get("completion_params") or {}
                    if not _positive(params.get("max_tokens")):
                        found.append((node_id, f"data.tool_configurations.{key}.completion_params.max_tokens",
                                      "not set: a model that does not stop runs until the provider's limit"))
    return found


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def classic_problems(doc: Mapping[str, Any]) -> list[Found]:
    """The classic layout against TASK_CATALOG: classes, extractor parameters, adapter inputs.

    Only a DSL with a question classifier and an adapter (a code node with a ``class_name`` input, or
    one reading the classifier or the extractor) is a classic layout; any other passes. Without a readable TASK_CATALOG nothing can be compared (the
    state node reports a broken catalog at run time).
    """
    nodes = _nodes(doc)
    classifiers = {i: d for i, d in nodes.items() if d.get("type") == "question-classifier"}
    extractors = {i: d for i, d in nodes.items() if d.get("type") == "parameter-extractor"}
    feeders = set(classifiers) | set(extractors)
    adapters = {i: d for i, d in nodes.items() if d.get("type") == "code" and any(
        isinstance(v, Mapping) and (v.get("variable") == "class_name" or (v.get("value_selector") or [None])[0] in feeders)
        for v in d.get("variables") or [])}
    catalog = _catalog(doc)
    if not classifiers or not adapters or catalog is None:
        return []
    found: list[Found] = []
    generic = False
    for node_id, data in classifiers.items():
        named: set[str] = set()
        for index, entry in enumerate(data.get("classes") or []):
            name = str((entry or {}).get("name") or "").strip() if isinstance(entry, Mapping) else ""
            spec = catalog.task(name)
            if spec is not None:
                named.add(spec.name)
            elif name in GENERIC_TASK_CLASSES:
                generic = True
            elif class_of(name) is None:
                found.append((node_id, f"data.classes[{index}].name",
                              f"{name!r} is no task of TASK_CATALOG (name or label) and no other class the adapter "
                              "knows: messages classified so are never understood"))
        if not generic:
            for task in catalog.tasks.values():
                if task.name not in named:
                    found.append((node_id, "data.classes", f"task {task.name!r} ({task.display}) has no class: "
                                  "the classifier can never start it"))
    slots = {name for task in catalog.tasks.values() for name in task.slots}
    params: dict[str, str] = {}
    for node_id, data in extractors.items():
        for index, param in enumerate(data.get("parameters") or []):
            name = str((param or {}).get("name") or "") if isinstance(param, Mapping) else ""
            params[name] = node_id
            if name not in slots and not (generic and name in TASK_PARAMETER_KEYS):
                found.append((node_id, f"data.parameters[{index}].name",
                              f"{name!r} is no slot of any task in TASK_CATALOG: its value is never used"))
    if extractors:
        for task in catalog.tasks.values():
            for slot in task.slots:
                if slot not in params:
                    found.append((next(iter(extractors)), "data.parameters",
                                  f"slot {slot!r} of {task.name} has no parameter: the classic layout can never fill it"))
    for node_id, data in adapters.items():
        bound = {str(v.get("variable")): list(v.get("value_selector") or [])
                 for v in data.get("variables") or [] if isinstance(v, Mapping)}
        for name in ADAPTER_INPUTS:
            if name not in bound:
                found.append((node_id, "data.variables", f"no input {name!r}: the adapter cannot build the understanding"))
        for name, extractor in params.items():
            if bound.get(name) != [extractor, name]:
                found.append((node_id, "data.variables",
                              f"no input {name!r} bound to {extractor}.{name}: the extracted value never reaches "
                              "the state"))
    return found


__all__ = ["bound_problems", "classic_problems"]
