"""The understanding call of ``eval --target engine`` and ``replay --from llm`` is one function (issue 39).

Both stand for the fast Chatflow's ``understand`` LLM node: the same messages, the shipped DSL's
completion parameters, and an answer cut at ``max_tokens`` passed on as the node passes it. They held
that code twice; now both go through :func:`dskit.tooling.llm.understand.understand`, and these tests
hold what it does and that both use it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("yaml")

from dskit.surfaces.nodes import context_node  # noqa: E402
from dskit.tooling.llm import Completion, LLMError  # noqa: E402
from dskit.tooling.llm import understand as understand_module  # noqa: E402
from dskit.tooling.llm.understand import understand, understand_parameters  # noqa: E402
from conftest import load_example_catalog  # noqa: E402

CATALOG = json.dumps(load_example_catalog("restaurant"), ensure_ascii=False)
ANSWER = '{"rewritten_query": "订位", "commands": [{"type": "start_task", "task": "book_restaurant"}]}'


class _Model:
    """Answers, or raises what it was given; keeps every request."""

    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome
        self.requests: list[dict[str, Any]] = []

    def complete(self, messages: list[dict[str, str]], **options: Any) -> Completion:
        self.requests.append({"messages": messages, **options})
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


def _completion(text: str) -> Completion:
    return Completion(text=text, prompt_tokens=10, completion_tokens=5, latency=0.01)


def test_it_sends_the_context_nodes_two_messages_with_the_shipped_parameters() -> None:
    context = context_node(query="我想订位", task_catalog=CATALOG)
    model = _Model(_completion(ANSWER))
    assert understand(model, context).text == ANSWER
    request = model.requests[0]
    assert request["messages"] == [{"role": "system", "content": context["instructions"]},
                                   {"role": "user", "content": context["context"]}]
    params = understand_parameters()
    assert params and request["temperature"] == params.get("temperature")
    assert request["max_tokens"] == params.get("max_tokens") and request["want_json"] is True


def test_an_answer_cut_at_max_tokens_is_passed_on_and_any_other_failure_raises() -> None:
    context = context_node(query="我想订位", task_catalog=CATALOG)
    cut = _completion(ANSWER[:40])
    assert understand(_Model(LLMError("cut", kind="length", cut=cut)), context).text == ANSWER[:40]
    for error in (LLMError("cut, nothing written", kind="length", cut=_completion("  ")),
                  LLMError("down", kind="transport")):
        with pytest.raises(LLMError):
            understand(_Model(error), context)


def test_the_engine_target_and_the_llm_replay_both_call_it(monkeypatch) -> None:
    from dskit.tooling.eval.engine_target import EngineTarget
    from dskit.tooling.eval.suite import load_suites
    from dskit.tooling.replay.llm import replay_llm

    calls: list[str] = []

    def counted(client: Any, context: Any, params: Any = None, schema: Any = None) -> Completion:
        calls.append(str(context["context"])[-20:])
        return _completion(ANSWER)

    monkeypatch.setattr(understand_module, "understand", counted)
    suite = next(s for s in load_suites() if s.name == "zh_booking_table")
    EngineTarget(client=None).conversation(suite, "r1").turn("我想订明天的位子")
    assert len(calls) == 1
    replay_llm("crosswoz", [("d1", [("我想找个景点", "好的", {}, None)])], {"景点": ["名称"]}, client=None,
               teacher_forcing=False)
    assert len(calls) == 2
