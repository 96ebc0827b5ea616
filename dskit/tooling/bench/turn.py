"""``dskit bench turn``: what one turn of each kind costs in nodes and sandbox runs, per Chatflow layout.

Why: in a real Dify every code node, and every template-transform node (Dify renders Jinja2 in the same
sandbox), starts a fresh interpreter and compiles its code on every call (../shared/docs/dify-facts.md,
"Run against a real Dify API"). What a user feels is the sum over the turn, and above all what runs
*before* the understanding model is called. ``bench nodes --cold`` prices each node on its own; this
bench prices the turns.

How: one scripted conversation (restaurant booking with the Chatflows' default catalog) runs in graphon
with every LLM answer scripted, so each turn takes a known path: the first message (which asks a slot;
no prompt is stored yet, so the context node builds it), an ordinary turn that asks the next slot, a
knowledge question, small talk, a turn that asks for confirmation, execute without a task API, four
weather look-ups, a new booking on the eleventh turn (the history window is full: the summary is due),
plus a two-turn conversation (a greeting, then a task) that executes through a local task API. For every turn of interest it records the nodes graphon ran, which
of them run in the sandbox, the inputs each sandbox node got, the bytes of its code, and the bytes Python
compiles on that run (a code node's functions kept as text are compiled only if the run calls them:
dskit/tooling/codegen/deferred.py; found by running the node in this process). Then it
writes one program per sandbox run (the node's code plus Dify's driver, or a Jinja2 runner for a
template) and times it in a fresh interpreter, ``python -I -S file.py`` or (``--runner``) the way a
dify-sandbox release starts it (:mod:`.sandbox_start`: up to 0.2.14 every byte of the code first passes
through a Python XOR loop), interleaved with a bare ``def main(): return {}`` run the same way, round
after round, medians; a busy machine slows them alike, so the multiples of the bare start are the figures to compare. Times are
printed, never asserted: tests check the counts.

Every node a turn runs costs Dify time of its own, sandbox or not (issue 39, measured against a real
Dify 1.12.1 API with a scripted model: the fast Chatflow's turn spent a median 588 ms outside the model
where an app of start -> LLM -> answer spent 41 ms; about 300 ms of it was Dify running the 14-18 nodes
of a turn — if-else, aggregators, assigners 10-20 ms each, plus the gaps between them). The bench counts
every node of each turn and prices each at :data:`DIFY_NODE_MS`, that measurement's 300 ms over 15
nodes; what our nodes add to a turn is then the nodes beyond start, the model and the answer at that
price, plus the sandbox runs as timed here (issue 39's goal for an ordinary turn: 250 ms).

Records next to this module: ``turn_before.json`` (issue 22's starting point), ``turn_after.json`` (``python -I
-S file.py``), ``turn_sandbox-<release>_py<version>.json`` (``--runner``), and ``turn_issue39_before.json``: the
Chatflows before issue 39 (commit 73ec4ea's dsl/, through ``--dsl``) with sandbox 0.2.14's start on Python 3.10,
beside ``turn_sandbox-0.2.14_py3.10.json`` after it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from base64 import b64encode
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dskit.tooling.bench.sandbox_start import RUNNERS, prepare

SANDBOX_TYPES = frozenset({"code", "template-transform"})
# Dify's own time for one node of a turn — its run and the gap before the next — from issue 39's
# measurement on a real Dify 1.12.1 API (idle machine, scripted model answering in 2 ms, 3 conversations
# of 6 turns): about 300 ms for the 14-18 nodes of a turn, if-else, aggregators and assigners 10-20 ms
# each plus the gaps: 300 ms / 15 nodes. A sandbox node costs its run on top (timed here).
DIFY_NODE_MS = 20.0
# The app everything is compared with: start -> LLM -> answer (41 ms outside the model in that measurement).
BASELINE_NODES = 3
BASELINE_MEASURED_MS = 41.0
# Issue 39's goal: our nodes add at most this much to an ordinary turn, by the method above.
ORDINARY_GOAL_MS = 250.0
# The LLM node that reads the user's message in each layout: what runs before it delays the model.
UNDERSTANDING_NODE = {"fast": "understand", "classic": "rewrite"}
LAYOUTS = ("fast", "classic")
RECORD = Path(__file__).with_name("turn_before.json")
BARE_NODE = "def main() -> dict:\n    return {}\n"
FAQ_PASSAGES = [{"title": "包间", "content": "本店包间需提前一天预订，最低消费800元。"}]


@dataclass(frozen=True)
class BenchTurn:
    """One scripted user message; ``kind`` names the turns the report shows ("" for filler turns)."""

    kind: str
    user: str
    understanding: dict[str, Any]
    llm: dict[str, str] = field(default_factory=dict)


def _start(task: str, query: str, **slots: Any) -> dict[str, Any]:
    return {"rewritten_query": query, "commands": [{"type": "start_task", "task": task, "slots": slots}]}


def script() -> list[BenchTurn]:
    """The conversation: every kind once, four fillers, then a turn on which the summary is due."""
    weather = [BenchTurn("", f"查一下{city}的天气", _start("weather", f"查询{city}天气", city=city))
               for city in ("北京", "上海", "广州", "深圳")]
    return [
        BenchTurn("first", "我想订明天晚上七点的位子",
                  _start("book_restaurant", "订明天晚上19:00的位子", date="明天", time="19:00")),
        BenchTurn("ask", "四个人", {"rewritten_query": "四个人", "commands": [{"type": "set_slots", "slots": {"people": 4}}]}),
        BenchTurn("faq", "你们包间有最低消费吗？",
                  {"rewritten_query": "包间有最低消费吗？", "commands": [{"type": "faq", "question": "包间有最低消费吗？"}]},
                  {"faq_answer": "包间最低消费800元，需提前一天预订。"}),
        BenchTurn("chitchat", "哈哈，你们服务真周到",
                  {"rewritten_query": "夸奖服务周到", "commands": [{"type": "chitchat"}]}, {"chat_answer": "谢谢夸奖！"}),
        BenchTurn("confirm", "就订江南小馆",
                  {"rewritten_query": "订江南小馆", "commands": [{"type": "set_slots", "slots": {"restaurant": "江南小馆"}}]}),
        BenchTurn("execute", "好的，订吧", {"rewritten_query": "确认预订江南小馆", "commands": [{"type": "confirm"}]}),
        *weather,
        BenchTurn("summary_due", "再帮我订后天中午的位子", _start("book_restaurant", "订后天中午的位子", date="后天")),
    ]


API_SCRIPT = [BenchTurn("", "你好", {"rewritten_query": "你好", "commands": [{"type": "chitchat"}]}, {"chat_answer": "您好！"}),
              BenchTurn("execute_api", "查询我的账户余额", _start("account_balance", "查询我的账户余额"))]
# "first": a conversation's first message, the one turn on which the context node runs before the model.
KINDS = ("first", "ask", "confirm", "execute", "execute_api", "faq", "chitchat", "summary_due")


# ---------------------------------------------------------------------------------------------- running


class RecordingExecutor:
    """The tooling's local code runner, keeping each run's code and inputs (graphon calls it in node
    order with one worker, so the n-th record is the n-th entry of the turn's ``code_runs``)."""

    def __init__(self) -> None:
        from dskit.tooling.codegen.sandbox import LocalCodeExecutor  # noqa: PLC0415

        self.inner = LocalCodeExecutor()
        self.runs: list[tuple[str, dict[str, Any]]] = []

    def execute(self, *, language: object, code: str, inputs: Mapping[str, Any]) -> Mapping[str, Any]:
        from dskit.tooling.codegen.sandbox import _segment_default  # noqa: PLC0415

        self.runs.append((code, json.loads(json.dumps(dict(inputs), default=_segment_default))))
        return self.inner.execute(language=language, code=code, inputs=inputs)

    def is_execution_error(self, error: Exception) -> bool:
        return self.inner.is_execution_error(error)


@dataclass
class SandboxRun:
    node: str
    node_type: str
    code_bytes: int
    program: str
    before_llm: bool
    compiled_bytes: int = 0  # what Python compiles on this run: a code node's deferred texts only if called


@dataclass
class TurnRecord:
    layout: str
    kind: str
    index: int
    next_action: str
    nodes: list[str]
    llm_nodes: list[str]
    sandbox: list[SandboxRun]

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "turn": self.index, "next_action": self.next_action,
                "nodes_executed": len(self.nodes), "nodes_added": len(self.nodes) - BASELINE_NODES,
                "dify_node_ms": round(len(self.nodes) * DIFY_NODE_MS, 1),
                "path": self.nodes, "llm_calls": self.llm_nodes,
                "sandbox_nodes": len(self.sandbox),
                "sandbox_before_llm": sum(run.before_llm for run in self.sandbox),
                "code_bytes": sum(run.code_bytes for run in self.sandbox),
                "code_bytes_before_llm": sum(run.code_bytes for run in self.sandbox if run.before_llm),
                "compiled_bytes": sum(run.compiled_bytes for run in self.sandbox),
                "compiled_bytes_before_llm": sum(run.compiled_bytes for run in self.sandbox if run.before_llm),
                "sandbox": [{"node": run.node, "type": run.node_type, "code_bytes": run.code_bytes,
                             "compiled_bytes": run.compiled_bytes, "before_llm": run.before_llm}
                            for run in self.sandbox]}


def _graph_nodes(dsl_text: str) -> dict[str, dict[str, Any]]:
    import yaml  # noqa: PLC0415

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    doc = yaml.load(dsl_text, Loader=loader)  # noqa: S506 - a safe loader
    return {str(node["id"]): dict(node.get("data") or {}) for node in doc["workflow"]["graph"]["nodes"]}


def jinja2_program(template: str, inputs: Mapping[str, Any], jinja2_path: str = "") -> str:
    """What the sandbox runs for a template-transform node, written after Dify's Jinja2 transformer
    (api/core/helper/code_executor/jinja2/jinja2_transformer.py): its preload (import jinja2, render a
    trivial template), then the template compiled and rendered with the base64-decoded inputs, the
    result printed between ``<<RESULT>>`` tags. ``jinja2_path``: where jinja2 is installed, since
    ``-I -S`` leaves site-packages out (the sandbox image has jinja2 in its own)."""
    template_b64 = b64encode(template.encode("utf-8")).decode("ascii")
    inputs_b64 = b64encode(json.dumps(dict(inputs), ensure_ascii=False).encode("utf-8")).decode("ascii")
    head = f"import sys\nsys.path.append({jinja2_path!r})\n" if jinja2_path else ""
    return head + "\n".join([
        "import jinja2",
        "import json",
        "from base64 import b64decode",
        "jinja2.Template('{{s}}').render(s='a')",
        "",
        "def main(**inputs):",
        f"    template = jinja2.Template(b64decode('{template_b64}').decode('utf-8'))",
        "    return template.render(**inputs)",
        "",
        f"output = main(**json.loads(b64decode('{inputs_b64}').decode('utf-8')))",
        "print(f'<<RESULT>>{output}<<RESULT>>')",
        "",
    ])


def _jinja2_path() -> str:
    import jinja2  # noqa: PLC0415 - tooling dependency (graphon's)

    return str(Path(jinja2.__file__).resolve().parents[1])


def _template_inputs(data: Mapping[str, Any], outputs: Mapping[str, Mapping[str, Any]],
                     variables: Mapping[str, Any], query: str) -> dict[str, Any]:
    """A template node's inputs from its selectors: earlier nodes' outputs, conversation variables
    (as they were when the turn started), ``sys.query``."""
    values: dict[str, Any] = {}
    for item in data.get("variables") or []:
        selector = list(item.get("value_selector") or [])
        head, name = (selector + ["", ""])[:2]
        if head == "sys" and name == "query":
            value: Any = query
        elif head == "conversation":
            value = variables.get(name, "")
        else:
            value = outputs.get(head, {}).get(name, "")
        values[str(item.get("variable"))] = value
    return values


def run_layout(layout: str, dsl_text: str | None = None, *, api_base: str | None = None) -> list[TurnRecord]:
    """Run the scripted conversation (and, with ``api_base``, the task-API one) in one layout."""
    from dskit.tooling.bench.code_nodes import compiled_on  # noqa: PLC0415
    from dskit.tooling.codegen.sandbox import dify_program  # noqa: PLC0415
    from dskit.tooling.dslbuild.flows import default_catalog  # noqa: PLC0415
    from dskit.tooling.dslrun.costs import dsl_for  # noqa: PLC0415
    from dskit.tooling.dslrun.graphon import Conversation  # noqa: PLC0415
    from dskit.tooling.dslrun.scenarios import ScenarioTurn, focused_task, turn_script  # noqa: PLC0415

    dsl_text = dsl_text or dsl_for(layout)
    nodes = _graph_nodes(dsl_text)
    catalog = default_catalog()
    jinja2_path = _jinja2_path()
    records: list[TurnRecord] = []
    conversations = [(script(), {})]
    if api_base is not None:
        conversations.append((API_SCRIPT, {"TASK_API_URL": api_base.rstrip("/") + "/ok"}))
    for turns, env in conversations:
        executor = RecordingExecutor()
        conversation = Conversation(dsl_text, env=env, code_executor=executor,
                                    knowledge=lambda query: FAQ_PASSAGES)
        for index, bench_turn in enumerate(turns, 1):
            before = dict(conversation.variables)
            turn = ScenarioTurn(user=bench_turn.user, understanding=bench_turn.understanding, llm=bench_turn.llm)
            executor.runs.clear()
            result = conversation.turn(bench_turn.user, turn_script(turn, layout, catalog, focused_task(before)[0]))
            if not bench_turn.kind:
                continue
            understanding = UNDERSTANDING_NODE[layout]
            cut = result.path.index(understanding) if understanding in result.path else len(result.path)
            early = set(result.path[:cut])
            runs: list[SandboxRun] = []
            code_runs = iter(executor.runs)
            for node_id in result.path:
                data = nodes.get(node_id, {})
                kind = str(data.get("type") or "")
                if kind == "code":
                    code, inputs = next(code_runs)
                    runs.append(SandboxRun(node_id, kind, len(code.encode("utf-8")), dify_program(code, inputs),
                                           node_id in early, compiled_on(code, inputs)[0]))
                elif kind == "template-transform":
                    template = str(data.get("template") or "")
                    inputs = _template_inputs(data, result.outputs, before, bench_turn.user)
                    size = len(template.encode("utf-8"))
                    runs.append(SandboxRun(node_id, kind, size, jinja2_program(template, inputs, jinja2_path),
                                           node_id in early, size))
            records.append(TurnRecord(layout, bench_turn.kind, index, str(result.output("state", "next_action") or ""),
                                      list(result.path), [call.node_id for call in result.llm_calls], runs))
    return records


# ---------------------------------------------------------------------------------------------- timing


def time_programs(programs: Mapping[str, str], rounds: int, python: str, runner: str = "file") -> dict[str, float]:
    """Median ms of a fresh interpreter per program, started the way ``runner`` says
    (:mod:`dskit.tooling.bench.sandbox_start`), interleaved round after round."""
    times: dict[str, list[float]] = {name: [] for name in programs}
    with tempfile.TemporaryDirectory(prefix="dskit-turn-") as folder:
        launches = {name: prepare(runner, text, Path(folder), f"run_{number}")
                    for number, (name, text) in enumerate(programs.items())}
        for _ in range(max(1, rounds)):
            for name, launch in launches.items():
                started = time.perf_counter()
                done = launch.run(python, Path(folder))
                times[name].append((time.perf_counter() - started) * 1000)
                if done.returncode != 0 or b"<<RESULT>>" not in done.stdout:
                    raise RuntimeError(f"{name} failed in a fresh interpreter: {done.stderr.decode()[-300:]}")
    return {name: statistics.median(values) for name, values in times.items()}


def measure(layouts: Sequence[str] = LAYOUTS, *, rounds: int = 5, python: str | None = None,
            timed: bool = True, runner: str = "file", dsl: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Counts per turn kind and layout; with ``timed``, fresh-interpreter ms and multiples of the bare start."""
    from dskit.tooling.codegen.sandbox import dify_program  # noqa: PLC0415
    from dskit.tooling.dslrun.taskapi import task_api  # noqa: PLC0415

    python = python or sys.executable
    with task_api() as api:
        records = {layout: run_layout(layout, (dsl or {}).get(layout), api_base=api.base_url) for layout in layouts}
    report: dict[str, Any] = {"scenario": {
        "conversation": [turn.user for turn in script()], "task_api_conversation": [t.user for t in API_SCRIPT],
        "understanding_node": {layout: UNDERSTANDING_NODE[layout] for layout in layouts},
        "sandbox_types": sorted(SANDBOX_TYPES), "rounds": rounds if timed else 0,
        "dify_node_ms": DIFY_NODE_MS, "baseline_nodes": BASELINE_NODES,
        "baseline_measured_ms": BASELINE_MEASURED_MS, "ordinary_goal_ms": ORDINARY_GOAL_MS}, "layouts": {}}
    programs: dict[str, str] = {"bare": dify_program(BARE_NODE, {})} if timed else {}
    for layout, turns in records.items():
        for record in turns:
            for number, run in enumerate(record.sandbox):
                programs[f"{layout}/{record.kind}/{number}"] = run.program
    medians = time_programs(programs, rounds, python, runner) if timed else {}
    bare = medians.get("bare", 0.0)
    if timed:
        version = subprocess.run([python, "-I", "-S", "-c", "import sys; print(sys.version.split()[0])"],
                                 capture_output=True, text=True, check=False).stdout.strip()
        report["scenario"]["python"] = version
        report["scenario"]["runner"] = runner
        report["bare"] = {"code_bytes": len(BARE_NODE.encode()), "ms": round(bare, 1)}
    for layout, turns in records.items():
        kinds: dict[str, Any] = {}
        for record in sorted(turns, key=lambda r: KINDS.index(r.kind)):
            entry = record.as_dict()
            if timed:
                for number, run in enumerate(entry["sandbox"]):
                    run["ms"] = round(medians[f"{layout}/{record.kind}/{number}"], 1)
                    run["x_bare"] = round(run["ms"] / bare, 2)
                split = {"before": [r["ms"] for r in entry["sandbox"] if r["before_llm"]],
                         "after": [r["ms"] for r in entry["sandbox"] if not r["before_llm"]]}
                entry["sandbox_ms"] = {"before_llm": round(sum(split["before"]), 1),
                                       "after_llm": round(sum(split["after"]), 1),
                                       "total": round(sum(split["before"]) + sum(split["after"]), 1)}
                entry["x_bare"] = {key: round(value / bare, 2) for key, value in entry["sandbox_ms"].items()}
                entry.update(priced(entry))
            kinds[record.kind] = entry
        report["layouts"][layout] = kinds
    return report


def priced(entry: Mapping[str, Any]) -> dict[str, float]:
    """A timed turn by issue 39's method: Dify's time for every node, plus the sandbox runs as timed;
    ``added_ms`` is what our nodes add to start -> LLM -> answer (its three nodes at the same price), and
    ``x_baseline`` the turn outside the model as a multiple of that app's."""
    outside = entry["dify_node_ms"] + entry["sandbox_ms"]["total"]
    baseline = BASELINE_NODES * DIFY_NODE_MS
    return {"outside_model_ms": round(outside, 1), "added_ms": round(outside - baseline, 1),
            "x_baseline": round(outside / baseline, 2)}


# ---------------------------------------------------------------------------------------------- output


def ordinary_line(layout: str, kinds: Mapping[str, Any]) -> str:
    """One line on the ordinary (ask) turn against issue 39's goal."""
    ask = kinds.get("ask")
    if ask is None:
        return ""
    text = (f"{layout}: an ordinary turn runs {ask['nodes_executed']} nodes ({ask['nodes_added']} beyond start, "
            f"the model and the answer: {ask['nodes_added'] * DIFY_NODE_MS:.0f} ms at {DIFY_NODE_MS:.0f} ms a node, "
            f"issue 39) and {ask['sandbox_nodes']} sandbox run(s), {ask['sandbox_before_llm']} before the model")
    if "added_ms" in ask:
        verdict = "within" if ask["added_ms"] <= ORDINARY_GOAL_MS else "over"
        text += (f"; our nodes add {ask['added_ms']:.0f} ms ({verdict} the {ORDINARY_GOAL_MS:.0f} ms goal), the turn "
                 f"outside the model is {ask['x_baseline']:.2f}× start→LLM→answer's")
    return text


def print_table(report: Mapping[str, Any]) -> None:
    from rich.console import Console  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415

    console = Console()
    console.width = max(console.width, 150)  # a piped table keeps its columns whole
    timed = "bare" in report
    if timed:
        runner = report["scenario"].get("runner", "file")
        how = "`python -I -S file.py`" if runner == "file" else f"the {runner} prescript's start (sandbox_start.py)"
        console.print(f"bench turn: a fresh interpreter per sandbox run, started as {how}, "
                      f"{report['scenario']['rounds']} interleaved rounds, medians, Python "
                      f"{report['scenario']['python']}; one bare node start = {report['bare']['ms']:.1f} ms")
    for layout, kinds in report["layouts"].items():
        table = Table(title=f"{layout} Chatflow: one turn of each kind (before / after the understanding call "
                            f"`{report['scenario']['understanding_node'][layout]}`)")
        for column in ("turn", "next action", "nodes run", f"Dify ms (×{DIFY_NODE_MS:.0f})", "LLM calls",
                       "sandbox before", "sandbox after", "code KB before", "code KB after", "compiled KB before",
                       "compiled KB after"):
            table.add_column(column, justify="left" if column in ("turn", "next action") else "right")
        if timed:
            for column in ("ms before", "ms after", "× bare before", "× bare after", "× bare turn",
                           "outside model ms", "added ms", "× start→LLM→answer"):
                table.add_column(column, justify="right")
        for kind, entry in kinds.items():
            before, total = entry["sandbox_before_llm"], entry["sandbox_nodes"]
            bytes_before = entry["code_bytes_before_llm"]
            compiled_before = entry["compiled_bytes_before_llm"]
            row = [kind, entry["next_action"], str(entry["nodes_executed"]), f"{entry['dify_node_ms']:.0f}",
                   str(len(entry["llm_calls"])), str(before), str(total - before), f"{bytes_before / 1000:.1f}",
                   f"{(entry['code_bytes'] - bytes_before) / 1000:.1f}", f"{compiled_before / 1000:.1f}",
                   f"{(entry['compiled_bytes'] - compiled_before) / 1000:.1f}"]
            if timed:
                ms, ratio = entry["sandbox_ms"], entry["x_bare"]
                row += [f"{ms['before_llm']:.0f}", f"{ms['after_llm']:.0f}", f"{ratio['before_llm']:.2f}",
                        f"{ratio['after_llm']:.2f}", f"{ratio['total']:.2f}", f"{entry['outside_model_ms']:.0f}",
                        f"{entry['added_ms']:.0f}", f"{entry['x_baseline']:.2f}"]
            table.add_row(*row)
        console.print(table)
        console.print(ordinary_line(layout, kinds))
        nodes = Table(title=f"{layout}: sandbox runs per turn")
        for column in ("turn", "node", "type", "code bytes", "compiled bytes", "before LLM") + (
                ("ms", "× bare") if timed else ()):
            nodes.add_column(column, justify="right" if column in ("code bytes", "compiled bytes", "ms", "× bare")
                             else "left")
        for kind, entry in kinds.items():
            for run in entry["sandbox"]:
                row = [kind, run["node"], run["type"], f"{run['code_bytes']:,}", f"{run['compiled_bytes']:,}",
                       "yes" if run["before_llm"] else ""]
                if timed:
                    row += [f"{run['ms']:.1f}", f"{run['x_bare']:.2f}"]
                nodes.add_row(*row)
        console.print(nodes)


def run(args: argparse.Namespace) -> int:
    layouts = args.layout or list(LAYOUTS)
    dsl = {layout: Path(path).read_text(encoding="utf-8") for layout, path in (args.dsl or [])}
    report = measure(layouts, rounds=args.rounds, python=args.python, timed=not args.no_time, runner=args.runner,
                     dsl=dsl)
    if args.record:
        from datetime import UTC, datetime  # noqa: PLC0415

        from dskit.tooling.commands.eval import _git_commit, machine  # noqa: PLC0415

        recorded = {"recorded": {"date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "machine": machine(),
                                 "dskit_commit": _git_commit()}, **report}
        args.record.write_text(json.dumps(recorded, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"recorded in {args.record}", file=sys.stderr)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print_table(report)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "turn",
        help="per kind of turn: every node run (priced at Dify's own cost a node, issue 39), sandbox runs and "
             "code compiled before/after the model, fresh-interpreter time as multiples of a bare node's start",
        description="Runs one scripted conversation through each Chatflow layout in graphon (the first message, "
                    "ask, FAQ, small talk, confirm, execute with and without a task API, a turn with the summary "
                    "due) and, per "
                    "kind of turn, counts every node run (priced at Dify's own 20 ms a node, measured in issue 39), "
                    "the sandbox runs (code and template-transform) and the "
                    "bytes of code they compile, split before/after the understanding LLM call; then times each "
                    "sandbox run in a fresh `python -I -S file.py` against a bare node started the same way.")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--dsl", nargs=2, action="append", metavar=("LAYOUT", "FILE"), default=None,
                        help="measure this Chatflow file as LAYOUT (repeatable; default: dsl/*.yml), e.g. an "
                             "earlier version's to compare")
    parser.add_argument("--layout", action="append", choices=LAYOUTS, default=None,
                        help="layout(s) to measure (repeatable; default both)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved timing rounds (default 5)")
    parser.add_argument("--python", default=None, help="the interpreter to time (default: this one; the "
                                                       "sandbox's is 3.10 on most releases)")
    parser.add_argument("--runner", choices=RUNNERS, default="file",
                        help="how each run starts: `file` = python -I -S file.py (default, the earlier figures); "
                             "`sandbox-0.2.14` = dify-sandbox up to 0.2.14 (the code XOR-ed into the prescript, "
                             "undone in a Python loop over every byte, then exec); `sandbox-0.2.15` = 0.2.15 (the "
                             "code read from file descriptor 3, then compile and exec)")
    parser.add_argument("--no-time", action="store_true", help="counts only, no fresh-interpreter timing")
    parser.add_argument("--record", type=Path, nargs="?", const=RECORD, default=None, metavar="FILE",
                        help=f"also write the figures as JSON (default file: {RECORD.name} next to this module)")
    parser.set_defaults(func=run)
