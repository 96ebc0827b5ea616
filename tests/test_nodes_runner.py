"""Every generated code node, run the way Dify runs it (separate process, output checks), on hostile input.

Each call starts a Python process, so the fuzzing here is light; the entry functions are fuzzed
heavily in-process in test_nodes.py.
"""

from __future__ import annotations

import json
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dskit.tooling.codegen.code_nodes import CODE_NODES_DIR
from dskit.tooling.generated import REPO_ROOT
from dskit.tooling.codegen.sandbox import run_code_node, sandbox_python
from dskit.tooling.codegen.nodespecs import NODE_SPECS, NodeSpec, spec_by_name
from test_nodes_kit import FOREIGN_STATE, TRAVEL, assert_outputs, hostile_text

SPEC_IDS = [spec.name for spec in NODE_SPECS]


@lru_cache(maxsize=None)
def code_of(name: str) -> str:
    """The committed generated file (test_gen checks it is fresh)."""
    return (REPO_ROOT / CODE_NODES_DIR / f"{name}.py").read_text(encoding="utf-8")


def run(spec: NodeSpec, inputs: dict, **kwargs) -> dict:
    outputs = run_code_node(code_of(spec.name), inputs, spec.output_types(), **kwargs)
    assert_outputs(outputs, spec.output_types())
    return outputs


def all_inputs(spec: NodeSpec, value) -> dict:
    return {item.name: value for item in spec.inputs}


def understanding(*commands: dict) -> str:
    return json.dumps({"rewritten_query": "", "commands": list(commands)}, ensure_ascii=False)


@pytest.mark.parametrize("name", SPEC_IDS)
def test_empty_inputs(name):
    spec = spec_by_name(name)
    run(spec, all_inputs(spec, ""))


@pytest.mark.parametrize("name", SPEC_IDS)
def test_no_inputs_at_all(name):
    """A user who forgot to add the variables still gets every output."""
    run(spec_by_name(name), {})


@pytest.mark.parametrize("name", SPEC_IDS)
@pytest.mark.parametrize("value", [None, 0, 1.5, True, {"k": [1, "x"]}, ["a"]], ids=repr)
def test_non_string_variables(name, value):
    spec = spec_by_name(name)
    run(spec, all_inputs(spec, value))


@pytest.mark.parametrize("name", SPEC_IDS)
@pytest.mark.parametrize("value", ["x" * 1_000_000, "\x00🙂\ud7ff汉\n" * 2000, FOREIGN_STATE, '{"commands": [',
                                   "1e+5", "[" * 5000], ids=["1MB", "nul-emoji", "foreign", "truncated", "sci", "deep"])
def test_hostile_strings_in_every_input(name, value):
    spec = spec_by_name(name)
    run(spec, all_inputs(spec, value) | ({"task_catalog": TRAVEL} if "task_catalog" in all_inputs(spec, "") else {}))


def test_extra_variables_are_tolerated_or_used():
    for spec in NODE_SPECS:
        run(spec, all_inputs(spec, "") | {"unexpected_variable": "x"})
    adapter = spec_by_name("classic_adapter")
    out = run(adapter, {"class_name": "查询天气", "query": "北京天气", "task_catalog": TRAVEL, "sys_context_str": "",
                        "params_json": "", "city": "北京"})
    assert json.loads(out["understanding"])["commands"][0]["slots"] == {"city": "北京"}


def test_a_dialogue_through_the_pasted_nodes():
    """adapter -> state -> (execute) -> result -> history, carrying conversation variables as Dify would."""
    state_spec, history_spec = spec_by_name("state"), spec_by_name("history")
    conversation = {"sys_context_str": "", "history": "", "summary": ""}
    turn = run(state_spec, {"understanding": understanding({"type": "start_task", "task": "plan_route",
                                                             "slots": {"origin": "成都", "destination": "拉萨"}}),
                            "sys_context_str": conversation["sys_context_str"], "task_catalog": TRAVEL})
    conversation["sys_context_str"] = turn["sys_context_str"]
    assert turn["next_action"] == "ask_slot" and turn["slot"] == "date"
    memory = run(history_spec, {"old_history": "", "summary": "", "user_query": "从成都去拉萨", "answer": turn["question"],
                                "decision": turn["decision"]})
    conversation["history"] = memory["history"]
    assert memory["tag"] == "essential"
    for step_commands in ([{"type": "set_slots", "slots": {"date": "下周三"}}], [{"type": "confirm"}]):
        turn = run(state_spec, {"understanding": understanding(*step_commands),
                                "sys_context_str": conversation["sys_context_str"], "task_catalog": TRAVEL})
        conversation["sys_context_str"] = turn["sys_context_str"]
    assert turn["next_action"] == "execute"
    recorded = run(spec_by_name("result"), {"sys_context_str": conversation["sys_context_str"],
                                            "execute_payload": turn["execute_payload"], "ok": 200, "detail": "ok"})
    assert recorded["ok"] is True and '"status":"success"' in recorded["sys_context_str"]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.sampled_from(SPEC_IDS), st.data())
def test_fuzz_pasted_nodes_lightly(name, data):
    spec = spec_by_name(name)
    # Dify serialises inputs with orjson, which refuses lone surrogates: they never reach a code node.
    valid = hostile_text().map(lambda t: t.encode("utf-8", "replace").decode("utf-8"))
    inputs = {item.name: data.draw(valid, label=item.name) for item in spec.inputs}
    if "task_catalog" in inputs and data.draw(st.booleans(), label="real catalog"):
        inputs["task_catalog"] = TRAVEL
    run(spec, inputs)


@pytest.mark.parametrize("name", SPEC_IDS)
def test_on_the_sandboxes_python_310(name):
    python = sandbox_python()
    if python is None:
        pytest.skip("no Python 3.10 interpreter here (dify-sandbox releases run 3.10; set DSKIT_SANDBOX_PYTHON)")
    spec = spec_by_name(name)
    inputs = all_inputs(spec, "") | ({"task_catalog": TRAVEL} if any(i.name == "task_catalog" for i in spec.inputs)
                                     else {})
    if name == "state":
        inputs["understanding"] = understanding({"type": "start_task", "task": "weather", "slots": {"city": "北京"}})
    outputs = run(spec, inputs, python=python)
    if name == "state":
        assert outputs["next_action"] == "execute"
