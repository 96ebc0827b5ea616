"""Scenario suites: scripted conversations run through a Chatflow DSL in graphon, turn by turn.

A suite is a YAML file (tests/scenarios/*.yaml)::

    name: seed000_booking
    description: ...
    layouts: [fast, classic]          # default: both
    env: {TASK_API_URL: "{api}/ok"}   # {api} is the local test server's base URL
    knowledge: [{title: ..., content: ...}]   # what the knowledge base returns for any FAQ
    turns:
      - user: 帮我订周五晚上8点，三个人
        understanding: {rewritten_query: ..., commands: [...]}   # the fast layout's LLM answer
        classic: {rewrite: ..., classify: 订餐, extract: {...}}  # optional; derived when possible
        llm: {faq_answer: ..., chat_answer: ..., summarize: ...}  # other LLM nodes, both layouts
        expect: {next_action: ask_slot, answer_contains: [...], task: book_restaurant,
                 slots: {...}, stack: ["book_restaurant:COLLECTING"], done: [...], handoff: ...}

The fast layout's ``understand`` node answers with ``understanding``; the classic layout's three
nodes answer with ``classic``, which is derived from the same understanding when it is a single
command the classic layout can express (a class + extracted parameters). Every turn is then checked
by :func:`check_turn`: the expectations, and what must hold on every turn — the answer is in the
history, the conversation variables agree with the state, and the LLM-call budget.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dskit.surfaces.classic import CLASSIC_CLASSES
from dskit.tooling.dslrun.graphon import Conversation, LLMRequest, TurnResult

LAYOUTS = ("fast", "classic")
SCENARIO_DIR = Path(__file__).resolve().parents[3] / "tests" / "scenarios"
STATE_NODE = "state"
SUMMARY_NODE = "summarize"
# The classic layout's non-task classes, by the command they stand for: the engine's table, which the
# generated classifier lists and the adapter reads back.
CLASSIC_COMMAND_CLASS = {c.command: (c.id, c.label_zh) for c in CLASSIC_CLASSES if c.command}
MORE_INFO_CLASS = next((c.id, c.label_zh) for c in CLASSIC_CLASSES if not c.command)


class ScenarioError(ValueError):
    """A suite file is malformed, or asks the classic layout for what it cannot express."""


@dataclass
class ScenarioTurn:
    user: str
    understanding: Any = None
    classic: dict[str, Any] | None = None
    llm: dict[str, str] = field(default_factory=dict)
    expect: dict[str, Any] = field(default_factory=dict)


@dataclass
class Scenario:
    name: str
    description: str
    turns: list[ScenarioTurn]
    layouts: tuple[str, ...] = LAYOUTS
    env: dict[str, str] = field(default_factory=dict)
    knowledge: list[dict[str, str]] = field(default_factory=list)
    path: Path | None = None

    @property
    def needs_api(self) -> bool:
        return any("{api}" in str(v) for v in self.env.values())


def load_scenario(path: Path) -> Scenario:
    import yaml  # noqa: PLC0415

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, Mapping) or not isinstance(data.get("turns"), list):
        raise ScenarioError(f"{path}: needs a mapping with a turns list")
    turns = []
    for index, raw in enumerate(data["turns"]):
        if not isinstance(raw, Mapping) or not isinstance(raw.get("user"), str):
            raise ScenarioError(f"{path}: turns[{index}] needs a user message")
        unknown = set(raw) - {"user", "understanding", "classic", "llm", "expect"}
        if unknown:
            raise ScenarioError(f"{path}: turns[{index}] has unknown keys {sorted(unknown)}")
        turns.append(ScenarioTurn(user=raw["user"], understanding=raw.get("understanding"),
                                  classic=raw.get("classic"), llm=dict(raw.get("llm") or {}),
                                  expect=dict(raw.get("expect") or {})))
    layouts = tuple(data.get("layouts") or LAYOUTS)
    if not set(layouts) <= set(LAYOUTS):
        raise ScenarioError(f"{path}: layouts must be among {LAYOUTS}")
    return Scenario(name=str(data.get("name") or path.stem), description=str(data.get("description") or ""),
                    turns=turns, layouts=layouts, env=dict(data.get("env") or {}),
                    knowledge=list(data.get("knowledge") or []), path=path)


def load_scenarios(directory: Path = SCENARIO_DIR) -> list[Scenario]:
    return [load_scenario(path) for path in sorted(directory.glob("*.yaml"))]


# --------------------------------------------------------------------------------------------------
# Scripts
# --------------------------------------------------------------------------------------------------


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _as_param(value: Any) -> str:
    """A slot value as the string a parameter extractor would return (strings only, see flows)."""
    if isinstance(value, bool):
        return "是" if value else "否"
    if isinstance(value, list):
        return "、".join(str(v) for v in value)
    return str(value)


def derive_classic(understanding: Any, catalog: Mapping[str, Any], current_task: str) -> dict[str, Any]:
    """What rewrite / classify / extract would answer for a one-command understanding.

    Raises :class:`ScenarioError` for what the classic layout cannot express: several commands,
    rollback, a slot change or cancel aimed at a task other than the current one, raw text.
    """
    if not isinstance(understanding, Mapping):
        raise ScenarioError("the classic layout needs a structured understanding or an explicit classic:")
    commands = list(understanding.get("commands") or [])
    query = str(understanding.get("rewritten_query") or "")
    if len(commands) != 1:
        raise ScenarioError(f"{len(commands)} commands: a classifier picks one class")
    command = commands[0]
    kind = command.get("type")
    tasks = catalog["tasks"]
    task = command.get("task")
    if kind == "start_task":
        label = str(tasks[task].get("label") or task)
        return {"rewrite": query, "classify": (f"task_{task}", label), "extract": command.get("slots") or {}}
    if kind == "set_slots":
        if task not in (None, current_task):
            raise ScenarioError("set_slots on a task other than the current one")
        return {"rewrite": query, "classify": MORE_INFO_CLASS, "extract": command["slots"]}
    if kind in CLASSIC_COMMAND_CLASS:
        if kind == "cancel_task" and task not in (None, current_task):
            raise ScenarioError("cancel_task on a task other than the current one")
        return {"rewrite": query, "classify": CLASSIC_COMMAND_CLASS[kind]}
    raise ScenarioError(f"{kind!r} has no class in the classic layout")


def classic_script(spec: Mapping[str, Any], user: str) -> dict[str, str]:
    """Node answers for the classic layout from ``{rewrite, classify, extract}``."""
    classify = spec.get("classify")
    if isinstance(classify, str):
        classify = (classify, classify)
    cid, cname = classify
    script = {"rewrite": str(spec.get("rewrite") or user),
              "classify": json.dumps({"category_id": cid, "category_name": cname}, ensure_ascii=False)}
    if "extract" in spec:
        script["extract"] = json.dumps({k: _as_param(v) for k, v in (spec["extract"] or {}).items()},
                                       ensure_ascii=False)
    return script


def turn_script(turn: ScenarioTurn, layout: str, catalog: Mapping[str, Any], current_task: str
                ) -> dict[str, str]:
    """Every LLM node's answer for this turn in this layout."""
    script = {name: str(text) for name, text in turn.llm.items()}
    if layout == "fast":
        script["understand"] = _json(turn.understanding if turn.understanding is not None else "")
    else:
        spec = turn.classic or derive_classic(turn.understanding, catalog, current_task)
        script.update(classic_script(spec, turn.user))
    if SUMMARY_NODE not in script:
        script[SUMMARY_NODE] = _default_summary
    return script


def _default_summary(request: LLMRequest) -> str:
    """A plausible LLM summary: the earlier summary's lines plus the user lines of the overflow turns.

    Headers (lines ending in a colon), assistant lines and "none" markers are left out, so the
    scripted model behaves like a faithful one: it keeps what the old summary said.
    """
    kept = []
    for raw in request.user.splitlines():
        line = raw.strip()
        if not line or line.endswith((":", "：")) or line.startswith("assistant") or line in {"（无）", "(none)"}:
            continue
        if line.startswith("user"):
            line = line.split(":", 1)[-1].strip()
        kept.append(line.lstrip("- ").strip())
    return "\n".join(f"- {line}" for line in dict.fromkeys(kept) if line)[:600]


# --------------------------------------------------------------------------------------------------
# Running and checking
# --------------------------------------------------------------------------------------------------


@dataclass
class TurnOutcome:
    turn: ScenarioTurn
    result: TurnResult
    before: dict[str, Any]
    failures: list[str]


def make_conversation(scenario: Scenario, dsl_text: str, *, api_base: str | None = None) -> Conversation:
    env = {}
    for name, value in scenario.env.items():
        if "{api}" in str(value):
            if api_base is None:
                raise ScenarioError(f"{scenario.name} needs a task API server (api_base)")
            value = str(value).replace("{api}", api_base.rstrip("/"))
        env[name] = value
    passages = list(scenario.knowledge)
    return Conversation(dsl_text, env=env, knowledge=(lambda query: passages) if passages else None)


def run_scenario(scenario: Scenario, layout: str, dsl_text: str, catalog: Mapping[str, Any], *,
                 api_base: str | None = None) -> list[TurnOutcome]:
    """Run every turn; collect (not raise) the failures so a report shows all of them."""
    conversation = make_conversation(scenario, dsl_text, api_base=api_base)
    outcomes = []
    for turn in scenario.turns:
        before = dict(conversation.variables)
        script = turn_script(turn, layout, catalog, focused_task(before)[0])
        result = conversation.turn(turn.user, script, raise_on_error=False)
        failures = check_turn(turn, result, before, layout, catalog)
        outcomes.append(TurnOutcome(turn, result, before, failures))
    return outcomes


def _load(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) and text else {}
    except ValueError:
        return None


def focused_task(variables: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(name, filled slots) of the task on top of the stack in ``sys_context_str``; ("", {}) if none:
    the state is the one source for every layout."""
    state = _load(variables.get("sys_context_str"))
    stack = state.get("task_stack") if isinstance(state, dict) else None
    top = stack[-1] if stack else None
    return (str(top.get("name") or ""), dict(top.get("slots") or {})) if top else ("", {})


def _contains(value: str, wanted: str | Sequence[str]) -> list[str]:
    items = [wanted] if isinstance(wanted, str | int | float) else list(wanted)
    return [str(item) for item in items if str(item) not in value]


def check_turn(turn: ScenarioTurn, result: TurnResult, before: Mapping[str, Any], layout: str,
               catalog: Mapping[str, Any] | None = None) -> list[str]:
    """Every failed expectation of one turn, as readable lines ("" list when the turn is right).
    With ``catalog`` (the run's ``TASK_CATALOG``), the stored next prompt is checked too."""
    if not result.succeeded:
        return [f"the run failed: {result.graph_error or result.errors}"]
    failures: list[str] = []
    failures += _expectation_failures(turn.expect, result)
    failures += _invariant_failures(turn, result, before)
    if catalog is not None:
        failures += _prompt_failures(result.variables, catalog)
    failures += _budget_failures(result, layout, turn.expect)
    return failures


# The prompt variables of the code-node layouts and the context node's output each must equal.
PROMPT_VARIABLES = {"prompt_system": "instructions", "prompt_head": "head", "prompt_tail": "tail",
                    "reply_pending": "pending", "prompt_state": "state_text"}


def _prompt_failures(variables: Mapping[str, Any], catalog: Mapping[str, Any]) -> list[str]:
    """The prompt a turn leaves for the next one is, byte for byte, the one the context node would build
    at the start of the next turn from the stored state, history, summary and last model answer (so the
    model reads the same text whichever of the two made it). A model answer that is not one line is
    never read as stored: the next turn runs the context node, which puts it on one line."""
    from dskit.surfaces.nodes import context_node  # noqa: PLC0415
    from dskit.base.text import LINE_BREAK_CHARS  # noqa: PLC0415

    stored = {name: variables[name] for name in PROMPT_VARIABLES if name in variables}
    if not stored:
        return []  # the plugin layout keeps no prompt
    if not stored.get("prompt_head"):
        return ["no prompt was left for the next turn (prompt_head is empty)"]
    pending = str(stored.get("reply_pending") or "")
    if any(char in pending for char in LINE_BREAK_CHARS):
        stored.pop("reply_pending")  # read through the context node, on one line
    built = context_node("next message", variables.get("sys_context_str") or "", variables.get("history") or "",
                         variables.get("summary") or "", json.dumps(catalog, ensure_ascii=False),
                         reply_pending=pending)
    return [f"conversation.{name} is not the context node's {PROMPT_VARIABLES[name]} for the stored state and memory"
            for name, value in stored.items() if value != built[PROMPT_VARIABLES[name]]]


def _expectation_failures(expect: Mapping[str, Any], result: TurnResult) -> list[str]:
    failures = []
    variables = result.variables
    state = _load(variables.get("sys_context_str")) or {}
    stack = state.get("task_stack") or []
    if "next_action" in expect and result.output(STATE_NODE, "next_action") != expect["next_action"]:
        failures.append(f"next_action {result.output(STATE_NODE, 'next_action')!r} != {expect['next_action']!r}")
    if "answer" in expect and result.answer != expect["answer"]:
        failures.append(f"answer {result.answer!r} != {expect['answer']!r}")
    missing = _contains(result.answer, expect.get("answer_contains") or [])
    if missing:
        failures.append(f"answer {result.answer!r} lacks {missing}")
    unwanted_items = expect.get("answer_not_contains") or []
    for unwanted in [unwanted_items] if isinstance(unwanted_items, str) else unwanted_items:
        if str(unwanted) in result.answer:
            failures.append(f"answer {result.answer!r} contains {unwanted!r}")
    task, filled = focused_task(variables)
    if "task" in expect and task != (expect["task"] or ""):
        failures.append(f"task in focus {task!r} != {expect['task']!r}")
    if "slots" in expect and filled != expect["slots"]:
        failures.append(f"focused task's slots {filled} != {expect['slots']}")
    if "stack" in expect:
        actual = [f"{t.get('name')}:{t.get('stage')}" for t in stack]
        if actual != list(expect["stack"]):
            failures.append(f"task stack {actual} != {expect['stack']}")
    if "done" in expect:
        done = [{"task": d.get("task"), "status": d.get("status")} for d in state.get("done") or []]
        wanted = list(expect["done"])
        tail = done[-len(wanted):] if wanted else done
        if tail != wanted:
            failures.append(f"done {done} does not end with {wanted}")
    if "handoff" in expect:
        reason = (state.get("handoff") or {}).get("reason")
        if reason != expect["handoff"]:
            failures.append(f"handoff reason {reason!r} != {expect['handoff']!r}")
    if "summary_contains" in expect:
        missing = _contains(str(variables.get("summary") or ""), expect["summary_contains"])
        if missing:
            failures.append(f"summary lacks {missing}")
    if "api_called" in expect and ("call_api" in result.path) != bool(expect["api_called"]):
        failures.append(f"task API called: {'call_api' in result.path}, expected {expect['api_called']}")
    return failures


def _invariant_failures(turn: ScenarioTurn, result: TurnResult, before: Mapping[str, Any]) -> list[str]:
    """What must hold after every turn, whatever the scenario says."""
    failures = []
    variables = result.variables
    if set(variables) != set(before):
        failures.append(f"conversation variables changed shape: {sorted(variables)}")
    if not result.answer.strip():
        failures.append("empty answer")
    history = memory_text(variables)
    last = history.split("\n\n---\n\n")[-1]
    kept = result.answer.strip()  # what the user saw, except after a FAQ or small-talk model's answer:
    if result.output(STATE_NODE, "next_action") in ("faq", "chitchat"):  # the engine's text (views.memory_reply)
        kept = str(result.output(STATE_NODE, "follow_up") or "").strip() if result.answer.strip() not in last else kept
    if turn.user.strip() not in last or kept not in last:
        failures.append(f"history's last turn {last[:120]!r} is not this turn")
    state = _load(variables.get("sys_context_str"))
    if not isinstance(state, dict) or "task_stack" not in state:
        failures.append("sys_context_str is not a state")
        return failures
    summary_ran = SUMMARY_NODE in result.path
    if summary_ran and "summary_check" in result.outputs and \
            variables.get("summary") != result.output("summary_check", "summary"):
        failures.append("the LLM summary ran but conversation.summary is not its checked result")
    memory_node = next((node for node in MEMORY_NODES if node in result.path), STATE_NODE)
    if not summary_ran and variables.get("summary") != result.output(memory_node, "summary"):
        failures.append(f"conversation.summary is not the {memory_node} node's summary")
    return failures + _memory_failures(result)


# The nodes that keep the memory when the state node does not: the code-node layouts' outcome node after a
# task API call, the history node of Chatflows built before issue 39.
MEMORY_NODES = ("outcome", "history")


def memory_text(variables: Mapping[str, Any]) -> str:
    """The history as the next turn reads it: the stored text with the last turn's model answer put
    where the state node left its mark (:func:`dskit.context.history.fill_pending`)."""
    from dskit.context.history import fill_pending  # noqa: PLC0415

    return fill_pending(variables.get("history") or "", variables.get("reply_pending") or "")


def _memory_failures(result: TurnResult) -> list[str]:
    """The state node keeps the memory itself on every turn but an execution that calls the task API,
    whose outcome node keeps it; no history node runs; on an ordinary turn (the route's ``own`` branch)
    the reply is the state node's ``reply``. (That the stored memory holds the reply the user saw — a FAQ
    or small-talk answer with its follow-up — is checked for every layout above.)"""
    if STATE_NODE not in result.outputs or "route" not in result.path:
        return []  # a layout without the state node's memory (the plugin's)
    ready = bool(result.output(STATE_NODE, "memory_ready"))
    failures = []
    if ready == ("outcome" in result.path):
        failures.append(f"memory_ready is {ready} but the outcome node {'ran' if ready else 'did not run'}")
    if "history" in result.path:
        failures.append("the history node ran")
    if "save" in result.path and result.answer != result.output(STATE_NODE, "reply"):
        failures.append("an ordinary turn's answer is not the state node's reply")
    return failures


def _budget_failures(result: TurnResult, layout: str, expect: Mapping[str, Any]) -> list[str]:
    """The LLM-call budget of the issue: fast <= 1 before the state update, <= 2 a turn (+1 summary)."""
    failures = []
    summary = 1 if SUMMARY_NODE in result.path else 0
    if layout == "fast":
        before = result.llm_calls_before(STATE_NODE)
        if before > 1:
            failures.append(f"{before} LLM calls before the state update (budget 1)")
        if result.llm_count > 2 + summary:
            failures.append(f"{result.llm_count} LLM calls this turn (budget {2 + summary})")
    wanted = (expect.get("llm_calls") or {}).get(layout) if isinstance(expect.get("llm_calls"), Mapping) \
        else None
    if wanted is not None and result.llm_count != wanted:
        failures.append(f"{result.llm_count} LLM calls, expected {wanted}")
    return failures


def format_outcomes(scenario: Scenario, layout: str, outcomes: Sequence[TurnOutcome]) -> str:
    lines = []
    for index, outcome in enumerate(outcomes, 1):
        for failure in outcome.failures:
            lines.append(f"{scenario.name}[{layout}] turn {index} ({outcome.turn.user!r}): {failure}")
    return "\n".join(lines)
