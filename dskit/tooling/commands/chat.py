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
    parser.add_argument("--catalog", type=Path, default=None, metavar="FILE",
                        help="a task catalog: chat with the Chatflow `dskit new` builds for it (every text in "
                             "the catalog's language)")
    parser.add_argument("--knowledge", type=Path, default=None,
                        help="a text file of FAQ passages (separated by blank lines) for the FAQ branch")
    parser.add_argument("--task-api", default="", help="TASK_API_URL for the execute branch (default: none)")
    parser.add_argument("--say", action="append", default=None, metavar="MESSAGE",
                        help="send these messages instead of reading stdin (repeatable)")
    parser.add_argument("--verbose", action="store_true", help="print next_action, slots and LLM calls")
    add_model_options(parser)
    parser.set_defaults(func=run)


class CatalogOptionError(ValueError):
    """--catalog names a file that is not a valid catalog (the message lists why)."""


def _catalog_options(path: Path):  # noqa: ANN202 - a FlowOptions
    """The options ``dskit new`` builds with for the catalog at ``path``; CatalogOptionError when it
    is not a valid catalog (every problem with its JSON path, as ``dskit validate`` prints them)."""
    import json  # noqa: PLC0415

    from dskit.catalog.catalog import validate_catalog  # noqa: PLC0415
    from dskit.tooling.commands.validate import read_catalog_text  # noqa: PLC0415
    from dskit.tooling.dslbuild.flows import FlowOptions  # noqa: PLC0415

    try:
        text = read_catalog_text(path)
    except ValueError as error:
        raise CatalogOptionError(f"--catalog {path}: {error}") from None
    problems = validate_catalog(text)
    if problems:
        raise CatalogOptionError(f"--catalog {path}: {len(problems)} problem(s)\n" +
                                 "\n".join(f"  {p}" for p in problems))
    data = json.loads(text)
    return FlowOptions(catalog_json=json.dumps(data, ensure_ascii=False, separators=(",", ":")),
                       lang="en" if data.get("language") == "en" else "zh", localized=True)


def _dsl_text(args: argparse.Namespace, step=lambda _what: None) -> str:  # noqa: ANN001 - a progress step
    if args.dsl is not None:
        return args.dsl.read_text(encoding="utf-8")
    from dskit.tooling.dslbuild.code_sources import shipped_code_nodes  # noqa: PLC0415
    from dskit.tooling.dslbuild.flows import FlowOptions, build_classic, build_fast  # noqa: PLC0415

    options = _catalog_options(args.catalog) if args.catalog is not None else FlowOptions()
    step("building the Chatflow")
    with shipped_code_nodes():  # the checkout's code_nodes/: seconds, not a bundle of the engine
        flow = build_fast(options) if args.layout == "fast" else build_classic(options)
    step("writing the YAML")
    return flow.to_yaml()


def catalog_language(doc: dict) -> str:
    """The ``language`` of the DSL's ``TASK_CATALOG`` ("zh" when it cannot be read): the chat's labels."""
    import json  # noqa: PLC0415

    for var in (doc.get("workflow") or {}).get("environment_variables") or []:
        if isinstance(var, dict) and var.get("name") == "TASK_CATALOG":
            try:
                return "en" if json.loads(str(var.get("value") or "{}")).get("language") == "en" else "zh"
            except (ValueError, AttributeError):
                return "zh"
    return "zh"


def _messages(args: argparse.Namespace, user_prompt: str = "你 / you> "):  # noqa: ANN202 - a generator of str
    if args.say is not None:
        yield from args.say
        return
    interactive = sys.stdin.isatty()
    while True:
        if interactive:
            print(user_prompt, end="", flush=True)
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

    from dskit.tooling.dslrun.live import (ClientResponder, dsl_schema, keyword_knowledge,  # noqa: PLC0415
                                          node_parameters, quiet_graphon, turn_error)
    from dskit.tooling.dslrun.graphon import Conversation  # noqa: PLC0415
    from dskit.tooling.llm.options import OptionError, client_from_args  # noqa: PLC0415
    from dskit.tooling.progress import steps  # noqa: PLC0415

    if args.dsl is not None and args.catalog is not None:
        return _fail("give --dsl or --catalog, not both (a DSL file already holds its catalog)")
    # Seconds before the first message can be answered (building, graphon, the code nodes): each step shown
    # on a terminal; a log (--say, a pipe) gets the conversation only, as it did.
    with steps("dskit chat: getting ready", plain=False) as step:
        try:
            client = client_from_args(args)
            text = _dsl_text(args, step)
            step("reading the Chatflow")
            doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 - a safe loader
            knowledge = keyword_knowledge(args.knowledge) if args.knowledge else None
        except (OptionError, CatalogOptionError) as error:
            doc, problem = None, str(error)
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
            doc, problem = None, f"cannot read the DSL or knowledge file: {' '.join(str(error).split())[:200]}"
        else:
            problem = "" if isinstance(doc, dict) and "workflow" in doc else \
                "the DSL file is not a Chatflow (no workflow section)"
        if not problem:
            responder = ClientResponder(client, node_parameters(doc), schema=dsl_schema(doc))
            env = {"TASK_API_URL": args.task_api} if args.task_api else {}
            conversation = Conversation(text, responder=responder, knowledge=knowledge, env=env)
            with quiet_graphon():
                conversation.prepare(step)
    if problem:
        return _fail(problem)
    failed = 0
    english = catalog_language(doc) == "en"
    prompt = "assistant>" if english else "助手 / assistant>"
    with quiet_graphon():
        for number, message in enumerate(_messages(args, "you> " if english else "你 / you> "), 1):
            # on a terminal, what the turn waits for (the model, node by node); a log gets the answer only
            with steps(prompt, plain=False) as waiting:
                responder.before_call = lambda node, waiting=waiting: waiting(f"asking the model: {node}")
                waiting("running the Chatflow")
                result = conversation.turn(message, raise_on_error=False)
            calls = responder.take()
            if not result.succeeded:
                failed += 1
                print(f"[error] turn {number}: {turn_error(result)}", file=sys.stderr)
                continue
            print(f"{prompt} {result.answer}")
            if args.verbose:
                slots = result.output("state", "current_task_slots") or "{}"
                tokens = sum(getattr(answer, "prompt_tokens", 0) + getattr(answer, "completion_tokens", 0)
                             for _, answer in calls)
                print(f"    next_action={result.output('state', 'next_action')} "
                      f"task={result.output('state', 'current_task') or '-'} slots={slots} "
                      f"llm_calls={len(calls)} tokens={tokens}")
    return 1 if failed else 0
