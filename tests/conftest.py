"""Shared fixtures: the example catalogs and a small driver for multi-turn engine scenarios."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def load_example_catalog(name: str) -> dict:
    """An example catalog from examples/catalogs as a dict."""
    return json.loads((ROOT / "examples" / "catalogs" / f"{name}.json").read_text(encoding="utf-8"))


@pytest.fixture
def restaurant() -> dict:
    return load_example_catalog("restaurant")


@pytest.fixture
def travel() -> dict:
    return load_example_catalog("travel_assistant")
