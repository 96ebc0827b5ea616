"""Invoke the plugin's tools through the SDK itself (registration + executor), with a fake daemon.

The path is the one a real invocation takes inside the plugin process: ``PluginRegistration`` loads
the YAML and classes from the plugin root, ``PluginExecutor.invoke_tool`` builds the tool with a
``ToolRuntime`` and a ``Session`` and runs it; only the daemon on the other end is fake.
Import ``dify_plugin`` before this module (gevent monkey-patching happens on that import).
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

import dify_plugin  # noqa: F401  (first: monkey-patching)
from dify_plugin.config.config import DifyPluginEnv, InstallMethod
from dify_plugin.core.entities.plugin.request import ToolInvokeRequest
from dify_plugin.core.plugin_executor import PluginExecutor
from dify_plugin.core.plugin_registration import PluginRegistration
from dify_plugin.core.runtime import Session
from dify_plugin.entities.tool import ToolInvokeMessage

PLUGIN_ROOT = Path(__file__).resolve().parents[2]
PROVIDER = "dialogue_state_kit"


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


@lru_cache(maxsize=1)
def registration() -> PluginRegistration:
    """Load the plugin once per test session, the way the plugin process does at start-up."""
    with plugin_cwd():
        return PluginRegistration(DifyPluginEnv())


@dataclass
class ToolOutput:
    """The messages one invocation yielded, sorted by kind."""

    messages: list[ToolInvokeMessage]
    texts: list[str] = field(default_factory=list)
    jsons: list[Any] = field(default_factory=list)
    variables: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "".join(self.texts)

    @property
    def json(self) -> dict:
        assert len(self.jsons) == 1, self.jsons
        return self.jsons[0]


def invoke(
    tool: str,
    params: dict[str, Any],
    *,
    user_id: str = "user-1",
    conversation_id: str | None = "conv-1",
) -> ToolOutput:
    """Invoke ``tool`` with ``params`` through ``PluginExecutor.invoke_tool``; patch the daemon first."""
    executor = PluginExecutor(DifyPluginEnv(), registration())
    session = Session(
        session_id="test-session",
        executor=None,  # type: ignore[arg-type]
        reader=None,  # type: ignore[arg-type]
        writer=None,  # type: ignore[arg-type]
        install_method=InstallMethod.Local,
        conversation_id=conversation_id,
        app_id="app-1",
    )
    request = ToolInvokeRequest(
        user_id=user_id, provider=PROVIDER, tool=tool, credentials={}, tool_parameters=dict(params),
    )
    messages = list(executor.invoke_tool(session, request))
    out = ToolOutput(messages=messages)
    for m in messages:
        kind = m.type.value if hasattr(m.type, "value") else str(m.type)
        if kind == "text":
            out.texts.append(m.message.text)
        elif kind == "json":
            out.jsons.append(m.message.json_object)
        elif kind == "variable":
            out.variables[m.message.variable_name] = m.message.variable_value
    return out


def schema_properties(tool: str) -> set[str]:
    """The variables a tool declares in its YAML ``output_schema``."""
    import yaml

    data = yaml.safe_load((PLUGIN_ROOT / f"tools/{tool}.yaml").read_text(encoding="utf-8"))
    return set(data["output_schema"]["properties"])


def assert_consistent(tool: str, out: ToolOutput) -> None:
    """Variables == the JSON message, each declared in ``output_schema`` (so Dify shows it)."""
    assert out.variables == out.json
    undeclared = set(out.variables) - schema_properties(tool)
    assert not undeclared, undeclared
    assert "Traceback" not in out.text
