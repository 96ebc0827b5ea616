"""The commands: typed values read once from the model's JSON, one class each, that propose effects and
change nothing themselves; adding a command is one class and one register() call (docs/design.md)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator

import pytest

from conftest import load_example_catalog
from dskit.turn import commands
from dskit.catalog.catalog import load_catalog
from dskit.turn.commands import (COMMAND_ALIASES, COMMAND_TYPES, REGISTRY, Command, Confirm, SetSlots, StartTask,
                            command_lines, register)
from dskit.turn.effects import Effect, Noted, notice
from dskit.turn.machine import step
from dskit.base.messages import MESSAGES
from dskit.context.prompts import understanding_instructions
from dskit.turn.turn import Turn
from dskit.turn.understanding import parse_understanding

CATALOG = load_example_catalog("restaurant")
CONTRACT = ("start_task", "set_slots", "rollback_slot", "cancel_task", "confirm", "deny", "faq", "chitchat",
            "handoff", "reset", "cannot_handle")


def test_the_registry_holds_the_contract_in_its_order():
    assert COMMAND_TYPES == CONTRACT
    assert all(REGISTRY[k].kind == k and REGISTRY[k] is not Command for k in COMMAND_TYPES)
    assert len(set(REGISTRY.values())) == len(REGISTRY)  # one class per command


@pytest.mark.parametrize("kind", CONTRACT)
def test_every_command_is_a_frozen_dataclass_with_typed_fields(kind):
    cls = REGISTRY[kind]
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
    fields = {f.name: f.type for f in dataclasses.fields(cls)}
    assert fields.get("source") == "str"  # the model's, or the engine's own reading (dskit.turn.backup)
    assert all(isinstance(t, str) and t for t in fields.values())  # every field carries its type


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
    assert parsed["usable"] and type(parsed["commands"][0]) is REGISTRY[kind]
    assert parsed["commands"][0].wire()["type"] == kind
    for alias, target in COMMAND_ALIASES.items():
        if target == kind:
            again = parse_understanding({"commands": [{**raw, "type": alias}]}, cat)
            assert type(again["commands"][0]) is REGISTRY[kind], alias


def test_fields_are_read_once_into_typed_values():
    cat = load_catalog(CATALOG)
    parsed = parse_understanding({"commands": [
        {"type": "set_slot", "slot": "time", "value": "19:00"},
        {"type": "start", "task": "订餐", "slots": {"people": 2}},
    ]}, cat)
    assert parsed["commands"] == [SetSlots(None, {"time": "19:00"}), StartTask("book_restaurant", {"people": 2})]
    with pytest.raises(dataclasses.FrozenInstanceError):
        parsed["commands"][0].task = "other"  # type: ignore[misc]


def test_a_bad_command_is_dropped_with_the_reason_its_class_gives():
    parsed = parse_understanding({"commands": [{"type": "rollback_slot"}, {"type": "set_slots", "slots": {}},
                                               {"type": "start_task", "task": "book_restaurant", "slots": [1]}]},
                                 load_catalog(CATALOG))
    assert [d["reason"] for d in parsed["dropped"]] == ["rollback_slot needs a slot", "set_slots has no slots",
                                                         "slots must be an object"]


def test_a_command_proposes_effects_and_changes_nothing_itself():
    state, _ = step("", {"commands": [{"type": "start_task", "task": "book_restaurant", "slots": {"people": 2}}]},
                    CATALOG, query="订个位子，两个人")
    from dskit.state.state import load_trusted

    loaded = load_trusted(state)
    before = json.dumps(loaded, sort_keys=True)
    turn = Turn(loaded, load_catalog(CATALOG), "zh")
    effects = list(SetSlots(None, {"people": 3, "time": "19:00"}).propose(turn))
    assert [type(e).__name__ for e in effects] == ["SlotSet", "SlotSet"]
    assert json.dumps(loaded, sort_keys=True) == before  # proposing wrote nothing: the reducer does


def _confirming() -> str:
    state, decision = step("", {"commands": [{"type": "start_task", "task": "book_restaurant", "slots": {
        "people": 2, "date": "周五", "time": "19:00", "restaurant": "老地方"}}]}, CATALOG, query="周五晚上7点老地方，两个人")
    assert decision["next_action"] == "confirm"
    return state


def test_the_engines_own_reading_is_a_command_judged_like_the_models():
    """A plain yes the model left out (dskit.turn.backup) is a Confirm with source "engine": judged by the same
    rules as the model's, so it runs what was shown, and a yes to values changed since runs nothing."""
    offered = "请确认：订餐，日期：周五。确认办理吗？"
    _, decision = step(_confirming(), {"commands": []}, CATALOG, query="好的", offered=offered)
    assert decision["next_action"] == "execute" and "backup confirm t1" in decision["applied"]

    from dskit.state.integrity import seal
    from dskit.state.state import dump_state, load_state

    forged, _ = load_state(_confirming())
    forged["task_stack"][0]["slots"]["people"] = 9  # the values changed after the question showed them
    seal(forged)  # with a seal that holds: only the digest of what was shown tells
    _, decision = step(dump_state(forged), {"commands": []}, CATALOG, query="好的", offered=offered)
    assert decision["next_action"] != "execute" and not any("confirm" in a for a in decision["applied"])
    assert not decision["dropped"]  # the engine's own reading, refused, leaves nothing in the turn


@dataclasses.dataclass(frozen=True)
class _Snooze(Command):
    """The example of docs/design.md: a new command is one class and one register() call."""

    source: str = "model"
    kind = "snooze"
    aliases = ("remind_later",)
    order = 6
    meaning = {"zh": "用户要稍后再办当前任务", "en": "the user wants to come back to the task later"}
    texts = {"snoozed": {"zh": "好的，「{task}」先放一放。", "en": "OK, {task} can wait."}}

    def propose(self, turn: Turn) -> Iterator[Effect]:
        task = turn.stack.top()
        if task is None:
            return
        yield notice("snoozed", task=turn.spec(task).display)
        yield Noted(f"snooze {task['id']}")


def test_a_new_command_is_one_class_and_one_register_call(monkeypatch):
    monkeypatch.setattr(commands, "REGISTRY", dict(REGISTRY))
    monkeypatch.setattr(commands, "COMMAND_ALIASES", dict(COMMAND_ALIASES))
    import dskit.turn.understanding as understanding

    monkeypatch.setattr(understanding, "REGISTRY", commands.REGISTRY)
    monkeypatch.setattr(understanding, "COMMAND_ALIASES", commands.COMMAND_ALIASES)
    for table in MESSAGES.values():
        monkeypatch.delitem(table, "snoozed", raising=False)
    commands.register(_Snooze)
    assert "- snooze：用户要稍后再办当前任务" in commands.command_lines("zh")
    state, _ = step("", {"commands": [{"type": "start_task", "task": "book_restaurant", "slots": {"people": 2}}]},
                    CATALOG)
    _, decision = step(state, json.dumps({"commands": [{"type": "remind_later"}]}), CATALOG)
    assert "「订餐」先放一放" in decision["question"]
    assert any(entry.startswith("snooze t1") for entry in decision["applied"])
    for table in MESSAGES.values():
        table.pop("snoozed", None)


def test_a_command_missing_a_text_fails_when_it_is_registered_not_in_a_users_turn():
    @dataclasses.dataclass(frozen=True)
    class _Mute(Command):
        source: str = "model"
        kind = "mute"
        texts = {"muted": {"zh": "好的，安静了。"}}  # no English

    with pytest.raises(KeyError, match="muted.*en"):
        register(_Mute)
    assert "mute" not in REGISTRY and all("muted" not in table for table in MESSAGES.values())


def test_a_yes_is_a_confirm_and_judged_by_the_rules_in_order():
    from dskit.rules.admission import rule_names

    assert rule_names()["Confirmed"] == ["yes_beside_refused_change", "yes_said", "required_slots_filled",
                                         "something_shown", "shown_unchanged"]
    assert Confirm().wire() == {"type": "confirm"}
