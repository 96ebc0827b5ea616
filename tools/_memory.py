"""Memory glue shared by remember / recall / forget: the store over the plugin's own storage.

No ``Tool`` subclass here (the SDK wants exactly one per tool file).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dskit.memory import MEMORY_TYPES, MemoryStore, memory_type
from tools._common import ParamError, t


def memory_store(tool: Any) -> MemoryStore:
    """A store over ``session.storage`` (one key-value store per workspace and plugin)."""
    return MemoryStore(tool.session.storage)


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
