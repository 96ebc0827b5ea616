"""What ``dskit eval`` shows: a summary table, ``--json``, the per-turn JSONL trace, ``--report DIR``.

Runs (a target, a layout or a DSL file) sit side by side in every view. Wrongful executions are in red
wherever they are not zero: the figure that must be 0 on every model and layout.
"""

from __future__ import annotations

import html
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .runner import EvalRun

# (key, label, kind): kind "rate" prints a percentage, "count" an integer, "num" a number.
ROWS: list[tuple[str, str, str]] = [
    ("turn_accuracy", "turns right (all checks)", "rate"),
    ("first_pass_rate", "conversations with every turn right", "rate"),
    ("jga", "joint goal accuracy", "rate"),
    ("slot_accuracy", "slot accuracy", "rate"),
    ("slot_f1", "slot F1", "rate"),
    ("task_success", "task success", "rate"),
    ("completeness", "completeness at execution", "rate"),
    ("turns_to_completion", "turns to completion (scripted: see json)", "num"),
    ("executions", "executions", "count"),
    ("wrongful_executions", "WRONGFUL executions (must be 0)", "count"),
    ("unasked_writes", "unasked slot writes (silent drift)", "count"),
    ("wrong_writes", "slot writes with a wrong value", "count"),
    ("forbidden", "forbidden behaviour", "count"),
    ("fallback_rate", "fallback rate", "rate"),
    ("unreadable_rate", "unreadable model output", "rate"),
    ("handoff_rate", "handoff rate", "rate"),
    ("answer_checks", "answer checks passed", "rate"),
    ("consistency", "consistency over repeats", "rate"),
    ("llm_calls_per_turn", "LLM calls / turn", "num"),
    ("prompt_tokens_per_turn", "prompt tokens / turn", "num"),
    ("completion_tokens_per_turn", "completion tokens / turn", "num"),
    ("latency_p50", "LLM seconds / turn, p50", "num"),
    ("latency_p95", "LLM seconds / turn, p95", "num"),
    ("turns", "turns", "count"),
    ("errors", "turns that failed (endpoint, or an answer cut or empty)", "count"),
    ("not_run", "turns not run", "count"),
]


# Causes shown only when some turn has them (the others are shown at 0: "nothing went wrong there").
OPTIONAL_CAUSES = frozenset({"catalog_unverified"})


def fmt(value: Any, kind: str) -> str:
    if value is None:
        return "—"
    if kind == "rate":
        return f"{value:.1%}"
    if kind == "count":
        return str(int(value))
    return f"{value:g}" if isinstance(value, int | float) else str(value)


def print_table(runs: Sequence[EvalRun], meta: dict[str, Any], console: Any = None) -> None:
    """The summary: one column per run, wrongful executions in red when not zero."""
    from rich.console import Console  # noqa: PLC0415
    from rich.markup import escape  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415

    console = console or Console()
    figures = [run.figures() for run in runs]
    table = Table(title=f"dskit eval — {meta.get('model', '?')} ({meta.get('date', '')})")
    table.add_column("metric")
    for run in runs:
        table.add_column(run.label, justify="right")
    for key, label, kind in ROWS:
        cells = []
        for fig in figures:
            text = fmt(fig.get(key), kind)
            if key == "wrongful_executions" and fig.get(key):
                text = f"[bold red]{text}[/bold red]"
            elif key == "wrongful_executions":
                text = f"[green]{text}[/green]"
            cells.append(text)
        table.add_row(f"[bold red]{label}[/bold red]" if key == "wrongful_executions" else label, *cells)
    from .causes import CAUSE_TEXT  # noqa: PLC0415

    for cause, text in CAUSE_TEXT.items():  # every turn that is not right, by its cause
        counts = [(fig.get("causes") or {}).get(cause, 0) for fig in figures]
        if cause in OPTIONAL_CAUSES and not any(counts):
            continue
        table.add_row(f"not right: {text}", *[str(count) for count in counts])
    for key, label in SPREAD_ROWS:  # --runs N: the median and the worst over the runs
        if any(run.spread.get(key) for run in runs):
            table.add_row(label, *[_spread_cell(run.spread, key) for run in runs])
    if any(run.spread for run in runs):
        table.add_row("consistency over runs (same outcome every run)",
                      *[fmt(run.spread.get("consistency"), "rate") for run in runs])
    console.print(table)
    for run in runs:
        if run.target.get("catalog_check"):  # a Dify app: whether its catalog is the suites' was checked
            alarm = run.target.get("catalog_check_failed") or run.target["catalog_check"].startswith("NOT RUN")
            console.print(f"[{'bold yellow' if alarm else 'green'}]catalog check[/] {escape(run.label)}: "
                          f"{escape(run.target['catalog_check'])}", markup=True, highlight=False)
    for run in runs:
        for line in run.errors():
            console.print(f"[red]error[/red] {run.label}: {line}", markup=True, highlight=False)


SPREAD_ROWS = (("turns_right", "turns right, median / worst of the runs"),
               ("wrongful_executions", "wrongful executions, median / worst of the runs"),
               ("jga_right", "JGA turns right, median / worst of the runs"))


def _spread_cell(spread: dict[str, Any], key: str) -> str:
    item = spread.get(key)
    if not item:
        return "—"
    return f"{fmt(item['median'], 'num')} / {fmt(item['worst'], 'num')} (of {spread['runs']})"


def as_json(runs: Sequence[EvalRun], meta: dict[str, Any]) -> dict[str, Any]:
    """One object: what was measured, how, and every figure per run and per suite (with ``--runs N``,
    the median run's, and ``spread``: the median and worst over the runs, and their consistency)."""
    return {**meta, "runs": [{"label": run.label, **run.target, "figures": run.figures(),
                              "suites": run.per_suite(), "errors": run.errors(),
                              **({"spread": run.spread} if run.spread else {})} for run in runs]}


class TraceWriter:
    """``--trace FILE`` written turn by turn (a run of an hour can be followed with ``tail -f``)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.handle: Any = None
        self.lock = threading.Lock()

    def __enter__(self) -> TraceWriter:
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.handle = self.path.open("w", encoding="utf-8")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.handle is not None:
            self.handle.close()

    def sink(self, label: str) -> Any:
        if self.handle is None:
            return None

        def write(record: dict[str, Any]) -> None:
            with self.lock:
                self.handle.write(json.dumps({"run": label, **record}, ensure_ascii=False) + "\n")
                self.handle.flush()

        return write


def write_trace(runs: Sequence[EvalRun], path: Path) -> None:
    """Every turn of every run as one JSON line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for run in runs:
            for record in run.traces:
                handle.write(json.dumps({"run": run.label, **record}, ensure_ascii=False) + "\n")


CHART_KEYS = [("turn_accuracy", "turns right"), ("jga", "JGA"), ("task_success", "task success"),
              ("slot_f1", "slot F1"), ("answer_checks", "answer checks")]


def write_chart(runs: Sequence[EvalRun], path: Path) -> None:
    """Accuracy bars per run, plus wrongful executions and LLM calls per turn beside them."""
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415
    from matplotlib.ticker import MaxNLocator  # noqa: PLC0415

    figures = [run.figures() for run in runs]
    fig, (left, middle, right) = plt.subplots(1, 3, figsize=(12, 4), gridspec_kw={"width_ratios": [3, 1, 1]})
    width = 0.8 / max(1, len(runs))
    for i, (run, figs) in enumerate(zip(runs, figures, strict=True)):
        xs = [k + i * width for k in range(len(CHART_KEYS))]
        left.bar(xs, [(figs.get(key) or 0) * 100 for key, _ in CHART_KEYS], width, label=run.label)
    left.set_xticks([k + width * (len(runs) - 1) / 2 for k in range(len(CHART_KEYS))])
    left.set_xticklabels([label for _, label in CHART_KEYS])
    left.set_ylim(0, 100)
    left.set_ylabel("%")
    left.legend(fontsize=8)
    labels = [run.label for run in runs]
    wrongful = [figs.get("wrongful_executions") or 0 for figs in figures]
    middle.bar(labels, wrongful, color=["#c62828" if w else "#2e7d32" for w in wrongful])
    middle.set_title("wrongful executions (must be 0)", fontsize=9)
    middle.yaxis.set_major_locator(MaxNLocator(integer=True))
    calls = [figs.get("llm_calls_per_turn") for figs in figures]  # "unknown" (Dify blocking) draws no bar
    right.bar(labels, [c if isinstance(c, int | float) else 0 for c in calls], color="#455a64")
    right.set_title("LLM calls / turn", fontsize=9)
    for axis in (middle, right):
        axis.tick_params(axis="x", labelrotation=30, labelsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _cell(value: Any) -> str:
    return html.escape(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


def write_html(runs: Sequence[EvalRun], meta: dict[str, Any], path: Path, chart: str = "chart.png") -> None:
    """The summary side by side, per-suite figures, and every failing turn with its trace."""
    figures = [run.figures() for run in runs]
    out = ["<!doctype html><meta charset='utf-8'><title>dskit eval</title>",
           "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
           "td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top}td.n{text-align:right}"
           ".bad{color:#c62828;font-weight:bold}.ok{color:#2e7d32}pre{white-space:pre-wrap;margin:0;"
           "max-width:60em}</style>",
           f"<h1>dskit eval</h1><p>{_cell(' · '.join(f'{k}: {v}' for k, v in meta.items() if isinstance(v, str | int | float)))}</p>",
           f"<img src='{chart}' alt='chart' style='max-width:100%'>",
           *[f"<p><b>catalog check</b> {_cell(r.label)}: {_cell(r.target['catalog_check'])}</p>"
             for r in runs if r.target.get("catalog_check")],
           "<h2>Summary</h2><table><tr><th>metric</th>" + "".join(f"<th>{_cell(r.label)}</th>" for r in runs) + "</tr>"]
    for key, label, kind in ROWS:
        row = f"<tr><td{' class=bad' if key == 'wrongful_executions' else ''}>{_cell(label)}</td>"
        for figs in figures:
            css = ("bad" if figs.get(key) else "ok") if key == "wrongful_executions" else ""
            row += f"<td class='n {css}'>{_cell(fmt(figs.get(key), kind))}</td>"
        out.append(row + "</tr>")
    from .causes import CAUSE_TEXT  # noqa: PLC0415

    for cause, text in CAUSE_TEXT.items():
        if cause in OPTIONAL_CAUSES and not any((figs.get("causes") or {}).get(cause) for figs in figures):
            continue
        out.append(f"<tr><td>not right: {_cell(text)}</td>" + "".join(
            f"<td class=n>{(figs.get('causes') or {}).get(cause, 0)}</td>" for figs in figures) + "</tr>")
    out.append("</table><h2>Per suite</h2>")
    for run in runs:
        out.append(f"<h3>{_cell(run.label)}</h3><table><tr><th>suite</th><th>turns right</th><th>JGA</th>"
                   "<th>task success</th><th>wrongful</th><th>unasked writes</th><th>errors</th></tr>")
        for name, figs in run.per_suite().items():
            css = " class=bad" if figs.get("wrongful_executions") else ""
            out.append(f"<tr><td>{_cell(name)}</td><td class=n>{fmt(figs['turn_accuracy'], 'rate')}</td>"
                       f"<td class=n>{fmt(figs['jga'], 'rate')}</td><td class=n>{fmt(figs['task_success'], 'rate')}</td>"
                       f"<td class=n{css}>{figs['wrongful_executions']}</td><td class=n>{figs['unasked_writes']}</td>"
                       f"<td class=n>{figs['errors']}</td></tr>")
        out.append("</table>")
    out.append("<h2>Failing turns</h2>")
    for run in runs:
        failing = [t for t in run.traces if not t["passed"]]
        out.append(f"<h3>{_cell(run.label)}: {len(failing)} failing turns</h3><table><tr><th>suite / turn</th>"
                   "<th>user</th><th>model text</th><th>applied / dropped</th><th>answer</th><th>what failed (cause)</th></tr>")
        for t in failing:
            wrongful = any(e["wrongful"] for e in t["executed"])
            out.append(f"<tr><td>{_cell(t['suite'])} #{t['turn']}"
                       f"{' (run ' + str(t['repeat']) + ')' if t['repeat'] > 1 else ''}</td>"
                       f"<td>{_cell(t['user'])}</td><td><pre>{_cell(chr(10).join(t['model_text']))}</pre></td>"
                       f"<td><pre>{_cell(json.dumps({'applied': t['applied'], 'dropped': t['dropped']}, ensure_ascii=False, indent=1))}</pre></td>"
                       f"<td><pre>{_cell(t['answer'])}</pre></td>"
                       f"<td{' class=bad' if wrongful else ''}><pre>{_cell(chr(10).join([*t['failures'], f"({t.get('cause') or '?'})"]))}</pre></td></tr>")
        out.append("</table>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out), encoding="utf-8")


def write_report(runs: Sequence[EvalRun], meta: dict[str, Any], directory: Path) -> Path:
    """``--report DIR``: chart.png, index.html and trace.jsonl; returns the page's path."""
    directory.mkdir(parents=True, exist_ok=True)
    write_chart(runs, directory / "chart.png")
    write_trace(runs, directory / "trace.jsonl")
    page = directory / "index.html"
    write_html(runs, meta, page)
    return page
