"""Small flow-specific code nodes the generated engine nodes do not (yet) provide.

Each is a self-contained, standard-library-only ``main`` that never raises, written here as source
text because it goes into the DSL verbatim. :mod:`dskit.tooling.dsl.codes` prefers an engine node
from :mod:`dskit.tooling.nodespecs` of the same role whenever one exists, so these stand in only
until then:

- ``execute_reply``: what the execute branch tells the user — done, failed (never passed off as
  success), or, with no ``TASK_API_URL``, what would be done — and the task in focus afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GlueNode:
    """A code node written by hand: its source, inputs (name, role) and typed outputs."""

    name: str
    code: str
    inputs: tuple[str, ...]
    outputs: dict[str, str]


EXECUTE_REPLY_CODE = '''\
import json

TEXTS = {
    "zh": {"ok": "「{task}」已办理完成。", "failed": "抱歉，「{task}」办理失败：{detail}。需要我再试一次吗？",
           "dry": "（未配置 TASK_API_URL，未真正办理）将为您办理「{task}」：{values}。",
           "kv": "{k}：{v}", "sep": "，", "unknown": "接口没有返回成功", "none": "无"},
    "en": {"ok": "{task} is done.", "failed": "Sorry, {task} failed: {detail}. Shall I try again?",
           "dry": "(TASK_API_URL is not set, nothing was done) I would now do {task}: {values}.",
           "kv": "{k}: {v}", "sep": ", ", "unknown": "the API did not report success", "none": "none"},
}


def _load(text):
    try:
        data = json.loads(text) if isinstance(text, str) and text.strip() else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _show(value, lang):
    if isinstance(value, bool):
        return ("是" if value else "否") if lang == "zh" else ("yes" if value else "no")
    if isinstance(value, list):
        return "、".join(str(v) for v in value) if lang == "zh" else ", ".join(str(v) for v in value)
    return str(value)


def _focus(state, catalog):
    stack = state.get("task_stack") if isinstance(state.get("task_stack"), list) else []
    top = stack[-1] if stack and isinstance(stack[-1], dict) else None
    if top is None:
        return "", "{}"
    slots = top.get("slots") if isinstance(top.get("slots"), dict) else {}
    spec = (catalog.get("tasks") or {}).get(top.get("name")) if isinstance(catalog.get("tasks"), dict) else None
    names = list((spec or {}).get("slots") or {}) if isinstance(spec, dict) else []
    view = {n: slots.get(n) for n in names}
    for k, v in slots.items():
        view.setdefault(k, v)
    return str(top.get("name") or ""), json.dumps(view, ensure_ascii=False, separators=(",", ":"))


def main(execute_payload: str = "", question: str = "", api_url: str = "", sys_context_str: str = "",
         recorded_state=None, ok=None, status_code=None, error_message: str = "",
         task_catalog: str = "") -> dict:
    """The execute branch's reply, and the state and task in focus once the outcome is recorded.

    `recorded_state` and `ok` come from the result node, which runs only when TASK_API_URL is set;
    otherwise they are None and the state node's `sys_context_str` stands.
    """
    catalog = _load(task_catalog)
    lang = "en" if str(catalog.get("language") or "zh").lower().startswith("en") else "zh"
    t = TEXTS[lang]
    payload = _load(execute_payload)
    slots = payload.get("slots") if isinstance(payload.get("slots"), dict) else {}
    label = str(payload.get("label") or payload.get("task") or "")
    tail = str(question or "")
    called = bool(str(api_url or "").strip())
    if not called:
        tasks = catalog.get("tasks") if isinstance(catalog.get("tasks"), dict) else {}
        spec = tasks.get(payload.get("task")) if isinstance(tasks.get(payload.get("task")), dict) else {}
        specs = spec.get("slots") if isinstance(spec.get("slots"), dict) else {}
        labels = {k: str(v.get("label") or k) for k, v in specs.items() if isinstance(v, dict)}
        values = t["sep"].join(t["kv"].format(k=labels.get(k, k), v=_show(v, lang))
                               for k, v in slots.items()) or t["none"]
        text = t["dry"].format(task=label, values=values)
    elif ok is True:
        text = t["ok"].format(task=label)
    else:
        detail = str(error_message or "").strip() or (
            "HTTP " + str(status_code) if status_code not in (None, "", 0) else t["unknown"])
        text = t["failed"].format(task=label, detail=detail[:200])
        tail = ""  # the failed task is back on top (CONFIRMING): a "yes" next turn retries it
    state_text = recorded_state if called and isinstance(recorded_state, str) and recorded_state else \
        str(sys_context_str or "")
    task, task_slots = _focus(_load(state_text), catalog)
    reply = text if not tail else text + "\\n\\n" + tail
    return {"reply": reply, "sys_context_str": state_text, "current_task": task,
            "current_task_slots": task_slots}
'''

EXECUTE_REPLY = GlueNode(
    name="execute_reply",
    code=EXECUTE_REPLY_CODE,
    inputs=("execute_payload", "question", "api_url", "sys_context_str", "recorded_state", "ok",
            "status_code", "error_message", "task_catalog"),
    outputs={"reply": "string", "sys_context_str": "string", "current_task": "string",
             "current_task_slots": "string"},
)
