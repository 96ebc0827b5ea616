"""Left-to-right layout for a Chatflow graph, so the DSL imports as a readable picture.

Dify's editor draws nodes where ``position`` says and never re-lays them out on import; a DSL
without sensible positions opens as a pile. We place nodes in columns by their longest distance
from the start node (every edge then points right), order each column by the average row of its
predecessors (fewer crossing edges), and stack nodes in a column with a gap, using the height each
node will have in the editor. Nothing overlaps by construction; :func:`overlaps` proves it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

NODE_WIDTH = 244
COLUMN_GAP = 96
ROW_GAP = 48
ORIGIN = (80, 80)


def node_height(data: Mapping[str, Any]) -> int:
    """The height the editor gives a node of this shape (a little generous, never smaller)."""
    kind = data.get("type")
    if kind == "if-else":
        rows = sum(1 + len(c.get("conditions") or []) for c in data.get("cases") or [])
        return 60 + 30 * rows + 40
    if kind == "question-classifier":
        return 110 + 44 * len(data.get("classes") or [])
    if kind in {"llm", "parameter-extractor"}:
        return 98
    if kind == "knowledge-retrieval":
        return 92
    if kind == "variable-aggregator":
        settings = data.get("advanced_settings") or {}
        groups = settings.get("groups") or [] if settings.get("group_enabled") else []
        return 90 + 52 * max(1, len(groups))
    if kind == "assigner":
        return 60 + 28 * len(data.get("items") or [])
    if kind == "answer":
        return 106
    if kind == "http-request":
        return 110
    return 54 + 26 * min(4, len(data.get("variables") or []) // 2) if kind == "code" else 90


def _columns(node_ids: Sequence[str], edges: Sequence[tuple[str, str]], root: str) -> dict[str, int]:
    """Longest-path layer of each node from ``root`` (the graph is acyclic); orphans go last."""
    succ: dict[str, list[str]] = {n: [] for n in node_ids}
    indeg: dict[str, int] = {n: 0 for n in node_ids}
    for src, dst in edges:
        if src in succ and dst in indeg:
            succ[src].append(dst)
            indeg[dst] += 1
    column = {n: 0 for n in node_ids}
    ready = [n for n in node_ids if indeg[n] == 0]
    seen: set[str] = set()
    while ready:
        current = ready.pop(0)
        seen.add(current)
        for nxt in succ[current]:
            column[nxt] = max(column[nxt], column[current] + 1)
            indeg[nxt] -= 1
            if indeg[nxt] == 0:
                ready.append(nxt)
    last = max(column.values(), default=0) + 1
    for n in node_ids:  # nodes on a cycle or unreachable: park them in a final column
        if n not in seen:
            column[n] = last
    if root in column:
        column[root] = 0
    return column


def layout(nodes: Sequence[Mapping[str, Any]], edges: Sequence[tuple[str, str]], root: str = "start"
           ) -> dict[str, tuple[int, int, int, int]]:
    """``{node_id: (x, y, width, height)}`` for every node."""
    ids = [str(n["id"]) for n in nodes]
    heights = {str(n["id"]): node_height(n["data"]) for n in nodes}
    column = _columns(ids, edges, root)
    preds: dict[str, list[str]] = {n: [] for n in ids}
    for src, dst in edges:
        if dst in preds and src in preds:
            preds[dst].append(src)
    order: dict[str, float] = {}
    placed: dict[str, tuple[int, int, int, int]] = {}
    for col in sorted(set(column.values())):
        members = [n for n in ids if column[n] == col]
        members.sort(key=lambda n: (
            sum(order.get(p, 0.0) for p in preds[n]) / len(preds[n]) if preds[n] else 0.0,
            ids.index(n),
        ))
        y = ORIGIN[1]
        x = ORIGIN[0] + col * (NODE_WIDTH + COLUMN_GAP)
        for rank, n in enumerate(members):
            order[n] = rank + (placed_center(y, heights[n]) / 10_000)
            placed[n] = (x, y, NODE_WIDTH, heights[n])
            y += heights[n] + ROW_GAP
    return placed


def placed_center(y: int, height: int) -> float:
    return y + height / 2


def overlaps(boxes: Mapping[str, tuple[float, float, float, float]]) -> list[tuple[str, str]]:
    """Pairs of nodes whose rectangles intersect (touching edges do not count)."""
    items = sorted(boxes.items())
    found = []
    for i, (a, (ax, ay, aw, ah)) in enumerate(items):
        for b, (bx, by, bw, bh) in items[i + 1:]:
            if ax < bx + bw and bx < ax + aw and ay < by + bh and by < ay + ah:
                found.append((a, b))
    return found
