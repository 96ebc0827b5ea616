"""``dskit gen``: write the generated files (code_nodes/*.py and their READMEs); ``--check`` for CI."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "gen",
        help="write generated files (code_nodes/*.py, READMEs); --check fails when any is stale",
        description="Generate code_nodes/*.py from the engine. With --check, write nothing and exit 1 "
                    "listing every generated file that is missing or out of date.",
    )
    parser.add_argument("--check", action="store_true", help="only check; exit 1 when a file is stale")
    parser.add_argument("--root", type=Path, default=None, help="repository root (default: this checkout)")
    parser.add_argument("--provider", help="model provider for every LLM node, ORG/PLUGIN/PROVIDER "
                                           "(e.g. langgenius/tongyi/tongyi); sets the DSL's dependencies too")
    parser.add_argument("--model", help="model name for every LLM node (e.g. qwen-plus)")
    parser.add_argument("--out", type=Path, default=None,
                        help="with --provider/--model: folder for the DSL files (default: dsl/)")
    parser.set_defaults(func=run)


def _custom_dsl(args: argparse.Namespace, root: Path) -> int:
    """Write only the Chatflow DSL files (all three layouts), for the provider and model the user named."""
    from dskit.tooling.dslbuild.flows import FlowOptions
    from dskit.tooling.dslbuild.generate import dsl_texts

    defaults = FlowOptions()
    provider = args.provider or defaults.provider
    if provider.count("/") != 2 or not all(provider.split("/")):
        print(f"dskit gen: --provider must look like ORG/PLUGIN/PROVIDER, got {provider!r}", file=sys.stderr)
        return 2
    options = FlowOptions(provider=provider, model=args.model or defaults.model)
    out = (args.out or root / "dsl").resolve()
    files = dsl_texts(options)
    for relative, text in files.items():
        path = out / Path(relative).name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {path} ({options.provider}, {options.model})")
    return 0


def run(args: argparse.Namespace) -> int:
    from dskit.tooling.codegen.bundle import BundleError
    from dskit.tooling.generated import REPO_ROOT, stale_files, write_all

    root = (args.root or REPO_ROOT).resolve()
    if (args.provider or args.model) and not args.check:
        return _custom_dsl(args, root)
    try:
        if args.check:
            stale = stale_files(root)
            if stale:
                print("stale generated files (run `dskit gen`):", file=sys.stderr)
                for path in stale:
                    print(f"  {path}", file=sys.stderr)
                return 1
            print("generated files are up to date")
            return 0
        touched = write_all(root)
    except BundleError as error:
        print(f"dskit gen: cannot bundle the engine: {error}", file=sys.stderr)
        return 2
    for path in touched:
        print(f"wrote {path}")
    if not touched:
        print("generated files are up to date")
    return 0
