"""The ``dskit`` command: the entry point, and only that.

The parser and the running of a command live in :mod:`dskit.tooling.parser`, which the modules that need
the whole command line import; nothing under dskit/tooling imports this module.
"""

from __future__ import annotations

import sys

from dskit.tooling.parser import build_parser, chosen_parser, run_command

__all__ = ["build_parser", "chosen_parser", "main"]


def main(argv: list[str] | None = None) -> int:
    """Run a sub-command and return its exit code."""
    return run_command(sys.argv[1:] if argv is None else list(argv))


if __name__ == "__main__":
    sys.exit(main())
