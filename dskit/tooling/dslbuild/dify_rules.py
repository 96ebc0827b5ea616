"""``check-dsl``: what real Dify refuses that graphon (Dify's engine, which our tests run) cannot show.

graphon has no database, no plugin daemon and no sandbox limits of an older release. Each rule below
cites where Dify (or the daemon) states it, and each is stricter than the original, so a file that
passes here also passes there, a hand-edited copy included:

- database: conversation and environment variable ids are canonical, unique UUIDs;
- plugin daemon: every ``dependencies`` identifier is ``author/name:version@checksum``;
- release: the DSL ``version`` and the features (booleans) a targeted Dify release accepts;
- limits: the history node's cap keeps every string it writes under the release's limits;
- saving: the state is written before the answer, and nothing after the answer can fail without an
  error strategy in front of an assigner.

One function per rule; :func:`dify_problems` runs them all. New rules go in their own section.
"""

from __future__ import annotations

import ast
import re
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

from dskit.base.limits import CODE_MAX_STRING_LENGTH
from dskit.tooling.dslbuild.dify_versions import BOOLEANS_SINCE, Target, confirmation_needed, dsl_version_for
from dskit.tooling.dslbuild.problems import Problem

# --------------------------------------------------------------------------------------------------
# Database: variable ids
# --------------------------------------------------------------------------------------------------


def variable_id_problems(workflow: Mapping[str, Any]) -> list[Problem]:
    """Every variable id is a canonical UUID, unique across both lists.

    Dify stores a conversation's variables with the DSL's id as primary key (api/models/workflow.py,
    ``ConversationVariable.id: mapped_column(StringUUID, primary_key=True)``; api/models/types.py
    ``StringUUID`` is PostgreSQL's native ``UUID()``): a non-UUID id fails the first chat message
    with ``invalid input syntax for type uuid`` (langgenius/dify PR #37196). PostgreSQL also accepts
    upper case, braces and missing hyphens; this check wants the lower-case hyphenated form Dify's
    own exports carry, and no two variables with one id (they would share one database row).
    """
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    for section in ("conversation_variables", "environment_variables"):
        for index, item in enumerate(workflow.get(section) or []):
            if not isinstance(item, Mapping):
                continue
            where = f"workflow.{section}[{index}].id"
            value = item.get("id")
            if not _is_canonical_uuid(value):
                problems.append(Problem("document", where, f"{value!r} is not a UUID: Dify stores the "
                                        "variable under this id in a uuid column and the first chat "
                                        "message fails (e.g. 3f2b8c1e-…, lower case with hyphens)"))
                continue
            if value in seen:
                problems.append(Problem("document", where, f"id {value} is also used by {seen[value]}"))
            seen.setdefault(str(value), f"workflow.{section}[{index}]")
    return problems


def _is_canonical_uuid(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        return str(uuid.UUID(value)) == value
    except ValueError:
        return False


# --------------------------------------------------------------------------------------------------
# Plugin daemon: dependency identifiers
# --------------------------------------------------------------------------------------------------

# dify-plugin-daemon pkg/entities/plugin_entities/identity.go, ``pluginUniqueIdentifierRegexp``;
# the author part is optional there and required here.
PLUGIN_IDENTIFIER = re.compile(
    r"^([a-z0-9_-]{1,64})/([a-z0-9_-]{1,255}):([0-9]{1,4})(\.[0-9]{1,4}){1,3}(-\w{1,16})?@[a-f0-9]{32,64}$")
# api/core/plugin/entities/plugin.py ``PluginDependency``: the identifier's key per type.
DEPENDENCY_KEYS = {"marketplace": "marketplace_plugin_unique_identifier", "package": "plugin_unique_identifier",
                   "github": "github_plugin_unique_identifier"}


def dependency_problems(doc: Mapping[str, Any]) -> list[Problem]:
    """Each ``dependencies`` entry validates like Dify's ``PluginDependency`` and names a full identifier.

    On import Dify sends every identifier to the daemon's missing-dependency check
    (internal/server/controllers/plugins.go ``FetchMissingPluginInstallations``:
    ``validate:"required,max=256,dive,plugin_unique_identifier"``); one identifier without its
    ``@checksum`` makes the daemon answer 400 for the whole request, and no missing plugin is
    offered at all.
    """
    problems: list[Problem] = []
    deps = doc.get("dependencies")
    if deps is None:
        return problems
    if not isinstance(deps, list):
        return [Problem("document", "dependencies", "must be a list")]
    for index, dep in enumerate(deps):
        where = f"dependencies[{index}]"
        if not isinstance(dep, Mapping):
            problems.append(Problem("document", where, "must be a mapping"))
            continue
        kind = dep.get("type")
        key = DEPENDENCY_KEYS.get(str(kind))
        value = dep.get("value")
        if key is None:
            problems.append(Problem("document", f"{where}.type", f"{kind!r} is not one of {sorted(DEPENDENCY_KEYS)}"))
            continue
        if not isinstance(value, Mapping) or not isinstance(value.get(key), str):
            problems.append(Problem("document", f"{where}.value.{key}", f"a {kind} dependency needs {key}"))
            continue
        ident = value[key]
        if not PLUGIN_IDENTIFIER.fullmatch(ident):
            problems.append(Problem("document", f"{where}.value.{key}", f"{ident!r} is not author/name:version@"
                                    "checksum: Dify's plugin daemon refuses the whole dependency check "
                                    "(HTTP 400), so no missing plugin is offered on import"))
    return problems


# --------------------------------------------------------------------------------------------------
# The targeted release: DSL version and features
# --------------------------------------------------------------------------------------------------


def release_problems(doc: Mapping[str, Any], nodes: Mapping[str, Mapping[str, Any]], target: Target
                     ) -> list[Problem]:
    """What needs a newer Dify than ``target``: the DSL version, booleans (Dify 1.8, PR #24437)."""
    problems: list[Problem] = []
    version = doc.get("version")
    if isinstance(version, str):
        if not re.fullmatch(r"\d+\.\d+\.\d+", version):
            problems.append(Problem("document", "version", f"{version!r} is not X.Y.Z: Dify's import fails"))
        elif confirmation_needed(version, target.release):
            server = dsl_version_for(target.release)
            problems.append(Problem("document", "version", f"{version}: Dify {target.name} (DSL {server}) "
                                    "asks the user to confirm the import and then skips the plugin "
                                    f"prompt; declare {server}"))
    if target.release >= BOOLEANS_SINCE:
        return problems
    since = f"needs Dify {BOOLEANS_SINCE[0]}.{BOOLEANS_SINCE[1]} (booleans, langgenius/dify PR #24437); " \
            f"this file targets {target.name}"
    workflow = doc.get("workflow") or {}
    for index, item in enumerate(workflow.get("conversation_variables") or []):
        if isinstance(item, Mapping) and "boolean" in str(item.get("value_type")):
            problems.append(Problem("document", f"workflow.conversation_variables[{index}].value_type",
                                    f"{item.get('value_type')} {since}"))
    for node_id, data in nodes.items():
        for field, what in _boolean_uses(data):
            problems.append(Problem(node_id, field, f"{what} {since}"))
    return problems


def _boolean_uses(data: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    kind = data.get("type")
    if kind == "code":
        for name, spec in (data.get("outputs") or {}).items():
            if isinstance(spec, Mapping) and "boolean" in str(spec.get("type")):
                yield f"data.outputs.{name}.type", f"a {spec.get('type')} output"
    elif kind == "if-else":
        for i, case in enumerate(data.get("cases") or []):
            for j, cond in enumerate(case.get("conditions") or [] if isinstance(case, Mapping) else []):
                if isinstance(cond, Mapping) and ("boolean" in str(cond.get("varType"))
                                                  or isinstance(cond.get("value"), bool)):
                    yield f"data.cases[{i}].conditions[{j}]", "a condition on a boolean"
    elif kind == "start":
        for i, var in enumerate(data.get("variables") or []):
            if isinstance(var, Mapping) and var.get("type") == "checkbox":
                yield f"data.variables[{i}].type", "a checkbox input"


# --------------------------------------------------------------------------------------------------
# Code-node limits of the targeted release
# --------------------------------------------------------------------------------------------------


def limit_problems(nodes: Mapping[str, Mapping[str, Any]], target: Target) -> list[Problem]:
    """A history code node's ``max_bytes`` keeps every string it returns under the string limit.

    Dify checks each string a code node returns (api/core/workflow/nodes/code/code_node.py
    ``_check_string``, graphon the same): longer than ``CODE_MAX_STRING_LENGTH`` (80,000 characters
    until PR #26592) fails the node. The history node returns the history (up to ``max_bytes``) and
    a summary prompt carrying up to ``max_bytes`` of overflow plus the summary, so the cap needs room
    under the limit (:data:`dskit.tooling.codegen.nodespecs.HISTORY_CODE_NODE_MAX_BYTES`).
    """
    from dskit.tooling.codegen.nodespecs import HISTORY_CODE_NODE_MAX_BYTES  # noqa: PLC0415

    _ = target  # every release we know of up to PR #26592 has the same limit; newer ones are larger
    problems: list[Problem] = []
    for node_id, data in nodes.items():
        if data.get("type") != "code" or not isinstance(data.get("code"), str):
            continue
        value = _main_default(data["code"], "max_bytes")
        if isinstance(value, int) and not isinstance(value, bool) and value > HISTORY_CODE_NODE_MAX_BYTES:
            problems.append(Problem(node_id, "data.code", f"main(max_bytes={value:,}): the history and the "
                                    f"summary prompt can exceed Dify's {CODE_MAX_STRING_LENGTH:,}-character "
                                    f"limit on code-node strings; use at most {HISTORY_CODE_NODE_MAX_BYTES:,}"))
    return problems


def _main_default(source: str, name: str) -> Any:
    """The literal default of ``main``'s parameter ``name``; None when absent or not a literal."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "main":
            args = node.args
            positional = args.posonlyargs + args.args
            pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
            pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
            for arg, default in pairs:
                if arg.arg == name:
                    try:
                        return ast.literal_eval(default)
                    except (ValueError, SyntaxError, RecursionError):
                        return None
    return None


# --------------------------------------------------------------------------------------------------
# Saving: nothing after the answer may lose the state
# --------------------------------------------------------------------------------------------------

STATE_VARIABLE = "sys_context_str"
# Node types that cannot fail on their own (everything else runs code, a model, a tool or a request).
CANNOT_FAIL = frozenset({"start", "answer", "end", "if-else", "variable-aggregator", "assigner",
                         "variable-assigner"})
ERROR_STRATEGIES = frozenset({"fail-branch", "default-value"})


def saving_problems(nodes: Mapping[str, Mapping[str, Any]], succ: Mapping[str, list[tuple[str, str]]],
                    pred: Mapping[str, list[str]]) -> list[Problem]:
    """The state is written before the answer; no node between an answer and an assigner can fail
    without an error strategy.

    A node without ``error_strategy`` that fails stops the run (graphon
    engine/event/node_failure.py: no strategy -> abort; Dify's engine the same): the user has seen
    the reply, but the assigners after the failing node never run, and the next turn starts from the
    old state. A failure behind the state's write repeats the turn forever (a model timeout in a
    summary, dify-sandbox's intermittent seccomp failure, #274).
    """
    answers = {n for n, d in nodes.items() if d.get("type") == "answer"}
    after_answer = _descendants(answers, succ)
    problems: list[Problem] = []
    for node_id, data in nodes.items():
        if data.get("type") not in {"assigner", "variable-assigner"}:
            continue
        written = [_written_variable(item) for item in data.get("items") or [] if isinstance(item, Mapping)]
        before = _ancestors(node_id, pred)
        if STATE_VARIABLE in written and before & answers:
            problems.append(Problem(node_id, "data.items", f"writes conversation.{STATE_VARIABLE} after the "
                                    "answer: save the state before the answer node, so that nothing that "
                                    "fails after the reply can lose it"))
        for risky in sorted(before & after_answer):
            kind = nodes[risky].get("type")
            if kind in CANNOT_FAIL or nodes[risky].get("error_strategy") in ERROR_STRATEGIES:
                continue
            names = ", ".join(f"conversation.{w}" for w in written if w)
            problems.append(Problem(risky, "data.error_strategy", f"runs after the answer without an error "
                                    f"strategy: if it fails, {node_id!r} never writes {names}; give it "
                                    "error_strategy fail-branch or default-value"))
    return problems


def _written_variable(item: Mapping[str, Any]) -> str:
    selector = item.get("variable_selector") or []
    return str(selector[1]) if isinstance(selector, list) and len(selector) > 1 else ""


def _descendants(roots: set[str], succ: Mapping[str, list[tuple[str, str]]]) -> set[str]:
    seen: set[str] = set()
    stack = [dst for root in roots for _, dst in succ.get(root, [])]
    while stack:
        current = stack.pop()
        if current not in seen:
            seen.add(current)
            stack.extend(dst for _, dst in succ.get(current, []))
    return seen


def _ancestors(node: str, pred: Mapping[str, list[str]]) -> set[str]:
    seen: set[str] = set()
    stack = list(pred.get(node, []))
    while stack:
        current = stack.pop()
        if current not in seen:
            seen.add(current)
            stack.extend(pred.get(current, []))
    return seen


# --------------------------------------------------------------------------------------------------
# All rules
# --------------------------------------------------------------------------------------------------


def dify_problems(doc: Mapping[str, Any], nodes: Mapping[str, Mapping[str, Any]],
                  succ: Mapping[str, list[tuple[str, str]]], pred: Mapping[str, list[str]],
                  target: Target) -> list[Problem]:
    """Every rule of this module, in order: database, daemon, release, limits, saving."""
    workflow = doc.get("workflow") if isinstance(doc.get("workflow"), Mapping) else {}
    return (variable_id_problems(workflow) + dependency_problems(doc) + release_problems(doc, nodes, target)
            + limit_problems(nodes, target) + saving_problems(nodes, succ, pred))
