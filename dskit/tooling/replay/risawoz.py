"""RiSAWOZ through the engine: replay each turn's ``turn_inform`` delta.

A RiSAWOZ turn's ``belief_state`` has the cumulative ``inform slot-values`` (``"domain-slot":
value``) and the turn's delta ``turn_inform``. The delta only adds or overwrites; it has no delete
marker. Replayed cumulatively on the engine's own state, every turn is right except where the gold
state drops a slot the user never retracted: in the 100-dialogue few-shot file, six turns drop
``火车-坐席`` or ``电视剧-制片国家/地区`` when the user starts a new search, and the stale value then
stays in the replayed state until the dialogue ends (17 turns in all).

``teacher_forcing=True`` starts each turn from the previous turn's gold state instead (a sync step
that is not scored), so only the six dropping turns themselves fail.
"""

from __future__ import annotations

import time

from .data import DataError, limited, read_json
from .driver import EngineDriver, State, diff
from .score import ReplayResult, Scorer, normalize


def load_risawoz(path: str) -> list[dict]:
    """The dialogues of a RiSAWOZ file (stanford-oval/dialogues format: a list of dialogues)."""
    data = read_json(path)
    if isinstance(data, dict):
        data = list(data.values())
    if not isinstance(data, list) or not all(isinstance(d, dict) and isinstance(d.get("dialogue"), list)
                                             for d in data):
        raise DataError(f"{path}: not RiSAWOZ dialogues (a list of objects with a 'dialogue' list)")
    return data


def split_key(key: str) -> tuple[str, str]:
    """``"火车-坐席"`` -> ``("火车", "坐席")``; the domain never contains '-'."""
    domain, _, slot = key.partition("-")
    return domain, slot


def flat_to_state(flat: dict | None) -> State:
    """``{"domain-slot": value}`` as a nested state (blank values kept for the caller to judge)."""
    state: State = {}
    for key, value in (flat or {}).items():
        domain, slot = split_key(str(key))
        state.setdefault(domain, {})[slot] = value
    return state


def _belief(turn: dict) -> dict:
    return turn.get("belief_state") or {}


def risawoz_schema(dialogues: list[dict]) -> dict[str, list[str]]:
    """Every domain and slot that the belief states mention, in order of appearance."""
    schema: dict[str, list[str]] = {}
    for dialogue in dialogues:
        for turn in dialogue["dialogue"]:
            for key in ("inform slot-values", "turn_inform"):
                for flat_key in _belief(turn).get(key) or {}:
                    domain, slot = split_key(str(flat_key))
                    known = schema.setdefault(domain, [])
                    if slot not in known:
                        known.append(slot)
    return schema


def replay_risawoz(path: str, teacher_forcing: bool = False, limit: int | None = None) -> ReplayResult:
    """Replay a RiSAWOZ file's ``turn_inform`` deltas through the engine and score them."""
    dialogues = limited(load_risawoz(path), limit)
    schema = risawoz_schema(dialogues)
    driver = EngineDriver(schema)
    mode = "turn-inform, teacher-forced" if teacher_forcing else "turn-inform"
    result = ReplayResult(dataset="risawoz", mode=mode, dialogues=len(dialogues))
    scorer = Scorer(result, schema)
    started = time.perf_counter()
    for dialogue in dialogues:
        driver.reset()
        gold: State = {}
        for number, turn in enumerate(dialogue["dialogue"]):
            if teacher_forcing:
                sync = diff(driver.slots(), normalize(gold))
                if sync:
                    driver.apply(sync)
            driver.apply(flat_to_state(_belief(turn).get("turn_inform")))
            gold = flat_to_state(_belief(turn).get("inform slot-values"))
            scorer.add(str(dialogue.get("dialogue_id", "")), turn.get("turn_id", number),
                       normalize(driver.slots()), normalize(gold))
    result.seconds = time.perf_counter() - started
    result.engine_steps = driver.steps
    result.anomalies = dict(driver.anomalies)
    result.anomaly_examples = driver.examples
    return result


def llm_turns(dialogue: dict) -> list[tuple[str, str, State, State | None]]:
    """(user text, system text, gold to score, previous gold to start from) per turn, for ``--from llm``."""
    turns: list[tuple[str, str, State, State | None]] = []
    previous: State | None = None
    for turn in dialogue["dialogue"]:
        gold = flat_to_state(_belief(turn).get("inform slot-values"))
        turns.append((str(turn.get("user_utterance") or ""), str(turn.get("system_utterance") or ""), gold, previous))
        previous = gold
    return turns


def replay_risawoz_llm(path: str, client: object, *, limit: int | None = None, teacher_forcing: bool = False,
                       noise: str | None = None, seed: int = 0, progress=None) -> ReplayResult:  # noqa: ANN001
    """RiSAWOZ through a model: each user turn understood by ``client`` (see :mod:`.llm`)."""
    from .llm import replay_llm

    dialogues = limited(load_risawoz(path), limit)
    return replay_llm("risawoz", [(str(d.get("dialogue_id", i)), llm_turns(d)) for i, d in enumerate(dialogues)],
                      risawoz_schema(dialogues), client, teacher_forcing=teacher_forcing, noise=noise, seed=seed,
                      progress=progress)
