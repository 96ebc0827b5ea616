"""The classic layout for any catalog, checked against its TASK_CATALOG; every model call bounded.

Issue 13: the classic layout could not be pointed at another catalog from the command line, and
check-dsl passed four broken hand edits of it (a class naming no task, a missing adapter input, a
parameter named differently from its slot, a task with no class), each of which imports into Dify
and then silently never starts a task or never fills a slot. And no LLM node set ``max_tokens``:
the classic parameter extractor once generated for 14 minutes.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("yaml")

import yaml  # noqa: E402

from dskit.tooling.cli import main as cli_main  # noqa: E402
from dskit.tooling.dslbuild.check import Problem, check_dsl  # noqa: E402
from dskit.tooling.dslbuild.flows import FlowOptions, build_classic, build_fast  # noqa: E402
from dskit.tooling.dslbuild.plugin_flow import build_plugin  # noqa: E402
from dskit.tooling.dslbuild.prompts import MAX_TOKENS  # noqa: E402

pytestmark = pytest.mark.slow  # generation, graphon runs or recorded-model replays: `-m "not slow"` skips them

ROOT = Path(__file__).resolve().parents[1]
TELECOM_FILE = ROOT / "examples" / "catalogs" / "telecom.json"
TELECOM = TELECOM_FILE.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def classic() -> dict[str, Any]:
    return build_classic(FlowOptions(catalog_json=TELECOM)).to_dict()


def _node(doc: dict[str, Any], node_id: str) -> dict[str, Any]:
    return next(n for n in doc["workflow"]["graph"]["nodes"] if n["id"] == node_id)["data"]


def _has(problems: list[Problem], node: str, field: str, words: str) -> bool:
    return any(p.node == node and p.field.startswith(field) and words in p.message for p in problems)


def test_the_classic_layout_built_for_another_catalog_passes(classic: dict) -> None:
    assert check_dsl(classic, run_code=False, sandbox=False) == []
    names = [c["name"] for c in _node(classic, "classify")["classes"]]
    assert names[:4] == ["宽带办理", "故障报修", "话费查询", "路由器租赁"]
    assert {p["name"] for p in _node(classic, "extract")["parameters"]} == {"plan", "address", "date", "phone",
                                                                           "fault", "month", "model"}


def test_a_class_that_names_no_task(classic: dict) -> None:
    doc = copy.deepcopy(classic)
    _node(doc, "classify")["classes"][0]["name"] = "宽带安装"  # the label is 宽带办理
    problems = check_dsl(doc, run_code=False, sandbox=False)
    assert _has(problems, "classify", "data.classes[0].name", "'宽带安装' is no task")
    assert _has(problems, "classify", "data.classes", "task 'install_broadband' (宽带办理) has no class")


def test_a_task_with_no_class(classic: dict) -> None:
    doc = copy.deepcopy(classic)
    classes = _node(doc, "classify")["classes"]
    classes[:] = [c for c in classes if c["name"] != "话费查询"]
    doc["workflow"]["graph"]["edges"] = [e for e in doc["workflow"]["graph"]["edges"]
                                         if not (e["source"] == "classify" and e["sourceHandle"] == "task_bill_enquiry")]
    assert _has(check_dsl(doc, run_code=False, sandbox=False), "classify", "data.classes",
                "task 'bill_enquiry' (话费查询) has no class")


def test_a_parameter_named_differently_from_its_slot(classic: dict) -> None:
    doc = copy.deepcopy(classic)
    param = next(p for p in _node(doc, "extract")["parameters"] if p["name"] == "phone")
    param["name"] = "telephone"
    problems = check_dsl(doc, run_code=False, sandbox=False)
    assert _has(problems, "extract", "data.parameters", "'telephone' is no slot of any task")
    assert _has(problems, "extract", "data.parameters", "slot 'phone' of install_broadband has no parameter")
    assert _has(problems, "adapter", "data.variables", "no input 'telephone' bound to extract.telephone")


@pytest.mark.parametrize("removed", ["address", "class_name"])
def test_a_missing_adapter_input(classic: dict, removed: str) -> None:
    doc = copy.deepcopy(classic)
    adapter = _node(doc, "adapter")
    adapter["variables"] = [v for v in adapter["variables"] if v["variable"] != removed]
    assert _has(check_dsl(doc, run_code=False, sandbox=False), "adapter", "data.variables", f"no input {removed!r}")


def test_every_model_call_is_bounded_to_what_its_answer_needs() -> None:
    for build in (build_fast, build_classic, build_plugin):
        doc = build().to_dict()
        for node in doc["workflow"]["graph"]["nodes"]:
            data = node["data"]
            if data["type"] in ("llm", "question-classifier", "parameter-extractor"):
                assert data["model"]["completion_params"]["max_tokens"] == MAX_TOKENS[node["id"]], node["id"]
            for config in (data.get("tool_configurations") or {}).values():
                value = config.get("value") if isinstance(config, dict) else None
                if isinstance(value, dict) and value.get("type") == "model-selector":
                    assert 0 < value["completion_params"]["max_tokens"] <= 1024, node["id"]
    assert MAX_TOKENS["understand"] >= 400  # a dense message's understanding JSON is ~150-250 tokens


def test_a_model_call_without_max_tokens_is_reported() -> None:
    doc = build_fast().to_dict()
    del _node(doc, "understand")["model"]["completion_params"]["max_tokens"]
    assert _has(check_dsl(doc, run_code=False, sandbox=False), "understand",
                "data.model.completion_params.max_tokens", "not set")
    plugin = build_plugin().to_dict()
    del _node(plugin, "track_state")["tool_configurations"]["model"]["value"]["completion_params"]["max_tokens"]
    assert _has(check_dsl(plugin, run_code=False, sandbox=False), "track_state",
                "data.tool_configurations.model.completion_params.max_tokens", "not set")


def test_gen_catalog_writes_the_three_layouts_for_that_catalog(tmp_path: Path, capsys) -> None:
    assert cli_main(["gen", "--catalog", str(TELECOM_FILE), "--out", str(tmp_path)]) == 0
    files = sorted(p.name for p in tmp_path.glob("*.yml"))
    assert files == ["dialogue_chatflow.yml", "dialogue_chatflow_classic.yml", "dialogue_chatflow_plugin.yml"]
    for name in files:
        doc = yaml.safe_load((tmp_path / name).read_text(encoding="utf-8"))
        env = {v["name"]: v["value"] for v in doc["workflow"]["environment_variables"]}
        assert json.loads(env["TASK_CATALOG"]) == json.loads(TELECOM)
        assert check_dsl(doc, run_code=False, sandbox=False) == []
    classic = yaml.safe_load((tmp_path / "dialogue_chatflow_classic.yml").read_text(encoding="utf-8"))
    assert "宽带办理" in [c["name"] for c in _node(classic, "classify")["classes"]]
    assert "catalog telecom.json" in capsys.readouterr().out


def test_gen_catalog_refuses_a_broken_catalog(tmp_path: Path, capsys) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"version": 1, "tasks": {"a": {"slots": {"x": {"type": "date"}}}}}', encoding="utf-8")
    assert cli_main(["gen", "--catalog", str(broken), "--out", str(tmp_path / "out")]) == 2
    assert "$.tasks.a.slots.x.type" in capsys.readouterr().err and not (tmp_path / "out").exists()
