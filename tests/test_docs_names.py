"""docs/design.md and docs/grounding.md name the engine's functions as `module.name`: every such name
exists (a renamed or removed function fails here, not in a reader's hands), and design.md's example of
a new command runs as written."""

from __future__ import annotations

import importlib
import re
import sys
import types
from pathlib import Path

import pytest

from dskit.tooling.codegen.bundle import engine_module, engine_paths

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("docs/design.md", "docs/grounding.md", "docs/engine-api.md")
NAME = re.compile(r"`([a-z_]+)\.([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?(?:\([^`]*\))?`")


def missing_names(text: str) -> list[str]:
    """`module.name` and `module.Class.name` mentions in ``text`` whose engine module lacks the name."""
    modules = engine_paths()
    found = []
    for match in NAME.finditer(text):
        module, name, attribute = match.groups()
        if module not in modules or name == "py":  # a file name (`reducer.py`), not a function
            continue
        owner = getattr(importlib.import_module(engine_module(module)), name, None)
        if owner is None or (attribute and not hasattr(owner, attribute)):
            found.append(match.group(0))
    return found


@pytest.mark.parametrize("page", PAGES)
def test_every_function_a_page_names_exists(page: str) -> None:
    assert missing_names((ROOT / page).read_text(encoding="utf-8")) == []


def test_a_missing_name_is_found() -> None:
    assert missing_names("`commands.apply_commands` `admission.admit_value` `TaskStack.top` `decide.Step.x`") == [
        "`admission.admit_value`", "`decide.Step.x`"]


def test_the_design_page_s_new_command_runs_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """The block under "Adding a command" is the whole of a new command: registered, it is in the
    prompt's list and the model's "remind_later" is read and applied."""
    from dskit.base.messages import MESSAGES
    from dskit.turn import commands, understanding
    from dskit.turn.machine import step

    block = re.search(r"### Adding a command.*?```python\n(.*?)```", (ROOT / "docs/design.md").read_text(encoding="utf-8"),
                      re.S).group(1)
    monkeypatch.setattr(commands, "REGISTRY", dict(commands.REGISTRY))
    monkeypatch.setattr(commands, "COMMAND_ALIASES", dict(commands.COMMAND_ALIASES))
    monkeypatch.setattr(understanding, "REGISTRY", commands.REGISTRY)
    monkeypatch.setattr(understanding, "COMMAND_ALIASES", commands.COMMAND_ALIASES)
    for table in MESSAGES.values():
        monkeypatch.setitem(table, "snoozed", "")
        del table["snoozed"]
    try:
        page = types.ModuleType("design_example")
        monkeypatch.setitem(sys.modules, page.__name__, page)  # a dataclass looks its module up
        exec(compile(block, "docs/design.md", "exec"), page.__dict__)  # noqa: S102 - our own page
        assert "- snooze：用户要稍后再办当前任务" in commands.command_lines("zh")
        catalog = (ROOT / "examples" / "catalogs" / "restaurant.json").read_text(encoding="utf-8")
        state, _ = step("", {"commands": [{"type": "start_task", "task": "book_restaurant", "slots": {"people": 2}}]},
                        catalog)
        _, decision = step(state, {"commands": [{"type": "remind_later"}]}, catalog)
        assert "先放一放" in decision["question"]
        assert any(entry.startswith("snooze t1") for entry in decision["applied"])
    finally:
        for table in MESSAGES.values():
            table.pop("snoozed", None)
