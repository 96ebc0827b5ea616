"""``dskit check-dsl FILE...``: checks stricter than Dify's import (which accepts a broken graph)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "check-dsl",
        help="check a Chatflow DSL: ids, edges, branches, references, code nodes, paths, layout",
        description="Check Chatflow DSL files more strictly than Dify's import does. Each problem names "
                    "the node and the field. Exit status 1 when any file has a problem.",
    )
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help="DSL YAML file(s)")
    parser.add_argument("--no-run", action="store_true",
                        help="do not run code nodes whose return keys cannot be read statically")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dskit.tooling.dslbuild.check import check_dsl

    status = 0
    for path in args.files:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            print(f"{path}: cannot read: {error}", file=sys.stderr)
            status = 1
            continue
        problems = check_dsl(text, run_code=not args.no_run)
        if problems:
            status = 1
            print(f"{path}: {len(problems)} problem(s)")
            for problem in problems:
                print(f"  {problem}")
        else:
            print(f"{path}: ok")
    return status
