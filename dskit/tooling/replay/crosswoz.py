"""CrossWOZ through the engine, two ways.

``gold-deltas``: each turn's commands are the differences between consecutive gold
``sys_state_init`` (additions, overwrites, deletions as ``null``), applied to the engine's *own*
previous state, never to gold. Every gold state must come out exactly: this checks the engine's
set/overwrite/delete semantics over ~4,200 real turns and five interleaved domains.

``user-acts``: a rule tracker turns the gold *user dialogue acts* into commands, following the
CrossWOZ paper's rule-based DST evaluation (thu-coai/CrossWOZ, ``convlab2/dst/rule/crosswoz``):
each turn starts from the previous system turn's gold ``sys_state`` (teacher forcing, sent to the
engine as a separate sync step that is not scored) and is compared with this turn's
``sys_state_init``. The rules:

- ``Select`` (domain D, value F): if F's 名称 is known, D's ``周边F`` becomes it (and when D is F
  itself, D's constraints are cleared first); Selects are applied before Informs;
- ``Inform`` of 名称 游玩时间 酒店类型 出发地 目的地 评分 门票 价格 人均消费: the value replaces the old one;
- ``Inform 推荐菜``: appended, space-separated; ``Inform 酒店设施-X = 是``: X appended to 酒店设施;
- everything else (Request, General, other slots) leaves the state alone.

The paper reports 71.33% joint accuracy for this method on its test set. The gap to 100% is what
user acts cannot know: the system relaxing constraints (a NoOffer drops them from ``sys_state_init``),
values the user confirms implicitly, and so on.
"""

from __future__ import annotations

import time

from .data import DataError, limited, read_json
from .driver import Changes, EngineDriver, State, diff, is_blank
from .score import ReplayResult, Scorer, normalize

MODES = ("gold-deltas", "user-acts")
DIRECT_SLOTS = ("名称", "游玩时间", "酒店类型", "出发地", "目的地", "评分", "门票", "价格", "人均消费")


def load_crosswoz(path: str) -> list[tuple[str, dict]]:
    """``(dialogue id, dialogue)`` pairs from a CrossWOZ file (a dict by id, or a list)."""
    data = read_json(path)
    if isinstance(data, dict):
        items = [(str(k), v) for k, v in data.items()]
    elif isinstance(data, list):
        items = [(str(i), v) for i, v in enumerate(data)]
    else:
        raise DataError(f"{path}: expected CrossWOZ dialogues (an object by id)")
    if not all(isinstance(d, dict) and isinstance(d.get("messages"), list) for _, d in items):
        raise DataError(f"{path}: not CrossWOZ dialogues (no 'messages' list)")
    return items


def crosswoz_schema(dialogues: list[tuple[str, dict]]) -> dict[str, list[str]]:
    """Domains and their slots, in the order the gold states list them (``selectedResults`` left out)."""
    schema: dict[str, list[str]] = {}
    for _, dialogue in dialogues:
        for message in dialogue["messages"]:
            for key in ("sys_state_init", "sys_state"):
                for domain, slots in (message.get(key) or {}).items():
                    known = schema.setdefault(domain, [])
                    known.extend(s for s in slots if s != "selectedResults" and s not in known)
    return schema


def raw_state(state: dict | None) -> State:
    """A gold state as the data has it (values unstripped), set slots only."""
    return {domain: {slot: value for slot, value in slots.items()
                     if slot != "selectedResults" and not is_blank(value)}
            for domain, slots in (state or {}).items() if isinstance(slots, dict)}


def _append(old: str | None, value: str) -> str:
    return f"{old} {value}" if old else value


def apply_user_acts(state: State, acts: list) -> State:
    """The rule tracker: the state after the user's dialogue acts (see the module docstring)."""
    work = {domain: dict(slots) for domain, slots in state.items()}
    for act in acts:
        if len(act) != 4 or act[0] != "Select":
            continue
        _, domain, _, source = act
        name = work.get(source, {}).get("名称")
        if name:
            if domain == source:
                work[domain] = {}
            work.setdefault(domain, {})[f"周边{source}"] = name
    for act in acts:
        if len(act) != 4 or act[0] != "Inform":
            continue
        _, domain, slot, value = act
        slots = work.setdefault(domain, {})
        if slot in DIRECT_SLOTS:
            if is_blank(value):
                slots.pop(slot, None)
            else:
                slots[slot] = value
        elif slot == "推荐菜" and not is_blank(value):
            slots[slot] = _append(slots.get(slot), value)
        elif slot.startswith("酒店设施-") and value == "是":
            slots["酒店设施"] = _append(slots.get("酒店设施"), slot.partition("-")[2])
    return {domain: slots for domain, slots in work.items() if slots}


def _system_turns(dialogue: dict) -> list[tuple[list, dict]]:
    """``(user acts, system message)`` per system turn, in order."""
    messages = dialogue["messages"]
    turns = []
    for i, message in enumerate(messages):
        if message.get("role") == "sys":
            user = messages[i - 1] if i > 0 and messages[i - 1].get("role") == "usr" else {}
            turns.append((user.get("dialog_act") or [], message))
    return turns


def _replay_gold_deltas(driver: EngineDriver, scorer: Scorer, did: str, dialogue: dict) -> None:
    previous: State = {}
    for turn, (_, message) in enumerate(_system_turns(dialogue)):
        gold = raw_state(message.get("sys_state_init"))
        driver.apply(diff(previous, gold))
        scorer.add(did, turn, normalize(driver.slots()), normalize(gold))
        previous = gold


def _replay_user_acts(driver: EngineDriver, scorer: Scorer, did: str, dialogue: dict) -> None:
    start: State = {}
    for turn, (acts, message) in enumerate(_system_turns(dialogue)):
        sync: Changes = diff(driver.slots(), normalize(start))
        if sync:
            driver.apply(sync)  # teacher forcing: not a scored turn
        target = apply_user_acts(driver.slots(), acts)
        driver.apply(diff(driver.slots(), target))
        scorer.add(did, turn, normalize(driver.slots()), normalize(message.get("sys_state_init")))
        start = raw_state(message.get("sys_state"))


def _whitespace_values(dialogues: list[tuple[str, dict]]) -> int:
    """Gold values with surrounding whitespace (compared stripped)."""
    count = 0
    for _, dialogue in dialogues:
        for message in dialogue["messages"]:
            for slots in (message.get("sys_state_init") or {}).values():
                count += sum(1 for s, v in slots.items()
                             if s != "selectedResults" and isinstance(v, str) and v.strip() and v != v.strip())
    return count


def replay_crosswoz(path: str, mode: str = "gold-deltas", limit: int | None = None) -> ReplayResult:
    """Replay a CrossWOZ file through the engine and score it (see the module docstring)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    dialogues = limited(load_crosswoz(path), limit)
    schema = crosswoz_schema(dialogues)
    driver = EngineDriver(schema)
    result = ReplayResult(dataset="crosswoz", mode=mode, dialogues=len(dialogues))
    scorer = Scorer(result, schema)
    replay = _replay_gold_deltas if mode == "gold-deltas" else _replay_user_acts
    started = time.perf_counter()
    for did, dialogue in dialogues:
        driver.reset()
        replay(driver, scorer, did, dialogue)
    result.seconds = time.perf_counter() - started
    result.engine_steps = driver.steps
    result.anomalies = dict(driver.anomalies)
    result.anomaly_examples = driver.examples
    result.notes["whitespace_values"] = _whitespace_values(dialogues)
    return result


def llm_turns(dialogue: dict) -> list[tuple[str, str, State, State | None]]:
    """(user text, system text, gold to score, previous gold to start from) per user turn, for
    ``--from llm``. The start is the previous system turn's ``sys_state`` (None on the first turn)."""
    messages = dialogue["messages"]
    turns: list[tuple[str, str, State, State | None]] = []
    previous: State | None = None
    for i, message in enumerate(messages):
        if message.get("role") != "sys":
            continue
        user = messages[i - 1] if i > 0 and messages[i - 1].get("role") == "usr" else {}
        turns.append((str(user.get("content") or ""), str(message.get("content") or ""),
                      raw_state(message.get("sys_state_init")), previous))
        previous = raw_state(message.get("sys_state"))
    return turns


def replay_crosswoz_llm(path: str, client: object, *, limit: int | None = None, teacher_forcing: bool = False,
                        noise: str | None = None, seed: int = 0, progress=None) -> ReplayResult:  # noqa: ANN001
    """CrossWOZ through a model: each user turn understood by ``client`` (see :mod:`.llm`)."""
    from .llm import CROSSWOZ_ALIASES, CROSSWOZ_SLOTS, CROSSWOZ_TASKS, replay_llm

    dialogues = limited(load_crosswoz(path), limit)
    return replay_llm("crosswoz", [(did, llm_turns(d)) for did, d in dialogues], crosswoz_schema(dialogues), client,
                      teacher_forcing=teacher_forcing, task_text=CROSSWOZ_TASKS, slot_text=CROSSWOZ_SLOTS,
                      slot_aliases=CROSSWOZ_ALIASES, noise=noise, seed=seed, progress=progress)
