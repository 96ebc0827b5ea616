"""The state machine's entry points: one turn, and a task API's outcome written back.

``step(state_str, understanding, catalog) -> (new_state_str, decision)`` is a pure function of its
inputs (a LangGraph-style reducer), so every turn can be replayed and tested on its own. This module
only orchestrates a turn; each part lives in its own room:

- the state is loaded and held to the catalog (:mod:`dskit.state.state`);
- the model's answer is read into commands (:mod:`dskit.turn.understanding`, :mod:`dskit.turn.commands`);
- the commands are applied in a fixed order, each only with the user's words behind it
  (:mod:`dskit.turn.commands`, :mod:`dskit.rules.admission`) on a :class:`dskit.turn.turn.Turn`;
- the decision is made (:mod:`dskit.turn.decide`), and the state written within Dify's limits.

:func:`run_turn` returns the turn as a :class:`TurnResult` (the state as a structure, its text encoded
once, the decision); the code nodes and the plugin tools turn it into their outputs at their edge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..catalog.catalog import CATALOG_RULES, Catalog, load_catalog
from .backup import asked_left_out, backup_fill, forms_left_out, options_left_out, time_left_out
from .commands import apply_commands, is_cannot_handle
from .decide import decide, not_understood
from ..rules.grounding import make_evidence
from ..state.integrity import CHECKED_KEY, digest, shown_digest, trust_state
from ..rules.offers import take_offers
from ..base.jsonish import scrub_surrogates
from ..base.messages import msg, norm_lang
from ..state.records import Decision, Stage, new_decision, task_record, task_ref
from ..state.state import (MAX_ERROR_TEXT, MAX_TIMELINE, add_error, current_task, dump_state, fit_state, load_trusted,
                    reconcile_state, sound_body)
from .subtasks import restore_subtasks
from ..state.taskstack import TaskStack
from .effects import Refused, StackCleared, TaskRemoved, TurnRecorded, Understood
from .reducer import reduce
from ..base.text import short_text
from .turn import Turn
from .understanding import parse_understanding

# A timeline entry keeps at most this many applied and dropped commands (the state stays small).
TIMELINE_ITEMS = 12


@dataclass
class TurnResult:
    """One turn: the new state (``state``, and ``text``, the string written back), the decision."""

    state: dict
    text: str
    decision: Decision


def _timeline(turn: Turn, parsed: dict, decision: dict, changed: list[str]) -> None:
    reduce(turn, TurnRecorded({
        "turn": turn.state["turn"],
        "changed": [str(c)[:140] for c in changed[:TIMELINE_ITEMS]],  # "task_id.slot" (grounding)
        "query": parsed["rewritten_query"][:120],
        "applied": [str(a)[:200] for a in decision["applied"][:TIMELINE_ITEMS]],
        "dropped": [{"command": str(d.get("command"))[:200], "reason": str(d.get("reason"))[:200]}
                    for d in decision["dropped"][:TIMELINE_ITEMS]],
        "action": decision["next_action"],
        "task": decision["task"]["id"] if decision["task"] else None,
    }))


def since_reset(state: dict, recent: Any) -> Any:
    """The user's recent messages said after the last reset ("全部重新来吧") or the last cancellation that
    left no task open ("算了，不订了"): what was said before it is not evidence for the tasks after it (the
    origin of the trip the user dropped; the quiet table wished for the booking they cancelled, when they
    book again for another day). The timeline keeps more turns than grounding reads (MAX_TIMELINE >=
    RECENT_TURNS), so a reset it no longer holds is too old to matter. ``state["turn"]`` is this turn's
    number."""
    logged = {StackCleared().entry(), StackCleared(source="engine").entry()}  # how a reset is logged
    cancel = TaskRemoved("", "", reason="cancelled").entry().partition(" ")[0]  # how a cancellation is logged
    resets = [entry.get("turn") for entry in state["timeline"] if isinstance(entry, dict)
              and any(str(a) in logged or entry.get("task") is None and str(a).removeprefix("backup ").startswith(
                  cancel + " ") for a in entry.get("applied") or ())]
    if not resets or not isinstance(resets[-1], int) or not isinstance(recent, (list, tuple)):
        return recent
    after = max(0, state["turn"] - 1 - resets[-1])
    return list(recent[-after:]) if after else []


def catalog_mark(text: str) -> str:
    """The mark of a catalog's JSON text under these rules (dskit.catalog.catalog.CATALOG_RULES): equal marks, the
    very same text checked by the very same rules."""
    return digest(["dskit.catalog", CATALOG_RULES, text])


def kept_turn(state_in: Any, catalog: Catalog, lang: str, key: str, code: str, error: str,
              secret: str = "") -> TurnResult:
    """A turn that changes nothing: the incoming state (held to the catalog) with the error recorded,
    and a fallback decision whose question says why (``key`` in dskit.base.messages)."""
    old = load_trusted(state_in, secret)
    try:
        reconcile_state(old, catalog)
    except Exception:  # noqa: BLE001 - the state as loaded is still better than none
        pass
    add_error(old, code, error)
    top = current_task(old)
    decision = new_decision("fallback", lang=lang, turn=old["turn"], question=msg(key, lang),
                            task=task_ref(top), error=error)
    return TurnResult(old, dump_state(old, secret), decision)


def _apply(state: dict, parsed: dict, cat: Catalog, lang: str, evidence: Any,
           query: Any = None) -> tuple[Decision, list[str]]:
    """The commands of a parsed understanding applied to a loaded state: (decision, slots changed)."""
    said = parsed["rewritten_query"] or (query[:2000] if isinstance(query, str) else "")
    turn = Turn(state, cat, lang, evidence, said=said)
    for item in parsed["dropped"]:
        reduce(turn, Refused(short_text(item["command"]), item["reason"]))
    if parsed["usable"] and parsed["commands"] and all(is_cannot_handle(c) for c in parsed["commands"]):
        parsed["usable"], parsed["error"] = False, "the model could not handle the message (cannot_handle)"
    readable = parsed["usable"]
    if readable:
        apply_commands(turn, parsed["commands"])
        # what the user said of a task the model filled and the model left out (dskit.turn.backup)
        if options_left_out(turn) | forms_left_out(turn) | time_left_out(turn) | asked_left_out(turn):
            turn.writes.resolve()
    if backup_fill(turn, readable):  # what the model left out and the engine can see for itself (dskit.turn.backup)
        turn.writes.resolve()
        parsed["usable"] = True
    if parsed["usable"]:
        reduce(turn, Understood(by_engine=not readable))
        decision = decide(turn)
    else:
        decision = not_understood(turn, parsed["error"])
    decision["rewritten_query"] = parsed["rewritten_query"]
    changed = turn.writes.changed_keys() if parsed["usable"] else []
    _timeline(turn, parsed, decision, changed)
    return decision, changed


def run_turn(state_in: Any, understanding: Any, catalog: Any, *, lang: str | None = None, query: str | None = None,
             recent: Any = (), reference_date: Any = None, offered: Any = "", parsed: dict | None = None,
             secret: str = "", loaded: dict | None = None) -> TurnResult:
    """One turn as a :class:`TurnResult`; the arguments are :func:`step`'s. ``parsed``: the
    understanding already read by :func:`dskit.turn.understanding.parse_understanding` against this catalog
    (a caller that had to read it, to retry an unusable answer, does not pay for reading it twice).
    ``secret``: the key of the state's seal (dskit.state.integrity; "" seals with a plain digest).
    ``loaded``: ``load_trusted(state_in, secret)`` when the caller needed it first (it is changed).

    The new state remembers the mark of the catalog text it was checked against (``catalog_checked``),
    so that the next turn with the same text need not check it again (dskit.catalog.catalog.load_catalog)."""
    state = load_trusted(state_in, secret) if loaded is None else loaded
    mark = catalog_mark(catalog) if isinstance(catalog, str) else ""
    checked = state.get(CHECKED_KEY, "")
    cat = load_catalog(catalog, checked=checked, mark=mark)
    lang = norm_lang(lang or cat.language)
    try:
        if cat.mark:
            state[CHECKED_KEY] = cat.mark
        else:
            state.pop(CHECKED_KEY, None)
        if not (cat.mark and checked == cat.mark and sound_body(state_in, secret) is not None):
            reconcile_state(state, cat)  # not for the engine's own text held to this very catalog text
        state["turn"] += 1
        if parsed is None:
            parsed = parse_understanding(understanding, cat)
        evidence = make_evidence(query, since_reset(state, recent), reference_date, offered, take_offers(state))
        decision, _ = _apply(state, dict(parsed), cat, lang, evidence, query)
        text = fit_state(state, evict=False, secret=secret)
        if text is None:
            return kept_turn(state_in, cat, lang, "state_full", "size",
                             "this message was not applied: the dialogue state would exceed Dify's size "
                             "limits even without its history, timeline and old values", secret)
        return TurnResult(state, text, decision)
    except Exception as exc:  # a bug must not cost the user the conversation: keep the old state
        return kept_turn(state_in, cat, lang, "fallback", "internal", f"{type(exc).__name__}: {error_text(exc)}",
                         secret)


def step(state_str: Any, understanding: Any, catalog: Any, *, lang: str | None = None, query: str | None = None,
         recent: Any = (), reference_date: Any = None, offered: Any = "", secret: str = "") -> tuple[str, Decision]:
    """One turn: (new state string, decision). Raises CatalogError only for a broken catalog.

    ``query`` is the user's message this turn, ``recent`` their earlier messages (oldest first) and
    ``reference_date`` ("YYYY-MM-DD") the day relative dates count from: with them, only what the
    user said is applied (docs/grounding.md; :func:`dskit.surfaces.turn_inputs.turn_inputs` builds them the same
    way on every surface). ``offered``: the assistant's last reply, whose values a message that accepts
    them ("就这家") may take (dskit.rules.offers). ``query`` None turns grounding off — for replaying stored commands, whose
    messages are not at hand.

    The state written always loads back as written and fits Dify's limits (dskit.base.limits): when only
    dropping open tasks or their values could make it fit, the turn is refused instead and the
    incoming state kept, with the reason in ``error`` and in the state's ``errors``. Neither argument
    is modified.
    """
    result = run_turn(state_str, understanding, catalog, lang=lang, query=query, recent=recent,
                      reference_date=reference_date, offered=offered, secret=secret)
    return result.text, result.decision


def error_text(exc: BaseException) -> str:
    """An exception's message, safe to store (never raises)."""
    try:
        return scrub_surrogates(str(exc))[:MAX_ERROR_TEXT]
    except Exception:  # noqa: BLE001
        return ""


def _as_text(value: Any) -> str:
    try:
        return value if isinstance(value, str) else str(value)
    except Exception:  # noqa: BLE001
        return ""


def record_result(state_str: Any, task_id: str, ok: bool, detail: str = "", *, lang: str = "zh",
                  secret: str = "") -> str:
    """Write a task API's outcome back into the state; a failed task returns to the top, awaiting a retry.

    Never raises: an unknown task id, or a state damaged in any way, is recorded in ``errors``.
    """
    state = load_trusted(state_str, secret)
    try:
        task_id = task_id if isinstance(task_id, str) else short_text(task_id)
        entry = next((d for d in reversed(state["done"]) if d["task_id"] == task_id), None)
        if entry is None:
            add_error(state, "result", f"no executed task {task_id[:64]!r} to record a result for")
            return dump_state(state, secret)
        entry["status"] = "success" if ok else "failed"
        entry["detail"] = scrub_surrogates(_as_text(detail))[:MAX_ERROR_TEXT]
        if not ok:
            add_error(state, "execute", f"{entry['task']} ({task_id}) failed: {entry['detail']}")
            stack = TaskStack(state)
            if stack.find(task_id) is None:
                stack.push(task_record(task_id, entry["task"], entry["label"], opened_turn=state["turn"],
                                       stage=Stage.CONFIRMING, slots=entry["slots"], parent_id=entry["parent_id"]))
            restore_subtasks(state, entry)
            task = stack.find(task_id)
            if task is not None and task["stage"] == Stage.CONFIRMING:  # the failure reply shows it and asks to retry
                stack.mark_shown(task, shown_digest(task, stack.waiting_under(task)))
        return dump_state(state, secret)
    except Exception as exc:  # noqa: BLE001 - the outcome is lost, the state is not
        old = load_trusted(state_str, secret)
        add_error(old, "internal", f"record_result: {type(exc).__name__}: {error_text(exc)}")
        return dump_state(old, secret)


__all__ = ["step", "run_turn", "TurnResult", "record_result", "kept_turn", "MAX_TIMELINE"]
