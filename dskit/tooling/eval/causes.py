"""Why a turn is not right: every failed turn of ``dskit eval`` is attributed to one cause.

Read from what the turn left behind — the model's answer, what the engine applied and dropped (with
its reasons), the writes and executions scored by :mod:`.metrics` — in this order, the first that holds:

- ``catalog_unverified``: the turn ran on a Dify app whose catalog could not be checked against the
  suite's (``TurnOutput.catalog_unverified``): an app built from another catalog gets every turn wrong,
  and any cause below would blame the model or the engine for it;
- ``model_failed``: the call failed or its answer was unreadable;
- ``grounding_let_wrong``: a value nobody asked for, or a wrong one, was written, or a task ran wrongly
  (the model proposed it and the engine let it through);
- for the first expected value the state lacks: ``grounding_refused`` when the model gave exactly that
  value and the engine dropped it, ``model_wrong`` when the model gave another value for the slot,
  ``model_omitted`` when it gave none; ``policy`` when the model gave it, nothing dropped it, and it is
  still not there;
- for a turn whose values are right but whose action is not: ``grounding_refused`` when a command that
  leads to the expected action was dropped, ``model_omitted`` when the model gave no such command,
  ``policy`` otherwise (the engine decided differently with what it had).
"""

from __future__ import annotations

import json
from typing import Any

from .values import canon

CAUSES = ("model_failed", "model_omitted", "model_wrong", "grounding_refused", "grounding_let_wrong", "policy",
          "catalog_unverified")
CAUSE_TEXT = {
    "model_failed": "the model failed or answered unreadably",
    "model_omitted": "the model omitted a value or command",
    "model_wrong": "the model wrote a wrong value",
    "grounding_refused": "grounding refused a right value or command",
    "grounding_let_wrong": "grounding let a wrong value through",
    "policy": "engine policy",
    "catalog_unverified": "catalog not verified (the app may run another catalog)",
}
# The commands that lead to an expected action.
_LEADS_TO = {"execute": {"confirm", "start_task", "set_slots"}, "faq": {"faq"}, "chitchat": {"chitchat"},
             "handoff": {"handoff"}, "ask_slot": {"start_task", "set_slots", "rollback_slot", "deny", "cancel_task"},
             "confirm": {"start_task", "set_slots", "rollback_slot", "deny"}}


def _commands(scorer: Any) -> list[dict]:
    """The commands of the model's understanding answer this turn, as the engine reads them, in their wire
    form (what the model would have written had it written them cleanly)."""
    from dskit.turn.understanding import parse_understanding  # noqa: PLC0415

    for call in scorer.output.calls:
        if getattr(call, "text", ""):
            parsed = parse_understanding(call.text, scorer.catalog)
            if parsed["usable"]:
                return [command.wire() for command in parsed["commands"]]
    return []


def _dropped(scorer: Any) -> list[dict]:
    out = []
    for item in scorer.score.dropped:
        raw = item.get("command") if isinstance(item, dict) else item
        try:
            command = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            continue
        if isinstance(command, dict):
            out.append(command)
    return out


def _missing(scorer: Any) -> list[tuple[str, str, Any]]:
    """(task, slot, expected value) the turn expects and the state (or what ran) does not hold."""
    have = scorer.after.open_by_name()
    for done in scorer._executed():  # noqa: SLF001 - the scorer's own view of what ran this turn
        have.setdefault(str(done.get("task")), dict(done.get("slots") or {}))
    expect = scorer.turn.expect
    tasks = set((expect.get("state") or {})) | ({expect["task"]} if expect.get("task") else set())
    tasks |= {item["task"] for item in scorer.turn.executions()}
    missing = []
    for task in sorted(tasks):
        wanted = scorer._expected_slots_for(task) or {}  # noqa: SLF001
        for slot, value in wanted.items():
            if value is not None and canon(scorer.catalog, task, slot, value) != canon(
                    scorer.catalog, task, slot, (have.get(task) or {}).get(slot)):
                missing.append((task, slot, value))
    return missing


def _same_value(scorer: Any, task: str, slot: str, left: Any, right: Any) -> bool:
    return canon(scorer.catalog, task, slot, left) == canon(scorer.catalog, task, slot, right)


def attribute(scorer: Any) -> str:
    """The cause of a failed turn ("" for a turn that passed); see the module docstring."""
    s = scorer.score
    if s.passed:
        return ""
    if scorer.output.catalog_unverified:
        return "catalog_unverified"
    if s.error or s.unreadable:
        return "model_failed"
    if any(w.kind in ("wrong", "unasked") for w in s.writes) or s.wrongful:
        return "grounding_let_wrong"
    commands, dropped = _commands(scorer), _dropped(scorer)
    for task, slot, want in _missing(scorer):
        given = [c for c in commands if slot in (c.get("slots") or {}) and c.get("task") in (None, "", task)]
        right = [c for c in given if _same_value(scorer, task, slot, c["slots"][slot], want)]
        if right:
            refused = any(slot in (d.get("slots") or {}) and _same_value(scorer, task, slot, d["slots"][slot], want)
                          for d in dropped)
            return "grounding_refused" if refused else "policy"
        return "model_wrong" if given else "model_omitted"
    leads = _LEADS_TO.get(str(scorer.turn.expect.get("next_action") or ""), set())
    if leads and any(d.get("type") in leads for d in dropped):
        return "grounding_refused"
    if leads and not any(c.get("type") in leads for c in commands):
        return "model_omitted"
    return "policy"


__all__ = ["attribute", "CAUSES", "CAUSE_TEXT"]
