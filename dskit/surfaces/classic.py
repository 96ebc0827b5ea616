"""The classic layout's adapter: a question classifier's class + a parameter extractor's outputs ->
the understanding contract the state machine reads.

The classic Chatflow routes with a question classifier (one class per task, then the non-task
classes below) and fills slots with a parameter extractor, instead of one understanding LLM.
:data:`CLASSIC_CLASSES` is the one source of the non-task classes: the DSL generator writes their
labels into the classifier, and the adapter reads a class name back through the same table, so a
class can never be renamed in one place and missed in the other. Hand-built classifiers (generic
"单轮任务 / 多轮任务" classes, "人工" for a human) are read through each class's ``synonyms``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..catalog.catalog import Catalog, TaskSpec
from ..turn.commands import REGISTRY, CannotHandle, Faq, Handoff, SetSlots, StartTask
from ..base.jsonish import loads_strict_or_none
from ..state.state import current_task


@dataclass(frozen=True)
class ClassicClass:
    """One non-task class of the classifier and the command it stands for."""

    id: str  # the class id in the generated DSL (its branch handle)
    command: str  # the understanding command; "" = more information for the task in focus
    label_zh: str  # the class name the generated classifier shows, by prompt language
    label_en: str
    synonyms: tuple[str, ...] = ()  # other names a hand-built classifier may use


CLASSIC_CLASSES = (
    ClassicClass("more_info", "", "补充信息", "more info", ("补充", "more_info")),
    ClassicClass("confirm", "confirm", "确认", "confirm", ("同意", "yes")),
    ClassicClass("deny", "deny", "否认", "deny", ("拒绝", "no")),
    ClassicClass("cancel", "cancel_task", "取消", "cancel", ()),
    ClassicClass("reset", "reset", "重置", "reset", ("重新开始", "restart")),
    ClassicClass("faq", "faq", "FAQ", "FAQ", ("知识问答", "问答", "咨询", "常见问题", "question", "knowledge")),
    ClassicClass("chitchat", "chitchat", "闲聊", "small talk", ("聊天", "chat", "chitchat", "smalltalk", "other", "其他")),
    ClassicClass("handoff", "handoff", "转人工", "human agent", ("人工", "人工客服", "handoff", "human", "agent")),
)
# Class names that say "a task" without naming it; the task then comes from a ``task`` parameter.
GENERIC_TASK_CLASSES = ("单轮任务", "多轮任务", "任务", "业务办理", "task", "single_turn", "multi_turn")
TASK_PARAMETER_KEYS = ("task", "intent", "task_name", "任务")
_EMPTY = ("", "null", "none", "nil", "undefined", "无", "空", "未知", "unknown", "n/a")


def classic_labels(lang: str) -> list[tuple[str, str]]:
    """(class id, label) of the non-task classes, as the generated classifier lists them."""
    return [(c.id, c.label_en if lang == "en" else c.label_zh) for c in CLASSIC_CLASSES]


def _norm(text: str) -> str:
    return re.sub(r"[\s_\-]+", " ", text.strip().lower())


def class_of(class_name: str) -> ClassicClass | None:
    """The non-task class a class name stands for (its id, label or a synonym), else None."""
    name = _norm(class_name)
    for entry in CLASSIC_CLASSES:
        if name in {_norm(w) for w in (entry.id, entry.label_zh, entry.label_en, *entry.synonyms)}:
            return entry
    return None


def _is_empty(value: Any) -> bool:
    if value is None or value == [] or value == {}:
        return True
    return isinstance(value, str) and value.strip().lower() in _EMPTY


def merge_params(params: dict, params_json: str) -> dict:
    """Extractor outputs: the extra input variables, merged over an optional JSON object."""
    merged: dict = {}
    data = loads_strict_or_none(params_json)
    if isinstance(data, dict):
        merged.update(data)
    for key, value in params.items():
        if isinstance(key, str) and not key.startswith("__"):
            merged[key] = value
    return merged


def _pick_task(catalog: Catalog, class_name: str, params: dict) -> TaskSpec | None:
    """The catalog task a classifier class (or an extractor's task/intent parameter) names."""
    spec = catalog.task(class_name.strip()) if class_name.strip() else None
    if spec is None:
        for key in TASK_PARAMETER_KEYS:
            value = params.get(key)
            if isinstance(value, str) and value.strip():
                spec = catalog.task(value.strip())
                if spec is not None:
                    break
    return spec


def classic_commands(class_name: str, params: dict, query: str, catalog: Catalog, state: dict) -> list[dict]:
    """The understanding commands for one classified, extracted message, as the model would write them."""
    entry = class_of(class_name)
    command = entry.command if entry else ""
    current = current_task(state)
    spec = _pick_task(catalog, class_name, params)
    if spec is None and command:
        kind = REGISTRY[command]
        chosen = kind(query) if kind is Faq else kind("user_request") if kind is Handoff else kind()
        return [chosen.wire()]
    target = spec or (catalog.tasks.get(current["name"]) if current else None)
    if target is None:
        return [CannotHandle().wire()]
    slots = {key: value.strip() if isinstance(value, str) else value
             for key, value in params.items() if key in target.slots and not _is_empty(value)}
    if spec is not None and (current is None or current["name"] != spec.name):
        return [StartTask(spec.name, slots).wire()]
    if slots:
        return [SetSlots(target.name, slots).wire()]
    generic = _norm(class_name) in {_norm(w) for w in GENERIC_TASK_CLASSES}
    return [StartTask(target.name, {}).wire()] if spec or generic else [CannotHandle().wire()]
