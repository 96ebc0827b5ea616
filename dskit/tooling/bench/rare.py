"""``dskit bench rare``: what each code node's ordinary turns call; the rest is compiled on first call.

Why: dify-sandbox compiles a code node's whole script on every call, and compiling is most of what a
node costs. Much of an engine node is code an ordinary turn does not run: repairs of a corrupt state,
rare commands, catalog checks that only fail on a broken catalog, rare grounding cases. The bundler can
leave such a function as its text, compiled when first called (dskit/tooling/codegen/deferred.py); this
bench decides which, by running turns, not by guessing.

The turns: every turn of the scenario suites (tests/scenarios, both Chatflow layouts, in graphon), of
the evaluation suites (examples/eval and examples/eval/heldout through the engine target's nodes, with
the answers of a model that understands every message: tests/fixtures/eval/oracle.yaml and
tests/fixtures/heldout_oracle.yaml), of ``dskit bench turn``'s conversation (both layouts, task API
included) and ``bench nodes --cold``'s ordinary turn. Every code-node call runs the generated script in
this process under ``sys.monitoring`` and records the functions and methods it enters, a deferred one
included. :func:`ordinary` tells the ordinary turns (everyday commands, nothing refused, no error).

The rule: a function or method the bundler can defer unchanged is compiled on first call when fewer
than half of the ordinary turns that run its node call it (:data:`RARE_SHARE`), or when its text is
:data:`LARGE_UNIT` bytes or longer, however often it is called. Measured (valgrind, and page faults
counted, CPython 3.12, the state node's ask turn):

- compiling a function on its first call costs a fixed ~53,000 instructions (``exec``) and ~90 a byte
  for its text, on top of compiling the function itself;
- compiling it with the script costs memory instead: Python holds the tokens and the tree of the whole
  file while it compiles it, ~50 bytes of peak memory per byte of source, one new page (a page fault,
  ~3.5 us on this VM) per ~80 bytes.

So a rare function costs a turn that does not call it only its text, and one of 600 bytes or more costs
even a turn that does call it no more than compiling it with the script: deferring the state node's
functions of 600+ bytes kept its ask turn at the same instruction count with 1,000 fewer page faults
(4,220 -> 3,200), about 3.5 ms at this VM's cost of a fault.

``--write`` stores each node's set, with each unit's share, in dskit/tooling/codegen/rare.json (then run
``dskit gen``); tests/test_deferred.py runs the same turns and checks the stored list against the rule.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import types
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
EVAL_ORACLES = ((ROOT / "examples" / "eval", ROOT / "tests" / "fixtures" / "eval" / "oracle.yaml"),
                (ROOT / "examples" / "eval" / "heldout", ROOT / "tests" / "fixtures" / "heldout_oracle.yaml"))
HEADER = re.compile(r"^# dskit code node: (\w+) ", re.M)
SCRIPT_FILE = "<dskit code node {}>"
DEFERRED_FILE = "<string>"  # what exec(text) compiles a deferred function's text as
TOOL_ID = 4  # sys.monitoring tool id (0-5 are free for tools; 1 and 2 are the debugger's and coverage's)


# ---------------------------------------------------------------------------------------------- tracing


RARE_SHARE = 0.5  # deferred: called by fewer than this share of a node's ordinary turns
LARGE_UNIT = 600  # deferred too: a text of this many bytes or more (UTF-8), however often it is called


def deferred_by_rule(share: float, size: int) -> bool:
    """Whether a unit the bundler can defer is compiled on first call: see the module's docstring."""
    return share < RARE_SHARE or size >= LARGE_UNIT
EVERYDAY_COMMANDS = frozenset({"start_task", "set_slots", "confirm", "faq", "chitchat"})
EVERYDAY_ACTIONS = frozenset({"ask_slot", "confirm", "execute", "faq", "chitchat"})


@dataclass
class TurnTrace:
    """One turn: the code objects each node entered (qualified names), the deferred functions it compiled,
    and what the state and result nodes said (to tell an ordinary turn, :func:`ordinary`)."""

    source: str
    reached: dict[str, set[str]] = field(default_factory=dict)
    loaded: dict[str, set[str]] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)
    state: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)  # (inputs, outputs)
    result_ok: list[bool] = field(default_factory=list)


def _commands(understanding: Any) -> list[str] | None:
    try:
        data = json.loads(understanding) if isinstance(understanding, str) else None
    except ValueError:
        return None
    commands = data.get("commands") if isinstance(data, dict) else None
    if not isinstance(commands, list):
        return None
    return [str(c.get("type")) if isinstance(c, dict) else "" for c in commands]


def ordinary(turn: TurnTrace) -> bool:
    """An everyday turn of a healthy conversation: the state node ran once and read a well-formed answer
    whose commands are all everyday ones (start a task, give values, confirm, ask a question, small
    talk), applied all of them without an error or a refusal, and asked, confirmed, executed or
    answered; a task API it called succeeded. Resets, rollbacks, cancellations, denials, hand-offs,
    unreadable answers, refused values, states changed outside the engine and failed calls are not."""
    if len(turn.state) != 1 or not all(turn.result_ok):
        return False
    inputs, outputs = turn.state[0]
    commands = _commands(inputs.get("understanding"))
    decision = outputs.get("decision") or {}
    if isinstance(decision, str):
        decision = json.loads(decision or "{}")
    return (commands is not None and set(commands) <= EVERYDAY_COMMANDS and not outputs.get("error")
            and outputs.get("next_action") in EVERYDAY_ACTIONS and not decision.get("dropped"))


@dataclass
class Trace:
    """Every traced turn; ``reached``: per node, the units (``function`` / ``Class.method``) its ordinary
    turns entered (filled by :func:`run_turns`)."""

    turns: list[TurnTrace] = field(default_factory=list)
    reached: dict[str, set[str]] = field(default_factory=dict)
    reached_any: dict[str, set[str]] = field(default_factory=dict)  # by any turn, ordinary or not
    ordinary_turns: dict[str, int] = field(default_factory=dict)  # per node: ordinary turns that ran it
    sources: dict[str, list[int]] = field(default_factory=dict)  # [turns, ordinary turns] per source

    def shares(self, node: str) -> dict[str, float]:
        """Per unit: the share of the node's ordinary turns that called it."""
        counts: dict[str, int] = {}
        for turn in self.turns:
            if ordinary(turn):
                for unit in turn.reached.get(node, ()):
                    counts[unit] = counts.get(unit, 0) + 1
        runs = self.ordinary_turns.get(node, 0)
        return {unit: count / runs for unit, count in counts.items()} if runs else {}


class NodeRunner:
    """Each generated code node's ``main``, loaded in this process once per distinct script text,
    called under tracing; the node being run is known from the script's header."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.mains: dict[str, tuple[str, Callable[..., dict[str, Any]], set[str]]] = {}
        self.current = ""
        self.turn = TurnTrace("")
        self.deferred_codes: dict[int, tuple[str, str, types.CodeType]] = {}  # id(code) -> (node, unit, code)
        self.loading = ""  # the node whose script's module level is running (it runs on every call)
        self.at_load: dict[str, set[str]] = {}  # per node: what its module level runs

    def begin(self, source: str) -> None:
        """A new turn: every code object is reported again (events DISABLEd by the last turn restart)."""
        self.turn = TurnTrace(source)
        self.trace.turns.append(self.turn)
        sys.monitoring.restart_events()

    def load(self, code: str) -> tuple[str, Callable[..., dict[str, Any]], set[str]]:
        if code not in self.mains:
            match = HEADER.search(code)
            if match is None:
                raise ValueError("not a generated dskit code node (no header)")
            name = match.group(1)
            module = types.ModuleType(f"_dskit_rare_{name}_{len(self.mains)}")
            sys.modules[module.__name__] = module
            self.loading = name
            sys.monitoring.restart_events()
            try:
                exec(compile(code, SCRIPT_FILE.format(name), "exec"), module.__dict__)  # noqa: S102 - our script
            finally:
                self.loading = ""
                sys.monitoring.restart_events()
            classes = {key for key, value in module.__dict__.items() if isinstance(value, type)}
            self._watch_loads(name, module.__dict__)
            self.mains[code] = (name, module.__dict__["main"], classes)
        return self.mains[code]

    def _watch_loads(self, node: str, namespace: dict[str, Any]) -> None:
        """Note each deferred function the script compiles, and its code objects (to know them when called)."""
        from dskit.tooling.codegen.deferred import DEFERRED_NAME  # noqa: PLC0415

        loader = namespace.get(DEFERRED_NAME)
        if not isinstance(loader, type):
            return
        original = loader._load
        runner = self

        def load(deferred: Any) -> Any:
            fresh = deferred._function is None
            function = original(deferred)
            if fresh:
                unit = deferred._name if deferred._owner is None else f"{deferred._owner.__name__}.{deferred._name}"
                if runner.current:
                    runner.turn.loaded.setdefault(runner.current, set()).add(unit)
                todo = [function.__code__]
                while todo:
                    code = todo.pop()
                    runner.deferred_codes[id(code)] = (node, unit, code)
                    todo += [c for c in code.co_consts if isinstance(c, types.CodeType)]
            return function

        loader._load = load

    def call(self, code: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
        name, main, _ = self.load(code)
        self.current = name
        self.turn.calls[name] = self.turn.calls.get(name, 0) + 1
        try:
            outputs = main(**dict(inputs))
        finally:
            self.current = ""
        if name == "state":
            self.turn.state.append((dict(inputs), outputs))
        elif name == "result":
            self.turn.result_ok.append(bool(outputs.get("ok")) and not outputs.get("error"))
        return outputs

    def classes(self, name: str) -> set[str]:
        return set().union(*(c for n, _m, c in self.mains.values() if n == name))


@contextmanager
def tracing(runner: NodeRunner) -> Iterator[None]:
    """Record every function a code node's script enters (each code object once per node)."""
    monitoring = sys.monitoring
    prefix = SCRIPT_FILE.format("")[:-1]

    def started(code: types.CodeType, offset: int) -> Any:
        # Each code object is reported once a turn (DISABLE, then restart_events): a script's code belongs to
        # its node, a deferred function's code to the unit compiled from that text (:meth:`NodeRunner.load`).
        filename = code.co_filename
        turn = runner.turn
        if filename.startswith(prefix) and runner.loading:
            runner.at_load.setdefault(runner.loading, set()).add(code.co_qualname)
        elif filename.startswith(prefix):
            turn.reached.setdefault(filename[len(prefix):-1], set()).add(code.co_qualname)
        elif filename == DEFERRED_FILE and id(code) in runner.deferred_codes:
            node, unit, _code = runner.deferred_codes[id(code)]
            turn.reached.setdefault(node, set()).add(unit)
        return monitoring.DISABLE

    monitoring.use_tool_id(TOOL_ID, "dskit bench rare")
    try:
        monitoring.register_callback(TOOL_ID, monitoring.events.PY_START, started)
        monitoring.set_events(TOOL_ID, monitoring.events.PY_START)
        yield
    finally:
        monitoring.set_events(TOOL_ID, 0)
        monitoring.register_callback(TOOL_ID, monitoring.events.PY_START, None)
        monitoring.free_tool_id(TOOL_ID)


class InProcessExecutor:
    """graphon's code executor, running each code node's script in this process (:class:`NodeRunner`),
    with the sandbox's JSON round trip and Dify's reading of the printed result."""

    def __init__(self, runner: NodeRunner) -> None:
        self.runner = runner

    def execute(self, *, language: object, code: str, inputs: Mapping[str, Any]) -> Mapping[str, Any]:
        from dskit.tooling.codegen.sandbox import RESULT_TAG, _segment_default, parse_result  # noqa: PLC0415

        plain = json.loads(json.dumps(dict(inputs), default=_segment_default))
        output = self.runner.call(code, plain)
        return parse_result(f"{RESULT_TAG}{json.dumps(output, indent=4)}{RESULT_TAG}")

    def is_execution_error(self, error: Exception) -> bool:
        return False


# ---------------------------------------------------------------------------------------------- the turns


def _scenario_turns(runner: NodeRunner, api_base: str) -> int:
    from dskit.tooling.dslbuild.flows import default_catalog  # noqa: PLC0415
    from dskit.tooling.dslrun.costs import dsl_for  # noqa: PLC0415
    from dskit.tooling.dslrun.graphon import Conversation  # noqa: PLC0415
    from dskit.tooling.dslrun.scenarios import focused_task, load_scenarios, turn_script  # noqa: PLC0415

    catalog = default_catalog()
    texts: dict[str, str] = {}
    turns = 0
    for scenario in load_scenarios():
        for layout in scenario.layouts:
            text = texts.setdefault(layout, dsl_for(layout))
            env = {key: str(value).replace("{api}", api_base.rstrip("/")) for key, value in scenario.env.items()}
            passages = list(scenario.knowledge)
            conversation = Conversation(text, env=env, code_executor=InProcessExecutor(runner),
                                        knowledge=(lambda query, p=passages: p) if passages else None)
            for turn in scenario.turns:
                runner.begin(f"scenario suites (graphon): {scenario.name} ({layout})")
                script = turn_script(turn, layout, catalog, focused_task(conversation.variables)[0])
                conversation.turn(turn.user, script, raise_on_error=False)
                turns += 1
    return turns


def _bench_turns(runner: NodeRunner, api_base: str) -> int:
    from dskit.tooling.bench import turn as bench  # noqa: PLC0415
    from dskit.tooling.dslbuild.flows import default_catalog  # noqa: PLC0415
    from dskit.tooling.dslrun.costs import dsl_for  # noqa: PLC0415
    from dskit.tooling.dslrun.graphon import Conversation  # noqa: PLC0415
    from dskit.tooling.dslrun.scenarios import ScenarioTurn, focused_task, turn_script  # noqa: PLC0415

    catalog = default_catalog()
    turns = 0
    for layout in bench.LAYOUTS:
        text = dsl_for(layout)
        for script, env in ((bench.script(), {}), (bench.API_SCRIPT, {"TASK_API_URL": api_base.rstrip("/") + "/ok"})):
            conversation = Conversation(text, env=env, code_executor=InProcessExecutor(runner),
                                        knowledge=lambda query: bench.FAQ_PASSAGES)
            for item in script:
                runner.begin(f"bench turn conversation (graphon): {item.kind or 'filler'} ({layout})")
                turn = ScenarioTurn(user=item.user, understanding=item.understanding, llm=item.llm)
                conversation.turn(item.user, turn_script(turn, layout, catalog, focused_task(conversation.variables)[0]),
                                  raise_on_error=False)
                turns += 1
    return turns


class _OracleClient:
    """The engine target's model: the understanding a perfect model gives, by the user's message."""

    def __init__(self, answers: Mapping[str, Any]) -> None:
        self.answers = answers

    def complete(self, messages: list[dict[str, str]], **_options: Any) -> Any:
        from dskit.context.context import CONTEXT_HEADERS  # noqa: PLC0415

        text = str(messages[-1]["content"])
        message = ""
        for headers in CONTEXT_HEADERS.values():
            marker = headers["latest"] + "\n"
            if marker in text:
                message = text.rsplit(marker, 1)[1].strip().removeprefix(">").strip()
        value = self.answers.get(message, "???")
        if isinstance(value, list):
            value = {"commands": value}
        reply = value if isinstance(value, str) else json.dumps({"rewritten_query": message, **value},
                                                                ensure_ascii=False)
        return types.SimpleNamespace(text=reply, prompt_tokens=0, completion_tokens=0, latency=0.0, cached=False,
                                     json_mode=True)


def _eval_turns(runner: NodeRunner, codes: Mapping[str, str]) -> int:
    import yaml  # noqa: PLC0415

    from dskit.tooling.eval import engine_target  # noqa: PLC0415
    from dskit.tooling.eval.suite import load_suites  # noqa: PLC0415

    def node(name: str) -> Callable[..., dict[str, Any]]:
        return lambda **inputs: runner.call(codes[name], inputs)

    saved = {name: getattr(engine_target, f"{name}_node") for name in ("context", "state", "execute_reply", "history")}
    turns = 0
    try:
        for name in saved:
            setattr(engine_target, f"{name}_node", node(name))
        for folder, oracle in EVAL_ORACLES:
            client = _OracleClient(yaml.safe_load(oracle.read_text(encoding="utf-8")))
            for suite in load_suites([folder]):
                conversation = engine_target.EngineTarget(client).conversation(suite, "rare")
                for turn in suite.turns:
                    runner.begin(f"evaluation suites (engine target, perfect answers): {suite.name}")
                    conversation.turn(turn.user)
                    turns += 1
    finally:
        for name, function in saved.items():
            setattr(engine_target, f"{name}_node", function)
    return turns


def _typical_turns(runner: NodeRunner, codes: Mapping[str, str]) -> int:
    from dskit.tooling.bench.code_nodes import typical_inputs  # noqa: PLC0415

    mains = {name: (lambda code: lambda **inputs: runner.call(code, inputs))(code) for name, code in codes.items()}
    runner.begin("")  # making the inputs runs two turns of state and one of history: not traced
    inputs = typical_inputs(mains)
    runner.trace.turns.pop()
    for name, values in inputs.items():  # each node's call on one ordinary turn; state decides for all
        runner.begin("bench nodes --cold ordinary turn")
        runner.call(codes["state"], inputs["state"])
        if name != "state":
            runner.turn.reached.clear()
            runner.turn.loaded.clear()
            runner.turn.calls.clear()
            sys.monitoring.restart_events()
            runner.call(codes[name], values)
    return len(inputs)


def run_turns(codes: Mapping[str, str] | None = None) -> Trace:
    """Run every ordinary turn through the code nodes ``codes`` (default: as generated now) and trace them."""
    from dskit.tooling.codegen.code_nodes import node_script  # noqa: PLC0415
    from dskit.tooling.codegen.nodespecs import NODE_SPECS  # noqa: PLC0415
    from dskit.tooling.dslrun.taskapi import task_api  # noqa: PLC0415

    codes = dict(codes or {spec.name: node_script(spec) for spec in NODE_SPECS})
    trace = Trace()
    runner = NodeRunner(trace)
    with tracing(runner), task_api() as api:
        _scenario_turns(runner, api.base_url)
        _eval_turns(runner, codes)
        _bench_turns(runner, api.base_url)
        _typical_turns(runner, codes)
    from dskit.tooling.codegen.deferred import unit_of  # noqa: PLC0415

    nodes = {n for t in trace.turns for n in t.reached} | {n for t in trace.turns for n in t.calls}
    classes = {name: runner.classes(name) for name in nodes}
    for turn in trace.turns:
        for node in turn.calls:  # what the script's module level ran, it runs on every call
            turn.reached.setdefault(node, set()).update(runner.at_load.get(node, ()))
        turn.reached = {node: {unit_of(q, classes[node]) for q in names} for node, names in turn.reached.items()}
        counts = trace.sources.setdefault(turn.source.partition(":")[0], [0, 0])
        counts[0] += 1
        for node, units in turn.reached.items():
            trace.reached_any.setdefault(node, set()).update(units)
        if ordinary(turn):
            counts[1] += 1
            for node, units in turn.reached.items():
                trace.reached.setdefault(node, set()).update(units)
            for node in turn.calls:
                trace.ordinary_turns[node] = trace.ordinary_turns.get(node, 0) + 1
    return trace


# ---------------------------------------------------------------------------------------------- the sets


def rare_sets(trace: Trace) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, Any]]]:
    """Per node: the units to compile on first call (``module:unit`` -> share of ordinary turns), and figures."""
    from dskit.tooling.codegen.bundle import bundle_units  # noqa: PLC0415
    from dskit.tooling.codegen.nodespecs import NODE_SPECS  # noqa: PLC0415

    sets: dict[str, dict[str, float]] = {}
    figures: dict[str, dict[str, Any]] = {}
    for spec in NODE_SPECS:
        units = bundle_units(spec.entry)
        shares = trace.shares(spec.name)
        rare = [u for u in units if deferred_by_rule(shares.get(u.name, 0.0), u.size) and not u.refusal]
        sets[spec.name] = {u.key: round(shares.get(u.name, 0.0), 3) for u in sorted(rare, key=lambda u: u.key)}
        figures[spec.name] = {
            "ordinary_turns": trace.ordinary_turns.get(spec.name, 0), "units": len(units),
            "unit_bytes": sum(u.size for u in units),
            "never_called": sum(u.name not in shares for u in units),
            "deferred": len(rare), "deferred_bytes": sum(u.size for u in rare),
            "deferred_called": sum(u.name in shares for u in rare),
            "refused": sum(deferred_by_rule(shares.get(u.name, 0.0), u.size) and bool(u.refusal) for u in units),
            "refusals": sorted(f"{u.name}: {u.refusal}" for u in units
                               if deferred_by_rule(shares.get(u.name, 0.0), u.size) and u.refusal)}
    return sets, figures


def run(args: argparse.Namespace) -> int:
    from dskit.tooling.codegen.rare import RARE_FILE, rare_units, write_rare  # noqa: PLC0415

    trace = run_turns()
    sets, figures = rare_sets(trace)
    print(f"bench rare: the functions and methods fewer than {RARE_SHARE:.0%} of a node's ordinary turns call, "
          f"and those of {LARGE_UNIT} bytes or more, are compiled on first call")
    for source, (count, usual) in trace.sources.items():
        print(f"  {count:>5} turns, {usual:>4} ordinary: {source}")
    print(f"\n{'node':<16}{'ordinary':>9}{'units':>7}{'KB':>7}{'never called':>14}{'deferred':>10}"
          f"{'KB deferred':>13}{'of them called':>16}{'cannot':>8}{'listed now':>12}{'changed':>9}")
    for name, row in figures.items():
        listed = set(rare_units(name))
        changed = len(listed ^ set(sets[name]))
        print(f"{name:<16}{row['ordinary_turns']:>9}{row['units']:>7}{row['unit_bytes'] / 1000:>7.1f}"
              f"{row['never_called']:>14}{row['deferred']:>10}{row['deferred_bytes'] / 1000:>13.1f}"
              f"{row['deferred_called']:>16}{row['refused']:>8}{len(listed):>12}{changed:>9}")
    if args.verbose:
        for name, row in figures.items():
            if row["refusals"]:
                print(f"\n{name}: rarely called or large, but compiled with the script "
                      "(the bundler cannot defer them):")
                for line in row["refusals"]:
                    print(f"  {line}")
    if args.write:
        write_rare({
            "about": f"Per code node, the functions and methods (module:name) it compiles only when first called: "
                     f"fewer than {RARE_SHARE:.0%} of its ordinary turns call them, or their text is {LARGE_UNIT} "
                     "bytes or longer (the number is the share of its ordinary turns that call them). "
                     "Written by `dskit bench rare --write` (dskit/tooling/bench/rare.py); `dskit gen` reads it; "
                     "tests/test_deferred.py checks it.",
            "turns": {source: {"turns": count, "ordinary": usual} for source, (count, usual) in trace.sources.items()},
            "nodes": sets,
        })
        print(f"\nwritten to {RARE_FILE}; run `dskit gen`", file=sys.stderr)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "rare",
        help="which functions each code node's ordinary turns call; the rest is compiled on first call",
        description="Runs the ordinary turns (scenario suites in graphon, evaluation suites with perfect "
                    "answers, the turn bench) through every generated code node in this process, records "
                    "the functions and methods they call, and prints per node what the bundler compiles "
                    "only when first called. --write stores the sets in dskit/tooling/codegen/rare.json.")
    parser.add_argument("--write", action="store_true", help="store the sets (then run `dskit gen`)")
    parser.add_argument("--verbose", action="store_true", help="also list the unreached units that cannot be "
                                                               "deferred, and why")
    parser.set_defaults(func=run)
