"""``dskit bench <name>``: measurements of the engine (context cost, token estimates, ...).

The sub-commands are the modules of :mod:`dskit.tooling.bench`; each adds its own parser.
"""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``bench`` and one sub-command per benchmark module."""
    from dskit.tooling.bench import bench_modules

    parser = subparsers.add_parser(
        "bench",
        help="measure the engine (context cost, token estimates, ...)",
        description="Benchmarks of the engine. Each sub-command prints a table, or JSON with --json.",
    )
    sub = parser.add_subparsers(dest="bench", metavar="BENCH")
    for module in bench_modules():
        module.register(sub)
    parser.set_defaults(func=lambda args: (parser.print_help(), 0)[1])
