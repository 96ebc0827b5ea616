"""docs/design.png: the engine's modules (read from the source) and one turn's data flow.

``python -m dskit.tooling.design_figure docs/design.png`` redraws it. The module panel is computed:
every engine module (``dskit/<part>/*.py``) is a box coloured by its part, every relative import an arrow, rows by import depth (a module
sits above everything it imports), so the picture cannot show a module or an import that is not
there. The turn panel is the sequence of docs/design.md's "One turn" table.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ENGINE_DIR = Path(__file__).resolve().parents[1]
# Colour by the part a module belongs to: its folder (dskit/<part>/, each opening with what it holds and
# what it may import). A module outside a part folder has no colour (tests/test_design_figure.py fails).
PARTS = {
    "base": ("#eeeeee", "base"),
    "catalog": ("#dbe9f6", "catalog"),
    "state": ("#fde9c9", "state"),
    "rules": ("#f4dcdc", "rules (readers, admission)"),
    "turn": ("#cfe3d8", "turn (commands, effects, reducer, decision)"),
    "context": ("#e2f0d9", "context (history, summary, prompt, memory)"),
    "surfaces": ("#eadcf4", "surfaces (code nodes)"),
}
TURN = [
    ("user message + sys_context_str, history, summary, catalog", "Dify variables / tool parameters"),
    ("the model's view: catalog, state view, memory, summary, recent turns, message", "prompts.understanding_prompt"),
    ("LLM -> {rewritten_query, commands}", "one call; parsed by understanding"),
    ("typed commands -> proposed effects -> admission's named rules -> one reducer; decide", "machine.step"),
    ("next_action, question, execute_payload, ...", "views.workflow_outputs"),
    ("ask / confirm / execute -> task API -> record_result / faq / chitchat / handoff", "the Chatflow or your workflow"),
    ("append the turn; what leaves the window -> summary", "history.history_update"),
    ("write back sys_context_str, history, summary", "variable assigner"),
]


def engine_parts(engine_dir: Path = ENGINE_DIR) -> dict[str, str]:
    """{module: its part folder} for every engine module (the tooling and package files left out); a
    module directly in dskit/ belongs to no part ("")."""
    parts: dict[str, str] = {}
    for path in sorted(engine_dir.rglob("*.py")):
        rel = path.relative_to(engine_dir).parts
        if rel[0] != "tooling" and path.stem not in ("__init__", "__main__"):
            parts[path.stem] = rel[0] if len(rel) > 1 else ""
    return parts


def engine_imports(engine_dir: Path = ENGINE_DIR) -> dict[str, set[str]]:
    """{module: the engine modules it imports} (``from .cues``, ``from ..base.text``: the module's name)."""
    graph: dict[str, set[str]] = {}
    for name, part in engine_parts(engine_dir).items():
        path = engine_dir / part / f"{name}.py" if part else engine_dir / f"{name}.py"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        graph[name] = {node.module.rpartition(".")[2] for node in tree.body
                       if isinstance(node, ast.ImportFrom) and node.level and node.module}
    return graph


def layers(graph: dict[str, set[str]]) -> list[list[str]]:
    """Rows of modules: row 0 imports no engine module; each module sits one row above its deepest import."""
    depth: dict[str, int] = {}

    def of(name: str) -> int:
        if name not in depth:
            depth[name] = 0  # a cycle (the bundler refuses them) would stop here
            depth[name] = 1 + max((of(dep) for dep in graph.get(name, ()) if dep in graph), default=-1)
        return depth[name]

    rows: list[list[str]] = [[] for _ in range(max((of(n) for n in graph), default=0) + 1)]
    for name in sorted(graph):
        rows[of(name)].append(name)
    return rows


def reduced(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The imports not implied by a longer chain of imports (a -> c dropped when a -> b -> ... -> c)."""
    def reach(name: str, seen: set[str]) -> set[str]:
        for dep in graph.get(name, ()):
            if dep in graph and dep not in seen:
                seen.add(dep)
                reach(dep, seen)
        return seen

    return {name: {dep for dep in deps if dep in graph and not any(dep in reach(other, set()) for other in deps - {dep}
                                                                   if other in graph)}
            for name, deps in graph.items()}


def _colour(part: str) -> str:
    return PARTS[part][0] if part in PARTS else "#ffffff"


def draw(out: Path, engine_dir: Path = ENGINE_DIR) -> None:
    import matplotlib  # noqa: PLC0415 - tooling imports its libraries lazily

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415
    from matplotlib.patches import FancyBboxPatch, Patch  # noqa: PLC0415

    graph = engine_imports(engine_dir)
    part_of = engine_parts(engine_dir)
    rows = layers(graph)
    fig, (turn_ax, mod_ax) = plt.subplots(1, 2, figsize=(17, 9.5), gridspec_kw={"width_ratios": [1, 1.35]})
    for ax in (turn_ax, mod_ax):
        ax.set_axis_off()

    turn_ax.set_title("One turn", fontsize=14, loc="left")
    turn_ax.set_xlim(0, 1)
    turn_ax.set_ylim(0, len(TURN))
    for i, (what, where) in enumerate(TURN):
        y = len(TURN) - i - 0.5
        turn_ax.add_patch(FancyBboxPatch((0.02, y - 0.33), 0.96, 0.66, boxstyle="round,pad=0.01",
                                         facecolor="#f7f7f7", edgecolor="#888888"))
        turn_ax.text(0.05, y + 0.1, f"{i + 1}. {what}", fontsize=9.5, va="center")
        turn_ax.text(0.05, y - 0.17, where, fontsize=8.5, va="center", color="#1f4e79", family="monospace")
        if i:
            turn_ax.annotate("", xy=(0.5, y + 0.34), xytext=(0.5, y + 0.66),
                             arrowprops={"arrowstyle": "->", "color": "#555555"})

    mod_ax.set_title("Engine modules (dskit/<part>/*.py, coloured by part): a module sits above what it imports\n"
                     "(arrows: imports, those implied by a longer chain left out)", fontsize=13, loc="left")
    width = max(len(row) for row in rows)
    mod_ax.set_xlim(-0.6, width - 0.4)
    mod_ax.set_ylim(-0.7, len(rows) - 0.3)
    where: dict[str, tuple[float, float]] = {}
    for level, row in enumerate(rows):
        offset = (width - len(row)) / 2
        for i, name in enumerate(row):
            where[name] = (offset + i, level)
    for name, deps in reduced(graph).items():
        x, y = where[name]
        for dep in sorted(deps & set(where)):
            dx, dy = where[dep]
            mod_ax.annotate("", xy=(dx, dy + 0.2), xytext=(x, y - 0.2),
                            arrowprops={"arrowstyle": "->", "color": "#9a9a9a", "lw": 0.7,
                                        "shrinkA": 2, "shrinkB": 2})
    for name, (x, y) in where.items():
        mod_ax.add_patch(FancyBboxPatch((x - 0.45, y - 0.2), 0.9, 0.4, boxstyle="round,pad=0.02",
                                        facecolor=_colour(part_of[name]), edgecolor="#555555", zorder=3))
        mod_ax.text(x, y, name, ha="center", va="center", fontsize=9 if len(name) > 10 else 9.5, zorder=4)
    mod_ax.legend(handles=[Patch(facecolor=colour, edgecolor="#555555", label=label)
                           for colour, label in PARTS.values()],
                  loc="lower center", bbox_to_anchor=(0.5, -0.1), ncol=4, fontsize=9, frameon=False)
    fig.tight_layout()
    fig.savefig(out, dpi=110, metadata={"Software": None})
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else ENGINE_DIR.parent / "docs" / "design.png"
    draw(out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
