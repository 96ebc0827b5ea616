"""``dskit bench turn``: the counts it reports are the Chatflow's own (issue 22's measure of a turn, and
issue 39's: every node a turn runs, priced at Dify's own cost a node).

One scripted conversation runs through the fast Chatflow in graphon once per module. What the bench
says about each kind of turn — nodes run, sandbox runs, which of them run before the understanding
call, bytes of code compiled — must agree with the path graphon took and the DSL's own nodes, so a
restructured Chatflow is measured right without editing these tests. Times are never asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dskit.tooling.bench import turn as bench
from dskit.tooling.cli import main
from dskit.tooling.codegen.sandbox import dify_program
from dskit.tooling.dslrun.costs import dsl_for
from dskit.tooling.dslrun.taskapi import task_api

pytestmark = pytest.mark.slow

EXPECTED_ACTION = {"first": "ask_slot", "ask": "ask_slot", "confirm": "confirm", "execute": "execute", "execute_api": "execute",
                   "faq": "faq", "chitchat": "chitchat", "summary_due": "ask_slot"}


@pytest.fixture(scope="module")
def fast() -> tuple[dict, dict]:
    text = dsl_for("fast")
    with task_api() as api:
        records = bench.run_layout("fast", text, api_base=api.base_url)
    return {r.kind: r for r in records}, bench._graph_nodes(text)  # noqa: SLF001


def test_every_kind_of_turn_takes_its_own_path(fast) -> None:
    records, _ = fast
    assert sorted(records) == sorted(bench.KINDS)
    for kind, record in records.items():
        assert record.next_action == EXPECTED_ACTION[kind], kind
    assert "summarize" in records["summary_due"].llm_nodes and "summarize" not in records["ask"].llm_nodes
    assert "faq_answer" in records["faq"].llm_nodes and "chat_answer" in records["chitchat"].llm_nodes
    assert "call_api" in records["execute_api"].nodes and "call_api" not in records["execute"].nodes


def test_sandbox_runs_are_the_code_and_template_nodes_of_the_path(fast) -> None:
    records, nodes = fast
    for kind, record in records.items():
        entry = record.as_dict()
        in_sandbox = [n for n in record.nodes if nodes[n].get("type") in bench.SANDBOX_TYPES]
        assert [run["node"] for run in entry["sandbox"]] == in_sandbox, kind
        assert entry["nodes_executed"] == len(record.nodes) == len(set(record.nodes))
        cut = record.nodes.index("understand")
        assert entry["sandbox_before_llm"] == sum(n in record.nodes[:cut] for n in in_sandbox)
        for run in entry["sandbox"]:
            data = nodes[run["node"]]
            source = data["code"] if data["type"] == "code" else data["template"]
            assert run["code_bytes"] == len(source.encode("utf-8"))
        assert entry["code_bytes"] == sum(run["code_bytes"] for run in entry["sandbox"])


def test_an_ordinary_turn_runs_nothing_in_the_sandbox_before_the_model(fast) -> None:
    """Issues 22 and 39: no kind of turn runs a sandbox node before the understanding call — a
    conversation's first message reads the file's own prompt for an empty conversation — and an ordinary
    turn (ask, confirm, the first message, an execution with no task API), a FAQ and a small-talk turn run
    one, the state node, which keeps the memory too (issue 39: the first ran 2, FAQ and execute turns 3)."""
    records, _ = fast
    for kind in bench.KINDS:
        assert records[kind].as_dict()["sandbox_before_llm"] == 0, kind
    for kind in ("first", "ask", "confirm", "execute", "faq", "chitchat"):
        assert [run["node"] for run in records[kind].as_dict()["sandbox"]] == ["state"], kind
    assert [run.node for run in records["execute_api"].sandbox] == ["state", "outcome"]


def test_every_node_of_a_turn_is_counted_and_priced(fast) -> None:
    """Issue 39: every node a turn runs costs Dify time (DIFY_NODE_MS each); an ordinary turn runs eight —
    start, two Dify nodes, the model, the state node, the route, one assigner and the answer — five beyond
    start -> LLM -> answer (fourteen before issue 39), and no kind of turn runs more than 13."""
    records, _ = fast
    ask = records["ask"].as_dict()
    assert ask["path"] == ["start", "has_prompt", "prompt", "understand", "state", "route", "save", "answer"]
    assert ask["nodes_added"] == 5 and ask["dify_node_ms"] == 8 * bench.DIFY_NODE_MS
    for kind in bench.KINDS:
        entry = records[kind].as_dict()
        assert entry["nodes_executed"] <= 13, kind
        assert entry["dify_node_ms"] == entry["nodes_executed"] * bench.DIFY_NODE_MS
    for kind in ("first", "confirm", "execute"):
        assert records[kind].as_dict()["nodes_executed"] == 8, kind
    assert bench.DIFY_NODE_MS * (ask["nodes_added"]) <= bench.ORDINARY_GOAL_MS / 2  # room for the state run
    timed = {**ask, "sandbox_ms": {"total": 90.0}}
    assert bench.priced(timed) == {"outside_model_ms": 250.0, "added_ms": 190.0, "x_baseline": 4.17}


def test_the_classic_layout_runs_nothing_in_the_sandbox_before_its_first_model_call() -> None:
    with task_api() as api:
        records = {r.kind: r for r in bench.run_layout("classic", dsl_for("classic"), api_base=api.base_url)}
    for kind, record in records.items():
        entry = record.as_dict()
        assert record.nodes.index("rewrite") < record.nodes.index("state"), kind
        assert entry["sandbox_before_llm"] == 0, kind  # the first message too (issue 39)
    assert [run.node for run in records["ask"].sandbox] == ["adapter", "state"]


def test_an_ordinary_turn_compiles_only_part_of_its_code_nodes(fast) -> None:
    """Issue 22: a code node's rarely called functions are compiled only when called, so the state node of
    an ask or confirm turn, which keeps the memory too, compiles well under its 631 KB (before the merge
    the state and history nodes compiled 409 KB of 618 KB; before deferral all of it)."""
    records, _ = fast
    for kind, record in records.items():
        for run in record.sandbox:
            assert 0 < run.compiled_bytes <= run.code_bytes, (kind, run.node)
            if run.node_type == "template-transform":
                assert run.compiled_bytes == run.code_bytes
    for kind in ("ask", "confirm"):
        runs = {run.node: run for run in records[kind].sandbox}
        # 294.5-298 KB after issue 39 (311.5 KB before: the context node's prompt assembly is no longer compiled
        # with it on an ordinary turn's path twice over); 446-453 KB after issue 38's commands, effects and
        # admission rules (tests/test_deferred.py says why; a regression held here from growing further);
        # about 461 KB after round 42's rules; about 468-470 KB after round 43's forms (a month's grammar,
        # a refusal of a task's doing)
        compiled = runs["state"].compiled_bytes
        assert compiled <= 474_000, (kind, compiled)
        assert compiled < 0.75 * runs["state"].code_bytes


def test_an_ask_turn_runs_fewer_nodes_than_one_with_a_side_answer(fast) -> None:
    records, _ = fast
    ask = records["ask"].as_dict()
    assert ask["llm_calls"] == ["understand"]
    for kind in ("faq", "chitchat", "execute_api", "summary_due"):
        assert records[kind].as_dict()["nodes_executed"] > ask["nodes_executed"], kind
    # a FAQ turn: retrieval, the "passages found?" branch, the model, then the joining reply (issue 39: no
    # template node, no history node)


def test_each_timed_program_is_the_node_run_the_sandbox_would_make(fast) -> None:
    records, nodes = fast
    # no template on any path (the FAQ model reads the passages as Dify's LLM context, issue 39); each timed
    # program is the node's code with Dify's driver
    assert not [run for record in records.values() for run in record.sandbox if run.node_type != "code"]
    for record in records.values():
        for run in record.sandbox:
            assert run.program.startswith(nodes[run.node]["code"].rstrip())
            assert "output_obj = main(**inputs_obj)" in run.program
    template = bench.jinja2_program("{{ a }}!", {"a": "好"}, bench._jinja2_path())  # noqa: SLF001
    done = subprocess.run([sys.executable, "-I", "-S", "-c", template], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "<<RESULT>>好!<<RESULT>>"


def test_timing_runs_each_program_in_a_fresh_interpreter() -> None:
    programs = {"bare": dify_program(bench.BARE_NODE, {}),
                "template": bench.jinja2_program("{{ a }}!", {"a": "好"}, bench._jinja2_path())}  # noqa: SLF001
    medians = bench.time_programs(programs, rounds=1, python=sys.executable)
    assert set(medians) == {"bare", "template"} and all(value > 0 for value in medians.values())
    with pytest.raises(RuntimeError, match="broken"):
        bench.time_programs({"broken": "raise SystemExit(3)\n"}, rounds=1, python=sys.executable)


def test_the_recorded_before_figures_are_complete() -> None:
    recorded = json.loads(bench.RECORD.read_text(encoding="utf-8"))
    assert recorded["bare"]["ms"] > 0 and recorded["recorded"]["dskit_commit"]
    for layout in ("fast", "classic"):
        kinds = recorded["layouts"][layout]
        # the before figures predate the "first" kind: their ask turn was the first message (every turn
        # then ran the context node before the model)
        assert set(bench.KINDS) - {"first"} <= set(kinds) <= set(bench.KINDS)
        for entry in kinds.values():
            assert entry["sandbox_nodes"] == len(entry["sandbox"]) >= entry["sandbox_before_llm"]
            assert entry["x_bare"]["total"] > 0
    # issue 22's starting point: an ordinary ask turn of the fast Chatflow ran 3 sandbox nodes, 1 before the model
    ask = recorded["layouts"]["fast"]["ask"]
    assert (ask["sandbox_nodes"], ask["sandbox_before_llm"]) == (3, 1)


@pytest.mark.parametrize(("runner", "python"), [("sandbox-0.2.14", "3.10"), ("sandbox-0.2.15", "3.13")])
def test_the_recorded_sandbox_figures_say_how_they_were_started(runner: str, python: str) -> None:
    # dify-sandbox up to 0.2.14 (Dify 1.12 ships 0.2.12, Python 3.10) and 0.2.15 start the code differently
    # (dskit/tooling/bench/sandbox_start.py): each record names its runner and Python, and covers every turn
    path = bench.RECORD.with_name(f"turn_{runner}_py{python}.json")
    recorded = json.loads(path.read_text(encoding="utf-8"))
    assert recorded["scenario"]["runner"] == runner and recorded["scenario"]["python"].startswith(python + ".")
    assert recorded["bare"]["ms"] > 0 and recorded["recorded"]["dskit_commit"]
    for layout in ("fast", "classic"):
        kinds = recorded["layouts"][layout]
        assert set(kinds) == set(bench.KINDS)
        assert all(entry["x_bare"]["total"] > 0 for entry in kinds.values())
    ask = recorded["layouts"]["fast"]["ask"]  # the turn issue 22 measures: one sandbox run, after the model
    assert (ask["sandbox_nodes"], ask["sandbox_before_llm"]) == (1, 0)


def test_the_command_is_listed(capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["bench", "turn", "--help"])
    out = capsys.readouterr().out
    assert stop.value.code == 0 and "--no-time" in out and "sandbox-0.2.14" in out


def test_the_recorded_issue_39_figures_count_fewer_nodes_and_runs() -> None:
    """Issue 39, recorded the same way before (the Chatflows of 73ec4ea, measured with this bench's --dsl) and
    after (dify-sandbox 0.2.14's start, Python 3.10): counts, never times — an ordinary turn 14 -> 8 nodes,
    the first message 2 -> 1 sandbox runs (none before the model), FAQ 3 -> 1. Each record prices its nodes
    at the same DIFY_NODE_MS."""
    before = json.loads(bench.RECORD.with_name("turn_issue39_before.json").read_text(encoding="utf-8"))
    after = json.loads(bench.RECORD.with_name("turn_sandbox-0.2.14_py3.10.json").read_text(encoding="utf-8"))
    for recorded in (before, after):
        assert recorded["scenario"]["dify_node_ms"] == bench.DIFY_NODE_MS and recorded["recorded"]["dskit_commit"]
        assert set(recorded["layouts"]["fast"]) == set(bench.KINDS)
    old, new = before["layouts"]["fast"], after["layouts"]["fast"]
    assert (old["ask"]["nodes_executed"], new["ask"]["nodes_executed"]) == (14, 8)
    assert (old["first"]["sandbox_nodes"], old["first"]["sandbox_before_llm"]) == (2, 1)
    assert (new["first"]["sandbox_nodes"], new["first"]["sandbox_before_llm"]) == (1, 0)
    assert (old["faq"]["sandbox_nodes"], new["faq"]["sandbox_nodes"]) == (3, 1)
    for kind in bench.KINDS:
        assert new[kind]["nodes_executed"] < old[kind]["nodes_executed"], kind
        assert new[kind]["sandbox_nodes"] <= old[kind]["sandbox_nodes"], kind
