"""``dskit validate CATALOG.json``: every problem of a task catalog, with its JSON path.

A file that cannot be checked at all (unreadable, not UTF-8, too large) is one line on stderr; a
catalog with problems lists each with its JSON path. Either way the exit code is 1. A valid catalog
may still get warnings (dskit.catalog.catalog_lint: example values a model would copy, slots without a
display name, tasks that act without asking); warnings do not fail the check.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# TASK_CATALOG lives in a Dify environment variable; a catalog is kilobytes, never megabytes.
MAX_CATALOG_BYTES = 10 * 1024 * 1024
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``validate`` sub-command."""
    parser = sub.add_parser("validate", help="check a task catalog and list every problem with its JSON path")
    parser.add_argument("catalog", nargs="+", help="catalog JSON file(s)")
    parser.set_defaults(func=run)


def read_catalog_text(path: Path) -> str:
    """The file's text; ValueError with a one-line reason when it cannot be a catalog file at all."""
    try:
        size = path.stat().st_size
        if size > MAX_CATALOG_BYTES:
            raise ValueError(f"{size} bytes, over the {MAX_CATALOG_BYTES} a catalog file may have")
        raw = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read ({exc.strerror or exc})") from None
    if raw.startswith(_UTF16_BOMS) or raw.startswith(b"\x00\x00\xfe\xff"):
        raise ValueError("UTF-16/32 text; save the catalog as UTF-8")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
                         "save the catalog as UTF-8") from None


def _say(text: str, stream) -> None:
    """Print even where the terminal's encoding cannot show every character of a catalog."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    print(text.encode(encoding, "backslashreplace").decode(encoding), file=stream)


def run(args: argparse.Namespace) -> int:
    """Exit 0 when every catalog is valid, 1 otherwise."""
    import json

    from dskit.catalog.catalog import validate_catalog
    from dskit.catalog.catalog_lint import catalog_warnings

    failed = False
    for name in args.catalog:
        try:
            text = read_catalog_text(Path(name))
        except ValueError as exc:
            _say(f"{name}: {exc}", sys.stderr)
            failed = True
            continue
        problems = validate_catalog(text)
        if problems:
            failed = True
            _say(f"{name}: {len(problems)} problem(s)", sys.stdout)
            for problem in problems:
                _say(f"  {problem}", sys.stdout)
        else:
            warnings = catalog_warnings(json.loads(text))
            _say(f"{name}: ok" + (f", {len(warnings)} warning(s)" if warnings else ""), sys.stdout)
            for warning in warnings:
                _say(f"  warning: {warning}", sys.stdout)
    return 1 if failed else 0
