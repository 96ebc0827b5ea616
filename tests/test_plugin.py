"""The plugin's declarations load through the SDK's own models and pass the daemon's stricter rules."""

from __future__ import annotations

import dify_plugin  # noqa: F401  (first: gevent monkey-patching)

import ast
import copy
from pathlib import Path

import pytest
import yaml
from dify_plugin.core.entities.plugin.setup import PluginConfiguration
from dify_plugin.entities.tool import ToolConfiguration, ToolProviderConfiguration
from dify_plugin.interfaces.tool import Tool, ToolProvider

from fakes.daemon_rules import declaration_problems
from dskit.tooling.dslrun.plugin_tools import PLUGIN_ROOT, plugin_cwd, registration

EXPECTED_TOOLS = {"track_state", "update_dialogue_state", "detect_slot_gaps", "record_task_result", "compress_history",
                  "build_context", "remember", "recall", "forget"}


def load(path: str) -> dict:
    return yaml.safe_load((PLUGIN_ROOT / path).read_text(encoding="utf-8"))


def provider_tool_paths() -> list[str]:
    return load("provider/dialogue_state_kit.yaml")["tools"]


def test_manifest_loads_through_sdk_model() -> None:
    manifest = PluginConfiguration(**load("manifest.yaml"))
    assert manifest.author == "dskit"
    assert manifest.name == "dialogue_state_kit"
    assert manifest.version == "0.2.0"
    assert manifest.icon == "icon.svg"
    permission = manifest.resource.permission
    assert permission and permission.storage and permission.storage.enabled
    assert permission.model and permission.model.enabled and permission.model.llm
    assert manifest.plugins.tools == ["provider/dialogue_state_kit.yaml"]


def test_provider_and_tools_load_through_sdk_models() -> None:
    with plugin_cwd():
        provider = ToolProviderConfiguration(**load("provider/dialogue_state_kit.yaml"))
        assert provider.identity.name == "dialogue_state_kit"
        assert EXPECTED_TOOLS <= {tool.identity.name for tool in provider.tools}
        for path in provider_tool_paths():
            data = load(path)
            config = ToolConfiguration(**data)
            assert config.identity.name == Path(path).stem
            assert config.extra.python.source == f"tools/{Path(path).stem}.py"
            assert config.output_schema and config.output_schema["type"] == "object"


def test_the_state_tools_declare_every_output_the_engine_gives() -> None:
    """A Chatflow can only reference a tool output the schema declares (the node panel lists them):
    every name of dskit.state.views.WORKFLOW_OUTPUTS is in both state tools' output_schema."""
    from dskit.state.views import WORKFLOW_OUTPUTS

    with plugin_cwd():
        for name in ("update_dialogue_state", "track_state"):
            config = ToolConfiguration(**load(f"tools/{name}.yaml"))
            assert set(WORKFLOW_OUTPUTS) <= set(config.output_schema["properties"]), name


def test_registration_loads_every_class() -> None:
    reg = registration()
    provider_config, provider_cls, tools = reg.tools_mapping["dialogue_state_kit"]
    assert issubclass(provider_cls, ToolProvider)
    assert EXPECTED_TOOLS <= set(tools)
    for name, (config, cls) in tools.items():
        assert issubclass(cls, Tool) and cls is not Tool, name
    assert {f.filename for f in reg.files} >= {"icon.svg"}
    provider_cls().validate_credentials({})  # no credentials needed


def test_daemon_rules_hold() -> None:
    problems = [p for p in declaration_problems(PLUGIN_ROOT) if not p.startswith("README.md")]
    assert problems == []


def test_daemon_rules_catch_mistakes(tmp_path: Path) -> None:
    """The checker itself: each mutation breaks exactly the rule it targets."""
    import shutil

    for item in ("manifest.yaml", "main.py", "requirements.txt", "PRIVACY.md", "provider", "tools", "_assets"):
        src = PLUGIN_ROOT / item
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / item)
    (tmp_path / "README.md").write_text("# x\n", encoding="utf-8")
    assert declaration_problems(tmp_path) == []
    manifest = load("manifest.yaml")

    def broken(change) -> list[str]:
        data = copy.deepcopy(manifest)
        change(data)
        (tmp_path / "manifest.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
        return declaration_problems(tmp_path)

    assert any("author" in p for p in broken(lambda d: d.update(author="DSKit")))
    assert any("version" in p for p in broken(lambda d: d.update(version="0.1")))
    assert any("icon" in p for p in broken(lambda d: d.update(icon="missing.svg")))
    assert any("minimum_dify_version" in p for p in broken(lambda d: d.update(minimum_dify_version="1.0.0")))
    (tmp_path / "manifest.yaml").write_text(yaml.safe_dump(manifest, allow_unicode=True), encoding="utf-8")
    tool = yaml.safe_load((tmp_path / "tools/recall.yaml").read_text(encoding="utf-8"))
    tool["parameters"][0]["type"] = "text-input"
    del tool["parameters"][1]["human_description"]
    tool["parameters"][2]["scope"] = "llm"
    (tmp_path / "tools/recall.yaml").write_text(yaml.safe_dump(tool, allow_unicode=True), encoding="utf-8")
    problems = declaration_problems(tmp_path)
    assert any("text-input" in p for p in problems)
    assert any("human_description" in p for p in problems)
    assert any("scope" in p for p in problems)


@pytest.mark.parametrize("path", sorted(f"tools/{name}.yaml" for name in EXPECTED_TOOLS))
def test_every_parameter_is_bilingual(path: str) -> None:
    data = load(path)
    for block in [data["identity"]["label"], data["description"]["human"]]:
        assert block.get("zh_Hans") and block.get("en_US")
    for param in data["parameters"]:
        for key in ("label", "human_description"):
            assert param[key].get("zh_Hans") and param[key].get("en_US"), (path, param["name"], key)


def test_each_tool_file_defines_exactly_one_tool_class() -> None:
    for path in provider_tool_paths():
        source = PLUGIN_ROOT / load(path)["extra"]["python"]["source"]
        tree = ast.parse(source.read_text(encoding="utf-8"))
        classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
        assert len(classes) == 1, source


def test_helpers_define_no_tool_class() -> None:
    """Shared glue must not define Tool subclasses: importing one into a tool file breaks loading."""
    for helper in (PLUGIN_ROOT / "tools").glob("_*.py"):
        tree = ast.parse(helper.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                assert all(getattr(b, "id", "") != "Tool" for b in node.bases), helper


def test_requirements_pin_only_the_sdk() -> None:
    lines = [l.strip() for l in (PLUGIN_ROOT / "requirements.txt").read_text().splitlines() if l.strip()]
    assert lines == ["dify_plugin==0.10.2"]


def test_engine_modules_used_by_tools_are_stdlib_only() -> None:
    """The plugin ships the engine; it must not pull anything beyond the SDK."""
    import sys

    from dskit.tooling.codegen.pythons import GONE_AFTER_310

    # with the modules only the sandbox's 3.10 has (_sha256): tried only where ImportError falls back
    allowed = set(sys.stdlib_module_names) | GONE_AFTER_310 | {"dskit", "dify_plugin", "tools"}
    for path in sorted((PLUGIN_ROOT / "dskit").rglob("*.py")):
        if "tooling" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module.split(".")[0]]
            else:
                continue
            assert set(names) <= allowed, (path.name, names)
