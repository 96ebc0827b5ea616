"""The engine backs up the model on what it can see for itself.

A small model leaves things out: it answered "13800138000" — right after being asked for the phone
number — with no command, and "还是七点吧" with none, so the user had to say it again. When the model
makes no progress on a message (no command, nothing usable, or only small talk), the engine fills:

- **the slot asked last turn**, when the message is, or clearly holds, exactly one valid value of its
  kind: a value matching the slot's pattern (a phone number), a count (an integer or number slot), a
  clock time (a slot whose pattern takes HH:MM), a date (one that takes YYYY-MM-DD), an option or alias
  of its enum, a bare yes/no for a yes/no slot;
- **a task's only time slot**, when the message names exactly one clock time ("还是七点吧"), and the
  slot changed last turn when the message only takes it back ("还是原来的吧");
- **a task's only date slot and only slot counting people**, from the one date and count said in a
  message that changes something and names no other task ("Make it Saturday at 6pm instead, for three").

It also starts over on a plain "全部重新来吧", cancels a task the message names and stops ("宽带先不装了"),
and — when the model did write to a task — fills an empty enum slot of it with the one option the user
named and the model left out, or the yes or no it gave a yes/no slot by name (:func:`options_left_out`),
and shifts its time when the message says "half an hour later" and the model left the time as it was
(:func:`time_left_out`); a task's only time slot takes such a shift too when the model said nothing; and
the slot asked last turn takes the one value of its form (a pattern's match, an option) the message holds
when the model acted on the message but left that answer out (:func:`asked_left_out`); a task the model
or the engine opened takes the one date and month the message states for its only date and month slot
(:func:`forms_left_out`, :func:`_plain_request`).

Never free text (a name, an address: only the model reads those), never a slot nobody asked (besides
those single slots of a kind), never over a value the model set, never from a question or a refusal.
Beyond values, the engine answers what it can tell for itself when the model said nothing: a question is
answered as an FAQ (the pending question waits) — a greeting asked as a question ("在吗") gets small
talk instead —, a plain no to the confirmation question the user saw
is a deny, a message that is nothing but a yes to that question is a confirm (every check a model's
confirm passes still applies: the values shown, the guard), a request for a person is a handoff (a question only when the model's answer was readable
and was not small talk: see :func:`backup_fill`). Each is logged as ``backup …`` in the decision's
``applied`` and the timeline.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from ..catalog.catalog import SlotSpec, TaskSpec
from .commands import CancelTask, Chitchat, Confirm, Deny, Faq, FillSlot, Handoff, Reset, RollbackSlot, StartTask, run
from ..rules.cues import (DOING_ZH, asks, asks_for_action, asks_for_human, clauses, is_question, is_social, negated_at,
                   only_yes, requests_in, says_cancel_clause, says_no, says_refusal, says_reset, says_revert)
from ..rules.grounding import (refuses_doing, bare_answer, bool_said, common_words, counts_people, dates_in, fold, numbers_in, one_shift_said,
                        same_half_day, shifted_times, slot_touched, task_mentioned, task_words, times_in)
from ..rules.matching import exact_match, segments, words_match
from ..base.messages import MESSAGES
from ..rules.noise import noise_user_signal
from ..rules.slot_shapes import date_said, date_slots, forms_said, is_form, not_a_month, pattern_takes, time_slots
from .effects import TaskOpened
from .turn import Turn

_TOKEN = re.compile(r"[a-z0-9]+(?:[-_.][a-z0-9]+)*|\d+")


def _one(found: set) -> Any:
    return next(iter(found)) if len(found) == 1 else None


def _options_named(spec: SlotSpec, raw: str) -> dict[str, Any]:
    """The words of an enum slot's options and aliases the message names -> the option each stands for;
    never a word that heads the name of a place ("大巴车站", "高铁新城" name no mode of transport)."""
    found = {}
    for word, target in [(str(o), o) for o in spec.enum] + [(str(a), t) for a, t in spec.aliases.items()]:
        folded = "".join(segments(word))
        if folded and (words_match(word, raw) if folded.isascii() else exact_match(folded, raw, word, places=True)):
            found[word] = target
    return found


def _option_in(spec: SlotSpec, raw: str) -> Any:
    """The one option of an enum slot the message names (by its text or an alias), else None."""
    return _one(set(_options_named(spec, raw).values()))


def said_option(spec: SlotSpec, raw: str, held: list[str]) -> Any:
    """The one option the message names for an enum slot, said plainly: each word naming it stands in the
    message as written and is not negated ("不坐高铁"), nor part of a value ``held`` by another slot
    ("上海火车站" is the origin, not the train). None otherwise."""
    named = _options_named(spec, raw)
    option = _one(set(named.values()))
    if option is None:
        return None
    for word in named:
        lowered = word.lower()
        start = raw.find(lowered)
        if start < 0 or negated_at(raw, start, start + len(lowered)) or any(lowered in h.lower() for h in held):
            return None
    return option


def said_yes_no(task: TaskSpec, spec: SlotSpec, raw: str, held: list[str]) -> bool | None:
    """The yes or no the message gives a yes/no slot it names by its whole label or name ("安静一点的"
    for 安静, "no private room"): :func:`dskit.rules.grounding.bool_said` (un-negated, negated; never a question,
    never "无所谓"), and only when the word is not part of a value ``held`` by another slot (a restaurant
    called "安静小馆" is not a wish for quiet). Pieces of a longer label ("运动" of "高风险运动确认") do
    not count here: the model is not backed up on a guess."""
    words = [w for w in (spec.label.lower(), spec.name.replace("_", " ").lower(),
                         *(str(a).lower() for a, target in spec.aliases.items() if target is True)) if w]
    named = [w for w in words if (words_match(w, raw) if w.isascii() else w in raw)]
    if not named or any(w in h.lower() for w in named for h in held):
        return None
    return bool_said(spec, raw, common_words(task, spec.name))


def _left_out(task: TaskSpec, spec: SlotSpec, raw: str, held: list[str]) -> Any:
    """The value the message plainly gives an empty slot of a kind the engine reads itself (an option,
    a yes/no), else None."""
    if spec.enum:
        return said_option(spec, raw, held)
    if spec.type == "boolean":
        return said_yes_no(task, spec, raw, held)
    return None


def options_left_out(turn: Turn) -> bool:
    """The model filled a task this turn and left out an option or a yes/no the user gave one of its
    other slots: "我想从上海坐高铁去南京" started the route with its origin and destination and no mode,
    while 高铁 is an alias of the mode's 火车; "两个人安静一点的，时间改成七点吧" changed the people and the
    time and left out 安静 (a small model leaves such words out). An empty enum slot of a task the model
    wrote to in this message takes the one option the message names for it (:func:`said_option`), an
    empty yes/no slot the answer the message gives it by name (:func:`said_yes_no`); never from a
    question, never over a value, never for a task the model did not write to; True when one was filled
    (logged as ``backup``)."""
    ev = turn.evidence
    if ev is None or not turn.writes.changed:
        return False
    candidates = []  # (task, slot name, spec): empty enum or yes/no slots with a word of theirs in the message
    for task_id, names in list(turn.writes.changed.items()):
        task = turn.stack.find(task_id)
        if task is None or not names:
            continue
        for name, spec in turn.spec(task).slots.items():
            words = (*spec.enum, *spec.aliases) if spec.enum else (spec.label, spec.name.replace("_", " "),
                                                                   *spec.aliases) if spec.type == "boolean" else ()
            if name not in task["slots"] and name not in names and any(
                    w and str(w).lower() in ev.raw for w in words):
                candidates.append((task, name, spec))
    if not candidates or asks(ev.raw):
        return False
    filled = False
    for task, name, spec in candidates:
        value = _left_out(turn.spec(task), spec, ev.raw, [str(v) for v in task["slots"].values()])
        filled = value is not None and _fill(turn, task, name, value) or filled
    return filled


def forms_left_out(turn: Turn) -> bool:
    """A task the model opened on this message takes the one date and the one month the message states for
    its only date and month slot, when the model left them empty (:func:`dskit.rules.slot_shapes.forms_said`):
    "上个月话费多少" opened the enquiry with no month, which would have answered for this month. Read by their
    form, not negated, never over a value nor for a slot the model gave a value of its own (refused or not),
    also from a question (the model opened the task on it, so the question asks for it); True when one was
    filled (logged as ``backup``)."""
    ev = turn.evidence
    opened = [e for e in turn.log.of(TaskOpened) if e.source != "engine"] if ev is not None else []
    filled = False
    for effect in opened:
        task, given = turn.stack.find(effect.task_id), dict(effect.given)
        for name, value in (forms_said(turn.spec(task), ev) if task is not None else {}).items():
            # a slot the model gave a value of its own ("工作日" for the date) was not left out: never second-guessed
            # ("最近一个月" for the month is no month: no value of that slot, so the month was left out)
            mine = name in given and not not_a_month(turn.spec(task), name, given[name])
            filled = name not in task["slots"] and not mine and _fill(turn, task, name, value) or filled
    return filled


def time_left_out(turn: Turn) -> bool:
    """The model changed a task this turn and left its time as it was, although the message shifts it:
    "Actually make it eight of us, and half an hour later" set the people only. The one task the model
    wrote to, whose only time slot holds a value the model did not touch, takes that value shifted by the
    one shift the message states plainly (:func:`one_shift_said`: one duration, one direction, not
    negated), when the message names no clock time and asks nothing; True when it was filled (logged as
    ``backup``)."""
    ev = turn.evidence
    if ev is None or len(turn.writes.changed) != 1 or not one_shift_said(ev.raw) or asks(ev.raw) or times_in(ev.raw):
        return False  # the shift first: most messages state none, and the other checks need not compile
    task_id, names = next(iter(turn.writes.changed.items()))
    task = turn.stack.find(task_id)
    clocks = time_slots(turn.spec(task)) if task is not None and names else []
    if len(clocks) != 1 or clocks[0] in names or clocks[0] not in task["slots"]:
        return False
    value = _one(shifted_times(task["slots"][clocks[0]], ev.raw))
    return value is not None and _fill(turn, task, clocks[0], value)


def value_in_message(spec: SlotSpec, raw: str, old: Any, reference: Any) -> Any:
    """The one value of the slot's kind a message holds (None: none, several, or free text)."""
    if spec.type == "boolean":
        return bare_answer(raw)
    if spec.enum:
        return _option_in(spec, raw)
    if spec.type in ("integer", "number"):
        return _one(numbers_in(raw, counts=True, people=counts_people(spec)))
    if spec.type != "string" or not is_form(spec.pattern):
        return None  # free text, even one a pattern checks (an address naming a road or a place): never guessed
    if pattern_takes(spec.pattern, "19:00"):
        times = {same_half_day(t, old, raw) for t in times_in(raw)}
        if times:
            return _one(times)
        return _one(shifted_times(old, raw)) if one_shift_said(raw) else None  # "提前一小时吧"
    if pattern_takes(spec.pattern, "2026-12-02"):
        return _one({d for d in dates_in(raw, reference) if len(d) == 10})
    return _one({t for t in _TOKEN.findall(raw) if pattern_takes(spec.pattern, t)})


def asked_left_out(turn: Turn) -> bool:
    """The model acted on the message and left out the answer to the question asked last turn: "电话
    18657101234，顺便查下这个月话费" opened the bill enquiry and left the repair's phone empty. The slot asked
    last turn, still empty, takes the one value of its form the message holds — a match of its pattern (not a
    clock time or a date: those the message may say of anything) or one option of its enum —, only from a
    clause that asks nothing, and never a value the model gave another slot this turn; True when it was filled
    (logged as ``backup``)."""
    ev = turn.evidence
    if ev is None or not (turn.log.progress or turn.writes.changed):
        return False
    asked = _asked_empty(turn)
    if asked is None:
        return False
    task, name, spec = asked
    if not spec.enum and not (spec.type == "string" and not pattern_takes(spec.pattern, "19:00")
                              and not pattern_takes(spec.pattern, "2026-12-02") and is_form(spec.pattern)):
        return False
    given = {str(v).lower() for t in turn.stack.tasks for n, v in t["slots"].items()
             if n in turn.writes.changed.get(t["id"], ())}
    for clause in clauses(ev.raw):
        value = value_in_message(spec, clause, None, ev.reference)
        if value is not None and not is_question(clause) and str(value).lower() not in given:
            return _fill(turn, task, name, value)
    return False


def _fill(turn: Turn, task: dict, name: str, value: Any) -> bool:
    """The engine's reading of one value, judged by the same rules as the model's (logged as ``backup``)."""
    return run(turn, FillSlot(task["id"], name, value)) > 0


def _asked_empty(turn: Turn) -> tuple[dict, str, SlotSpec] | None:
    """The slot asked last turn — its task, name and spec — while it is still empty; None otherwise."""
    task_id, _, name = turn.before.asked.partition(".")
    task = turn.stack.find(task_id)
    if task is None or name not in turn.spec(task).slots or name in task["slots"]:
        return None
    return task, name, turn.spec(task).slots[name]


def _asked_slot(turn: Turn) -> bool:
    """The slot asked last turn, still empty, takes the one value of its kind the message holds (the
    model said nothing usable): "13800138000" right after the phone was asked."""
    asked = _asked_empty(turn)
    if asked is None:
        return False
    task, name, spec = asked
    if spec.type != "boolean" and says_no(turn.evidence.raw):
        return False
    value = value_in_message(spec, turn.evidence.raw, None, turn.evidence.reference)
    return value is not None and _fill(turn, task, name, value)


def _only_time_slot(turn: Turn) -> bool:
    task = turn.stack.top()
    clocks = time_slots(turn.spec(task)) if task is not None else []
    if len(clocks) != 1:
        return False
    raw = turn.evidence.raw
    value = value_in_message(turn.spec(task).slots[clocks[0]], raw, task["slots"].get(clocks[0]), None)
    return value is not None and _fill(turn, task, clocks[0], value)


def _names_another_task(turn: Turn, task: dict) -> bool:
    """Whether the message names a task of the catalog other than ``task``'s: "查一下周六北京天气" gives its
    date to the weather, not to the booking on top."""
    return any(name != task["name"] and task_mentioned(spec, turn.catalog, turn.evidence.message)
               for name, spec in turn.catalog.tasks.items())


def _only_date_or_count(turn: Turn) -> bool:
    """"Make it Saturday at 6pm instead, for three" with nothing usable from the model: the task on top
    takes the one date said for its only date slot and the one count of people for its only slot that
    counts people (the date as said, or worked out for a pattern) — only in a message that changes
    something ("改到", "换成", "instead": :func:`dskit.rules.noise.noise_user_signal`), never when it names
    another task ("查一下周六北京天气"), never a date said negated."""
    task = turn.stack.top()
    if task is None or noise_user_signal(turn.evidence.raw, "") != "correction" or _names_another_task(turn, task):
        return False
    spec, raw = turn.spec(task), turn.evidence.raw
    filled = False
    dates = date_slots(spec)
    if len(dates) == 1:
        value = date_said(spec, dates[0], turn.evidence)
        filled = value is not None and _fill(turn, task, dates[0], value)
    people = [n for n, slot in spec.slots.items() if counts_people(slot)]
    if len(people) == 1:
        value = _one(numbers_in(raw, counts=True, people=True))
        filled = value is not None and _fill(turn, task, people[0], value) or filled
    return filled


def _numbers_said(raw: str) -> bool:
    return bool(numbers_in(raw)) or bool(times_in(raw))


def _changed_last_turn(turn: Turn) -> list[str]:
    state = turn.state
    return [key for entry in state["timeline"] if isinstance(entry, dict) and entry.get("turn") == state["turn"] - 1
            for key in entry.get("changed") or []]


def _take_back(turn: Turn) -> bool:
    """"还是原来的吧" with no command: the slot the message names, else the one slot changed last turn,
    goes back to its previous value (the rollback's own rule judges it)."""
    task = turn.stack.top()
    raw = turn.evidence.raw
    if task is None or not says_revert(raw) or _numbers_said(raw):
        return False
    spec = turn.spec(task)
    named = [n for n in task["history"] if n in spec.slots and task["history"][n] and slot_touched(
        spec.slots[n], turn.evidence.message, common_words(spec, n))]
    changed = [k.partition(".")[2] for k in _changed_last_turn(turn) if k.partition(".")[0] == task["id"]]
    changed = [n for n in changed if task["history"].get(n)]
    target = named if len(named) == 1 else changed if len(set(changed)) == 1 else []
    return bool(target) and run(turn, RollbackSlot(task["name"], target[0], source="engine")) > 0


def _start_over(turn: Turn) -> bool:
    """"等一下，全部重新来吧" with no command: the reset, when the message asks for nothing else
    (:func:`dskit.rules.cues.says_reset`)."""
    return bool(turn.stack.tasks) and says_reset(turn.evidence.raw) and run(turn, Reset(source="engine")) > 0


def _drop_task(turn: Turn, below: bool = False) -> bool:
    """"算了，他那边宽带先不装了" with no command: the open task the message names — or, naming none, refuses by
    its doing alone ("不用修了": :func:`_refused_by_doing`) — is cancelled, only by a
    clause that stops it ("不装了", "不订了", "cancel the booking"), never by a bare dismissal ("算了",
    "不用了谢谢": the model's reading of those stands), never by a question, and never a task the message
    does not name: a bare "不要" after "请问您的联系电话是？" refuses the question, not the task.

    ``below``: only a task other than the one on top — "路由器不要了" while the broadband order waits for its
    yes drops the router rental; it is no no to the order (:func:`_refusal` comes after)."""
    raw = turn.evidence.raw
    named = [t for t in turn.stack.tasks if task_mentioned(turn.spec(t), turn.catalog, turn.evidence.message)]
    refused = [] if named else _refused_by_doing(turn)  # the refusal is its own stopping clause
    named = named or refused
    task = named[-1] if len({t["name"] for t in named}) == 1 else None
    if task is None or below and task is turn.stack.top() or not (
            refused or says_cancel_clause(raw, task_words(turn.spec(task)))):
        return False
    return run(turn, CancelTask(task["name"], source="engine")) > 0


def _refused_by_doing(turn: Turn) -> list[dict]:
    """The open tasks a clause refuses by the doing of their label alone: "哦，现在又好了，不用修了" names the
    repair (修 of 故障报修) by nothing else (:func:`dskit.rules.grounding.refuses_doing`)."""
    return [t for t in turn.stack.tasks if refuses_doing(turn.spec(t), turn.evidence.raw)]


def _refusal(turn: Turn) -> bool:
    """A plain no to the confirmation question the user saw ("不对", "先别办", "no"): a deny. A hesitation
    ("我再想想", "wait") leaves the question pending."""
    task = turn.stack.top()
    raw = turn.evidence.raw
    if task is None or task["id"] not in turn.before.confirming or not says_refusal(raw):
        return False
    return run(turn, Deny(source="engine")) > 0


# The fixed words of the engine's own confirmation questions (dskit.base.messages), in every language, in the
# form the evidence holds the last reply (NFKC, lower case: "确认办理吗?").
_CONFIRM_WORDS = tuple(sorted({unicodedata.normalize("NFKC", part.strip()).lower() for table in MESSAGES.values()
                        for key in ("confirm", "confirm_resume", "confirm_none")
                        for part in re.split(r"\{[a-z_]+\}", table[key]) if len(part.strip()) >= 4}))


def _saw_confirmation(last_reply: str) -> bool:
    """Whether the assistant's last reply holds the engine's confirmation question: the state says one was
    due, but only the reply says the user saw it (an app may answer otherwise, and a replayed data set's
    replies are its own)."""
    return any(words in last_reply for words in _CONFIRM_WORDS)


def _assent(turn: Turn) -> bool:
    """A message that is nothing but a yes ("对，就这样", "Yes, that's right") to the confirmation question
    the user saw in the last reply: the confirm the model left out. It goes through the confirm command
    itself, so a yes to values other than the ones shown, or to a task with a required slot empty, still
    runs nothing; when that command refuses, nothing of it stays in the turn."""
    task = turn.stack.top()
    if task is None or task["id"] not in turn.before.confirming or not only_yes(turn.evidence.raw) \
            or not _saw_confirmation(turn.evidence.offered):
        return False
    return run(turn, Confirm(source="engine")) > 0


def _plain_request(turn: Turn) -> bool:
    """"我想订个餐厅", "can you book me a repair?" with no command (or only small talk): the one catalog task
    the message names and asks for (:func:`dskit.rules.cues.requests_in`) opens, as if the model had started it —
    judged by the start's own rules, with the one date and month the message states for its only date and
    month slot ("查一下我上个月的话费": the month, :func:`dskit.rules.slot_shapes.forms_said`). Opened rather
    than asked about: its first question (the first slot it needs) shows the user what opened, and "不用了"
    drops it."""
    ev = turn.evidence
    if not any(requests_in(clause) and (not is_question(clause) or asks_for_action(clause))
               for clause in clauses(ev.raw)):
        return False  # a question about something is answered, not taken for a task
    scores = {spec.name: 2 * _doing_said(spec, ev.raw) + _label_said(spec, turn.catalog, ev.message, ev.raw)
              for spec in turn.catalog.tasks.values() if turn.stack.named(spec.name) is None}
    best = max(scores.values(), default=0)
    named = [name for name, score in scores.items() if score == best]
    if best <= 0 or len(named) != 1:
        return False
    given = forms_said(turn.catalog.tasks[named[0]], ev)  # "查一下我上个月的话费": the month, read by its form
    return run(turn, StartTask(named[0], given, source="engine")) > 0


def _label_said(spec: TaskSpec, catalog: Any, folded: str, raw: str) -> bool:
    """Whether the message says the task's label, or a piece of it no other task's label has — two
    characters ("宽带" of 宽带办理), or for English a word of three letters or more ("fault" of Report a
    fault): its own words, not words its examples happen to share."""
    label = spec.label or spec.name.replace("_", " ")
    others = [t.label or t.name.replace("_", " ") for t in catalog.tasks.values() if t.name != spec.name]
    if fold(label) and fold(label) in folded:
        return True
    if label.isascii():
        taken = {w for other in others for w in re.findall(r"[a-z]{3,}", other.lower())}
        return any(words_match(w, raw) for w in re.findall(r"[a-z]{3,}", label.lower()) if w not in taken)
    taken = {fold(o)[i:i + 2] for o in others for i in range(len(fold(o)) - 1)}
    own = fold(label)
    return any(own[i:i + 2] in folded and own[i:i + 2] not in taken for i in range(len(own) - 1))


def names_task(turn: Turn, spec: TaskSpec) -> bool:
    """Whether the message names the task: its label or a piece of it no other task has, or its doing."""
    ev = turn.evidence
    return ev is not None and (_doing_said(spec, ev.raw) or _label_said(spec, turn.catalog, ev.message, ev.raw))


def _doing_said(spec: TaskSpec, raw: str) -> bool:
    """Whether the message says the doing of the task's label ("修" of 故障报修 in "约个师傅修宽带", "订" of 订餐
    in "订个位"): its verb names the task more surely than an object another task shares."""
    label = spec.label or ""
    return any(verb in label and verb in raw for verb in DOING_ZH)


def backup_fill(turn: Turn, readable: bool = True) -> bool:
    """Fill what the model left out (see the module's rules); True when the engine read something.

    ``readable``: the model's answer could be read. A question is answered as an FAQ only when the model
    read the message and said nothing of it (no command, or only refused ones): an unreadable answer is a
    failure the not-understood policy counts (rephrase, then a person), and small talk is the model's own
    reading of the message (during a question it counts as a failed attempt), so neither is overruled."""
    ev = turn.evidence
    if ev is None or turn.log.progress or turn.log.handoff or turn.writes.changed:
        return False
    if asks_for_human(ev.raw):
        return run(turn, Handoff("user_request", source="engine")) > 0
    if readable and _plain_request(turn):  # an unreadable answer is a failure the not-understood policy counts
        return True
    if asks(ev.raw):  # a question the model left unanswered is answered; nothing is filled from it
        if readable and turn.log.faq is None and not turn.log.chitchat and is_social(ev.raw):
            # "在吗", "有人吗": a greeting asked as a question, nothing to look up
            return run(turn, Chitchat(source="engine")) > 0
        if readable and turn.log.faq is None and not turn.log.chitchat:
            return run(turn, Faq(source="engine")) > 0
        return False
    if _drop_task(turn, below=True) or _refusal(turn) or _assent(turn) or _asked_slot(turn):
        return True
    kinds = [_only_time_slot(turn), _only_date_or_count(turn)]  # each kind the message holds, not the first
    return any(kinds) or _take_back(turn) or _start_over(turn) or _drop_task(turn)


__all__ = ["asked_left_out", "backup_fill", "forms_left_out", "names_task", "options_left_out", "time_left_out", "value_in_message"]
