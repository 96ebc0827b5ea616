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
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dskit.tooling.dslbuild.render import render_file

    if args.out is not None and args.out.suffix.lower() not in {".png", ".svg"}:
        print("dskit render: --out must end in .png or .svg", file=sys.stderr)
        return 2
    try:
        out = render_file(args.file, args.out)
    except (OSError, KeyError, TypeError, ValueError) as error:
        print(f"dskit render: cannot draw {args.file}: {error}", file=sys.stderr)
        return 1
    print(f"wrote {out}")
    return 0
