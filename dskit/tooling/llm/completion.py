"""What a model call returns or raises, shared by the client and the cache (neither imports the other
for it: the cache builds a :class:`Completion` from a recorded line, the client from an HTTP answer).

``usage`` figures come from outside (a server, a cassette someone edited), so :func:`token_count`
accepts only a plain non-negative integer within :data:`MAX_USAGE_TOKENS`; anything else is unknown.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

# No single call has ever used this many tokens; a figure above it is a broken or hostile server.
MAX_USAGE_TOKENS = 10_000_000


class LLMError(RuntimeError):
    """A call that produced no usable completion; ``str()`` is one line fit for a report."""

    def __init__(self, message: str, *, kind: str = "error", attempts: int = 0,
                 cut: Completion | None = None) -> None:
        super().__init__(" ".join(message.split())[:400])
        # deadline | transport | http | protocol | no_text | length | too_large | not_recorded
        self.kind = kind
        self.attempts = attempts
        self.cut = cut  # kind "length": what the model wrote before max_tokens cut it (see node_output)

    @property
    def answered(self) -> bool:
        """The endpoint answered, unusably (a text cut at max_tokens, or no text): one turn's failure,
        after which a user goes on (:data:`ANSWERED_UNUSABLY`); any other kind means the endpoint did not."""
        return self.kind in ANSWERED_UNUSABLY


# The kinds of LLMError where the model did answer. In Dify the Chatflow's run ends and the user sends
# the next message, so an evaluation goes on with the conversation; a server that is down, a deadline or
# an HTTP error is the endpoint's failure, and the turns after it would fail the same way.
ANSWERED_UNUSABLY = frozenset({"length", "no_text"})


@dataclass(frozen=True)
class Completion:
    """One answered call: the text and what it cost."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    latency: float  # seconds of the successful request (as recorded, for a cached answer)
    cached: bool = False
    attempts: int = 1
    json_mode: bool = False
    usage_estimated: bool = False
    finish_reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def node_output(error: LLMError) -> Completion | None:
    """What a Dify LLM node outputs for a call the client refused: the text of an answer cut at
    max_tokens, like any other answer — graphon/nodes/llm/node.py, ``LLMNode._build_run_outputs``, sets
    ``text`` to the model's text whatever its ``finish_reason`` — so the state node reads what the model
    wrote before the cut (dskit.base.jsonish reads a cut JSON text). No text, or no answer, fails the node: None.
    The client itself keeps its contract (a cut text is an error); the targets that stand for a Chatflow
    (engine, flow, CrossWOZ replay) pass it on."""
    return error.cut if error.kind == "length" and error.cut is not None and error.cut.text.strip() else None


def token_count(value: Any) -> int | None:
    """A usage figure as an int, or None when it is not a plain integer from 0 to MAX_USAGE_TOKENS."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_USAGE_TOKENS:
        return value
    return None


__all__ = ["Completion", "LLMError", "MAX_USAGE_TOKENS", "node_output", "token_count"]
