"""Shared fixtures: the example catalogs and a small driver for multi-turn engine scenarios."""

from __future__ import annotations

import json
import os
import sys
import types
from pathlib import Path

import pytest

if os.environ.get("PYTEST_XDIST_WORKER"):
    # dify_plugin's import runs gevent's monkey.patch_all(sys=True) (dify_plugin/_gevent.py). Inside a
    # pytest-xdist worker that patches the sockets and threads execnet already uses to talk to the
    # controller, and the worker dies ("LoopExit: This operation would block forever"). The tests call
    # the SDK's models and tools synchronously, so the workers import it without the patch: threads in
    # the memory concurrency tests stay real threads, which interleave more than greenlets do.
    sys.modules.setdefault("dify_plugin._gevent", types.ModuleType("dify_plugin._gevent"))

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
