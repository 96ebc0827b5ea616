"""The DSL generator registered in :data:`dskit.tooling.gen.GENERATORS`.

``generate_dsl(root)`` returns both Chatflows with the default model; ``dsl_generator(options)``
returns a generator for another provider/model (what ``dskit gen --provider ... --model ...`` uses).
Each file is checked with :func:`dskit.tooling.dsl.check.check_dsl` before it is returned: a
generated DSL that fails our own checks is a bug, never a file to write.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dskit.tooling.dsl.check import check_dsl, format_problems
from dskit.tooling.dsl.flows import CLASSIC_FILE, FAST_FILE, FlowOptions, build_classic, build_fast


class GeneratedDslError(RuntimeError):
    """A freshly built DSL fails check-dsl."""


def dsl_texts(options: FlowOptions | None = None, *, check: bool = True) -> dict[str, str]:
    """{relative path: YAML} for both layouts."""
    options = options or FlowOptions()
    files = {FAST_FILE: build_fast(options).to_yaml(), CLASSIC_FILE: build_classic(options).to_yaml()}
    if check:
        for path, text in files.items():
            problems = check_dsl(text, run_code=False, sandbox=False)
            if problems:
                raise GeneratedDslError(f"{path} fails check-dsl:\n{format_problems(problems)}")
    return files


def generate_dsl(root: Path, options: FlowOptions | None = None) -> dict[str, str]:
    """The GENERATORS entry: both DSL files (default provider and model unless ``options`` say)."""
    _ = root
    return dsl_texts(options)


def dsl_generator(options: FlowOptions) -> Callable[[Path], dict[str, str]]:
    """A GENERATORS-compatible function for the given provider/model/catalog."""

    def generate(root: Path) -> dict[str, str]:
        _ = root
        return dsl_texts(options)

    return generate
