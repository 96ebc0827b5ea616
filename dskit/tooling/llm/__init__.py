"""The model client shared by ``dskit chat``, ``dskit eval`` and ``dskit replay --from llm``.

- :mod:`.client`: OpenAI-compatible chat completions with one deadline per request, retries with
  backoff, JSON mode detection, usage and latency per call;
- :mod:`.cache`: recorded answers on disk (the cache, and the cassettes tests replay);
- :mod:`.http`: one HTTP request bounded by one deadline;
- :mod:`.options`: the command-line options every command that calls a model shares.
"""

from __future__ import annotations

from .cache import Cache, NotRecorded
from .client import ClientConfig, Completion, LLMClient, LLMError

__all__ = ["Cache", "ClientConfig", "Completion", "LLMClient", "LLMError", "NotRecorded"]
