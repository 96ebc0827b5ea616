"""What the engine may trust in a state: a yes executes exactly what was shown.

The state is a conversation variable: another node, an API write (Dify lets an API caller write
conversation variables since PR #23924), a hand edit in the variable inspector or a bug can change it
between the confirmation question and the yes. Two records close that gap (docs/grounding.md, "A yes
executes what was shown"):

- **What was shown.** When the engine asks for confirmation it stores a digest of what the question
  showed — the task, its values, the sub-tasks submitted with it, the values held for a check
  (``shown``); a sub-task confirmed on its own keeps the digest of what its yes covered (``approved``).
  A yes executes only while the digest still holds; otherwise the question is asked again with what
  is there now.
- **The seal.** Every state the engine writes carries a digest of its acting parts (``seal``). A state
  whose seal does not hold was changed outside the engine: nothing in it that would let the engine act
  without asking is trusted — a pending confirmation or a waiting sub-task goes back to collecting,
  values held for a check and old values (the material of a take-back) are dropped, the slot values
  stay — and ``errors`` says so. With a secret (a Dify secret environment variable, ``STATE_SECRET``)
  the seal is an HMAC that only the engine can write, and a state that fails it starts clean.
"""

from __future__ import annotations

import json
from typing import Any

from .taskstack import TaskStack


DIGEST_CHARS = 24
# The parts of a state that decide what the engine does next (the timeline and errors only explain).
_SEALED_KEYS = ("task_stack", "done", "counters", "next_task_seq", "handoff", "offers")
# The mark of the catalog text the state was last checked against (dskit.turn.machine.catalog_mark): with
# the same text, the next turn builds the catalog without checking it again. Sealed like the acting parts.
CHECKED_KEY = "catalog_checked"


def digest(value: Any, secret: str = "") -> str:
    """A short, stable digest of JSON data; an HMAC when ``secret`` is set."""
    data = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
    raw = data.encode("utf-8", "surrogatepass")
    if secret:
        import hashlib
        import hmac

        return hmac.new(secret.encode("utf-8", "surrogatepass"), raw, hashlib.sha256).hexdigest()[:DIGEST_CHARS]
    return sha256_hex(raw)[:DIGEST_CHARS]


def sha256_hex(raw: bytes) -> str:
    """SHA-256 of ``raw`` in hex, from CPython's own SHA-2 module when it has one.

    ``hashlib`` loads OpenSSL's libcrypto when imported: about 2.5 ms of every sandbox run of a node
    that seals or checks a state, a tenth of a bare node's start (``dskit bench nodes --cold``). CPython
    builds its own SHA-2 as ``_sha2`` (3.12 on) or ``_sha256`` (3.10, 3.11: dify-sandbox's Python), the
    same digest; ``hashlib`` is the fallback for a build without them. The HMAC of a secret seal still
    uses ``hmac``/``hashlib``: only states sealed with a secret pay for them.
    """
    try:
        from _sha2 import sha256
    except ImportError:
        try:
            from _sha256 import sha256
        except ImportError:
            from hashlib import sha256
    return sha256(raw).hexdigest()


def shown_digest(task: dict, subtasks: list[dict] = (), held: dict | None = None) -> str:
    """The digest of a confirmation (or check) question: the task, its values, the sub-tasks shown with
    it and the values held for a check."""
    return digest({"task": [task.get("id"), task.get("name"), task.get("slots")],
                   "with": [[s.get("id"), s.get("name"), s.get("slots")] for s in subtasks],
                   "held": held or {}})


def execution_key(conversation_id: str, payload: dict) -> str:
    """The idempotency key of an execution: the conversation, the task and its approval.

    Why: a task API that acted but answered too late (a read timeout) is recorded as a failure, the
    task goes back to its confirmation, and the next yes submits it again. The key lets the API
    recognise the second request as the same submission and answer it again without acting twice.
    The approval is the digest of what runs — the task, its values and the sub-tasks submitted with it,
    :func:`shown_digest` of the payload, what the user's yes covered — so a retry of the same approval
    has the same key, and a task run again with other values (a new approval), another task or another
    conversation has another. Task ids never repeat within a conversation (a reset keeps the counter).
    "" without a conversation id or a task id: a key that two conversations could share is worse than
    none."""
    conversation = conversation_id.strip() if isinstance(conversation_id, str) else ""
    task_id = payload.get("task_id") if isinstance(payload, dict) else None
    if not conversation or not isinstance(task_id, str) or not task_id:
        return ""
    subtasks = [s for s in payload.get("subtasks") or [] if isinstance(s, dict)]
    approval = shown_digest({"id": task_id, "name": payload.get("task"), "slots": payload.get("slots")},
                            [{"id": s.get("task_id"), "name": s.get("task"), "slots": s.get("slots")} for s in subtasks])
    return "dskit-" + digest({"conversation": conversation, "task": task_id, "approval": approval})


def seal_of(state: dict, secret: str = "") -> str:
    sealed = {key: state.get(key) for key in _SEALED_KEYS}
    if state.get(CHECKED_KEY):  # sealed only when set, so the seals of states without it stay as they were
        sealed[CHECKED_KEY] = state[CHECKED_KEY]
    return digest(sealed, secret)


def seal(state: dict, secret: str = "") -> None:
    """Write the state's seal (the engine calls it on every state it writes)."""
    state["seal"] = seal_of(state, secret)


def seal_problem(state: dict, secret: str = "") -> str:
    """Why the state's seal does not hold ("" when it does, or when there is nothing to trust yet)."""
    if not state["task_stack"] and not state["done"]:
        return ""
    found = state.get("seal")
    if not isinstance(found, str) or not found:
        return "the state carries no seal (written by hand, by another tool, or by dskit before 0.3)"
    if not same_digest(found, seal_of(state, secret), secret):
        return "the state was changed outside the engine (its seal does not match)"
    return ""


def _seal_holds(state: dict, secret: str) -> bool:
    found = state.get("seal")
    return isinstance(found, str) and same_digest(found, seal_of(state, secret), secret)


def same_digest(found: str, expected: str, secret: str) -> bool:
    """Whether a seal holds. With a secret, a constant-time comparison (a timing must not tell how much
    of a forged seal is right) that also takes a seal written with non-ASCII characters (which
    compare_digest refuses as text, and which can only be a seal that does not hold). Without one the
    seal is a plain digest anyone can compute, so there is nothing to time, and ``hmac`` (which loads
    OpenSSL) is not imported for it."""
    if not secret:
        return found == expected
    import hmac

    return hmac.compare_digest(found.encode("utf-8", "surrogatepass"), expected.encode("ascii"))


def distrust(state: dict) -> list[str]:
    """Take back every permission to act that a state written elsewhere claims: pending confirmations
    and waiting sub-tasks go back to collecting, held values, old values and offers are dropped. Slot values
    stay (they are the user's, and every one is asked about or shown again before anything runs)."""
    notes = []
    if state.pop("offers", None):
        notes.append("offers dropped")
    stack = TaskStack(state)
    for task in stack.tasks:
        notes += stack.withdraw_trust(task)
    return notes


def trust_state(state: dict, secret: str = "") -> str:
    """Check a loaded state's seal and take back what it may not claim (in place); the error to record,
    "" when the seal holds. With a secret a failed seal empties the state (the caller keeps its turn)."""
    problem = seal_problem(state, secret)
    if not problem:
        if state.get(CHECKED_KEY) and not _seal_holds(state, secret):  # a state with no task is not checked above
            state.pop(CHECKED_KEY)
        return ""
    state.pop(CHECKED_KEY, None)
    if secret:
        state["task_stack"], state["done"], state["handoff"] = [], [], None
        state["counters"] = {"parse_failures": 0, "failed_asks": {}, "asking": None}
        return f"{problem}; a secret is set, so it started clean"
    notes = distrust(state)
    return f"{problem}; nothing in it acts without asking again" + (f" ({'; '.join(notes)[:200]})" if notes else "")


__all__ = ["CHECKED_KEY", "trust_state", "digest", "execution_key", "same_digest", "shown_digest", "seal", "seal_of", "seal_problem", "distrust", "DIGEST_CHARS"]
