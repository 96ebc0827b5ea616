"""Benchmarks behind ``dskit bench``: one module per sub-command, each defining ``register(subparsers)``.

``dskit bench`` discovers the modules here (as ``dskit`` discovers its commands), so a new benchmark
such as ``bench nodes`` or ``bench flow`` is one new module and touches no shared file.
Modules import third-party libraries (matplotlib, tokenizers) lazily, inside functions.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def bench_modules() -> list[ModuleType]:
    """Every benchmark module in this package that defines ``register``, sorted by name."""
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        if callable(getattr(module, "register", None)):
            found.append(module)
    return found
