"""Context assembly in five zones, within a token budget (docs/design.md, "Zones and budgets").

Zones, in prompt order: system · state · memory · history · external. Each zone has its own budget
and there is a total; the state zone is the anchor of every reference and is always whole. When the
text is over budget, items are cut in this order:

1. noise turns and folded duplicate questions, and summary lines that only acknowledged values a
   later line or the state zone shows again (always, whatever the budget);
2. optional history turns, oldest first: first their replies are cut to an opening of
   ``CONTEXT_SHORT_REPLY_TOKENS``, then the turns go;
3. the oldest history turns (any tag; an essential one leaves its summary line behind, so it is
   summarised rather than lost), then summary lines that carry no fact;
4. external items, last (least relevant) first;
5. memory items, last first;
6. summary lines that carry facts (values, confirmations), the least useful first
   (see :func:`dskit.context.summary.summary_victim`);
7. the latest turn (cut short first, dropped last).

System and state are never cut: if they alone exceed the budget, the report says ``over_budget``.
Per-zone budgets are applied first, inside each zone, with steps 1-3 (and the latest turn cut to
size only if it alone is over): the facts of the summary and the latest turn may take a zone past
its own budget, never the total past its budget. The summary's own cap (:mod:`dskit.context.summary`) bounds
how far.

The state zone shows a dskit state as the model's view of it (:func:`dskit.state.views.state_text`):
every open task with its filled and missing slots, so every confirmed value stays visible at a
fraction of the JSON's tokens; any other string is used as it is. Text a user wrote (history turns,
summary lines, memory items) is rendered on one line after a prefix the engine writes, so it can
never start a line and pass for a zone header (docs/context.md, "What the model can trust").
"""

from __future__ import annotations


from ..catalog.catalog import Catalog
from .history import PENDING_MARK, parse_history, render_history_for_model
from ..base.messages import norm_lang
from ..rules.noise import noise_tag_turns
from .summary import (SUMMARY_MAX_LINES, summary_fact_line, summary_fact_lines, summary_is_fact, summary_ranks,
                      summary_units, summary_victim)
from ..base.text import bounded_int, clean_text, one_line
from ..base.tokens import estimate_tokens, truncate_to_tokens
from ..state.views import state_text

CONTEXT_ZONES = ("system", "state", "memory", "history", "external")
CONTEXT_TOTAL_BUDGET = 3_000
CONTEXT_ZONE_BUDGETS = {"memory": 400, "history": 360, "external": 1_200}
CONTEXT_MAX_TURNS = 200  # older turns of an oversized history are only summarised
CONTEXT_SHORT_REPLY_TOKENS = 40  # an optional turn's reply is first cut to this, then the turn goes
# Every header the engine writes into a prompt, each at the start of its own line.
CONTEXT_HEADERS = {
    "zh": {"catalog": "【任务目录】", "state": "【当前状态】（以此为准，始终有效）", "memory": "【相关记忆】",
           "history": "【对话历史】", "external": "【参考资料】", "summary": "更早对话的摘要：",
           "recent": "最近的对话：", "latest": "【用户最新输入】"},
    "en": {"catalog": "[Task catalog]", "state": "[Current state] (authoritative)", "memory": "[Relevant memory]",
           "history": "[Conversation history]", "external": "[Reference material]",
           "summary": "Summary of earlier turns:", "recent": "Recent turns:", "latest": "[User's latest message]"},
}


def context_item(text: str) -> str:
    """A line of user-provided text (a summary line, a memory item) as the prompt shows it: one line,
    after the engine's "- " (a line that had its own dash keeps it)."""
    line = one_line(text)
    return line if line.startswith("- ") else "- " + line.removeprefix("-").lstrip()


def _items(text: str) -> list[str]:
    """A memory or external zone cut into items: paragraphs, or lines when there is one paragraph."""
    text = (text or "").strip()
    if not text:
        return []
    paragraphs = [p.strip() for p in text.split("\n\n") if p.strip()]
    if len(paragraphs) > 1:
        return paragraphs
    return [ln.strip() for ln in text.split("\n") if ln.strip()]


class _Zones:
    """The zones' remaining items, how they render, and their token counts (cached per zone).

    Whoever changes a zone's items calls :meth:`touch`. :meth:`tokens` without a zone is the sum of
    the zones plus one token per separator: never below the estimate of the whole text (the estimate
    is subadditive), so cutting until it fits makes the whole text fit.
    """

    def __init__(self, system: str, state: str, memory: list[str], summary: list[str], turns: list[dict],
                 external: list[str], lang: str) -> None:
        self.system, self.state, self.memory, self.summary = system, state, memory, summary
        self.turns, self.external, self.lang = turns, external, lang
        self.h = CONTEXT_HEADERS[lang]
        self._cache: dict[str, tuple[str, int]] = {}

    def touch(self, zone: str) -> None:
        self._cache.pop(zone, None)

    def _render(self, name: str) -> str:
        h = self.h
        if name == "system":
            return self.system
        if name == "state":
            return f"{h['state']}\n{self.state}" if self.state else ""
        if name == "memory":
            return f"{h['memory']}\n" + "\n".join(context_item(m) for m in self.memory) if self.memory else ""
        if name == "external":
            return f"{h['external']}\n" + "\n\n".join(self.external) if self.external else ""
        if not self.summary and not self.turns:
            return ""
        parts = [h["history"]]
        if self.summary:
            parts.append(h["summary"] + "\n" + "\n".join(context_item(line) for line in self.summary))
        if self.turns:
            parts.append(h["recent"] + "\n" + render_history_for_model([t["turn"] for t in self.turns]))
        return "\n".join(parts)

    def zone(self, name: str) -> str:
        """One zone's text with its header ('' when empty)."""
        if name not in self._cache:
            text = self._render(name)
            self._cache[name] = (text, estimate_tokens(text))
        return self._cache[name][0]

    def text(self) -> str:
        return "\n\n".join(z for z in (self.zone(n) for n in CONTEXT_ZONES) if z)

    def tokens(self, zone: str | None = None) -> int:
        if zone:
            self.zone(zone)
            return self._cache[zone][1]
        sizes = [self.tokens(z) for z in CONTEXT_ZONES if self.zone(z)]
        return sum(sizes) + max(0, len(sizes) - 1)


def _cut_history(parts: _Zones, report: list, reason: str, keep_facts: bool = True) -> bool:
    """Cut one history item in trimming order; False when only the latest turn and facts are left.

    Optional turns (oldest first) are first cut short, to their reply's opening, then dropped; then
    the oldest turns go (an essential one leaves its summary line); then summary lines that are not
    facts; with ``keep_facts`` false, facts too (oldest first).
    """
    last = len(parts.turns) - 1
    for i, t in enumerate(parts.turns):
        if t["tag"] == "optional" and i != last and not t.get("short"):
            reply = t["turn"]["assistant"]
            short = truncate_to_tokens(reply, CONTEXT_SHORT_REPLY_TOKENS)
            t["short"] = True
            if short != reply:
                t["turn"] = {**t["turn"], "assistant": short}
                parts.touch("history")
                report.append({"zone": "history", "what": "optional reply shortened", "reason": reason,
                               "tokens": estimate_tokens(reply) - estimate_tokens(short),
                               "preview": " ".join(short.split())[:40]})
                return True
    for i, t in enumerate(parts.turns):
        if t["tag"] == "optional" and i != last:
            report.append(_cut("history", "optional turn", t["turn"], reason))
            del parts.turns[i]
            parts.touch("history")
            return True
    if len(parts.turns) > 1:
        oldest = parts.turns.pop(0)
        parts.touch("history")
        line = summary_fact_line(oldest["turn"], oldest["tag"], oldest["reason"], oldest["prev"], parts.lang)
        if line:  # an essential turn is summarised, not dropped
            parts.summary.append(line)
        report.append(_cut("history", "oldest turn summarised" if line else "oldest turn",
                               oldest["turn"], reason))
        return True
    victim = summary_victim(parts.summary, parts.lang, keep_facts)
    if victim >= 0:
        what = "summary line" if summary_is_fact(parts.summary[victim]) else "summary line (no fact)"
        report.append(_cut("history", what, parts.summary[victim], reason))
        del parts.summary[victim]
        parts.touch("history")
        return True
    return False


def _cut(zone: str, what: str, item: object, reason: str) -> dict:
    text = render_history_for_model([item]) if isinstance(item, dict) else str(item)
    return {"zone": zone, "what": what, "tokens": estimate_tokens(text), "reason": reason,
            "preview": " ".join(text.split())[:40]}


def _shorten_last_turn(parts: _Zones, over: int, report: list, reason: str) -> bool:
    """Cut the latest turn's reply (then its user text) short by about ``over`` tokens."""
    if not parts.turns:
        return False
    entry = parts.turns[-1]
    turn = dict(entry["turn"])
    parts.touch("history")
    for key in ("assistant", "user"):
        size = estimate_tokens(turn[key])
        if size > 8:
            keep = max(0, size - over - 2)
            turn[key] = truncate_to_tokens(turn[key], keep) if keep > 0 else "…"
            report.append({"zone": "history", "what": f"latest turn {key} shortened", "tokens": size - keep,
                           "reason": reason, "preview": ""})
            entry["turn"] = turn
            return True
    report.append(_cut("history", "latest turn", entry["turn"], reason))
    parts.turns.pop()
    return True


def _cut_list(parts: _Zones, zone: str, report: list, reason: str) -> bool:
    items = getattr(parts, zone)
    if not items:
        return False
    report.append(_cut(zone, "item", items[-1], reason))
    items.pop()
    parts.touch(zone)
    return True


def _fit_zone(parts: _Zones, zone: str, budget: int, report: list) -> None:
    """Cut inside one zone until it fits its own budget."""
    reason = f"{zone} budget {budget}"
    while parts.tokens(zone) > budget:
        if zone == "history":
            if _cut_history(parts, report, reason):
                continue
            latest = estimate_tokens(render_history_for_model([parts.turns[-1]["turn"]])) if parts.turns else 0
            if latest > budget:  # the latest turn alone is over the zone's budget: cut it to size
                _shorten_last_turn(parts, latest - budget, report, reason)
                continue
            break  # what is left is the latest turn and the facts: the total budget decides
        items = getattr(parts, zone)
        if len(items) > 1:
            _cut_list(parts, zone, report, reason)
        elif items:
            header = estimate_tokens(parts.h[zone]) + 1
            cut = truncate_to_tokens(items[0], budget - header - 1)
            report.append({"zone": zone, "what": "item shortened", "reason": reason, "preview": "",
                           "tokens": max(0, parts.tokens(zone) - header - estimate_tokens(cut))})
            if cut and cut != items[0]:
                items[0] = cut
            else:
                items.pop()
            parts.touch(zone)
        else:
            break


def _precut_list(parts: _Zones, zone: str, limit: int, report: list) -> None:
    """Drop, in one go, the items past the first ones that fit ``limit`` (a zone or total budget)."""
    items = getattr(parts, zone)
    used = 0
    for i, item in enumerate(items):
        used += estimate_tokens(item) + 1
        if used > limit and i > 0:
            report.append({"zone": zone, "what": f"{len(items) - i} items", "reason": f"over {limit}",
                           "tokens": sum(estimate_tokens(x) for x in items[i:]), "preview": ""})
            del items[i:]
            parts.touch(zone)
            return


def _fit_total(parts: _Zones, budget: int, report: list) -> None:
    """Cut across zones, in the module's order, until the whole text fits."""
    reason = f"total budget {budget}"
    steps = (
        lambda: _cut_history(parts, report, reason),
        lambda: _cut_list(parts, "external", report, reason),
        lambda: _cut_list(parts, "memory", report, reason),
        lambda: _cut_history(parts, report, reason, keep_facts=False),
        lambda: _shorten_last_turn(parts, parts.tokens() - budget, report, reason),
    )
    while parts.tokens() > budget:
        if not any(step() for step in steps):
            break


def _fresh_summary(lines: list[str], state_text: str, report: list) -> list[str]:
    """Summary lines minus acknowledgements whose values show again later (a later line, or the state).

    "已记下时间：19:00" says nothing once "已为您预订…19:00…" follows, or once the state shows it; the
    summary variable keeps such lines (the state may drop a finished task), the prompt does not.
    """
    kept = []
    for line, rank in zip(lines, summary_ranks(lines, after=state_text or " ")):
        if rank == 1:
            report.append(_cut("history", "summary line repeated later", line, "repeated"))
        else:
            kept.append(line)
    return kept


def assemble_context(*, system: str = "", state: str = "", memory: str = "", history: object = "",
                     summary: str = "", external: str = "", total_budget: int = CONTEXT_TOTAL_BUDGET,
                     budgets: dict | None = None, lang: str = "zh", state_view: str = "compact",
                     catalog: Catalog | None = None) -> dict:
    """Build the context text: ``{"text", "report"}``. Never raises on string input.

    ``history`` is the history variable (see :mod:`dskit.context.history`), ``summary`` the rolling summary.
    ``budgets`` maps zone -> tokens (default ``CONTEXT_ZONE_BUDGETS``; a zone missing from an explicit
    dict, or given 0, has no budget of its own). ``state_view="raw"`` keeps the state string exactly
    as given; with ``catalog`` the state view names each open task's missing slots.
    Report: ``tokens`` per zone, ``total``, ``budget``, ``cut`` (what went, and why), ``noise_removed``,
    ``turns_kept``, ``summary_lines``, ``over_budget``.
    """
    lang = norm_lang(lang)
    total_budget = bounded_int(total_budget, CONTEXT_TOTAL_BUDGET, 0) or CONTEXT_TOTAL_BUDGET
    zone_budgets = dict(CONTEXT_ZONE_BUDGETS if budgets is None else budgets)
    text_of = clean_text
    state_view_text = text_of(state).strip() if state_view == "raw" else state_text(
        state if isinstance(state, dict) else text_of(state), catalog, lang)
    turns = parse_history(history)
    cut: list[dict] = []
    older, turns = turns[:-CONTEXT_MAX_TURNS], turns[-CONTEXT_MAX_TURNS:]
    older_lines = summary_fact_lines(older[-CONTEXT_MAX_TURNS:], lang) if older else []
    if older:
        cut.append({"zone": "history", "what": f"{len(older)} turns before the newest {CONTEXT_MAX_TURNS}",
                    "reason": "too many turns", "tokens": 0, "preview": f"{len(older_lines)} summarised"})
    kept_turns, noise_removed = [], 0
    prev = older[-1]["assistant"] if older else ""
    for turn, info in zip(turns, noise_tag_turns(turns)):
        if info["tag"] == "noise" and PENDING_MARK not in turn["assistant"]:  # a reply to come is shown
            cut.append(_cut("history", "noise turn", turn, info["reason"]))
            noise_removed += 1
        else:  # no single message can take more than the whole budget
            kept_turns.append({"turn": {"user": truncate_to_tokens(turn["user"], total_budget),
                                        "assistant": truncate_to_tokens(turn["assistant"], total_budget)},
                               "tag": info["tag"], "reason": info["reason"], "prev": prev})
        prev = turn["assistant"]
    summary_lines = _fresh_summary((summary_units(text_of(summary)) + older_lines)[-SUMMARY_MAX_LINES:],
                                       state_view_text, cut)
    parts = _Zones(text_of(system).strip(), state_view_text, _items(text_of(memory)),
                      summary_lines, kept_turns, _items(text_of(external)), lang)
    for zone in ("external", "memory"):  # far too many items: most go at once (the rest one by one)
        _precut_list(parts, zone, min(bounded_int(zone_budgets.get(zone), 0, 0) or total_budget, total_budget), cut)
    for zone in ("history", "external", "memory"):
        zone_budget = bounded_int(zone_budgets.get(zone), 0, 0)
        if zone_budget:
            _fit_zone(parts, zone, zone_budget, cut)
    _fit_total(parts, total_budget, cut)
    text = parts.text()
    total = estimate_tokens(text)
    report = {
        "tokens": {zone: parts.tokens(zone) for zone in CONTEXT_ZONES},
        "total": total,
        "budget": total_budget,
        "cut": cut,
        "noise_removed": noise_removed,
        "turns_kept": len(parts.turns),
        "summary_lines": len(parts.summary),
        "over_budget": total > total_budget,
    }
    return {"text": text, "report": report}
