"""``dskit demo``: the restaurant booking example through the Chatflow DSL in Dify's engine, no model, no network."""

from __future__ import annotations

import argparse
import json
import sys

NOTICE = {
    "zh": "演示：每轮的理解结果是录制好的模型输出（不调用模型、不联网）；状态机、分支、历史和变量赋值都在 "
          "Dify 的工作流引擎 graphon 中真实运行。",
    "en": "Demo: each turn's understanding is a recorded model output (no model, no network); the state "
          "machine, the branches, the history and the assigners really run in graphon, Dify's workflow engine.",
}
LABELS = {
    "zh": {"user": "用户", "action": "next_action", "answer": "回复", "slots": "槽位", "calls": "LLM 调用",
           "recorded": "录制", "ready": "准备演示", "done": "完成：{n} 轮，LLM 调用共 {calls} 次（平均每轮 {mean:.2f}）。"},
    "en": {"user": "user", "action": "next_action", "answer": "answer", "slots": "slots", "calls": "LLM calls",
           "recorded": "recorded", "ready": "getting the demo ready", "done": "Done: {n} turns, {calls} LLM calls ({mean:.2f} a turn)."},
}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="run the restaurant booking example through the Chatflow DSL in graphon (recorded model outputs)",
        description="Run the restaurant booking example through the generated Chatflow in graphon, "
                    "Dify's workflow engine, with recorded understanding outputs: no model, no network.",
    )
    parser.add_argument("--layout", choices=("fast", "classic"), default="fast",
                        help="which Chatflow to run (default: fast)")
    parser.add_argument("--lang", choices=("zh", "en"), default="zh",
                        help="the conversation's language: zh (the default catalog) or en (the English "
                             "example catalog, its Chatflow in English)")
    parser.set_defaults(func=run)


INSTALL_HINT = ("dskit demo needs graphon (Dify's workflow engine) and the tooling dependencies: run "
                "`bash scripts/setup.sh`, or `pip install -e '.[dev]' && pip install --no-deps graphon==0.8.0`")


def missing_engine() -> str:
    """The one-line install hint when graphon or a tooling dependency is absent, else ""."""
    from importlib.util import find_spec

    missing = [name for name in ("graphon", "yaml", "pydantic") if find_spec(name) is None]
    return f"{INSTALL_HINT} (missing: {', '.join(missing)})" if missing else ""


def run(args: argparse.Namespace) -> int:
    hint = missing_engine()
    if hint:
        print(hint, file=sys.stderr)
        return 2
    from dskit.tooling.dslrun.demo import DemoTurn, prepare_demo, run_demo
    from dskit.tooling.progress import steps

    labels = LABELS[args.lang]
    print(NOTICE[args.lang])
    print()

    def show(index: int, turn: DemoTurn) -> None:
        result = turn.result
        print(f"[{index}] {labels['user']}: {turn.user}")
        print(f"    {labels['action']}: {turn.next_action}    "
              f"({labels['calls']}: {result.llm_count}, {labels['recorded']})")
        lines = [line for line in result.answer.splitlines() if line.strip()] or [""]
        print(f"    {labels['answer']}: {lines[0]}")
        for line in lines[1:]:
            print(" " * (len(labels["answer"]) + 6) + line)
        print(f"    {labels['slots']}: {json.dumps(turn.slots, ensure_ascii=False)}")
        print()

    with steps(labels["ready"]) as step:  # seconds before the first turn on a fresh machine: each step shown
        demo = prepare_demo(args.layout, args.lang, step)
    turns = run_demo(on_turn=show, demo=demo)
    calls = sum(t.result.llm_count for t in turns)
    print(labels["done"].format(n=len(turns), calls=calls, mean=calls / max(1, len(turns))))
    return 0
