"""``check-dsl``: the checks Dify's import does not make (Dify imports a broken graph
without complaint; it fails only when a user runs it).

Each problem names the node and the field, e.g.
``state: data.variables[1].value_selector: points at 'understnd', which is not a node``, so a
person can find it in the editor. Checks:

- document: version string, kind app, advanced-chat, conversation/environment variable entries;
- nodes: unique ids, exactly one start, ids usable in ``{{#…#}}`` references, positions, overlaps;
- edges: both ends exist, handles valid for the source node (if-else case ids / ``false``,
  classifier class ids, fail-branch), every if-else case, else branch and classifier class wired;
- references: every ``{{#…#}}`` and every value selector points at an output of an *upstream*
  node, a conversation variable, an environment variable or a ``sys`` variable;
- template syntax where it is not a template of that kind: in a class name or an extractor's
  parameter text (rendered, so it would paste user data into the prompt), in text Dify never renders,
  and ``{{#…#}}`` in a Jinja2 template (:mod:`.template_rules`);
- code nodes: what dify-sandbox refuses (Python 3.10 syntax, standard library only), ``main``
  exists, its parameters match the declared variables, its returned keys match the declared
  outputs where dict literals show them;
- flow: no cycle, no node unreachable from start, every path from start passes an answer node;
- LLM nodes: provider ORG/PLUGIN/PROVIDER with a matching ``dependencies`` entry, and a
  ``max_tokens`` on every model call (:mod:`.check_classic`);
- the classic layout against TASK_CATALOG: every class a task or a known class, every task a class,
  every extractor parameter a slot, every parameter an adapter input (:mod:`.check_classic`);
- real Dify (:mod:`.dify_rules`): UUID variable ids, full plugin identifiers, the DSL version and
  features of the targeted release, code-node limits, the state saved before the answer.

Checking never executes the file: it is parsed as YAML with a bound on aliases and nesting (a 1 KB
alias bomb would otherwise expand to gigabytes) and code is read with ``ast``. ``run_code=True``
(``check-dsl --run-code``) also runs each code node's ``main`` once on empty inputs, in a separate
interpreter with Dify's sandbox restrictions (:func:`dskit.tooling.codegen.sandbox.run_code_node`
with ``restricted=True``: no os, subprocess, sockets or file writes).
"""

from __future__ import annotations

import ast
import json
import re
from functools import lru_cache
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from dskit.tooling.codegen.sandbox import CodeNodeError, checked_source, run_code_node
from dskit.tooling.dslbuild.check_classic import bound_problems, classic_problems
from dskit.tooling.dslbuild.dify_rules import dify_problems
from dskit.tooling.dslbuild.dify_versions import DEFAULT_TARGET, Target
from dskit.tooling.dslbuild.layout import overlaps
from dskit.tooling.dslbuild.node_data import node_outputs
from dskit.tooling.dslbuild.problems import Problem, format_problems
from dskit.tooling.dslbuild.template_rules import template_problems

__all__ = ["Problem", "check_dsl", "check_code_node", "format_problems", "load_document", "DslLoadError"]

SYS_VARIABLES = frozenset({
    "query", "files", "conversation_id", "user_id", "dialogue_count", "app_id", "workflow_id",
    "workflow_run_id", "timestamp",
})
CONVERSATION_TYPES = frozenset({"string", "secret", "number", "object", "boolean", "array[string]",
                                "array[number]", "array[object]", "array[boolean]"})
ENV_TYPES = frozenset({"string", "number", "secret"})
LLM_TYPES = frozenset({"llm", "question-classifier", "parameter-extractor"})
# Dify's reference pattern (graphon variables/template_resolution.py): node id, then 1-10 names.
REFERENCE = re.compile(r"\{\{#([a-zA-Z0-9_]{1,50}(?:\.[a-zA-Z_][a-zA-Z0-9_]{0,29}){1,10})#\}\}")
LOOKS_LIKE_REFERENCE = re.compile(r"\{\{#([^#{}]*)#\}\}")
NODE_ID = re.compile(r"^[a-zA-Z0-9_]{1,50}$")


# --------------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------------


# A document may use YAML aliases (Dify's own exports have none); more than this many, or an
# expansion beyond MAX_EXPANDED_NODES, is an alias bomb: 1.3 KB of nested aliases expand to gigabytes
# as soon as anything walks the document. Nesting deeper than MAX_DEPTH is refused for the same reason.
MAX_ALIASES = 64
MAX_EXPANDED_NODES = 500_000
MAX_DEPTH = 200
# Dify's import refuses a larger DSL text (DSL_MAX_SIZE, api/services/app_dsl_service.py); ``check-dsl``
# refuses to read a larger file for the same reason (commands/check_dsl.py), ``dskit new`` checks what it wrote.
DSL_MAX_BYTES = 10 * 1024 * 1024


class DslLoadError(ValueError):
    """The text cannot be read as a DSL document; the message is one line saying why."""


@lru_cache(maxsize=1)
def _bounded_loader() -> type:
    """A ``yaml.SafeLoader`` that counts aliases, expanded nodes and depth while composing."""
    import yaml  # noqa: PLC0415

    class BoundedLoader(yaml.SafeLoader):
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self.dskit_aliases = 0
            self.dskit_expanded = 0
            self.dskit_depth = 0
            self.dskit_sizes: dict[int, int] = {}

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                self.dskit_aliases += 1
                if self.dskit_aliases > MAX_ALIASES:
                    raise DslLoadError(f"more than {MAX_ALIASES} YAML aliases (refused: an alias bomb "
                                       "expands to gigabytes; Dify's exports use none)")
                target = self.anchors.get(event.anchor)
                size = self.dskit_sizes.get(id(target)) if target is not None else None
                if target is not None and size is None:
                    raise DslLoadError(f"YAML alias *{event.anchor} refers to the node that contains it")
                self.dskit_expanded += size or 0
                if self.dskit_expanded > MAX_EXPANDED_NODES:
                    raise DslLoadError(f"YAML aliases expand to more than {MAX_EXPANDED_NODES:,} nodes (refused)")
                return super().compose_node(parent, index)
            self.dskit_depth += 1
            if self.dskit_depth > MAX_DEPTH:
                raise DslLoadError(f"nested deeper than {MAX_DEPTH} levels")
            node = super().compose_node(parent, index)
            self.dskit_depth -= 1
            self.dskit_sizes[id(node)] = 1 + self._dskit_children(node)
            self.dskit_expanded += 1
            if self.dskit_expanded > MAX_EXPANDED_NODES:
                raise DslLoadError(f"more than {MAX_EXPANDED_NODES:,} YAML nodes (refused)")
            return node

        def _dskit_children(self, node: Any) -> int:
            if isinstance(node, yaml.SequenceNode):
                return sum(self.dskit_sizes.get(id(child), 1) for child in node.value)
            if isinstance(node, yaml.MappingNode):
                return sum(self.dskit_sizes.get(id(k), 1) + self.dskit_sizes.get(id(v), 1) for k, v in node.value)
            return 0

    return BoundedLoader


def load_document(text: str) -> Any:
    """The parsed document; raises :class:`DslLoadError` (one line) for anything that is not one."""
    import yaml  # noqa: PLC0415

    loader = _bounded_loader()(text)
    try:
        return loader.get_single_data()
    except DslLoadError:
        raise
    except yaml.MarkedYAMLError as error:
        raise DslLoadError("not valid YAML: " + _yaml_error(error, text)) from None
    except yaml.YAMLError as error:
        raise DslLoadError("not valid YAML: " + " ".join(str(error).split())) from None
    except (RecursionError, MemoryError):
        raise DslLoadError("nested too deeply to read") from None
    finally:
        loader.dispose()


def _yaml_error(error: Any, text: str) -> str:
    """A YAML error on one line, its line counted as grep, sed and editors count it: by \\n alone. PyYAML
    also breaks lines at NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR, so in a file holding them its own
    line numbers are off by as many of them as come before (our generated files hold none)."""
    mark = error.problem_mark or error.context_mark
    index = mark.index if mark is not None and 0 <= mark.index <= len(text) else None
    if index is None:
        return " ".join(str(error).split())
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    said = ", ".join(part for part in (error.context, error.problem) if part)
    snippet = text[text.rfind("\n", 0, index) + 1:].split("\n", 1)[0].strip()[:60]
    return f"{said} at line {line}, column {column}" + (f": {snippet}" if snippet else "")


def check_dsl(source: str | Mapping[str, Any], *, run_code: bool = False, sandbox: bool = True,
              target: Target = DEFAULT_TARGET, progress: Callable[[str], None] | None = None) -> list[Problem]:
    """Every problem found in a DSL document (YAML text or parsed mapping); empty when sound.

    Static by default: nothing in the file is executed. ``run_code=True`` also runs each code node
    whose return keys cannot be read statically, once on empty inputs, under Dify's sandbox
    restrictions in another interpreter. ``sandbox=False`` skips the dify-sandbox source checks
    (``dskit gen`` leaves those to the code-node tests, so one bad engine line does not stop every
    generated file). ``target`` is the Dify release the file must import and run on. ``progress`` is
    told each step as it begins (reading the YAML, the graph, each code node, Dify's rules): checking a
    Chatflow takes seconds, and ``dskit new`` shows what runs.
    """
    step = progress or (lambda _what: None)
    if isinstance(source, str):
        size = len(source.encode("utf-8", "surrogatepass"))
        if size > DSL_MAX_BYTES:
            return [Problem("document", "", f"{size:,} bytes, over the {DSL_MAX_BYTES:,} Dify's import accepts "
                                            "(DSL_MAX_SIZE): the file would be refused")]
        step("reading the YAML")
        try:
            doc = load_document(source)
        except DslLoadError as error:
            return [Problem("document", "", str(error))]
    else:
        doc = source
    problems = _document_problems(doc)
    if problems:
        return problems
    step("the graph, its references and templates")
    graph = _Graph(doc)
    problems += graph.node_problems()
    problems += graph.edge_problems()
    if any(p.field.startswith(("edges", "id")) for p in problems):
        return problems  # references and paths mean little on a graph with broken structure
    problems += graph.flow_problems()
    problems += graph.reference_problems()
    problems += template_problems(doc)
    problems += graph.code_problems(run_code=run_code, sandbox=sandbox, progress=step)
    step("models, layout and Dify's rules")
    problems += graph.model_problems()
    problems += [Problem(*found) for found in bound_problems(doc) + classic_problems(doc)]
    problems += graph.layout_problems()
    problems += dify_problems(doc, graph.data, graph.succ, graph.pred, target)
    return problems


# --------------------------------------------------------------------------------------------------
# Document-level checks
# --------------------------------------------------------------------------------------------------


def _document_problems(doc: Any) -> list[Problem]:
    if not isinstance(doc, Mapping):
        return [Problem("document", "", "the DSL must be a mapping")]
    problems = []
    if not isinstance(doc.get("version"), str):
        problems.append(Problem("document", "version", "must be a string such as \"0.6.0\""))
    if doc.get("kind") != "app":
        problems.append(Problem("document", "kind", "must be 'app'"))
    app = doc.get("app")
    if not isinstance(app, Mapping) or app.get("mode") != "advanced-chat":
        problems.append(Problem("document", "app.mode", "must be 'advanced-chat' (a Chatflow)"))
    workflow = doc.get("workflow")
    if not isinstance(workflow, Mapping):
        return [*problems, Problem("document", "workflow", "missing workflow mapping")]
    graph = workflow.get("graph")
    if not isinstance(graph, Mapping) or not isinstance(graph.get("nodes"), list) \
            or not isinstance(graph.get("edges"), list):
        return [*problems, Problem("document", "workflow.graph", "needs nodes and edges lists")]
    problems += _variable_problems(workflow.get("conversation_variables"), "conversation",
                                   CONVERSATION_TYPES)
    problems += _variable_problems(workflow.get("environment_variables"), "env", ENV_TYPES)
    return problems


def _variable_problems(items: Any, scope: str, types: frozenset[str]) -> list[Problem]:
    section = "conversation_variables" if scope == "conversation" else "environment_variables"
    if items is None:
        return []
    if not isinstance(items, list):
        return [Problem("document", f"workflow.{section}", "must be a list")]
    problems, seen = [], set()
    for index, item in enumerate(items):
        where = f"workflow.{section}[{index}]"
        if not isinstance(item, Mapping):
            problems.append(Problem("document", where, "must be a mapping"))
            continue
        name = item.get("name")
        if not isinstance(name, str) or not re.fullmatch(r"[a-zA-Z_][a-zA-Z0-9_]{0,29}", name):
            problems.append(Problem("document", f"{where}.name", f"invalid variable name {name!r}"))
            continue
        if name in seen:
            problems.append(Problem("document", f"{where}.name", f"duplicate variable {name!r}"))
        seen.add(name)
        if item.get("value_type") not in types:
            problems.append(Problem("document", f"{where}.value_type",
                                    f"{item.get('value_type')!r} is not one of {sorted(types)}"))
        if item.get("value") is None:
            problems.append(Problem("document", f"{where}.value", "must not be null ('' is fine)"))
        if list(item.get("selector") or []) != [scope, name]:
            problems.append(Problem("document", f"{where}.selector", f"must be [{scope}, {name}]"))
    return problems


# --------------------------------------------------------------------------------------------------
# Graph checks
# --------------------------------------------------------------------------------------------------


class _Graph:
    """The graph of one document, indexed for the checks."""

    def __init__(self, doc: Mapping[str, Any]) -> None:
        workflow = doc["workflow"]
        self.doc = doc
        self.raw_nodes = [n for n in workflow["graph"]["nodes"] if isinstance(n, Mapping)
                          and n.get("type") != "custom-note"]
        self.raw_edges = list(workflow["graph"]["edges"])
        self.nodes: dict[str, Mapping[str, Any]] = {}
        for node in self.raw_nodes:
            node_id = str(node.get("id"))
            self.nodes.setdefault(node_id, node)
        self.data = {nid: (n.get("data") if isinstance(n.get("data"), Mapping) else {})
                     for nid, n in self.nodes.items()}
        self.conversation = {str(v.get("name")) for v in workflow.get("conversation_variables") or []
                             if isinstance(v, Mapping)}
        self.env = {str(v.get("name")) for v in workflow.get("environment_variables") or []
                    if isinstance(v, Mapping)}
        self.succ: dict[str, list[tuple[str, str]]] = {nid: [] for nid in self.nodes}
        self.pred: dict[str, list[str]] = {nid: [] for nid in self.nodes}
        for edge in self.raw_edges:
            if not isinstance(edge, Mapping):
                continue
            src, dst = str(edge.get("source")), str(edge.get("target"))
            if src in self.nodes and dst in self.nodes:
                self.succ[src].append((str(edge.get("sourceHandle") or "source"), dst))
                self.pred[dst].append(src)
        starts = [nid for nid, d in self.data.items() if d.get("type") == "start"]
        self.start = starts[0] if len(starts) == 1 else None
        self._ancestors: dict[str, set[str]] = {}

    # ------------------------------------------------------------------ nodes and edges

    def node_problems(self) -> list[Problem]:
        problems, seen = [], set()
        for index, node in enumerate(self.raw_nodes):
            node_id = node.get("id")
            if not isinstance(node_id, str) or not node_id:
                problems.append(Problem(f"nodes[{index}]", "id", "missing node id"))
                continue
            if node_id in seen:
                problems.append(Problem(node_id, "id", f"duplicate node id (nodes[{index}])"))
            seen.add(node_id)
            if not NODE_ID.match(node_id):
                problems.append(Problem(node_id, "id", "node ids may use letters, digits and _ only "
                                        "(other characters break {{#node.var#}} references)"))
            data = node.get("data")
            if not isinstance(data, Mapping) or not data.get("type"):
                problems.append(Problem(node_id, "data.type", "missing node type"))
            elif not data.get("title"):
                problems.append(Problem(node_id, "data.title", "missing title"))
        starts = [nid for nid, d in self.data.items() if d.get("type") == "start"]
        if len(starts) != 1:
            problems.append(Problem("graph", "nodes", f"needs exactly one start node, found {len(starts)}"))
        return problems

    def _valid_handles(self, node_id: str) -> set[str]:
        data = self.data[node_id]
        kind = data.get("type")
        if kind == "if-else":
            handles = {str(c.get("case_id") or c.get("id")) for c in data.get("cases") or []}
            return handles | {"false"}
        if kind == "question-classifier":
            return {str(c.get("id")) for c in data.get("classes") or []}
        if data.get("error_strategy") == "fail-branch":
            return {"source", "success-branch", "fail-branch"}
        return {"source"}

    def _after_answers(self) -> set[str]:
        """Nodes that run only after the turn was answered: every path from start to them passes an
        answer node. An open branch there ends a run whose reply was given; before it, a path must not
        end (:meth:`flow_problems` says where one does)."""
        try:
            return self._reachable() - self._reachable(stop_at_answers=True)
        except Exception:  # noqa: BLE001 - a broken graph is reported elsewhere
            return set()

    def _required_handles(self, node_id: str) -> list[tuple[str, str]]:
        """(handle, field) pairs that must each have an edge."""
        data = self.data[node_id]
        kind = data.get("type")
        if kind == "if-else":
            pairs = [(str(c.get("case_id") or c.get("id")), f"data.cases[{i}]")
                     for i, c in enumerate(data.get("cases") or [])]
            return [*pairs, ("false", "data.else")]
        if kind == "question-classifier":
            return [(str(c.get("id")), f"data.classes[{i}]") for i, c in enumerate(data.get("classes") or [])]
        return []

    def edge_problems(self) -> list[Problem]:
        problems = []
        seen_ids: set[str] = set()
        for index, edge in enumerate(self.raw_edges):
            where = f"edges[{index}]"
            if not isinstance(edge, Mapping):
                problems.append(Problem("graph", where, "edge must be a mapping"))
                continue
            edge_id = str(edge.get("id", ""))
            if edge_id and edge_id in seen_ids:
                problems.append(Problem("graph", f"{where}.id", f"duplicate edge id {edge_id!r}"))
            seen_ids.add(edge_id)
            src, dst = edge.get("source"), edge.get("target")
            for end, value in (("source", src), ("target", dst)):
                if value not in self.nodes:
                    problems.append(Problem(str(edge_id or where), f"{where}.{end}",
                                            f"{value!r} is not a node"))
            if src in self.nodes:
                handle = str(edge.get("sourceHandle") or "source")
                if handle not in self._valid_handles(str(src)):
                    problems.append(Problem(str(src), f"{where}.sourceHandle",
                                            f"{handle!r} is not an output branch of this node "
                                            f"(valid: {sorted(self._valid_handles(str(src)))})"))
        answered = self._after_answers()
        try:
            reached = self._reachable()
        except Exception:  # noqa: BLE001 - a broken graph is reported elsewhere
            reached = set(self.nodes)
        for node_id in self.nodes:
            if node_id not in reached:
                continue  # reported once as unreachable (its open branches are a consequence, not a cause)
            wired = {handle for handle, _ in self.succ[node_id]}
            for handle, field in self._required_handles(node_id):
                if handle == "false" and node_id in answered:
                    continue  # after the answer an else branch may end the run ("no LLM summary due")
                if handle not in wired:
                    problems.append(Problem(node_id, field, f"branch {handle!r} has no edge"))
        return problems

    # ------------------------------------------------------------------ paths

    def _reachable(self, stop_at_answers: bool = False) -> set[str]:
        """Nodes reached from start; with ``stop_at_answers``, answer nodes are not walked past."""
        seen: set[str] = set()
        stack = [self.start] if self.start else []
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            if not (stop_at_answers and self.data[current].get("type") == "answer"):
                stack.extend(dst for _, dst in self.succ[current])
        return seen

    def _cycle(self) -> list[str]:
        color: dict[str, int] = {}
        path: list[str] = []

        def visit(node: str) -> list[str]:
            color[node] = 1
            path.append(node)
            for _, nxt in self.succ[node]:
                if color.get(nxt) == 1:
                    return path[path.index(nxt):] + [nxt]
                if not color.get(nxt):
                    found = visit(nxt)
                    if found:
                        return found
            color[node] = 2
            path.pop()
            return []

        for node in self.nodes:
            if not color.get(node):
                found = visit(node)
                if found:
                    return found
        return []

    def flow_problems(self) -> list[Problem]:
        """Causes first, consequences summarised: a deleted edge leaves one node with no way out and one
        with no way in, and every node after that one unreachable. The dead ends come first, then one
        line per node that lost its way in, naming the nodes only it led to (not one line each)."""
        cycle = self._cycle()
        if cycle:
            return [Problem(cycle[0], "edges", "cycle: " + " -> ".join(cycle))]
        # Walk from start, stopping at answer nodes; reaching a dead end first means a path ends
        # with nothing said to the user.
        dead_ends = [current for current in sorted(self._reachable(stop_at_answers=True))
                     if self.data[current].get("type") != "answer" and not self.succ[current]]
        problems = [Problem(node, "", "a path from start ends here without an answer node (no edge leaves it)")
                    for node in dead_ends]
        reachable = self._reachable()
        unreachable = {node for node in self.nodes if node not in reachable}
        for entry in [node for node in self.nodes if node in unreachable and not self.pred[node]]:
            problems.append(Problem(entry, "", self._lost_entry(entry, unreachable, dead_ends)))
        return problems

    def _lost_entry(self, entry: str, unreachable: set[str], dead_ends: list[str]) -> str:
        """Why ``entry`` (unreachable, no edge comes in) never runs, the unreachable nodes after it, and
        the edge that was probably lost: from a dead end whose outputs ``entry`` reads."""
        seen: set[str] = set()
        stack = [dst for _, dst in self.succ[entry]]
        while stack:
            node = stack.pop()
            if node in unreachable and node not in seen and node != entry:
                seen.add(node)
                stack.extend(dst for _, dst in self.succ[node])
        after = [node for node in self.nodes if node in seen]  # in document order
        text = "unreachable from the start node: no edge leads to it"
        if after:
            shown = ", ".join(after[:5]) + (f" and {len(after) - 5} more" if len(after) > 5 else "")
            text += f", so the {len(after)} node{'s' if len(after) != 1 else ''} after it never run either ({shown})"
        reads = self._reads(entry)
        lost = [node for node in dead_ends if node in reads]
        if lost:
            text += f"; it reads {lost[0]}'s output: is the edge {lost[0]} -> {entry} missing?"
        return text

    def _reads(self, node_id: str) -> set[str]:
        """The nodes whose outputs ``node_id`` reads (value selectors and ``{{#node.var#}}`` references)."""
        data = self.data[node_id]
        found = {str(sel[0]) for _, sel in self._selector_fields(data) if isinstance(sel, list | tuple) and sel}
        for _, text in self._text_fields(data):
            if isinstance(text, str):
                found.update(match.group(1).split(".")[0] for match in LOOKS_LIKE_REFERENCE.finditer(text))
        return found & set(self.nodes)

    def ancestors(self, node_id: str) -> set[str]:
        if node_id not in self._ancestors:
            seen: set[str] = set()
            stack = list(self.pred[node_id])
            while stack:
                current = stack.pop()
                if current not in seen:
                    seen.add(current)
                    stack.extend(self.pred[current])
            self._ancestors[node_id] = seen
        return self._ancestors[node_id]

    # ------------------------------------------------------------------ references

    def _selector_problem(self, node_id: str, selector: Any, *, allow_context: bool = False) -> str:
        """Why ``selector`` cannot be read by ``node_id``; "" when it can."""
        if not isinstance(selector, list | tuple) or len(selector) < 2 \
                or not all(isinstance(s, str) and s for s in selector):
            return f"{selector!r} is not a selector [node, variable]"
        head, name = selector[0], selector[1]
        if head == "sys":
            return "" if name in SYS_VARIABLES else f"sys.{name} is not a system variable"
        if head == "env":
            return "" if name in self.env else f"env.{name} is not an environment variable"
        if head == "conversation":
            return "" if name in self.conversation else f"conversation.{name} is not a conversation variable"
        if head == "context" and allow_context:
            return ""
        if head not in self.nodes:
            return f"points at {head!r}, which is not a node"
        outputs = _node_outputs(self.data[head])
        if name not in outputs:
            return f"{head}.{name} is not an output of {head!r} (outputs: {sorted(outputs)})"
        data = self.data[head]
        grouped = data.get("type") == "variable-aggregator" and \
            (data.get("advanced_settings") or {}).get("group_enabled")
        if grouped and (len(selector) != 3 or selector[2] != "output"):
            return f"a grouped aggregator is read as [{head}, {name}, output]"
        if head == node_id or head not in self.ancestors(node_id):
            return f"{head!r} does not run before {node_id!r} on any path"
        return ""

    def _text_problems(self, node_id: str, field: str, text: Any, *, context_ok: bool = False
                       ) -> Iterator[Problem]:
        if not isinstance(text, str):
            return
        for match in LOOKS_LIKE_REFERENCE.finditer(text):
            inner = match.group(1)
            if inner == "context" and context_ok:
                continue
            if not REFERENCE.fullmatch(match.group(0)):
                yield Problem(node_id, field, f"{match.group(0)} is not a reference Dify understands")
                continue
            why = self._selector_problem(node_id, inner.split("."))
            if why:
                yield Problem(node_id, field, why)

    def _selector_fields(self, data: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
        """(field path, selector) for every value selector in a node's data."""
        kind = data.get("type")
        for i, var in enumerate(data.get("variables") or []):
            if isinstance(var, Mapping) and "value_selector" in var:
                yield f"data.variables[{i}].value_selector", var.get("value_selector")
        if kind == "if-else":
            for i, case in enumerate(data.get("cases") or []):
                for j, cond in enumerate(case.get("conditions") or []):
                    yield f"data.cases[{i}].conditions[{j}].variable_selector", cond.get("variable_selector")
        elif kind == "assigner":
            for i, item in enumerate(data.get("items") or []):
                yield f"data.items[{i}].variable_selector", item.get("variable_selector")
                if item.get("input_type", "variable") == "variable" and item.get("operation") not in {"clear"}:
                    yield f"data.items[{i}].value", item.get("value")
        elif kind == "variable-aggregator":
            settings = data.get("advanced_settings") or {}
            if settings.get("group_enabled"):
                for i, group in enumerate(settings.get("groups") or []):
                    for j, sel in enumerate(group.get("variables") or []):
                        yield f"data.advanced_settings.groups[{i}].variables[{j}]", sel
            else:
                for i, sel in enumerate(data.get("variables") or []):
                    yield f"data.variables[{i}]", sel
        elif kind == "llm":
            context = data.get("context") or {}
            if context.get("enabled"):
                yield "data.context.variable_selector", context.get("variable_selector")
        elif kind in {"knowledge-retrieval", "question-classifier"}:
            yield "data.query_variable_selector", data.get("query_variable_selector")
        elif kind == "parameter-extractor":
            yield "data.query", data.get("query")
        elif kind == "tool":
            for field, entry in _tool_inputs(data):
                if entry.get("type") == "variable":
                    yield f"{field}.value", entry.get("value")

    def _text_fields(self, data: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
        kind = data.get("type")
        if kind == "tool":
            for field, entry in _tool_inputs(data):
                if entry.get("type") == "mixed":
                    yield f"{field}.value", entry.get("value")
        if kind == "answer":
            yield "data.answer", data.get("answer")
        elif kind == "llm":
            for i, message in enumerate(data.get("prompt_template") or []):
                if isinstance(message, Mapping):
                    yield f"data.prompt_template[{i}].text", message.get("text")
        elif kind in {"question-classifier", "parameter-extractor"}:
            yield "data.instruction", data.get("instruction")
        elif kind == "http-request":
            for name in ("url", "headers", "params"):
                yield f"data.{name}", data.get(name)
            body = data.get("body") or {}
            for i, item in enumerate(body.get("data") or [] if isinstance(body, Mapping) else []):
                if isinstance(item, Mapping):
                    yield f"data.body.data[{i}].value", item.get("value")

    def reference_problems(self) -> list[Problem]:
        """Every reference that cannot be read where it stands. A node that never runs (no path from
        start) reads nothing "before" it: that follows from the lost edge :meth:`flow_problems` reports,
        so it is not listed again for each reference."""
        reachable = self._reachable() if self.start else set(self.nodes)
        problems = [p for p in self._reference_problems()
                    if p.node in reachable or "does not run before" not in p.message]
        return problems

    def _reference_problems(self) -> list[Problem]:
        problems = []
        for node_id, data in self.data.items():
            if data.get("type") == "assigner":
                for i, item in enumerate(data.get("items") or []):
                    sel = item.get("variable_selector") or []
                    if list(sel)[:1] != ["conversation"]:
                        problems.append(Problem(node_id, f"data.items[{i}].variable_selector",
                                                "an assigner in a Chatflow writes conversation variables"))
            for field, selector in self._selector_fields(data):
                if field.endswith("variable_selector") and data.get("type") == "assigner":
                    if list(selector or [])[:1] == ["conversation"]:
                        why = self._selector_problem(node_id, selector)
                        if why:
                            problems.append(Problem(node_id, field, why))
                    continue
                why = self._selector_problem(node_id, selector)
                if why:
                    problems.append(Problem(node_id, field, why))
            context_ok = data.get("type") == "llm" and (data.get("context") or {}).get("enabled")
            for field, text in self._text_fields(data):
                problems.extend(self._text_problems(node_id, field, text, context_ok=bool(context_ok)))
            if data.get("type") == "llm" and not context_ok:
                for i, message in enumerate(data.get("prompt_template") or []):
                    if "{{#context#}}" in str(message.get("text", "")):
                        problems.append(Problem(node_id, f"data.prompt_template[{i}].text",
                                                "uses {{#context#}} but context is not enabled"))
        return problems

    # ------------------------------------------------------------------ code nodes

    def code_problems(self, *, run_code: bool, sandbox: bool,
                      progress: Callable[[str], None] | None = None) -> list[Problem]:
        problems = []
        for node_id, data in self.data.items():
            if data.get("type") == "code":
                title = data.get("title") or node_id
                if progress is not None:
                    progress(f"code node {title}")

                def step(what: str, title: str = title) -> None:
                    if progress is not None:
                        progress(f"code node {title}: {what}")

                problems.extend(check_code_node(node_id, data, run_code=run_code, sandbox=sandbox, progress=step))
        return problems

    # ------------------------------------------------------------------ models and layout

    def model_problems(self) -> list[Problem]:
        problems = []
        identifiers = []
        for dep in self.doc.get("dependencies") or []:
            value = dep.get("value") if isinstance(dep, Mapping) else None
            if isinstance(value, Mapping):
                identifiers += [str(v) for k, v in value.items() if k.endswith("unique_identifier") and v]
        for node_id, data in self.data.items():
            if data.get("type") == "tool":
                problems.extend(_tool_problems(node_id, data, identifiers))
                continue
            if data.get("type") not in LLM_TYPES:
                continue
            model = data.get("model") or {}
            provider = str(model.get("provider") or "")
            parts = [p for p in provider.split("/") if p]
            if len(parts) != 3:
                problems.append(Problem(node_id, "data.model.provider",
                                        f"{provider!r} is not ORG/PLUGIN/PROVIDER"))
                continue
            if not model.get("name"):
                problems.append(Problem(node_id, "data.model.name", "no model name"))
            prefix = "/".join(parts[:2]) + ":"
            if not any(ident.startswith(prefix) for ident in identifiers):
                problems.append(Problem(node_id, "data.model.provider",
                                        f"no dependencies entry for plugin {prefix[:-1]!r}"))
        return problems

    def layout_problems(self) -> list[Problem]:
        problems, boxes = [], {}
        for node_id, node in self.nodes.items():
            position = node.get("position")
            if not isinstance(position, Mapping) or not all(
                    isinstance(position.get(k), int | float) for k in ("x", "y")):
                problems.append(Problem(node_id, "position", "missing x/y: the editor would pile it up"))
                continue
            boxes[node_id] = (float(position["x"]), float(position["y"]),
                              float(node.get("width") or 244), float(node.get("height") or 90))
        for a, b in overlaps(boxes):
            problems.append(Problem(a, "position", f"overlaps node {b!r} in the editor"))
        return problems


# --------------------------------------------------------------------------------------------------
# Code nodes
# --------------------------------------------------------------------------------------------------


def _main_function(tree: ast.Module) -> ast.FunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "main":
            return node
    return None


def _returns(func: ast.FunctionDef) -> Iterator[ast.Return]:
    """Return statements of ``func`` itself (not of functions nested in it)."""
    stack: list[ast.AST] = list(func.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        if isinstance(node, ast.Return):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _literal_keys(node: ast.expr | None) -> set[str] | None:
    """Keys of a ``{"a": ..., "b": ...}`` literal; None when not statically known."""
    if not isinstance(node, ast.Dict):
        return None
    keys = set()
    for key in node.keys:
        if not isinstance(key, ast.Constant) or not isinstance(key.value, str):
            return None
        keys.add(key.value)
    return keys


def check_code_node(node_id: str, data: Mapping[str, Any], *, run_code: bool = False,
                    sandbox: bool = True, progress: Callable[[str], None] | None = None) -> list[Problem]:
    """Signature and return-key checks for one code node (static unless ``run_code``); ``progress``
    hears each check of the sandbox's as it begins."""
    source = data.get("code")
    if data.get("code_language") != "python3":
        return [Problem(node_id, "data.code_language", "only python3 code nodes are checked and supported")]
    if not isinstance(source, str):
        return [Problem(node_id, "data.code", "missing code")]
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        return [Problem(node_id, "data.code", f"syntax error line {error.lineno}: {error.msg}")]
    except (ValueError, RecursionError, MemoryError) as error:
        return [Problem(node_id, "data.code", f"cannot be parsed: {type(error).__name__}")]
    func = _main_function(tree)
    if func is None:
        return [Problem(node_id, "data.code", "no top-level def main(...)")]
    refused = sandbox_problems(source, progress) if sandbox else ()
    if refused:
        return [Problem(node_id, "data.code", f"dify-sandbox would refuse it: {why}") for why in refused]
    declared = [str(v.get("variable")) for v in data.get("variables") or [] if isinstance(v, Mapping)]
    outputs = data.get("outputs") or {}
    problems = _signature_problems(node_id, func, declared)
    keys = [_literal_keys(r.value) for r in _returns(func)]
    if keys and all(k is not None for k in keys):
        for index, found in enumerate(keys):
            problems += _key_problems(node_id, set(found or ()), set(outputs), f"return #{index + 1}")
    elif run_code and not problems:
        problems += _dynamic_key_problems(node_id, source, func, declared, outputs)
    return problems


def sandbox_problems(source: str, progress: Callable[[str], None] | None = None) -> tuple[str, ...]:
    """Why dify-sandbox would refuse this source (Python 3.10 syntax, standard library only, ...).

    Cached because the engine nodes are large and the same text is checked again and again (the
    cache a graphon run of the node uses too); ``progress`` hears each check of a text not checked yet.
    """
    return checked_source(source, progress)


def _signature_problems(node_id: str, func: ast.FunctionDef, declared: Sequence[str]) -> list[Problem]:
    args = func.args
    params = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    defaults = len(args.defaults)
    positional = args.posonlyargs + args.args
    required = {a.arg for a in positional[: len(positional) - defaults]}
    required |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=False) if d is None}
    problems = []
    for name in declared:
        if name not in params and args.kwarg is None:
            problems.append(Problem(node_id, "data.variables",
                                    f"variable {name!r} is declared but main() has no such parameter"))
    for name in sorted(required - set(declared)):
        problems.append(Problem(node_id, "data.variables",
                                f"main() requires {name!r} but no variable of that name is declared"))
    return problems


def _key_problems(node_id: str, found: set[str], declared: set[str], where: str) -> list[Problem]:
    problems = []
    for name in sorted(declared - found):
        problems.append(Problem(node_id, "data.outputs",
                                f"output {name!r} is declared but main() does not return it ({where})"))
    for name in sorted(found - declared):
        problems.append(Problem(node_id, "data.outputs",
                                f"main() returns {name!r} but it is not a declared output ({where})"))
    return problems


def _empty_input(annotation: ast.expr | None) -> Any:
    name = ast.unparse(annotation) if annotation is not None else "str"
    return {"int": 0, "float": 0.0, "bool": False, "dict": {}, "list": []}.get(name, "")


@lru_cache(maxsize=64)
def _run_main_once(source: str, inputs_json: str) -> tuple[dict[str, Any] | None, str]:
    """(result, error) of one run of ``main`` in another process, under Dify's sandbox restrictions
    (no os, subprocess, sockets or file writes); cached (same text, same result)."""
    try:
        result = run_code_node(source, json.loads(inputs_json), None, timeout=30.0, restricted=True)
    except CodeNodeError as error:  # the failure itself is the finding
        return None, str(error)
    return dict(result), ""


def _dynamic_key_problems(node_id: str, source: str, func: ast.FunctionDef, declared: Sequence[str],
                          outputs: Mapping[str, Any]) -> list[Problem]:
    """Run ``main`` once on empty inputs in a restricted process and compare the keys it returns."""
    annotations = {a.arg: a.annotation for a in func.args.args + func.args.kwonlyargs}
    inputs = {name: _empty_input(annotations.get(name)) for name in declared}
    result, error = _run_main_once(source, json.dumps(inputs, sort_keys=True))
    if result is None:
        return [Problem(node_id, "data.code", f"main() failed on empty inputs: {error}")]
    problems = _key_problems(node_id, set(result), set(outputs), "run on empty inputs")
    for name, spec in outputs.items():
        kind = spec.get("type") if isinstance(spec, Mapping) else None
        if name in result and not _fits(result[name], str(kind)):
            problems.append(Problem(node_id, f"data.outputs.{name}.type",
                                    f"declared {kind} but main() returned {type(result[name]).__name__}"))
    return problems


def _fits(value: Any, kind: str) -> bool:
    checks = {
        "string": lambda v: isinstance(v, str),
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "object": lambda v: isinstance(v, dict),
    }
    if kind.startswith("array"):
        return isinstance(value, list)
    return checks.get(kind, lambda v: True)(value)


# --------------------------------------------------------------------------------------------------
# Tool nodes (our plugin's tools are read from tools/*.yaml; other providers only get the outputs
# every tool node has)
# --------------------------------------------------------------------------------------------------

TOOL_OUTPUTS = ("text", "files", "json")
OUR_TOOL_PROVIDER = "dskit/dialogue_state_kit/dialogue_state_kit"
TOOL_INPUT_TYPES = frozenset({"mixed", "variable", "constant"})


@lru_cache(maxsize=None)
def _our_tool(tool_name: str) -> Mapping[str, Any] | None:
    """Our plugin's tool YAML (parameters, output_schema), or None when there is no such tool."""
    from pathlib import Path  # noqa: PLC0415

    import yaml  # noqa: PLC0415

    if not re.fullmatch(r"[a-zA-Z0-9_-]+", tool_name or ""):
        return None
    path = Path(__file__).resolve().parents[3] / "tools" / f"{tool_name}.yaml"
    if not path.is_file():
        return None
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _is_ours(data: Mapping[str, Any]) -> bool:
    return data.get("provider_id") == OUR_TOOL_PROVIDER


def _node_outputs(data: Mapping[str, Any]) -> set[str]:
    """node_outputs plus tool nodes: text, files, json and the tool's declared output_schema."""
    names = node_outputs(data)
    if data.get("type") == "tool":
        names |= set(TOOL_OUTPUTS)
        spec = _our_tool(str(data.get("tool_name"))) if _is_ours(data) else None
        if spec:
            names |= set(((spec.get("output_schema") or {}).get("properties") or {}).keys())
    return names


def _tool_inputs(data: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(field path, {type, value}) for every typed tool parameter and configuration."""
    for section in ("tool_parameters", "tool_configurations"):
        items = data.get(section)
        for name, entry in (items.items() if isinstance(items, Mapping) else []):
            if isinstance(entry, Mapping) and "type" in entry and "value" in entry:
                yield f"data.{section}.{name}", entry


def _tool_problems(node_id: str, data: Mapping[str, Any], identifiers: Sequence[str]) -> list[Problem]:
    """Provider, plugin dependency, tool name, parameter forms, required parameters, models."""
    problems = []
    for key in ("provider_id", "provider_name", "tool_name", "provider_type"):
        if not data.get(key):
            problems.append(Problem(node_id, f"data.{key}", "missing"))
    ident = str(data.get("plugin_unique_identifier") or "")
    if not ident:
        problems.append(Problem(node_id, "data.plugin_unique_identifier", "missing"))
    elif ident not in identifiers:
        problems.append(Problem(node_id, "data.plugin_unique_identifier",
                                f"{ident!r} has no dependencies entry"))
    for section in ("tool_parameters", "tool_configurations"):
        if not isinstance(data.get(section), Mapping):
            problems.append(Problem(node_id, f"data.{section}", "must be a mapping"))
    for field, entry in _tool_inputs(data):
        if entry.get("type") not in TOOL_INPUT_TYPES:
            problems.append(Problem(node_id, f"{field}.type", f"{entry.get('type')!r} is not mixed, "
                                    "variable or constant"))
    if not _is_ours(data):
        return problems
    spec = _our_tool(str(data.get("tool_name")))
    if spec is None:
        problems.append(Problem(node_id, "data.tool_name", f"our plugin has no tool {data.get('tool_name')!r}"))
        return problems
    declared = {p["name"]: p for p in spec.get("parameters") or [] if isinstance(p, Mapping)}
    params = data.get("tool_parameters") or {}
    configs = data.get("tool_configurations") or {}
    for name in list(params) + list(configs):
        if name not in declared:
            problems.append(Problem(node_id, f"data.tool_parameters.{name}",
                                    f"{data.get('tool_name')} has no parameter {name!r}"))
    for name, param in declared.items():
        form = param.get("form", "llm")
        where, other = (params, configs) if form == "llm" else (configs, params)
        if name in other:
            section = "tool_configurations" if form == "llm" else "tool_parameters"
            problems.append(Problem(node_id, f"data.{section}.{name}", f"a {form!r} parameter belongs in "
                                    f"{'tool_parameters' if form == 'llm' else 'tool_configurations'}"))
        if param.get("required") and name not in where:
            problems.append(Problem(node_id, f"data.tool_parameters.{name}", "required parameter not set"))
        if param.get("type") == "model-selector" and name in configs:
            value = configs[name].get("value") if isinstance(configs[name], Mapping) else None
            provider = str((value or {}).get("provider") or "") if isinstance(value, Mapping) else ""
            parts = [p for p in provider.split("/") if p]
            if len(parts) != 3 or not (value or {}).get("model"):
                problems.append(Problem(node_id, f"data.tool_configurations.{name}",
                                        "a model-selector needs provider ORG/PLUGIN/PROVIDER and model"))
            elif not any(i.startswith("/".join(parts[:2]) + ":") for i in identifiers):
                problems.append(Problem(node_id, f"data.tool_configurations.{name}",
                                        f"no dependencies entry for plugin {'/'.join(parts[:2])!r}"))
    return problems

