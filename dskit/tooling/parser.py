"""The command line's shared parts: the parser of every command, and running a command in this process.

``dskit.tooling.cli`` is the entry point (``dskit``, ``python -m dskit``) and nothing else. A module that
needs the whole command line — docfigures for README's ``dskit --help`` block, ``bench cassettes`` running
``dskit eval``/``dskit replay`` in this process — imports it from here, never from the entry point:
no module under dskit/tooling imports ``dskit.tooling.cli`` (tests/test_cli_errors.py holds it so), so the
entry point stays the top of the import graph.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil

from dskit import __version__
from dskit.tooling import commands as _commands_pkg


def build_parser() -> argparse.ArgumentParser:
    """Build the parser; each command module adds its own sub-parser via ``register``."""
    parser = argparse.ArgumentParser(
        prog="dskit",
        description="Dialogue State Kit: task-stack dialogue state for Dify Chatflows.",
    )
    parser.add_argument("--version", action="version", version=f"dskit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(_commands_pkg.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{_commands_pkg.__name__}.{info.name}")
        module.register(sub)
    return parser


def chosen_parser(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.ArgumentParser:
    """The innermost sub-command parser ``argv`` selects (``dskit bench flow`` -> bench flow's).

    argparse reports an unknown option with the top-level usage, which lists commands instead of the
    options the user was reaching for; errors go through the parser the user chose instead."""
    current = parser
    for token in argv:
        actions = [a for a in current._actions if isinstance(a, argparse._SubParsersAction)]
        if actions and token in actions[0].choices:
            current = actions[0].choices[token]
    return current


def run_command(argv: list[str]) -> int:
    """Run the command ``argv`` names (``["eval", "--json", ...]``) in this process; its exit code."""
    parser = build_parser()
    argv = list(argv)
    args, extras = parser.parse_known_args(argv)
    if extras:
        chosen_parser(parser, argv).error(f"unrecognized arguments: {' '.join(extras)}")
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    result = args.func(args)
    return int(result or 0)
