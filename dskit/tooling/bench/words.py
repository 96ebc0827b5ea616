"""How big the engine's words code is: lines, functions, word lists, words and regular expressions.

The rules that read a user's words (admission, the readers, the cue words, matching, offers, the engine's
own readings, noise) are where special cases pile up: a rule written for the sentences at hand adds a
word list or a pattern, not a form. ``dskit bench words`` counts them, read from the source (never
imported), for this checkout and for any git revision, so a change can say what it added and removed:

- **lines** and **functions** (``def`` at any depth);
- **word lists**: module-level names bound to a collection that holds two or more string constants (a
  tuple, list, set, frozenset or dict, also built from others: ``A + ("x", "y")``), and **words**, the
  strings in them (a dict counts its string keys);
- **regular expressions**: ``re.compile`` calls and patterns passed to ``re.search``/``match``/``fullmatch``/
  ``finditer``/``findall``/``sub``/``split``.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
# The words code as issue 38 measured it, and the readers and rule modules that took its place.
WORDS_MODULES = ("admission", "grounding", "cues", "matching", "offers", "backup", "noise", "wordfind", "numerals",
                 "counts", "clock", "negation", "slot_shapes")
_RE_CALLS = {"compile", "search", "match", "fullmatch", "finditer", "findall", "sub", "split"}


@dataclass
class WordsSize:
    """The size of some words code."""

    modules: int = 0
    lines: int = 0
    functions: int = 0
    word_lists: int = 0
    words: int = 0
    regexes: int = 0

    def add(self, other: WordsSize) -> None:
        for name in ("modules", "lines", "functions", "word_lists", "words", "regexes"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def _strings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Dict):
        return [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    elts = getattr(node, "elts", None)
    return [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)] if elts else []


def _collected(node: ast.AST) -> list[str]:
    strings: list[str] = []
    for inner in ast.walk(node):
        if isinstance(inner, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
            strings += _strings(inner)
    return strings


def _compiles(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "compile"
               for n in ast.walk(node))


def measure_source(source: str) -> WordsSize:
    """The size of one module's source."""
    tree = ast.parse(source)
    size = WordsSize(modules=1, lines=len(source.splitlines()))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            size.functions += 1
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re" and node.func.attr in _RE_CALLS:
            size.regexes += 1
    for statement in tree.body:
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None \
                and not _compiles(statement.value):
            strings = _collected(statement.value)
            if len(strings) >= 2:
                size.word_lists += 1
                size.words += len(strings)
    return size


def _source(path: str, revision: str | None) -> str | None:
    if revision is None:
        file = ROOT / path
        return file.read_text(encoding="utf-8") if file.is_file() else None
    done = subprocess.run(["git", "-C", str(ROOT), "show", f"{revision}:{path}"], capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def engine_path(module: str, revision: str | None = None) -> str | None:
    """Where an engine module lives (flat, or in one of the engine's folders) in the tree or a revision."""
    if revision is None:
        found = sorted((ROOT / "dskit").rglob(f"{module}.py"))
        found = [p for p in found if "tooling" not in p.parts]
        return str(found[0].relative_to(ROOT)) if found else None
    done = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "-r", "--name-only", revision, "dskit"],
                          capture_output=True, text=True)
    paths = [p for p in done.stdout.splitlines() if p.endswith(f"/{module}.py") and "/tooling/" not in p]
    return paths[0] if paths else None


def measure(revision: str | None = None, modules: tuple = WORDS_MODULES) -> dict[str, WordsSize]:
    """Each words module's size (absent modules left out), in the working tree or at ``revision``."""
    sizes = {}
    for module in modules:
        path = engine_path(module, revision)
        source = _source(path, revision) if path else None
        if source is not None:
            sizes[module] = measure_source(source)
    return sizes


def total(sizes: dict[str, WordsSize]) -> WordsSize:
    whole = WordsSize()
    for size in sizes.values():
        whole.add(size)
    return whole


def run(args: argparse.Namespace) -> int:
    from rich.console import Console  # noqa: PLC0415 - tooling imports its libraries lazily
    from rich.table import Table  # noqa: PLC0415

    before, after = measure(args.before), measure()
    if args.json:
        print(json.dumps({"before": {m: vars(v) for m, v in before.items()},
                          "after": {m: vars(v) for m, v in after.items()}}, indent=1))
        return 0
    table = Table(title=f"words code: {args.before} -> this tree")
    for column in ("module", "lines", "functions", "word lists", "words", "regexes"):
        table.add_column(column, justify="right" if column != "module" else "left")
    fields = ("lines", "functions", "word_lists", "words", "regexes")
    for module in WORDS_MODULES:
        old, new = before.get(module), after.get(module)
        table.add_row(module, *[f"{getattr(old, f) if old else '-'} -> {getattr(new, f) if new else '-'}" for f in fields])
    whole_before, whole_after = total(before), total(after)
    table.add_row("total", *[f"{getattr(whole_before, f)} -> {getattr(whole_after, f)}" for f in fields])
    Console().print(table)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "words", help="how big the words code is (lines, functions, word lists, words, regexes), before and after",
        description="Counts the engine's words code (admission, the readers, the cue words, matching, offers, the "
                    "engine's own readings, noise) read from the source, for this tree and a git revision.")
    parser.add_argument("--before", default="73ec4ea", help="the revision to compare with (default: before issue 38)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)


__all__ = ["WordsSize", "measure", "measure_source", "total", "WORDS_MODULES"]
