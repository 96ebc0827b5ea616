"""Checks on what a plugin tool yielded.

Invoking the tools through the SDK with a fake daemon is the tooling's one harness
(dskit/tooling/dslrun/plugin_tools.py ``invoke``, dskit/tooling/dslrun/plugin_daemon.py); what stays
here is only what tests assert about its output.
"""

from __future__ import annotations

from dskit.tooling.dslrun.plugin_tools import PLUGIN_ROOT, ToolOutput


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
