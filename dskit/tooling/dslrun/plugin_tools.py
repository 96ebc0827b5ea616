"""The plugin's tools run for real behind graphon's tool nodes; only the plugin daemon is faked.

Why: the plugin Chatflow (``dsl/dialogue_chatflow_plugin.yml``) calls our tools through Dify's plugin
daemon, which cannot run here. Everything on both sides of it can, so that is the one place a stand-in
goes, and the tests and ``dskit eval --target flow --layout plugin`` share this one harness:

- **graphon's side**: ``graphon.dsl.loads`` builds each tool node with its own ``SlimToolNodeRuntime``
  (the Slim daemon adapter: parameter forms, ``tool_configurations`` resolution, model-selector values,
  message conversion). Only the daemon's socket is replaced, through graphon's own hook for that, the
  runtime's ``action_invoker`` (graphon/dsl/tool_runtime.py ``_SlimToolActionClient.invoke``):
  :class:`PluginTools` answers ``get_tool_runtime_parameters`` from ``tools/*.yaml`` and
  ``invoke_tool`` by running the tool, streaming back the messages as the daemon does
  (``{"type", "message", "meta"}``, graphon's ``tool_runtime_message_from_payload``).
- **the plugin's side**: :func:`invoke` takes the path a real invocation takes inside the plugin
  process: ``PluginRegistration`` loads the YAML and the Tool classes from the plugin root once, and
  ``PluginExecutor.invoke_tool`` builds the tool with its ``ToolRuntime`` and ``Session`` and runs it.
- **the daemon**: the tools' reverse calls (storage for memory; ``session.model.llm.invoke`` for the
  understanding and the summary) reach :class:`~.plugin_daemon.FakeDaemon`, whose rules are read from
  dify-plugin-daemon (cited there). Its model is a script in tests; in the eval it is
  :func:`client_model`, the same client and recording as every other layout's LLM nodes.

Import order: ``dify_plugin`` monkey-patches the process with gevent when it is first imported, so
:func:`load_sdk` is called before any worker thread starts (the eval target does it in its constructor).
Third-party imports happen inside functions.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from .plugin_daemon import FakeDaemon, ModelAnswer, serving

PLUGIN_ROOT = Path(__file__).resolve().parents[3]
PROVIDER = "dialogue_state_kit"
_LOAD_LOCK = threading.Lock()


class PluginToolError(RuntimeError):
    """What the daemon would refuse: another plugin, an unknown action, a message kind we do not send."""


def load_sdk() -> None:
    """Import the SDK (and so apply its gevent patching) now, in the calling thread."""
    import dify_plugin  # noqa: F401, PLC0415


@contextmanager
def plugin_cwd(root: Path = PLUGIN_ROOT) -> Iterator[None]:
    """The SDK resolves manifest, YAML and sources relative to the working directory."""
    old = os.getcwd()
    os.chdir(root)
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))  # the daemon runs ``python -m main`` from the root
    try:
        yield
    finally:
        os.chdir(old)


@cache
def registration() -> Any:
    """The plugin loaded once per process, the way the plugin process does at start-up."""
    load_sdk()
    from dify_plugin.config.config import DifyPluginEnv  # noqa: PLC0415
    from dify_plugin.core.plugin_registration import PluginRegistration  # noqa: PLC0415

    with _LOAD_LOCK, plugin_cwd():  # chdir is process-wide: one loader at a time
        return PluginRegistration(DifyPluginEnv())


@cache
def plugin_identifier() -> str:
    """``author/name:version@checksum`` of this checkout's package: what a DSL's tool nodes must name."""
    from dskit.tooling.plugin_package import plugin_identifier as identifier  # noqa: PLC0415

    return identifier(PLUGIN_ROOT)


@dataclass
class ToolOutput:
    """The messages one invocation yielded, sorted by kind."""

    messages: list[Any]
    texts: list[str] = field(default_factory=list)
    jsons: list[Any] = field(default_factory=list)
    variables: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "".join(self.texts)

    @property
    def json(self) -> dict:
        if len(self.jsons) != 1:
            raise ValueError(f"expected one JSON message, got {len(self.jsons)}")
        return self.jsons[0]


def _kind(message: Any) -> str:
    return message.type.value if hasattr(message.type, "value") else str(message.type)


def invoke(tool: str, params: Mapping[str, Any], *, user_id: str = "user-1", conversation_id: str | None = "conv-1",
           daemon: FakeDaemon | None = None) -> ToolOutput:
    """Invoke ``tool`` with ``params`` through ``PluginExecutor.invoke_tool``.

    Its reverse calls go to ``daemon``; without one, to the default a test set with
    :meth:`FakeDaemon.patch`.
    """
    executor_type, session_type, request_type = _sdk_types()
    from dify_plugin.config.config import DifyPluginEnv, InstallMethod  # noqa: PLC0415

    executor = executor_type(DifyPluginEnv(), registration())
    session = session_type(
        session_id="dskit-session",
        executor=None,
        reader=None,
        writer=None,
        install_method=InstallMethod.Local,
        conversation_id=conversation_id,
        app_id="app-1",
    )
    request = request_type(user_id=user_id, provider=PROVIDER, tool=tool, credentials={},
                           tool_parameters=dict(params))
    if daemon is None:
        messages = list(executor.invoke_tool(session, request))
    else:
        with serving(daemon, tool):
            messages = list(executor.invoke_tool(session, request))
    out = ToolOutput(messages=messages)
    for m in messages:
        kind = _kind(m)
        if kind == "text":
            out.texts.append(m.message.text)
        elif kind == "json":
            out.jsons.append(m.message.json_object)
        elif kind == "variable":
            out.variables[m.message.variable_name] = m.message.variable_value
    return out


def _sdk_types() -> tuple[type, type, type]:
    load_sdk()
    from dify_plugin.core.entities.plugin.request import ToolInvokeRequest  # noqa: PLC0415
    from dify_plugin.core.plugin_executor import PluginExecutor  # noqa: PLC0415
    from dify_plugin.core.runtime import Session  # noqa: PLC0415

    return PluginExecutor, Session, ToolInvokeRequest


@cache
def runtime_parameters(tool: str) -> tuple[dict[str, Any], ...]:
    """A tool's parameters as the daemon lists them for ``get_tool_runtime_parameters``."""
    import yaml  # noqa: PLC0415

    spec = yaml.safe_load((PLUGIN_ROOT / "tools" / f"{tool}.yaml").read_text(encoding="utf-8"))
    return tuple({k: p.get(k) for k in ("name", "type", "form", "required", "default", "options")}
                 for p in spec["parameters"])


def payload(message: Any) -> dict[str, Any]:
    """An SDK ToolInvokeMessage as the daemon streams it to Dify."""
    kind = _kind(message)
    m = message.message
    if kind == "variable":
        body = {"variable_name": m.variable_name, "variable_value": m.variable_value,
                "stream": bool(getattr(m, "stream", False))}
    elif kind == "json":
        body = {"json_object": m.json_object}
    elif kind == "text":
        body = {"text": m.text}
    else:
        raise PluginToolError(f"our tools do not send {kind} messages")
    return {"type": kind, "message": body, "meta": None}


class PluginTools:
    """graphon's Slim action invoker, answered by our Tool classes in this process.

    One per conversation: ``user_id`` and ``conversation_id`` are what Dify puts in the tool's
    session, and ``daemon`` is that install's storage and model.
    """

    def __init__(self, daemon: FakeDaemon, *, user_id: str, conversation_id: str) -> None:
        self.daemon = daemon
        self.user_id = user_id
        self.conversation_id = conversation_id
        self.invocations: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, plugin_id: str, action: Any, data: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        if plugin_id != plugin_identifier():
            raise PluginToolError(f"plugin {plugin_id} is not installed (this checkout's package is "
                                  f"{plugin_identifier()}; `dskit gen` writes DSL that names it)")
        if data.get("provider") != PROVIDER:
            raise PluginToolError(f"provider {data.get('provider')!r} is not in plugin {plugin_id}")
        if str(action) == "get_tool_runtime_parameters":
            yield {"parameters": [dict(p) for p in runtime_parameters(str(data["tool"]))]}
            return
        if str(action) != "invoke_tool":
            raise PluginToolError(f"unknown plugin action {action!s}")
        params = dict(data["tool_parameters"])
        self.invocations.append((str(data["tool"]), params))
        out = invoke(str(data["tool"]), params, user_id=self.user_id, conversation_id=self.conversation_id,
                     daemon=self.daemon)
        for message in out.messages:
            yield payload(message)


def _content_text(content: Any) -> str:
    """A prompt message's content as text (a string, or a list of content parts)."""
    if isinstance(content, str):
        return content
    return "".join(str(part.get("data") or "") for part in content or [] if isinstance(part, Mapping))


def client_model(responder: Any) -> Any:
    """The daemon's LLM call answered by the live model through ``responder`` (a ClientResponder).

    Dify forwards the tool's model-selector choice to the model provider: the messages as they are,
    with the completion parameters the selector holds. The responder sends the same shape as for an
    LLM node (roles, temperature, max_tokens, JSON mode) and records the call under the tool's name,
    so calls, tokens and latency are counted as for the other layouts.
    """

    def answer(data: dict, caller: str) -> ModelAnswer:
        params = data.get("completion_params") or {}
        messages = [(str(m.get("role") or "user"), _content_text(m.get("content"))) for m in data["prompt_messages"]]
        completion = responder.ask(caller, messages, params)
        return ModelAnswer(completion.text, completion.prompt_tokens, completion.completion_tokens,
                           completion.latency)

    return answer
