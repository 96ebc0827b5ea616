"""The model client shared by ``dskit chat``, ``dskit eval`` and ``dskit replay --from llm``.

- :mod:`.client`: OpenAI-compatible chat completions with one deadline for the whole call (retries
  included), retries with backoff, JSON mode detection, usage and latency per call;
- :mod:`.completion`: what a call returns (:class:`Completion`) or raises (:class:`LLMError`), shared by
  the client and the cache so neither imports the other for it;
- :mod:`.cache`: recorded answers on disk (the cache, and the cassettes tests replay), read in bounded
  chunks, a damaged tail skipped with a warning;
- :mod:`.http`: one HTTP request bounded by one deadline and a size cap on the body;
- :mod:`.options`: the command-line options every command that calls a model shares.
"""

from __future__ import annotations

from .cache import Cache, NotRecorded
from .client import ClientConfig, LLMClient
from .completion import Completion, LLMError

__all__ = ["Cache", "ClientConfig", "Completion", "LLMClient", "LLMError", "NotRecorded"]
