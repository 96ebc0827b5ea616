"""Code-node entry functions: the engine as Dify code nodes call it.

``dskit gen`` bundles each function here, with the engine modules it needs, into one pasted script
(code_nodes/*.py). Each accepts anything, never raises, and returns exactly its declared outputs
through :func:`dskit.surfaces.node_io.conform` (the rules of what Dify accepts live there). The functions are
thin: the rules they apply live in the engine modules they call — the state machine, the views of
its decision (:mod:`dskit.state.views`), the history, the prompt assembly, the classic adapter.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..catalog.catalog import Catalog, CatalogError, load_catalog
from .classic import classic_commands, merge_params
from ..context.context import CONTEXT_TOTAL_BUDGET, CONTEXT_ZONE_BUDGETS
from ..context.history import (HISTORY_NODE_OUTPUTS, NEXT_PROMPT_OUTPUTS, PENDING_MARK, fill_pending, history_update,
                      parse_history)
from ..state.integrity import CHECKED_KEY
from ..turn.machine import catalog_mark, record_result, run_turn
from ..base.jsonish import loads_strict_or_none
from ..base.messages import msg, norm_lang, sentences
from .node_io import (NODE_MAX_STRING, conform, json_out, keep_state, node_types, tail_lines, text_in, text_out,
                      truthy)
from ..context.prompts import understanding_head, understanding_instructions, understanding_prompt
from ..state.state import dump_state, load_state, load_trusted, unmarked
from ..context.summary import SUMMARY_MAX_TOKENS, summary_accept
from ..base.text import bounded_int, one_line
from .turn_inputs import MAX_QUERY_CHARS, turn_inputs
from ..state.views import (WORKFLOW_OUTPUTS, execute_reply, failed_outputs, history_tag, memory_reply, replies_itself, state_text,
                    workflow_outputs)

# What the state node adds when it also keeps the memory (:func:`state_node`'s ``summary`` bound): the
# history node's outputs a Chatflow reads after the turn, and whether they were built.
MEMORY_OUTPUTS = {"memory_ready": "boolean", **{name: HISTORY_NODE_OUTPUTS[name] for name in (
    "history", "summary", "overflow", "summary_due", "summary_system", "summary_prompt", *NEXT_PROMPT_OUTPUTS)}}
# What a Chatflow shows and stores of the reply when this node writes it (:func:`state_node`).
REPLY_OUTPUTS = {"reply": "string", "reply_pending": "string"}
STATE_NODE_OUTPUTS = {**node_types(WORKFLOW_OUTPUTS), **MEMORY_OUTPUTS, **REPLY_OUTPUTS}
# A summary the engine wrote is a few dozen lines under 5 KB; a longer one was edited or came from
# elsewhere. Its newest part is kept so that trimming it stays fast inside the sandbox's time limit.
SUMMARY_TAIL_LINES = 100
SUMMARY_TAIL_CHARS = 20_000
# One message longer than this cannot be kept whole in the history anyway (its byte cap cuts it);
# reading only its opening keeps the noise rules fast on a megabyte of text.
TURN_MAX_CHARS = 100_000


def _lang(lang: Any) -> str | None:
    """A ``lang`` input: "" (follow the catalog) -> None, else zh or en."""
    text = text_in(lang).strip()
    return norm_lang(text) if text else None


def _catalog_lang(task_catalog: str) -> str | None:
    """The catalog's language when it can be read at all (for texts when the catalog is broken)."""
    data = loads_strict_or_none(task_catalog)
    return data.get("language") if isinstance(data, dict) and isinstance(data.get("language"), str) else None


def _catalog(task_catalog: Any) -> Catalog:
    """The catalog input (JSON text, an object, or a Catalog already loaded); raises CatalogError."""
    return load_catalog(task_catalog if isinstance(task_catalog, (dict, Catalog)) else text_in(task_catalog))


def _marked_catalog(task_catalog: Any, checked: str) -> Catalog:
    """The state node's catalog: marked, and built without its checks when ``checked`` (the state's
    ``catalog_checked``) is the text's own mark (dskit.catalog.catalog.load_catalog). A separate function, so the
    other nodes, which never need the mark, do not bundle hashlib for it."""
    source = task_catalog if isinstance(task_catalog, (dict, Catalog)) else text_in(task_catalog)
    return load_catalog(source, checked, catalog_mark(source)) if isinstance(source, str) else load_catalog(source)


def _summary(summary: Any) -> str:
    return tail_lines(summary, SUMMARY_TAIL_LINES, SUMMARY_TAIL_CHARS)


# ---------------------------------------------------------------- state node

def _failed_turn(state_text_in: str, key: str, lang: str | None, error: str, **values: Any) -> dict:
    """Outputs for a turn that could not run: state unchanged, a polite fallback, the error named."""
    language = lang or "zh"
    outputs = failed_outputs(_kept_state(state_text_in), msg(key, language, **values), error, language)
    return conform({**outputs, "reply": outputs["question"]}, STATE_NODE_OUTPUTS)


def _kept_state(state_text: str) -> str:
    """The incoming state for a turn that could not run; a usable one too large for Dify 1.8 (an earlier
    engine wrote up to 150,000 characters) is re-written within the limits instead of emptied."""
    kept = keep_state(state_text)
    if kept or not state_text.strip():
        return kept
    state, errors = load_state(state_text)
    return "" if errors else dump_state(state)


def _again_unmarked(node: Callable[..., dict], args: dict) -> dict:
    """``node(**args)``, run once more on the state text without its mark when it raised on a text that
    carries one.

    Why: a text whose mark holds is read as the engine wrote it, without the repairs of a damaged state
    (dskit.state.state.sound_body). Without a secret, whoever can write the variable can compute a mark, so a
    hand-made state may carry one over parts the repairs would fix, and make even a node's error path
    fail. Read again without its mark, it is repaired as any other text is. The engine's own texts never
    fail so, and a node that says what went wrong in ``error`` (keeping the state as it came) is not run
    again: an ordinary turn runs once."""
    try:
        return node(**args)
    except Exception:  # noqa: BLE001 - raised again when the text carries no mark
        text = args.get("sys_context_str")
        if unmarked(text) is text:
            raise
        return node(**{**args, "sys_context_str": unmarked(text)})


def state_node(understanding: Any = "", sys_context_str: Any = "", task_catalog: Any = "",
               lang: Any = "", query: Any = None, history: Any = "", reference_date: Any = "",
               state_secret: Any = "", summary: Any = None, max_turns: Any = 10, max_bytes: Any = 150_000,
               summary_max_tokens: Any = SUMMARY_MAX_TOKENS, llm_summary: Any = False,
               history_lang: Any = "zh", conversation_id: Any = "", reply_pending: Any = None,
               api_url: Any = None) -> dict:
    """One dialogue turn: the understanding LLM's raw text + the state + the catalog -> new state + decision.

    ``query`` (the user's message) and ``history`` (for their recent messages) let the engine apply
    only what the user said (docs/grounding.md); without ``query`` (unbound, or "": Dify never sends
    an empty message) every valid command is applied.
    ``reference_date`` "YYYY-MM-DD" ("": today) is the day relative dates count from; a message over
    8,000 characters or a malformed date is refused as the plugin refuses it (dskit.surfaces.turn_inputs).
    ``state_secret`` (a Dify secret environment variable, "" when unset) keys the state's seal, so a
    state changed outside the engine starts clean (dskit.state.integrity). ``lang`` "" means the catalog's
    language. A broken catalog leaves the state untouched and says so in ``error``; so does anything
    unexpected. ``conversation_id`` (``sys.conversation_id``) keys an execution for the task API
    (``execute_key``, :func:`dskit.state.integrity.execution_key`). Outputs: :data:`dskit.state.views.WORKFLOW_OUTPUTS`.

    With ``summary`` bound (the rolling summary; unbound is ``None``, an empty one ``""``) this node
    also does the history node's work — the same :func:`history_node` call, with ``max_turns`` ...
    ``history_lang`` as its settings — on every turn whose reply is known here or comes from a model
    right after it, and says so in ``memory_ready`` (:data:`MEMORY_OUTPUTS`): so that an ordinary turn,
    and a FAQ or small-talk turn, runs no second code node compiling much of this code again.

    - its own ``question`` (:func:`dskit.state.views.replies_itself`: ask, confirm, handoff, fallback, notices,
      a turn that could not run) is the reply, ``reply``;
    - with ``reply_pending`` bound, a FAQ or small-talk turn, which a model answers after this node: the
      turn is recorded with the engine's own text (:func:`dskit.state.views.memory_reply`: the open task's
      pending question, never the model's answer, so every surface sends the same next prompt; issue 40).
      ``reply`` is then what the Chatflow says when the knowledge base finds nothing, ``reply_pending``
      empty. A history holding :data:`dskit.context.history.PENDING_MARK` (written before that decision)
      still gets the stored answer put in its place (:func:`dskit.context.history.fill_pending`);
    - with ``api_url`` bound and empty (no task API): an execution's reply, ``no_api_reply`` with the line
      for the app builder, then the next question.

    An execution with a task API leaves ``memory_ready`` false and those outputs empty: its outcome comes
    later, and :func:`outcome_node` keeps the memory with it.
    """
    if PENDING_MARK in text_in(history):  # the last turn's model answer, in its place (none: the mark goes)
        history = fill_pending(history, "" if reply_pending is None else reply_pending)
    args = dict(locals())
    outputs, remembered, catalog = _again_unmarked(_state_turn, args)
    if summary is None or remembered is None:
        return outputs
    answered_later = outputs["next_action"] in ("faq", "chitchat")
    memory = history_node(old_history=history, summary=summary, user_query=query, answer=remembered,
                          follow_up=outputs["follow_up"] if answered_later else "", decision=outputs["decision"],
                          max_turns=max_turns, max_bytes=max_bytes, summary_max_tokens=summary_max_tokens,
                          llm_summary=llm_summary, lang=history_lang, sys_context_str=outputs["sys_context_str"],
                          task_catalog=catalog)
    outputs.update({name: memory[name] for name in MEMORY_OUTPUTS if name in memory}, memory_ready=True)
    return outputs


def _own_reply(outputs: dict, decision: dict, pending_mode: bool, api_url: Any) -> tuple[str, str] | None:
    """(``reply``, what the memory records as the reply) when this node keeps the memory of the turn;
    None when the reply comes from a task API (:func:`state_node`)."""
    action, lang = outputs["next_action"], norm_lang(decision.get("lang"))
    if replies_itself(outputs):
        return outputs["question"], outputs["question"]
    if pending_mode and action in ("faq", "chitchat"):
        # the model's answer comes after this node; the memory keeps the engine's own text of the turn
        # (views.memory_reply: the open task's pending question), never that answer, on every surface
        return (msg("faq_none", lang) if action == "faq" else ""), ""
    if action == "execute" and api_url is not None and not text_in(api_url).strip():
        question = outputs["question"]
        text = sentences(lang, outputs["no_api_reply"], msg("exec_dry_builder", lang))
        reply = text + ("\n\n" + question if question else "")
        return reply, reply
    return None


def _state_turn(understanding: Any, sys_context_str: Any, task_catalog: Any, lang: Any, query: Any, history: Any,
                reference_date: Any, state_secret: Any, summary: Any, max_turns: Any, max_bytes: Any,
                summary_max_tokens: Any, llm_summary: Any, history_lang: Any, conversation_id: Any,
                reply_pending: Any, api_url: Any) -> tuple[dict, str | None, Any]:
    """:func:`state_node`'s turn on the state text as given: (outputs, what the memory records as the
    reply or None, the catalog for the memory)."""
    state_in = text_in(sys_context_str)
    language = _lang(lang)
    secret = text_in(state_secret)
    loaded = load_trusted(state_in, secret)  # first: its seal vouches for the catalog mark it keeps
    try:
        catalog = _marked_catalog(task_catalog, loaded.get(CHECKED_KEY, ""))
    except CatalogError as exc:
        fallback_lang = language or _catalog_lang(text_in(task_catalog))
        return _failed(_failed_turn(state_in, "broken_catalog", fallback_lang, text_out(str(exc), 2000)), task_catalog)
    except Exception as exc:  # noqa: BLE001 - a code node must not raise
        return _failed(_failed_turn(state_in, "broken_catalog", language,
                                    f"catalog: {type(exc).__name__}: {exc}"[:2000]), task_catalog)
    inputs = turn_inputs(text_in(query), text_in(history), text_in(reference_date))
    if inputs.problem:  # the same refusal the plugin tools give (dskit.surfaces.turn_inputs)
        key = "message_too_long" if inputs.problem_input == "query" else "internal"
        return _failed(_failed_turn(state_in, key, language or catalog.language, inputs.problem, n=inputs.length,
                                    limit=MAX_QUERY_CHARS), catalog)
    try:
        raw = understanding if isinstance(understanding, (dict, list)) else text_in(understanding)
        result = run_turn(state_in, raw, catalog, lang=language, secret=secret, loaded=loaded,
                          **inputs.step_args())
        if len(result.text) > NODE_MAX_STRING:
            return _failed(_failed_turn(state_in, "internal", language or catalog.language,
                                        f"new state is {len(result.text)} characters, over Dify's limit"), catalog)
        outputs = workflow_outputs(result.text, result.decision, catalog, state=result.state,
                                   conversation_id=text_in(conversation_id))
        own = _own_reply(outputs, result.decision, reply_pending is not None, api_url)
        reply, remembered = own if own is not None else ("", None)
        pending = reply if remembered == PENDING_MARK else ""
        return conform({**outputs, "reply": reply, "reply_pending": pending}, STATE_NODE_OUTPUTS), remembered, catalog
    except Exception as exc:  # noqa: BLE001
        return _failed(_failed_turn(state_in, "internal", language or catalog.language,
                                    f"{type(exc).__name__}: {exc}"[:2000]), catalog)


def _failed(outputs: dict, catalog: Any) -> tuple[dict, str, Any]:
    """A turn that could not run keeps the memory too: its reply is its question."""
    return outputs, outputs["question"], catalog


# ---------------------------------------------------------------- result node

RESULT_NODE_OUTPUTS = {"sys_context_str": "string", "ok": "boolean", "error": "string"}


def result_node(sys_context_str: Any = "", execute_payload: Any = "", ok: Any = "", detail: Any = "",
                state_secret: Any = "") -> dict:
    """Write a task API's outcome back into the state (``record_result``); never raises."""
    state_in = text_in(sys_context_str)
    try:
        payload = json.loads(text_in(execute_payload) or "{}")
        task_id = payload.get("task_id") if isinstance(payload, dict) else None
        if not isinstance(task_id, str) or not task_id:
            return {"sys_context_str": keep_state(state_in), "ok": False, "error": "execute_payload has no task_id"}
        success = truthy(ok)
        new_state = record_result(state_in, task_id, success, text_in(detail)[:300], secret=text_in(state_secret))
        if len(new_state) > NODE_MAX_STRING:
            return {"sys_context_str": keep_state(state_in), "ok": success, "error": "state too large"}
        return {"sys_context_str": new_state, "ok": success, "error": ""}
    except Exception as exc:  # noqa: BLE001
        return {"sys_context_str": keep_state(state_in), "ok": False,
                "error": text_out(f"{type(exc).__name__}: {exc}", 2000)}


# ---------------------------------------------------------------- execute reply node

EXECUTE_REPLY_OUTPUTS = {"reply": "string", "sys_context_str": "string"}


def execute_reply_node(execute_payload: Any = "", question: Any = "", api_url: Any = "", sys_context_str: Any = "",
                       recorded_state: Any = None, ok: Any = None, status_code: Any = None, error_message: Any = "",
                       task_catalog: Any = "") -> dict:
    """The execute branch's reply, and the state once the outcome is recorded.

    ``recorded_state`` and ``ok`` come from the result node, which runs only when TASK_API_URL is set;
    otherwise they are None and the state node's ``sys_context_str`` stands. A failed task is back on
    top awaiting a retry, so its reply asks to retry instead of moving on to the next question.
    """
    called = bool(text_in(api_url).strip())
    state_in = text_in(recorded_state) if called and text_in(recorded_state) else text_in(sys_context_str)
    try:
        catalog = _catalog(task_catalog)
    except CatalogError:
        return conform({"reply": msg("broken_catalog", "zh"), "sys_context_str": keep_state(state_in)},
                       EXECUTE_REPLY_OUTPUTS)
    try:
        payload = json.loads(text_in(execute_payload) or "{}")
        payload = payload if isinstance(payload, dict) else {}
        success = called and truthy(ok)
        detail = text_in(error_message).strip()
        if not detail and status_code not in (None, "", 0, "0"):
            detail = f"HTTP {text_in(status_code)}"
        text = execute_reply(catalog, payload, called=called, ok=success, detail=detail)
        tail = text_in(question) if not called or success else ""
        return conform({"reply": text + ("\n\n" + tail if tail else ""), "sys_context_str": keep_state(state_in)},
                       EXECUTE_REPLY_OUTPUTS)
    except Exception:  # noqa: BLE001 - a code node must never stop the Chatflow
        return conform({"reply": msg("internal", "zh"), "sys_context_str": keep_state(state_in)},
                       EXECUTE_REPLY_OUTPUTS)


# ---------------------------------------------------------------- outcome node (a task API's answer)

OUTCOME_NODE_OUTPUTS = {"sys_context_str": "string", "reply": "string", "reply_pending": "string", "ok": "boolean",
                        "error": "string", **{name: HISTORY_NODE_OUTPUTS[name] for name in (
                            "history", "summary", "overflow", "summary_due", "summary_system", "summary_prompt",
                            *NEXT_PROMPT_OUTPUTS)}}


def outcome_node(sys_context_str: Any = "", execute_payload: Any = "", ok: Any = "", detail: Any = "",
                 error_message: Any = "", api_url: Any = "", question: Any = "", task_catalog: Any = "",
                 state_secret: Any = "", old_history: Any = "", reply_pending: Any = "", summary: Any = "",
                 user_query: Any = "", decision: Any = "", max_turns: Any = 10, max_bytes: Any = 150_000,
                 summary_max_tokens: Any = SUMMARY_MAX_TOKENS, llm_summary: Any = False,
                 history_lang: Any = "zh") -> dict:
    """A task API's answer, in one code run after the call: recorded in the state (:func:`result_node`),
    told to the user (:func:`execute_reply_node`) and kept in the memory with the next prompt
    (:func:`history_node`; ``old_history`` with the last turn's ``reply_pending`` put in its place).

    Why one node: the execute branch ran these as three sandbox runs, each compiling much of the engine
    again (issue 39); the outputs are theirs. ``ok`` is the HTTP node's status code, ``detail`` its body.
    Never raises: each part keeps what came in when it fails.
    """
    recorded = result_node(sys_context_str, execute_payload, ok, detail, state_secret)
    said = execute_reply_node(execute_payload, question, api_url, sys_context_str, recorded["sys_context_str"],
                              recorded["ok"], ok, error_message, task_catalog)
    history = fill_pending(old_history, reply_pending) if PENDING_MARK in text_in(old_history) else old_history
    memory = history_node(old_history=history, summary=summary, user_query=user_query, answer=said["reply"],
                          decision=decision, max_turns=max_turns, max_bytes=max_bytes,
                          summary_max_tokens=summary_max_tokens, llm_summary=llm_summary, lang=history_lang,
                          sys_context_str=said["sys_context_str"], task_catalog=task_catalog)
    outputs = {name: memory[name] for name in OUTCOME_NODE_OUTPUTS if name in memory}
    outputs.update(sys_context_str=said["sys_context_str"], reply=said["reply"], reply_pending="",
                   ok=recorded["ok"], error=recorded["error"])
    return conform(outputs, OUTCOME_NODE_OUTPUTS)


# ---------------------------------------------------------------- classic adapter node

CLASSIC_ADAPTER_OUTPUTS = {"understanding": "string", "rewritten_query": "string", "error": "string"}


def classic_adapter_node(class_name: Any = "", query: Any = "", task_catalog: Any = "",
                         sys_context_str: Any = "", params_json: Any = "", **params: Any) -> dict:
    """A question classifier's class + a parameter extractor's outputs -> the understanding contract.

    For the classic layout (classifier -> extractor) without an understanding LLM: ``class_name`` is a
    task name or label, a generic task class (单轮任务/多轮任务, the task then read from a ``task`` or
    ``intent`` parameter), or a non-task class (:data:`dskit.surfaces.classic.CLASSIC_CLASSES`). Every other input
    variable is an extractor parameter named after its slot; empty values are skipped. Never raises.
    """
    query_text = text_in(query).strip()[:2000]
    failed = {"rewritten_query": query_text, "commands": [{"type": "cannot_handle"}]}
    try:
        catalog = _catalog(task_catalog)
    except Exception as exc:  # noqa: BLE001 - CatalogError and anything else
        return {"understanding": json_out(failed), "rewritten_query": text_out(query_text),
                "error": text_out(f"catalog: {exc}", 2000)}
    try:
        state, _ = load_state(text_in(sys_context_str))
        merged = merge_params(params, text_in(params_json))
        commands = classic_commands(text_in(class_name), merged, query_text, catalog, state)
        understanding = {"rewritten_query": query_text, "commands": commands}
        return {"understanding": json_out(understanding), "rewritten_query": text_out(query_text), "error": ""}
    except Exception as exc:  # noqa: BLE001
        return {"understanding": json_out(failed), "rewritten_query": text_out(query_text),
                "error": text_out(f"{type(exc).__name__}: {exc}", 2000)}


# ---------------------------------------------------------------- history node

def _turn_text(value: Any) -> str:
    text = text_in(value)
    return text if len(text) <= TURN_MAX_CHARS else text[:TURN_MAX_CHARS] + "…"


def _with_follow_up(answer: Any, follow_up: Any) -> str:
    """The reply as shown: the answer, then the follow-up (none after an empty answer, whose place an
    extra answer input takes)."""
    text = text_in(answer)
    return text + text_in(follow_up) if text else text


def _decision(decision: Any) -> dict:
    """The state node's decision, given as a dict or as its JSON text ({} when it is neither)."""
    value = decision if isinstance(decision, dict) else loads_strict_or_none(text_in(decision))
    return value if isinstance(value, dict) else {}


def _history_tag(tag: Any, decision: Any) -> str:
    """The turn's tag: an explicit ``tag``, else what the state node's decision says about progress."""
    text = text_in(tag).strip()
    if text:
        return text
    return history_tag(decision if isinstance(decision, dict) else loads_strict_or_none(text_in(decision)))


def history_node(old_history: Any = "", summary: Any = "", user_query: Any = "", answer: Any = "",
                 decision: Any = "", tag: Any = "", max_turns: Any = 10, max_bytes: Any = 150_000,
                 summary_max_tokens: Any = SUMMARY_MAX_TOKENS, llm_summary: Any = False, lang: Any = "zh",
                 sys_context_str: Any = "", task_catalog: Any = "", memory: Any = "",
                 total_budget: Any = CONTEXT_TOTAL_BUDGET, history_budget: Any = CONTEXT_ZONE_BUDGETS["history"],
                 memory_budget: Any = CONTEXT_ZONE_BUDGETS["memory"], prompt_lang: Any = "",
                 follow_up: Any = "", **other_answers: Any) -> dict:
    """Append this turn to the history, keep the window under its caps, roll overflow into the summary.

    ``decision`` is the state node's decision JSON: a turn that made progress on a task (set, changed
    or confirmed something) is tagged essential and survives the window longest. When ``answer`` is
    empty the first non-empty extra input is used (one input per answer branch). ``follow_up`` (the
    state node's, :func:`dskit.state.views.follow_up`) is what the reply showed after a model's ``answer``:
    recorded with it — except on a FAQ or small-talk turn, whose model answer is not recorded, only the
    engine's follow-up (:func:`dskit.state.views.memory_reply` says why).

    With ``task_catalog`` given, it also builds the next turn's understanding prompt up to the message
    from the state after this turn (``sys_context_str``) and the new history and summary
    (:func:`next_prompt`: ``prompt_system``, ``prompt_head``, ``prompt_state``), so that the next
    turn's LLM node reads it and no code node runs before the model. Never raises.
    """
    try:
        facts = _decision(decision)
        reply = _turn_text(_with_follow_up(answer, follow_up))
        if facts.get("next_action") in ("faq", "chitchat"):  # the engine's own text (views.memory_reply)
            reply, other_answers = memory_reply(facts, text_in(answer), text_in(follow_up)), {}
        result = history_update(
            text_in(old_history), _summary(summary), _turn_text(user_query),
            reply, tag=_history_tag(tag, decision),
            max_turns=max_turns, max_bytes=max_bytes, summary_max_tokens=summary_max_tokens,
            llm_summary=text_in(llm_summary).strip().lower() in ("true", "1", "yes"),
            lang=text_in(lang) or "zh",
            **{k: _turn_text(v) for k, v in other_answers.items() if isinstance(k, str)})
    except Exception as exc:  # noqa: BLE001
        kept = text_in(old_history)
        result = {"history": kept if len(kept) <= NODE_MAX_STRING else "", "summary": text_in(summary),
                  "summary_prompt": f"error: {type(exc).__name__}"}
    out = conform(result, HISTORY_NODE_OUTPUTS)  # the history and summary as they will be stored
    out.update(next_prompt(sys_context_str, out["history"], out["summary"], task_catalog, memory,
                           total_budget, history_budget, memory_budget, prompt_lang))
    return conform(out, HISTORY_NODE_OUTPUTS)


# ---------------------------------------------------------------- summary node (optional LLM summary)

SUMMARY_NODE_OUTPUTS = {"summary": "string", "source": "string", "added_facts": "number", **NEXT_PROMPT_OUTPUTS}


def summary_node(llm_text: Any = "", summary: Any = "", overflow: Any = "",
                 summary_max_tokens: Any = SUMMARY_MAX_TOKENS, lang: Any = "zh",
                 history: Any = "", sys_context_str: Any = "", task_catalog: Any = "", memory: Any = "",
                 total_budget: Any = CONTEXT_TOTAL_BUDGET, history_budget: Any = CONTEXT_ZONE_BUDGETS["history"],
                 memory_budget: Any = CONTEXT_ZONE_BUDGETS["memory"], prompt_lang: Any = "") -> dict:
    """Check the summary LLM's answer; fall back to the history node's extractive summary.

    Values (numbers, names) of the overflow turns that the LLM dropped are added back as fact lines.
    With ``task_catalog`` given, it rebuilds the next turn's understanding prompt with the checked
    summary (``history``: the history node's new history; see :func:`next_prompt`).
    """
    fallback = _summary(summary)
    try:
        limit = bounded_int(text_in(summary_max_tokens) or SUMMARY_MAX_TOKENS, SUMMARY_MAX_TOKENS, 50, 4000)
        result = summary_accept(_summary(llm_text), fallback, parse_history(text_in(overflow)), limit,
                                norm_lang(text_in(lang)))
    except Exception:  # noqa: BLE001
        result = {"summary": fallback, "source": "extractive", "added_facts": 0}
    out = conform(result, SUMMARY_NODE_OUTPUTS)  # the summary as it will be stored
    out.update(next_prompt(sys_context_str, text_in(history), out["summary"], task_catalog, memory,
                           total_budget, history_budget, memory_budget, prompt_lang))
    return conform(out, SUMMARY_NODE_OUTPUTS)


# ---------------------------------------------------------------- the next turn's prompt (history, summary)

def _context_budgets(history_budget: Any, memory_budget: Any) -> dict:
    return {"history": bounded_int(history_budget, CONTEXT_ZONE_BUDGETS["history"], 0, 1_000_000),
            "memory": bounded_int(memory_budget, CONTEXT_ZONE_BUDGETS["memory"], 0, 1_000_000),
            "external": CONTEXT_ZONE_BUDGETS["external"]}


def _total_budget(total_budget: Any) -> int:
    return bounded_int(total_budget, CONTEXT_TOTAL_BUDGET, 200, 1_000_000)


def next_prompt(sys_context_str: Any, history: Any, summary: Any, task_catalog: Any, memory: Any = "",
                total_budget: Any = CONTEXT_TOTAL_BUDGET, history_budget: Any = CONTEXT_ZONE_BUDGETS["history"],
                memory_budget: Any = CONTEXT_ZONE_BUDGETS["memory"], lang: Any = "") -> dict:
    """The next turn's understanding prompt up to the message, built when a turn ends from the state
    after it and the new history and summary, exactly as the context node builds it at the start of
    the next turn (:func:`dskit.context.prompts.understanding_head`, same budgets and settings): outputs
    :data:`dskit.context.history.NEXT_PROMPT_OUTPUTS` — the LLM's system prompt, the head its user prompt
    starts with, and the state view the classic layout's classifier and extractor read. When the
    history's last turn waits for a model's answer (:data:`dskit.context.history.PENDING_MARK`), the head ends
    where that answer goes and ``prompt_tail`` holds the rest (its follow-up question, the message
    header): the LLM reads head, the stored answer (``reply_pending``), tail, then the message — the
    bytes the context node builds once the answer is known (:func:`context_node`). Otherwise
    ``prompt_tail`` is "".

    Every output is "" when the prompt cannot be built here — no catalog or state given, a broken
    catalog, a text over Dify's string limit, anything unexpected: the next turn then finds the prompt
    empty and builds it with the context node (which reports the problem). Never raises.
    """
    empty = dict.fromkeys(NEXT_PROMPT_OUTPUTS, "")
    bound = isinstance(task_catalog, Catalog) or text_in(task_catalog).strip()
    if not text_in(sys_context_str).strip() or not bound:
        return empty  # not bound (a state after a turn is never empty): the context node builds it
    try:
        catalog = _catalog(task_catalog)
        language = _lang(lang) or norm_lang(catalog.language)
        state_in = text_in(sys_context_str)
        head = understanding_head(catalog, state_in, history=text_in(history), summary=_summary(summary),
                                  memory=text_in(memory), total_budget=_total_budget(total_budget),
                                  budgets=_context_budgets(history_budget, memory_budget), lang=language)
        before, mark, after = head["head"].partition(PENDING_MARK)
        if PENDING_MARK in text_in(history) and not mark:
            return empty  # the turn whose answer is to come did not fit: the context node builds the prompt
        out = {"prompt_system": head["system"], "prompt_head": before, "prompt_tail": after,
               "prompt_state": state_text(state_in, catalog, language)}
    except Exception:  # noqa: BLE001 - CatalogError and anything else: the context node builds it
        return empty
    return out if all(len(value) <= NODE_MAX_STRING for value in out.values()) else empty


# ---------------------------------------------------------------- context node

CONTEXT_NODE_OUTPUTS = {"context": "string", "instructions": "string", "state_text": "string", "tokens": "number",
                        "over_budget": "boolean", "report": "string", "error": "string", "head": "string",
                        "message": "string", "pending": "string", "tail": "string"}


def context_node(query: Any = "", sys_context_str: Any = "", history: Any = "", summary: Any = "",
                 task_catalog: Any = "", memory: Any = "", total_budget: Any = CONTEXT_TOTAL_BUDGET,
                 history_budget: Any = CONTEXT_ZONE_BUDGETS["history"],
                 memory_budget: Any = CONTEXT_ZONE_BUDGETS["memory"], lang: Any = "",
                 reply_pending: Any = "") -> dict:
    """The understanding LLM's prompt (:func:`dskit.context.prompts.understanding_prompt`) and, alone, the
    model's view of the state (``state_text``, for the classic layout's prompts).

    ``reply_pending``: the last turn's model answer, which the history waits for where the engine left
    its mark (:data:`dskit.context.history.PENDING_MARK`). The prompt is built with the mark and the answer, on
    one line, takes its place: ``head`` + ``pending`` + ``tail`` + ``message`` is the text the previous
    turn's stored prompt reads around the stored answer (:func:`next_prompt`), and ``context`` is that
    text. No mark in the prompt: ``pending`` and ``tail`` are "".

    ``context`` is ``head`` followed by ``message`` (the message on one line, cut to size): a Chatflow
    whose LLM reads ``head`` + ``message`` here and, on other turns, a head built at the end of the
    previous turn + ``{{#sys.query#}}`` sends one text either way. The state is never cut (it anchors
    "改成明天吧"); history goes first when over budget. A broken catalog leaves its section out and says
    so in ``error``. Never raises.
    """
    error = ""
    catalog = None
    language = _lang(lang)
    try:
        catalog = _catalog(task_catalog)
        language = language or norm_lang(catalog.language)
    except Exception as exc:  # noqa: BLE001 - CatalogError and anything else
        error = text_out(f"catalog: {exc}", 2000)
    language = language or "zh"
    try:
        state_in = text_in(sys_context_str)
        prompt = understanding_prompt(
            catalog, state_in, text_in(query), history=text_in(history), summary=_summary(summary),
            memory=text_in(memory), total_budget=_total_budget(total_budget),
            budgets=_context_budgets(history_budget, memory_budget), lang=language)
        head, mark, tail = prompt["head"].partition(PENDING_MARK)
        said = one_line(reply_pending) if mark else ""
        outputs = {"context": prompt["user"].replace(PENDING_MARK, said), "instructions": prompt["system"],
                   "state_text": state_text(state_in, catalog, language), "tokens": prompt["tokens"],
                   "over_budget": prompt["over_budget"], "report": json_out(prompt["report"], 100_000), "error": error,
                   "head": head, "message": prompt["message"], "pending": said, "tail": tail}
    except Exception as exc:  # noqa: BLE001
        outputs = {"context": text_in(query)[:2000], "instructions": understanding_instructions(language),
                   "error": text_out(f"{type(exc).__name__}: {exc}", 2000), "head": "",
                   "message": text_in(query)[:2000]}
    return conform(outputs, CONTEXT_NODE_OUTPUTS)
