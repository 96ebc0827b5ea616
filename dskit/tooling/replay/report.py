"""Human-readable replay reports (rich tables), in Chinese by default or English."""

from __future__ import annotations

from .score import ReplayResult

_TEXTS = {
    "zh": {
        "title": "回放 {dataset}（{mode}）",
        "metric": "指标", "value": "数值",
        "jga": "联合目标准确率 JGA", "slot_accuracy": "槽位准确率",
        "dialogues": "对话数", "turns": "轮数", "turns_per_second": "每秒轮数",
        "engine_steps": "引擎调用次数", "seconds": "耗时（秒）",
        "anomalies": "引擎异常", "none": "无",
        "failures": "前 {n} 个出错的轮次（引擎值 → 标注值）",
        "dialogue": "对话", "turn": "轮", "diffs": "差异",
        "empty": "（空）",
        "whitespace_values": "首尾带空白的标注值（比较时去除）",
        "baseline": "什么都不答的模型的 JGA（基线）", "changed": "状态有变化的轮次的 JGA",
        "broken": "无变化的轮次被改错",
    },
    "en": {
        "title": "Replay {dataset} ({mode})",
        "metric": "metric", "value": "value",
        "jga": "joint goal accuracy (JGA)", "slot_accuracy": "slot accuracy",
        "dialogues": "dialogues", "turns": "turns", "turns_per_second": "turns per second",
        "engine_steps": "engine steps", "seconds": "seconds",
        "anomalies": "engine anomalies", "none": "none",
        "failures": "first {n} failing turns (engine → gold)",
        "dialogue": "dialogue", "turn": "turn", "diffs": "differences",
        "empty": "(empty)",
        "whitespace_values": "gold values with surrounding whitespace (compared stripped)",
        "baseline": "JGA of a model that answers nothing (baseline)", "changed": "JGA on turns whose state changes",
        "broken": "unchanged turns broken",
    },
}


def texts(lang: str) -> dict[str, str]:
    """The report texts for ``lang`` ("zh" unless "en")."""
    return _TEXTS["en" if lang == "en" else "zh"]


def summary_rows(result: ReplayResult, lang: str = "zh") -> list[tuple[str, str]]:
    """(label, value) rows of the summary table."""
    t = texts(lang)
    rows = [
        (t["jga"], f"{result.jga:.2%}  ({result.joint_correct}/{result.turns})"),
    ]
    if result.compared:
        b = result.beside()
        rows += [
            (t["baseline"], f"{b['baseline_jga']:.2%}  ({result.baseline_correct}/{result.compared})"),
            (t["changed"], f"{b['changed_jga']:.2%}  ({b['changed_correct']}/{b['changed_turns']})"),
            (t["broken"], f"{b['broken_unchanged']}/{b['unchanged_turns']}"),
        ]
    rows += [
        (t["slot_accuracy"], f"{result.slot_accuracy:.2%}"),
        (t["dialogues"], str(result.dialogues)),
        (t["turns"], str(result.turns)),
        (t["turns_per_second"], f"{result.turns_per_second:,.0f}"),
        (t["engine_steps"], str(result.engine_steps)),
        (t["seconds"], f"{result.seconds:.2f}"),
    ]
    rows += [(t.get(name, name), str(count)) for name, count in result.notes.items()]
    anomalies = ", ".join(f"{k}: {v}" for k, v in result.anomalies.items()) or t["none"]
    rows.append((t["anomalies"], anomalies))
    return rows


def print_report(result: ReplayResult, lang: str = "zh", failures: int = 0) -> None:
    """Print the summary table, the anomaly examples and the first ``failures`` failing turns."""
    from rich.console import Console
    from rich.table import Table

    t = texts(lang)
    console = Console()
    table = Table(title=t["title"].format(dataset=result.dataset, mode=result.mode))
    table.add_column(t["metric"])
    table.add_column(t["value"], justify="right")
    for label, value in summary_rows(result, lang):
        table.add_row(label, value)
    console.print(table)
    for kind, examples in result.anomaly_examples.items():
        for example in examples:
            console.print(f"[yellow]{kind}[/yellow]: {example}", markup=True, highlight=False)
    if failures > 0 and result.failures:
        shown = result.failures[:failures]
        fail_table = Table(title=t["failures"].format(n=len(shown)))
        fail_table.add_column(t["dialogue"])
        fail_table.add_column(t["turn"], justify="right")
        fail_table.add_column(t["diffs"])
        for failure in shown:
            diffs = "; ".join(f"{slot}: {mine or t['empty']} → {gold or t['empty']}"
                              for slot, (mine, gold) in failure.diffs.items())
            fail_table.add_row(failure.dialogue, str(failure.turn), diffs)
        console.print(fail_table)
