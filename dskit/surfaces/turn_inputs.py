"""The user's side of a turn, read the same way on every surface: the message, their recent
messages and the day relative dates count from.

Grounding (docs/grounding.md) decides what to apply from these, so the plugin tools and the code
nodes must build them alike: one limit on the message, one rule for the reference date. A problem is
returned, not raised, so that a code node can answer with it and a tool can refuse the call with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from ..rules.grounding import RECENT_TURNS, parse_reference_date
from ..context.history import last_assistant_message, recent_user_messages

# The longest message a turn reads. Past it the turn is not applied (the user is told): grounding
# reads the opening of a message only, and a pasted document is not an answer to a question.
MAX_QUERY_CHARS = 8_000
# The part of the assistant's last reply read for what it offered (a reply lists a few options).
MAX_OFFERED_CHARS = 2_000
# The longest history text read for the recent messages (Dify's variable cap is far below it).
MAX_HISTORY_READ_CHARS = 400_000


@dataclass(frozen=True)
class TurnInputs:
    """What :func:`dskit.turn.machine.step` gets from the user's side: ``query`` None turns grounding off."""

    query: str | None = None
    recent: list[str] = field(default_factory=list)
    reference_date: str = ""
    problem: str = ""  # "" when usable; else "<input>: why", and the turn must not run
    problem_input: str = ""
    length: int = 0  # the message's length, for the user-facing sentence
    offered: str = ""  # the assistant's last reply: what it offered ("就这家" accepts a value of it)

    def step_args(self) -> dict[str, Any]:
        """The grounding keyword arguments of :func:`dskit.turn.machine.step`."""
        return {"query": self.query, "recent": list(self.recent), "reference_date": self.reference_date,
                "offered": self.offered}


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def turn_inputs(query: Any, history: Any = "", reference_date: Any = "", *, today: date | None = None) -> TurnInputs:
    """The turn's user inputs from raw surface values (anything: never raises).

    - ``query``: the user's message; empty or blank is "no message" (grounding off, as when
      replaying stored commands); longer than :data:`MAX_QUERY_CHARS` is a problem.
    - ``history``: the history text; the user's last :data:`dskit.rules.grounding.RECENT_TURNS` messages.
    - ``reference_date``: "YYYY-MM-DD"; empty is today (``today``, else the machine's clock); anything
      else is a problem (a wrong day would silently move every "明天").
    """
    text = _text(query)
    day = _text(reference_date).strip()[:40]
    if len(text) > MAX_QUERY_CHARS:
        return TurnInputs(problem=f"query: {len(text)} characters, over the limit of {MAX_QUERY_CHARS}",
                          problem_input="query", length=len(text))
    if day and parse_reference_date(day) is None:
        return TurnInputs(problem=f"reference_date: {day!r} is not a date (YYYY-MM-DD)", problem_input="reference_date")
    reference = parse_reference_date(day) if day else (today or date.today())
    history_text = _text(history)[-MAX_HISTORY_READ_CHARS:]
    recent = recent_user_messages(history_text, RECENT_TURNS)
    return TurnInputs(query=text if text.strip() else None, recent=recent,
                      reference_date=reference.isoformat() if reference else "", length=len(text),
                      offered=last_assistant_message(history_text)[:MAX_OFFERED_CHARS])


__all__ = ["TurnInputs", "turn_inputs", "MAX_QUERY_CHARS"]
