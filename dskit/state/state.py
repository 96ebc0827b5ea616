"""The dialogue state: one JSON string, the ``sys_context_str`` conversation variable.

The state is external (docs/design.md, "External state"): the LLM never writes it, the engine
does. Loading is defensive, because the string comes back from a Dify conversation variable that a
user may have edited, truncated or pointed at another tool's data: a string that is not a dskit
state at all starts a clean state, a state with damaged parts keeps what is sound, and every repair
or loss is recorded in ``errors`` so that it shows in Dify's variable inspector.

What the engine writes always fits Dify's limits (:mod:`dskit.base.limits`): every part of the state is
bounded (slot values by the catalog, histories by count and size, lists by length, texts by
characters), and :func:`dump_state` trims the least valuable parts — timeline, errors, old slot
values, records of executed tasks — before anything a user said is touched.
The format is documented in docs/state-format.md.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..catalog.catalog import Catalog, SlotSpec, coerce_slot_value
from ..base.jsonish import has_surrogates, jsonish_scrub, scrub_surrogates
from ..base.limits import CODE_MAX_STRING_LENGTH, MAX_VARIABLE_SIZE, string_excess
from .integrity import DIGEST_CHARS, digest, same_digest, seal, trust_state
from .records import STAGES, TASK_KEYS, Stage
from .taskstack import TaskStack, bound_history
from ..base.text import is_int

STATE_FORMAT = "dskit.state"
STATE_VERSION = 1
# The rules a state read as sound is known to pass (:func:`sound_body`): the repairs on load and
# :func:`reconcile_state`. Bump it whenever one of them changes (tests/test_state_sound.py fails until
# then): a state marked under the old rules is then repaired once more instead of trusted.
STATE_RULES = 2  # 2: the task stack and the number grammar joined the rules a sound state skips (issue 38)
# The key of the mark every state the engine writes begins with (``{"sound":"<digest>",...``): a
# digest of the rest of the text, of STATE_FORMAT and of STATE_RULES; an HMAC with the state's secret.
SOUND_KEY = "sound"
_SOUND_HEAD = '{"' + SOUND_KEY + '":"'
# An incoming string longer than this is not even decoded (Dify never hands a code node more than
# 400,000 characters; what the engine writes stays within dskit.base.limits).
MAX_STATE_CHARS = 1_000_000
MAX_ERRORS = 5
MAX_TIMELINE = 5
MAX_DONE = 3
# Longest texts kept in errors, timeline entries and other engine-written fields.
MAX_ERROR_TEXT = 300
_SHORT_TEXT = 200
# Room left free while trimming for the error entry that says what was trimmed.
_NOTE_ROOM = 800
_TASK_ID = re.compile(r"^t(\d{1,18})$")
_ESCAPED_SURROGATE = re.compile("\\\\[uU][dD][89a-fA-F]")  # a surrogate written as a JSON escape
_TOP_KEYS = ("format", "version", "turn", "global_intent_lock", "current_task_id", "task_stack",
             "next_task_seq", "counters", "handoff", "done", "errors", "timeline", "seal", "offers",
             "catalog_checked")
_DONE_STATUS = ("pending", "success", "failed")


def new_counters() -> dict:
    """Counters of the handoff policy: unusable outputs in a row, failed asks per slot, the slot being asked."""
    return {"parse_failures": 0, "failed_asks": {}, "asking": None}


def new_state() -> dict:
    """A clean state: no task, nothing counted."""
    return {
        "format": STATE_FORMAT,
        "version": STATE_VERSION,
        "turn": 0,
        "global_intent_lock": "UNLOCKED",
        "current_task_id": None,
        "task_stack": [],
        "next_task_seq": 1,
        "counters": new_counters(),
        "handoff": None,
        "done": [],
        "errors": [],
        "timeline": [],
    }


def _text(value: Any, limit: int = _SHORT_TEXT) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _task_problem(task: Any, index: int) -> str:
    """Why one stack entry cannot be kept at all ('' when it can)."""
    where = f"task_stack[{index}]"
    if not isinstance(task, dict):
        return f"{where} is not an object"
    for key, kind in (("id", str), ("name", str), ("slots", dict)):
        if not isinstance(task.get(key), kind):
            return f"{where}.{key} is missing or of the wrong type"
    return ""


def state_problem(data: Any) -> str:
    """Why a decoded string is not a usable dskit state at all ('' when it is)."""
    if not isinstance(data, dict):
        return "not a JSON object"
    if data.get("format") != STATE_FORMAT:
        return "not a dskit state (format field missing or foreign)"
    if data.get("version") != STATE_VERSION:
        return f"unsupported state version {data.get('version')!r}"[:200]
    for key, kind in (("turn", int), ("task_stack", list), ("next_task_seq", int),
                      ("counters", dict), ("done", list), ("errors", list), ("timeline", list)):
        if not isinstance(data.get(key), kind) or isinstance(data.get(key), bool):
            return f"field {key!r} is missing or of the wrong type"
    return ""


def _decode(text: Any) -> tuple[Any, str]:
    """A private decoded copy of an incoming state: (data, why it cannot be read)."""
    if isinstance(text, dict):
        try:
            text = json.dumps(text, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError) as exc:
            return None, f"state object is not JSON data ({type(exc).__name__})"
    elif not isinstance(text, str):
        return None, f"state is a {type(text).__name__}, not a string"
    if len(text) > MAX_STATE_CHARS:
        return None, f"state is {len(text)} characters, over the {MAX_STATE_CHARS} limit"
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return None, f"state is not valid JSON ({str(exc)[:80]})"
    if has_surrogates(text) or (("\\u" in text or "\\U" in text) and _ESCAPED_SURROGATE.search(text)):
        data = jsonish_scrub(data)
    if isinstance(data, dict):
        data.pop(SOUND_KEY, None)  # a mark that did not hold (sound_body) says nothing about the rest
    return data, ""


def _sound_mark(body: str, secret: str) -> str:
    return digest([STATE_FORMAT, STATE_RULES, body], secret)


def sound_body(text: Any, secret: str = "") -> str | None:
    """The state text without its mark when the mark holds ("the engine wrote exactly this, under these
    rules, with this secret"), else None.

    Why: an ordinary turn reads back the very text the engine wrote a turn earlier. Checking and
    repairing it again (:func:`state_problem`, :func:`_repair`) and holding it to the same catalog text
    again (:func:`reconcile_state`) would change nothing, yet a code node compiles those rules on every
    sandbox run. A text whose mark holds skips them; any other text (edited by hand or by an API call,
    written by another tool or by an older engine, or marked with another secret) is read defensively
    as before. Without a secret the mark is a plain digest that anyone who can write the variable can
    compute, like the seal (dskit.state.integrity); with one it is an HMAC only the engine can write.
    """
    if not isinstance(text, str) or len(text) > MAX_STATE_CHARS:
        return None
    found, body = _mark_and_body(text)
    return body if found and same_digest(found, _sound_mark(body, secret), secret) else None


def _mark_and_body(text: str) -> tuple[str, str]:
    """(the mark, the text without it) of a text that begins with one, else ("", text)."""
    end = len(_SOUND_HEAD) + DIGEST_CHARS
    if text.startswith(_SOUND_HEAD) and text[end:end + 2] == '",':
        return text[len(_SOUND_HEAD):end], "{" + text[end + 2:]
    return "", text


def unmarked(text: Any) -> Any:
    """A state text without its mark, so that it is read defensively; any other value as it is."""
    return _mark_and_body(text)[1] if isinstance(text, str) else text


def load_state(text: Any, secret: str = "") -> tuple[dict, list[str]]:
    """Decode a state string: (state, errors). Never raises.

    ``errors`` is non-empty only when nothing could be kept (not JSON, not a dskit state, oversized):
    the state is then clean. Damaged parts of a usable state are repaired or dropped, each with an
    entry in the state's own ``errors``. A dict is accepted too and is never modified. An empty string
    or None is simply a new conversation and is not an error. A text the engine wrote, whose mark holds
    under ``secret`` (:func:`sound_body`), is read as it is.
    """
    try:
        if text is None or (isinstance(text, str) and not text.strip()):
            return new_state(), []
        body = sound_body(text, secret)
        if body is not None:
            data = json.loads(body)
            state = new_state()
            state.update({key: data[key] for key in _TOP_KEYS if key in data})
            return state, []
        data, problem = _decode(text)
        if not problem:
            problem = state_problem(data)
        if problem:
            return new_state(), [f"state unusable: {problem}; started clean"
                                 if not problem.startswith("state ") else f"{problem}; started clean"]
        state = new_state()
        state.update({key: data[key] for key in _TOP_KEYS if key in data})
        notes = _repair(state, [key for key in data if key not in _TOP_KEYS])
        for note in notes:
            add_error(state, "state", note)
        return state, []
    except Exception as exc:  # noqa: BLE001 - a state no rule foresaw must not stop the turn
        return new_state(), [f"state unusable ({type(exc).__name__}); started clean"]


# ---------------------------------------------------------------- repairs on load

def _repair(state: dict, unknown: list) -> list[str]:
    """Make a decoded state sound in place; returns a note per repair (what was changed or dropped)."""
    notes = [f"unknown field {str(k)[:40]!r} dropped" for k in unknown[:3]]
    state["errors"] = [_clean_error(e) for e in state["errors"] if isinstance(e, dict)][-MAX_ERRORS:]
    state["timeline"] = [_clean_timeline(e) for e in state["timeline"] if isinstance(e, dict)][-MAX_TIMELINE:]
    state["turn"] = max(0, state["turn"])
    notes += _repair_stack(state)
    notes += _repair_done(state)
    notes += _repair_counters(state)
    checked = state.get("catalog_checked")
    if checked is not None and not (isinstance(checked, str) and len(checked) <= 64):
        del state["catalog_checked"]
        notes.append("catalog_checked was malformed; dropped")
    offers = state.get("offers")
    if offers is not None and not (isinstance(offers, dict) and is_int(offers.get("turn"))
                                   and isinstance(offers.get("items"), list)):
        state["offers"] = None
        notes.append("offers were malformed; dropped")
    handoff = state.get("handoff")
    if handoff is not None:
        if isinstance(handoff, dict):
            state["handoff"] = {"reason": _text(handoff.get("reason")) or "unknown",
                                "turn": handoff["turn"] if is_int(handoff.get("turn")) else 0}
        else:
            state["handoff"] = None
            notes.append("handoff was malformed; cleared")
    used = [int(m.group(1)) for m in (_TASK_ID.match(t["id"]) for t in state["task_stack"]) if m]
    used += [int(m.group(1)) for m in (_TASK_ID.match(d["task_id"]) for d in state["done"]) if m]
    if used and state["next_task_seq"] <= max(used):
        notes.append(f"next_task_seq {state['next_task_seq']} was already used; now {max(used) + 1}")
        state["next_task_seq"] = max(used) + 1
    state["next_task_seq"] = max(1, state["next_task_seq"])
    return notes


def _repair_stack(state: dict) -> list[str]:
    notes: list[str] = []
    kept: list[dict] = []
    seen: set[str] = set()
    for index, task in enumerate(state["task_stack"]):
        problem = _task_problem(task, index)
        if not problem and task["id"] in seen:
            problem = f"task_stack[{index}].id {task['id'][:40]!r} is used twice"
        if problem:
            notes.append(f"{problem}; task dropped")
            continue
        seen.add(task["id"])
        clean = {key: task[key] for key in TASK_KEYS if key in task}
        clean["id"], clean["name"] = task["id"][:64], task["name"][:64]
        clean["label"] = _text(task.get("label")) or clean["name"]
        if task.get("stage") not in STAGES:
            notes.append(f"task {clean['id']}: stage {str(task.get('stage'))[:40]!r} unknown; now COLLECTING")
            clean["stage"] = Stage.COLLECTING.value
        parent = task.get("parent_id")
        if parent is not None and not isinstance(parent, str):
            notes.append(f"task {clean['id']}: parent_id is not a task id; cleared")
            parent = None
        clean["parent_id"] = parent[:64] if isinstance(parent, str) else None
        clean["opened_turn"] = task["opened_turn"] if is_int(task.get("opened_turn")) else 0
        history = task.get("history") if isinstance(task.get("history"), dict) else {}
        clean["history"] = {}
        for slot, values in history.items():
            if isinstance(values, list):
                clean["history"][slot] = list(values)
                bound_history(clean["history"][slot])
        if len(clean["history"]) != len(history) or not isinstance(task.get("history"), dict):
            notes.append(f"task {clean['id']}: malformed slot history dropped")
        if "unconfirmed" in clean and not isinstance(clean["unconfirmed"], dict):  # docs/grounding.md, "ask"
            notes.append(f"task {clean['id']}: malformed values to check dropped")
            del clean["unconfirmed"]
        for key in ("shown", "approved"):  # digests of what a confirmation showed (dskit.state.integrity)
            if key in clean and not (isinstance(clean[key], str) and len(clean[key]) <= 64):
                notes.append(f"task {clean['id']}: malformed {key} dropped")
                del clean[key]
        kept.append(clean)
    state["task_stack"] = kept
    return notes


def _repair_done(state: dict) -> list[str]:
    kept = []
    for entry in state["done"]:
        if not (isinstance(entry, dict) and isinstance(entry.get("task_id"), str) and isinstance(entry.get("task"), str)
                and isinstance(entry.get("slots", {}), dict)):
            continue
        record = _payload(entry)
        record.update(status=entry["status"] if entry.get("status") in _DONE_STATUS else "pending",
                      detail=_text(entry.get("detail"), MAX_ERROR_TEXT),
                      turn=entry["turn"] if is_int(entry.get("turn")) else 0,
                      parent_id=entry["parent_id"][:64] if isinstance(entry.get("parent_id"), str) else None)
        kept.append(record)
    dropped = len(state["done"]) - len(kept)
    state["done"] = kept[-MAX_DONE:]
    return [f"{dropped} malformed executed-task record(s) dropped"] if dropped else []


def _payload(entry: dict, nested: bool = False) -> dict:
    """An executed task's payload as the state keeps it (records.ExecutePayload), sub-tasks included
    (one level: a sub-task's own ``subtasks`` is always empty)."""
    subtasks = entry.get("subtasks") if isinstance(entry.get("subtasks"), list) and not nested else []
    return {"task_id": entry["task_id"][:64], "task": entry["task"][:64],
            "label": _text(entry.get("label")) or entry["task"][:64],
            "slots": dict(entry.get("slots") or {}),
            "subtasks": [_payload(sub, True) for sub in subtasks
                         if isinstance(sub, dict) and isinstance(sub.get("task_id"), str)
                         and isinstance(sub.get("task"), str) and isinstance(sub.get("slots", {}), dict)][:20]}


def _repair_counters(state: dict) -> list[str]:
    raw = state["counters"]
    counters = new_counters()
    counters["parse_failures"] = max(0, raw["parse_failures"]) if is_int(raw.get("parse_failures")) else 0
    open_ids = {t["id"] for t in state["task_stack"]}
    asks = raw.get("failed_asks") if isinstance(raw.get("failed_asks"), dict) else {}
    counters["failed_asks"] = {key[:140]: count for key, count in asks.items()
                               if is_int(count) and key.partition(".")[0] in open_ids}
    asking = raw.get("asking")
    counters["asking"] = asking[:140] if isinstance(asking, str) and asking.partition(".")[0] in open_ids else None
    state["counters"] = counters
    broken = not is_int(raw.get("parse_failures", 0)) or not isinstance(raw.get("failed_asks", {}), dict) \
        or not isinstance(raw.get("asking") or "", str)
    return ["counters were malformed; repaired"] if broken else []


def _clean_error(entry: dict) -> dict:
    return {"turn": entry["turn"] if is_int(entry.get("turn")) else 0, "code": _text(entry.get("code"), 40),
            "message": _text(entry.get("message"), MAX_ERROR_TEXT)}


def _clean_timeline(entry: dict) -> dict:
    """A timeline entry with every text and list capped (see machine's timeline writer)."""
    def items(value: Any) -> list:
        return [_text(v) if not isinstance(v, dict) else
                {"command": _text(v.get("command")), "reason": _text(v.get("reason"))}
                for v in value[:12]] if isinstance(value, list) else []
    return {"turn": entry["turn"] if is_int(entry.get("turn")) else 0,  # the writer's order (machine._timeline)
            "changed": [_text(c, 140) for c in entry.get("changed")[:12] if isinstance(c, str)]
            if isinstance(entry.get("changed"), list) else [],
            "query": _text(entry.get("query"), 120),
            "applied": items(entry.get("applied")), "dropped": items(entry.get("dropped")),
            "action": _text(entry.get("action"), 40),
            "task": entry["task"][:64] if isinstance(entry.get("task"), str) else None}


# ---------------------------------------------------------------- writing within Dify's limits

def _json_len(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _encode(state: dict, secret: str = "") -> str:
    state.pop(SOUND_KEY, None)  # a dict decoded straight from a state text carries the mark of that text
    seal(state, secret)  # what the engine writes is sealed (dskit.state.integrity)
    text = json.dumps(state, ensure_ascii=False, separators=(",", ":"))
    text = scrub_surrogates(text)  # last line of defence: every entry point already removes them
    return f"{_SOUND_HEAD}{_sound_mark(text, secret)}\",{text[1:]}"  # read back as it is (sound_body)


def _sync_derived(state: dict) -> None:
    """Recompute the fields that follow from the stack, kept for people who read the state: the lock and the focus."""
    stack = TaskStack(state)
    top = stack.top()
    state["current_task_id"] = top["id"] if top else None
    state["global_intent_lock"] = "LOCKED" if top else "UNLOCKED"
    stack.suspend_below_top()  # a sub-task waiting for its parent says so (docs/design.md)
    _forget_closed_counters(state)


def _forget_closed_counters(state: dict) -> None:
    """Counters of tasks no longer open are dropped when the state is written, by the same rule as when
    it is read (:func:`_repair_counters`): a state must read back exactly as written, or its seal would
    not hold and a pending confirmation would be withdrawn (a cancelled sub-task's failed ask did that)."""
    open_ids = {t["id"] for t in state["task_stack"]}
    counters = state["counters"]
    counters["failed_asks"] = {key: count for key, count in counters["failed_asks"].items()
                               if key.partition(".")[0] in open_ids}
    if isinstance(counters.get("asking"), str) and counters["asking"].partition(".")[0] not in open_ids:
        counters["asking"] = None


def _trim(state: dict, room: int, evict: bool, secret: str = "") -> tuple[bool, list[str]]:
    """Drop the least valuable parts until the state fits with ``room`` characters to spare.

    Order: timeline (oldest first), errors, old slot values (the bottom task's first, oldest first),
    records of executed tasks (finished before pending); with ``evict``, then suspended tasks (bottom
    first) and last the current task's longest values. Returns (fits, what was dropped).
    """
    dropped: dict[str, int] = {}

    def excess() -> int:
        return string_excess(_encode(state, secret), reserve=room)

    def shrink(pools: list[list], label: str) -> None:
        need = excess()
        for pool in pools:
            while pool and need > 0:
                need -= _json_len(pool.pop(0)) + 1
                dropped[label] = dropped.get(label, 0) + 1
                if need <= 0:
                    need = excess()

    if excess() <= 0:
        return True, []
    shrink([state["timeline"]], "timeline entries")
    shrink([state["errors"]], "errors")
    _shrink_old_values(state, excess, dropped)
    finished = [d for d in state["done"] if d.get("status") != "pending"]
    pending = [d for d in state["done"] if d.get("status") == "pending"]
    shrink([finished, pending], "executed-task records")
    state["done"] = [d for d in state["done"] if any(d is e for e in finished + pending)]
    notes = [f"{count} {label}" for label, count in dropped.items()]
    if evict and excess() > 0:
        notes.append("LOST " + "; ".join(_evict(state, excess)))
    return excess() <= 0, notes


def _shrink_old_values(state: dict, excess: Any, dropped: dict[str, int]) -> None:
    """Old slot values, the bottom task's first, oldest first, until the state fits."""
    stack = TaskStack(state)
    need = excess()
    for task in list(stack.tasks):
        for slot in list(task["history"]):
            values = stack.old_values(task, slot)
            while values and need > 0:
                need -= _json_len(values.pop(0)) + 1
                dropped["old slot values"] = dropped.get("old slot values", 0) + 1
                stack.set_old_values(task, slot, values)
                if need <= 0:
                    need = excess()
        stack.forget_old_values(task, keep_slots=True)


def _evict(state: dict, excess: Any) -> list[str]:
    """Last resort of :func:`_trim`: suspended tasks (bottom first), then the current task's longest
    values, then everything; returns what was lost. Reached only by states written elsewhere or
    by a catalog bypassed: the engine refuses a turn rather than come here."""
    lost = []
    stack = TaskStack(state)
    while len(stack) > 1 and excess() > 0:
        task = stack.pop_bottom()
        lost.append(f"task {task['id']} ({task['name']}: {', '.join(task['slots']) or 'no values'})")
    top = stack.top()
    if top is not None and excess() > 0:
        stack.forget_old_values(top)
        for slot in sorted(top["slots"], key=lambda s: -_json_len(top["slots"][s])):
            if excess() <= 0:
                break
            stack.put_value(top, slot, None)
            lost.append(f"{top['id']}.{slot}")
    if excess() > 0:
        fresh = new_state()
        fresh.update(turn=state["turn"], next_task_seq=state["next_task_seq"])
        state.clear()
        state.update(fresh)
        lost.append("everything else")
    return lost


def fit_state(state: dict, *, evict: bool = True, secret: str = "") -> str | None:
    """The state as compact JSON within Dify's limits, trimmed as needed (see :func:`_trim`).

    Without ``evict``, returns None when only dropping open tasks or their values would make it fit
    (the caller then refuses the turn instead). What was trimmed is recorded in ``errors``.
    """
    _sync_derived(state)
    del state["errors"][:-MAX_ERRORS]
    del state["timeline"][:-MAX_TIMELINE]
    del state["done"][:-MAX_DONE]
    text = _encode(state, secret)
    if string_excess(text) == 0:
        return text
    fits, notes = _trim(state, _NOTE_ROOM, evict, secret)
    if not fits:
        return None
    _sync_derived(state)
    add_error(state, "size", f"state trimmed to fit Dify's limits ({CODE_MAX_STRING_LENGTH} characters, "
                             f"{MAX_VARIABLE_SIZE} bytes): dropped " + ", ".join(notes))
    return _encode(state, secret)


def dump_state(state: dict, secret: str = "") -> str:
    """Encode a state (derived fields refreshed, bounded lists trimmed, sealed) as compact JSON that always
    fits Dify's limits; never raises for a state this module produced."""
    text = fit_state(state, evict=True, secret=secret)
    return text if text is not None else _encode(new_state(), secret)


def load_trusted(state_in: Any, secret: str = "") -> dict:
    """The incoming state, loaded defensively, with its seal checked (dskit.state.integrity): what a state
    changed outside the engine claims is not trusted, and ``errors`` says why."""
    state, errors = load_state(state_in, secret)
    for error in errors:
        add_error(state, "state", error)
    problem = trust_state(state, secret)
    if problem:
        add_error(state, "integrity", problem)
    return state


def current_task(state: dict) -> dict | None:
    """The task in focus: the top of the stack."""
    return state["task_stack"][-1] if state["task_stack"] else None


def find_task(state: dict, task_id: str) -> dict | None:
    """The open task with this id."""
    for task in state["task_stack"]:
        if task["id"] == task_id:
            return task
    return None


def filled_slots(state: dict) -> dict[str, dict]:
    """Every open task's filled slots: {task_id: {slot: value}} (the confirmed facts of the dialogue)."""
    return {task["id"]: dict(task["slots"]) for task in state["task_stack"]}


def reconcile_state(state: dict, catalog: Catalog) -> None:
    """Hold a loaded state to the current catalog: drop what it no longer knows (a task or slot
    removed since) and every value it does not accept, saying so in ``errors``.

    A state string comes back from a conversation variable that anyone may have edited; the catalog
    may have changed since it was written. Only values that pass the catalog now stay in ``slots`` (and
    can reach an execute payload) or in ``history`` (and can come back by a rollback). A value that the
    catalog still accepts in another form ("3" after a slot became an integer) is kept in that form.
    """
    stack = TaskStack(state)
    for task in list(stack.tasks):
        spec = catalog.tasks.get(task["name"])
        if spec is None:
            add_error(state, "catalog", f"task {task['name']!r} ({task['id']}) is not in the catalog any more; dropped")
            stack.take(task)
            continue
        _reconcile_slots(state, task, spec.slots)
        _reconcile_history(state, task, spec.slots)


def _reconcile_slots(state: dict, task: dict, slots: dict[str, SlotSpec]) -> None:
    stack = TaskStack(state)
    for slot in list(task["slots"]):
        if slot not in slots:
            add_error(state, "catalog", f"slot {slot!r} of {task['name']} is not in the catalog any more; dropped")
            stack.put_value(task, slot, None)
            continue
        value = task["slots"][slot]
        ok, coerced, reason = coerce_slot_value(slots[slot], value)
        if ok and not reason and coerced == value:
            continue
        if ok and not reason:
            stack.put_value(task, slot, coerced)
            add_error(state, "state", f"{task['id']}.{slot}: stored value converted to {_short_json(coerced)[:60]}")
        else:
            stack.put_value(task, slot, None)
            add_error(state, "state", f"{task['id']}.{slot}: stored value {_short_json(value)[:60]} is invalid "
                                      f"({reason[:100]}); dropped")


def _reconcile_history(state: dict, task: dict, slots: dict[str, SlotSpec]) -> None:
    stack = TaskStack(state)
    invalid = 0
    for slot in list(task["history"]):
        values = stack.old_values(task, slot)
        if slot not in slots:
            stack.set_old_values(task, slot, [])
            continue
        good = [v for v in values if v is None or _stored_ok(slots[slot], v)]
        invalid += len(values) - len(good)
        if len(good) != len(values):
            stack.set_old_values(task, slot, good)
    if invalid:
        add_error(state, "state", f"{task['id']}: {invalid} invalid old value(s) dropped from the slot history")


def _stored_ok(slot: SlotSpec, value: Any) -> bool:
    ok, coerced, reason = coerce_slot_value(slot, value)
    return ok and not reason and coerced == value


def _short_json(value: Any) -> str:
    """A value as short JSON text for an error entry. Never raises."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        text = f"<{type(value).__name__}>"
    return scrub_surrogates(text[:160])


def add_error(state: dict, code: str, message: str) -> None:
    """Keep an error visible in the state (the last few only)."""
    state["errors"].append({"turn": state["turn"], "code": code, "message": message[:MAX_ERROR_TEXT]})
    del state["errors"][:-MAX_ERRORS]
