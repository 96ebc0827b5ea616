"""A problem found in a DSL document: where (node id or section, field path) and what.

Shared by the graph checks (:mod:`.check`) and the rules real Dify enforces (:mod:`.dify_rules`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a DSL: where (node id or section, field path) and what."""

    node: str
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.node}: {self.field}" if self.field else self.node
        return f"{where}: {self.message}"


def format_problems(problems: Sequence[Problem]) -> str:
    return "\n".join(str(p) for p in problems)
