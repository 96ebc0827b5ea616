"""The standing adversarial suite for the code nodes: every entry function in dskit/surfaces/nodes.py, called
in-process with the hostile kit's inputs in every variable. No node raises; every output is exactly
declared, of its Dify type and within Dify 1.8's limits; a state a node writes fits a conversation
variable; and given UTF-8 text (all Dify can deliver) the state node writes UTF-8 text only.
"""

from __future__ import annotations

import importlib
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adversarial_kit import CATALOG, catalogs, json_junk, state_texts, understandings
from dskit.base.limits import fits_dify_string
from dskit.tooling.codegen.nodespecs import NODE_SPECS, spec_by_name
from test_adversarial_engine import BASE_STATES
from test_nodes_kit import assert_outputs, hostile_text

pytestmark = pytest.mark.slow  # generation, graphon runs or recorded-model replays: `-m "not slow"` skips them

CATALOG_TEXT = json.dumps(CATALOG, ensure_ascii=False)
SPEC_IDS = [spec.name for spec in NODE_SPECS]


def entry(name: str):
    module, _, function = spec_by_name(name).entry.partition(":")
    return getattr(importlib.import_module(module), function)


def _utf8(value):
    """As Dify delivers it: orjson refuses lone surrogates, so they never reach a node raw."""
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    return value


def inputs_for(name: str):
    """Each input variable: hostile text or values, with the kit's states, catalogs and understandings
    where the variable is meant to hold one."""
    spec = spec_by_name(name)
    fields = {}
    for item in spec.inputs:
        if item.name == "task_catalog":
            fields[item.name] = st.sampled_from([CATALOG_TEXT, CATALOG]) | catalogs()
        elif item.name in ("sys_context_str", "recorded_state"):
            fields[item.name] = state_texts(BASE_STATES).map(
                lambda s: json.dumps(s, ensure_ascii=False) if isinstance(s, dict) else s) | hostile_text()
        elif item.name in ("understanding", "execute_payload", "decision"):
            fields[item.name] = understandings().map(
                lambda u: u if isinstance(u, str) else json.dumps(u, ensure_ascii=True, default=str)) | hostile_text()
        else:
            fields[item.name] = hostile_text() | json_junk().map(lambda v: json.dumps(v, default=str))
    return st.fixed_dictionaries({k: v.map(_utf8) for k, v in fields.items()})


@settings(max_examples=15, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
@given(st.data())
@pytest.mark.parametrize("name", SPEC_IDS)
def test_no_code_node_raises_and_outputs_conform(name, data):
    spec = spec_by_name(name)
    kwargs = data.draw(inputs_for(name), label="inputs")
    outputs = entry(name)(**kwargs)
    assert_outputs(outputs, spec.output_types())
    if "sys_context_str" in outputs:
        assert fits_dify_string(outputs["sys_context_str"])
    if name == "state":
        for key, value in outputs.items():
            if isinstance(value, str):
                value.encode("utf-8")


def test_the_state_node_keeps_a_models_escaped_surrogates_out_of_every_output():
    understanding = ('{"rewritten_query": "\\ud800", "commands": [{"type": "start_task", "task": "weather", '
                     '"slots": {"city": "\\udfff北京"}}]}')
    outputs = entry("state")(understanding=understanding, sys_context_str="", task_catalog=CATALOG_TEXT)
    assert outputs["next_action"] == "execute"
    for value in outputs.values():
        if isinstance(value, str):
            value.encode("utf-8")
    assert json.loads(outputs["execute_payload"])["slots"] == {"city": "\ufffd北京"}


def test_a_failed_turn_gives_back_a_large_legacy_state_within_limits_not_empty():
    """Earlier engines wrote states of up to 150,000 characters; a turn that cannot run (broken catalog)
    hands the state back, and on Dify 1.8 it must fit 80,000 characters with its slots intact."""
    state = json.loads(BASE_STATES[1])
    state["timeline"] = [{"turn": 1, "query": "q", "applied": ["x" * 20_000] * 6, "dropped": []}]
    legacy = json.dumps(state, ensure_ascii=False)
    assert not fits_dify_string(legacy)
    outputs = entry("state")(understanding="{}", sys_context_str=legacy, task_catalog="{broken")
    assert outputs["error"] and fits_dify_string(outputs["sys_context_str"])
    kept = json.loads(outputs["sys_context_str"])
    assert [t["slots"] for t in kept["task_stack"]] == [t["slots"] for t in state["task_stack"]]
