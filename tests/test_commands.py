"""The command registry: one class per command holds how it is read, where it runs, what the prompt
says of it and what it does; adding a command is one class and one registry line (docs/design.md)."""

from __future__ import annotations

import json

import pytest

from conftest import load_example_catalog
from dskit import commands
from dskit.catalog import load_catalog
from dskit.commands import COMMAND_ALIASES, COMMAND_TYPES, REGISTRY, Command, command_lines
from dskit.machine import step
from dskit.messages import MESSAGES
from dskit.prompts import understanding_instructions
from dskit.turn import Turn
from dskit.understanding import parse_understanding

CATALOG = load_example_catalog("restaurant")
CONTRACT = ("start_task", "set_slots", "rollback_slot", "cancel_task", "confirm", "deny", "faq", "chitchat",
            "handoff", "reset", "cannot_handle")


def test_the_registry_holds_the_contract_in_its_order():
    assert COMMAND_TYPES == CONTRACT
    assert all(REGISTRY[k].kind == k and type(REGISTRY[k]) is not Command for k in COMMAND_TYPES)
    assert len({type(c) for c in REGISTRY.values()}) == len(REGISTRY)  # one class per command


def test_the_fixed_order_is_the_one_docs_design_md_states():
    order = [REGISTRY[k].order for k in ("reset", "cancel_task", "start_task", "set_slots", "confirm", "handoff",
                                         "faq", "cannot_handle")]
    assert order == sorted(order) and len(set(order)) == len(order)
    assert REGISTRY["set_slots"].order == REGISTRY["rollback_slot"].order
    assert REGISTRY["confirm"].order == REGISTRY["deny"].order


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_prompt_lists_every_command_from_the_registry(lang):
    listed = command_lines(lang)
    assert listed in understanding_instructions(lang)
    for kind in COMMAND_TYPES:
        assert f"- {kind}" in listed or f"/ {kind}" in listed, kind


@pytest.mark.parametrize("kind", CONTRACT)
def test_every_command_is_read_by_its_own_class_and_its_aliases(kind):
    cat = load_catalog(CATALOG)
    raw = {"type": kind, "task": "book_restaurant", "slots": {"people": 2}, "slot": "people",
           "question": "营业时间？", "reason": "要人工"}
    parsed = parse_understanding({"commands": [raw]}, cat)
    assert parsed["usable"] and parsed["commands"][0]["type"] == kind
    for alias, target in COMMAND_ALIASES.items():
        if target == kind:
            again = parse_understanding({"commands": [{**raw, "type": alias}]}, cat)
            assert again["commands"][0]["type"] == kind, alias


def test_a_bad_command_is_dropped_with_the_reason_its_class_gives():
    parsed = parse_understanding({"commands": [{"type": "rollback_slot"}, {"type": "set_slots", "slots": {}}]},
                                 load_catalog(CATALOG))
    assert [d["reason"] for d in parsed["dropped"]] == ["rollback_slot needs a slot", "set_slots has no slots"]


class _Snooze(Command):
    """The example of docs/design.md: a new command is one class and one registry line."""

    kind = "snooze"
    aliases = ("remind_later",)
    order = 6
    meaning = {"zh": "用户要稍后再办当前任务", "en": "the user wants to come back to the task later"}

    def apply(self, turn: Turn, command: dict) -> None:
        task = turn.stack.top()
        if task is None:
            turn.drop(command, "no open task to snooze")
            return
        turn.notice("snoozed", task=turn.spec(task).display)
        turn.note(f"snooze {task['id']}", progress=False)


def test_a_new_command_is_one_class_and_one_registry_line(monkeypatch):
    monkeypatch.setitem(REGISTRY, "snooze", _Snooze())
    monkeypatch.setitem(COMMAND_ALIASES, "remind_later", "snooze")
    monkeypatch.setitem(MESSAGES["zh"], "snoozed", "好的，「{task}」先放一放。")
    assert "- snooze：用户要稍后再办当前任务" in commands.command_lines("zh")
    state, _ = step("", {"commands": [{"type": "start_task", "task": "book_restaurant", "slots": {"people": 2}}]},
                    CATALOG)
    _, decision = step(state, json.dumps({"commands": [{"type": "remind_later"}]}), CATALOG)
    assert "「订餐」先放一放" in decision["question"] or "先放一放" in decision["question"]
    assert any(entry.startswith("snooze t1") for entry in decision["applied"])
