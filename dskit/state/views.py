"""Every projection of (state, decision): what the model reads, what a workflow wires, how a turn counts.

- :func:`state_text` — the model's view of the state, the same text on every surface (the plugin's
  ``track_state``, the code-node Chatflow's context node, the classic layout's prompts): the open
  tasks top first with their filled and missing slots, the slot asked last turn, the tasks just
  executed. Slot values are rendered on one line, escaped where needed, so a value cannot add a line.
- :func:`workflow_outputs` — the one dict of outputs a workflow wires: code nodes stringify it
  (objects and arrays as compact JSON), the plugin tools pass it through. :data:`WORKFLOW_OUTPUTS`
  says what each output holds; :func:`failed_outputs` gives the same names when a turn cannot run.
- :func:`history_tag` — how the history keeps a turn, from the machine's ``progress`` flag.

docs/engine-api.md lists the outputs and their meaning; docs/design.md shows where this sits in a turn.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..catalog.catalog import Catalog, TaskSpec, load_catalog
from .gaps import missing_slots
from .integrity import execution_key
from ..base.jsonish import loads_strict_or_none
from ..base.messages import msg, norm_lang, sentences, show_value
from .records import Decision, new_decision, task_ref
from .state import current_task, load_state, state_problem
from ..base.text import escape_invisible, one_line

# name -> kind of value in the dict; a code node declares "number" as number and everything else as
# string (objects and arrays as compact JSON), the plugin declares each kind as it is.
WORKFLOW_OUTPUTS: dict[str, str] = {
    "sys_context_str": "string",  # the new state: write it back to the conversation variable
    "next_action": "string",  # ask_slot | confirm | execute | faq | chitchat | handoff | fallback
    "question": "string",  # ready text: the notices, then the question (or the pending one)
    "current_task": "string",  # name of the task in focus, "" when none
    "current_task_label": "string",
    "current_task_stage": "string",  # COLLECTING | CONFIRMING, "" when none
    "current_task_slots": "object",  # its filled slots in catalog order, {} when none
    "slot": "string",  # the slot asked now, "" when none
    "missing_slots": "array[string]",  # required slots still empty, in ask order
    "execute_payload": "object",  # {task_id, task, label, slots, subtasks, idempotency_key} when executing, else {}
    "execute_key": "string",  # the execution's idempotency key (send it as the Idempotency-Key header), else ""
    "execute_task": "string",  # the name of the task to execute, "" otherwise
    "faq_question": "string",
    "handoff_reason": "string",
    "rewritten_query": "string",
    "notices": "string",  # the engine's notices of this turn, one per line
    "resumed_task": "string",
    "stack_depth": "number",
    "decision": "object",  # the whole decision (docs/engine-api.md)
    "error": "string",  # "" when the turn ran; else why it fell back (the state is unchanged)
    "follow_up": "string",  # after a FAQ or small-talk answer: "\n\n" + the open task's question, else ""
    "no_api_reply": "string",  # on an execute turn: the reply when no task API is connected, else ""
}

_WORDS = {
    "zh": {"current": "当前任务", "suspended": "挂起任务", "waiting": "等待任务", "done": "已办理",
           "with": "一并提交", "missing": "缺", "asked": "上一轮追问的槽位", "handoff": "已转人工", "check": "待用户核对",
           "none": "（无进行中的任务）", "after": "{parent}办理后一起提交", "colon": "：", "sep": "，",
           "part": "；", "open": "（", "close": "）"},
    "en": {"current": "current task", "suspended": "suspended task", "waiting": "waiting task", "done": "done",
           "with": "submitted with it", "missing": "missing", "asked": "asked last turn", "handoff": "handed off", "check": "to be checked by the user",
           "none": "(no open task)", "after": "submitted after {parent}", "colon": ": ", "sep": ", ",
           "part": "; ", "open": " (", "close": ")"},
}
# A bare value may not hold what separates the parts of a state line, nor read as a JSON value.
_NOT_BARE = "\"'\\,，、;；=[]{}()（）⏎"
_JSON_WORDS = ("true", "false", "null")


# ---------------------------------------------------------------- the model's state text

def _bare(value: str) -> bool:
    """Whether a value can stand unquoted in a state line: not empty, no space (``str.isspace``, what
    re's \\s is) or separator in it, and not a JSON number or literal.

    String tests rather than patterns: a code node compiles each pattern it uses on every sandbox run,
    in re's pure-Python compiler (tests/test_pattern_free.py holds them to the patterns they replace)."""
    if not value or any(char.isspace() or char in _NOT_BARE for char in value):
        return False
    return value not in _JSON_WORDS and not _json_number(value)


def _json_number(text: str) -> bool:
    """Whether ``text`` is ``-?D+(.D+)?([eE][+-]?D+)?``, D a decimal digit (``str.isdecimal``, what re's
    \\d is)."""
    text = text[1:] if text.startswith("-") else text
    mantissa, exponent = text, None
    for index, char in enumerate(text):
        if char in "eE":
            mantissa, exponent = text[:index], text[index + 1:]
            break
    whole, dot, fraction = mantissa.partition(".")
    if not whole.isdecimal() or (dot and not fraction.isdecimal()):
        return False
    if exponent is None:
        return True
    if exponent[:1] in ("+", "-"):
        exponent = exponent[1:]
    return exponent.isdecimal()


def value_text(value: Any) -> str:
    """A slot value on one line: plain text when unambiguous, else JSON (quoted and escaped)."""
    if isinstance(value, str):
        if _bare(value) and one_line(value) == value:
            return value
        return escape_invisible(json.dumps(value, ensure_ascii=False))
    if isinstance(value, list) and value and all(isinstance(v, str) and value_text(v) == v for v in value):
        return "[" + "、".join(value) + "]"
    return escape_invisible(json.dumps(value, ensure_ascii=False, default=str))


def _slots_text(slots: Any, order: Any, sep: str) -> str:
    if not isinstance(slots, dict):
        return "-"
    names = [n for n in order if n in slots] + [n for n in slots if n not in order]
    return sep.join(f"{one_line(n)}={value_text(slots[n])}" for n in names) or "-"


def _task_line(task: dict, kind: str, catalog: Catalog | None, state: dict, w: dict) -> str:
    spec = catalog.tasks.get(task["name"]) if catalog is not None else None
    label = spec.display if spec else one_line(task.get("label") or task["name"])
    stage = task["stage"]
    if kind == "waiting":
        parent = next((t for t in state["task_stack"] if t["id"] == task.get("parent_id")), None)
        if parent is not None:
            stage += w["sep"] + w["after"].format(parent=one_line(parent["name"]))
    head = f"- {w[kind]}{w['colon']}{one_line(task['name'])}{w['open']}{label}{w['sep']}{stage}{w['close']}"
    line = head + w["colon"] + _slots_text(task["slots"], list(spec.slots) if spec else [], w["sep"])
    missing = missing_slots(task, spec) if spec else []
    if missing and kind != "waiting":
        line += w["part"] + w["missing"] + w["colon"] + w["sep"].join(missing)
    held = task.get("unconfirmed")
    if isinstance(held, dict) and held:  # values shown to the user for a yes (docs/grounding.md, "ask")
        line += w["part"] + w["check"] + w["colon"] + _slots_text(held, list(spec.slots) if spec else [], w["sep"])
    return line


def _done_line(entry: dict, w: dict) -> str:
    label = one_line(entry.get("label") or entry.get("task") or "?")
    line = f"- {w['done']}{w['colon']}{label}{w['open']}{one_line(entry.get('status', ''))}{w['close']}" \
           f"{w['colon']}{_slots_text(entry.get('slots'), [], w['sep'])}"
    for sub in entry.get("subtasks") or []:
        if isinstance(sub, dict):
            line += f"{w['part']}{w['with']}{w['colon']}{one_line(sub.get('label') or sub.get('task') or '?')}" \
                    f"{w['colon']}{_slots_text(sub.get('slots'), [], w['sep'])}"
    return line


def _asked_line(state: dict, w: dict) -> str:
    task_id, _, slot = str(state["counters"].get("asking") or "").partition(".")
    task = next((t for t in state["task_stack"] if t["id"] == task_id), None)
    if task is None or not slot:
        return ""
    return f"- {w['asked']}{w['colon']}{one_line(slot)}{w['open']}{one_line(task['name'])}{w['close']}"


def is_dskit_state(value: Any) -> bool:
    """Whether ``value`` (a dict or JSON text) is a usable dskit state."""
    if isinstance(value, str):
        value = loads_strict_or_none(value) if value.strip().startswith("{") else None
    return not state_problem(value)


def state_text(state: Any, catalog: Catalog | None = None, lang: str = "zh") -> str:
    """The model's view of a dskit state (any other string is returned as it is, stripped).

    Open tasks top first (current, then suspended or waiting) with their filled slots in catalog
    order and, given the catalog, the required slots still missing; the slot asked last turn; the
    tasks executed lately with their outcome; a handoff. Never cut by the context budget: it is
    what anchors "改成明天吧" and a bare "3个" (docs/design.md).
    """
    fresh = state is None or (isinstance(state, str) and not state.strip())  # a new conversation
    if not fresh and not is_dskit_state(state):
        return state.strip() if isinstance(state, str) else ""
    data, _ = load_state(state)
    w = _WORDS[norm_lang(lang)]
    lines = []
    for depth, task in enumerate(reversed(data["task_stack"])):
        kind = "current" if depth == 0 else "waiting" if task["stage"] == "WAITING" else "suspended"
        lines.append(_task_line(task, kind, catalog, data, w))
    lines += [_done_line(d, w) for d in data["done"] if isinstance(d, dict)]
    asked = _asked_line(data, w)
    if asked:
        lines.append(asked)
    if isinstance(data.get("handoff"), dict):
        lines.append(f"- {w['handoff']}{w['colon']}{one_line(data['handoff'].get('reason', ''))}")
    return "\n".join(lines) if lines else w["none"]


# ---------------------------------------------------------------- workflow outputs

def task_outputs(state: dict, catalog: Catalog | None) -> dict[str, Any]:
    """The task-in-focus outputs: name, label, stage and filled slots in catalog order."""
    top = current_task(state)
    if top is None:
        return {"current_task": "", "current_task_label": "", "current_task_stage": "", "current_task_slots": {}}
    spec = catalog.tasks.get(top["name"]) if catalog is not None else None
    order = [n for n in (spec.slots if spec else []) if n in top["slots"]]
    return {"current_task": top["name"], "current_task_label": spec.display if spec else top.get("label") or top["name"],
            "current_task_stage": top["stage"],
            "current_task_slots": {n: top["slots"][n] for n in order + [n for n in top["slots"] if n not in order]}}


def workflow_outputs(new_state: str, decision: Decision, catalog: Catalog | None, error: str = "", *,
                     state: dict | None = None, conversation_id: str = "") -> dict[str, Any]:
    """The outputs of a turn, as :data:`WORKFLOW_OUTPUTS` describes them. ``state``: ``new_state``
    already loaded (a :class:`dskit.turn.machine.TurnResult` carries both), so it is not decoded again.
    ``conversation_id`` (Dify's ``sys.conversation_id``) keys an execution for the task API
    (:func:`dskit.state.integrity.execution_key`: ``execute_key``, and ``idempotency_key`` in the payload)."""
    if state is None:
        state, _ = load_state(new_state)
    execute = dict(decision.get("execute") or {})
    key = execution_key(conversation_id, execute) if execute else ""
    if key:
        execute["idempotency_key"] = key
    return {
        "sys_context_str": new_state,
        "next_action": decision.get("next_action") or "fallback",
        "question": decision.get("question") or "",
        **task_outputs(state, catalog),
        "slot": decision.get("slot") or "",
        "missing_slots": list(decision.get("missing_slots") or []),
        "execute_payload": execute,
        "execute_key": key,
        "execute_task": execute.get("task") or "",
        "faq_question": (decision.get("faq") or {}).get("question") or "",
        "handoff_reason": (decision.get("handoff") or {}).get("reason") or "",
        "rewritten_query": decision.get("rewritten_query") or "",
        "notices": "\n".join(str(n) for n in decision.get("notices") or []),
        "resumed_task": (decision.get("resumed") or {}).get("task") or "",
        "stack_depth": len(state["task_stack"]),
        "decision": dict(decision),
        "error": error or decision.get("error") or "",
        "follow_up": follow_up(decision),
        "no_api_reply": no_api_reply(catalog, execute, decision.get("lang")) if execute and catalog else "",
    }


# The actions whose reply is not the engine's question: the task API's outcome and a FAQ answer.
_REPLIED_ELSEWHERE = frozenset({"execute", "faq"})
# Answered by a model, then back to the open task: a FAQ answer, small talk without engine notices.
_MODEL_ANSWERED = frozenset({"faq", "chitchat"})


def replies_itself(outputs: Mapping[str, Any]) -> bool:
    """Whether this turn's reply is the engine's ``question`` as it stands: the rule of the Chatflows'
    ``route`` branch (dskit/tooling/dslbuild/flows.py), which sends every action but execute, FAQ and
    small talk without engine notices straight to the reply (with notices, the engine's text is the
    whole reply). ``outputs``: a turn's outputs or its decision (``notices`` text or list). The
    scenario suites check the two agree on every turn (dskit/tooling/dslrun/scenarios.py)."""
    action = outputs.get("next_action")
    if action in _REPLIED_ELSEWHERE:
        return False
    return not (action == "chitchat" and not outputs.get("notices"))


def follow_up(outputs: Mapping[str, Any]) -> str:
    """What the reply adds after the model's answer on a FAQ or small-talk turn: a blank line and the
    open task's pending question ("" when no task waits, and on every other turn). The Chatflows'
    answer node shows the answer followed by it and the memory step records the two together — the
    text a template node (``{{ answer }}{% if question %}\n\n{{ question }}{% endif %}``) used to
    make, in a sandbox run of its own."""
    question = outputs.get("question") or ""
    if outputs.get("next_action") not in _MODEL_ANSWERED or replies_itself(outputs) or not question:
        return ""
    return "\n\n" + question


def memory_reply(decision: Mapping[str, Any] | None, answer: str, follow_up: str = "") -> str:
    """The assistant's side of a turn as the history keeps it, the text the next understanding prompt
    shows: the reply as shown (``answer`` and ``follow_up``), except on a turn a FAQ or small-talk model
    answered, where it is the engine's own text only (``follow_up`` without its blank line: the open
    task's pending question, "" when none waits).

    Why: that answer is a second model's prose. The quick ``engine`` evaluation target never asks
    for it, the plugin and the Chatflows get different texts from their own answer nodes, and a long
    answer crowds the history's budget with values nobody said (a FAQ passage about a minimum spend, a
    restaurant the chat model suggested) that a small model copies into slots. With the engine's text
    every surface records the same turn and the next prompt is the same bytes on each (a test). What
    the user asked stays in the history; what is pending is in the state view."""
    if isinstance(decision, Mapping) and decision.get("next_action") in _MODEL_ANSWERED \
            and not replies_itself(decision):
        return (follow_up or "").strip()
    return (answer + (follow_up or "")) if answer else (answer or "")


def failed_outputs(kept_state: str, question: str, error: str, lang: str = "zh") -> dict[str, Any]:
    """The outputs of a turn that could not run: the state as it came, a fallback question, the reason."""
    state, _ = load_state(kept_state)
    top = current_task(state)
    decision = new_decision("fallback", lang=norm_lang(lang), turn=state["turn"], question=question, error=error,
                            task=task_ref(top))
    return workflow_outputs(kept_state, decision, None, error)


# ---------------------------------------------------------------- what the user reads of a task

def values_text(spec: TaskSpec, slots: dict, lang: str, names: list[str] | None = None) -> str:
    """Slot values as an end user reads them, in catalog order: "日期：周五，人数：3"."""
    parts = [msg("kv", lang, slot=spec.slots[n].display if n in spec.slots else n, value=show_value(slots[n], lang))
             for n in (names if names is not None else list(spec.slots)) if n in slots]
    return msg("value_sep", lang).join(parts)


def _payload_spec(cat: Catalog, payload: Any) -> tuple[dict, TaskSpec]:
    payload = payload if isinstance(payload, dict) else {}
    return payload, cat.tasks.get(payload.get("task")) or TaskSpec(name=str(payload.get("task") or ""))


def _payload_parts(cat: Catalog, payload: Any, lang: str) -> tuple[str, str]:
    """(label, values text) of an execute payload or one of its sub-tasks, whatever its shape."""
    payload, spec = _payload_spec(cat, payload)
    slots = payload.get("slots") if isinstance(payload.get("slots"), dict) else {}
    return str(payload.get("label") or spec.display), values_text(spec, slots, lang, list(slots)) or msg("none", lang)


def _dry_values(values: str, lang: str) -> str:
    """The values after a task's name in the no-API reply, in brackets; nothing when it has none."""
    return msg("exec_dry_values", lang, values=values) if values != msg("none", lang) else ""


def no_api_reply(catalog: Any, payload: dict, lang: str | None = None) -> str:
    """What the user is told when a task is to run and no task API is connected: said plainly, in the
    catalog's labels, that nothing was done — or, for a read-only enquiry (``read_only``), that there
    is no answer to give, since the answer would have come from the API; sub-tasks are named.

    Why not "I would now do ...": the user asked for something and must not take it as done, and an
    enquiry ("opening hours on Saturday?") has nothing to be done, only an answer nobody can give.
    What the app builder must set is the Chatflow's to add (the code-node Chatflows name TASK_API_URL,
    ``exec_dry_builder``): the plugin layout has no such variable."""
    cat = load_catalog(catalog)
    lang = norm_lang(lang or cat.language)
    label, values = _payload_parts(cat, payload, lang)
    key = "exec_dry_read" if _payload_spec(cat, payload)[1].read_only else "exec_dry"
    subtasks = [_payload_parts(cat, sub, lang) for sub in payload.get("subtasks") or [] if isinstance(sub, dict)]
    return sentences(lang, msg(key, lang, task=label, values=_dry_values(values, lang)),
                     *(msg("exec_dry_with", lang, task=sub, values=_dry_values(sub_values, lang))
                       for sub, sub_values in subtasks))


def execute_reply(catalog: Any, payload: dict, *, called: bool, ok: bool, detail: str = "",
                  lang: str | None = None) -> str:
    """What the user is told about an executed task: done, failed (never passed off as success), or,
    when no task API is configured, that nothing was done (:func:`no_api_reply`) and what the app
    builder must set; sub-tasks submitted with it are named."""
    cat = load_catalog(catalog)
    lang = norm_lang(lang or cat.language)
    label, _ = _payload_parts(cat, payload, lang)
    subtasks = [_payload_parts(cat, sub, lang) for sub in payload.get("subtasks") or [] if isinstance(sub, dict)]
    if not called:
        return sentences(lang, no_api_reply(cat, payload, lang), msg("exec_dry_builder", lang))
    if ok:
        return sentences(lang, msg("exec_ok", lang, task=label),
                         *(msg("exec_ok_with", lang, task=sub) for sub, _ in subtasks))
    also = "".join(msg("exec_failed_also", lang, task=sub) for sub, _ in subtasks)
    return msg("exec_failed", lang, task=label, detail=(detail.strip() or msg("exec_unknown", lang))[:200], also=also)


def history_tag(decision: Any) -> str:
    """The history's hint for a turn: "essential" when the machine made progress on a task, "chat"
    when it applied only a question, small talk or a handoff, "" when it applied nothing."""
    if not isinstance(decision, dict):
        return ""
    if decision.get("progress") is True:
        return "essential"
    return "chat" if decision.get("applied") else ""
