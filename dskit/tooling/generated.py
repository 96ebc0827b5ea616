"""Every generated file in one list: what ``dskit gen`` writes and ``dskit gen --check`` compares.

Every generated file is a pure function of the repository's sources, so ``--check`` regenerates in
memory and compares byte for byte. This is the one module that imports both halves of the tooling
that produce files — :mod:`dskit.tooling.codegen` (code_nodes/) and :mod:`dskit.tooling.dslbuild`
(dsl/) — so neither has to import the other's registry. To add generated files, append a function
to :data:`GENERATORS`: it takes the repository root and returns ``{relative_path: text}``.

The figures in README*.md and docs/ are generated too, from what the benches recorded
(:mod:`dskit.tooling.docfigures`): a page whose marked figure no longer matches is stale.
Generating takes about half a minute (the DSL files run the engine's bundler and graphon's
checks), so a progress line on stderr names the step while it runs in a terminal.
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
from dskit.tooling.docfigures import differences, generate_doc_figures
from dskit.tooling.dslbuild.generate import generate_dsl

REPO_ROOT = Path(__file__).resolve().parents[2]

Generator = Callable[[Path], dict[str, str]]

GENERATORS: list[Generator] = [generate_code_nodes, generate_code_node_readmes, generate_dsl, generate_doc_figures]
STEPS = {"generate_code_nodes": "code nodes", "generate_code_node_readmes": "code node READMEs",
         "generate_dsl": "Chatflow DSL files", "generate_doc_figures": "figures in README*.md and docs/"}


def generate_all(root: Path = REPO_ROOT) -> dict[str, str]:
    """Every generated file, in memory; two generators claiming one path is an error."""
    files: dict[str, str] = {}
    from dskit.tooling.progress import counted  # noqa: PLC0415

    with counted("dskit gen", len(GENERATORS)) as bar:
        for generator in GENERATORS:
            bar.begin(STEPS.get(generator.__name__, generator.__name__))
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
    """Generated files that are missing, differ from a fresh generation, or are orphaned; then one line
    per figure in the docs that differs from its recorded source (or names none)."""
    files = generate_all(root)
    stale = []
    for relative, text in files.items():
        path = root / relative
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(relative)
    return stale + orphans(root, files) + [f"  {line}" for line in differences(root)]


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
