"""Memory glue shared by remember / recall / forget: the store over the plugin's own storage.

Whose memory a call reads or writes comes from Dify, never from a parameter the model can fill:
``self.runtime.user_id`` is the id of the person running the app (Dify's tool node passes the
workflow run's user, api/core/workflow/nodes/tool/tool_node.py ``user_id=self.user_id``; an Agent
passes the conversation's user). The only other key is ``memory_space``, a ``form`` setting the app
builder fixes; it splits *that* user's memory (e.g. one space per customer of a back office that
calls Dify as one user) and can never reach another Dify user's, because the bucket is a hash of
(runtime user, space). With no runtime user there is no bucket at all: the call is refused rather
than sharing one anonymous memory among everybody.

No ``Tool`` subclass here (the SDK wants exactly one per tool file).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dskit.context.memory import MEMORY_TYPES, MemoryStore, memory_type, memory_user_id
from dskit.base.messages import memory_msg
from tools._common import ParamError, t, text_param


def memory_store(tool: Any) -> MemoryStore:
    """A store over ``session.storage`` (one key-value store per workspace and plugin)."""
    return MemoryStore(tool.session.storage)


def memory_owner(tool: Any, params: Mapping[str, Any], lang: str | None) -> tuple[str, str]:
    """(user, space) of this call: the user from Dify's runtime, the space from the app's setting."""
    user = memory_user_id(getattr(getattr(tool, "runtime", None), "user_id", None))
    if not user:
        raise ParamError("", "", lang, message=memory_msg("no_user", lang or "zh"))
    space = text_param(params, "memory_space", lang, max_chars=256)
    return user, memory_user_id(space)


def raise_if_bad(result: dict, lang: str | None) -> None:
    """Turn the store's bad-parameter result into a ParamError (other failures are reported as is)."""
    if not result.get("ok") and result.get("error") == "bad_param":
        raise ParamError(result.get("param", ""), "", lang, message=result["message"])


def memory_type_param(params: Mapping[str, Any], name: str, lang: str | None, *, allow_all: bool) -> str:
    """``type``: one of the memory types (or "all" where that means no filter)."""
    value = params.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        return "all" if allow_all else "preference"
    if allow_all and isinstance(value, str) and value.strip().lower() in ("all", "any", "全部"):
        return "all"
    kind = memory_type(value) if isinstance(value, str) else ""
    if not kind:
        choices = ", ".join(("all",) + MEMORY_TYPES if allow_all else MEMORY_TYPES)
        raise ParamError(name, t("not_choice", lang, choices=choices), lang)
    return kind
