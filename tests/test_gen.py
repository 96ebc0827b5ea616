"""``dskit gen``: committed generated files are fresh, stale ones are found, specs match the engine."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import dskit.surfaces.nodes as nodes
from dskit.context.history import HISTORY_NODE_OUTPUTS
from dskit.tooling import generated as gen
from dskit.tooling.cli import main as cli
from dskit.tooling.codegen.code_nodes import (
    CODE_NODES_DIR,
    GENERATED_MARK,
    generate_code_node_readmes,
    generate_code_nodes,
    node_header,
)
from dskit.tooling.generated import REPO_ROOT, generate_all, stale_files, write_all
from dskit.tooling.codegen.sandbox import OUTPUT_TYPES
from dskit.tooling.codegen.nodespecs import NODE_SPECS, spec_by_name

pytestmark = pytest.mark.slow  # generation, graphon runs or recorded-model replays: `-m "not slow"` skips them


@pytest.fixture
def code_node_generators(monkeypatch):
    """Only this module's generators (the DSL generator is slow and tested on its own)."""
    monkeypatch.setattr(gen, "GENERATORS", [generate_code_nodes, generate_code_node_readmes])


def test_committed_generated_files_are_fresh(capsys):
    """CI's `dskit gen --check` (every generator): fails when the engine changed without regenerating."""
    assert cli(["gen", "--check"]) == 0, capsys.readouterr().err


def test_check_lists_missing_changed_and_orphaned_files(tmp_path, capsys, code_node_generators):
    expected = sorted(generate_all(tmp_path))
    assert stale_files(tmp_path) == expected
    assert cli(["gen", "--check", "--root", str(tmp_path)]) == 1
    assert "code_nodes/state.py" in capsys.readouterr().err

    assert sorted(write_all(tmp_path)) == expected
    assert stale_files(tmp_path) == [] and write_all(tmp_path) == []
    assert cli(["gen", "--check", "--root", str(tmp_path)]) == 0

    (tmp_path / "code_nodes" / "history.py").write_text("# edited by hand\n", encoding="utf-8")
    (tmp_path / "code_nodes" / "old_node.py").write_text(f"# {GENERATED_MARK} long ago\n", encoding="utf-8")
    (tmp_path / "code_nodes" / "mine.py").write_text("# a user's own file\n", encoding="utf-8")
    assert stale_files(tmp_path) == ["code_nodes/history.py", "code_nodes/old_node.py"]
    assert cli(["gen", "--root", str(tmp_path)]) == 0
    assert stale_files(tmp_path) == []
    assert not (tmp_path / "code_nodes" / "old_node.py").exists()
    assert (tmp_path / "code_nodes" / "mine.py").exists()


def test_generators_are_an_extension_point(tmp_path, monkeypatch, code_node_generators):
    monkeypatch.setattr(gen, "GENERATORS", gen.GENERATORS + [lambda root: {"dsl/demo.yml": "app: {}\n"}])
    assert "dsl/demo.yml" in generate_all(tmp_path)
    write_all(tmp_path)
    assert (tmp_path / "dsl" / "demo.yml").read_text(encoding="utf-8") == "app: {}\n"
    monkeypatch.setattr(gen, "GENERATORS", gen.GENERATORS + [lambda root: {"code_nodes/state.py": "x"}])
    with pytest.raises(ValueError, match="generated twice"):
        generate_all(tmp_path)


@pytest.mark.parametrize("spec", NODE_SPECS, ids=lambda s: s.name)
def test_spec_matches_its_entry_function(spec):
    module, _, function = spec.entry.partition(":")
    assert module == "dskit.surfaces.nodes"
    entry = getattr(nodes, function)
    parameters = inspect.signature(entry).parameters
    for name in [i.name for i in spec.inputs] + [s.name for s in spec.settings]:
        assert name in parameters, name
    has_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    assert has_kwargs == spec.pass_extra
    assert all(p.default is not inspect.Parameter.empty for p in parameters.values()
               if p.kind is not inspect.Parameter.VAR_KEYWORD), "every input needs a default"
    assert set(spec.output_types().values()) <= set(OUTPUT_TYPES)
    assert set(spec.output_types().values()) <= {"string", "number", "boolean"}


def test_spec_outputs_equal_what_the_engine_returns():
    declared = {"context": nodes.CONTEXT_NODE_OUTPUTS, "state": nodes.STATE_NODE_OUTPUTS, "classic_adapter": nodes.CLASSIC_ADAPTER_OUTPUTS,
                "result": nodes.RESULT_NODE_OUTPUTS, "history": HISTORY_NODE_OUTPUTS,
                "summary": nodes.SUMMARY_NODE_OUTPUTS, "execute_reply": nodes.EXECUTE_REPLY_OUTPUTS,
                "outcome": nodes.OUTCOME_NODE_OUTPUTS}
    assert sorted(declared) == sorted(spec.name for spec in NODE_SPECS)
    for name, types in declared.items():
        assert spec_by_name(name).output_types() == types, name


@pytest.mark.parametrize("spec", NODE_SPECS, ids=lambda s: s.name)
def test_header_tells_how_to_wire_the_node(spec):
    header = node_header(spec)
    code = (REPO_ROOT / CODE_NODES_DIR / spec.filename).read_text(encoding="utf-8")
    assert code.startswith(header)
    assert all(line.startswith("#") for line in header.splitlines())
    assert GENERATED_MARK in header and spec.entry.replace("dskit.surfaces.nodes:", "dskit/surfaces/nodes.py:") in header
    for item in spec.inputs:
        assert re.search(rf"^#\s+{item.name}\s+<- ", header, re.M), item.name
    for output in spec.outputs:
        assert re.search(rf"^#\s+{output.name}\s+{re.escape(output.type)}\s", header, re.M), output.name
    for variable in spec.conversation_variables():
        assert variable in header
    for write in spec.writes:
        assert f"conversation.{write.variable}  over-write  <- this node's {write.output}" in header


@pytest.mark.parametrize("filename, language_marker", [("README.md", "three steps"), ("README_zh.md", "三步")])
def test_readmes_document_every_node(filename, language_marker):
    text = (REPO_ROOT / CODE_NODES_DIR / filename).read_text(encoding="utf-8")
    assert language_marker in text
    for spec in NODE_SPECS:
        assert f"`{spec.filename}`" in text
        for item in spec.inputs:
            assert f"| `{item.name}` |" in text
        for output in spec.outputs:
            assert f"| `{output.name}` | {output.type} |" in text
        for write in spec.writes:
            assert f"| `{write.variable}` |" in text
    assert text.count("\n1. **") >= 1 and "\n3. **" in text  # the three-step worked example


def test_generation_is_deterministic(code_node_generators):
    assert generate_all(Path("/nonexistent")) == generate_all(REPO_ROOT)
