"""`dskit gen --provider --model`: every LLM-backed node uses the chosen model, and the DSL depends on its plugin."""

from __future__ import annotations

import yaml

from dskit.tooling.cli import main

LLM_TYPES = {"llm", "question-classifier", "parameter-extractor"}


TONGYI = "langgenius/tongyi:0.1.0@" + "ab" * 32  # well-formed; a real one comes from a Dify export


def test_provider_and_model_reach_every_llm_node_and_the_dependencies(tmp_path):
    assert main(["gen", "--provider", "langgenius/tongyi/tongyi", "--model", "qwen-plus", "--plugin-identifier",
                 TONGYI, "--out", str(tmp_path)]) == 0
    files = sorted(tmp_path.glob("*.yml"))
    assert [f.name for f in files] == ["dialogue_chatflow.yml", "dialogue_chatflow_classic.yml",
                                       "dialogue_chatflow_plugin.yml"]
    for path in files:
        dsl = yaml.safe_load(path.read_text(encoding="utf-8"))
        nodes = [n["data"] for n in dsl["workflow"]["graph"]["nodes"]]
        models = [d["model"] for d in nodes if d["type"] in LLM_TYPES]
        models += [p["value"] for d in nodes if d["type"] == "tool"
                   for p in d.get("tool_parameters", {}).values() if isinstance(p.get("value"), dict)]
        assert models and all(m["provider"] == "langgenius/tongyi/tongyi" and m.get("name", m.get("model")) == "qwen-plus"
                              for m in models)
        deps = [d["value"].get("marketplace_plugin_unique_identifier", "") for d in dsl["dependencies"]]
        assert TONGYI in deps
        assert not any(d.startswith("langgenius/openai:") for d in deps)
        assert main(["check-dsl", str(path)]) == 0


def test_a_malformed_provider_is_refused(tmp_path, capsys):
    assert main(["gen", "--provider", "openai", "--model", "x", "--out", str(tmp_path)]) == 2
    assert "ORG/PLUGIN/PROVIDER" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_an_unknown_provider_needs_its_full_identifier(tmp_path, capsys):
    """Dify's plugin daemon refuses an identifier without @checksum (dify_rules): gen never makes one up."""
    assert main(["gen", "--provider", "langgenius/tongyi/tongyi", "--model", "qwen-plus", "--out", str(tmp_path)]) == 2
    assert "--plugin-identifier" in capsys.readouterr().err
    assert main(["gen", "--provider", "langgenius/tongyi/tongyi", "--plugin-identifier", "langgenius/tongyi:0.1.0",
                 "--out", str(tmp_path)]) == 2
    assert "CHECKSUM" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
