"""One prompt everywhere (issue 40): after a FAQ or a small-talk turn the quick ``engine`` evaluation
target, the fast Chatflow and the plugin Chatflow send the model the same understanding prompt, byte
for byte, although only the Chatflows ask an answer model for those turns: the history keeps the
engine's own text of such a turn (dskit.state.views.memory_reply), not the answer model's.

The perfect model of tests/fixtures/eval/oracle.yaml answers the understanding calls; every other
call (FAQ, small talk) gets "好的。", which must not reach the next prompt.

Import ``dify_plugin`` first: it monkey-patches with gevent.
"""

from __future__ import annotations

import pytest

import dify_plugin  # noqa: F401  (first: gevent monkey-patching)

from dskit.tooling.eval.engine_target import EngineTarget
from dskit.tooling.eval.flow_target import FlowTarget
from dskit.tooling.eval.runner import run_suites
from dskit.tooling.eval.suite import SUITE_DIR, load_suite
from dskit.tooling.llm import ClientConfig, LLMClient
from evalkit import latest_message, model
from fakes.openai_server import fake_openai

pytestmark = pytest.mark.slow  # graphon runs of three layouts

# a FAQ in the middle of a booking; greetings and acknowledgements around one
SUITES = ("zh_booking_table", "zh_cancel_restart")


def _prompts(make_target) -> list[tuple[str, list]]:
    with fake_openai(("answer", model())) as fake:
        run = run_suites(make_target(LLMClient(ClientConfig(fake.base_url, "scripted"))),
                         [load_suite(SUITE_DIR / f"{name}.yaml") for name in SUITES])
    assert run.figures()["turn_accuracy"] == 1.0
    return [(latest_message(r), r["messages"]) for r in fake.requests if latest_message(r) is not None]


def test_the_engine_target_the_fast_and_the_plugin_chatflow_send_the_same_prompts() -> None:
    engine = _prompts(EngineTarget)
    fast = _prompts(lambda client: FlowTarget(client, layout="fast"))
    plugin = _prompts(lambda client: FlowTarget(client, layout="plugin"))
    assert [m for m, _ in engine] == [m for m, _ in fast] == [m for m, _ in plugin]
    assert len(engine) == 15
    assert fast == engine
    # the plugin's reply to an execution is its own template (docs/eval.md): from the turn after the one
    # execution here ("对，订吧"), its history differs by that line alone
    executed = [m for m, _ in engine].index("对，订吧") + 1
    assert plugin[:executed] == engine[:executed]
    after_faq = [m for m, _ in engine].index("你们包间有最低消费吗？") + 1
    assert "好的。" not in engine[after_faq][1][-1]["content"]
