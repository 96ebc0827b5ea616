"""Assemble a Chatflow DSL document: nodes, edges, variables, dependencies, layout, YAML.

A :class:`Flow` collects node ``data`` (from :mod:`dskit.tooling.dslbuild.node_data`) under readable ids, the
edges between them, the conversation and environment variables, and the model provider; ``to_dict``
lays it out left to right and returns the document Dify's "Import DSL" reads (kind app, mode
advanced-chat, the DSL version of the targeted Dify release: :mod:`.dify_versions`).

Variable ids are UUIDs: Dify stores a conversation's variables with the DSL's ``id`` as primary key
(api/models/workflow.py ``ConversationVariable.id``: ``StringUUID``, PostgreSQL's native ``uuid`` in
the default set-up), so ``conv-history`` fails the first chat message with ``invalid input syntax
for type uuid`` (langgenius/dify PR #37196). Each id is a uuid5 of a fixed namespace and the
variable's scope and name: stable, so ``dskit gen --check`` stays byte-stable.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dskit.tooling.dslbuild.dify_versions import DEFAULT_TARGET, Target
from dskit.tooling.dslbuild.layout import layout

DSL_VERSION = DEFAULT_TARGET.dsl_version
# Fixed namespace of this project's variable ids: the same name gives the same id in every file and run.
VARIABLE_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "dialogue-state-kit")
DEFAULT_PROVIDER = "langgenius/openai/openai"
DEFAULT_MODEL = "gpt-4o-mini"
# Plugin identifiers as Dify exports them (org/plugin:version@checksum). graphon and Dify match a
# node's provider to its plugin by the ``org/plugin:`` prefix; Dify's plugin daemon also wants the
# checksum (dify_rules.dependency_problems), so a provider not listed here needs its identifier
# given (``dskit gen --plugin-identifier``): no made-up identifier ever reaches a file.
KNOWN_PLUGINS = {
    "langgenius/openai": "langgenius/openai:0.3.8@592c8252795b5f75807de2d609a03196ed02596b409f7642b4a07548c7ff57ef",
}


def variable_id(scope: str, name: str) -> str:
    """The stable UUID of a conversation (``scope="conversation"``) or environment variable."""
    return str(uuid.uuid5(VARIABLE_ID_NAMESPACE, f"{scope}:{name}"))


class FlowError(ValueError):
    """A flow definition is inconsistent (duplicate id, edge to nowhere, bad provider)."""


def plugin_of(provider: str) -> str:
    """``langgenius/openai/openai`` -> ``langgenius/openai``; refuses anything not ORG/PLUGIN/PROVIDER."""
    parts = [p for p in provider.split("/") if p]
    if len(parts) != 3:
        raise FlowError(f"model provider must be ORG/PLUGIN/PROVIDER, got {provider!r}")
    return "/".join(parts[:2])


def dependency_entry(provider: str, identifier: str | None = None) -> dict[str, Any]:
    """The ``dependencies`` item that lets Dify (and graphon) resolve ``provider``'s plugin."""
    plugin = plugin_of(provider)
    ident = identifier or KNOWN_PLUGINS.get(plugin)
    if ident is None:
        raise FlowError(f"the plugin identifier of {plugin} is needed ({plugin}:VERSION@CHECKSUM, as in a "
                        "Chatflow your Dify exported): Dify's plugin daemon refuses one without its checksum")
    if not ident.startswith(plugin + ":"):
        raise FlowError(f"plugin identifier {ident!r} does not belong to provider {provider!r}")
    return {"current_identifier": None, "type": "marketplace",
            "value": {"marketplace_plugin_unique_identifier": ident, "version": None}}


@dataclass
class Flow:
    """A Chatflow under construction; ids are readable words, titles are for people."""

    name: str
    description: str
    icon: str = "🧭"
    icon_background: str = "#E0F2FE"
    opening_statement: str = ""
    suggested_questions: list[str] = field(default_factory=list)
    nodes: list[dict[str, Any]] = field(default_factory=list)
    edges: list[tuple[str, str, str]] = field(default_factory=list)  # (source, handle, target)
    conversation_variables: list[dict[str, Any]] = field(default_factory=list)
    environment_variables: list[dict[str, Any]] = field(default_factory=list)
    dependencies: list[dict[str, Any]] = field(default_factory=list)
    target: Target = DEFAULT_TARGET  # the Dify release the document is for

    def add(self, node_id: str, data: Mapping[str, Any]) -> str:
        if any(n["id"] == node_id for n in self.nodes):
            raise FlowError(f"duplicate node id {node_id!r}")
        self.nodes.append({"id": node_id, "data": dict(data)})
        return node_id

    def edge(self, source: str, target: str, handle: str = "source") -> None:
        self.edges.append((source, handle, target))

    def chain(self, *node_ids: str) -> None:
        """Ordinary edges a -> b -> c ..."""
        for src, dst in zip(node_ids, node_ids[1:], strict=False):
            self.edge(src, dst)

    def conversation_var(self, name: str, description: str, value: Any = "",
                         value_type: str = "string") -> None:
        self.conversation_variables.append({
            "id": variable_id("conversation", name), "name": name, "value_type": value_type, "value": value,
            "description": description, "selector": ["conversation", name],
        })

    def env_var(self, name: str, value: Any, description: str, value_type: str = "string") -> None:
        self.environment_variables.append({
            "id": variable_id("env", name), "name": name, "value_type": value_type, "value": value,
            "description": description, "selector": ["env", name],
        })

    def use_provider(self, provider: str, identifier: str | None = None) -> None:
        entry = dependency_entry(provider, identifier)
        if entry not in self.dependencies:
            self.dependencies.append(entry)

    def node_data(self, node_id: str) -> dict[str, Any]:
        for node in self.nodes:
            if node["id"] == node_id:
                return node["data"]
        raise FlowError(f"no node {node_id!r}")

    # ------------------------------------------------------------------ output

    def _graph_nodes(self) -> list[dict[str, Any]]:
        boxes = layout(self.nodes, [(s, t) for s, _, t in self.edges])
        out = []
        for node in self.nodes:
            x, y, width, height = boxes[node["id"]]
            out.append({
                "id": node["id"], "type": "custom", "data": node["data"],
                "position": {"x": x, "y": y}, "positionAbsolute": {"x": x, "y": y},
                "width": width, "height": height,
                "sourcePosition": "right", "targetPosition": "left", "selected": False,
            })
        return out

    def _graph_edges(self) -> list[dict[str, Any]]:
        types = {n["id"]: n["data"]["type"] for n in self.nodes}
        out = []
        for src, handle, dst in self.edges:
            if src not in types or dst not in types:
                raise FlowError(f"edge {src} -> {dst} names a node that does not exist")
            out.append({
                "id": f"{src}-{handle}-{dst}", "source": src, "sourceHandle": handle,
                "target": dst, "targetHandle": "target", "type": "custom", "zIndex": 0,
                "data": {"sourceType": types[src], "targetType": types[dst],
                         "isInIteration": False, "isInLoop": False},
            })
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.target.dsl_version,
            "kind": "app",
            "app": {
                "name": self.name, "mode": "advanced-chat", "icon": self.icon, "icon_type": "emoji",
                "icon_background": self.icon_background, "description": self.description,
                "use_icon_as_answer_icon": False,
            },
            "dependencies": list(self.dependencies),
            "workflow": {
                "conversation_variables": list(self.conversation_variables),
                "environment_variables": list(self.environment_variables),
                "features": _features(self.opening_statement, self.suggested_questions),
                "graph": {"nodes": self._graph_nodes(), "edges": self._graph_edges(),
                          "viewport": {"x": 0, "y": 0, "zoom": 0.7}},
            },
        }

    def to_yaml(self) -> str:
        return dump_yaml(self.to_dict())


def _features(opening: str, suggested: list[str]) -> dict[str, Any]:
    return {
        "opening_statement": opening,
        "suggested_questions": list(suggested),
        "suggested_questions_after_answer": {"enabled": False},
        "speech_to_text": {"enabled": False},
        "text_to_speech": {"enabled": False, "language": "", "voice": ""},
        "retriever_resource": {"enabled": True},
        "sensitive_word_avoidance": {"enabled": False},
        "file_upload": {"enabled": False},
    }


class _LiteralDumper:  # built lazily: yaml is a tooling dependency
    cls: Any = None


# Characters YAML 1.1 reads as line breaks besides \n and \r (NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR).
# PyYAML writes them raw in plain, quoted and block scalars, so a file holding one has more lines for a
# YAML parser (and Python's str.splitlines) than for grep, sed or an editor, and every line number a YAML
# error gives after it is off. A string holding one is written double-quoted, where PyYAML escapes them
# as \N, \L and \P: the same value, one line in every reader.
YAML_LINE_BREAKS = ("\x85", "\u2028", "\u2029")


def dump_yaml(doc: Mapping[str, Any]) -> str:
    """YAML with multi-line strings (code, prompts) as readable ``|`` blocks, keys in our order, and no
    raw line break other than \n (:data:`YAML_LINE_BREAKS`)."""
    import yaml  # noqa: PLC0415

    if _LiteralDumper.cls is None:
        class Dumper(yaml.SafeDumper):
            pass

        def _str(dumper: Any, value: str) -> Any:
            if any(mark in value for mark in YAML_LINE_BREAKS):
                return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
            if "\n" in value:
                # PyYAML falls back to a quoted scalar by itself when a block cannot hold the text
                # exactly (trailing spaces, control characters), so the value always round-trips.
                return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
            return dumper.represent_scalar("tag:yaml.org,2002:str", value)

        Dumper.add_representer(str, _str)
        _LiteralDumper.cls = Dumper
    return yaml.dump(dict(doc), Dumper=_LiteralDumper.cls, allow_unicode=True, sort_keys=False,
                     width=100, default_flow_style=False)
