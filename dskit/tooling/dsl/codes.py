"""Where each code node's source text comes from.

Engine nodes (state, classic adapter, result, history, summary) are the generated code nodes: the
exact text ``dskit gen`` writes to code_nodes/<name>.py (:func:`dskit.tooling.gen.node_script`), so
the DSL and the files a user copies by hand can never differ. A spec's settings (``max_turns``, ...)
are optional inputs: a flow may bind a variable of the same name. Every role is an engine node: the
rules (texts included) live in ``dskit/`` only.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class CodeSource:
    """A code node's text, its input variable names (in order) and its typed outputs."""

    name: str
    code: str
    inputs: tuple[str, ...]
    outputs: dict[str, str]
    engine: bool  # True: a generated engine node; False: a hand-written stand-in
    optional: tuple[str, ...] = ()  # inputs a flow may leave unbound (main has a default)


def _spec(name: str):  # noqa: ANN202 - NodeSpec, imported lazily
    try:
        from dskit.tooling.nodespecs import spec_by_name  # noqa: PLC0415
    except ImportError:
        return None
    try:
        return spec_by_name(name)
    except KeyError:
        return None


def _generated_text(spec) -> str:  # noqa: ANN001 - NodeSpec
    """Exactly the text ``dskit gen`` writes to code_nodes/<name>.py."""
    from dskit.tooling.gen import node_script  # noqa: PLC0415

    return node_script(spec)


@lru_cache(maxsize=None)
def code_source(name: str) -> CodeSource:
    """The code node for role ``name`` (state, classic_adapter, result, history, execute_reply)."""
    spec = _spec(name)
    if spec is not None:
        settings = tuple(s.name for s in getattr(spec, "settings", ()))
        return CodeSource(name, _generated_text(spec), tuple(i.name for i in spec.inputs) + settings,
                          spec.output_types(), True,
                          tuple(i.name for i in spec.inputs if i.optional) + settings)
    raise KeyError(f"no code node for role {name!r}")
