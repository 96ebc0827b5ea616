"""docs/design.png is drawn from the source: every engine module is a box, every import an arrow."""

from __future__ import annotations

from pathlib import Path

import pytest

from dskit.tooling.design_figure import ENGINE_DIR, PARTS, draw, engine_imports, engine_parts, layers, reduced


def test_every_engine_module_is_drawn_in_its_part_s_colour() -> None:
    graph = engine_imports()
    on_disk = {p.stem for p in ENGINE_DIR.rglob("*.py") if "tooling" not in p.parts} - {"__init__", "__main__"}
    assert set(graph) == on_disk
    parts = engine_parts()
    assert {name for name, part in parts.items() if part not in PARTS} == set(), \
        "every engine module sits in a part folder that PARTS colours; add the part and redraw docs/design.png"


def test_a_module_outside_a_part_is_found(tmp_path: Path) -> None:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "cues.py").write_text("", encoding="utf-8")
    (tmp_path / "loose.py").write_text("from .rules.cues import x\n", encoding="utf-8")
    assert engine_parts(tmp_path) == {"cues": "rules", "loose": ""}
    assert engine_imports(tmp_path)["loose"] == {"cues"}


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
