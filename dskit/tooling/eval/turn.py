"""What a target hands back for one user turn, whatever it ran (engine, graphon, a Dify app)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class Call:
    """One LLM call of a turn, as the trace and the cost figures need it."""

    node: str
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency: float = 0.0
    cached: bool = False
    json_mode: bool = False
    error: str = ""
    cut: bool = False  # the answer was cut at max_tokens; its text went on as a Dify LLM node's output

    def as_dict(self) -> dict[str, Any]:
        return {"node": self.node, "text": self.text, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "latency": self.latency, "cached": self.cached,
                "json_mode": self.json_mode, **({"error": self.error} if self.error else {}),
                **({"cut": True} if self.cut else {})}


@dataclass
class TurnOutput:
    """The reply, the state after the turn (``sys_context_str``), the LLM calls, and any failure.

    ``error`` is one line when the turn could not run (endpoint down, deadline, HTTP error, an unusable
    answer); the state is then the one from before the turn. Metrics read the state, so every target is
    scored the same. ``goes_on``: the turn failed but the conversation continues from the state before it
    — the model answered unusably (``LLMError.answered``), and a Dify user would send the next message —
    where an endpoint that did not answer ends the conversation (the turns after it count as not run).
    ``catalog_unverified``: why the system under test is not known to run the suite's catalog (a Dify
    app whose catalog could not be checked); a turn that is not right is then put down to that, not to
    the model (dskit.tooling.eval.causes).
    """

    answer: str = ""
    state_text: str = ""
    calls: list[Call] = field(default_factory=list)
    error: str = ""
    seconds: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)  # target-specific extras for the trace
    # False when the target cannot tell how many LLM calls ran (Dify's blocking answer has only the summed
    # usage): ``calls`` then holds one entry with the turn's total tokens, and the call count is unknown.
    calls_known: bool = True
    goes_on: bool = False
    catalog_unverified: str = ""


class Conversation(Protocol):
    """One conversation with the system under test."""

    def turn(self, user: str) -> TurnOutput: ...


class Target(Protocol):
    """A way to run conversations: engine, flow (graphon) or a deployed Dify app."""

    name: str

    def conversation(self, suite: Any, run_id: str) -> Conversation: ...

    def describe(self) -> dict[str, Any]: ...
