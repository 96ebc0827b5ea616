"""``dskit check-dsl FILE...``: checks stricter than Dify's import (which accepts a broken graph).

Checking is static: nothing in the file runs unless ``--run-code`` asks for it, and then only in
the sandbox-like runner with Dify's restrictions. Every bad file gets one line and exit status 1,
never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

MAX_FILE_BYTES = 10 * 1024 * 1024  # Dify's DSL_MAX_SIZE (api/services/app_dsl_service.py)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "check-dsl",
        help="check a Chatflow DSL: ids, edges, branches, references, code nodes, paths, layout",
        description="Check Chatflow DSL files more strictly than Dify's import does, including what "
                    "Dify's database, plugin daemon and sandbox refuse. Each problem names the node and "
                    "the field. Nothing in the file is executed unless --run-code is given. Exit status 1 "
                    "when any file has a problem.",
    )
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE", help="DSL YAML file(s)")
    parser.add_argument("--run-code", action="store_true",
                        help="also run code nodes whose return keys cannot be read statically, once on empty "
                             "inputs, in a separate interpreter with Dify's sandbox restrictions (no os, "
                             "subprocess, sockets or file writes)")
    parser.add_argument("--no-run", action="store_true", help=argparse.SUPPRESS)  # the old default's opt-out
    parser.add_argument("--dify-version", default=None, metavar="X.Y",
                        help="the Dify release the file must import and run on (default: the minimum "
                             "this project supports)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dskit.tooling.dslbuild.check import check_dsl
    from dskit.tooling.dslbuild.dify_versions import DEFAULT_TARGET, DifyVersionError, Target, parse_release

    target = DEFAULT_TARGET
    if args.dify_version:
        try:
            target = Target(parse_release(args.dify_version))
        except DifyVersionError as error:
            print(f"dskit check-dsl: {error}", file=sys.stderr)
            return 2
    status = 0
    for path in args.files:
        text, why = read_text(path)
        if text is None:
            print(f"{path}: {why}", file=sys.stderr)
            status = 1
            continue
        try:
            problems = check_dsl(text, run_code=args.run_code and not args.no_run, target=target)
        except Exception as error:  # noqa: BLE001 - one line for anything the checks did not foresee
            print(f"{path}: could not be checked: {type(error).__name__}: {' '.join(str(error).split())[:200]}",
                  file=sys.stderr)
            status = 1
            continue
        if problems:
            status = 1
            print(f"{path}: {len(problems)} problem(s)")
            for problem in problems:
                print(f"  {problem}")
        else:
            print(f"{path}: ok")
    return status


def read_text(path: Path) -> tuple[str | None, str]:
    """(text, "") or (None, one-line reason): a DSL file is UTF-8 (a BOM is tolerated), at most 10 MB."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return None, f"{size:,} bytes: larger than Dify's 10 MB limit for a DSL file"
        data = path.read_bytes()
    except OSError as error:
        return None, f"cannot read: {error.strerror or error}"
    try:
        return data.decode("utf-8-sig"), ""
    except UnicodeDecodeError as error:
        return None, f"not UTF-8 text (byte {error.start}: {data[error.start:error.start + 1]!r}); save it as UTF-8"
