"""The graphon harness itself, proven on a tiny hand-written Chatflow before any real flow uses it.

start -> code -> llm -> assigner -> answer, plus a knowledge-retrieval stand-in on a second DSL.
"""

from __future__ import annotations

import pytest

pytest.importorskip("graphon")

from dskit.tooling.dslrun.graphon import (  # noqa: E402
    Conversation,
    ScriptError,
    TurnError,
)

TINY = """
version: "0.6.0"
kind: app
app: {name: tiny, mode: advanced-chat}
dependencies:
  - type: marketplace
    value: {marketplace_plugin_unique_identifier: "langgenius/openai:0.2.0@test"}
workflow:
  conversation_variables:
    - {id: v1, name: history, value_type: string, value: "", description: "", selector: [conversation, history]}
  environment_variables:
    - {id: v2, name: GREETING, value_type: string, value: "hi", description: "", selector: [env, GREETING]}
  graph:
    nodes:
      - {id: start, type: custom, position: {x: 0, y: 0}, data: {type: start, title: Start, variables: []}}
      - id: code
        type: custom
        position: {x: 300, y: 0}
        data:
          type: code
          title: Append
          code_language: python3
          code: |
            def main(query: str, history: str) -> dict:
                joined = (history + " | " if history else "") + query
                return {"history": joined, "turns": joined.count("|") + 1}
          variables:
            - {variable: query, value_selector: [sys, query]}
            - {variable: history, value_selector: [conversation, history]}
          outputs:
            history: {type: string, children: null}
            turns: {type: number, children: null}
      - id: llm
        type: custom
        position: {x: 600, y: 0}
        data:
          type: llm
          title: Reply
          model: {provider: langgenius/openai/openai, name: gpt-4o-mini, mode: chat, completion_params: {}}
          prompt_template:
            - {role: system, text: "{{#env.GREETING#}} history={{#code.history#}}"}
            - {role: user, text: "{{#sys.query#}}"}
          context: {enabled: false, variable_selector: []}
          vision: {enabled: false}
      - id: assign
        type: custom
        position: {x: 900, y: 0}
        data:
          type: assigner
          title: Save
          version: "2"
          items:
            - {variable_selector: [conversation, history], input_type: variable, operation: over-write, value: [code, history]}
      - {id: answer, type: custom, position: {x: 1200, y: 0}, data: {type: answer, title: Answer, answer: "{{#llm.text#}} ({{#code.turns#}})"}}
    edges:
      - {id: e1, source: start, sourceHandle: source, target: code, targetHandle: target, type: custom}
      - {id: e2, source: code, sourceHandle: source, target: llm, targetHandle: target, type: custom}
      - {id: e3, source: llm, sourceHandle: source, target: assign, targetHandle: target, type: custom}
      - {id: e4, source: assign, sourceHandle: source, target: answer, targetHandle: target, type: custom}
"""


def test_tiny_flow_carries_conversation_variables_between_turns() -> None:
    conv = Conversation(TINY)
    first = conv.turn("hello", {"llm": "Hello!"})
    assert first.answer == "Hello! (1)"
    assert first.variables == {"history": "hello"}
    second = conv.turn("again", {"Reply": lambda req: req.system.upper()})
    assert second.answer == "HI HISTORY=HELLO | AGAIN (2)"
    assert second.variables == {"history": "hello | again"}
    assert second.path == ["start", "code", "llm", "assign", "answer"]


def test_counts_llm_calls_code_runs_and_prompt_chars() -> None:
    conv = Conversation(TINY)
    result = conv.turn("abc", {"llm": "ok"})
    assert result.llm_count == 1
    assert result.code_runs == ["code"]
    # system "hi history=abc" (14) + user "abc" (3)
    assert result.prompt_chars == len("hi history=abc") + len("abc")
    assert result.llm_calls_before("assign") == 1
    assert result.llm_calls_before("code") == 0


def test_environment_override_and_script_miss() -> None:
    conv = Conversation(TINY, env={"GREETING": "yo"})
    result = conv.turn("x", {"llm": lambda req: req.system})
    assert result.answer.startswith("yo history=x")
    with pytest.raises(TurnError) as caught:
        conv.turn("y", {})
    assert "no scripted answer" in str(caught.value)
    # a failed turn leaves the conversation variables as they were
    assert conv.variables == {"history": "x"}


def test_script_error_is_a_lookup_error() -> None:
    assert issubclass(ScriptError, LookupError)


KNOWLEDGE = """
version: "0.6.0"
kind: app
app: {name: kb, mode: advanced-chat}
dependencies:
  - type: marketplace
    value: {marketplace_plugin_unique_identifier: "langgenius/openai:0.2.0@test"}
workflow:
  conversation_variables: []
  environment_variables: []
  graph:
    nodes:
      - {id: start, type: custom, data: {type: start, title: Start, variables: []}}
      - id: kb
        type: custom
        data: {type: knowledge-retrieval, title: KB, query_variable_selector: [sys, query], dataset_ids: [], retrieval_mode: multiple}
      - id: llm
        type: custom
        data:
          type: llm
          title: FAQ
          model: {provider: langgenius/openai/openai, name: m, mode: chat, completion_params: {}}
          prompt_template:
            - {role: system, text: "Context: {{#context#}}"}
            - {role: user, text: "{{#sys.query#}}"}
          context: {enabled: true, variable_selector: [kb, result]}
      - {id: answer, type: custom, data: {type: answer, title: A, answer: "{{#llm.text#}}"}}
    edges:
      - {source: start, target: kb, sourceHandle: source}
      - {source: kb, target: llm, sourceHandle: source}
      - {source: llm, target: answer, sourceHandle: source}
"""


def test_knowledge_retrieval_stand_in_feeds_llm_context() -> None:
    conv = Conversation(KNOWLEDGE, knowledge=lambda q: [{"content": f"fact about {q}", "title": "t"}])
    result = conv.turn("refunds", {"FAQ": lambda req: req.system})
    assert result.answer == "Context: fact about refunds"
    assert result.outputs["kb"]["result"][0]["content"] == "fact about refunds"


def test_knowledge_retrieval_without_knowledge_is_empty() -> None:
    conv = Conversation(KNOWLEDGE)
    result = conv.turn("q", {"FAQ": lambda req: f"[{req.system}]"})
    assert result.answer == "[Context: ]"


def test_default_executor_refuses_what_dify_sandbox_refuses() -> None:
    from dskit.tooling.codegen.sandbox import CodeNodeError, LocalCodeExecutor

    executor = Conversation(TINY).executor  # the tooling's one code runner, unless a test passes another
    assert isinstance(executor, LocalCodeExecutor)
    with pytest.raises(CodeNodeError, match="requests"):
        executor.execute(language="python3", code="import requests\ndef main() -> dict:\n    return {}\n",
                         inputs={})
    with pytest.raises(CodeNodeError, match="ValueError: x"):
        executor.execute(language="python3", code="def main() -> dict:\n    raise ValueError('x')\n", inputs={})
    # Dify turns scientific-notation strings into floats before checking types.
    out = executor.execute(language="python3", code="def main(a: str) -> dict:\n    return {'v': a}\n",
                           inputs={"a": "1e+5"})
    assert out == {"v": 100000.0}


def test_graphon_rejects_an_undeclared_code_output() -> None:
    broken = TINY.replace('return {"history": joined, "turns": joined.count("|") + 1}',
                          'return {"history": joined, "turns": 1, "extra": 2}')
    conv = Conversation(broken)
    result = conv.turn("hello", {"llm": "x"}, raise_on_error=False)
    assert not result.succeeded
    assert "code" in result.errors
