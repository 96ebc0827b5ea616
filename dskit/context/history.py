"""Dialogue history in one string conversation variable, as ``user: … / assistant: …`` blocks.

A turn is ``user: …\\n\\nassistant: …``; turns are joined by ``\\n\\n---\\n\\n``. An LLM reads the
string as it is, so the variable can go straight into a prompt. Unlike a plain window (which keeps the
last 10 turns and throws the rest away), turns that leave the window come back as ``overflow`` and
are merged into the rolling summary (:mod:`dskit.context.summary`): nothing leaves silently.

Tags: when the caller knows a turn's tag (the state machine knows which turn set slots or
confirmed), it is stored in the label, ``user [essential]: …``, which an LLM still reads naturally.
Turns without a stored tag are tagged by rules (:mod:`dskit.rules.noise`) each time they are read.

The window keeps the last ``max_turns`` turns and stays under ``max_bytes``; when it must let a turn
go, noise goes first (never one of the last two turns), then the oldest. Size is measured as Dify
does (``sys.getsizeof`` of the string, 2-4 bytes a character for Chinese) or as UTF-8, whichever is
larger. The default cap leaves margin under Dify's 200 KiB variable limit; ``HISTORY_LEGACY`` fits
the 5,120-byte limit of early Dify releases.
"""

from __future__ import annotations

import re
import sys

from ..base.jsonish import loads_strict_or_none
from ..base.messages import norm_lang
from ..rules.noise import NOISE_TAGS, noise_classify, noise_hint_tag, noise_tag_turns
from .summary import SUMMARY_MAX_TOKENS, summary_extractive, summary_prompt
from ..base.text import bounded_int, clean_text, one_line

HISTORY_SEPARATOR = "\n\n---\n\n"
HISTORY_MAX_TURNS = 10
HISTORY_MAX_BYTES = 150_000   # Dify: 200 KiB (204,800 bytes) per variable
# Early Dify releases cap a variable at 5,120 bytes: 6 turns in 4,800 bytes.
HISTORY_LEGACY = {"max_turns": 6, "max_bytes": 4_800}
HISTORY_MIN_BYTES = 1_024
HISTORY_MAX_INPUT_CHARS = 2_000_000  # anything longer is cut to its tail before parsing
HISTORY_MAX_OVERFLOW_TURNS = 200     # beyond the window, only this many turns are tagged and summarised
HISTORY_MAX_OVERFLOW_CHARS = 100_000 # the overflow output keeps its newest part (Dify caps strings)

_USER_ROLES = r"user|human|用户|客户|顾客"
_BOT_ROLES = r"assistant|ai|bot|chatbot|助手|客服|机器人|系统"
_LABEL = re.compile(
    rf"^(?P<role>(?P<user>{_USER_ROLES})|{_BOT_ROLES})(?:[ \t]*\[(?P<tag>[a-z]+)\])?[ \t]*[:：][ \t]?",
    re.I | re.M)
_SPLIT = re.compile(r"^[ \t]*-{3,}[ \t]*$", re.M)
_TRUNC = {"zh": "…（已截断）…", "en": "…(truncated)…"}
# Where a reply goes that a model gives after the memory of its turn is written: a Chatflow's FAQ or
# small-talk answer comes after the state node, which keeps the memory, and no code runs after it
# (dskit/tooling/dslbuild/flows.py). The state node stores the turn with this mark where the answer
# goes; the answer itself is stored apart (the ``reply_pending`` variable) and put in its place by
# :func:`fill_pending` on the next turn. A private-use character: nothing a user types keeps it
# (:func:`append_turn` drops it from what they say) and one-line rendering leaves it as it is.
PENDING_MARK = "\ue000"


def history_size(text: str) -> int:
    """Bytes ``text`` takes as a Dify variable: max(sys.getsizeof, UTF-8 length)."""
    return max(sys.getsizeof(text), len(text.encode("utf-8", "replace")))


def _clean(text: object) -> str:
    """Any input as clean text (:func:`dskit.base.text.clean_text`), its tail when it is over-long."""
    return clean_text(text, HISTORY_MAX_INPUT_CHARS)


def fill_pending(history: object, reply: object) -> str:
    """The history with the reply that came after it was written put where the engine left its mark
    (:data:`PENDING_MARK`), made safe to store as every reply is; no mark: the history as it is. An
    empty ``reply`` removes the mark (a turn that stopped before its answer was saved)."""
    text = _clean(history)
    if PENDING_MARK not in text:
        return text
    return text.replace(PENDING_MARK, _content(_clean(reply).replace(PENDING_MARK, "")))


def _content(text: str) -> str:
    """Message text made safe to store: no separator lines, no lines that look like a role label."""
    text = _SPLIT.sub("- - -", _clean(text).strip())
    return _LABEL.sub(lambda m: " " + m.group(0), text)


def _from_messages(data: object) -> list[dict] | None:
    """Turns from a JSON message list ([{role, content}] or [{user, assistant}]); None if not one."""
    if isinstance(data, dict):
        inner = data.get("history", data.get("messages"))
        return parse_history(inner) if isinstance(inner, (str, list)) else None
    if not isinstance(data, list) or not all(isinstance(m, dict) for m in data):
        return None
    turns: list[dict] = []
    for m in data:
        if "user" in m or "assistant" in m:
            turns.append({"user": _clean(m.get("user", "")).strip(),
                          "assistant": _clean(m.get("assistant", "")).strip(),
                          "tag": noise_hint_tag(m.get("tag"))})
            continue
        role = str(m.get("role", "")).lower()
        content = _clean(m.get("content", m.get("text", ""))).strip()
        if role in ("user", "human"):
            turns.append({"user": content, "assistant": "", "tag": ""})
        elif role in ("assistant", "ai", "bot") and turns and not turns[-1]["assistant"]:
            turns[-1]["assistant"] = content
        elif role in ("assistant", "ai", "bot"):
            turns.append({"user": "", "assistant": content, "tag": ""})
    return [t for t in turns if t["user"] or t["assistant"]]


def _parse_block(block: str) -> list[dict]:
    """Turns in one block of text (normally exactly one)."""
    turns: list[dict] = []
    labels = list(_LABEL.finditer(block))
    head = block[: labels[0].start()].strip() if labels else block.strip()
    if head:
        turns.append({"user": "", "assistant": head, "tag": ""})
    for i, m in enumerate(labels):
        end = labels[i + 1].start() if i + 1 < len(labels) else len(block)
        text = block[m.end():end].strip()
        if m.group("user") is not None:  # the user's words of the two role lists (disjoint)
            tag = (m.group("tag") or "").lower()
            turns.append({"user": text, "assistant": "", "tag": tag if tag in NOISE_TAGS else ""})
        elif turns and not turns[-1]["assistant"]:
            turns[-1]["assistant"] = text
        elif turns:
            turns[-1]["assistant"] += "\n" + text
        else:
            turns.append({"user": "", "assistant": text, "tag": ""})
    return turns


def parse_history(text: object) -> list[dict]:
    """Turns ``[{"user", "assistant", "tag"}]`` from a history string. Never raises.

    Best effort on anything: this module's format, Dify's "Human:/Assistant:" lines, a JSON list of
    messages, a truncated string (the cut head becomes an assistant-only turn), or plain text.
    """
    try:
        if isinstance(text, list):
            return _from_messages(text) or []
        text = _clean(text)
        stripped = text.strip()
        if not stripped:
            return []
        if stripped[0] in "[{":
            found = _from_messages(loads_strict_or_none(stripped))
            if found is not None:
                return found
        turns: list[dict] = []
        for block in _SPLIT.split(text):
            turns.extend(_parse_block(block))
        return [t for t in turns if t["user"] or t["assistant"]]
    except Exception:  # a code node must never fail on its input
        return []


def recent_user_messages(history: object, count: int) -> list[str]:
    """The user's messages in a history string, oldest first: the last ``count`` (for grounding)."""
    return [t["user"] for t in parse_history(history) if t.get("user")][-count:] if count > 0 else []


def last_assistant_message(history: object) -> str:
    """The assistant's last reply in a history string ("" when there is none): what it offered last."""
    turns = [t for t in parse_history(history) if t.get("assistant")]
    return turns[-1]["assistant"] if turns else ""


def render_turn(turn: dict) -> str:
    """One turn as stored; a stored tag goes into the user label."""
    tag = turn.get("tag") or ""
    label = f"user [{tag}]" if tag in NOISE_TAGS else "user"
    return f"{label}: {_content(turn.get('user', ''))}\n\nassistant: {_content(turn.get('assistant', ''))}"


def render_history(turns: list[dict]) -> str:
    """Turns joined by the separator line."""
    return HISTORY_SEPARATOR.join(render_turn(t) for t in turns)


def render_history_for_model(turns: list[dict]) -> str:
    """Turns as a prompt shows them: each message on one line after its role label, tags not shown.

    The stored history keeps a message's line breaks; in a prompt they would let a message start a
    line of its own and pass for a role label or a zone header (docs/context.md).
    """
    return HISTORY_SEPARATOR.join(f"user: {one_line(t.get('user', ''))}\n\nassistant: {one_line(t.get('assistant', ''))}"
                                  for t in turns)


def _eviction_order(turns: list[dict]) -> list[int]:
    """The order in which turns leave the window: noise first (oldest first, never one of the last
    two turns), then the rest, oldest first. Tags are computed once, on the whole list."""
    tags = noise_tag_turns(turns)
    protected = len(turns) - 2
    noise = [i for i, info in enumerate(tags) if info["tag"] == "noise" and i < protected]
    taken = set(noise)
    return noise + [i for i in range(len(turns)) if i not in taken]


def _shrink(turn: dict, max_bytes: int, lang: str) -> dict:
    """The turn cut (in the middle of the reply first, then of the user text) to fit ``max_bytes``.

    The texts are made safe once; candidates are measured without re-sanitising them.
    """
    marker = _TRUNC[norm_lang(lang)]
    safe = {"user": _content(turn.get("user", "")), "assistant": _content(turn.get("assistant", ""))}

    def size(user: str, bot: str) -> int:
        label = f"user [{turn['tag']}]" if turn.get("tag") in NOISE_TAGS else "user"
        return history_size(f"{label}: {user}\n\nassistant: {bot}")

    def cut(text: str, keep: int) -> str:
        if keep >= len(text):
            return text
        return "" if keep <= 0 else text[:keep // 2] + marker + text[len(text) - (keep - keep // 2):]

    for key in ("assistant", "user"):
        other = "user" if key == "assistant" else "assistant"
        text = safe[key]
        if size(safe["user"], safe["assistant"]) <= max_bytes:
            break
        lo, hi = 0, len(text)
        while lo < hi:  # the longest kept share of ``text`` that fits
            mid = (lo + hi + 1) // 2
            pair = {key: cut(text, mid), other: safe[other]}
            if size(pair["user"], pair["assistant"]) <= max_bytes:
                lo = mid
            else:
                hi = mid - 1
        safe[key] = cut(text, lo)
    return {**turn, "user": safe["user"], "assistant": safe["assistant"]}


def fit_window(turns: list[dict], max_turns: int = HISTORY_MAX_TURNS, max_bytes: int = HISTORY_MAX_BYTES,
               lang: str = "zh") -> tuple[list[dict], list[dict], int]:
    """(kept, overflow, truncated): the window within both caps; overflow in conversation order.

    Turns leave in :func:`_eviction_order`; the fewest that satisfy the turn cap and then the
    byte cap go (found by bisection, since each further turn out only makes the rest smaller).
    A single turn bigger than the byte cap is cut to fit; its full text goes to ``overflow`` too, so
    the summary still sees it.
    """
    max_turns = bounded_int(max_turns, HISTORY_MAX_TURNS, 1, 1000)
    max_bytes = bounded_int(max_bytes, HISTORY_MAX_BYTES, HISTORY_MIN_BYTES, 100_000_000)
    order = _eviction_order(turns)

    def window(k: int) -> list[int]:
        gone = set(order[:k])
        return [i for i in range(len(turns)) if i not in gone]

    lo = max(0, len(turns) - max_turns)  # fewest evictions for the turn cap
    hi = max(lo, len(turns) - 1)         # at most all but one turn
    while lo < hi:
        mid = (lo + hi) // 2
        if history_size(render_history([turns[i] for i in window(mid)])) <= max_bytes:
            hi = mid
        else:
            lo = mid + 1
    kept_idx = window(lo)
    gone_idx = set(range(len(turns))) - set(kept_idx)
    kept = [turns[i] for i in kept_idx]
    truncated = 0
    if kept and history_size(render_history(kept)) > max_bytes:
        gone_idx.add(kept_idx[0])
        kept[0] = _shrink(kept[0], max_bytes, lang)
        truncated = 1
    return kept, [turns[i] for i in sorted(gone_idx)], truncated


def append_turn(history: object, user: object, assistant: object, *, essential: bool | None = None,
                tag: object = None, max_turns: int = HISTORY_MAX_TURNS, max_bytes: int = HISTORY_MAX_BYTES,
                lang: str = "zh") -> dict:
    """Add a turn and fit the window. Never raises.

    ``tag`` ("essential"/"optional"/"noise"/"chat") or ``essential`` is the caller's hint, stored
    with the turn. ``essential=False`` and "chat" mean "this turn set nothing": the rules pick optional
    or noise right away. Without a hint the rules decide each time the history is read.
    Returns ``{"history", "turns", "overflow" (turns, tags resolved), "truncated"}``.
    """
    turns = parse_history(history)
    limit = bounded_int(max_turns, HISTORY_MAX_TURNS, 1, 1000) + HISTORY_MAX_OVERFLOW_TURNS
    early, turns = turns[:-limit], turns[-limit:]  # a foreign history of thousands of turns
    hint = noise_hint_tag(tag) or noise_hint_tag(essential)
    user_text, bot_text = _clean(user).replace(PENDING_MARK, "").strip(), _clean(assistant).strip()
    if user_text or bot_text:
        if hint == "chat":  # resolved now, while the previous reply is known, and stored
            prev = turns[-1]["assistant"] if turns else ""
            hint = noise_classify(user_text, bot_text, prev, "chat")[0]
        turns.append({"user": user_text, "assistant": bot_text, "tag": hint})
    resolved = noise_tag_turns(turns)
    prev = ""
    for turn, info in zip(turns, resolved):
        turn["_tag"], turn["_reason"], turn["_prev"] = info["tag"], info["reason"], prev
        prev = turn["assistant"]
    kept, overflow, truncated = fit_window(turns, max_turns, max_bytes, lang)
    overflow = [{"user": t["user"], "assistant": t["assistant"], "tag": "", "reason": "", "prev_assistant": ""}
                for t in early] + [{"user": t["user"], "assistant": t["assistant"], "tag": t["_tag"],
                                    "reason": t["_reason"], "prev_assistant": t["_prev"]} for t in overflow]
    kept = [{"user": t["user"], "assistant": t["assistant"], "tag": t.get("tag", "")} for t in kept]
    return {"history": render_history(kept), "turns": kept, "overflow": overflow, "truncated": truncated}


def history_for_model(history: object, lang: str = "zh") -> str:
    """The history as the model should read it: noise and folded duplicates out, tags not shown.

    A turn the user later corrected is marked so that the model does not act on the old value.
    """
    turns = parse_history(history)
    notes = {"zh": ("（此轮内容后来被用户更正）", "（同一问题问了{n}次）"),
             "en": (" (later corrected by the user)", " (asked {n} times)")}[norm_lang(lang)]
    kept = []
    for turn, info in zip(turns, noise_tag_turns(turns)):
        if info["tag"] == "noise":
            continue
        user = turn["user"]
        if info["reason"] == "corrected":
            user += notes[0]
        if info["repeats"] > 1:
            user += notes[1].format(n=info["repeats"])
        kept.append({"user": user, "assistant": turn["assistant"], "tag": ""})
    return render_history_for_model(kept)


# The next turn's understanding prompt up to the message, which the history code node builds when it
# is given the catalog and the state (dskit.surfaces.nodes.history_node, dskit.surfaces.nodes.next_prompt): the LLM's
# system prompt, the head its user prompt starts with, the state view. :func:`history_update` knows
# no catalog and leaves them empty.
NEXT_PROMPT_OUTPUTS = {"prompt_system": "string", "prompt_head": "string", "prompt_tail": "string",
                       "prompt_state": "string"}
HISTORY_NODE_OUTPUTS = {
    "history": "string", "model_history": "string", "summary": "string", "overflow": "string",
    "overflow_turns": "number", "turns": "number", "tag": "string", "summary_due": "boolean",
    "summary_system": "string", "summary_prompt": "string", "truncated": "number", **NEXT_PROMPT_OUTPUTS,
}


def history_update(old_history: str = "", summary: str = "", user_query: str = "", answer: str = "",
                   tag: str = "", max_turns: int = HISTORY_MAX_TURNS, max_bytes: int = HISTORY_MAX_BYTES,
                   summary_max_tokens: int = SUMMARY_MAX_TOKENS, llm_summary: bool = False,
                   lang: str = "zh", **other_answers: object) -> dict:
    """The Dify history node: append this turn, roll overflow into the summary. Never raises.

    ``answer`` is the reply of this turn; when it is empty, the first non-empty ``other_answers``
    value is used (a Chatflow may wire several answer branches into one code node). ``tag`` is the
    caller's hint ("essential", "optional", "noise", or "" for rules; see
    :func:`dskit.state.views.history_tag`). With ``llm_summary`` true, ``summary`` is still merged
    extractively (a safe value if the LLM fails) and ``summary_due``/``summary_prompt`` ask an LLM
    node to do better; :func:`dskit.context.summary.summary_accept` then checks its answer.
    Outputs and their types: ``HISTORY_NODE_OUTPUTS``.
    """
    lang = norm_lang(lang)
    try:
        reply = _clean(answer).strip()
        if not reply or reply.lower() == "none":
            reply = next((_clean(v).strip() for v in other_answers.values()
                          if _clean(v).strip() and _clean(v).strip().lower() != "none"), "")
        result = append_turn(old_history, user_query, reply, tag=tag, max_turns=max_turns,
                             max_bytes=max_bytes, lang=lang)
        old_summary = _clean(summary).strip()
        overflow = result["overflow"]
        new_summary = summary_extractive(old_summary, overflow[-HISTORY_MAX_OVERFLOW_TURNS:], summary_max_tokens, lang)
        overflow_text = render_history(overflow)
        if len(overflow_text) > HISTORY_MAX_OVERFLOW_CHARS:
            overflow_text = "…" + overflow_text[-HISTORY_MAX_OVERFLOW_CHARS:]
        due = bool(overflow) and str(llm_summary).strip().lower() in ("true", "1", "yes")
        prompt = {"system": "", "user": ""}
        if due:
            prompt = summary_prompt(old_summary, overflow_text, lang, summary_max_tokens)
        tags = noise_tag_turns(result["turns"])
        return {
            "history": result["history"],
            "model_history": history_for_model(result["history"], lang),
            "summary": new_summary,
            "overflow": overflow_text,
            "overflow_turns": len(overflow),
            "turns": len(result["turns"]),
            "tag": tags[-1]["tag"] if tags and (user_query or reply) else "",
            "summary_due": due,
            "summary_system": prompt["system"],
            "summary_prompt": prompt["user"],
            "truncated": result["truncated"],
            **dict.fromkeys(NEXT_PROMPT_OUTPUTS, ""),
        }
    except Exception as exc:  # pragma: no cover - last line of defence for the code node
        keep = _clean(old_history)
        return {"history": keep, "model_history": keep, "summary": _clean(summary), "overflow": "",
                "overflow_turns": 0, "turns": 0, "tag": "", "summary_due": False, "summary_system": "",
                "summary_prompt": f"error: {type(exc).__name__}", "truncated": 0,
                **dict.fromkeys(NEXT_PROMPT_OUTPUTS, "")}
