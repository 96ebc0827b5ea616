"""A catalog that cannot work is refused everywhere, by what fits (issue 39).

A 5 MB description and 16,000 tasks used to pass ``dskit validate``; in chat the prompt was then cut
inside the description, so the state and the message never reached the model. The catalog now has to
fit Dify's variable size (TASK_CATALOG is an environment variable) and the understanding prompt with
room for the state, the recent turns and the message. These tests hold the figures to their sources,
show that a catalog just inside the limit really leaves that room in a conversation, and that a catalog
past it is a clear error in the engine's nodes, ``dskit validate`` and ``dskit new``, naming the field.
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest

import dskit.catalog.catalog as cat
from dskit.catalog.catalog import CatalogError, load_catalog, validate_catalog
from dskit.context.context import CONTEXT_HEADERS, CONTEXT_TOTAL_BUDGET, CONTEXT_ZONE_BUDGETS
from dskit.base.limits import MAX_VARIABLE_SIZE
from dskit.surfaces.nodes import context_node, history_node, state_node
from dskit.context.prompts import PROMPT_LATEST_RESERVE_TOKENS
from dskit.base.tokens import estimate_tokens
from conftest import load_example_catalog


def _bike() -> dict:
    return load_example_catalog("bike_repair_en")


def _with_description(words: int) -> dict:
    catalog = _bike()
    catalog["tasks"]["book_repair"]["description"] = " ".join(["repair"] * words)
    return catalog


def _at_the_limit() -> dict:
    """The bike catalog with book_repair's description as long as validation allows."""
    low, high = 0, 40_000
    while low < high:
        mid = (low + high + 1) // 2
        if validate_catalog(_with_description(mid)) == []:
            low = mid
        else:
            high = mid - 1
    return _with_description(low)


def test_the_fit_figures_are_the_prompts_own_budgets() -> None:
    assert cat.PROMPT_TOTAL_TOKENS == CONTEXT_TOTAL_BUDGET
    assert cat.PROMPT_MESSAGE_TOKENS == PROMPT_LATEST_RESERVE_TOKENS
    assert cat.PROMPT_HISTORY_TOKENS == CONTEXT_ZONE_BUDGETS["history"]
    assert cat.CATALOG_MAX_SIZE == MAX_VARIABLE_SIZE
    for headers in CONTEXT_HEADERS.values():  # both zones' headers and the blank lines after them
        assert estimate_tokens(f"{headers['catalog']}\n\n\n{headers['state']}\n") <= cat.ZONE_HEADERS_TOKENS


def test_a_catalog_just_inside_the_limit_leaves_room_for_state_history_and_message() -> None:
    """A conversation on the largest catalog validate accepts: the task booked, then asked for again. The
    prompt holds the task list, the state with the task open and done, the latest turns and a message of
    the length the prompt keeps room for, and nothing of the catalog or the state is cut."""
    catalog = json.dumps(_at_the_limit())
    assert validate_catalog(_with_description(len(json.loads(catalog)["tasks"]["book_repair"]["description"].split())
                                              + 50)) != []
    values = {"bike_type": "electric", "problem": "the rear brake squeaks and the chain slips off",
              "day": "2026-12-24", "pickup_service": True}
    assert all(estimate_tokens(str(v)) <= cat.STATE_VALUE_TOKENS for v in values.values())
    turns = [("Book a repair for my electric bike, the rear brake squeaks and the chain slips off, 2026-12-24, "
              "collect it please", [{"type": "start_task", "task": "book_repair", "slots": values}]),
             ("yes", [{"type": "confirm"}]),
             ("Book it again for the same bike, same problem, 2026-12-24, collect it",
              [{"type": "start_task", "task": "book_repair", "slots": values}])]
    state = history = summary = ""
    for message, commands in turns:
        out = state_node(understanding=json.dumps({"rewritten_query": message, "commands": commands}),
                         sys_context_str=state, task_catalog=catalog, lang="en")
        assert out["error"] == "", out["error"]
        kept = history_node(old_history=history, summary=summary, user_query=message, answer=out["question"],
                            decision=out["decision"], lang="en")
        state, history, summary = out["sys_context_str"], kept["history"], kept["summary"]
    assert out["next_action"] == "confirm"  # booked once, asked for again
    message = " ".join(["please"] * 500)[:1_000]  # about as long as the reserve for the message
    assert estimate_tokens(message) <= PROMPT_LATEST_RESERVE_TOKENS - 10
    prompt = context_node(query=message, sys_context_str=state, history=history, summary=summary,
                          task_catalog=catalog, lang="en")
    report = json.loads(prompt["report"])
    assert prompt["error"] == "" and not prompt["over_budget"], report
    assert report["turns_kept"] >= 1, report  # the latest turn still reaches the model
    assert "repair repair" in prompt["context"] and message in prompt["context"]
    assert "done" in prompt["state_text"] and "CONFIRMING" in prompt["state_text"]


def test_a_five_megabyte_description_is_refused_by_its_path_in_every_place() -> None:
    catalog = _bike()
    catalog["tasks"]["book_repair"]["description"] = "x" * 5_000_000
    text = json.dumps(catalog)
    problems = validate_catalog(text)
    assert len(problems) == 1 and problems[0].startswith("$: ")
    assert "$.tasks.book_repair.description (5,000,000 characters)" in problems[0]
    assert f"{MAX_VARIABLE_SIZE:,}" in problems[0] and "MAX_VARIABLE_SIZE" in problems[0]
    with pytest.raises(CatalogError):
        load_catalog(text)
    state = state_node(understanding='{"commands": []}', task_catalog=text, query="hi", lang="en")
    assert "book_repair.description" in state["error"]
    assert "misconfigured" in state["question"]  # the user is told plainly; the builder reads the error
    context = context_node(query="hi", task_catalog=text)
    assert "book_repair.description" in context["error"] and "x" * 100 not in context["context"]


def test_a_long_description_within_dify_limits_is_refused_for_the_prompt() -> None:
    problems = validate_catalog(_with_description(5_000))
    assert len(problems) == 1 and problems[0].startswith("$.tasks.book_repair.description: ")
    assert "understanding prompt" in problems[0] and f"{cat.PROMPT_TOTAL_TOKENS:,} tokens" in problems[0]


def test_sixteen_thousand_tasks_are_refused_with_the_count() -> None:
    catalog = _bike()
    catalog["tasks"] = {f"t{i}": {} for i in range(16_000)}
    problems = validate_catalog(catalog)
    assert len(problems) == 1 and problems[0].startswith("$.tasks: ")
    assert "16,000 tasks" in problems[0] and "several assistants" in problems[0]


def test_many_small_tasks_name_the_largest_parts() -> None:
    catalog = _bike()
    catalog["tasks"].update({f"task_{i}": {"label": f"Task {i}", "description": "Something the shop does for "
                                           "a customer who asks for it"} for i in range(150)})
    problems = validate_catalog(catalog)
    assert len(problems) == 1 and "152 tasks" in problems[0]
    assert "$.tasks.task_0.description" in problems[0] or "$.tasks.book_repair" in problems[0]


def test_a_question_longer_than_the_recent_turns_is_refused() -> None:
    catalog = _bike()
    catalog["tasks"]["book_repair"]["slots"]["day"]["ask"] = "Which day? " * 400
    assert any(p.startswith("$.tasks.book_repair.slots.day.ask: ") and "tokens" in p
               for p in validate_catalog(catalog))


def test_a_name_and_description_are_strings_and_a_name_fits_an_app_name() -> None:
    catalog = _bike()
    catalog["name"] = "n" * 201
    catalog["description"] = 5
    problems = validate_catalog(catalog)
    assert any(p.startswith("$.name: 201 characters") for p in problems)
    assert "$.description: must be a string" in problems


@pytest.mark.parametrize("enum, where, words", [
    (["road", "mountain", "road"], "enum[2]", "repeats enum[0]"),
    (["Road", "mountain", "road"], "enum[2]", "another spelling"),
    (["road", " Mountain ", "mountain"], "enum[2]", "another spelling"),
])
def test_a_repeated_enum_value_is_refused_with_its_path(enum, where, words) -> None:
    catalog = _bike()
    slot = catalog["tasks"]["book_repair"]["slots"]["bike_type"]
    slot["enum"], slot["aliases"] = enum, {}
    problems = validate_catalog(catalog)
    assert any(p.startswith(f"$.tasks.book_repair.slots.bike_type.{where}: ") and words in p for p in problems), problems


def test_numbers_equal_in_value_are_one_enum_value() -> None:
    catalog = _bike()
    catalog["tasks"]["book_repair"]["slots"]["seats"] = {"type": "number", "enum": [1, 2, 1.0]}
    assert any(p.startswith("$.tasks.book_repair.slots.seats.enum[2]: ") for p in validate_catalog(catalog))


def test_validate_and_new_refuse_an_oversized_catalog(tmp_path, capsys) -> None:
    from dskit.tooling.cli import main

    path = tmp_path / "huge.json"
    catalog = _bike()
    catalog["tasks"] = {f"t{i}": {} for i in range(16_000)}
    path.write_text(json.dumps(catalog), encoding="utf-8")
    with contextlib.redirect_stderr(io.StringIO()):
        assert main(["validate", str(path)]) == 1
        assert "$.tasks: the task list takes" in capsys.readouterr().out
        assert main(["new", str(path), "--out", str(tmp_path / "out")]) == 1
    assert "16,000 tasks" in capsys.readouterr().out
    assert not (tmp_path / "out").exists()
