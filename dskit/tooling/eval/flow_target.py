"""The ``flow`` target: a Chatflow DSL run in graphon, every LLM call on the live model.

The shipped DSL (``dsl/dialogue_chatflow.yml`` for ``fast``, ``dsl/dialogue_chatflow_classic.yml`` for
``classic``, ``dsl/dialogue_chatflow_plugin.yml`` for ``plugin``) or any file given with ``--dsl`` — an
older one, for a before/after comparison — runs as ``dskit chat`` runs it: graphon's own nodes, our
code nodes in the sandbox-like runner, the knowledge base answering with the suite's passages, and each
LLM node's messages sent to the model with the node's parameters. The suite's catalog goes in as
``TASK_CATALOG``; the classic layout bakes its classes and extractor parameters from the catalog, so for
another catalog it is generated for it.

A DSL with tool nodes (the ``plugin`` layout) runs the plugin's own tools behind graphon's tool nodes
(:mod:`dskit.tooling.dslrun.plugin_tools`), with a fresh stand-in plugin daemon per conversation
(storage, as a new install has it); the model calls the tools make through the daemon
(``track_state``'s understanding, ``compress_history``'s summary) go to the same client as the LLM
nodes' and are counted the same way, under the tool's name.
"""

from __future__ import annotations

import time
from functools import cache
from pathlib import Path
from typing import Any

from .suite import ROOT, Suite
from .turn import Call, TurnOutput

SHIPPED = {"fast": ROOT / "dsl" / "dialogue_chatflow.yml", "classic": ROOT / "dsl" / "dialogue_chatflow_classic.yml",
           "plugin": ROOT / "dsl" / "dialogue_chatflow_plugin.yml"}


def has_tool_nodes(doc: dict[str, Any]) -> bool:
    """Whether a DSL calls plugin tools (then our plugin must run behind graphon's tool nodes)."""
    nodes = ((doc.get("workflow") or {}).get("graph") or {}).get("nodes") or []
    return any((node.get("data") or {}).get("type") == "tool" for node in nodes)


@cache
def _classic_for(catalog_json: str) -> str:
    from dskit.tooling.dslbuild.flows import FlowOptions, build_classic  # noqa: PLC0415

    return build_classic(FlowOptions(catalog_json=catalog_json)).to_yaml()


class FlowConversation:
    """One graphon conversation; conversation variables carried from turn to turn as Dify does."""

    def __init__(self, dsl_text: str, suite: Suite, client: Any, run_id: str) -> None:
        import yaml  # noqa: PLC0415

        from dskit.tooling.dslrun.graphon import Conversation  # noqa: PLC0415
        from dskit.tooling.dslrun.live import ClientResponder, node_parameters  # noqa: PLC0415

        from dskit.turn.command_schema import command_schema  # noqa: PLC0415

        doc = yaml.safe_load(dsl_text)
        self.responder = ClientResponder(client, node_parameters(doc), schema=command_schema(suite.catalog))
        passages = [dict(p) for p in suite.knowledge]
        self.conversation = Conversation(dsl_text, responder=self.responder,
                                         knowledge=(lambda query: passages) if passages else None,
                                         env={"TASK_CATALOG": suite.catalog_json, "TASK_API_URL": ""},
                                         conversation_id=run_id,
                                         tool_invoker=self._plugin(run_id) if has_tool_nodes(doc) else None)
        self.state = ""

    def _plugin(self, run_id: str) -> Any:
        """Our plugin behind the tool nodes: its daemon's model is this conversation's responder."""
        from dskit.tooling.dslrun.plugin_daemon import FakeDaemon  # noqa: PLC0415
        from dskit.tooling.dslrun.plugin_tools import PLUGIN_ROOT, PluginTools, client_model  # noqa: PLC0415

        daemon = FakeDaemon(manifest=PLUGIN_ROOT / "manifest.yaml", model=client_model(self.responder))
        return PluginTools(daemon, user_id="dskit-user", conversation_id=run_id)

    def turn(self, user: str) -> TurnOutput:
        from dskit.tooling.dslrun.live import quiet_graphon, turn_error  # noqa: PLC0415

        started = time.monotonic()
        with quiet_graphon():
            result = self.conversation.turn(user, raise_on_error=False)
        calls = []
        kinds = []  # of each failed call: the conversation goes on when the model answered each of them
        for node, answer in self.responder.take():
            if isinstance(answer, Exception):
                kinds.append(bool(getattr(answer, "answered", False)))
                calls.append(Call(node, "", error=str(answer)))
            else:
                calls.append(Call(node, answer.text, answer.prompt_tokens, answer.completion_tokens, answer.latency,
                                  answer.cached, answer.json_mode, cut=getattr(answer, "finish_reason", "") == "length"))
        seconds = time.monotonic() - started
        failed = next((call for call in calls if call.error), None)
        if not result.succeeded or failed is not None:
            # A model call that failed is the turn's error, whether the flow failed with it (an LLM
            # node) or went on (a tool reports it in its outputs): the model gave no answer.
            error = turn_error(result) if not result.succeeded else f"{failed.node}: {failed.error}"
            return TurnOutput(state_text=self.state, calls=calls, error=error, seconds=seconds,
                              detail={"path": result.path}, goes_on=bool(kinds) and all(kinds))
        self.state = str(result.variables.get("sys_context_str") or "")
        node = "state" if "state" in result.outputs else "track_state"
        return TurnOutput(answer=result.answer, state_text=self.state, calls=calls, seconds=seconds,
                          detail={"next_action": result.output(node, "next_action"),
                                  "rewritten_query": result.output(node, "rewritten_query")})


class FlowTarget:
    """``--target flow``: a layout's shipped DSL, or a DSL file, in graphon on the live model."""

    name = "flow"

    def __init__(self, client: Any, *, layout: str = "fast", dsl_path: Path | None = None) -> None:
        if dsl_path is None and layout not in SHIPPED:
            raise ValueError(f"no layout {layout!r} (available: {', '.join(SHIPPED)}; or --dsl FILE)")
        self.client = client
        self.layout = layout if dsl_path is None else "dsl"
        self.dsl_path = dsl_path
        self.text = (dsl_path or SHIPPED[layout]).read_text(encoding="utf-8")
        import yaml  # noqa: PLC0415

        if has_tool_nodes(yaml.load(self.text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}):  # noqa: S506
            from dskit.tooling.dslrun.plugin_tools import load_sdk  # noqa: PLC0415

            load_sdk()  # its gevent patching must come before any conversation's thread starts

    def _dsl_for(self, suite: Suite) -> str:
        if self.layout == "classic" and suite.catalog_name != "default":
            return _classic_for(suite.catalog_json)
        return self.text

    def conversation(self, suite: Suite, run_id: str) -> FlowConversation:
        return FlowConversation(self._dsl_for(suite), suite, self.client, run_id)

    def describe(self) -> dict[str, Any]:
        return {"target": "flow", "layout": self.layout,
                "dsl": str(self.dsl_path or SHIPPED.get(self.layout, "")).replace(str(ROOT) + "/", "")}
