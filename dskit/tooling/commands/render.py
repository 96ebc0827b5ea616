"""``dskit render FILE [--out PNG|SVG]``: a picture of a Chatflow at the DSL's own node positions."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "render",
        help="draw a Chatflow DSL at its node positions (overlaps show in red)",
        description="Draw the nodes of a Chatflow DSL where the Dify editor will put them, with their "
                    "edges and branch labels. The format follows --out's suffix (.png or .svg).",
    )
    parser.add_argument("file", type=Path, metavar="FILE", help="DSL YAML file")
    parser.add_argument("--out", type=Path, default=None, help="output .png or .svg (default: FILE.png)")
    parser.add_argument("--rows", type=int, default=0, metavar="N",
                        help="cut the editor's columns into N rows, each title wrapped to its box, so a long "
                             "Chatflow is readable at a page's width (the docs' figures use 4)")
    parser.add_argument("--lang", choices=("en", "zh"), default="",
                        help="with --rows: node titles in English (those of a Chatflow written for an English "
                             "catalog) or as the file has them (zh)")
    parser.set_defaults(func=run)


def not_a_dsl(path: Path) -> str:
    """Why ``path`` is not a Chatflow DSL, in words a user can act on; "" when it looks like one.

    Read before drawing so that a task catalog (the other JSON/YAML file users have at hand) is named
    as such instead of failing deep inside the renderer with a bare ``'workflow'``."""
    import json  # noqa: PLC0415

    import yaml  # noqa: PLC0415

    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return ""  # the renderer reports unreadable files itself
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return f"{path} is not a Chatflow DSL: it does not read as YAML ({first})"
    if isinstance(data, dict) and isinstance(data.get("workflow"), dict):
        return ""
    hint = "render draws a Chatflow DSL file (such as dsl/dialogue_chatflow.yml)"
    if isinstance(data, dict) and "tasks" in data and "version" in data:
        return (f"{path} is a task catalog, not a Chatflow DSL: {hint}; to build the Chatflows for this "
                f"catalog run `dskit new {path}`, then render one of the files it writes")
    return f"{path} is not a Chatflow DSL (it has no `workflow` section): {hint}"


def run(args: argparse.Namespace) -> int:
    from dskit.tooling.dslbuild.render import render_file

    if args.out is not None and args.out.suffix.lower() not in {".png", ".svg"}:
        print("dskit render: --out must end in .png or .svg", file=sys.stderr)
        return 2
    if args.rows < 0 or (args.lang and not args.rows):
        print("dskit render: --rows must be 1 or more, and --lang goes with --rows", file=sys.stderr)
        return 2
    problem = not_a_dsl(args.file)
    if problem:
        print(f"dskit render: {problem}", file=sys.stderr)
        return 2
    try:
        out = render_file(args.file, args.out, rows=args.rows, lang=args.lang)
    except (OSError, KeyError, TypeError, ValueError) as error:
        print(f"dskit render: cannot draw {args.file}: {error}", file=sys.stderr)
        return 1
    print(f"wrote {out}")
    return 0
