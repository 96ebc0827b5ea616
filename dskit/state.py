"""The dialogue state: one JSON string, the ``sys_context_str`` conversation variable.

The state is external (docs/design.md, "External state"): the LLM never writes it, the engine
does. Loading is defensive, because the string comes back from a Dify conversation variable that a
user may have edited, truncated or pointed at another tool's data: anything unusable starts a clean
state and the reason is kept in ``errors`` so that it shows in Dify's variable inspector.
The format is documented in docs/state-format.md.
"""

from __future__ import annotations

import json
from typing import Any

from .records import STAGES

STATE_FORMAT = "dskit.state"
STATE_VERSION = 1
# An incoming state larger than this is refused (Dify caps a variable at 200 KiB; ours stays far
# below: stack, timeline and errors are all bounded).
MAX_STATE_CHARS = 150_000
MAX_ERRORS = 5
MAX_TIMELINE = 5
MAX_DONE = 3
MAX_SLOT_HISTORY = 10


def new_counters() -> dict:
    """Counters of the handoff policy: unusable outputs in a row, failed asks per slot, the slot being asked."""
    return {"parse_failures": 0, "failed_asks": {}, "asking": None}


def new_state() -> dict:
    """A clean state: no task, nothing counted."""
    return {
        "format": STATE_FORMAT,
        "version": STATE_VERSION,
        "turn": 0,
        "global_intent_lock": "UNLOCKED",
        "current_task_id": None,
        "task_stack": [],
        "next_task_seq": 1,
        "counters": new_counters(),
        "handoff": None,
        "done": [],
        "errors": [],
        "timeline": [],
    }


def _task_problem(task: Any, index: int) -> str:
    """Why one stack entry is unusable ('' when it is fine)."""
    where = f"task_stack[{index}]"
    if not isinstance(task, dict):
        return f"{where} is not an object"
    for key, kind in (("id", str), ("name", str), ("stage", str), ("slots", dict), ("history", dict)):
        if not isinstance(task.get(key), kind):
            return f"{where}.{key} is missing or of the wrong type"
    if task["stage"] not in STAGES:
        return f"{where}.stage {task['stage']!r} is unknown"
    if not all(isinstance(v, list) for v in task["history"].values()):
        return f"{where}.history must map slots to lists"
    return ""


def state_problem(data: Any) -> str:
    """Why a decoded state cannot be used ('' when it can)."""
    if not isinstance(data, dict):
        return "not a JSON object"
    if data.get("format") != STATE_FORMAT:
        return "not a dskit state (format field missing or foreign)"
    if data.get("version") != STATE_VERSION:
        return f"unsupported state version {data.get('version')!r}"
    for key, kind in (("turn", int), ("task_stack", list), ("next_task_seq", int),
                      ("counters", dict), ("done", list), ("errors", list), ("timeline", list)):
        if not isinstance(data.get(key), kind) or isinstance(data.get(key), bool):
            return f"field {key!r} is missing or of the wrong type"
    for i, task in enumerate(data["task_stack"]):
        problem = _task_problem(task, i)
        if problem:
            return problem
    counters = data["counters"]
    if not isinstance(counters.get("parse_failures", 0), int) or not isinstance(counters.get("failed_asks", {}), dict) \
            or not all(isinstance(v, int) for v in counters.get("failed_asks", {}).values()) \
            or not isinstance(counters.get("asking") or "", str):
        return "counters are malformed"
    ids = [t["id"] for t in data["task_stack"]]
    if len(set(ids)) != len(ids):
        return "task ids are not unique"
    return ""


def load_state(text: Any) -> tuple[dict, list[str]]:
    """Decode a state string: (state, errors). Never raises; unusable input gives a clean state.

    An empty string or None is simply a new conversation and is not an error.
    """
    if text is None or (isinstance(text, str) and not text.strip()):
        return new_state(), []
    if isinstance(text, dict):
        data = text
    elif not isinstance(text, str):
        return new_state(), [f"state is a {type(text).__name__}, not a string; started clean"]
    elif len(text) > MAX_STATE_CHARS:
        return new_state(), [f"state is {len(text)} characters, over the {MAX_STATE_CHARS} limit; started clean"]
    else:
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            return new_state(), [f"state is not valid JSON ({str(exc)[:80]}); started clean"]
    problem = state_problem(data)
    if problem:
        return new_state(), [f"state unusable: {problem}; started clean"]
    state = new_state()
    state.update(data)
    state["counters"] = {**new_counters(), **data["counters"]}
    return state, []


def _sync_derived(state: dict) -> None:
    """Recompute the fields that follow from the stack, kept for people who read the state: the lock and the focus."""
    stack = state["task_stack"]
    state["current_task_id"] = stack[-1]["id"] if stack else None
    state["global_intent_lock"] = "LOCKED" if stack else "UNLOCKED"
    for task in stack[:-1]:
        if task["stage"] != "WAITING":  # a sub-task waiting for its parent says so (docs/design.md)
            task["stage"] = "SUSPENDED"


def dump_state(state: dict) -> str:
    """Encode a state (derived fields refreshed, bounded lists trimmed) as compact JSON."""
    _sync_derived(state)
    state["errors"] = state["errors"][-MAX_ERRORS:]
    state["timeline"] = state["timeline"][-MAX_TIMELINE:]
    state["done"] = state["done"][-MAX_DONE:]
    return json.dumps(state, ensure_ascii=False, separators=(",", ":"))


def current_task(state: dict) -> dict | None:
    """The task in focus: the top of the stack."""
    return state["task_stack"][-1] if state["task_stack"] else None


def find_task(state: dict, task_id: str) -> dict | None:
    """The open task with this id."""
    for task in state["task_stack"]:
        if task["id"] == task_id:
            return task
    return None


def filled_slots(state: dict) -> dict[str, dict]:
    """Every open task's filled slots: {task_id: {slot: value}} (the confirmed facts of the dialogue)."""
    return {task["id"]: dict(task["slots"]) for task in state["task_stack"]}


def add_error(state: dict, code: str, message: str) -> None:
    """Keep an error visible in the state (the last few only)."""
    state["errors"].append({"turn": state["turn"], "code": code, "message": message[:300]})
    del state["errors"][:-MAX_ERRORS]
