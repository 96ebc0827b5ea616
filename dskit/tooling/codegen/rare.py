"""The functions each code node compiles only when first called: ``rare.json``, read by ``dskit gen``.

The list is measured, not guessed: ``dskit bench rare --write`` runs the ordinary turns of the scenario
suites, the evaluation suites and the benches through every generated code node, records the
functions and methods each node's turns call, and lists what the bundler can defer (:mod:`.deferred`)
and fewer than half of the node's ordinary turns call, with that share. ``tests/test_deferred.py``
runs the same turns again and fails when a listed function is now called by more (the list is out of
date: run ``dskit bench rare --write`` and ``dskit gen``). A listed function a turn does call still
works: it is compiled on that call.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

RARE_FILE = Path(__file__).with_name("rare.json")


@cache
def _read(path: str) -> dict:
    file = Path(path)
    return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else {"nodes": {}}


def rare_units(node: str, path: Path = RARE_FILE) -> tuple[str, ...]:
    """``module:function`` / ``module:Class.method`` names the node ``node`` compiles on first call."""
    return tuple(_read(str(path)).get("nodes", {}).get(node, ()))


def write_rare(record: dict, path: Path = RARE_FILE) -> None:
    path.write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    _read.cache_clear()
