"""The ``dskit`` entry point sits at the top of the tooling's imports (issue 38: CLI modules imported back up
into cli, bench/cassettes and docfigures).

``dskit.tooling.cli`` is the entry point only; the parser and running a command in-process live in
``dskit.tooling.parser``, which whoever needs the whole command line imports. A module under dskit/
importing the entry point (at its top or inside a function) fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENTRY = "dskit.tooling.cli"
# What may import the entry point: itself, and ``python -m dskit``.
ENTRY_POINTS = {ROOT / "dskit" / "tooling" / "cli.py", ROOT / "dskit" / "__main__.py"}


def imported_modules(path: Path, root: Path = ROOT) -> set[str]:
    """Every module ``path`` (a file under ``root``) imports, anywhere in it, relative imports resolved
    (``from .. import cli`` counts as importing the package's ``cli``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = list(path.relative_to(root).parts[:-1])
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1]) if node.level else ""
            module = ".".join(part for part in (base, node.module or "") if part)
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def upward_imports(root: Path = ROOT / "dskit") -> list[str]:
    return [f"{path.relative_to(ROOT)} imports {ENTRY}" for path in sorted(root.rglob("*.py"))
            if path not in ENTRY_POINTS and ENTRY in imported_modules(path)]


def test_no_module_imports_the_entry_point() -> None:
    assert upward_imports() == []


def test_the_check_finds_an_upward_import_in_any_spelling(tmp_path: Path) -> None:
    package = tmp_path / "dskit" / "tooling" / "bench"
    package.mkdir(parents=True)
    for spelling in ("from dskit.tooling.cli import main", "import dskit.tooling.cli",
                     "def f():\n    from ..cli import main", "from .. import cli"):
        (package / "x.py").write_text(spelling + "\n", encoding="utf-8")
        assert ENTRY in imported_modules(package / "x.py", tmp_path), spelling
