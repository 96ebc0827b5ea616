"""The worked examples the understanding prompt shows after the catalog (dskit.context.prompts.catalog_examples):
built from the catalog alone, answered the way the engine accepts, and fitting the catalog's schema.

A demonstration the engine would refuse teaches a small model to be refused; one with another domain's
words is a value it copies (the instructions hold none for that reason: tests/test_prompts.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dskit.catalog.catalog import load_catalog
from dskit.turn.command_schema import command_schema
from dskit.context.prompts import catalog_examples, generated_examples, understanding_head
from dskit.turn.understanding import parse_understanding
from enginekit import Dialogue

ROOT = Path(__file__).resolve().parents[1]
CATALOGS = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted((ROOT / "examples" / "catalogs").glob("*.json"))}


def _demos(data: dict) -> list[tuple[str, dict]]:
    catalog = load_catalog(data)
    demos = []
    for line in generated_examples(catalog, catalog.language):
        said, _, answer = line.partition(" → ")
        demos.append((said.split("：", 1)[-1].split(": ", 1)[-1], json.loads(answer)))
    return demos


@pytest.mark.parametrize("name", sorted(CATALOGS))
def test_every_demonstration_is_the_catalogs_own_and_fits_its_schema(name: str) -> None:
    data = CATALOGS[name]
    catalog = load_catalog(data)
    jsonschema = pytest.importorskip("jsonschema")
    demos = _demos(data)
    assert demos, name
    for said, answer in demos:
        assert jsonschema.Draft7Validator(command_schema(catalog)).is_valid(answer), said
        parsed = parse_understanding(answer, catalog)
        assert parsed["usable"] and not parsed["dropped"], said
        assert {c["task"] for c in answer["commands"] if "task" in c} <= set(data["tasks"]), said


def test_the_engine_accepts_what_each_restaurant_demonstration_shows() -> None:
    """Played in order on a fresh booking, every demonstrated command is applied: none is refused as
    unsaid, and the values are the ones shown."""
    data = CATALOGS["restaurant"]
    dialogue = Dialogue(data)
    for said, answer in _demos(data):
        decision = dialogue.say(*answer["commands"], query=said)
        assert not [d for d in decision["dropped"] if d["reason"].startswith(("not grounded", "refused"))], said
    assert dialogue.slots("book_restaurant") == {"date": "周五", "time": "19:00", "private_room": False}


def test_the_examples_follow_the_catalog_in_the_head_and_cost_few_tokens(monkeypatch) -> None:
    import dskit.context.prompts as prompts  # noqa: PLC0415

    catalog = load_catalog(CATALOGS["telecom"])
    block = catalog_examples(catalog, "zh", "generated")
    assert block.startswith("【示例】") and "install_broadband" in block and "订餐" not in block
    assert len(block) < 600 and catalog_examples(catalog, "zh", "none") == ""
    monkeypatch.setattr(prompts, "PROMPT_EXAMPLES", "generated")
    head = understanding_head(catalog, "")["head"]
    assert block in head and head.index(block) > head.index("【任务目录】")
    monkeypatch.setattr(prompts, "PROMPT_EXAMPLES", "none")
    assert block not in understanding_head(catalog, "")["head"]
