"""Helpers for the evaluation tests: a perfect model for the shipped suites, and scripted bad ones.

The perfect model's answers are in tests/fixtures/eval/oracle.yaml, by user message: what a model that
understands every message would answer. It answers every other LLM node (FAQ, chitchat, summary) with
a short sentence.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from dskit.context.context import CONTEXT_HEADERS

ROOT = Path(__file__).resolve().parents[1]
ORACLE = ROOT / "tests" / "fixtures" / "eval" / "oracle.yaml"
MARKERS = tuple(headers["latest"] + "\n" for headers in CONTEXT_HEADERS.values())


@cache
def oracle() -> dict[str, Any]:
    return yaml.safe_load(ORACLE.read_text(encoding="utf-8"))


def latest_message(body: Mapping[str, Any]) -> str | None:
    """The user's message in an understanding prompt (None for other LLM nodes)."""
    text = str(body["messages"][-1]["content"])
    for marker in MARKERS:
        if marker in text:
            return text.rsplit(marker, 1)[1].strip().removeprefix(">").strip()
    return None


def model(overrides: Mapping[str, Any] | None = None) -> Callable[[dict[str, Any]], str]:
    """A scripted model: ``overrides`` (by user message: an understanding dict or raw text), else the oracle."""
    table = {**oracle(), **(overrides or {})}

    def answer(body: dict[str, Any]) -> str:
        message = latest_message(body)
        if message is None:
            return "好的。"
        value = table.get(message, "???")
        if isinstance(value, str):
            return value
        return json.dumps({"rewritten_query": message, **value}, ensure_ascii=False)

    return answer
