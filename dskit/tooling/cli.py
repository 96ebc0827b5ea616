"""The ``dskit`` command: discovers sub-commands in :mod:`dskit.tooling.commands`."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

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


def main(argv: list[str] | None = None) -> int:
    """Run a sub-command and return its exit code."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args, extras = parser.parse_known_args(argv)
    if extras:
        chosen_parser(parser, argv).error(f"unrecognized arguments: {' '.join(extras)}")
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    result = args.func(args)
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
