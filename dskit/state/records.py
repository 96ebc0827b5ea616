"""The engine's typed records: a task on the stack, and the decision of a turn.

Each record is built in one place (:func:`task_record`, :func:`new_decision`), so a key added here
reaches every caller — the state machine, its failure path, the code nodes and the plugin tools —
instead of being typed out again where a dict literal used to be. The records stay plain dicts
(``TypedDict``): they travel as JSON in the state string and in the ``decision`` output.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, TypedDict


class Stage(str, Enum):
    """Where a task on the stack is. The top task is COLLECTING or CONFIRMING; the others are SUSPENDED,
    except a sub-task that is complete and waits for its parent to execute (WAITING; docs/design.md).

    The state stores the plain value (``Stage.WAITING.value``); a stored string compares equal to its
    member, so ``task["stage"] == Stage.WAITING`` reads a loaded state as it is.
    """

    COLLECTING = "COLLECTING"
    CONFIRMING = "CONFIRMING"
    SUSPENDED = "SUSPENDED"
    WAITING = "WAITING"


STAGES = tuple(stage.value for stage in Stage)
NEXT_ACTIONS = ("ask_slot", "confirm", "clarify", "execute", "faq", "chitchat", "handoff", "fallback")


class TaskRef(TypedDict):
    """A task as the decision names it: the task in focus."""

    id: str
    name: str
    label: str
    stage: str


class _TaskTrust(TypedDict, total=False):
    """What a task carries only while a question is out (dskit.state.integrity): the digest of what a
    confirmation or check question showed (``shown``), of what a sub-task's own yes covered
    (``approved``), and the values held for the user to check (``unconfirmed``, slot -> value, None
    for a deletion). Absent otherwise."""

    shown: str
    approved: str
    unconfirmed: dict[str, Any]


class TaskRecord(TaskRef, _TaskTrust):
    """One open task on ``state["task_stack"]`` (docs/state-format.md): its reference and its data.
    :data:`TASK_KEYS` lists every key a task may carry; :class:`dskit.state.taskstack.TaskStack` is the only
    code that changes one."""

    slots: dict[str, Any]
    history: dict[str, list[Any]]
    parent_id: str | None
    opened_turn: int


# Every key a task record may carry, in the order the state writes them.
TASK_KEYS = ("id", "name", "label", "stage", "slots", "history", "parent_id", "opened_turn", "unconfirmed", "shown",
             "approved")


class ExecutePayload(TypedDict):
    """What the task API receives: the task, its slots, and the sub-tasks submitted with it."""

    task_id: str
    task: str
    label: str
    slots: dict[str, Any]
    subtasks: list[ExecutePayload]


class SlotChange(TypedDict):
    """One slot whose value this turn changed, after the turn's one outcome per slot: ``op`` is how the
    final value came (set, delete or rollback)."""

    task_id: str
    slot: str
    op: str


class _DecisionError(TypedDict, total=False):
    """Only a turn that failed inside the engine carries ``error`` (typing.NotRequired is Python 3.11+,
    and code nodes run on 3.10)."""

    error: str


class Decision(_DecisionError):
    """What one turn decided (docs/engine-api.md lists the meaning of each key)."""

    next_action: str
    task: TaskRef | None
    slot: str | None
    question: str
    execute: ExecutePayload | None
    faq: dict[str, str] | None
    handoff: dict[str, str] | None
    resumed: dict[str, str] | None
    notices: list[str]
    missing_slots: list[str]
    rewritten_query: str
    applied: list[str]
    changes: list[SlotChange]
    dropped: list[dict[str, Any]]
    ended: list[dict[str, str]]
    progress: bool
    lang: str
    turn: int


def task_record(task_id: str, name: str, label: str, *, opened_turn: int, stage: Stage = Stage.COLLECTING,
                slots: dict[str, Any] | None = None, parent_id: str | None = None) -> TaskRecord:
    """A task as it sits on the stack: new (no slots yet) or restored (a failed execution's slots)."""
    return {"id": task_id, "name": name, "label": label, "stage": Stage(stage).value, "slots": dict(slots or {}),
            "history": {}, "parent_id": parent_id, "opened_turn": opened_turn}


def task_ref(task: TaskRecord | None, label: str = "") -> TaskRef | None:
    """The decision's ``task`` for a stack entry (``label``: the catalog's display name, if known)."""
    if task is None:
        return None
    return {"id": task["id"], "name": task["name"], "label": label or task.get("label") or task["name"],
            "stage": task["stage"]}


def new_decision(next_action: str, *, lang: str, turn: int, **fields: Any) -> Decision:
    """A decision with every key present: the defaults below, then ``fields``.

    ``progress`` is true when the turn moved a task on (started, filled, changed, cancelled, confirmed
    or denied something, or reset): the history keeps such a turn longest.
    """
    decision: Decision = {
        "next_action": next_action, "task": None, "slot": None, "question": "", "execute": None,
        "faq": None, "handoff": None, "resumed": None, "notices": [], "missing_slots": [],
        "rewritten_query": "", "applied": [], "changes": [], "dropped": [], "ended": [], "progress": False,
        "lang": lang, "turn": turn,
    }
    unknown = set(fields) - set(Decision.__annotations__)
    if unknown:
        raise KeyError(f"not decision keys: {sorted(unknown)}")
    decision.update(fields)  # type: ignore[typeddict-item]
    return decision
