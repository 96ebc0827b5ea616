"""``dskit validate CATALOG.json``: every problem of a task catalog, with its JSON path."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``validate`` sub-command."""
    parser = sub.add_parser("validate", help="check a task catalog and list every problem with its JSON path")
    parser.add_argument("catalog", nargs="+", help="catalog JSON file(s)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Exit 0 when every catalog is valid, 1 otherwise."""
    from dskit.catalog import validate_catalog

    failed = False
    for name in args.catalog:
        path = Path(name)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            print(f"{name}: cannot read ({exc.strerror})", file=sys.stderr)
            failed = True
            continue
        problems = validate_catalog(text)
        if problems:
            failed = True
            print(f"{name}: {len(problems)} problem(s)")
            for problem in problems:
                print(f"  {problem}")
        else:
            print(f"{name}: ok")
    return 1 if failed else 0
