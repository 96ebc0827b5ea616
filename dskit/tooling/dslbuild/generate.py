"""The three Chatflow files in dsl/: the fast, classic and plugin layouts, each checked before use.

``generate_dsl(root)`` is the entry in :data:`dskit.tooling.generated.GENERATORS` (default model);
``dsl_texts(options)`` builds them for another provider/model (``dskit gen --provider ... --model``).
Each file is checked with :func:`dskit.tooling.dslbuild.check.check_dsl` before it is returned: a
generated DSL that fails our own checks is a bug, never a file to write.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from dskit.tooling.dslbuild.check import check_dsl, format_problems
from dskit.tooling.dslbuild.flows import CLASSIC_FILE, FAST_FILE, FlowOptions, build_classic, build_fast
from dskit.tooling.dslbuild.plugin_flow import PLUGIN_FILE, build_plugin


class GeneratedDslError(RuntimeError):
    """A freshly built DSL fails check-dsl."""


def dsl_texts(options: FlowOptions | None = None, *, check: bool = True) -> dict[str, str]:
    """{relative path: YAML} for the three layouts."""
    options = options or FlowOptions()
    files = {FAST_FILE: build_fast(options).to_yaml(), CLASSIC_FILE: build_classic(options).to_yaml(),
             PLUGIN_FILE: build_plugin(options).to_yaml()}
    if check:
        for path, text in files.items():
            problems = check_dsl(text, run_code=False, sandbox=False)
            if problems:
                raise GeneratedDslError(f"{path} fails check-dsl:\n{format_problems(problems)}")
    return files


def generate_dsl(root: Path) -> dict[str, str]:
    """The GENERATORS entry: the three DSL files with the default provider and model; the plugin file
    names the package ``dskit build`` makes from ``root``."""
    from dskit.tooling.plugin_package import plugin_identifier  # noqa: PLC0415

    return dsl_texts(FlowOptions(package_identifier=plugin_identifier(root)))


def plugin_dsl_text(identifier: str, options: FlowOptions | None = None) -> str:
    """The plugin Chatflow naming the package ``identifier`` (what ``dskit build`` writes to dist/)."""
    options = replace(options or FlowOptions(), package_identifier=identifier)
    return dsl_texts(options)[PLUGIN_FILE]
