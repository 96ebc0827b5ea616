"""A model that answers nothing: the baseline printed beside a real model's figures.

Every request gets ``{"commands": []}``: no task, no slot, no change. What a run scores with it is
what the state scores by staying as it is — most turns of a conversation change little, so a JGA
means something only beside this figure (``dskit eval --answers-nothing``; ``dskit replay --from llm``
computes the same baseline for each turn itself). No network, no cassette, nothing counted as cost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .client import ClientConfig
from .completion import Completion

NOTHING = '{"commands": []}'
NAME = "answers-nothing"


class NothingClient:
    """The :class:`~dskit.tooling.llm.client.LLMClient` interface, answering :data:`NOTHING` to every call."""

    def __init__(self) -> None:
        self.config = ClientConfig(base_url="http://answers-nothing.invalid/v1", model=NAME)
        self.cache = None
        self.http_requests = 0  # never sends one
        self.calls = 0

    @property
    def json_supported(self) -> bool | None:
        return True

    def complete(self, messages: Sequence[Mapping[str, str]], *, temperature: float | None = None,  # noqa: ARG002
                 max_tokens: int | None = None, want_json: bool = False,  # noqa: ARG002
                 schema: Mapping[str, object] | None = None, seed: int | None = None) -> Completion:  # noqa: ARG002
        self.calls += 1
        return Completion(text=NOTHING, prompt_tokens=0, completion_tokens=0, latency=0.0, json_mode=want_json)
