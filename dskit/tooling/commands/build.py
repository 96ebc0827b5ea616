"""``dskit build``: package the Dify plugin as ``dist/<name>-<version>.difypkg`` and copy the DSL files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``build`` sub-command."""
    parser = sub.add_parser("build", help="package the Dify plugin (.difypkg) and copy the DSL files to dist/")
    parser.add_argument("--root", default=".", help="plugin root (default: current directory)")
    parser.add_argument("--out", default=None, help="output directory (default: ROOT/dist)")
    parser.add_argument("--readme", default=None, help="file to ship as README.md (default: docs/plugin.md, the plugin page)")
    parser.add_argument("--no-dsl", action="store_true", help="do not copy dsl/*.yml")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Exit 0 with the package written, 1 with the reason it could not be."""
    from dskit.tooling.plugin_package import BuildError, build, manifest_author_name_version, package_checksum

    root = Path(args.root)
    try:
        result = build(root, Path(args.out) if args.out else None, dsl=not args.no_dsl,
                       readme=Path(args.readme) if args.readme else None)
    except (BuildError, OSError) as exc:
        print(f"build failed: {exc}", file=sys.stderr)
        return 1
    size = result.package.stat().st_size
    author, name, version = manifest_author_name_version(root)
    print(f"{result.package}  ({len(result.files)} files, {result.uncompressed_bytes:,} bytes -> {size:,} bytes zipped; "
          f"README.md from {result.readme_source})")
    print(f"identifier: {author}/{name}:{version}@{package_checksum(result.package)}  (the plugin Chatflow in "
          "the same folder names exactly this package)")
    for path in result.dsl:
        print(f"{path}")
    print("Install: Dify > Plugins > Install from local package file. Unsigned packages need "
          "FORCE_VERIFYING_SIGNATURE=false on a self-hosted Dify.")
    return 0
