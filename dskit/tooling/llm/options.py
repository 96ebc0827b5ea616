"""Command-line options for a model, shared by ``dskit chat``, ``dskit eval`` and ``dskit replay``.

One set of flags, one meaning everywhere: the endpoint, the model, where the key is (an environment
variable, never the command line, so it stays out of shell history), the deadline of one request,
retries, JSON mode, a cap on ``max_tokens``, and the answer cache or cassette.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .cache import Cache
from .client import JSON_MODES, STRUCTURED_MODES, ClientConfig, LLMClient

REPLAY_URL = "http://replay.invalid/v1"  # never contacted: replay mode answers from the cassette only


class OptionError(ValueError):
    """Model options that cannot work together; the message is one line for the user."""


def add_model_options(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """Add the model options; ``required=False`` when the command can also run without a model."""
    group = parser.add_argument_group("model (any OpenAI-compatible /chat/completions endpoint)")
    group.add_argument("--base-url", default=None, help="endpoint base, e.g. http://127.0.0.1:8765/v1")
    group.add_argument("--model", default=None, required=False,
                       help="model name the endpoint knows" + (" (required)" if required else ""))
    group.add_argument("--api-key-env", default="OPENAI_API_KEY",
                       help="environment variable holding the API key (default: OPENAI_API_KEY)")
    group.add_argument("--deadline", type=float, default=120.0, metavar="SECONDS",
                       help="deadline of one whole call, retries and their waits included (default 120)")
    group.add_argument("--retries", type=int, default=3,
                       help="retries on HTTP 429/5xx and connection errors, with backoff (default 3)")
    group.add_argument("--json-mode", choices=JSON_MODES, default="auto",
                       help="ask for JSON output where a JSON answer is expected: auto (detected once), "
                            "on, off (default auto)")
    group.add_argument("--structured", choices=STRUCTURED_MODES, default="off",
                       help="constrain the understanding call's answer to the catalog's JSON schema "
                            "(dskit/turn/command_schema.py): auto (the form the endpoint takes, detected once; none: "
                            "the plain path), json_schema (OpenAI, vLLM, llama.cpp server), json_object_schema "
                            "(llama-cpp-python), off (default: what the shipped Chatflows do)")
    group.add_argument("--max-tokens", type=int, default=None, metavar="N",
                       help="cap every call's max_tokens at N (default: what each call asks for)")
    cache = group.add_mutually_exclusive_group()
    cache.add_argument("--cache", type=Path, default=None, metavar="FILE",
                       help="answer cache (JSON lines): reuse recorded answers, record new ones")
    cache.add_argument("--record", type=Path, default=None, metavar="FILE",
                       help="record every answer into this cassette (reusing what it already holds)")
    cache.add_argument("--replay", type=Path, default=None, metavar="FILE",
                       help="answer only from this cassette; never call the endpoint")


def wants_model(args: argparse.Namespace) -> bool:
    """Whether any model option was given (for commands where the model is optional)."""
    return bool(args.base_url or args.model or args.replay)


def client_from_args(args: argparse.Namespace) -> LLMClient:
    """The client the options describe; :class:`OptionError` when they do not add up."""
    if not args.model:
        raise OptionError("--model is required (the name the endpoint knows; it is part of the cache key)")
    if args.deadline is not None and args.deadline <= 0:
        raise OptionError("--deadline must be a positive number of seconds")
    if args.retries < 0:
        raise OptionError("--retries must be 0 or more")
    base_url = args.base_url or (REPLAY_URL if args.replay else None)
    if not base_url:
        raise OptionError("--base-url is required (or --replay FILE to answer from a cassette)")
    if not base_url.startswith(("http://", "https://")):
        raise OptionError(f"--base-url must start with http:// or https://, not {base_url!r}")
    cache = None
    try:
        if args.replay:
            cache = Cache(args.replay, "replay")
        elif args.record:
            cache = Cache(args.record, "record")
        elif args.cache:
            cache = Cache(args.cache, "readwrite")
    except (OSError, ValueError) as error:
        raise OptionError(str(error)) from None
    for warning in cache.warnings if cache is not None else ():
        print(f"warning: {warning}", file=sys.stderr)
    config = ClientConfig(base_url=base_url, model=args.model, api_key=os.environ.get(args.api_key_env, ""),
                          deadline=float(args.deadline), retries=int(args.retries), json_mode=args.json_mode,
                          structured=getattr(args, "structured", "off"), max_tokens=args.max_tokens)
    return LLMClient(config, cache=cache)
