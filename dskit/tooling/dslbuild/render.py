"""Draw a Chatflow DSL at its own node positions, so what the editor will show (overlaps included) is
visible without Dify.

Each node is drawn as the rectangle the DSL declares (``position``, ``width``, ``height``), coloured
by type, with its title; edges run from the right edge of the source to the left edge of the target,
labelled with their branch handle when it is not the ordinary one. Overlapping nodes are outlined in
red. Chinese titles need a CJK font (e.g. Debian's fonts-wqy-microhei); without one the node ids are
shown instead, so the picture never fills with empty boxes.
"""

from __future__ import annotations

from collections.abc import Mapping
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


def render_file(path: Path, out: Path | None = None) -> Path:
    """Render a DSL file; the picture goes next to it (same name, .png) unless ``out`` says otherwise."""
    import yaml  # noqa: PLC0415

    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    app = doc.get("app") or {}
    return render(doc, out or path.with_suffix(".png"), title=str(app.get("name") or path.name))
