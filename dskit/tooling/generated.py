"""Every generated file in one list: what ``dskit gen`` writes and ``dskit gen --check`` compares.

Every generated file is a pure function of the repository's sources, so ``--check`` regenerates in
memory and compares byte for byte. This is the one module that imports both halves of the tooling
that produce files — :mod:`dskit.tooling.codegen` (code_nodes/) and :mod:`dskit.tooling.dslbuild`
(dsl/) — so neither has to import the other's registry. To add generated files, append a function
to :data:`GENERATORS`: it takes the repository root and returns ``{relative_path: text}``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dskit.tooling.codegen.code_nodes import (
    CODE_NODES_DIR,
    GENERATED_MARK,
    generate_code_node_readmes,
    generate_code_nodes,
)
from dskit.tooling.dslbuild.generate import generate_dsl

REPO_ROOT = Path(__file__).resolve().parents[2]

Generator = Callable[[Path], dict[str, str]]

GENERATORS: list[Generator] = [generate_code_nodes, generate_code_node_readmes, generate_dsl]


def generate_all(root: Path = REPO_ROOT) -> dict[str, str]:
    """Every generated file, in memory; two generators claiming one path is an error."""
    files: dict[str, str] = {}
    for generator in GENERATORS:
        for path, text in generator(root).items():
            if path in files:
                raise ValueError(f"{path} is generated twice")
            files[path] = text
    return dict(sorted(files.items()))


def orphans(root: Path, files: dict[str, str]) -> list[str]:
    """Generated code nodes on disk that no spec produces any more (they carry the generated mark)."""
    found = []
    for path in sorted((root / CODE_NODES_DIR).glob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative not in files and GENERATED_MARK in path.read_text(encoding="utf-8", errors="replace")[:2000]:
            found.append(relative)
    return found


def stale_files(root: Path = REPO_ROOT) -> list[str]:
    """Generated files that are missing, differ from a fresh generation, or are orphaned."""
    files = generate_all(root)
    stale = []
    for relative, text in files.items():
        path = root / relative
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(relative)
    return stale + orphans(root, files)


def write_all(root: Path = REPO_ROOT) -> list[str]:
    """Write every generated file that changed, remove orphans; return the paths touched."""
    files = generate_all(root)
    touched = []
    for relative, text in files.items():
        path = root / relative
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
        touched.append(relative)
    for relative in orphans(root, files):
        (root / relative).unlink()
        touched.append(relative)
    return touched
