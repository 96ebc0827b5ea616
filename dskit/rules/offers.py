"""Offered values: what the assistant put in front of the user, which a "就这家" may take.

A recommendation, a list of options, the result of a search: the user accepts one without repeating
it ("就去那儿吧" after the assistant offered 故宫; "第二个"; "that one"). Grounding (docs/grounding.md)
accepts such a value only when all of these hold:

- it was **offered in the assistant's last reply** — as a structured offer recorded for a slot
  (:func:`record_offers`: a search API's results, a task's result, an app's own list) or in the reply's
  text, as a whole word or name of it;
- it is accepted **for the slot it was offered for**: a structured offer names its slot; a value of the
  reply's text counts for the slot the engine asked last turn (a yes or a reference accepts it), or for
  the slot the model gives it when the message *points back* at it ("这家", "它的地址", "就去那儿") — and
  never for a slot whose options or aliases it belongs to elsewhere (checked by dskit.rules.admission);
- the user's message **accepts** it and refuses nothing (:func:`dskit.rules.cues.says_accept`), and an ordinal
  ("第二个", "the first") picks exactly that one of the offered list; or, when the reply put **one thing**
  forward (a single structured value, or a reply that is not a list), the message asks for a detail of
  it without naming it and looks nowhere else ("把地址给我吧", "价格呢？", :func:`dskit.rules.cues.asks_detail`).

Offers last one turn: the user's next message takes them or they are gone.
"""

from __future__ import annotations

import re
from typing import Any

from .cues import asks, asks_detail, asks_for_a_pick, clauses, offered_index, only_yes, refers_back, says_accept
from .matching import exact_match, segments, words_match
from ..state.state import add_error, dump_state, load_trusted

MAX_OFFERS = 8
MAX_OFFERED_VALUES = 12
MAX_OFFER_CHARS = 200
# How the assistant lists several options in a reply ("A、B 或 C", "1. A 2. B").
_ITEMS = re.compile(r"[、，,；;/\n]|或者|或是|还是|\bor\b|\d+[.、)]")
# What makes a reply a list of several: 、, a comma and a space ("A, B, C"), "or", a numbered list. A Chinese
# comma alone (NFKC makes it ",") joins the clauses of one recommendation.
_LIST_MARKS = re.compile(r"[、;；/\n]|,\s|或者|或是|以及|\bor\b|(?<![\d.])\d{1,2}(?:[、)]|\.(?!\d))")


def clean_offers(raw: Any) -> list[list]:
    """Offers in their stored form, [[task, slot, [values]], ...], bounded; anything malformed is left
    out. Accepts {"slot": [values]}, [{"task", "slot", "values"}] or the stored form."""
    items: list = []
    if isinstance(raw, dict):
        items = [{"task": "", "slot": k, "values": v} for k, v in raw.items()]
    elif isinstance(raw, list):
        items = [dict(zip(("task", "slot", "values"), o)) if isinstance(o, list) and len(o) == 3 else o for o in raw]
    kept = []
    for item in items[:MAX_OFFERS]:
        if not isinstance(item, dict) or not isinstance(item.get("slot"), str) or not item["slot"]:
            continue
        values = item.get("values") if isinstance(item.get("values"), list) else [item.get("values")]
        values = [v[:MAX_OFFER_CHARS] if isinstance(v, str) else v for v in values[:MAX_OFFERED_VALUES]
                  if isinstance(v, (str, int, float)) and not isinstance(v, bool)]
        task = item.get("task") if isinstance(item.get("task"), str) else ""
        if values:
            kept.append([task[:64], item["slot"][:64], values])
    return kept


def record_offers(state_str: Any, offers: Any, *, secret: str = "") -> str:
    """Write what the assistant's reply offers into the state (for the user's next message only).
    Never raises; a malformed offer is left out and said in ``errors``. The state is read as every state
    writer reads it (:func:`dskit.state.state.load_trusted`): a state changed outside the engine comes out with
    nothing it claims trusted, never sealed as the engine's own."""
    state = load_trusted(state_str, secret)
    kept = clean_offers(offers)
    if offers and not kept:
        add_error(state, "offers", "no usable offer: expected {slot: [values]} or [{task, slot, values}]")
    state["offers"] = {"turn": state["turn"], "items": kept} if kept else None
    return dump_state(state, secret)


def take_offers(state: dict) -> tuple:
    """The offers of the assistant's last reply, for this turn's evidence (removed from the state: they
    last one turn). Call after the turn counter moved on."""
    offers = state.pop("offers", None)
    if not isinstance(offers, dict) or offers.get("turn") != state["turn"] - 1:
        return ()
    return tuple((task, slot, tuple(values)) for task, slot, values in clean_offers(offers.get("items")))


def _found(value: Any, text: str) -> bool:
    target = str(value)
    folded = "".join(segments(target))
    return words_match(target, text) if folded.isascii() else exact_match(folded, text, target)


def _one_thing(text: str) -> bool:
    """Whether a reply puts one thing forward, not a list ("去百年食府吃吧，他家特别正点" does;
    "有A、B、C" and "A, B, 或 C" do not)."""
    return not _LIST_MARKS.search(text)


# What a figure is made of besides its digits: units, bounds and the marks of a range.
_FIGURE_WORDS = re.compile(r"分钟|小时|公里|以上|以下|以内|之内|左右|[元块分人位个天晚星折岁间层米起\s.\-~～至到、,，:：%]")


def _a_figure(value: Any) -> bool:
    """A number with its unit ("人均119元", "4.5分以上", "2小时 - 4小时") is one of the offered thing's figures
    (the place's price), not the thing a detail question or a reference back takes. A name with a digit
    in it ("798艺术区", "速8酒店") is a thing."""
    text = str(value)
    return any(c.isdigit() for c in text) and not _FIGURE_WORDS.sub("", re.sub(r"\d", "", text))


def _takes_outright(raw: str) -> bool:
    """A clause that points back or says yes without asking anything ("就这家吧", "好呀", "这个点也可以"):
    the message takes the offered thing, not only asks about it."""
    return any((refers_back(clause) or only_yes(clause)) and not asks(clause) for clause in clauses(raw))


def _asks_for_a_pick(raw: str) -> bool:
    """The message asks the assistant to pick one ("好的，请在这家酒店附近给我推荐一个…", "这几家里哪家有包间？") and
    no clause of it points back at a thing without asking that ("行，就去这儿，再帮我找一家酒店" takes 这儿)."""
    return asks_for_a_pick(raw) and not any(refers_back(c) and not only_yes(c) and not asks_for_a_pick(c)
                                           for c in clauses(raw))


def offer_accepted(task: str, slot: str, value: Any, raw: str, offers: tuple, offered_text: str,
                   asked: bool) -> bool:
    """Whether ``value`` for (task, slot) was offered in the assistant's last reply and the message
    ``raw`` accepts it (see the module's rules)."""
    if not raw:
        return False
    accepts = says_accept(raw)  # a reference back or a yes, refusing nothing
    detail = asks_detail(raw)  # or a detail asked of the one thing recommended
    if not accepts and not detail:
        return False
    index = offered_index(raw) if accepts else None
    if index is None and _asks_for_a_pick(raw):
        return False
    for o_task, o_slot, values in offers:
        if o_slot == slot and o_task in ("", task) and value in values:
            if accepts:
                return index is None or (index < len(values) and values[index] == value)
            return len(values) == 1 and not _a_figure(value)
    if offered_text and _found(value, offered_text):
        # a question about the thing takes the thing, never one of its figures ("这家餐馆的周边有哪些景点啊？" after
        # "推荐您去人均消费68元的讲礼驴肉馆" is not a budget of 68元); a figure is taken for the slot asked last
        # turn, or when the message also takes the thing outright ("好呀，就去这个地方了，…")
        if accepts and (asked or refers_back(raw) and (not _a_figure(value) or _takes_outright(raw))):
            if index is None:
                return True
            items = [item for item in _ITEMS.split(offered_text) if item and item.strip()]
            return index < len(items) and _found(value, items[index])
        return detail and index is None and _one_thing(offered_text) and not _a_figure(value)
    return False


__all__ = ["record_offers", "take_offers", "offer_accepted", "clean_offers", "MAX_OFFERS"]
