"""docs/design.png is drawn from the source: every engine module is a box, every import an arrow."""

from __future__ import annotations

from pathlib import Path

import pytest

from dskit.tooling.design_figure import ENGINE_DIR, GROUPS, draw, engine_imports, layers, reduced


def test_every_engine_module_is_drawn_in_a_colour_group() -> None:
    graph = engine_imports()
    on_disk = {p.stem for p in ENGINE_DIR.glob("*.py")} - {"__init__", "__main__"}
    assert set(graph) == on_disk
    grouped = {name for _colour, members in GROUPS.values() for name in members}
    assert on_disk <= grouped, f"add {sorted(on_disk - grouped)} to GROUPS and redraw docs/design.png"


def test_a_module_sits_above_everything_it_imports() -> None:
    graph = engine_imports()
    row = {name: i for i, names in enumerate(layers(graph)) for name in names}
    assert all(row[name] > row[dep] for name, deps in graph.items() for dep in deps)
    assert "catalog" not in reduced(graph)["nodes"]  # nodes -> catalog is implied by nodes -> machine -> catalog


def test_the_picture_is_a_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "design.png"
    draw(out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
