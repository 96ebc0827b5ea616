"""The understanding contract: the only thing an LLM produces.

```json
{"rewritten_query": "…", "commands": [{"type": "start_task", "task": "book_restaurant", "slots": {"people": 3}}]}
```

An LLM's raw text is parsed leniently (prose, code fences, trailing commas, truncation: see
:mod:`dskit.base.jsonish`) and each command is checked on its own. What is wrong is dropped *with its
reason* and the rest is kept, so a single hallucinated slot never costs the user the whole message.
Slot values are coerced later, by the state machine, once it knows which open task they go to.
"""

from __future__ import annotations

import json
from typing import Any

from ..catalog.catalog import Catalog, TaskSpec, description_name
from .commands import COMMAND_ALIASES, REGISTRY, Command, command_text
from ..base.jsonish import extract_json, jsonish_scrub

MAX_COMMANDS = 20


def _command_type(raw: dict) -> str:
    for key in ("type", "command", "action", "intent"):
        value = raw.get(key)
        if isinstance(value, str) and value.strip():
            name = value.strip().lower().replace("-", "_").replace(" ", "_")
            return COMMAND_ALIASES.get(name, name)
    return ""


def _resolve_task(catalog: Catalog, value: Any) -> tuple[str | None, str]:
    """A task name from the catalog (its label is accepted too): (name, reason if unknown)."""
    if value is None or value == "":
        return None, ""
    if not isinstance(value, str):
        return None, f"task must be a name, got {type(value).__name__}"
    spec = catalog.task(value.strip())
    if spec is None and value.rstrip().endswith((")", "）")):
        # "book_restaurant (table booking, COLLECTING)": the name as the state view shows it, copied whole
        spec = catalog.task(value.replace("（", "(").partition("(")[0].strip())
    if spec is None:
        spec = task_begun(catalog, value)
    if spec is None:
        return None, f"unknown task {value!r}"
    return spec.name, ""


def _task_words(spec: TaskSpec) -> tuple[str, ...]:
    """The words a task goes by: its name, its label, its description's first phrase."""
    return tuple(word for word in (spec.name, spec.label, description_name(spec.description)) if word)


def task_begun(catalog: Catalog, value: str) -> TaskSpec | None:
    """The task a model named by a longer word that begins with one of the task's own words.

    Small models extend a task's name: "出租车" for the task 出租, "找酒店" for the task described
    "找酒店：按名称…" (or that description copied whole), "book_restaurant_task", the state view's line
    "酒店（酒店，COLLECTING）：…". The word must *begin* with the task's word ("取消订餐" never reads as
    订餐), the rest of it must not name another task ("餐馆和景点" names two), and the word must not be a
    slot's own name or label (a slot named as a task is not that task). The longest beginning wins;
    two tasks tied are none.
    """
    word = value.strip()
    if not word:
        return None
    for spec in catalog.tasks.values():
        if any(word in (slot.name, slot.label) for slot in spec.slots.values()):
            return None
    found: dict[str, tuple[int, TaskSpec]] = {}
    for spec in catalog.tasks.values():
        for head in _task_words(spec):
            if word.startswith(head) and len(head) > found.get(spec.name, (0, spec))[0]:
                found[spec.name] = (len(head), spec)
    if not found:
        return None
    ranked = sorted(found.values(), key=lambda item: -item[0])
    if len(ranked) > 1 and ranked[0][0] == ranked[1][0]:
        return None
    length, spec = ranked[0]
    rest = word[length:]
    others = (head for other in catalog.tasks.values() if other.name != spec.name for head in _task_words(other))
    return None if any(head in rest for head in others) else spec


def _normalize(raw: Any, catalog: Catalog) -> tuple[Command | None, str]:
    """One command as its typed value, or (None, why it was dropped): the command's class reads it."""
    if not isinstance(raw, dict):
        return None, "a command must be an object"
    kind = _command_type(raw)
    if kind not in REGISTRY and kind and catalog.task(kind) is not None and not raw.get("task"):
        raw = {**raw, "task": catalog.task(kind).name}  # {"type": "weather", ...}: small models name the task
        kind = "start_task"
    if kind not in REGISTRY:
        return None, f"unknown command type {kind!r}" if kind else "command has no type"
    task, reason = _resolve_task(catalog, raw.get("task"))
    if reason:
        return None, reason
    command = REGISTRY[kind].read(raw, task, catalog)
    return (None, command) if isinstance(command, str) else (command, "")


def _commands_of(data: Any) -> tuple[list | None, str, str]:
    """Find the command list and the rewritten query in whatever shape the model produced."""
    if isinstance(data, list):
        return data, "", ""
    if not isinstance(data, dict):
        return None, "", "the output is not a JSON object"
    query = command_text(data.get("rewritten_query") or data.get("query") or "")
    commands = data.get("commands")
    if commands is None and _command_type(data):
        commands = [data]
    if isinstance(commands, dict):
        commands = [commands]
    if not isinstance(commands, list):
        return None, query, "no commands list"
    return commands, query, ""


def _copy(raw: Any) -> tuple[Any, str]:
    """A private, surrogate-free copy of an already decoded understanding (the caller's stays as it was)."""
    try:
        return jsonish_scrub(json.loads(json.dumps(raw, ensure_ascii=False))), ""
    except (TypeError, ValueError, RecursionError) as exc:
        return None, f"not JSON data ({type(exc).__name__})"


def parse_understanding(raw: Any, catalog: Catalog) -> dict:
    """Parse and check an LLM's understanding output. Never raises.

    ``commands`` are typed values (:mod:`dskit.turn.commands`). ``usable`` is False when nothing could be
    read, or when every command was invalid: the machine then asks the user to rephrase instead of
    guessing.
    """
    result = {"usable": False, "rewritten_query": "", "commands": [], "dropped": [], "error": ""}
    try:
        if isinstance(raw, (str, bytes)):
            text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
            data, error = extract_json(text, prefer_keys=("commands",))
        else:
            data, error = _copy(raw)
        if error:
            result["error"] = f"unreadable understanding: {error}"
            return result
        commands, query, error = _commands_of(data)
        result["rewritten_query"] = query
        if commands is None:
            result["error"] = f"unreadable understanding: {error}"
            return result
        if len(commands) > MAX_COMMANDS:
            result["dropped"].append({"command": f"{len(commands) - MAX_COMMANDS} more commands",
                                      "reason": f"more than {MAX_COMMANDS} commands in one message"})
            commands = commands[:MAX_COMMANDS]
        for item in commands:
            command, reason = _normalize(item, catalog)
            if command is None:
                result["dropped"].append({"command": item, "reason": reason})
            else:
                result["commands"].append(command)
        if commands and not result["commands"]:
            result["error"] = "no valid command: " + "; ".join(d["reason"] for d in result["dropped"])
            return result
        result["usable"] = True
        return result
    except Exception as exc:  # the contract: never raise on model output
        result.update(usable=False, commands=[], error=f"unreadable understanding ({type(exc).__name__})")
        return result
