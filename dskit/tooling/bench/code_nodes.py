"""``dskit bench nodes``: time per call and output sizes of every generated code node; ``--cold``: the
fresh-interpreter cost of each node compared with a bare one.

The scenario is a heavy conversation: a 50-turn history (with its summary), a catalog of 10 tasks and
all 10 open on the task stack. Each node's generated script (exactly what users paste) is executed
once into a namespace and its ``main`` timed over repeated calls: median and p95. With ``--process``
each node is also run end to end through the local runner (a fresh interpreter per call, as Dify's
sandbox does), which adds interpreter start and compiling the pasted script. Sizes are reported for
every string output in characters, UTF-8 bytes and Dify's variable size (``sys.getsizeof``), with
the conversation variables each node writes back marked.

``--cold`` measures what Dify pays on every call, since dify-sandbox starts a fresh interpreter per
code node: each node's script plus Dify's driver, run with ``python -I -S`` on one ordinary turn's
inputs, against a bare ``def main(): return {}`` run the same way. The programs run interleaved,
round after round (bare, then every node), and each figure is a median over the rounds, so a busy
machine slows all of them alike; the ratio to the bare node is the figure to compare. Figures are
printed, never asserted (tests check sizes and what the bundle leaves out).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from typing import Any

BENCH_TURNS = 50
BENCH_TASKS = 10


def bench_catalog() -> dict:
    """Ten tasks of four slots each; the stack may hold all ten."""
    tasks = {}
    for index in range(BENCH_TASKS):
        tasks[f"task_{index}"] = {
            "label": f"业务{index}",
            "description": f"第{index}项业务的办理，需要四项信息。",
            "kind": "multi_turn",
            "confirm": True,
            "slots": {
                "city": {"type": "string", "required": True, "label": "城市", "ask": "请问是哪个城市？"},
                "date": {"type": "string", "required": True, "label": "日期", "ask": "请问是哪一天？"},
                "people": {"type": "integer", "minimum": 1, "maximum": 50, "required": True, "label": "人数"},
                "note": {"type": "string", "label": "备注"},
            },
        }
    return {"version": 1, "language": "zh", "tasks": tasks,
            "policy": {"max_attempts": 3, "max_parse_failures": 3, "max_stack": BENCH_TASKS}}


def bench_inputs(scripts: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Inputs for each node in the heavy scenario, built by running the nodes themselves."""
    catalog = json.dumps(bench_catalog(), ensure_ascii=False)
    state_main, history_main = scripts["state"], scripts["history"]
    state = ""
    for index in range(BENCH_TASKS):
        understanding = json.dumps({"rewritten_query": f"办理业务{index}", "commands": [
            {"type": "start_task", "task": f"task_{index}", "slots": {"city": "北京", "date": f"{index + 1}号"}}]},
            ensure_ascii=False)
        out = state_main(understanding=understanding, sys_context_str=state, task_catalog=catalog)
        state = out["sys_context_str"]
    history, summary, decision = "", "", out["decision"]
    for turn in range(BENCH_TURNS + 10):  # 10 more turns than the window, so the summary has content
        out = history_main(old_history=history, summary=summary, user_query=f"第{turn}轮：我想改到{turn % 28 + 1}号，三个人",
                           answer=f"好的，已记下日期：{turn % 28 + 1}号，人数：3。请问还有其他要求吗？",
                           decision=decision, max_turns=BENCH_TURNS)
        history, summary = out["history"], out["summary"]
    understanding = json.dumps({"rewritten_query": "改成5个人", "commands": [
        {"type": "set_slots", "slots": {"people": 5}}]}, ensure_ascii=False)
    state_out = state_main(understanding=understanding, sys_context_str=state, task_catalog=catalog)
    return {
        "history": {"old_history": history, "summary": summary, "user_query": "改成5个人",
                    "answer": state_out["question"], "decision": state_out["decision"], "max_turns": BENCH_TURNS,
                    "sys_context_str": state_out["sys_context_str"], "task_catalog": catalog},  # + the next prompt
        "context": {"query": "改成5个人", "sys_context_str": state, "history": history, "summary": summary,
                    "task_catalog": catalog},
        "state": {"understanding": understanding, "sys_context_str": state, "task_catalog": catalog},
        "classic_adapter": {"class_name": "多轮任务", "query": "改成5个人", "task_catalog": catalog,
                            "sys_context_str": state, "params_json": "", "people": "5"},
        "result": {"sys_context_str": state, "execute_payload": json.dumps(
            {"task_id": "t10", "task": "task_9"}), "ok": "200", "detail": "ok"},
        "summary": {"llm_text": summary, "summary": summary, "overflow": history[:4000], "history": history,
                    "sys_context_str": state_out["sys_context_str"], "task_catalog": catalog},
    }


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))]


def measure(repeat: int = 30, process: bool = False) -> dict:
    """Per node: median/p95 ms per call in-process, optional process-level timing, and output sizes."""
    from dskit.tooling.codegen.code_nodes import node_script
    from dskit.tooling.codegen.nodespecs import NODE_SPECS
    from dskit.tooling.codegen.sandbox import main_in_process, run_code_node

    codes = {spec.name: node_script(spec) for spec in NODE_SPECS}
    scripts = {name: main_in_process(code, name) for name, code in codes.items()}
    inputs = bench_inputs(scripts)
    report: dict[str, Any] = {"scenario": {"history_turns": BENCH_TURNS, "open_tasks": BENCH_TASKS,
                                           "repeat": repeat, "python": sys.version.split()[0]}, "nodes": {}}
    for spec in NODE_SPECS:
        main = scripts[spec.name]
        node_inputs = inputs.get(spec.name, {})
        times = []
        outputs: dict[str, Any] = {}
        for _ in range(max(1, repeat)):
            started = time.perf_counter()
            outputs = main(**node_inputs)
            times.append((time.perf_counter() - started) * 1000)
        writes = {w.output: w.variable for w in spec.writes}
        sizes = {name: {"chars": len(value), "utf8_bytes": len(value.encode("utf-8", "replace")),
                        "dify_bytes": sys.getsizeof(value), "writes": writes.get(name, "")}
                 for name, value in outputs.items() if isinstance(value, str)}
        entry: dict[str, Any] = {
            "median_ms": round(statistics.median(times), 3), "p95_ms": round(_percentile(times, 0.95), 3),
            "script_chars": len(codes[spec.name]), "input_chars": sum(len(v) for v in node_inputs.values()
                                                                      if isinstance(v, str)),
            "outputs": sizes,
        }
        if process:
            runs = []
            for _ in range(3):
                started = time.perf_counter()
                run_code_node(codes[spec.name], node_inputs, spec.output_types())
                runs.append((time.perf_counter() - started) * 1000)
            entry["process_median_ms"] = round(statistics.median(runs), 1)
        report["nodes"][spec.name] = entry
        if spec.name == "state":
            report["scenario"]["open_tasks_measured"] = outputs.get("stack_depth")
        if spec.name == "history":
            report["scenario"]["history_turns_measured"] = outputs.get("turns")
    return report


def format_report(report: dict) -> str:
    """A plain-text table: timings per node, then the size of every string output."""
    scenario = report["scenario"]
    lines = [f"bench nodes: {scenario['history_turns']}-turn history, {scenario['open_tasks']} open tasks, "
             f"{scenario['repeat']} calls per node, Python {scenario['python']}", ""]
    process = any("process_median_ms" in n for n in report["nodes"].values())
    head = f"{'node':<16}{'median ms':>10}{'p95 ms':>10}{'script chars':>14}{'input chars':>13}"
    lines.append(head + (f"{'process ms':>12}" if process else ""))
    for name, node in report["nodes"].items():
        row = (f"{name:<16}{node['median_ms']:>10.2f}{node['p95_ms']:>10.2f}{node['script_chars']:>14,}"
               f"{node['input_chars']:>13,}")
        lines.append(row + (f"{node.get('process_median_ms', 0):>12.1f}" if process else ""))
    lines += ["", f"{'node':<16}{'output':<22}{'chars':>9}{'utf8 bytes':>12}{'dify bytes':>12}  writes"]
    for name, node in report["nodes"].items():
        for output, size in node["outputs"].items():
            lines.append(f"{name:<16}{output:<22}{size['chars']:>9,}{size['utf8_bytes']:>12,}"
                         f"{size['dify_bytes']:>12,}  {size['writes'] and 'conversation.' + size['writes']}")
    return "\n".join(lines)


# ---------------------------------------------------------------- cold start (--cold)

BARE_NODE = "def main() -> dict:\n    return {}\n"


def typical_inputs(scripts: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each node's inputs on one ordinary turn: the second message of a restaurant booking with the
    Chatflows' default catalog, a two-turn history, no summary yet."""
    from dskit.tooling.dslbuild.flows import default_catalog

    catalog = json.dumps(default_catalog(), ensure_ascii=False, separators=(",", ":"))
    first = json.dumps({"rewritten_query": "订周五晚上的餐厅", "commands": [
        {"type": "start_task", "task": "book_restaurant", "slots": {"date": "周五"}}]}, ensure_ascii=False)
    second = json.dumps({"rewritten_query": "两位，晚上7点", "commands": [
        {"type": "set_slots", "slots": {"people": 2, "time": "19:00"}}]}, ensure_ascii=False)
    state_main, history_main = scripts["state"], scripts["history"]
    turn1 = state_main(understanding=first, sys_context_str="", task_catalog=catalog)
    history = history_main(old_history="", summary="", user_query="我想订周五晚上的餐厅", answer=turn1["question"],
                           decision=turn1["decision"])["history"]
    turn2 = state_main(understanding=second, sys_context_str=turn1["sys_context_str"], task_catalog=catalog)
    state = turn1["sys_context_str"]
    return {
        "state": {"understanding": second, "sys_context_str": state, "task_catalog": catalog,  # as the Chatflows
                  "query": "两位，晚上7点", "history": history, "summary": "",  # bind it: it keeps the memory too
                  "reply_pending": "", "api_url": "", "conversation_id": "conversation-1"},
        "history": {"old_history": history, "summary": "", "user_query": "两位，晚上7点", "answer": turn2["question"],
                    "decision": turn2["decision"], "sys_context_str": turn2["sys_context_str"],
                    "task_catalog": catalog},  # as the Chatflows bind it: it builds the next prompt too
        "context": {"query": "两位，晚上7点", "sys_context_str": state, "history": history, "summary": "",
                    "task_catalog": catalog},
        "classic_adapter": {"class_name": "补充信息", "query": "两位，晚上7点", "task_catalog": catalog,
                            "sys_context_str": state, "params_json": "", "people": "2", "time": "19:00"},
        "result": {"sys_context_str": turn2["sys_context_str"], "ok": "200", "detail": "ok", "execute_payload":
                   json.dumps({"task_id": "t1", "task": "book_restaurant", "label": "订餐", "slots": {}})},
        "execute_reply": {"execute_payload": "", "question": turn2["question"], "api_url": "",
                          "sys_context_str": turn2["sys_context_str"], "task_catalog": catalog},
        "outcome": {"sys_context_str": turn2["sys_context_str"], "ok": "200", "detail": "ok", "error_message": "",
                    "execute_payload": json.dumps({"task_id": "t1", "task": "book_restaurant", "label": "订餐",
                                                   "slots": {}}), "api_url": "http://127.0.0.1/api",
                    "question": turn2["question"], "task_catalog": catalog, "old_history": history,
                    "reply_pending": "", "summary": "", "user_query": "两位，晚上7点", "decision": turn2["decision"]},
        "summary": {"llm_text": "- 用户要订周五晚上7点两位的餐厅", "summary": "",
                    "overflow": "用户：我想订周五晚上的餐厅\n助手：" + turn1["question"], "history": history,
                    "sys_context_str": turn2["sys_context_str"], "task_catalog": catalog},
    }


_RUNS = {"n": 0}


def compiled_on(code: str, inputs: dict[str, Any]) -> tuple[int, list[str]]:
    """Bytes of ``code`` Python compiles on one call with ``inputs`` in a fresh namespace: all but the
    deferred texts (dskit/tooling/codegen/deferred.py), plus those the call compiles; and their names."""
    from dskit.tooling.codegen.deferred import deferred_objects, deferred_text_bytes, eager_bytes, loaded
    from dskit.tooling.codegen.sandbox import main_in_process

    _RUNS["n"] += 1
    main = main_in_process(code, f"compiled_{_RUNS['n']}")
    objects = deferred_objects(main.__globals__)
    main(**inputs)
    names = sorted(loaded(objects))
    sizes = deferred_text_bytes(code)
    return eager_bytes(code) + sum(sizes[name] for name in names), names


def measure_cold(rounds: int = 15, python: str | None = None) -> dict:
    """Per node: script bytes, median fresh-interpreter ms and its ratio to the bare node's."""
    import tempfile
    from pathlib import Path

    from dskit.tooling.codegen.code_nodes import node_script
    from dskit.tooling.codegen.nodespecs import NODE_SPECS
    from dskit.tooling.codegen.sandbox import dify_program, main_in_process

    python = python or sys.executable
    codes = {spec.name: node_script(spec) for spec in NODE_SPECS}
    inputs = typical_inputs({name: main_in_process(code, name) for name, code in codes.items()})
    times: dict[str, list[float]] = {"bare": [], **{name: [] for name in codes},
                                     **{f"{name}/start": [] for name in codes}}
    with tempfile.TemporaryDirectory(prefix="dskit-cold-") as folder:
        programs = {"bare": Path(folder) / "bare.py"}
        programs["bare"].write_text(dify_program(BARE_NODE, {}), encoding="utf-8")
        for name, code in codes.items():
            programs[name] = Path(folder) / f"{name}.py"
            programs[name].write_text(dify_program(code, inputs.get(name, {})), encoding="utf-8")
            programs[f"{name}/start"] = Path(folder) / f"{name}_start.py"
            programs[f"{name}/start"].write_text(dify_program(code, {}), encoding="utf-8")
        for _ in range(max(1, rounds)):
            for name, path in programs.items():
                started = time.perf_counter()
                done = subprocess.run([python, "-I", "-S", str(path)], cwd=folder, capture_output=True, check=False)
                times[name].append((time.perf_counter() - started) * 1000)
                if done.returncode != 0:
                    raise RuntimeError(f"{name} failed in a fresh interpreter: {done.stderr.decode()[-300:]}")
    bare = statistics.median(times["bare"])
    version = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True,
                             text=True, check=False).stdout.strip()

    def figures(name: str) -> dict[str, float]:
        turn, start = statistics.median(times[name]), statistics.median(times[f"{name}/start"])
        compiled, deferred = compiled_on(codes[name], inputs.get(name, {}))
        return {"bytes": len(codes[name].encode("utf-8")), "compiled_bytes": compiled, "deferred_compiled": deferred,
                "median_ms": round(turn, 1), "ratio": round(turn / bare, 2), "start_ms": round(start, 1),
                "start_ratio": round(start / bare, 2)}

    return {
        "scenario": {"rounds": rounds, "python": version,
                     "inputs": "ratio: one ordinary turn (typical_inputs); start_ratio: empty inputs, i.e. "
                               "compiling and defining the node plus a trivial call"},
        "bare": {"bytes": len(BARE_NODE.encode()), "median_ms": round(bare, 1), "ratio": 1.0},
        "nodes": {name: figures(name) for name in codes},
    }


def format_cold(report: dict) -> str:
    scenario = report["scenario"]
    lines = [f"bench nodes --cold: fresh `python -I -S` per run (as dify-sandbox), {scenario['rounds']} interleaved "
             f"rounds, medians, Python {scenario['python']}", "",
             f"{'node':<16}{'bytes':>9}{'compiled':>10}{'turn ms':>9}{'x bare':>8}{'start ms':>10}{'x bare':>8}",
             f"{'bare':<16}{report['bare']['bytes']:>9,}{report['bare']['bytes']:>10,}{report['bare']['median_ms']:>9.1f}"
             f"{1.0:>8.2f}"]
    for name, node in report["nodes"].items():
        lines.append(f"{name:<16}{node['bytes']:>9,}{node.get('compiled_bytes', node['bytes']):>10,}"
                     f"{node['median_ms']:>9.1f}{node['ratio']:>8.2f}{node['start_ms']:>10.1f}{node['start_ratio']:>8.2f}")
    lines.append("\ncompiled: bytes of the script Python compiles on that turn (all but the functions kept as text "
                 "to compile on first call, plus those the turn calls)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if args.cold:
        report = measure_cold(rounds=args.rounds, python=args.python)
        print(json.dumps(report, ensure_ascii=False, indent=2) if args.json else format_cold(report))
        if args.record:
            from dskit.tooling.codegen.code_nodes import COLD_START_RECORD

            COLD_START_RECORD.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
            print(f"recorded in {COLD_START_RECORD}; `dskit gen` puts it in code_nodes/README*.md", file=sys.stderr)
        return 0
    report = measure(repeat=args.repeat, process=args.process)
    print(json.dumps(report, ensure_ascii=False, indent=2) if args.json else format_report(report))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "nodes",
        help="time per call and output sizes of every generated code node (50-turn history, 10 tasks)",
        description="Runs each generated code node's main() on a heavy scenario: median and p95 time per call "
                    "and the size of every string it returns.",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--repeat", type=int, default=30, help="calls per node (default 30)")
    parser.add_argument("--process", action="store_true",
                        help="also time 3 end-to-end runs per node through the local runner (fresh interpreter)")
    parser.add_argument("--cold", action="store_true",
                        help="instead: each node's size and fresh-interpreter time as a ratio to a bare "
                             "`def main(): return {}`, interleaved rounds, medians")
    parser.add_argument("--rounds", type=int, default=15, help="with --cold: rounds (default 15)")
    parser.add_argument("--python", default=None, help="with --cold: the interpreter to run (default: this one)")
    parser.add_argument("--record", action="store_true",
                        help="with --cold: keep the figures for code_nodes/README*.md (then run `dskit gen`)")
    parser.set_defaults(func=run)
