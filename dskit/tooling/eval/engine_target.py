"""The ``engine`` target: the fast Chatflow's understanding call, without graphon.

Per turn it does what the fast Chatflow's nodes do, with the same engine functions they bundle
(``dskit.surfaces.nodes``), so the model sees exactly the prompt it would see in Dify:

1. ``context_node`` builds the prompt (catalog, state, summary, de-noised history, the message) and the
   system instructions — the ``context`` code node;
2. one LLM call with those two messages and the ``understand`` node's parameters as the shipped DSL
   sets them (temperature, max_tokens) — the ``understand`` LLM node;
3. ``state_node`` folds the model's text into the state, grounded in the user's message and their
   recent ones from the history — the ``state`` code node with its ``query`` and ``history`` inputs;
4. the reply: the decision's question, or for an execution ``execute_reply_node`` without a task API
   (the dry-run text) — what the Chatflow answers on those branches;
5. the memory: the turn appended to the history, overflow rolled into an extractive summary — done by
   ``state_node`` itself when the reply is its question (``memory_ready``, the Chatflows' ``own``
   branch), else by ``history_node`` (what the Chatflows' ``outcome`` node does after a task API call);
   both with ``LLM_SUMMARY=false``. Its FAQ and small-talk turns record the engine's question as the
   reply, where the Chatflow records a model's answer (docs/dsl.md, "A model answer after the memory").

What it leaves out, to stay the quick reference: the FAQ and chitchat answer LLMs (their turns answer
with the engine's pending question) and the LLM summary. Neither changes the next understanding prompt:
the history keeps the engine's own text of a FAQ or small-talk turn on every surface
(:func:`dskit.state.views.memory_reply`), so the prompts are the Chatflow's byte for byte (a test). ``dskit eval --target flow`` runs them all.
"""

from __future__ import annotations

import time
from typing import Any

from dskit.surfaces.nodes import context_node, execute_reply_node, history_node, state_node
from dskit.tooling.llm.understand import UNDERSTAND_NODE, understand_parameters
from dskit.turn.command_schema import command_schema

from .suite import Suite
from .turn import Call, TurnOutput


class EngineConversation:
    """One conversation: the conversation variables the Chatflow would keep, carried turn to turn."""

    def __init__(self, suite: Suite, client: Any) -> None:
        self.catalog = suite.catalog_json
        self.client = client
        self.params = understand_parameters()
        self.schema = command_schema(suite.catalog)  # sent only when the client's structured output is on
        self.state = ""
        self.history = ""
        self.summary = ""

    def turn(self, user: str) -> TurnOutput:
        from dskit.tooling.llm import LLMError  # noqa: PLC0415
        from dskit.tooling.llm.understand import understand  # noqa: PLC0415

        started = time.monotonic()
        context = context_node(query=user, sys_context_str=self.state, history=self.history,
                               summary=self.summary, task_catalog=self.catalog)
        try:  # an answer cut at max_tokens comes back like any other: the Chatflow's LLM node passes it on
            answer = understand(self.client, context, self.params, schema=self.schema)
        except LLMError as error:
            return TurnOutput(state_text=self.state, error=str(error), seconds=time.monotonic() - started,
                              calls=[Call(UNDERSTAND_NODE, "", error=str(error))], goes_on=error.answered)
        call = Call(UNDERSTAND_NODE, answer.text, answer.prompt_tokens, answer.completion_tokens, answer.latency,
                    answer.cached, answer.json_mode, cut=getattr(answer, "finish_reason", "") == "length")
        out = state_node(understanding=answer.text, sys_context_str=self.state, task_catalog=self.catalog,
                         query=user, history=self.history, summary=self.summary, llm_summary=False)
        reply = out["question"]
        if out["next_action"] == "execute":
            reply = execute_reply_node(execute_payload=out["execute_payload"], question=out["question"],
                                       api_url="", sys_context_str=out["sys_context_str"],
                                       task_catalog=self.catalog)["reply"]
        # the history node's inputs as the Chatflow binds them; on a FAQ or small-talk turn it keeps the
        # engine's follow-up, not the answer model's text (dskit.state.views.memory_reply), so the next prompt
        # is the Chatflow's although no answer model runs here
        history = out if out["memory_ready"] else history_node(
            old_history=self.history, summary=self.summary, user_query=user, answer=reply,
            follow_up=out.get("follow_up") or "", decision=out["decision"], llm_summary=False)
        self.state, self.history, self.summary = out["sys_context_str"], history["history"], history["summary"]
        return TurnOutput(answer=reply, state_text=self.state, calls=[call], seconds=time.monotonic() - started,
                          detail={"next_action": out["next_action"], "rewritten_query": out["rewritten_query"],
                                  "prompt_tokens_estimated": context.get("tokens"),
                                  "node_error": out.get("error") or ""})


class EngineTarget:
    """``--target engine``: the understanding prompt of the fast Chatflow -> model -> ``step``."""

    name = "engine"

    def __init__(self, client: Any) -> None:
        self.client = client

    def conversation(self, suite: Suite, run_id: str) -> EngineConversation:
        _ = run_id
        return EngineConversation(suite, self.client)

    def describe(self) -> dict[str, Any]:
        return {"target": "engine", "layout": "fast (understanding call only)",
                "understand_parameters": understand_parameters()}
