"""``dskit gen --structured-output``: the fast Chatflow's understand node asks Dify for structured output
with the catalog's JSON schema (dskit/turn/command_schema.py), and what that means in Dify's engine.

graphon (the engine newer Dify releases run) checks a structured answer against the schema and fails
the node when it does not fit; the shipped files leave it off, so the same answer reaches the state node,
which drops what is invalid with the reason (docs/dify.md, "Structured output")."""

from __future__ import annotations

import pytest

yaml = pytest.importorskip("yaml")

from dskit.tooling.dslbuild.flows import FlowOptions, build_fast  # noqa: E402
from dskit.tooling.eval.flow_target import FlowTarget  # noqa: E402
from dskit.tooling.eval.runner import run_suites  # noqa: E402
from dskit.tooling.eval.suite import SUITE_DIR, load_suite  # noqa: E402
from dskit.tooling.llm import ClientConfig, LLMClient  # noqa: E402
from evalkit import model  # noqa: E402
from fakes.openai_server import fake_openai  # noqa: E402

pytestmark = pytest.mark.slow  # graphon runs

PADDED = {"最好在城东，想吃川菜": {"commands": [{"type": "set_slots", "task": "book_restaurant",
                                               "slots": {"area": ["城东"], "cuisine": "川菜", "budget": ""}}]}}


def _node(text: str) -> dict:
    return next(n["data"] for n in yaml.safe_load(text)["workflow"]["graph"]["nodes"] if n["id"] == "understand")


def test_the_option_puts_the_catalogs_schema_on_the_understand_node_only() -> None:
    shipped = _node(build_fast().to_yaml())
    structured = _node(build_fast(FlowOptions(structured_output=True)).to_yaml())
    assert "structured_output_enabled" not in shipped
    assert structured["structured_output_enabled"] is True
    commands = structured["structured_output"]["schema"]["properties"]["commands"]["items"]["anyOf"]
    assert {c["properties"]["task"]["const"] for c in commands if "const" in c["properties"].get("task", {})} \
        >= {"book_restaurant", "plan_route", "weather"}


def _run(tmp_path, structured: bool, overrides=None):
    path = tmp_path / "fast.yml"
    path.write_text(build_fast(FlowOptions(structured_output=structured)).to_yaml(), encoding="utf-8")
    with fake_openai(("answer", model(overrides))) as fake:
        return run_suites(FlowTarget(LLMClient(ClientConfig(fake.base_url, "scripted")), dsl_path=path),
                          [load_suite(SUITE_DIR / "zh_booking_table.yaml")])


def test_answers_that_fit_the_schema_run_as_without_it(tmp_path) -> None:
    assert _run(tmp_path, True).figures()["turn_accuracy"] == 1.0


def test_an_answer_outside_the_schema_fails_the_node_where_the_plain_path_drops_one_value(tmp_path) -> None:
    """An empty budget, padded by the model: graphon fails the understand node (the turn is an error and
    nothing of the message is kept); without structured output the state node drops that one value."""
    strict = _run(tmp_path, True, PADDED).traces[1]
    assert strict["error"] and "Structured output validation failed" in strict["error"]
    plain = _run(tmp_path, False, PADDED).traces[1]
    assert not plain["error"] and plain["passed"]
