"""``dskit chat --base-url URL --model NAME``: talk to the Chatflow live, with any OpenAI-compatible model.

The same DSL as ``dskit demo`` runs in graphon; every LLM node calls the endpoint. The API key is
read from an environment variable (``--api-key-env``, default ``OPENAI_API_KEY``), never from the
command line, so it does not end up in shell history.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "chat",
        help="chat with the Chatflow in graphon using a live OpenAI-compatible model",
        description="Run the generated Chatflow in graphon, Dify's workflow engine, with a live model "
                    "behind every LLM node (any OpenAI-compatible /chat/completions endpoint).",
    )
    parser.add_argument("--base-url", required=True, help="endpoint base, e.g. https://api.openai.com/v1")
    parser.add_argument("--model", required=True, help="model name the endpoint knows")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY",
                        help="environment variable holding the API key (default: OPENAI_API_KEY)")
    parser.add_argument("--layout", choices=("fast", "classic"), default="fast")
    parser.add_argument("--dsl", type=Path, default=None, help="a DSL file instead of the generated one")
    parser.add_argument("--knowledge", type=Path, default=None,
                        help="a text file of FAQ passages (separated by blank lines) for the FAQ branch")
    parser.add_argument("--task-api", default="", help="TASK_API_URL for the execute branch (default: none)")
    parser.add_argument("--say", action="append", default=None, metavar="MESSAGE",
                        help="send these messages instead of reading stdin (repeatable)")
    parser.add_argument("--verbose", action="store_true", help="print next_action, slots and LLM calls")
    parser.set_defaults(func=run)


def _dsl_text(args: argparse.Namespace) -> str:
    if args.dsl is not None:
        return args.dsl.read_text(encoding="utf-8")
    from dskit.tooling.dslbuild.flows import build_classic, build_fast

    return (build_fast() if args.layout == "fast" else build_classic()).to_yaml()


def _messages(args: argparse.Namespace):  # noqa: ANN202 - a generator of str
    if args.say is not None:
        yield from args.say
        return
    interactive = sys.stdin.isatty()
    while True:
        if interactive:
            print("你 / you> ", end="", flush=True)
        line = sys.stdin.readline()
        if not line:
            return
        line = line.strip()
        if line in {"/quit", "/exit"}:
            return
        if line:
            yield line


def run(args: argparse.Namespace) -> int:
    import yaml

    from dskit.tooling.dslrun.live import OpenAICompatible, keyword_knowledge, node_temperatures
    from dskit.tooling.dslrun.graphon import Conversation

    text = _dsl_text(args)
    responder = OpenAICompatible(args.base_url, args.model, os.environ.get(args.api_key_env, ""),
                                 temperatures=node_temperatures(yaml.safe_load(text)))
    knowledge = keyword_knowledge(args.knowledge) if args.knowledge else None
    env = {"TASK_API_URL": args.task_api} if args.task_api else {}
    conversation = Conversation(text, responder=responder, knowledge=knowledge, env=env)
    for message in _messages(args):
        result = conversation.turn(message, raise_on_error=False)
        if not result.succeeded:
            reason = result.graph_error or "; ".join(result.errors.values())
            print(f"[error] {reason}", file=sys.stderr)
            if any(isinstance(e, str) and "cannot reach" in e for e in result.errors.values()):
                return 1
            continue
        print(f"助手 / assistant> {result.answer}")
        if args.verbose:
            slots = result.variables.get("current_task_slots") or "{}"
            print(f"    next_action={result.output('state', 'next_action')} "
                  f"task={result.variables.get('current_task') or '-'} slots={slots} "
                  f"llm_calls={result.llm_count} prompt_chars={result.prompt_chars}")
    return 0
