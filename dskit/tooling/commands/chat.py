"""``dskit chat --base-url URL --model NAME``: talk to the Chatflow live, with any OpenAI-compatible model.

The same DSL as ``dskit demo`` runs in graphon; every LLM node calls the endpoint through the shared
model client (``dskit eval`` uses the same one): one deadline for each whole request (``--deadline``),
retries on 429/5xx and connection errors, the node's own temperature and max_tokens. The API key is
read from an environment variable (``--api-key-env``, default ``OPENAI_API_KEY``), never from the
command line, so it does not end up in shell history.

A turn that fails (endpoint down, deadline passed, HTTP error) prints one line on stderr — never a
traceback — and the conversation goes on with the next message, its state as it was before the turn.
The exit status is 1 when any turn failed, 2 for bad options.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    from dskit.tooling.llm.options import add_model_options  # noqa: PLC0415

    parser = subparsers.add_parser(
        "chat",
        help="chat with the Chatflow in graphon using a live OpenAI-compatible model",
        description="Run the generated Chatflow in graphon, Dify's workflow engine, with a live model "
                    "behind every LLM node (any OpenAI-compatible /chat/completions endpoint).",
    )
    parser.add_argument("--layout", choices=("fast", "classic"), default="fast")
    parser.add_argument("--dsl", type=Path, default=None, help="a DSL file instead of the generated one")
    parser.add_argument("--knowledge", type=Path, default=None,
                        help="a text file of FAQ passages (separated by blank lines) for the FAQ branch")
    parser.add_argument("--task-api", default="", help="TASK_API_URL for the execute branch (default: none)")
    parser.add_argument("--say", action="append", default=None, metavar="MESSAGE",
                        help="send these messages instead of reading stdin (repeatable)")
    parser.add_argument("--verbose", action="store_true", help="print next_action, slots and LLM calls")
    add_model_options(parser)
    parser.set_defaults(func=run)


def _dsl_text(args: argparse.Namespace) -> str:
    if args.dsl is not None:
        return args.dsl.read_text(encoding="utf-8")
    from dskit.tooling.dslbuild.flows import build_classic, build_fast  # noqa: PLC0415

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


def _fail(message: str) -> int:
    print(f"dskit chat: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    import yaml  # noqa: PLC0415

    from dskit.tooling.dslrun.live import ClientResponder, keyword_knowledge, node_parameters, quiet_graphon, turn_error  # noqa: PLC0415
    from dskit.tooling.dslrun.graphon import Conversation  # noqa: PLC0415
    from dskit.tooling.llm.options import OptionError, client_from_args  # noqa: PLC0415

    try:
        client = client_from_args(args)
        text = _dsl_text(args)
        doc = yaml.safe_load(text)
        knowledge = keyword_knowledge(args.knowledge) if args.knowledge else None
    except OptionError as error:
        return _fail(str(error))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        return _fail(f"cannot read the DSL or knowledge file: {' '.join(str(error).split())[:200]}")
    if not isinstance(doc, dict) or "workflow" not in doc:
        return _fail("the DSL file is not a Chatflow (no workflow section)")
    responder = ClientResponder(client, node_parameters(doc))
    env = {"TASK_API_URL": args.task_api} if args.task_api else {}
    failed = 0
    with quiet_graphon():
        conversation = Conversation(text, responder=responder, knowledge=knowledge, env=env)
        for number, message in enumerate(_messages(args), 1):
            result = conversation.turn(message, raise_on_error=False)
            calls = responder.take()
            if not result.succeeded:
                failed += 1
                print(f"[error] turn {number}: {turn_error(result)}", file=sys.stderr)
                continue
            print(f"助手 / assistant> {result.answer}")
            if args.verbose:
                slots = result.output("state", "current_task_slots") or "{}"
                tokens = sum(getattr(answer, "prompt_tokens", 0) + getattr(answer, "completion_tokens", 0)
                             for _, answer in calls)
                print(f"    next_action={result.output('state', 'next_action')} "
                      f"task={result.output('state', 'current_task') or '-'} slots={slots} "
                      f"llm_calls={len(calls)} tokens={tokens}")
    return 1 if failed else 0
