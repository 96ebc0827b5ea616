"""Evaluation suites: conversations with what must and must not happen on each turn.

The scenario format of tests/scenarios without scripted model answers (the model under test gives
them), plus ``forbid:`` and ``repeat:``. One file is one conversation::

    name: zh_booking
    description: ...
    lang: zh                          # language of the catalog's texts (default zh)
    catalog: default                  # default | a name in examples/catalogs | a path to a catalog JSON
    repeat: 1                         # run the conversation N times (consistency over repeats)
    knowledge: [{title: ..., content: ...}]   # what the knowledge base returns (flow and dify targets)
    turns:
      - user: 帮我订周五晚上八点的位子，四个人
        expect:
          next_action: ask_slot       # ask_slot | confirm | execute | faq | chitchat | handoff | fallback
          task: book_restaurant       # the task in focus after the turn ("" for none)
          slots: {date: 周五, time: "20:00", people: 4}   # its filled slots, exactly (needs task)
          state: {book_restaurant: {...}, weather: {...}} # every open task's slots, exactly (optional)
          stack: ["book_restaurant:COLLECTING"]
          execute: {task: weather, slots: {city: 北京}}   # what runs this turn (a list for several)
          handoff: user_request
          answer_contains: [餐厅]     # / answer_not_contains
        forbid:
          execute: true               # nothing runs (or a list of task names that must not run)
          slots: {time: "07:00"}      # values the slots must not hold (a list of values per slot)
          handoff: true
          next_action: [execute]

``execute`` also says which slot writes a turn asks for; everything else a turn writes is counted as
an unasked write (see docs/eval.md). Expected values go through the catalog's coercion before they are
compared, so ``area: 市中心`` and ``area: [市中心]`` mean the same for a list slot.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dskit.catalog.catalog import Catalog, coerce_slot_value, load_catalog

ROOT = Path(__file__).resolve().parents[3]
SUITE_DIR = ROOT / "examples" / "eval"
CATALOG_DIR = ROOT / "examples" / "catalogs"
EXPECT_KEYS = frozenset({"next_action", "task", "slots", "state", "stack", "execute", "done", "handoff",
                         "answer_contains", "answer_not_contains"})
FORBID_KEYS = frozenset({"execute", "slots", "handoff", "next_action"})
ACTIONS = frozenset({"ask_slot", "confirm", "execute", "faq", "chitchat", "handoff", "fallback"})


class SuiteError(ValueError):
    """A suite file that cannot be used; the message names the file and the place."""


@dataclass
class EvalTurn:
    """One user message and what is checked after it."""

    user: str
    expect: dict[str, Any] = field(default_factory=dict)
    forbid: dict[str, Any] = field(default_factory=dict)

    def executions(self) -> list[dict[str, Any]]:
        """The expected executions of this turn, as a list of {task, slots}."""
        value = self.expect.get("execute")
        if value is None:
            return []
        return [dict(item) for item in (value if isinstance(value, list) else [value])]


@dataclass
class Suite:
    """One conversation to evaluate, with its catalog."""

    name: str
    description: str
    turns: list[EvalTurn]
    catalog_data: dict[str, Any]
    catalog_name: str = "default"
    lang: str = "zh"
    repeat: int = 1
    knowledge: list[dict[str, str]] = field(default_factory=list)
    path: Path | None = None

    @property
    def catalog(self) -> Catalog:
        return load_catalog(self.catalog_data)

    @property
    def catalog_json(self) -> str:
        return json.dumps(self.catalog_data, ensure_ascii=False, separators=(",", ":"))


def default_catalog() -> dict[str, Any]:
    """The catalog the shipped Chatflows carry in TASK_CATALOG (restaurant and travel merged)."""
    tasks: dict[str, Any] = {}
    policy: dict[str, Any] = {}
    for name in ("restaurant", "travel_assistant"):
        data = json.loads((CATALOG_DIR / f"{name}.json").read_text(encoding="utf-8"))
        tasks.update(data["tasks"])
        policy = data.get("policy") or policy
    return {"version": 1, "name": "restaurant_and_travel", "language": "zh", "tasks": tasks, "policy": policy}


def resolve_catalog(value: Any, base: Path) -> tuple[str, dict[str, Any]]:
    """(name, catalog dict) for a suite's ``catalog:`` entry."""
    if value in (None, "", "default"):
        return "default", default_catalog()
    if isinstance(value, Mapping):
        return str(value.get("name") or "inline"), dict(value)
    text = str(value)
    candidates = [CATALOG_DIR / f"{text}.json", base / text, ROOT / text]
    for candidate in candidates:
        if candidate.is_file():
            return candidate.stem, json.loads(candidate.read_text(encoding="utf-8"))
    raise SuiteError(f"catalog {text!r} is neither 'default', a name in examples/catalogs nor a file")


def _check_turn(where: str, raw: Any, catalog: Catalog) -> EvalTurn:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("user"), str) or not raw["user"].strip():
        raise SuiteError(f"{where}: needs a non-empty user message")
    unknown = set(raw) - {"user", "expect", "forbid"}
    if unknown:
        raise SuiteError(f"{where}: unknown keys {sorted(unknown)} (scripted answers do not belong in a suite)")
    expect = dict(raw.get("expect") or {})
    forbid = dict(raw.get("forbid") or {})
    if set(expect) - EXPECT_KEYS:
        raise SuiteError(f"{where}.expect: unknown keys {sorted(set(expect) - EXPECT_KEYS)}")
    if set(forbid) - FORBID_KEYS:
        raise SuiteError(f"{where}.forbid: unknown keys {sorted(set(forbid) - FORBID_KEYS)}")
    if "next_action" in expect and expect["next_action"] not in ACTIONS:
        raise SuiteError(f"{where}.expect.next_action: {expect['next_action']!r} is not one of {sorted(ACTIONS)}")
    if "slots" in expect and "task" not in expect:
        raise SuiteError(f"{where}.expect: slots needs task (the slots are that task's)")
    tasks = [expect["task"]] if expect.get("task") else []
    turn = EvalTurn(user=raw["user"], expect=expect, forbid=forbid)
    tasks += list((expect.get("state") or {}))
    tasks += [e.get("task") for e in turn.executions()]
    for name in tasks:
        if name not in catalog.tasks:
            raise SuiteError(f"{where}: task {name!r} is not in the suite's catalog")
    for item in turn.executions():
        if set(item) - {"task", "slots"} or not item.get("task"):
            raise SuiteError(f"{where}.expect.execute: each item is {{task, slots}}")
    for label, task, slots in _expected_slot_sets(turn):
        for slot, value in slots.items():
            spec = catalog.tasks[task].slots.get(slot)
            if spec is None:
                raise SuiteError(f"{where}.{label}: {task} has no slot {slot!r}")
            ok, _, reason = coerce_slot_value(spec, value)
            if not ok:
                raise SuiteError(f"{where}.{label}.{slot}: {value!r} is not a valid value ({reason})")
    return turn


def _expected_slot_sets(turn: EvalTurn) -> list[tuple[str, str, dict[str, Any]]]:
    sets = []
    if "slots" in turn.expect and turn.expect.get("task"):
        sets.append(("expect.slots", turn.expect["task"], dict(turn.expect["slots"] or {})))
    for task, slots in (turn.expect.get("state") or {}).items():
        sets.append((f"expect.state.{task}", task, dict(slots or {})))
    for item in turn.executions():
        sets.append(("expect.execute", item["task"], dict(item.get("slots") or {})))
    return sets


def load_suite(path: str | Path) -> Suite:
    """Read and check one suite file; :class:`SuiteError` says what is wrong and where."""
    import yaml  # noqa: PLC0415

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise SuiteError(f"{path}: cannot read ({' '.join(str(error).split())[:200]})") from None
    if not isinstance(data, Mapping) or not isinstance(data.get("turns"), list) or not data["turns"]:
        raise SuiteError(f"{path}: needs a mapping with a non-empty turns list")
    name, catalog_data = resolve_catalog(data.get("catalog"), path.parent)
    try:
        catalog = load_catalog(catalog_data)
    except ValueError as error:
        raise SuiteError(f"{path}: catalog {name}: {error}") from None
    turns = [_check_turn(f"{path.name}: turns[{i}]", raw, catalog) for i, raw in enumerate(data["turns"])]
    repeat = data.get("repeat", 1)
    if not isinstance(repeat, int) or not 1 <= repeat <= 100:
        raise SuiteError(f"{path}: repeat must be an integer from 1 to 100")
    return Suite(name=str(data.get("name") or path.stem), description=str(data.get("description") or ""),
                 turns=turns, catalog_data=catalog_data, catalog_name=name,
                 lang=str(data.get("lang") or catalog.language or "zh"), repeat=repeat,
                 knowledge=list(data.get("knowledge") or []), path=path)


def load_suites(paths: list[str | Path] | None = None) -> list[Suite]:
    """Suites from files and directories (every *.yaml inside); the shipped ones by default."""
    files: list[Path] = []
    for item in paths or [SUITE_DIR]:
        item = Path(item)
        if item.is_dir():
            files += sorted(item.glob("*.yaml"))
        elif item.exists():
            files.append(item)
        else:
            raise SuiteError(f"{item}: no such suite file or directory")
    if not files:
        raise SuiteError("no suite files found")
    return [load_suite(f) for f in files]
