"""Where each code node's source text in a Chatflow comes from: the generated code_nodes/ script.

Every code node in our DSL (state, classic adapter, result, execute reply, history, summary, context)
is an engine node: the exact text ``dskit gen`` writes to code_nodes/<name>.py
(:func:`dskit.tooling.codegen.code_nodes.node_script`), so the DSL and the files a user copies by
hand can never differ, and the rules (texts included) live in ``dskit/`` only. A spec's settings
(``max_turns``, ...) are optional inputs: a flow may bind a variable of the same name.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from dskit.tooling.codegen.code_nodes import node_script
from dskit.tooling.codegen.nodespecs import spec_by_name


@dataclass(frozen=True)
class CodeSource:
    """A code node's text, its input variable names (in order) and its typed outputs."""

    name: str
    code: str
    inputs: tuple[str, ...]
    outputs: dict[str, str]
    optional: tuple[str, ...] = ()  # inputs a flow may leave unbound (main has a default)


# The checkout's generated code_nodes/ (the exact text node_script returns; ``dskit gen --check`` keeps
# them fresh). Bundling the engine takes 20-40 s on a slow machine, so the commands a user runs —
# ``dskit new``, ``chat --catalog``, ``demo`` — read these files instead (:func:`shipped_code_nodes`); ``dskit
# gen`` and the tests always bundle, so a stale file can never be written into dsl/ or pass a test.
SHIPPED_DIR = Path(__file__).resolve().parents[3] / "code_nodes"
_PREFER_SHIPPED = {"on": False}


@contextmanager
def shipped_code_nodes() -> Iterator[None]:
    """Within the block, code nodes for Dify 1.8+ are read from code_nodes/<name>.py when the file
    exists (see :data:`SHIPPED_DIR`); after it, every caller bundles again."""
    before = _PREFER_SHIPPED["on"]
    _PREFER_SHIPPED["on"] = True
    code_source.cache_clear()
    try:
        yield
    finally:
        _PREFER_SHIPPED["on"] = before
        code_source.cache_clear()


@lru_cache(maxsize=None)
def code_source(name: str, *, booleans: bool = True) -> CodeSource:
    """The code node for role ``name`` (state, classic_adapter, result, history, execute_reply, ...).

    ``booleans=False`` is for Dify before 1.8, whose code nodes have no boolean outputs: those are
    declared as numbers and ``main`` returns 1/0 (the code_nodes/ files are for 1.8 and later).
    """
    try:
        spec = spec_by_name(name)
    except KeyError:
        raise KeyError(f"no code node for role {name!r}") from None
    settings = tuple(s.name for s in spec.settings)
    outputs = spec.output_types()
    if not booleans:
        outputs = {key: "number" if kind == "boolean" else kind for key, kind in outputs.items()}
    shipped = SHIPPED_DIR / spec.filename
    if booleans and _PREFER_SHIPPED["on"] and shipped.is_file():
        code = shipped.read_text(encoding="utf-8")
    else:
        code = node_script(spec, booleans=booleans)
    return CodeSource(name, code, tuple(i.name for i in spec.inputs) + settings,
                      outputs, tuple(i.name for i in spec.inputs if i.optional) + settings)
