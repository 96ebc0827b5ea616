"""The understanding contract's JSON schema (dskit/turn/command_schema.py): every answer a perfect model
gives on every suite fits it, and what a small model pads or invents does not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema")
yaml = pytest.importorskip("yaml")

from dskit.catalog.catalog import load_catalog  # noqa: E402
from dskit.turn.command_schema import SCHEMA_MAX_COMMANDS, command_schema, schema_kinds  # noqa: E402
from dskit.turn.commands import REGISTRY  # noqa: E402
from dskit.tooling.eval.suite import SUITE_DIR, load_suites  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ORACLES = [(SUITE_DIR, ROOT / "tests" / "fixtures" / "eval" / "oracle.yaml"),
           (SUITE_DIR / "heldout", ROOT / "tests" / "fixtures" / "heldout_oracle.yaml"),
           (SUITE_DIR / "heldout2", ROOT / "tests" / "fixtures" / "heldout2_oracle.yaml")]


def _restaurant():
    return load_catalog(json.loads((ROOT / "examples" / "catalogs" / "restaurant.json").read_text(encoding="utf-8")))


def _valid(schema: dict, answer: dict) -> bool:
    return jsonschema.Draft7Validator(schema).is_valid(answer)


def test_the_schema_is_draft_7_and_names_every_command_of_the_registry() -> None:
    schema = command_schema(_restaurant())
    jsonschema.Draft7Validator.check_schema(schema)
    assert schema_kinds(schema) == set(REGISTRY)


@pytest.mark.parametrize("folder,oracle", ORACLES, ids=["shipped", "heldout", "heldout2"])
def test_every_perfect_answer_fits_its_catalogs_schema(folder: Path, oracle: Path) -> None:
    answers = yaml.safe_load(oracle.read_text(encoding="utf-8"))
    checked = 0
    for suite in load_suites([folder]):
        schema = command_schema(suite.catalog)
        for turn in suite.turns:
            commands = answers[turn.user]
            commands = commands["commands"] if isinstance(commands, dict) else commands
            # The schema asks set_slots for its task, which the engine infers when there is one open
            commands = [{**c, "task": turn.expect.get("task")} if c["type"] == "set_slots" and "task" not in c
                        else c for c in commands]
            answer = {"rewritten_query": turn.user, "commands": commands}
            errors = [e.message for e in jsonschema.Draft7Validator(schema).iter_errors(answer)]
            assert errors == [], (suite.name, turn.user)
            checked += 1
    assert checked >= 30


def test_padding_and_invented_slots_do_not_fit() -> None:
    """What the 1.5B model was seen to write: an empty budget, a slot the task does not have, a count
    in words, a time in words, a task the catalog does not have, an area outside the enum."""
    schema = command_schema(_restaurant())

    def start(**slots: object) -> dict:
        return {"rewritten_query": "", "commands": [{"type": "start_task", "task": "book_restaurant", "slots": slots}]}

    assert _valid(schema, start(date="周六", time="19:30", people=4, area=["城东"], private_room=True))
    assert not _valid(schema, start(budget=""))
    assert not _valid(schema, start(city="北京"))
    assert not _valid(schema, start(people="三个人"))
    assert not _valid(schema, start(time="周六晚上"))
    assert not _valid(schema, start(area="郊区"))
    assert not _valid(schema, {"rewritten_query": "", "commands": [{"type": "start_task", "task": "weather"}]})
    assert not _valid(schema, {"rewritten_query": "", "commands": [{"type": "read_only"}]})


def test_a_slot_taken_away_is_null_only_in_set_slots() -> None:
    schema = command_schema(_restaurant())
    take_away = {"type": "set_slots", "task": "book_restaurant", "slots": {"budget": None}}
    assert _valid(schema, {"rewritten_query": "", "commands": [take_away]})
    assert not _valid(schema, {"rewritten_query": "", "commands": [{**take_away, "type": "start_task"}]})


def test_a_looping_model_is_cut_at_a_bounded_number_of_commands() -> None:
    schema = command_schema(_restaurant())
    chat = {"type": "chitchat"}
    assert _valid(schema, {"rewritten_query": "", "commands": [chat] * SCHEMA_MAX_COMMANDS})
    assert not _valid(schema, {"rewritten_query": "", "commands": [chat] * (SCHEMA_MAX_COMMANDS + 1)})
