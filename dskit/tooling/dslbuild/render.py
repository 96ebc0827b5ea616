"""Draw a Chatflow DSL at its own node positions, so what the editor will show (overlaps included) is
visible without Dify.

Each node is drawn as the rectangle the DSL declares (``position``, ``width``, ``height``), coloured
by type, with its title; edges run from the right edge of the source to the left edge of the target,
labelled with their branch handle when it is not the ordinary one. Overlapping nodes are outlined in
red. Chinese titles need a CJK font (e.g. Debian's fonts-wqy-microhei); without one the node ids are
shown instead, so the picture never fills with empty boxes.

A Chatflow is a long row of columns (the fast one is about 7,500 editor units wide): drawn whole it is
a strip no page can show at a readable size. :func:`render_rows` keeps the editor's columns and their
order but cuts them into rows, each node drawn with its title wrapped to its box at a size a page can
show, and an edge that goes on in a later row ends at a lettered connector that the later row starts
from. It also writes the titles in a chosen language (``en``: the titles a Chatflow written for an
English catalog has, dskit.tooling.dslbuild.localize.EN_TITLES). The documentation's figures are drawn
so (``docs/flow.png`` in English, ``docs/flow_zh.png`` in Chinese)::

    dskit render dsl/dialogue_chatflow.yml --rows 4 --lang en --out docs/flow.png
    dskit render dsl/dialogue_chatflow.yml --rows 4 --lang zh --out docs/flow_zh.png

Each such PNG carries the digest of what it shows (:func:`figure_digest`, the ``dskit-figure`` text
chunk), so a test tells when the DSL has moved on and the figure must be drawn again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dskit.tooling.dslbuild.layout import overlaps

TYPE_COLOURS = {
    "start": "#D1FADF", "answer": "#FEF0C7", "llm": "#D1E9FF", "code": "#EBE9FE",
    "if-else": "#FFE4E8", "question-classifier": "#D1E9FF", "parameter-extractor": "#D1E9FF",
    "assigner": "#F2F4F7", "variable-aggregator": "#F2F4F7", "template-transform": "#E0F2FE",
    "knowledge-retrieval": "#DCFAE6", "http-request": "#FDEAD7",
}
CJK_FONTS = ("WenQuanYi Micro Hei", "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC",
             "SimHei", "Microsoft YaHei", "PingFang SC", "AR PL UMing CN")


CJK_FILE_HINTS = ("wqy", "notosanscjk", "notoserifcjk", "sourcehansans", "simhei", "msyh", "pingfang", "uming")


def cjk_font() -> str | None:
    """The name of an installed font that can draw Chinese, if any.

    matplotlib caches its font list; a font installed after the cache was built is found by
    scanning the system font files once and registering the CJK ones.
    """
    from matplotlib import font_manager  # noqa: PLC0415

    def known() -> str | None:
        installed = {f.name for f in font_manager.fontManager.ttflist}
        return next((name for name in CJK_FONTS if name in installed), None)

    found = known()
    if found is None:
        for path in font_manager.findSystemFonts():
            if any(hint in Path(path).name.lower().replace("-", "") for hint in CJK_FILE_HINTS):
                try:
                    font_manager.fontManager.addfont(path)
                except (OSError, RuntimeError, ValueError):
                    continue
        found = known()
    return found


def _ascii_part(text: str) -> str:
    """The English part of a bilingual title, for pictures drawn without a CJK font."""
    kept = "".join(ch if ord(ch) < 128 else " " for ch in text)
    return " ".join(kept.split()) or text


def _handle_offsets(data: Mapping[str, Any]) -> dict[str, float]:
    """Where each branch leaves a node, as a share of its height (the editor puts one row per branch)."""
    kind = data.get("type")
    if kind == "if-else":
        names = [str(c.get("case_id") or c.get("id")) for c in data.get("cases") or []] + ["false"]
    elif kind == "question-classifier":
        names = [str(c.get("id")) for c in data.get("classes") or []]
    else:
        return {}
    return {name: (index + 1) / (len(names) + 1) for index, name in enumerate(names)}


def _boxes(nodes: list[Mapping[str, Any]]) -> dict[str, tuple[float, float, float, float]]:
    boxes = {}
    for node in nodes:
        pos = node.get("position") or {}
        boxes[str(node["id"])] = (float(pos.get("x", 0)), float(pos.get("y", 0)),
                                  float(node.get("width") or 244), float(node.get("height") or 90))
    return boxes


def render(doc: Mapping[str, Any], out: Path, *, title: str | None = None) -> Path:
    """Write a PNG or SVG (by ``out``'s suffix) of the DSL document ``doc``; returns ``out``."""
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt  # noqa: PLC0415
    from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: PLC0415

    graph = doc["workflow"]["graph"]
    nodes = [n for n in graph["nodes"] if isinstance(n, Mapping) and n.get("type") != "custom-note"]
    boxes = _boxes(nodes)
    clashing = {name for pair in overlaps(boxes) for name in pair}
    font = cjk_font()
    if font:
        plt.rcParams["font.family"] = [font, "DejaVu Sans"]
    xs = [x for x, _, w, _ in boxes.values()] + [x + w for x, _, w, _ in boxes.values()]
    ys = [y for _, y, _, h in boxes.values()] + [y + h for _, y, _, h in boxes.values()]
    span_x, span_y = max(xs) - min(xs) + 160, max(ys) - min(ys) + 160
    scale = 1 / 90
    fig, ax = plt.subplots(figsize=(max(8.0, span_x * scale), max(4.0, span_y * scale)))
    ax.set_xlim(min(xs) - 80, max(xs) + 80)
    ax.set_ylim(max(ys) + 80, min(ys) - 80)  # the editor's y grows downwards
    ax.set_axis_off()
    handles = {str(n["id"]): _handle_offsets(n.get("data") or {}) for n in nodes}
    for edge in graph.get("edges") or []:
        src, dst = boxes.get(str(edge.get("source"))), boxes.get(str(edge.get("target")))
        if src is None or dst is None:
            continue
        share = handles.get(str(edge.get("source")), {}).get(str(edge.get("sourceHandle") or "source"), 0.5)
        start = (src[0] + src[2], src[1] + src[3] * share)
        end = (dst[0], dst[1] + dst[3] / 2)
        ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=10, color="#98A2B3",
                                     linewidth=1.0, connectionstyle="arc3,rad=0.0", zorder=1))
        handle = str(edge.get("sourceHandle") or "source")
        if handle != "source":
            label = "else" if handle == "false" else handle
            ax.text(start[0] + 6, start[1] - 4, label, fontsize=7, color="#475467", zorder=3)
    for node in nodes:
        node_id = str(node["id"])
        x, y, w, h = boxes[node_id]
        data = node.get("data") or {}
        kind = str(data.get("type", ""))
        ax.add_patch(Rectangle((x, y), w, h, facecolor=TYPE_COLOURS.get(kind, "#FFFFFF"),
                               edgecolor="#D92D20" if node_id in clashing else "#667085",
                               linewidth=2.0 if node_id in clashing else 0.8, zorder=2))
        name = str(data.get("title") or node_id) if font else node_id
        ax.text(x + 8, y + 20, name, fontsize=9, fontweight="bold", zorder=4, va="center")
        ax.text(x + 8, y + 40, f"{kind} · {node_id}" if font else kind, fontsize=7, color="#475467",
                zorder=4, va="center")
    if title:
        ax.set_title(title if font else _ascii_part(title), fontsize=12)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return out


def render_file(path: Path, out: Path | None = None, *, rows: int = 0, lang: str = "") -> Path:
    """Render a DSL file; the picture goes next to it (same name, .png) unless ``out`` says otherwise.
    ``rows``: cut into that many rows (:func:`render_rows`), titles in ``lang``."""
    import yaml  # noqa: PLC0415

    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    app = doc.get("app") or {}
    if rows:
        return render_rows(doc, out or path.with_suffix(".png"), rows=rows, lang=lang,
                           title=figure_title(doc, lang) or path.name)
    return render(doc, out or path.with_suffix(".png"), title=str(app.get("name") or path.name))


# --------------------------------------------------------------------------------------------------
# Rows: a readable figure of a long Chatflow
# --------------------------------------------------------------------------------------------------

FIGURE_KEY = "dskit-figure"  # the PNG text chunk holding figure_digest
STRETCH, WIDEN = 1.2, 1.25  # the rows figure's column spacing and box width against the editor's
ROWS_VERSION = 1  # bump when render_rows draws differently: the figures' digests change with it
CJK_CHAR = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]")


def node_titles(doc: Mapping[str, Any], lang: str = "") -> dict[str, str]:
    """Each node's title as the figure shows it: ``en`` gives the English Chatflow's titles, ``zh`` (or
    nothing) the file's own."""
    from dskit.tooling.dslbuild.localize import EN_TITLES  # noqa: PLC0415

    titles = {}
    for node in doc["workflow"]["graph"]["nodes"]:
        if isinstance(node, Mapping) and node.get("type") != "custom-note":
            node_id = str(node["id"])
            own = str((node.get("data") or {}).get("title") or node_id)
            titles[node_id] = EN_TITLES.get(node_id, own) if lang == "en" else own
    return titles


def figure_title(doc: Mapping[str, Any], lang: str) -> str:
    """The app's name in ``lang`` (the shipped files name the app in Chinese, then English)."""
    from dskit.tooling.dslbuild.localize import split_bilingual  # noqa: PLC0415

    name = str((doc.get("app") or {}).get("name") or "")
    zh, en = split_bilingual(name)
    return (en if lang == "en" else zh) or name


def figure_digest(doc: Mapping[str, Any], *, rows: int, lang: str) -> str:
    """What a rows figure shows, as a digest: the nodes (id, type, title, place), the edges, the rows,
    the language and the drawing's version. Equal digests, the same picture."""
    import hashlib  # noqa: PLC0415
    import json  # noqa: PLC0415

    graph = doc["workflow"]["graph"]
    titles = node_titles(doc, lang)
    nodes = sorted((str(n["id"]), str((n.get("data") or {}).get("type")), titles[str(n["id"])],
                    _boxes([n])[str(n["id"])]) for n in graph["nodes"]
                   if isinstance(n, Mapping) and n.get("type") != "custom-note")
    edges = sorted((str(e.get("source")), str(e.get("target")), str(e.get("sourceHandle") or "source"))
                   for e in graph.get("edges") or [])
    data = [ROWS_VERSION, rows, lang, figure_title(doc, lang), nodes, edges]
    return hashlib.sha256(json.dumps(data, ensure_ascii=False).encode("utf-8")).hexdigest()[:16]


def wrap_title(text: str, fits: Callable[[str], bool]) -> list[str]:
    """``text`` in lines that each ``fits``: broken at spaces, else (Chinese, or a word wider than the
    box) between characters."""
    tokens = re.findall(r"\S+\s*", text) if " " in text.strip() else list(text)
    lines: list[str] = []
    line = ""
    for token in tokens:
        if line and not fits((line + token).rstrip()):
            lines.append(line.rstrip())
            line = token
        else:
            line += token
        while not fits(line.rstrip()) and len(line.rstrip()) > 1:  # one word wider than the box
            cut = len(line.rstrip()) - 1
            while cut > 1 and not fits(line[:cut]):
                cut -= 1
            lines.append(line[:cut])
            line = line[cut:]
    if line.strip():
        lines.append(line.rstrip())
    if len(lines) > 1 and " " not in text.strip():  # Chinese: lines of even length, no orphan character
        size = -(-len(text) // len(lines))
        even = [text[i:i + size] for i in range(0, len(text), size)]
        if len(even) == len(lines) and all(fits(part) for part in even):
            return even
    return lines or [text]


@dataclass
class _Placed:
    """A node where the rows figure draws it (figure units, y down)."""

    x: float
    y: float
    w: float
    h: float
    row: int
    lines: list[str] = field(default_factory=list)


def _columns(doc: Mapping[str, Any], rows: int) -> dict[str, _Placed]:
    """Every node's column place: the editor's columns (distinct x) keep their order and spacing (both
    spread by :data:`STRETCH`, the boxes by :data:`WIDEN`, so a title fits in fewer lines) and are dealt
    into ``rows`` rows of equal count; y is still the editor's, from the top of the flow."""
    graph = doc["workflow"]["graph"]
    boxes = _boxes([n for n in graph["nodes"] if isinstance(n, Mapping) and n.get("type") != "custom-note"])
    columns = sorted({x for x, _, _, _ in boxes.values()})
    per_row = -(-len(columns) // max(1, rows))
    top = min(y for _, y, _, _ in boxes.values())
    placed = {}
    for node_id, (x, y, w, h) in boxes.items():
        index = columns.index(x)
        left = (x - columns[index - index % per_row]) * STRETCH
        placed[node_id] = _Placed(left, y - top, w * WIDEN, h, index // per_row)
    return placed


def _stack(placed: dict[str, _Placed], titles: dict[str, str], line: float,
           fits: Callable[[str, float], bool]) -> list[float]:
    """Wrap each title to its box, make each box as tall as its editor height or its text needs, keep
    the boxes of a column in order without overlap, and move each row below the last; the rows' tops."""
    done: list[_Placed] = []
    for node_id, p in sorted(placed.items(), key=lambda kv: (kv[1].row, kv[1].x, kv[1].y)):
        p.lines = wrap_title(titles[node_id], lambda text, width=p.w - 24: fits(text, width))
        p.h = max(p.h, 22 + line * (len(p.lines) + 0.9) + 18)  # padding, the title, the type line
        p.y = max([p.y] + [q.y + q.h + 24 for q in done if q.row == p.row and abs(q.x - p.x) < 1])
        done.append(p)
    rows = max(p.row for p in placed.values()) + 1
    tops, at = [], 0.0
    for row in range(rows):
        tops.append(at)
        at += max((p.y + p.h for p in placed.values() if p.row == row), default=0.0) + 150.0  # connectors
    for p in placed.values():
        p.y += tops[p.row]
    return tops


def render_rows(doc: Mapping[str, Any], out: Path, *, rows: int = 4, lang: str = "", width_px: int = 1400,
                title: str | None = None) -> Path:
    """Write a PNG or SVG of ``doc`` cut into ``rows`` rows (see the module docstring), ``width_px``
    pixels wide, titles in ``lang``; returns ``out``."""
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt  # noqa: PLC0415
    from matplotlib.font_manager import FontProperties  # noqa: PLC0415
    from matplotlib.patches import Circle, FancyArrowPatch, Rectangle  # noqa: PLC0415
    from matplotlib.textpath import TextToPath  # noqa: PLC0415

    titles = node_titles(doc, lang)
    chinese = any(CJK_CHAR.search(t) for t in [*titles.values(), title or ""])
    font = cjk_font() if chinese else None
    family = [font, "DejaVu Sans"] if font else ["DejaVu Sans"]
    plt.rcParams["font.family"] = family
    if chinese and not font:  # no CJK font: ids, never empty boxes
        titles = {node_id: _ascii_part(text) if _ascii_part(text) != text else node_id
                  for node_id, text in titles.items()}
        title = _ascii_part(title) if title else title
    dpi, font_pt = 100, 13.0  # about 11.5 px on a page that shows the figure 880 px wide (GitHub's README column)
    placed = _columns(doc, rows)
    margin = 120.0
    width = max(p.x + p.w for p in placed.values())
    units_per_px = (width + 2 * margin) / width_px
    units_per_pt = dpi / 72 * units_per_px
    bold = FontProperties(family=family, weight="bold", size=font_pt)
    measure = TextToPath()

    def fits(text: str, room: float) -> bool:
        return measure.get_text_width_height_descent(text, bold, ismath=False)[0] * units_per_pt <= room

    line = font_pt * 1.3 * units_per_pt
    _stack(placed, titles, line, fits)
    head = 70.0 if title else 0.0
    height = max(p.y + p.h for p in placed.values()) + margin * 2 + head
    fig = plt.figure(figsize=(width_px / dpi, height / units_per_px / dpi), dpi=dpi)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(-margin, width + margin)
    ax.set_ylim(height - margin - head, -margin - head)
    ax.set_axis_off()
    graph = doc["workflow"]["graph"]
    kinds = {str(n["id"]): str((n.get("data") or {}).get("type", "")) for n in graph["nodes"]
             if isinstance(n, Mapping) and n.get("type") != "custom-note"}
    handles = {str(n["id"]): _handle_offsets(n.get("data") or {}) for n in graph["nodes"] if isinstance(n, Mapping)}
    letters: dict[str, str] = {}
    small = font_pt * 0.72
    for edge in graph.get("edges") or []:
        src, dst = placed.get(str(edge.get("source"))), placed.get(str(edge.get("target")))
        if src is None or dst is None:
            continue
        handle = str(edge.get("sourceHandle") or "source")
        share = handles.get(str(edge.get("source")), {}).get(handle)
        start = (src.x + src.w, src.y + max(34.0, src.h * share) if share is not None else src.y + src.h / 2)
        end = (dst.x, dst.y + dst.h / 2)
        arrow = {"arrowstyle": "-|>", "mutation_scale": 12, "color": "#98A2B3", "linewidth": 1.1, "zorder": 1}
        if dst.row != src.row:  # off-row connector: a lettered circle beside the source and the target
            letter = letters.setdefault(str(edge.get("target")), chr(ord("A") + len(letters)))
            leaving, arriving = (start[0] + 74, start[1]), (end[0] - 52, end[1])  # past a branch's label
            ax.add_patch(FancyArrowPatch(start, (leaving[0] - 24, leaving[1]), **arrow))
            ax.add_patch(FancyArrowPatch((arriving[0] + 24, arriving[1]), end, **arrow))
            for centre in (leaving, arriving):
                ax.add_patch(Circle(centre, 24, facecolor="#344054", edgecolor="none", zorder=3))
                ax.text(*centre, letter, color="white", fontsize=small, fontweight="bold", ha="center",
                        va="center", zorder=4)
        else:
            ax.add_patch(FancyArrowPatch(start, end, **arrow))
        if handle != "source":
            ax.text(start[0] + 6, start[1] - 8, "else" if handle == "false" else handle, fontsize=small * 0.9,
                    color="#475467", zorder=3)
    for node_id, p in placed.items():
        kind = kinds.get(node_id, "")
        ax.add_patch(Rectangle((p.x, p.y), p.w, p.h, facecolor=TYPE_COLOURS.get(kind, "#FFFFFF"),
                               edgecolor="#667085", linewidth=0.9, zorder=2))
        for index, text in enumerate(p.lines):
            ax.text(p.x + 12, p.y + 14 + line * (index + 0.5), text, fontsize=font_pt, fontweight="bold",
                    zorder=4, va="center")
        ax.text(p.x + 12, p.y + 14 + line * (len(p.lines) + 0.5), kind, fontsize=small, color="#475467",
                zorder=4, va="center")
    if title:
        ax.text(-margin + 20, -margin - head / 2, title, fontsize=font_pt * 1.25, fontweight="bold", va="center")
    out.parent.mkdir(parents=True, exist_ok=True)
    metadata = {FIGURE_KEY: figure_digest(doc, rows=rows, lang=lang)} if out.suffix.lower() == ".png" else None
    fig.savefig(out, dpi=dpi, metadata=metadata)
    plt.close(fig)
    return out


def png_digest(path: Path) -> str:
    """The ``dskit-figure`` digest a PNG written by :func:`render_rows` carries ("" when none)."""
    from PIL import Image  # noqa: PLC0415 - matplotlib's own dependency

    with Image.open(path) as image:
        return str(image.info.get(FIGURE_KEY) or "")
