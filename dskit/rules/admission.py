"""Admission: the named rules, in order, that judge every effect a command proposes.

A command proposes effects (:mod:`dskit.turn.commands`); before the reducer applies one, :func:`judge`
runs the rules listed for its kind in :data:`RULES`, in order. Each rule is a function of the turn
(the user's words — the evidence — and what stood before the message) and the proposed effect, and
answers one of:

- ``None`` — it has nothing to say; the next rule decides;
- :func:`admit` — the effect is applied (possibly as the user's own reading of it: their spelling,
  the date they said);
- :func:`refuse` — not applied, with the reason (the decision's ``dropped``); a refused change
  withdraws a pending confirmation;
- :func:`clarify` — not applied; one short question asks the user to settle it, the rest of the turn
  is kept;
- :func:`read` — the effect is read another way (a clock time kept in the half of the day the user
  said) and the following rules judge that reading.

The engine's own readings of what the model left out (:mod:`dskit.turn.backup`) are judged by the same
rules, and so is a yes. With no evidence (``turn.evidence`` None: replaying stored commands) a rule
about the user's words has nothing to say. docs/grounding.md states each rule over forms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..catalog.catalog import SlotSpec, TaskSpec, coerce_slot_value
from .cues import (DOING_EN, DOING_ZH, asks, asks_about, asks_for_action, asks_for_nothing, clauses, is_social,
                   negated_at, only_yes, points_back, remarks_in, requests_in, says_cancel_clause, says_no, says_refusal)
from ..turn.effects import (Clarified, Confirmed, Effect, FaqAsked, HeldAnswered, Noted, Refused, SlotRolledBack, SlotSet,
                      StackCleared, TaskFocused, TaskOpened, TaskRemoved, ValueHeld, notice)
from ..state.gaps import missing_slots
from ..base.messages import msg
from .negation import clause_span
from .clock import answered_hours, clock_form, half_of_day, hours_in_period, is_clock, periods_in, read_clocks, split_clock
from .counts import party_sizes
from .grounding import (Evidence, asks_about_task, asks_something, cancel_grounded, common_words, confirm_grounded,
                        counts_people, fold, nothing_beyond_task, reset_grounded, revert_said, slot_touched, task_mentioned, task_words,
                        text_grounded, value_grounded)
from ..state.integrity import shown_digest
from .noise import noise_user_signal
from .offers import offer_accepted
from ..state.records import Stage
from .slot_shapes import (forms_said, is_form, not_a_month, date_stated_whole, as_clock, describes_its_kind, is_interrogative, is_name_slot, names_another_slot,
                          owner_elsewhere, said_instead, stated_whole, time_slots, users_spelling)
from ..base.text import short_text
from ..turn.turn import Turn

# A task that ran this many turns ago or less "just ran": starting it again must be asked for.
RECENT_EXECUTION_TURNS = 3


@dataclass(frozen=True)
class Verdict:
    """What a rule says of a proposed effect (see the module's list of outcomes)."""

    outcome: str
    effect: Any = None  # admit/read: the effect as it is applied; clarify/hold: the question or the held value
    reason: str = ""
    grounding: bool = True  # refused for the user's words (else: it cannot apply)
    also: tuple = ()  # effects recorded with it: a note, a notice, a FAQ to answer
    item: str = ""  # what a refusal names ("": the command)


def admit(effect: Effect, *also: Effect) -> Verdict:
    return Verdict("admit", effect, also=also)


def refuse(reason: str, *also: Effect, grounding: bool = True, item: str = "") -> Verdict:
    return Verdict("refuse", reason=reason, grounding=grounding, also=also, item=item)


def read(effect: Effect, *also: Effect) -> Verdict:
    return Verdict("read", effect, also=also)


def clarify(question: Clarified, reason: str, *also: Effect) -> Verdict:
    return Verdict("clarify", question, reason=reason, also=also)


def judge(turn: Turn, effect: Effect) -> Verdict:
    """The verdict of the rules listed for the effect's kind, in order; an effect no rule stops is
    admitted as it stands."""
    notes: tuple = ()
    for rule in RULES.get(type(effect), ()):
        verdict = rule(turn, effect)
        if verdict is None:
            continue
        if verdict.outcome != "read":
            return _held(turn, effect, Verdict(verdict.outcome, verdict.effect, verdict.reason, verdict.grounding,
                                               notes + verdict.also, verdict.item))
        effect, notes = verdict.effect, notes + verdict.also
    return admit(effect, *notes)


def _held(turn: Turn, effect: Effect, verdict: Verdict) -> Verdict:
    """Under the catalog's policy "ask", a value the user's words do not support is held for them to check
    (the next question shows it, and only a yes stores it) instead of refused."""
    if verdict.outcome != "refuse" or not verdict.grounding or not isinstance(effect, SlotSet) \
            or effect.source != "model" or turn.catalog.policy.ungrounded != "ask":
        return verdict
    held = ValueHeld(effect.task_id, effect.slot, effect.value, verdict.reason)
    return Verdict("hold", held, verdict.reason, also=verdict.also)


# ---------------------------------------------------------------- who said it (shared by the rules)

def _task(turn: Turn, task_id: str) -> dict:
    return turn.stack.find(task_id)


def _item(turn: Turn, effect: SlotSet) -> str:
    return short_text({"task": _task(turn, effect.task_id)["name"], "slot": effect.slot, "value": effect.value})


def held_as_name(turn: Turn, entries: list[tuple[Any, Any]], value: Any) -> TaskSpec | None:
    """The first task of ``entries`` ((task name, slots) pairs) that holds ``value`` in a name slot."""
    if not isinstance(value, str) or not value.strip():
        return None
    for kind, slots in entries:
        spec = turn.catalog.task(kind) if isinstance(kind, str) else None
        if spec is not None and isinstance(slots, dict) and any(
                is_name_slot(spec, slot) and isinstance(held, str) and held.strip() == value.strip()
                for slot, held in slots.items()):
            return spec
    return None


def evidence_for(turn: Turn, task: TaskSpec) -> Evidence:
    """The turn's evidence without the recent messages that asked for another kind of task and not
    ``task`` (:func:`given_to_another`); this message always counts."""
    ev = turn.evidence
    others = [other for other in turn.catalog.tasks.values() if other.name != task.name]
    keep = [index for index, folded in enumerate(ev.recent)
            if task_mentioned(task, turn.catalog, folded)
            or not any(task_mentioned(other, turn.catalog, folded) for other in others)]
    if len(keep) == len(ev.recent):
        return ev
    return ev.keeping_recent(keep)


def given_to_another(turn: Turn, task_spec: TaskSpec, spec: SlotSpec, value: Any, old: Any,
                     common: frozenset[str]) -> bool:
    """Whether a value of the user's recent messages (not this one) was said only in messages that asked
    for another kind of task and not this one: it was given for that task ("查一下上海今天的天气" gives 上海
    to the weather, not to the trip planned a message later: where it starts is asked). A message that
    points back ("那天", "那里", "same day": :func:`dskit.rules.cues.points_back`) takes what it points at from
    any request, and a place some task, open or done, is named by may still be what this one is near
    (the sight the user chose is 周边景点 of the hotel they ask for next)."""
    if points_back(turn.evidence.raw):
        return False
    narrowed = evidence_for(turn, task_spec)
    if narrowed is turn.evidence or value_grounded(spec, value, narrowed, old=old, recent=True, common=common):
        return False
    named = [(t["name"], t.get("slots")) for t in turn.stack.tasks]
    named += [(d.get("task"), d.get("slots")) for d in turn.state["done"] if isinstance(d, dict)]
    return held_as_name(turn, named, value) is None


def held_elsewhere(turn: Turn, task: dict, name: str, value: Any) -> bool:
    """Whether a value of the user's recent messages was given for another task: one of the same kind —
    open, or one of the last that ran — holds it ("西湖区文三路100号" for their own broadband is not given
    again for a new one, "我爸家里也要装一个"), or a task of another kind holds it in a slot of the same name
    ("评分4.5分以上" asked of a restaurant is that restaurant's rating, not the hotel's asked for two
    messages later). Another kind of task may share it in another slot (a hotel's name is also where the
    taxi goes), and a place some task is named by may be what several are near (the sight chosen is
    周边景点 of the hotel and of the restaurant). A value a task that ran holds may be what the next one
    refers to ("广州那天天气怎么样": the day of the route that ran)."""
    if holds(value, [t for t in turn.stack.tasks if t is not task and t["name"] == task["name"]]
             + [d for d in turn.state["done"][-3:] if isinstance(d, dict) and d.get("task") == task["name"]]):
        return True
    others = [t for t in turn.stack.tasks if t is not task and t["name"] != task["name"]]
    if not any((t.get("slots") or {}).get(name) == value for t in others):
        return False
    return held_as_name(turn, [(t["name"], t.get("slots")) for t in turn.stack.tasks], value) is None


def holds(value: Any, tasks: list[dict], skip: tuple[str, str] | None = None) -> bool:
    """Whether one of ``tasks`` (open ones, or ``done`` entries) holds ``value`` in a slot other than
    ``skip`` = (task name, slot)."""
    for entry in tasks:
        slots = entry.get("slots")
        name = entry.get("name") or entry.get("task")
        if isinstance(slots, dict) and any(held == value and (name, slot) != skip for slot, held in slots.items()):
            return True
    return False


def offered_value(turn: Turn, task_name: str, slot: str, value: Any, asked: bool) -> bool:
    """A value the assistant's last reply offered for this slot, which the message accepts (dskit.rules.offers).
    A value of the reply's text that another slot already holds was shown back, not offered (a
    confirmation question repeats the booking's "Somewhere downtown"): it never moves to this slot."""
    ev = turn.evidence
    if ev is None:
        return False
    if offer_accepted(task_name, slot, value, ev.raw, ev.offers, "", asked):  # a structured offer
        return True
    shown_back = holds(value, turn.stack.tasks, skip=(task_name, slot))
    spec = turn.catalog.tasks[task_name].slots.get(slot) if task_name in turn.catalog.tasks else None
    asked_about = spec is not None and asks(ev.raw) and slot_touched(spec, ev.message)
    # "这家酒店的价格是多少？" asks for the price the reply may name: a question about a slot gives it nothing
    return not shown_back and not asked_about and offer_accepted(task_name, slot, value, ev.raw, (), ev.offered,
                                                                 asked)


# ---------------------------------------------------------------- readings of a command's values

def value_readings(turn: Turn, task: dict, slots: dict) -> tuple[dict, list[Effect]]:
    """A command's values for one task as the message reads them, with a note for each reading: a clock
    time folded into another value ("周五晚上8点" given as the date) goes to the task's one time slot — or,
    when the command gives the time a value of its own, is trimmed from the other value — and
    a value written into the wrong slot goes to the slot it belongs to ("城东" written as the date is the
    area's, an alias of 东区; a bare "20:00" as the date is the time's) — each only when the command does
    not fill that slot itself. One thing the user said fills one slot. Grounding only."""
    if turn.evidence is None:
        return slots, []
    notes: list[Effect] = []
    spec = turn.spec(task)
    clocks = time_slots(spec)
    if len(clocks) == 1:
        for name, raw in slots.items():
            slot = spec.slots.get(name)
            if slot is None or slot.type != "string" or is_form(slot.pattern) or slot.enum or not isinstance(raw, str):
                continue
            rest, clock = split_clock(raw)
            if rest == raw or clock is None and clocks[0] not in slots:
                continue
            if clocks[0] in slots:  # the time has a value of its own: the date keeps only the date's words
                notes.append(Noted(f"trim {task['id']}.{name}"))
                slots = {**slots, name: rest}
            else:
                notes.append(Noted(f"split {task['id']}.{name}"))
                slots = {**slots, name: rest, clocks[0]: clock}
            break
    moved = dict(slots)
    for name, raw in slots.items():
        owner = owner_elsewhere(spec, name, raw) if name in spec.slots else ""
        if owner and owner not in moved:
            moved[owner] = raw
            del moved[name]
            notes.append(Noted(f"refile {task['id']}.{name}->{owner}"))
    return moved, notes


# The form of words that name a kind of thing rather than one thing ("川菜", "日本料理", "Thai food"), of words
# that name one place ("翠华餐厅", "利苑酒家", "Luigi's Bistro"), and the verbs that take a kind (吃 X: what is eaten).
_KIND_ENDS = ("菜", "料理", "料", "风味", "口味", "小吃", "餐", "锅", "烤", "food", "cuisine", "dishes", "style")
# A kind named by a people's adjective ("Mexican", "Japanese", "Turkish", "Thai"): the suffixes that make one,
# and the few that have none.
_PEOPLES = re.compile(r"^[a-z]+(?:an|ese|ish|ic)$|^(?:thai|greek|french|dutch|swiss|basque|cajun)$")
_NAME_ENDS = ("餐厅", "酒家", "饭庄", "饭店", "酒楼", "食府", "楼", "馆", "坊", "店", "居", "轩", "阁", "斋", "记", "村", "厨房",
              "restaurant", "bistro", "grill", "cafe", "café", "kitchen", "house", "diner", "bar", "pub", "tavern", "eatery",
              "trattoria", "'s")
_KIND_VERBS = ("吃", "尝", "来点", "想吃", "eat", "have some", "fancy", "craving")


def words_form(task: TaskSpec, kind_slot: str, words: str, raw: str) -> str:
    """"kind" when words given to several slots name a kind of thing — they end as the kind slot's own label
    does, or as a kind does ("川菜" for 菜系, "西餐", "火锅", "Thai food"), they are a people's adjective
    ("Mexican", "Japanese"), or they are what is eaten ("想吃海鲜") —, else "name": one place ("翠华餐厅",
    "鼎泰丰", "Wagamama")."""
    text = words.strip().lower()
    label = task.slots[kind_slot].label.lower()
    kind_ends = _KIND_ENDS + tuple(ch for ch in label if "\u4e00" <= ch <= "\u9fff" and ch not in "系类型") + \
        ((label,) if label.isascii() and label else ())
    if text.endswith(kind_ends) or _PEOPLES.match(text):
        return "kind"
    if text.endswith(_NAME_ENDS):
        return "name"
    at = raw.find(text)
    before = raw[:at].rstrip() if at >= 0 else ""
    if before.endswith(_KIND_VERBS):
        return "kind"
    return "name"  # a word of no kind's form is a name ("鼎泰丰", "大董", "Wagamama")


def _names_one_place(task: TaskSpec, slot: str) -> bool:
    """A slot that holds the name of one thing: a name slot, or one whose label or name is a kind of place
    ("餐厅", "restaurant", "酒店")."""
    spec = task.slots[slot]
    return is_name_slot(task, slot) or any(word and word.lower().endswith(_NAME_ENDS + ("酒店", "hotel", "shop"))
                                           for word in (spec.label, spec.name.replace("_", " ")))


def shared_words(turn: Turn, task: dict, slots: dict) -> dict[str, str]:
    """Slots given the same words in one command ("订全聚德" as both the cuisine and the restaurant, "我要报修，
    宽带特别慢" as both the address and the fault): one thing the user said fills one slot. Which one: the
    slot asked last turn (the answer goes there), else — between a slot that names one place and one that
    holds a kind — the form of the words (:func:`words_form`: a kind to the kind's slot, a name to the
    name's). When neither tells, none gets them: the next question asks the first of them, and the answer
    goes there. Returns slot -> why it gets nothing."""
    if turn.evidence is None:
        return {}
    spec = turn.spec(task)
    by_text: dict[str, list[str]] = {}
    for name, raw in slots.items():
        if isinstance(raw, str) and name in spec.slots and raw.strip():
            by_text.setdefault(raw.strip(), []).append(name)
    refused: dict[str, str] = {}
    for words, names in by_text.items():
        if len(names) < 2:
            continue
        owner = next((n for n in names if turn.before.asked == f"{task['id']}.{n}"), "")
        named = [n for n in names if _names_one_place(spec, n)]
        kinds = [n for n in names if n not in named]
        if not owner and len(named) == 1 and len(kinds) == 1:
            form = words_form(spec, kinds[0], words, turn.evidence.raw)
            owner = named[0] if form == "name" else kinds[0] if form == "kind" else ""
        for name in names:
            if name != owner:
                refused[name] = f"{name}: the same words were given to several slots" + (
                    f"; they name the {spec.slots[owner].display}" if owner else "")
    return refused


# ---------------------------------------------------------------- rules for a slot's value

def checked_by_user(turn: Turn, effect: SlotSet) -> Verdict | None:
    """A value held for the user to check, which they said yes to when it was shown (the yes itself was
    judged: :func:`yes_said`, :func:`held_as_shown`)."""
    return admit(effect) if effect.source == "held" else None


def part_of_day_period(turn: Turn, task: dict, slot: str) -> str:
    """The part of the day the user already gave for this task's time: the half of the day of the time it
    holds, else the last part of the day said in the user's recent messages about this task ("明天晚上…"
    a turn before "八点"); "" when they gave none."""
    old = task["slots"].get(slot)
    if is_clock(old):
        return half_of_day(old)
    for text in evidence_for(turn, turn.spec(task)).raw_recent:
        periods = periods_in(text)
        if periods:
            return periods[-1][2]
    return ""


def hour_in_users_part_of_day(turn: Turn, effect: SlotSet) -> Verdict | None:
    """An hour said bare ("八点", "改成七点": no part of the day governs it in this message) takes the part
    of the day the user already gave for this task, whichever half the model wrote: a value the user
    gave, never a guess. With none given, the model's reading of the two stands."""
    if turn.evidence is None or not is_clock(effect.value):
        return None
    task = _task(turn, effect.task_id)
    if effect.slot not in time_slots(turn.spec(task)):
        return None
    readings = read_clocks(turn.evidence.raw) or (
        answered_hours(turn.evidence.raw) if turn.before.asked == f"{task['id']}.{effect.slot}" else [])
    value = clock_form(effect.value)
    if len(readings) != 1 or readings[0].period or value not in readings[0].values():
        return None
    period = part_of_day_period(turn, task, effect.slot)
    if not period:
        return None
    clock = readings[0]
    users = f"{hours_in_period(clock.hour, period)[0]:02d}:{clock.minute:02d}"
    if users == value or users not in clock.values():
        return None
    return read(SlotSet(effect.task_id, effect.slot, users, effect.source),
                Noted(f"part of the day kept {task['id']}.{effect.slot}={users}"))


def value_unchanged(turn: Turn, effect: SlotSet) -> Verdict | None:
    """The value the slot holds already: nothing changes, nothing to judge."""
    if turn.evidence is None or effect.value == _task(turn, effect.task_id)["slots"].get(effect.slot):
        return admit(effect)
    return None


def deletion_named(turn: Turn, effect: SlotSet) -> Verdict | None:
    """A deletion: the message must name the slot or the value it removes."""
    if effect.value is not None:
        return None
    task = _task(turn, effect.task_id)
    spec = turn.spec(task).slots[effect.slot]
    old = task["slots"].get(effect.slot)
    ev = turn.evidence
    if slot_touched(spec, ev.message) or text_grounded(str(old), ev.message, ev.raw):
        return admit(effect)
    return refuse(f"{effect.slot}: the message does not mention this slot; its value stays", item=_item(turn, effect))


def question_is_not_value(turn: Turn, effect: SlotSet) -> Verdict | None:
    """A question word is never a value: what the user asks about is not what they want ("能玩多长时间？")."""
    if is_interrogative(effect.value):
        return refuse(f"{effect.slot}: {short_text(effect.value)} is what the user asks, not a value",
                      item=_item(turn, effect))
    return None


def month_is_a_month(turn: Turn, effect: SlotSet) -> Verdict | None:
    """A month slot holds a month: a value with no month in it ("装好以后" for the bill's month, from "装好以后网速
    不达标怎么办") is no value of that slot, whatever words of the message it copies
    (:func:`dskit.rules.slot_shapes.month_slots`; :func:`dskit.rules.grounding.month_spans`)."""
    if not_a_month(turn.spec(_task(turn, effect.task_id)), effect.slot, effect.value):
        return refuse(f"{effect.slot}: {short_text(effect.value)} is no month", item=_item(turn, effect))
    return None


def _spans_of(spec: SlotSpec, value: Any, raw: str) -> list[tuple[int, int]]:
    """Where the message says a value as written: the value's text, or a word of its option (an alias)."""
    words = {str(item).lower() for item in (value if isinstance(value, list) else [value]) if item is not None}
    words |= {str(alias).lower() for alias, target in spec.aliases.items() if target in (
        value if isinstance(value, list) else [value])}
    spans = []
    for word in (w for w in words if w.strip()):
        start = raw.find(word)
        while start >= 0:
            spans.append((start, start + len(word)))
            start = raw.find(word, start + 1)
    return spans


# A question that selects among things by what it wants of them: "哪家有辣炒蛏子", "哪个的评分是4.5分以上", "有没有
# 门票免费的", "有评分4.5分以上的吗", "which one has a pool" — what it names is what is wanted.
_SELECTS = re.compile(r"哪(?:家|个|一家|一个|些|间|位|里有|儿有)|谁家|有没有[^。？?]*的|有[^，,。？?]*的(?:吗|么|呢)"
                      r"|\bwhich\b|\bany (?:ones?|of them|places?)\b")


def _checks_its_slot(spec: SlotSpec, raw: str, start: int, end: int) -> bool:
    """A question that puts the value to the slot itself ("门票是免费的吗", "评分是4.5分以上的吗": the slot's
    label before its value) checks the value the user wants; a question about a thing that is the value
    ("湘菜贵不贵", "有海鲜吗") asks about it."""
    label = spec.label.lower()
    return len(label) >= 2 and label in raw[max(0, start - 12):start]


def _in_a_plan(raw: str, start: int, end: int) -> bool:
    """Words inside a condition the user sets out ("我要是从A打车到B的话…", "if we go on Friday, …") state a
    plan: what the question then asks is about that plan, whose terms are wanted."""
    sentence = _sentence(raw, start, end)
    offset = raw.find(sentence)
    at = start - offset
    opens = [sentence.find(w) for w in ("要是", "如果", "假如", "if ") if 0 <= sentence.find(w) < at]
    return bool(opens) and ("的话" in sentence[at:] or sentence[at:].lstrip().startswith((",", "，")) or
                            sentence.startswith("if "))


def _sentence(raw: str, start: int, end: int) -> str:
    """The sentence of ``raw[start:end]``: between the marks that end one (not the commas of its clauses)."""
    left = max((raw.rfind(ch, 0, start) for ch in "。！!？?\n"), default=-1) + 1
    rights = [i for i in (raw.find(ch, end) for ch in "。！!？?\n") if i >= 0]
    return raw[left:min(rights) if rights else len(raw)]


def _seeks_the_tasks_thing(task: TaskSpec, raw: str, start: int, end: int) -> bool:
    """A question sentence that names the thing the task is about — its label, its name, or the end of its
    label ("酒店" of 订酒店) — seeks one ("有门票免费的景点吗", "有什么好酒店", "哪里有人均150元…的餐馆，推荐一个"):
    its words are what the user wants of it."""
    clause = _sentence(raw, start, end)  # the sentence, not the clause: "哪里有人均150元的，…的餐馆"
    label = task.label or ""
    things = {label, task.name.replace("_", " ")} | {label[n:] for n in range(1, len(label) - 1)
                                                       if not label.isascii()}
    return any(len(word) >= 2 and word.lower() in clause for word in things)


def asked_about_not_wanted(turn: Turn, effect: SlotSet) -> Verdict | None:
    """A value the message says only inside questions about a thing — not asking for an action — is what
    the user asks about, not what they want ("湘菜贵不贵？", "有海鲜吗？", "千兆一个月多少钱？", "Do you do Thai
    food?"); "能订周五的吗" and "could we have a quiet table?" ask for it, a question that names the task's thing
    seeks one ("有门票免费的景点吗"), and an enquiry (a task that runs without a yes) is asked by a question
    whose words are its terms. Yes/no slots are read the same way
    by their own rule (:func:`dskit.rules.grounding.bool_said`)."""
    if turn.evidence is None or effect.value is None or isinstance(effect.value, bool):
        return None
    task_spec = turn.spec(_task(turn, effect.task_id))
    if not task_spec.confirm:  # an enquiry is asked by a question: what it names are its terms ("北京明天下雨吗")
        return None
    if is_name_slot(task_spec, effect.slot):  # a question about a named thing names what the user means
        return None
    spec = task_spec.slots[effect.slot]
    raw = turn.evidence.raw
    spans = _spans_of(spec, effect.value, raw)
    if spans and all(asks_about(raw, start, end) and not _seeks_the_tasks_thing(task_spec, raw, start, end)
                     and not _SELECTS.search(_sentence(raw, start, end))
                     and not asks_for_action(_sentence(raw, start, end))
                     and not _checks_its_slot(spec, raw, start, end)
                     and not _in_a_plan(raw, start, end) for start, end in spans):
        return refuse(f"{effect.slot}: {short_text(effect.value)} is what the user asks about, not what they want",
                      item=_item(turn, effect))
    return None


def description_is_not_name(turn: Turn, effect: SlotSet) -> Verdict | None:
    """A free-text value that describes the thing instead of naming it ("颐和园周边的酒店" for a hotel's name)."""
    task_spec = turn.spec(_task(turn, effect.task_id))
    if isinstance(effect.value, str) and describes_its_kind(task_spec, task_spec.slots[effect.slot], effect.value):
        return refuse(f"{effect.slot}: {short_text(effect.value)} describes one, it does not name it",
                      item=_item(turn, effect))
    return None


def request_is_not_name(turn: Turn, effect: SlotSet) -> Verdict | None:
    """A name slot given the whole request ("评分4.5分以上…的景点" as the sight's name)."""
    task_spec = turn.spec(_task(turn, effect.task_id))
    if isinstance(effect.value, str) and names_another_slot(task_spec, effect.slot, effect.value):
        return refuse(f"{effect.slot}: {short_text(effect.value)} states what is wanted, it does not name it",
                      item=_item(turn, effect))
    return None


def value_of_another_slot(turn: Turn, effect: SlotSet) -> Verdict | None:
    """Another slot's option or alias, or a bare clock time for a slot without a pattern: that slot's."""
    owner = owner_elsewhere(turn.spec(_task(turn, effect.task_id)), effect.slot, effect.value)
    if owner:
        return refuse(f"{effect.slot}: {short_text(effect.value)} is a value of {owner}", item=_item(turn, effect))
    return None


def name_of_another_task(turn: Turn, effect: SlotSet) -> Verdict | None:
    """A name another kind of task holds as its own: one place is one kind of thing (the hotel the user asks
    the sights around is not the sight's name). Name slots only, of tasks of another kind, open or done."""
    task = _task(turn, effect.task_id)
    if not is_name_slot(turn.spec(task), effect.slot):
        return None
    entries = [(t["name"], t.get("slots")) for t in turn.state["task_stack"] if t["name"] != task["name"]]
    entries += [(d.get("task"), d.get("slots")) for d in turn.state["done"]
                if isinstance(d, dict) and d.get("task") != task["name"]]
    other = held_as_name(turn, entries, effect.value)
    if other is not None:
        return refuse(f"{effect.slot}: {short_text(effect.value)} is the {other.display}'s name",
                      item=_item(turn, effect))
    return None


def one_count_of_several(turn: Turn, effect: SlotSet) -> Verdict | None:
    """The message states two sizes of the party and the model took one ("我们五六个人", "6 or 7 of us"):
    which one the user means is not the engine's to settle — one short question asks, the rest of the turn
    is kept."""
    task = _task(turn, effect.task_id)
    spec = turn.spec(task).slots[effect.slot]
    if not counts_people(spec) or not isinstance(effect.value, (int, float)) or isinstance(effect.value, bool):
        return None
    sizes = sorted(party_sizes(turn.evidence.raw))
    if len(sizes) < 2 or float(effect.value) not in sizes:
        return None
    shown = msg("or", turn.lang).join(str(int(v)) if v == int(v) else str(v) for v in sizes)
    question = msg("clarify_value", turn.lang, slot=spec.display, options=shown)
    return clarify(Clarified(task["id"], effect.slot, question, tuple(sizes)),
                   f"{effect.slot}: the message states {shown}")


def value_said(turn: Turn, effect: SlotSet) -> Verdict | None:
    """The part of the value the user's words support: said in this message (or as the answer to the slot
    asked), said in a recent message — for a slot filled for the first time, or named in this message,
    and not given there for another task —, or offered and accepted. Admitted in the user's own spelling
    (their capitals, units and bounds; the whole of a value they stated); a list keeps the items said."""
    ev = turn.evidence
    task = _task(turn, effect.task_id)
    task_spec = turn.spec(task)
    name, value = effect.slot, effect.value
    spec = task_spec.slots[name]
    old = task["slots"].get(name)
    common = common_words(task_spec, name)
    asked = turn.before.asked == f"{task['id']}.{name}"
    # A change of a value, or a slot that held one before, must be touched by this message; a slot
    # filled for the first time may take a value the user gave in a recent turn — for a task open
    # before this message or named in it, never for one a model opened on its own.
    first_fill = old is None and not task["history"].get(name) and (
        task["id"] in turn.before.existing_ids or task_mentioned(task_spec, turn.catalog, ev.message)
        or task["name"] in turn.log.late_starts())
    items = value if isinstance(value, list) else [value]
    kept = [item for item in items
            if value_grounded(spec, item, ev, old=old, asked=asked, recent=False, common=common)
            or (value_grounded(spec, item, ev, old=old, recent=True, common=common)
                and (first_fill or slot_touched(spec, ev.message)) and not held_elsewhere(turn, task, name, item)
                and not given_to_another(turn, task_spec, spec, item, old, common))
            or offered_value(turn, task["name"], name, item, asked)]
    if not kept:
        return None
    rest = [item for item in items if item not in kept]
    if not spec.enum and not is_form(spec.pattern):
        kept = [date_stated_whole(task_spec, name, stated_whole(task_spec, spec, users_spelling(item, ev.cased), ev.cased),
                                  ev.cased) for item in kept]
    admitted = SlotSet(effect.task_id, name, kept if isinstance(value, list) else kept[0], effect.source)
    if isinstance(value, list) and rest:
        return admit(admitted, _refused_part(turn, effect, f"{name}: {short_text(rest)} is not in what the user said"))
    return admit(admitted)


def _refused_part(turn: Turn, effect: SlotSet, reason: str) -> Effect:
    return Refused(_item(turn, effect), reason, grounding=True)


def user_value_instead(turn: Turn, effect: SlotSet) -> Verdict | None:
    """A date, month or clock time the user did not say, for a slot whose one date, month or time the
    message states: the model aimed at the right slot and wrote the value wrong ("2023-03" or its stale
    "上个月" for "那3月的呢"); the user's is written (as said, or worked out from the reference date for a
    pattern). Otherwise the value is refused: not in what the user said."""
    task = _task(turn, effect.task_id)
    instead = said_instead(turn.spec(task), effect.slot, effect.value, turn.evidence, task["slots"].get(effect.slot))
    if instead is not None:
        return admit(SlotSet(effect.task_id, effect.slot, instead, effect.source),
                     Noted(f"repair {task['id']}.{effect.slot}={short_text(instead)}"))
    return refuse(f"{effect.slot}: {short_text(effect.value)} is not in what the user said", item=_item(turn, effect))


# ---------------------------------------------------------------- rules for a start

def _recent_run(turn: Turn, spec: TaskSpec) -> dict | None:
    """The last execution of the task within RECENT_EXECUTION_TURNS, if any."""
    ran = [d for d in turn.state["done"] if d.get("task") == spec.name
           and turn.state["turn"] - int(d.get("turn") or 0) <= RECENT_EXECUTION_TURNS]
    return ran[-1] if ran else None


def said_values(turn: Turn, spec: TaskSpec, slots: dict, before: dict,
                earlier: Evidence | None = None, instead: bool = True) -> tuple[int, int]:
    """(values given, values said) among a start's slots that differ from ``before``; with ``earlier``
    (the user's last message as evidence), a value said there counts as said too. ``instead``: a value
    the model wrote wrong for a slot whose one date or month the message states counts as said
    (:func:`dskit.rules.slot_shapes.said_instead`)."""
    given = grounded = 0
    for name, raw in slots.items():
        slot = spec.slots.get(name)
        ok, value, _ = coerce_slot_value(slot, raw) if slot is not None and raw is not None else (False, None, "")
        if not ok or not_a_month(spec, name, value):  # no value of its slot: given for nothing
            continue
        asked = turn.before.asked.endswith(f".{name}")
        common = common_words(spec, name)
        direct = value_grounded(slot, value, turn.evidence, recent=False, asked=asked, common=common)
        fixed = said_instead(spec, name, value, turn.evidence, before.get(name)) if instead and not direct else None
        if before.get(name) == (value if fixed is None else fixed):  # the model's stale month, the user's new one
            continue
        given += 1
        if (direct or earlier is not None and value_grounded(slot, value, earlier, recent=False, common=common)
                or offered_value(turn, spec.name, name, value, asked) or fixed is not None) \
                and not owner_elsewhere(spec, name, value):
            grounded += 1
    return given, grounded


def _said_last_message(turn: Turn, spec: TaskSpec, slots: dict) -> tuple[int, int] | None:
    """(values given, values said in this message or the last one) for a start the user asked for in
    their last message, which nothing acted on: "再配一个路由器，AX3000就行" got no usable command, and the
    model started the rental one message late. None unless that message names the task, states it (no
    question, no no, no cancel) and the last turn applied nothing to a task of that name, and this
    message does not say no either. The user said it once; a late model does not make them say it again."""
    ev = turn.evidence
    if not ev.recent or not task_mentioned(spec, turn.catalog, ev.recent[0]):
        return None
    last, now = ev.raw_recent[0], ev.raw
    if any(asks(last) or says_no(last) or says_refusal(text) or says_cancel_clause(text) for text in (last, now)):
        return None
    entries = [e for e in turn.state["timeline"][-1:] if isinstance(e, dict)]
    if any(spec.name in str(a) for e in entries for a in e.get("applied") or ()):
        return None
    earlier = Evidence(message=ev.recent[0], raw=last, reference=ev.reference, cased=last)
    return said_values(turn, spec, slots, {}, earlier)


def start_not_dropped(turn: Turn, effect: TaskOpened | TaskFocused) -> Verdict | None:
    """A start in a message that drops the task or denies wanting it, and gives it no value ("宽带先不装了",
    "no need to check the bill": every clause that names it denies its doing, :func:`_denies_doing`)."""
    spec = turn.catalog.tasks[effect.name]
    raw = turn.evidence.raw
    naming = [c for c in clauses(raw) if task_mentioned(spec, turn.catalog, fold(c))]
    dropped = says_cancel_clause(raw, task_words(spec)) or bool(naming) and all(_denies_doing(spec, c)
                                                                              for c in naming)
    if dropped and not said_values(turn, spec, dict(effect.given), {})[1]:
        return refuse(f"start of {spec.name}: the message drops it and gives it no value")
    return None


def start_requested(turn: Turn, effect: TaskOpened) -> Verdict | None:
    """A message that asks for nothing — thanks, a goodbye, a remark about a past visit or the weather
    (:func:`dskit.rules.cues.asks_for_nothing`) — opens no task, whatever task or value it mentions."""
    if asks_for_nothing(turn.evidence.raw):
        return refuse(f"start of {effect.name}: the message asks for nothing (thanks, a goodbye or a remark)")
    return None


def _denies_doing(task: TaskSpec, clause: str) -> bool:
    """A clause that names the task and denies wanting or doing it: the doing of its label, or its own name,
    stands under a negation ("no need to check the bill", "不用查话费", "话费不查了")."""
    text = clause.lower()
    label = (task.label or "").lower()
    spots = [text.find(w.lower()) for w in task_words(task) if len(w) >= 2 and w.lower() in text]
    spots += [text.find(verb) for verb in DOING_ZH + DOING_EN if verb in label and verb in text]
    return bool(spots) and any(negated_at(text, at, at + 1) for at in spots)


def _ends_with_thing(task: TaskSpec, clause: str) -> bool:
    """A clause that ends with the task's thing ("做土豆片好吃的餐馆", "你之前提过的酒店周围的餐馆里") describes the
    one wanted: a noun phrase, not a remark about one."""
    text = clause.strip().rstrip("里中内上的呢吧啊呀")
    label = (task.label or "").lower()
    return any(len(word) >= 2 and text.endswith(word) for word in {label} | {label[n:] for n in range(1, len(label) - 1)})


def start_named(turn: Turn, effect: TaskOpened | TaskFocused) -> Verdict | None:
    """A message that names the task asks for it — unless it asks for another task and every clause that
    names this one only remarks on it ("帮我报修…，三月份话费已经交了", "办个千兆宽带，这个月话费没问题")."""
    spec = turn.catalog.tasks[effect.name]
    if not task_mentioned(spec, turn.catalog, turn.evidence.message):
        return None
    parts = clauses(turn.evidence.raw)
    naming = [c for c in parts if task_mentioned(spec, turn.catalog, fold(c))]
    others = [t for t in turn.catalog.tasks.values() if t.name != spec.name]
    asking = [c for c in parts if c not in naming and requests_in(c)]
    asks_another = bool(asking) and all(any(task_mentioned(t, turn.catalog, fold(c)) for t in others)
                                        for c in asking)
    runs_at_once = not spec.confirm and not any(s.required for s in spec.slots.values())
    if naming and (asks_another or runs_at_once) and all(remarks_in(c) and not _ends_with_thing(spec, c)
                                                         for c in naming):
        return refuse(f"start of {spec.name}: the message only remarks on it")
    return admit(effect)


def start_asked_again(turn: Turn, effect: TaskOpened | TaskFocused) -> Verdict | None:
    """A task that is open or just ran is started again only when the message gives it a new value. A task
    that just ran, whose new value only the engine's reading of the message gives (the model wrote another
    month, :func:`dskit.rules.slot_shapes.said_instead`), runs again only on a message that names it or says
    nothing but that value ("那3月的呢"; not "这个月流量还剩多少", which asks about something else)."""
    spec = turn.catalog.tasks[effect.name]
    open_task = turn.stack.named(spec.name)
    ran = _recent_run(turn, spec)
    if open_task is None and not ran:
        return None
    before = open_task["slots"] if open_task else (ran.get("slots") or {})
    slots, ev = dict(effect.given), turn.evidence
    if said_values(turn, spec, slots, before)[1] > 0 and (
            open_task is not None or said_values(turn, spec, slots, before, instead=False)[1] > 0
            or task_mentioned(spec, turn.catalog, ev.message)
            or nothing_beyond_task(spec, ev.raw, tuple(str(v).lower() for v in forms_said(spec, ev).values()))):
        return admit(effect)
    why = "it is already open" if open_task is not None else "it has just run"
    return refuse(f"start of {spec.name}: {why} and the message does not ask for it again")


def start_values_said(turn: Turn, effect: TaskOpened) -> Verdict | None:
    """A new task the message does not name: refused when none or most of its values were not said —
    unless the user asked for it in their last message, which nothing acted on."""
    spec = turn.catalog.tasks[effect.name]
    slots = dict(effect.given)
    given, grounded = said_values(turn, spec, slots, {})
    if slots and (not grounded or grounded * 2 < given):
        late = _said_last_message(turn, spec, slots)
        if late is not None and late[1] and late[1] * 2 >= late[0]:
            return admit(TaskOpened(effect.task_id, effect.name, effect.label, effect.parent_id, effect.source,
                                    effect.given, late=True),
                         Noted(f"start {spec.name}: asked for in the user's last message"))
    if slots and not grounded:  # values for slots it does not even have count too
        return refuse(f"start of {spec.name}: none of its values is in the message, nor the task's name")
    if grounded * 2 < given:  # "home" -> "work" on a message that only says "Saturday"
        return refuse(f"start of {spec.name}: most of its values are not in the message, nor the task's name")
    return None


def start_not_small_talk(turn: Turn, effect: TaskOpened) -> Verdict | None:
    """A new task with no value, on small talk, or one that would run at once (a read-only enquiry on
    "你好") unless the message asks about it."""
    ev = turn.evidence
    spec = turn.catalog.tasks[effect.name]
    runs_at_once = not spec.confirm and not any(s.required for s in spec.slots.values())
    if runs_at_once and asks(ev.raw) and asks_about_task(spec, ev.message) and not is_social(ev.raw):
        runs_at_once = False  # "顺便问下我卡里还剩多少钱": a question about the enquiry is asking for it
    if not effect.given and (runs_at_once or is_social(ev.raw) or noise_user_signal(ev.raw, "") in ("social", "empty")):
        why = "it would run at once" if runs_at_once else "the message is small talk"
        return refuse(f"start of {spec.name}: {why}, and the message neither names it nor gives a value")
    if not effect.given and not any(requests_in(c) for c in clauses(ev.raw)):
        return refuse(f"start of {spec.name}: the message neither names it, gives it a value nor asks for anything")
    return None


# ---------------------------------------------------------------- take-backs, cancel, reset

def rollback_said(turn: Turn, effect: SlotRolledBack) -> Verdict | None:
    """A rollback the message asks for: it says "back" (还是原来的, 改回去, undo), names the value it goes
    back to, or names the slot — but never while it states the slot's *current* value and not the
    previous one ("还是五个人" after 4 -> 5 keeps five: 还是 is "still"). Back to *empty* only undoes a
    value given last turn or this one: "人数还是按原来的吧" after a change that was never applied must not
    empty a value the user gave long ago."""
    ev = turn.evidence
    if ev is None:
        return None
    task = _task(turn, effect.task_id)
    slot = effect.slot
    previous = task["history"][slot][-1]
    no = refuse(f"{slot}: the message does not take this slot back")
    task_spec = turn.spec(task)
    spec = task_spec.slots[slot]
    if previous is None and not turn.writes.changed_lately(task, slot):
        return no
    common = common_words(task_spec, slot)
    current = task["slots"].get(slot)
    said_previous = previous is not None and value_grounded(spec, previous, ev, recent=False, common=common)
    said_current = current is not None and current != previous and spec.type != "boolean" \
        and value_grounded(spec, current, ev, recent=False, common=common)
    if said_current and not said_previous:
        return no
    return None if slot_touched(spec, ev.message) or revert_said(ev) or said_previous else no


def cancel_said(turn: Turn, effect: TaskRemoved) -> Verdict | None:
    """A cancellation: the message drops something."""
    if turn.evidence is None or cancel_grounded(turn.evidence, turn.spec(_task(turn, effect.task_id))):
        return None
    return refuse("the message does not drop a task")


def reset_said(turn: Turn, effect: StackCleared) -> Verdict | None:
    """A reset: the message asks to start over."""
    return None if turn.evidence is None or reset_grounded(turn.evidence) else \
        refuse("the message does not ask to start over")


# ---------------------------------------------------------------- a yes

def yes_beside_refused_change(turn: Turn, effect: Confirmed | HeldAnswered) -> Verdict | None:
    """"换一家吧，行": the yes is not to what was shown when a change in the same message was refused (a bare
    "没错，就这么订" is, whatever the model added)."""
    if turn.evidence is not None and turn.log.unapplied and not only_yes(turn.evidence.raw):
        return refuse("refused: a change in the same message was not applied, so the values shown are not what "
                      "the user asked for", grounding=False)
    return None


def yes_said(turn: Turn, effect: Confirmed | HeldAnswered) -> Verdict | None:
    """A yes: the message says so. A message that asks instead is answered; the confirmation stays pending."""
    if turn.evidence is None or confirm_grounded(turn.evidence):
        return None
    faq = (FaqAsked(turn.said, note="faq (the message asks)"),) \
        if asks_something(turn.evidence) and turn.log.faq is None else ()
    return refuse("the message does not say yes", *faq)


def required_slots_filled(turn: Turn, effect: Confirmed) -> Verdict | None:
    """The guard: whatever the model says, nothing runs with a required slot empty."""
    task = _task(turn, effect.task_id)
    missing = missing_slots(task, turn.spec(task))
    return refuse(f"refused: required slot {missing[0]} is empty", notice("guard"), grounding=False) if missing \
        else None


def something_shown(turn: Turn, effect: Confirmed) -> Verdict | None:
    """A yes runs only what a confirmation question showed, unchanged this turn."""
    task = _task(turn, effect.task_id)
    if task["stage"] != Stage.CONFIRMING or turn.writes.changed_in(task) \
            or any(turn.writes.changed_in(sub) for sub in turn.stack.waiting_under(task)):
        return refuse("nothing has been shown for confirmation yet", grounding=False)
    return None


def shown_unchanged(turn: Turn, effect: Confirmed) -> Verdict | None:
    """The values are the ones the confirmation question showed (dskit.state.integrity); else shown again."""
    task = _task(turn, effect.task_id)
    if task.get("shown") != shown_digest(task, turn.stack.waiting_under(task)):
        return refuse("refused: the values are not the ones the confirmation question showed; they are shown again",
                      grounding=False)
    return None


def held_as_shown(turn: Turn, effect: HeldAnswered) -> Verdict | None:
    """A yes to held values stores only those the check question showed."""
    if not effect.accepted:
        return None
    task = _task(turn, effect.task_id)
    held = turn.before.held[effect.task_id]
    if task.get("shown") != shown_digest(task, [], held):
        return refuse("held values are not the ones the check question showed", grounding=False,
                      item=short_text({"task_id": task["id"], "slots": held}))
    return None


def _yes_only(rule):
    """A rule about a yes, applied to a held check only when the user answers yes to it."""
    def applies(turn: Turn, effect: HeldAnswered) -> Verdict | None:
        return rule(turn, effect) if effect.accepted else None
    applies.__name__, applies.__doc__ = rule.__name__, rule.__doc__
    return applies


def _with_evidence(rule):
    """A rule about the user's words: with no evidence (replaying stored commands) it has nothing to say."""
    def applies(turn: Turn, effect: Effect) -> Verdict | None:
        return None if turn.evidence is None else rule(turn, effect)
    applies.__name__, applies.__doc__ = rule.__name__, rule.__doc__
    return applies


# ---------------------------------------------------------------- the rules, in order

RULES: dict[type, tuple] = {
    SlotSet: (checked_by_user, hour_in_users_part_of_day, value_unchanged, _with_evidence(deletion_named), question_is_not_value,
              month_is_a_month, asked_about_not_wanted,
              description_is_not_name, request_is_not_name, value_of_another_slot, name_of_another_task,
              _with_evidence(one_count_of_several), _with_evidence(value_said), _with_evidence(user_value_instead)),
    TaskOpened: (_with_evidence(start_not_dropped), _with_evidence(start_requested), _with_evidence(start_named),
                 _with_evidence(start_asked_again),
                 _with_evidence(start_values_said), _with_evidence(start_not_small_talk)),
    TaskFocused: (_with_evidence(start_not_dropped), _with_evidence(start_named), _with_evidence(start_asked_again)),
    SlotRolledBack: (rollback_said,),
    TaskRemoved: (cancel_said,),
    StackCleared: (reset_said,),
    Confirmed: (yes_beside_refused_change, yes_said, required_slots_filled, something_shown, shown_unchanged),
    HeldAnswered: (_yes_only(yes_beside_refused_change), _yes_only(yes_said), held_as_shown),
}


def rule_names() -> dict[str, list[str]]:
    """The rules by the kind of effect they judge, in order (docs/grounding.md lists the same)."""
    return {kind.__name__: [rule.__name__ for rule in rules] for kind, rules in RULES.items()}


__all__ = ["Verdict", "judge", "RULES", "rule_names", "admit", "refuse", "read", "clarify", "value_readings",
           "shared_words", "words_form", "as_clock", "said_values", "offered_value", "RECENT_EXECUTION_TURNS"]
