"""``dskit bench nodes``: every node measured on the heavy scenario (no wall-clock assertions)."""

from __future__ import annotations

import pytest

import json

from dskit.tooling.bench.code_nodes import BENCH_TASKS, BENCH_TURNS, bench_catalog, format_report, measure
from dskit.base.limits import CODE_MAX_STRING_LENGTH
from dskit.tooling.cli import main as cli
from dskit.tooling.codegen.nodespecs import NODE_SPECS

pytestmark = pytest.mark.slow  # generation, graphon runs or recorded-model replays: `-m "not slow"` skips them


def test_bench_catalog_is_valid_and_holds_ten_open_tasks():
    from dskit.catalog.catalog import load_catalog

    catalog = load_catalog(bench_catalog())
    assert len(catalog.tasks) == BENCH_TASKS and catalog.policy.max_stack == BENCH_TASKS


def test_measure_reports_every_node_and_every_string_output():
    report = measure(repeat=2)
    assert report["scenario"]["history_turns"] == BENCH_TURNS
    assert list(report["nodes"]) == [spec.name for spec in NODE_SPECS]
    for spec in NODE_SPECS:
        node = report["nodes"][spec.name]
        assert "median_ms" in node and "p95_ms" in node  # reported, never asserted
        strings = {o.name for o in spec.outputs if o.type == "string"}
        assert set(node["outputs"]) == strings
        for write in spec.writes:
            assert node["outputs"][write.output]["writes"] == write.variable
        for size in node["outputs"].values():
            assert size["chars"] <= CODE_MAX_STRING_LENGTH  # Dify 1.8: 80,000 characters per string
    # The scenario is what it claims: a full history window and ten open tasks in the state.
    assert report["scenario"]["open_tasks_measured"] == BENCH_TASKS
    assert report["scenario"]["history_turns_measured"] == BENCH_TURNS
    history = report["nodes"]["history"]["outputs"]["history"]
    assert history["chars"] > 2_000
    state = report["nodes"]["state"]["outputs"]["sys_context_str"]
    assert state["chars"] > 1_000
    assert "state" in format_report(report) and "conversation.sys_context_str" in format_report(report)


def test_cli_json(capsys):
    assert cli(["bench", "nodes", "--json", "--repeat", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["nodes"]) == {spec.name for spec in NODE_SPECS}


def test_cold_reports_size_and_ratio_of_every_node(capsys):
    """``bench nodes --cold --json``: per node its bytes and its fresh-interpreter time as a ratio to a bare
    node run in the same rounds (figures printed, never asserted)."""
    assert cli(["bench", "nodes", "--cold", "--json", "--rounds", "1"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["bare"]["ratio"] == 1.0 and report["bare"]["median_ms"] > 0
    assert list(report["nodes"]) == [spec.name for spec in NODE_SPECS]
    from dskit.tooling.codegen.code_nodes import node_script

    for spec in NODE_SPECS:
        node = report["nodes"][spec.name]
        assert node["bytes"] == len(node_script(spec).encode("utf-8"))
        assert node["ratio"] > 0 and node["start_ratio"] > 0
