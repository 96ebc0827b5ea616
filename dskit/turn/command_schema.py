"""The understanding contract as a JSON schema built from the catalog, for servers that constrain output.

Why a schema: a small model asked for JSON writes JSON, but not always ours. It names a task the
catalog does not have, puts a slot under the wrong task, writes a time as "周六晚上" or a count as
"三个人", and pads its answer with slots nobody mentioned (``"budget": ""``). The engine drops each
of these with a reason (:mod:`dskit.turn.understanding`), but the model's attention went to them, and a
dropped value is a value the user has to say again. A server that decodes under a JSON schema
(llama.cpp's grammars, vLLM's guided decoding, OpenAI's structured outputs) can only write what the
schema allows: command types from the registry, the catalog's task names, for each task only its own
slots, each slot in its type (an integer for a count, true/false for a yes/no slot, one of the enum's
values or aliases, the slot's own pattern when it is anchored), and no empty string.

What it cannot do, and why the engine does not rely on it: it does not make a value *right* (a wrong
day is as valid as the right one), it cannot tell a said value from a padded ``false``, and a server
without structured output ignores it. Every check of :mod:`dskit.turn.understanding` and the admission
rules stays; the schema only narrows what a model can get wrong. The plain path (no schema) is
always there: a server that refuses the schema gets the same prompt without it.

The schema is Draft 7 and uses only what the constraining servers support (``anyOf``, ``const``,
``enum``, ``properties``, ``required``, ``additionalProperties``, ``items``, ``maxItems``,
``minLength``, anchored ``pattern``): llama.cpp's converter rejects an unanchored pattern, so a
catalog pattern without ``^…$`` is left to the engine's own check. Properties are listed in the
order a model should write them (``type`` first, then ``task``, then ``slots``): a constraining
server writes them in that order.

Standard library only: it runs in the plugin and may be embedded in generated files.
"""

from __future__ import annotations

from typing import Any

from ..catalog.catalog import Catalog, SlotSpec, TaskSpec

# A message with more commands than this is a model looping, not a user (the parser caps at 20).
SCHEMA_MAX_COMMANDS = 8
SCHEMA_NAME = "understanding"
# The commands that take no field but their type (their extra fields are ignored by the parser).
_BARE = ("deny", "chitchat", "reset", "cannot_handle")


def slot_value_schema(slot: SlotSpec, *, nullable: bool = False) -> dict[str, Any]:
    """What one slot's value may be: its type, its enum (values and aliases), its anchored pattern;
    a list slot also takes a list of such values; ``nullable`` adds null (a slot the user takes away)."""
    one: dict[str, Any]
    if slot.type == "boolean":
        one = {"type": "boolean"}
    elif slot.type in ("integer", "number"):
        one = {"type": slot.type}
        if slot.minimum is not None:
            one["minimum"] = slot.minimum
        if slot.maximum is not None:
            one["maximum"] = slot.maximum
    elif slot.enum:
        words = [str(v) for v in slot.enum] + [str(k) for k in slot.aliases if str(k) not in map(str, slot.enum)]
        one = {"type": "string", "enum": list(dict.fromkeys(words))}
    elif grammar_pattern(slot.pattern):
        one = {"type": "string", "pattern": grammar_pattern(slot.pattern)}
    else:
        one = {"type": "string", "minLength": 1}
    options = [one]
    if slot.multiple:
        options.append({"type": "array", "items": one, "minItems": 1})
    if nullable:
        options.append({"type": "null"})
    return options[0] if len(options) == 1 else {"anyOf": options}


def grammar_pattern(pattern: str) -> str:
    """A slot's pattern in the form a grammar-constrained server can compile, or "" to leave it out.

    llama.cpp turns a schema pattern into a grammar only when it is anchored (``^…$``) and knows no
    escape classes: ``\\d`` fails to parse there — and llama-cpp-python 0.3.36 then crashes rather
    than refuse the request. So ``\\d`` is written ``[0-9]`` (what a model writes for a digit anyway)
    and a pattern with any other backslash is left to the engine's own check."""
    if not pattern or not pattern.startswith("^") or not pattern.endswith("$"):
        return ""
    plain = pattern.replace("\\d", "[0-9]")
    return "" if "\\" in plain else plain


def slots_schema(task: TaskSpec, *, nullable: bool = False) -> dict[str, Any]:
    """The ``slots`` object of a command for ``task``: only its own slots, none required."""
    return {"type": "object",
            "properties": {name: slot_value_schema(slot, nullable=nullable) for name, slot in task.slots.items()},
            "additionalProperties": False}


def _command(kind: str, fields: dict[str, Any] | None = None, required: tuple[str, ...] = ()) -> dict[str, Any]:
    properties = {"type": {"const": kind}, **(fields or {})}
    return {"type": "object", "properties": properties, "required": ["type", *required],
            "additionalProperties": False}


def task_commands(task: TaskSpec) -> list[dict[str, Any]]:
    """The commands that name ``task``: start it, set its slots, take one of them back."""
    name = {"const": task.name}
    commands = [_command("start_task", {"task": name, "slots": slots_schema(task)}, ("task",))]
    if task.slots:
        commands.append(_command("set_slots", {"task": name, "slots": slots_schema(task, nullable=True)},
                                 ("task", "slots")))
        commands.append(_command("rollback_slot", {"task": name, "slot": {"enum": list(task.slots)}},
                                 ("task", "slot")))
    return commands


def command_schema(catalog: Catalog) -> dict[str, Any]:
    """The JSON schema of an understanding answer for ``catalog``: ``{"rewritten_query", "commands"}``,
    each command one of the registry's kinds with the catalog's tasks and slots (module docstring)."""
    names = {"enum": list(catalog.tasks)}
    text = {"type": "string", "minLength": 1}
    commands: list[dict[str, Any]] = []
    for task in catalog.tasks.values():
        commands += task_commands(task)
    commands += [
        _command("cancel_task", {"task": names}, ("task",)),
        _command("confirm", {"task": names}),
        _command("faq", {"question": text}, ("question",)),
        _command("handoff", {"reason": text}),
        *(_command(kind) for kind in _BARE),
    ]
    return {"type": "object",
            "properties": {"rewritten_query": {"type": "string"},
                           "commands": {"type": "array", "items": {"anyOf": commands},
                                        "maxItems": SCHEMA_MAX_COMMANDS}},
            "required": ["rewritten_query", "commands"], "additionalProperties": False}


def schema_kinds(schema: dict[str, Any]) -> set[str]:
    """The command types a schema allows (what tests compare with the command registry)."""
    items = schema["properties"]["commands"]["items"]["anyOf"]
    return {item["properties"]["type"]["const"] for item in items}


__all__ = ["SCHEMA_MAX_COMMANDS", "SCHEMA_NAME", "command_schema", "schema_kinds", "slot_value_schema",
           "slots_schema", "task_commands"]
