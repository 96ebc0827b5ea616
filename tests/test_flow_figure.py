"""docs/flow.png (English) and docs/flow_zh.png (Chinese): the fast Chatflow drawn by `dskit render --rows`,
readable at a page's width, and redrawn whenever the Chatflow changes.

Each figure carries the digest of what it shows (dskit.tooling.dslbuild.render.figure_digest) in a PNG
text chunk; comparing it with the digest of the current DSL tells a stale figure without comparing
pixels (which differ between matplotlib and font versions).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from dskit.tooling.cli import main
from dskit.tooling.dslbuild.render import (_columns, _stack, figure_digest, node_titles, png_digest, render_rows,
                                          wrap_title)

ROOT = Path(__file__).resolve().parents[1]
FAST = ROOT / "dsl" / "dialogue_chatflow.yml"
FIGURES = {"en": ROOT / "docs" / "flow.png", "zh": ROOT / "docs" / "flow_zh.png"}


@pytest.fixture(scope="module")
def doc() -> dict:
    return yaml.safe_load(FAST.read_text(encoding="utf-8"))


@pytest.mark.parametrize("lang", sorted(FIGURES))
def test_the_docs_figure_shows_the_current_chatflow(doc: dict, lang: str) -> None:
    figure = FIGURES[lang]
    assert png_digest(figure) == figure_digest(doc, rows=4, lang=lang), (
        f"{figure.name} is stale: dskit render dsl/dialogue_chatflow.yml --rows 4 --lang {lang} --out "
        f"docs/{figure.name}" + (" (with a CJK font installed, e.g. fonts-wqy-microhei)" if lang == "zh" else ""))


@pytest.mark.parametrize("lang", sorted(FIGURES))
def test_the_docs_figure_fits_a_page(lang: str) -> None:
    from PIL import Image

    with Image.open(FIGURES[lang]) as image:
        width, height = image.size
    assert 1000 <= width <= 1600 and height <= 2 * width  # the 5557x629 strip is gone


def test_the_readmes_show_the_figure_in_their_own_language() -> None:
    assert "](docs/flow.png)" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](docs/flow_zh.png)" in (ROOT / "README_zh.md").read_text(encoding="utf-8")


def test_english_titles_are_the_english_chatflows(doc: dict) -> None:
    from dskit.tooling.dslbuild.localize import EN_TITLES

    titles = node_titles(doc, "en")
    assert titles["faq_search"] == "Knowledge retrieval" and set(titles) <= set(EN_TITLES)
    assert node_titles(doc, "zh")["faq_search"] == "知识库检索"


def test_titles_wrap_to_their_box_without_orphans() -> None:
    def fits(text: str) -> bool:
        return len(text) <= 13

    assert wrap_title("This turn's understanding prompt", fits) == ["This turn's", "understanding", "prompt"]
    assert wrap_title("是否已有本轮提示词是否已有本轮", lambda t: len(t) <= 12) == ["是否已有本轮提示", "词是否已有本轮"]
    assert all(fits(line) for line in wrap_title("Supercalifragilisticexpialidocious", fits))


def test_every_node_is_placed_once_in_its_row_and_boxes_never_overlap(doc: dict) -> None:
    placed = _columns(doc, 4)
    _stack(placed, node_titles(doc, "en"), 20.0, lambda text, width: len(text) * 9 <= width)
    nodes = {n["id"] for n in doc["workflow"]["graph"]["nodes"] if n.get("type") != "custom-note"}
    assert set(placed) == nodes and {p.row for p in placed.values()} == {0, 1, 2, 3}
    boxes = list(placed.values())
    for i, a in enumerate(boxes):
        assert all(len(line) * 9 <= a.w - 24 for line in a.lines)
        for b in boxes[i + 1:]:
            assert a.x + a.w <= b.x or b.x + b.w <= a.x or a.y + a.h <= b.y or b.y + b.h <= a.y


def test_a_rows_figure_is_as_wide_as_asked_and_carries_its_digest(doc: dict, tmp_path: Path) -> None:
    from PIL import Image

    out = render_rows(doc, tmp_path / "flow.png", rows=3, lang="en", width_px=1200, title="t")
    with Image.open(out) as image:
        assert image.size[0] == 1200
    assert png_digest(out) == figure_digest(doc, rows=3, lang="en") != figure_digest(doc, rows=4, lang="en")


def test_the_cli_takes_lang_only_with_rows(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    assert main(["render", str(FAST), "--lang", "en", "--out", str(tmp_path / "x.png")]) == 2
    assert "--lang goes with --rows" in capsys.readouterr().err
