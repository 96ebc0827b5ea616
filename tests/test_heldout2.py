"""The second held-out set (issue 40, examples/eval/heldout2) is a fair test: a model that understands
every message (tests/fixtures/heldout2_oracle.yaml) gets every one of its 46 turns right through the
engine target, with nothing run that nobody asked for. A turn the model gets wrong is then the model's
or the prompt's, never an expectation the engine cannot meet."""

from __future__ import annotations

from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

from dskit.tooling.eval.engine_target import EngineTarget  # noqa: E402
from dskit.tooling.eval.runner import run_suites  # noqa: E402
from dskit.tooling.eval.suite import load_suites  # noqa: E402
from dskit.tooling.llm import ClientConfig, LLMClient  # noqa: E402
from evalkit import model  # noqa: E402
from fakes.openai_server import fake_openai  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HELDOUT2 = ROOT / "examples" / "eval" / "heldout2"
ORACLE = yaml.safe_load((ROOT / "tests" / "fixtures" / "heldout2_oracle.yaml").read_text(encoding="utf-8"))


def test_the_second_held_out_set_has_a_restaurant_and_a_telecom_half() -> None:
    suites = load_suites([HELDOUT2])
    turns = {name: sum(len(s.turns) for s in suites if s.catalog_name == name) for name in ("restaurant", "telecom")}
    assert turns == {"restaurant": 23, "telecom": 23}
    assert {t.user for s in suites for t in s.turns} == set(ORACLE)


def test_perfect_answers_get_every_held_out_turn_right() -> None:
    overrides = {message: {"commands": commands} for message, commands in ORACLE.items()}
    with fake_openai(("answer", model(overrides))) as fake:
        run = run_suites(EngineTarget(LLMClient(ClientConfig(fake.base_url, "scripted"))), load_suites([HELDOUT2]))
    figures = run.figures()
    assert [(t["suite"], t["turn"], t["failures"]) for t in run.traces if not t["passed"]] == []
    assert figures["turns"] == 46 and figures["wrongful_executions"] == figures["unasked_writes"] == 0
