"""A tiny driver for engine scenarios: feed understandings turn by turn, read the state back."""

from __future__ import annotations

from dskit.turn.machine import step
from dskit.state.state import current_task, load_state


class Dialogue:
    """Runs ``step`` turn after turn, carrying the state string as Dify's conversation variable would."""

    def __init__(self, catalog: dict, lang: str = "zh"):
        self.catalog = catalog
        self.lang = lang
        self.state_str = ""
        self.decision: dict = {}

    def say(self, *commands: dict, query: str = "", raw: str | None = None) -> dict:
        """One user turn: the understanding is ``raw`` text if given, else these commands."""
        understanding = raw if raw is not None else {"rewritten_query": query, "commands": list(commands)}
        self.state_str, self.decision = step(self.state_str, understanding, self.catalog, lang=self.lang)
        return self.decision

    @property
    def state(self) -> dict:
        return load_state(self.state_str)[0]

    @property
    def top(self) -> dict | None:
        return current_task(self.state)

    def slots(self, name: str | None = None) -> dict:
        """Slots of the named open task (nearest to the top), or of the current one."""
        for task in reversed(self.state["task_stack"]):
            if name is None or task["name"] == name:
                return task["slots"]
        return {}

    def stack(self) -> list[tuple[str, str]]:
        return [(t["name"], t["stage"]) for t in self.state["task_stack"]]


def start(task: str, **slots) -> dict:
    return {"type": "start_task", "task": task, "slots": slots}


def set_(task: str | None = None, **slots) -> dict:
    command = {"type": "set_slots", "slots": slots}
    if task:
        command["task"] = task
    return command


def cmd(kind: str, **fields) -> dict:
    return {"type": kind, **fields}
