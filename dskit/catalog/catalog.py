"""The task catalog: which tasks exist, which slots they need, and how values are validated.

The catalog is a JSON string so that it can live in a Dify environment variable (``TASK_CATALOG``).
It is the contract between the person who designs the assistant and the engine: the LLM may only
start tasks and fill slots that the catalog names, and every value is coerced to the slot's type
here, one value at a time, so that one bad value never spoils the rest of a message.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..base.numerals import parse_cn_number
from ..base.jsonish import jsonish_scrub, scrub_surrogates
from ..base.limits import MAX_VARIABLE_SIZE, segment_size
from ..base.redos import redos_problem
from ..base.text import is_int, without_controls
from ..base.tokens import estimate_tokens

SLOT_TYPES = ("string", "integer", "number", "boolean")
TASK_KINDS = ("multi_turn", "single_turn")
# Names may be Chinese (CrossWOZ uses 景点, 酒店设施 ...): unicode word characters and '-'.
NAME_RE = re.compile(r"^[\w\-]{1,64}$")
# Dify's number limits for code-node outputs; values beyond them could not travel through a node.
NUMBER_LIMIT = 2 ** 63
# The longest string value a slot takes, in characters, unless the slot sets ``max_length``. Longer
# values are refused before any matching, so a pattern never runs on more than this.
DEFAULT_MAX_LENGTH = 500
# The largest ``max_length`` a catalog may set: a slot holds a value, not a document.
MAX_LENGTH_LIMIT = 5_000
# A ``multiple`` slot keeps at most this many items.
MAX_SLOT_ITEMS = 20
# The most characters one task's slot values may take at their longest (sum over its slots of each
# slot's largest value): keeps a task within a share of the state's size limit (dskit.base.limits).
TASK_VALUES_MAX_CHARS = 20_000
# Task and slot labels are shown to users and copied into the state: a name, not a paragraph.
LABEL_MAX_CHARS = 200
# A pattern longer than this is refused: slot patterns are short, and the ReDoS check stays cheap.
PATTERN_MAX_CHARS = 1_000
# What fits (docs/catalog.md, "Size: what fits"). TASK_CATALOG is a Dify environment variable, and Dify
# builds environment variables with the same factory as conversation variables: one over MAX_VARIABLE_SIZE
# (dskit.base.limits, 200 KiB as Dify measures it) fails every run before any node. The catalog is measured
# as compact JSON, the form ``dskit new`` writes into the Chatflow files.
CATALOG_MAX_SIZE = MAX_VARIABLE_SIZE
# The understanding prompt shows the catalog's task list (:func:`catalog_compact`) on every turn, whole:
# nothing cuts it. Its budget (dskit.context.context.CONTEXT_TOTAL_BUDGET) must also hold the user's message (the
# share dskit.context.prompts.PROMPT_LATEST_RESERVE_TOKENS keeps for it), the recent turns (the history zone's
# budget, dskit.context.context.CONTEXT_ZONE_BUDGETS["history"]: without them "yes" or "the second one" cannot be
# read) and the state (never cut either). The context and the prompts import this module, so the figures
# are repeated here; tests/test_catalog_fit.py holds them equal to their sources.
PROMPT_TOTAL_TOKENS = 3_000
PROMPT_MESSAGE_TOKENS = 200
PROMPT_HISTORY_TOKENS = 360
# What the catalog's task list and the state it makes may take together: 2,440 tokens.
CATALOG_PROMPT_MAX_TOKENS = PROMPT_TOTAL_TOKENS - PROMPT_MESSAGE_TOKENS - PROMPT_HISTORY_TOKENS
# The state the model reads (dskit.state.views.state_text) is estimated for the catalog's largest task twice
# (open, and done right after: the state shows both), every slot filled: a value of an enum at its longest,
# a boolean 2 tokens, anything else STATE_VALUE_TOKENS (a date or a phone number written out; digits cost a
# token and a half each), a ``multiple`` slot STATE_LIST_ITEMS of them; plus ZONE_HEADERS_TOKENS for the
# headers of the catalog and state zones and the blank lines between zones.
STATE_VALUE_TOKENS = 16
STATE_LIST_ITEMS = 3
ZONE_HEADERS_TOKENS = 24
# A slot's question is every reply that asks for it and is kept in the history, whose zone in the next
# prompt has PROMPT_HISTORY_TOKENS: a longer question would push the turn itself out of what the model reads.
ASK_MAX_TOKENS = PROMPT_HISTORY_TOKENS
# The app's name: Dify keeps an app's name in 255 characters, and ``dskit new`` adds the layout after it.
NAME_MAX_CHARS = LABEL_MAX_CHARS
# Numbers and booleans are never written with more characters than this; longer text is refused
# before any parsing (no regular expression ever sees it).
_SCALAR_TEXT_MAX = 100
_TASK_KEYS = {"label", "description", "kind", "confirm", "read_only", "depends_on", "depends_on_slots", "slots",
              "examples"}
_SLOT_KEYS = {"type", "required", "ask", "label", "description", "enum", "aliases", "multiple",
              "minimum", "maximum", "pattern", "max_length"}
_POLICY_DEFAULTS = {"max_attempts": 3, "max_parse_failures": 3, "max_stack": 5}
# Policy fields that take one of a few words (docs/catalog.md, "Policy"; docs/grounding.md).
_POLICY_CHOICES = {"ungrounded": ("drop", "ask")}
_TOP_KEYS = {"version", "tasks", "policy", "language", "name", "description"}
# Catalog text is data. Where it lands in a template, Dify renders ``{{#node.var#}}`` (a question-classifier
# class name and an extractor's prompt go through graphon's convert_template) and Jinja2 renders
# ``{{ }}``, ``{% %}`` and ``{# #}``, so a label could paste the user's message or the whole state into a
# prompt. A catalog text holding any of these delimiters, even half of a pair (two texts may be joined),
# is refused with its JSON path (docs/catalog.md, "Catalog text is data").
TEMPLATE_DELIMITERS = ("{{", "}}", "{%", "%}", "{#", "#}")


class CatalogError(ValueError):
    """A catalog that cannot be used; ``problems`` lists every problem with its JSON path."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("invalid task catalog:\n" + "\n".join(f"- {p}" for p in self.problems))


@dataclass(frozen=True)
class SlotSpec:
    """One slot of a task; see docs/catalog.md for the meaning of each field."""

    name: str
    type: str = "string"
    required: bool = False
    ask: str = ""
    label: str = ""
    description: str = ""
    enum: tuple = ()
    aliases: dict = field(default_factory=dict)
    multiple: bool = False
    minimum: float | None = None
    maximum: float | None = None
    pattern: str = ""
    max_length: int = DEFAULT_MAX_LENGTH

    @property
    def display(self) -> str:
        """The name shown to end users: the label, else the description's first phrase, else the name
        (``dskit validate`` warns about a slot that has neither label nor description)."""
        return self.label or description_name(self.description) or self.name


def description_name(description: str) -> str:
    """A description's first phrase as a display name ("用餐日期，保留用户原话" -> "用餐日期"); "" when
    the description is empty or its first phrase is too long to read as a name."""
    head = re.split(r"[，,。.;；:：(（\n]", description.strip(), maxsplit=1)[0].strip()
    return head if 0 < len(head) <= 16 else ""


@dataclass(frozen=True)
class TaskSpec:
    """One task: its slots in ask order, whether it needs confirmation, what it depends on."""

    name: str
    label: str = ""
    description: str = ""
    kind: str = "multi_turn"
    confirm: bool = True
    read_only: bool = False
    depends_on: str | None = None
    depends_on_slots: tuple = ()
    slots: dict = field(default_factory=dict)
    examples: tuple = ()

    @property
    def display(self) -> str:
        """The name shown to end users: the label if there is one."""
        return self.label or self.name


@dataclass(frozen=True)
class Policy:
    """Limits for the handoff policy and the task stack."""

    max_attempts: int = 3
    max_parse_failures: int = 3
    max_stack: int = 5
    ungrounded: str = "drop"  # what happens to a value the user did not say: "drop" or "ask"


@dataclass(frozen=True)
class Catalog:
    """A validated catalog; build it with :func:`load_catalog`."""

    version: int
    tasks: dict
    policy: Policy
    language: str = "zh"
    # The mark of the JSON text it was loaded from (dskit.turn.machine.catalog_mark), when the caller gave it.
    mark: str = ""

    def task(self, name: str) -> TaskSpec | None:
        """The task called ``name`` (or whose label is ``name``), else None."""
        if name in self.tasks:
            return self.tasks[name]
        for spec in self.tasks.values():
            if spec.label and spec.label == name:
                return spec
        return None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _show(value: Any, limit: int = 40) -> str:
    """A value quoted for a reason or a problem, cut short: reasons are stored in the state's timeline."""
    try:
        text = repr(value)
    except RecursionError:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit - 1] + "…"


def slot_max_chars(slot: Any) -> int:
    """The most characters one stored value of a slot definition can have (a list counts its items).

    ``slot`` is a raw slot definition (dict); validation uses this to bound a task's size.
    """
    slot_type = slot.get("type", "string")
    enum = slot.get("enum")
    if isinstance(enum, list) and enum:
        longest = max(len(str(item)) for item in enum)
    elif slot_type == "string":
        longest = slot.get("max_length", DEFAULT_MAX_LENGTH)
        longest = longest if is_int(longest) else DEFAULT_MAX_LENGTH
    elif slot_type == "boolean":
        longest = 5
    else:
        longest = 24  # the longest repr of a float or an integer within ±2^63
    return longest * (MAX_SLOT_ITEMS if slot.get("multiple") is True else 1)


def _value_fits_type(value: Any, slot_type: str) -> bool:
    if slot_type == "string":
        return isinstance(value, str)
    if slot_type == "integer":
        return is_int(value)
    if slot_type == "number":
        return _is_number(value)
    return isinstance(value, bool)


def _check_slot(path: str, name: str, slot: Any) -> list[str]:
    """Every problem of one slot definition."""
    problems: list[str] = []
    if not NAME_RE.match(name):
        problems.append(f"{path}: slot name must be 1-64 letters, digits, '_' or '-'")
    if not isinstance(slot, dict):
        return problems + [f"{path}: must be an object"]
    for key in slot:
        if key not in _SLOT_KEYS and not key.startswith(("x-", "_")):
            problems.append(f"{path}.{key}: unknown field (allowed: {', '.join(sorted(_SLOT_KEYS))})")
    slot_type = slot.get("type", "string")
    if slot_type not in SLOT_TYPES:
        problems.append(f"{path}.type: must be one of {', '.join(SLOT_TYPES)}")
        slot_type = "string"
    for key in ("required", "multiple"):
        if key in slot and not isinstance(slot[key], bool):
            problems.append(f"{path}.{key}: must be true or false")
    for key in ("ask", "label", "description", "pattern"):
        if key in slot and not isinstance(slot[key], str):
            problems.append(f"{path}.{key}: must be a string")
    if isinstance(slot.get("label"), str) and len(slot["label"]) > LABEL_MAX_CHARS:
        problems.append(f"{path}.label: longer than {LABEL_MAX_CHARS} characters")
    max_length = slot.get("max_length", DEFAULT_MAX_LENGTH)
    if "max_length" in slot:
        if slot_type != "string":
            problems.append(f"{path}.max_length: only string slots have a max_length")
        elif not is_int(max_length) or not 1 <= max_length <= MAX_LENGTH_LIMIT:
            problems.append(f"{path}.max_length: must be an integer from 1 to {MAX_LENGTH_LIMIT}")
    if not is_int(max_length) or not 1 <= max_length <= MAX_LENGTH_LIMIT:
        max_length = DEFAULT_MAX_LENGTH
    enum = slot.get("enum")
    if enum is not None:
        if not isinstance(enum, list) or not enum:
            problems.append(f"{path}.enum: must be a non-empty list")
        else:
            for i, item in enumerate(enum):
                if not _value_fits_type(item, slot_type):
                    problems.append(f"{path}.enum[{i}]: {_show(item)} is not a {slot_type}")
                elif isinstance(item, str) and len(item) > max_length:
                    problems.append(f"{path}.enum[{i}]: longer than max_length ({max_length} characters)")
            problems += _enum_duplicates(f"{path}.enum", enum)
    if isinstance(slot.get("ask"), str) and estimate_tokens(slot["ask"]) > ASK_MAX_TOKENS:
        problems.append(f"{path}.ask: {estimate_tokens(slot['ask']):,} tokens, over the {ASK_MAX_TOKENS} a question "
                        "may take: every reply that asks for this slot carries it, and the recent turns the model "
                        f"reads next have {PROMPT_HISTORY_TOKENS} tokens in all - ask in a sentence or two")
    aliases = slot.get("aliases")
    if aliases is not None:
        if not isinstance(aliases, dict):
            problems.append(f"{path}.aliases: must be an object mapping a phrase to a value")
        else:
            lowered = {a.strip().lower(): t for a, t in aliases.items()}
            for alias, target in aliases.items():
                if not _value_fits_type(target, slot_type):
                    problems.append(f"{path}.aliases.{alias}: {_show(target)} is not a {slot_type}")
                elif isinstance(enum, list) and enum and target not in enum:
                    problems.append(f"{path}.aliases.{alias}: {_show(target)} is not in enum")
                elif isinstance(target, str) and len(target) > max_length:
                    problems.append(f"{path}.aliases.{alias}: longer than max_length ({max_length} characters)")
                elif isinstance(target, str) and target.strip().lower() in lowered and \
                        lowered[target.strip().lower()] != target:
                    problems.append(f"{path}.aliases.{alias}: {_show(target)} is itself an alias of "
                                    "another value (a stored value would change on the next turn)")
    for key in ("minimum", "maximum"):
        if key in slot:
            if slot_type not in ("integer", "number"):
                problems.append(f"{path}.{key}: only integer and number slots have a {key}")
            elif not _is_number(slot[key]) or abs(slot[key]) >= NUMBER_LIMIT:
                problems.append(f"{path}.{key}: must be a number within ±2^63")
    if (_is_number(slot.get("minimum")) and _is_number(slot.get("maximum"))
            and slot["minimum"] > slot["maximum"]):
        problems.append(f"{path}.minimum: greater than maximum")
    if isinstance(slot.get("pattern"), str) and slot.get("pattern"):
        problems += _check_pattern(f"{path}.pattern", slot["pattern"], slot_type)
    return problems


def _enum_key(item: Any) -> Any:
    """What the engine tells enum values apart by: text stripped and case-folded as :func:`_match_enum`
    compares it, numbers by value (1 and 1.0 are one), booleans as themselves."""
    if isinstance(item, str):
        return ("text", item.strip().lower())
    if isinstance(item, bool):
        return ("bool", item)
    return ("number", item) if _is_number(item) else ("other", repr(item))


def _enum_duplicates(path: str, enum: list) -> list[str]:
    """An enum value that repeats an earlier one, also in another case ("Cash", "cash"): refused.

    Why refuse rather than keep the first with a warning: the engine matches a value ignoring case, so
    "Cash" and "cash" are one choice to the user, yet the value stored (and sent to the task API) would
    follow the model's spelling, and the classic Chatflow's extractor would offer the model both. Only the
    author knows which spelling the API expects; a silent choice could be the wrong one.
    """
    problems, first = [], {}
    for i, item in enumerate(enum):
        key = _enum_key(item)
        if key in first:
            j = first[key]
            if item == enum[j] and type(item) is type(enum[j]):
                problems.append(f"{path}[{i}]: {_show(item)} repeats enum[{j}] - remove the repeat")
            else:
                problems.append(f"{path}[{i}]: {_show(item)} is enum[{j}] ({_show(enum[j])}) in another spelling; "
                                "values are matched ignoring case, so the two are one value to the user and which "
                                "one your task API receives would depend on how the model spelled it - keep the "
                                "spelling the API expects")
        else:
            first[key] = i
    return problems


def _check_pattern(path: str, pattern: str, slot_type: str) -> list[str]:
    """A slot pattern must compile and must not backtrack catastrophically (it runs on users' text)."""
    if slot_type != "string":
        return [f"{path}: only string slots have a pattern"]
    if len(pattern) > PATTERN_MAX_CHARS:
        return [f"{path}: longer than {PATTERN_MAX_CHARS} characters"]
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError, ValueError) as exc:
        return [f"{path}: not a valid regular expression ({str(exc)[:120]})"]
    problem = redos_problem(pattern)
    if problem:
        return [f"{path}: refused, a user's text can make it backtrack for minutes (ReDoS): {problem}"]
    return []


def _check_task(path: str, name: str, task: Any, all_tasks: dict) -> list[str]:
    """Every problem of one task definition (its slots included)."""
    problems: list[str] = []
    if not NAME_RE.match(name):
        problems.append(f"{path}: task name must be 1-64 letters, digits, '_' or '-'")
    if not isinstance(task, dict):
        return problems + [f"{path}: must be an object"]
    for key in task:
        if key not in _TASK_KEYS and not key.startswith(("x-", "_")):
            problems.append(f"{path}.{key}: unknown field (allowed: {', '.join(sorted(_TASK_KEYS))})")
    for key in ("label", "description"):
        if key in task and not isinstance(task[key], str):
            problems.append(f"{path}.{key}: must be a string")
    if isinstance(task.get("label"), str) and len(task["label"]) > LABEL_MAX_CHARS:
        problems.append(f"{path}.label: longer than {LABEL_MAX_CHARS} characters")
    if task.get("kind", "multi_turn") not in TASK_KINDS:
        problems.append(f"{path}.kind: must be one of {', '.join(TASK_KINDS)}")
    for key in ("confirm", "read_only"):
        if key in task and not isinstance(task[key], bool):
            problems.append(f"{path}.{key}: must be true or false")
    parent = task.get("depends_on")
    if parent is not None:
        if not isinstance(parent, str) or parent not in all_tasks:
            problems.append(f"{path}.depends_on: {_show(parent)} is not a task in this catalog")
        elif parent == name:
            problems.append(f"{path}.depends_on: a task cannot depend on itself")
    dep_slots = task.get("depends_on_slots")
    if dep_slots is not None:
        parent_slots = {}
        if isinstance(parent, str) and isinstance(all_tasks.get(parent), dict):
            parent_slots = all_tasks[parent].get("slots") or {}
        if not isinstance(dep_slots, list) or not all(isinstance(s, str) for s in dep_slots):
            problems.append(f"{path}.depends_on_slots: must be a list of slot names")
        elif parent is None:
            problems.append(f"{path}.depends_on_slots: needs depends_on")
        else:
            for s in dep_slots:
                if isinstance(parent_slots, dict) and s not in parent_slots:
                    problems.append(f"{path}.depends_on_slots: {_show(s)} is not a slot of {parent}")
    examples = task.get("examples")
    if examples is not None and (not isinstance(examples, list)
                                 or not all(isinstance(e, str) for e in examples)):
        problems.append(f"{path}.examples: must be a list of strings")
    slots = task.get("slots", {})
    if not isinstance(slots, dict):
        problems.append(f"{path}.slots: must be an object")
    else:
        for slot_name, slot in slots.items():
            problems += _check_slot(f"{path}.slots.{slot_name}", slot_name, slot)
        size = sum(len(str(n)) + slot_max_chars(s) for n, s in slots.items() if isinstance(s, dict))
        if size > TASK_VALUES_MAX_CHARS:
            problems.append(f"{path}.slots: at their longest these slots hold {size} characters, over the "
                            f"{TASK_VALUES_MAX_CHARS} a task may take in the state (Dify limits a conversation "
                            "variable); lower max_length or split the task")
    return problems


def _check_cycles(tasks: dict) -> list[str]:
    """depends_on must not loop (a -> b -> a), or cascades would never end."""
    problems = []
    for start in tasks:
        seen = [start]
        node = tasks[start].get("depends_on") if isinstance(tasks[start], dict) else None
        while isinstance(node, str) and node in tasks:
            if node in seen:
                if node == start and len(seen) > 1:
                    problems.append(f"$.tasks.{start}.depends_on: cycle {' -> '.join(seen + [node])}")
                break
            seen.append(node)
            node = tasks[node].get("depends_on") if isinstance(tasks[node], dict) else None
    return problems


def _data(data: Any) -> tuple[Any, str]:
    """The catalog as a private, surrogate-free JSON value: (data, problem)."""
    try:
        if isinstance(data, (str, bytes)):
            data = json.loads(data)
        else:
            data = json.loads(json.dumps(data, ensure_ascii=False))
    except RecursionError:
        return None, "$: nested too deeply"
    except (ValueError, TypeError) as exc:
        return None, f"$: not valid JSON ({str(exc)[:200]})"
    return jsonish_scrub(data), ""


def validate_catalog(data: Any) -> list[str]:
    """Every problem of a catalog (a dict or its JSON text), each with its JSON path; [] when valid.

    Never raises.
    """
    if isinstance(data, Catalog):
        return []
    data, problem = _data(data)
    if problem:
        return [problem]
    try:
        return _validate(data)
    except RecursionError:
        return ["$: nested too deeply"]


def template_syntax(text: Any) -> str:
    """The first template delimiter in ``text`` with a little context ('' when none): see
    :data:`TEMPLATE_DELIMITERS`. Plain ``str.find`` per delimiter, so linear in the text's length."""
    if not isinstance(text, str):
        return ""
    found = [(i, d) for d in TEMPLATE_DELIMITERS if (i := text.find(d)) >= 0]
    if not found:
        return ""
    start, _delimiter = min(found)
    return text[start:start + 30]


def _texts(data: dict) -> list[tuple[str, Any]]:
    """(JSON path, text) of every catalog text that can reach a prompt, a class name, an answer or a
    template: names and descriptions, labels, ask texts, examples, enum values and aliases."""
    texts: list[tuple[str, Any]] = [("$.name", data.get("name")), ("$.description", data.get("description"))]
    tasks = data.get("tasks")
    for name, task in (tasks.items() if isinstance(tasks, dict) else ()):
        if not isinstance(task, dict):
            continue
        path = f"$.tasks.{name}"
        texts += [(f"{path}.label", task.get("label")), (f"{path}.description", task.get("description"))]
        examples = task.get("examples")
        texts += [(f"{path}.examples[{i}]", e) for i, e in enumerate(examples if isinstance(examples, list) else ())]
        slots = task.get("slots")
        for slot_name, slot in (slots.items() if isinstance(slots, dict) else ()):
            if not isinstance(slot, dict):
                continue
            where = f"{path}.slots.{slot_name}"
            texts += [(f"{where}.{key}", slot.get(key)) for key in ("ask", "label", "description")]
            enum = slot.get("enum")
            texts += [(f"{where}.enum[{i}]", v) for i, v in enumerate(enum if isinstance(enum, list) else ())]
            aliases = slot.get("aliases")
            for alias, target in (aliases.items() if isinstance(aliases, dict) else ()):
                texts += [(f"{where}.aliases", alias), (f"{where}.aliases.{alias}", target)]
    return texts


def _template_problems(data: dict) -> list[str]:
    """Catalog text holding template syntax (:data:`TEMPLATE_DELIMITERS`), one problem per text."""
    problems = []
    for path, text in _texts(data):
        found = template_syntax(text)
        if found:
            problems.append(f"{path}: holds template syntax ({_show(found)}); catalog text is data, "
                            "and Dify ({{#...#}}) or Jinja2 ({{ }}, {% %}, {# #}) would render it where it "
                            "becomes a class name or part of a prompt - remove the braces")
    return problems


def _validate(data: Any) -> list[str]:
    if not isinstance(data, dict):
        return ["$: must be a JSON object"]
    too_large = _size_problem(data)
    if too_large:  # nothing else is worth listing: the catalog must lose most of itself first
        return [too_large]
    problems: list[str] = _template_problems(data)
    for key in ("name", "description"):
        if key in data and not isinstance(data[key], str):
            problems.append(f"$.{key}: must be a string")
    if isinstance(data.get("name"), str) and len(data["name"]) > NAME_MAX_CHARS:
        problems.append(f"$.name: {len(data['name']):,} characters, over the {NAME_MAX_CHARS} a name may have "
                        "(dskit new names the Dify app after it, and Dify keeps an app's name in 255 characters)")
    for key in data:
        if key not in _TOP_KEYS and not key.startswith(("x-", "_")):
            problems.append(f"$.{key}: unknown field (allowed: {', '.join(sorted(_TOP_KEYS))})")
    if data.get("version") != 1:
        problems.append("$.version: must be 1")
    if "language" in data and data["language"] not in ("zh", "en"):
        problems.append("$.language: must be \"zh\" or \"en\"")
    tasks = data.get("tasks")
    if not isinstance(tasks, dict) or not tasks:
        problems.append("$.tasks: must be a non-empty object")
        tasks = {}
    for name, task in tasks.items():
        problems += _check_task(f"$.tasks.{name}", name, task, tasks)
    problems += _check_cycles(tasks)
    policy = data.get("policy", {})
    if not isinstance(policy, dict):
        problems.append("$.policy: must be an object")
    else:
        for key, value in policy.items():
            if key in _POLICY_CHOICES:
                problems += _check_policy_choice(key, value)
            elif key not in _POLICY_DEFAULTS and not key.startswith(("x-", "_")):
                allowed = ", ".join([*_POLICY_DEFAULTS, *_POLICY_CHOICES])
                problems.append(f"$.policy.{key}: unknown field (allowed: {allowed})")
            elif key in _POLICY_DEFAULTS and (not is_int(value) or not 1 <= value <= 1000):
                problems.append(f"$.policy.{key}: must be an integer from 1 to 1000")
    return problems or _prompt_problems(data)


def _largest(parts: list[tuple[str, int]], unit: str, count: int = 3) -> str:
    """The ``count`` largest (path, size) parts, largest first: "$.tasks.a.description (4,812 tokens), …"."""
    top = sorted(parts, key=lambda part: -part[1])[:count]
    return ", ".join(f"{path} ({size:,} {unit})" for path, size in top if size > 0)


def _size_problem(data: dict) -> str:
    """The catalog as Dify would store it in TASK_CATALOG, against Dify's variable size ('' when it fits)."""
    size = segment_size(json.dumps(data, ensure_ascii=False, separators=(",", ":")))
    if size <= CATALOG_MAX_SIZE:
        return ""
    parts = [(path, len(text)) for path, text in _texts(data) if isinstance(text, str)]
    tasks = data.get("tasks")
    count = f"; {len(tasks):,} tasks" if isinstance(tasks, dict) else ""
    return (f"$: {size:,} bytes as Dify measures the TASK_CATALOG variable (compact JSON), over the "
            f"{CATALOG_MAX_SIZE:,} it allows (MAX_VARIABLE_SIZE): Dify would refuse the variable and every run "
            f"would fail before any node. Largest texts: {_largest(parts, 'characters') or 'none'}{count}")


def _state_room(catalog: Catalog) -> tuple[int, str]:
    """(tokens, task name): the state the model reads with the catalog's largest task open and, after it
    ran, done, every slot filled (see :data:`STATE_VALUE_TOKENS`); an estimate of ``views.state_text``."""
    best, name = 0, ""
    for task in catalog.tasks.values():
        line = estimate_tokens(f"- current task: {task.name} ({task.display}, CONFIRMING): ")
        for slot in task.slots.values():
            if slot.enum:
                value = max(estimate_tokens(str(v)) for v in slot.enum)
            else:
                value = 2 if slot.type == "boolean" else STATE_VALUE_TOKENS
            line += estimate_tokens(f"{slot.name}=") + value * (STATE_LIST_ITEMS if slot.multiple else 1) + 1
        if line > best:
            best, name = line, task.name
    return ZONE_HEADERS_TOKENS + 2 * best, name


# What to do about a part of the task list that alone is too large, by the end of its JSON path.
_SHORTEN = {"description": "describe it in a sentence or two", "label": "name it in a few words",
            "enum": "keep the values a user chooses between, and map other spellings with aliases (not shown)",
            "slots": "split the task into smaller ones"}


def _prompt_parts(catalog: Catalog) -> list[tuple[str, int]]:
    """(JSON path, tokens) of what the task list shows the model: descriptions, labels, enums, and each
    task's slot lines (names and types), so a refusal can say what to shorten."""
    parts = []
    for task in catalog.tasks.values():
        path = f"$.tasks.{task.name}"
        parts += [(f"{path}.description", estimate_tokens(task.description)),
                  (f"{path}.label", estimate_tokens(task.label))]
        for slot in task.slots.values():
            where = f"{path}.slots.{slot.name}"
            parts += [(f"{where}.description", estimate_tokens(slot.description)),
                      (f"{where}.label", estimate_tokens(slot.label)),
                      (f"{where}.enum", estimate_tokens("|".join(str(v) for v in slot.enum)))]
        parts.append((f"{path}.slots", sum(estimate_tokens(f"    {s.name}: {s.type}; ") for s in task.slots.values())))
    return parts


def _prompt_problems(data: dict) -> list[str]:
    """A valid catalog whose task list and state leave no room in the understanding prompt ([] when they
    fit): one problem for each part that alone is over, else one for the whole list naming its largest parts."""
    catalog = _build(data, "")
    shown = estimate_tokens(catalog_compact(catalog))
    state, task = _state_room(catalog)
    if shown + state <= CATALOG_PROMPT_MAX_TOKENS:
        return []
    room = max(0, CATALOG_PROMPT_MAX_TOKENS - state)
    why = (f"the understanding prompt shows the task list whole on every turn, and its {PROMPT_TOTAL_TOKENS:,} "
           f"tokens must also hold the user's message ({PROMPT_MESSAGE_TOKENS}), the recent turns "
           f"({PROMPT_HISTORY_TOKENS}) and the state (about {state:,} with {task} open and done), which leaves the "
           f"task list {room:,}")
    parts = _prompt_parts(catalog)
    alone = [f"{path}: {size:,} tokens in the understanding prompt, more than the whole task list may take: {why}"
             f" - {_SHORTEN[path.rsplit('.', 1)[1]]}" for path, size in parts if size > room]
    if alone:
        return alone
    tasks, slots = len(catalog.tasks), sum(len(t.slots) for t in catalog.tasks.values())
    largest = _largest(parts, "tokens")
    return [f"$.tasks: the task list takes {shown:,} tokens of the understanding prompt ({tasks:,} tasks, about "
            f"{shown // tasks:,} tokens each, with {slots:,} slots); {why} - "
            + (f"shorten the largest parts ({largest}), or " if largest else "")
            + "split the tasks between several assistants"]


def _check_policy_choice(key: str, value: Any) -> list[str]:
    choices = _POLICY_CHOICES[key]
    if value in choices:
        return []
    return [f"$.policy.{key}: must be one of " + ", ".join(f'"{c}"' for c in choices)]


def confirm_default(raw: dict) -> bool:
    """Whether a task asks the user to confirm before it runs: its ``confirm``, else yes unless it is
    ``read_only`` (an enquiry changes nothing, so it may run at once; anything else acts for the user)."""
    if isinstance(raw.get("confirm"), bool):
        return raw["confirm"]
    return not raw.get("read_only", False)


def _build_slot(name: str, raw: dict) -> SlotSpec:
    return SlotSpec(
        name=name,
        type=raw.get("type", "string"),
        required=raw.get("required", False),
        ask=raw.get("ask", ""),
        label=raw.get("label", ""),
        description=raw.get("description", ""),
        enum=tuple(raw.get("enum") or ()),
        aliases=dict(raw.get("aliases") or {}),
        multiple=raw.get("multiple", False),
        minimum=raw.get("minimum"),
        maximum=raw.get("maximum"),
        pattern=raw.get("pattern", ""),
        max_length=raw.get("max_length", DEFAULT_MAX_LENGTH),
    )


def _build_task(name: str, raw: dict) -> TaskSpec:
    return TaskSpec(
        name=name,
        label=raw.get("label", ""),
        description=raw.get("description", ""),
        kind=raw.get("kind", "multi_turn"),
        confirm=confirm_default(raw),
        read_only=raw.get("read_only", False),
        depends_on=raw.get("depends_on"),
        depends_on_slots=tuple(raw.get("depends_on_slots") or ()),
        slots={s: _build_slot(s, v) for s, v in (raw.get("slots") or {}).items()},
        examples=tuple(raw.get("examples") or ()),
    )


# The version of the rules :func:`_validate` applies. A state remembers the mark of the catalog text
# it was last checked against (``catalog_checked``, dskit.turn.machine.catalog_mark), and a mark made under
# other rules never matches: bump this whenever validation changes what it accepts
# (tests/test_catalog_mark.py holds it to that).
CATALOG_RULES = 3  # 2: what fits (size, prompt, name, questions) and no repeated enum value (issue 39); 3: numbers read by dskit/base/numerals.py (issue 38)


def load_catalog(source: Any, checked: str = "", mark: str = "") -> Catalog:
    """Validate and build a catalog from JSON text, a dict or a Catalog; raises CatalogError.

    ``mark``: the mark of the text (dskit.turn.machine.catalog_mark; the caller computes it, so that a node
    that never needs it does not load hashlib); ``checked``: the mark of a catalog text that passed
    validation earlier in this conversation (the state's ``catalog_checked``, trusted only under its
    seal). When the two are the same, the catalog is built without checking it again: Dify runs a code
    node in a fresh interpreter, and the checks (a ReDoS test of every pattern among them) are a good
    part of an ordinary turn's work, for a text that has not changed. A build that fails anyway is
    checked in full like any other.
    """
    if isinstance(source, Catalog):
        return source
    mark = mark if isinstance(source, str) else ""
    source, problem = _data(source)
    if problem:
        raise CatalogError([problem])
    if mark and checked == mark:
        try:
            return _build(source, mark)
        except Exception:  # noqa: BLE001 - cannot happen to a text that passed; check it in full
            pass
    try:
        problems = _validate(source)
    except RecursionError:
        problems = ["$: nested too deeply"]
    if problems:
        raise CatalogError(problems)
    return _build(source, mark)


def _build(source: dict, mark: str) -> Catalog:
    """The Catalog of valid catalog data."""
    policy = {**_POLICY_DEFAULTS, **{k: v for k, v in (source.get("policy") or {}).items()
                                     if k in _POLICY_DEFAULTS or k in _POLICY_CHOICES}}
    return Catalog(
        version=1,
        tasks={name: _build_task(name, raw) for name, raw in source["tasks"].items()},
        policy=Policy(**policy),
        language=source.get("language", "zh"),
        mark=mark,
    )


# ---------------------------------------------------------------- value coercion

_TRUE_WORDS = {"true", "yes", "y", "1", "是", "是的", "对", "要", "需要", "有", "好", "好的", "可以", "包含", "确认"}
_FALSE_WORDS = {"false", "no", "n", "0", "否", "不", "不是", "不要", "不需要", "没有", "无", "不包含", "不用"}
# Units people and models attach to counts and amounts: "3人", "两位", "5个", "100元".
_NUMBER_SUFFIX_RE = re.compile(r"\s*(个人|人|位|个|名|张|间|晚|天|元|块|岁|次|份|件|台|辆|间房)$")


def _coerce_number(value: Any, integer: bool) -> tuple[bool, Any, str]:
    kind = "an integer" if integer else "a number"
    if isinstance(value, bool):
        return False, None, f"expected {kind}, got a boolean"
    if isinstance(value, str):
        text = _NUMBER_SUFFIX_RE.sub("", value.strip().replace(",", ""))
        cn = parse_cn_number(text)
        if cn is not None:
            value = cn
        else:
            try:
                value = float(text) if not re.fullmatch(r"[+-]?\d+", text) else int(text)
            except ValueError:
                return False, None, f"expected {kind}, got {_show(value)}"
    if not isinstance(value, (int, float)) or value != value or value in (float("inf"), float("-inf")):
        return False, None, f"expected {kind}, got {type(value).__name__}"
    if abs(value) >= NUMBER_LIMIT:
        return False, None, f"{value} is outside ±2^63"
    if integer:
        if isinstance(value, float):
            if not value.is_integer():
                return False, None, f"expected an integer, got {value}"
            value = int(value)
    return True, value, ""


def _coerce_boolean(value: Any) -> tuple[bool, Any, str]:
    if isinstance(value, bool):
        return True, value, ""
    if isinstance(value, (int, float)) and value in (0, 1):
        return True, bool(value), ""
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE_WORDS:
            return True, True, ""
        if word in _FALSE_WORDS:
            return True, False, ""
    return False, None, f"expected true or false, got {_show(value)}"


def _apply_aliases(spec: SlotSpec, value: Any) -> Any:
    """Map a synonym to its canonical value ("市区" -> "市中心"), exact first, then case-insensitive."""
    if not spec.aliases or not isinstance(value, str):
        return value
    text = value.strip()
    if text in spec.aliases:
        return spec.aliases[text]
    lowered = text.lower()
    for alias, target in spec.aliases.items():
        if alias.lower() == lowered:
            return target
    return value


def _match_enum(spec: SlotSpec, value: Any) -> tuple[bool, Any, str]:
    if not spec.enum or value in spec.enum:
        return True, value, ""
    if isinstance(value, str):
        for option in spec.enum:
            if isinstance(option, str) and option.lower() == value.strip().lower():
                return True, option, ""
    allowed = "、".join(str(v) for v in spec.enum[:10]) + ("…" if len(spec.enum) > 10 else "")
    return False, None, f"{_show(value)} is not one of: {allowed[:200]}"


def _clean_text(text: str) -> str:
    """Text as a slot stores it: no lone surrogates, no control characters, no surrounding space."""
    return without_controls(scrub_surrogates(text)).strip()


def _coerce_one(spec: SlotSpec, value: Any) -> tuple[bool, Any, str]:
    """Coerce a single (non-list) value to the slot's type, aliases, enum, range and pattern.

    Text is measured before anything else reads it: a value longer than the slot takes is refused
    before aliases, number words or the slot's pattern run on it.
    """
    if isinstance(value, str):
        limit = spec.max_length if spec.type == "string" else _SCALAR_TEXT_MAX
        if len(value) > 2 * limit + 100:  # the exact check follows once spaces are stripped
            return False, None, f"text of {len(value)} characters, longer than the {limit} this slot takes"
        value = _clean_text(value)
    value = _apply_aliases(spec, value)
    if spec.type == "string":
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            return False, None, f"expected text, got {type(value).__name__}"
        value = _clean_text(str(value))
        if not value:
            return False, None, "empty text"
        if len(value) > spec.max_length:
            return False, None, f"text of {len(value)} characters, longer than the {spec.max_length} this slot takes"
    elif spec.type in ("integer", "number"):
        ok, value, reason = _coerce_number(value, spec.type == "integer")
        if not ok:
            return ok, value, reason
        if spec.minimum is not None and value < spec.minimum:
            return False, None, f"{value} is below the minimum {spec.minimum}"
        if spec.maximum is not None and value > spec.maximum:
            return False, None, f"{value} is above the maximum {spec.maximum}"
    else:
        ok, value, reason = _coerce_boolean(value)
        if not ok:
            return ok, value, reason
    ok, value, reason = _match_enum(spec, value)
    if not ok:
        return ok, value, reason
    if spec.pattern and isinstance(value, str) and not re.fullmatch(spec.pattern, value):
        return False, None, f"{_show(value)} does not match the pattern {spec.pattern[:100]}"
    return True, value, ""


def coerce_slot_value(spec: SlotSpec, value: Any) -> tuple[bool, Any, str]:
    """Coerce ``value`` for ``spec``: (ok, value, reason). Never raises.

    A ``multiple`` slot takes a list (a single value becomes a one-item list); invalid items are
    dropped and named in the reason, the rest kept; a list with no valid item is refused.
    """
    try:
        if value is None:
            return False, None, "no value"
        if not spec.multiple:
            if isinstance(value, (list, tuple)):
                if len(value) == 1:
                    value = value[0]
                else:
                    return False, None, "expected one value, got a list"
            return _coerce_one(spec, value)
        items = list(value) if isinstance(value, (list, tuple)) else [value]
        kept, reasons = [], []
        for item in items:
            if len(kept) >= MAX_SLOT_ITEMS:
                reasons.append(f"only the first {MAX_SLOT_ITEMS} items are kept")
                break
            ok, coerced, reason = _coerce_one(spec, item)
            if ok and coerced not in kept:
                kept.append(coerced)
            elif not ok:
                reasons.append(reason)
        more = f" (+{len(reasons) - 3} more)" if len(reasons) > 3 else ""
        if not kept:
            return False, None, ("; ".join(reasons[:3]) + more) or "empty list"
        return True, kept, "; ".join(reasons[:3]) + more
    except Exception as exc:  # a value no rule foresaw must not stop the turn
        return False, None, f"unusable value ({type(exc).__name__})"


def slot_is_valid(spec: SlotSpec, value: Any) -> bool:
    """Whether a stored value still satisfies the slot (the catalog may have changed since)."""
    ok, coerced, reason = coerce_slot_value(spec, value)
    return ok and coerced == value and not reason


def catalog_compact(catalog: Catalog) -> str:
    """The catalog as a few compact lines for an LLM prompt: tasks, slots, types and allowed values
    (what the model needs to name tasks and fill slots; nothing the engine decides)."""
    lines = []
    for task in catalog.tasks.values():
        head = f"- {task.name}"
        if task.label:
            head += f" ({task.label})"
        # The engine's flags (kind, confirm, read_only) are not the model's business, and a small model
        # returned them as command types ({"type": "read_only"}, {"type": "confirm"} to start a task).
        if task.depends_on:
            head += f" [depends_on={task.depends_on}]"
        if task.description:
            head += f": {task.description}"
        lines.append(head)
        for slot in task.slots.values():
            kind = slot.type + ("[]" if slot.multiple else "")
            parts = [f"{slot.name}: {kind}"]
            if slot.required:
                parts.append("required")
            if slot.label:
                parts.append(slot.label)
            if slot.enum:
                parts.append("one of " + "|".join(str(v) for v in slot.enum))
            if slot.minimum is not None or slot.maximum is not None:
                parts.append(f"range {slot.minimum if slot.minimum is not None else ''}.."
                             f"{slot.maximum if slot.maximum is not None else ''}")
            if slot.description:
                parts.append(slot.description)
            lines.append("    " + "; ".join(parts))
    return "\n".join(lines)
