"""CrossWOZ and RiSAWOZ through a real model: ``dskit replay crosswoz|risawoz PATH --from llm``.

Each user turn goes through the understanding prompt the fast Chatflow sends (``context_node``:
instructions, the catalog, the state, the summary and the recent turns) with the dialogue's own
history — user and system utterances, kept by ``history_node`` as the Chatflow keeps them. The model's
commands are folded by the engine (``step``), grounded in the user's message and their recent ones as
the Chatflow's state node does, and the engine's slots are scored against the turn's gold state, as in
the other modes.

- The catalog is the data set's schema (:func:`.driver.build_catalog`) with a label and a description
  for every task and slot, so the model knows what each slot means.
- ``teacher_forcing``: each turn starts from the previous turn's gold state (CrossWOZ: the previous
  system turn's ``sys_state``, as the paper's rule-DST evaluation does; RiSAWOZ: the previous turn's
  belief state), sent as an unscored sync step; without it the engine's own state carries on.
- A model that fails, times out, or answers something unreadable on a turn counts as an error and a
  wrong turn (the state stays as it was); the run goes on. ``confirm``/``deny`` commands are not
  applied: tracking states never confirms (a confirmed domain would execute and leave the tracked
  state); they are counted.
- ``noise``: user turns perturbed with a seeded generator (:func:`perturb`): ``typo`` (two characters
  swapped, one doubled), ``turnback`` (a change of mind inserted and taken back), ``filler`` (filler
  sentences around the message).
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from dskit.surfaces.nodes import context_node, history_node
from dskit.surfaces.turn_inputs import turn_inputs
from dskit.turn.commands import Confirm, Deny
from dskit.turn.understanding import parse_understanding

from .driver import EngineDriver, State, diff
from .score import ReplayResult, Scorer, normalize

NOISES = ("typo", "turnback", "filler")

CROSSWOZ_TASKS = {
    "景点": "找旅游景点：按名称、门票、游玩时间、评分或周边设施筛选",
    "餐馆": "找餐馆：按名称、推荐菜、人均消费、评分或周边设施筛选",
    "酒店": "找酒店：按名称、类型、设施、价格、评分或周边设施筛选",
    "地铁": "查地铁路线：出发地和目的地",
    "出租": "叫出租车：出发地和目的地",
}
CROSSWOZ_SLOTS = {
    "名称": "用户指定或选定的那一家的名称",
    "门票": "用户对门票价格的要求",
    "游玩时间": "用户对游玩时长的要求",
    "评分": "用户对评分的要求",
    "周边景点": "要求附近有的景点名称",
    "周边餐馆": "要求附近有的餐馆名称",
    "周边酒店": "要求附近有的酒店名称",
    "推荐菜": "用户想吃的菜，多个用空格分隔",
    "人均消费": "用户对人均消费的要求",
    "酒店类型": "用户要求的酒店类型档次",
    "酒店设施": "用户要求的酒店设施，多个用空格分隔",
    "价格": "用户对每晚价格的要求",
    "出发地": "出发的地点",
    "目的地": "要去的地点",
}

# The data set's own spelling of a rating requirement: its user goals say "4.5分以上" where the user says
# "评分是4.5分的" (5分 is the top and stays as it is). Aliases, so the catalog maps the user's spelling
# (and a model's faithful copy of it) to the data set's; the prompt does not show them (catalog_compact).
CROSSWOZ_ALIASES = {"评分": {f"{n}分": f"{n}分以上" for n in ("3", "3.5", "4", "4.5")}}


def describe_catalog(catalog: dict[str, Any], task_names: dict[str, str], slot_names: dict[str, dict[str, str]],
                     task_text: dict[str, str] | None = None, slot_text: dict[str, str] | None = None,
                     slot_aliases: dict[str, dict[str, str]] | None = None) -> dict:
    """The data set's catalog with labels, descriptions and aliases for the model (names as the data set
    has them)."""
    for domain, task in task_names.items():
        spec = catalog["tasks"][task]
        spec["label"] = domain
        spec["description"] = (task_text or {}).get(domain) or f"{domain}相关的需求"
        for slot, name in slot_names[domain].items():
            spec["slots"][name]["label"] = slot
            spec["slots"][name]["description"] = (slot_text or {}).get(slot) or f"用户对{domain}的{slot}的要求"
            if (slot_aliases or {}).get(slot):
                spec["slots"][name]["aliases"] = dict(slot_aliases[slot])
    return catalog


# --------------------------------------------------------------------------------------------------
# Noise
# --------------------------------------------------------------------------------------------------

_FILLERS = ("嗯，那个，", "我想想啊，", "不好意思打扰一下，", "麻烦问一下，")
_TAILS = ("谢谢啊。", "麻烦你了。", "就这些。")
_TURNBACK = ("哦不对，换一个吧……算了算了，还是按我刚才说的来。", "等等，我改一下……不，还是刚才那样就行。")


def perturb(text: str, kind: str, rng: random.Random) -> str:
    """A user turn with noise that must not change the state the turn asks for."""
    if kind == "typo":
        chars = list(text)
        positions = [i for i, c in enumerate(chars[:-1]) if not c.isdigit() and not chars[i + 1].isdigit()
                     and c.strip() and chars[i + 1].strip()]
        if positions:
            i = rng.choice(positions)
            chars[i], chars[i + 1] = chars[i + 1], chars[i]
        letters = [i for i, c in enumerate(chars) if c.strip() and not c.isdigit()]
        if letters:
            j = rng.choice(letters)
            chars.insert(j, chars[j])
        return "".join(chars)
    if kind == "turnback":
        return text.rstrip("。.!！") + "。" + rng.choice(_TURNBACK)
    if kind == "filler":
        return rng.choice(_FILLERS) + text + rng.choice(_TAILS)
    raise ValueError(f"unknown noise {kind!r}; expected one of {', '.join(NOISES)}")


# --------------------------------------------------------------------------------------------------
# The model-driven replay
# --------------------------------------------------------------------------------------------------


@dataclass
class LLMStats:
    calls: int = 0
    errors: int = 0  # failed calls + unreadable answers: each a wrong turn
    failed_calls: int = 0
    not_recorded: int = 0  # replaying a cassette that lacks the request (it must be re-recorded)
    unreadable: int = 0
    ignored_confirms: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latencies: list[float] = field(default_factory=list)
    error_examples: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        lat = sorted(self.latencies)

        def pct(q: int) -> float | None:
            if not lat:
                return None
            return round(lat[min(len(lat) - 1, int(round(q / 100 * (len(lat) - 1))))], 3)

        return {"llm_calls": self.calls, "errors": self.errors, "failed_calls": self.failed_calls,
                "not_recorded": self.not_recorded,
                "unreadable": self.unreadable,
                "ignored_confirms": self.ignored_confirms,
                "prompt_tokens_per_turn": round(self.prompt_tokens / self.calls, 1) if self.calls else None,
                "completion_tokens_per_turn": round(self.completion_tokens / self.calls, 1) if self.calls else None,
                "latency_p50": pct(50), "latency_p95": pct(95),
                "latency_mean": round(statistics.fmean(lat), 3) if lat else None}


class LLMTracker:
    """Runs one dialogue's turns through the model and the engine."""

    def __init__(self, driver: EngineDriver, catalog_json: str, client: Any, stats: LLMStats,
                 params: dict[str, Any]) -> None:
        self.driver = driver
        self.catalog_json = catalog_json
        self.client = client
        self.stats = stats
        self.params = params
        self.history = ""
        self.summary = ""

    def reset(self) -> None:
        self.driver.reset()
        self.history = ""
        self.summary = ""

    def sync(self, gold: State) -> None:
        """Teacher forcing: put the previous gold state in place (an unscored engine step)."""
        changes = diff(self.driver.slots(), gold)
        if changes:
            self.driver.apply(changes)

    def turn(self, user: str, system: str) -> None:
        """One user turn: prompt -> model -> engine; then the system's reply joins the history."""
        from dskit.tooling.llm import LLMError  # noqa: PLC0415
        from dskit.tooling.llm.understand import understand  # noqa: PLC0415

        context = context_node(query=user, sys_context_str=self.driver.state_str, history=self.history,
                               summary=self.summary, task_catalog=self.catalog_json)
        answer = None
        try:  # an answer cut at max_tokens comes back like any other: the Chatflow's LLM node passes it on
            answer = understand(self.client, context, self.params)
        except LLMError as error:
            self.stats.errors += 1
            self.stats.failed_calls += 1
            self.stats.not_recorded += error.kind == "not_recorded"
            self._example(str(error))
        if answer is not None:
            self.stats.calls += 1
            self.stats.prompt_tokens += answer.prompt_tokens
            self.stats.completion_tokens += answer.completion_tokens
            self.stats.latencies.append(answer.latency)
            parsed = parse_understanding(answer.text, self.driver.catalog)
            if not parsed["usable"]:
                self.stats.errors += 1
                self.stats.unreadable += 1
                self._example(f"unreadable answer: {answer.text[:100]!r}")
            else:
                commands = [c.wire() for c in parsed["commands"] if not isinstance(c, (Confirm, Deny))]
                self.stats.ignored_confirms += len(parsed["commands"]) - len(commands)
                inputs = turn_inputs(user, self.history)  # as the Chatflow's state node builds them
                self.driver.apply_understanding({"rewritten_query": parsed["rewritten_query"], "commands": commands},
                                                query=inputs.query, recent=inputs.recent, offered=inputs.offered)
        kept = history_node(old_history=self.history, summary=self.summary, user_query=user, answer=system)
        self.history, self.summary = kept["history"], kept["summary"]

    def _example(self, text: str) -> None:
        if len(self.stats.error_examples) < 5:
            self.stats.error_examples.append(" ".join(text.split())[:200])


Turn = tuple[str, str, State, State | None]  # user text, system text, gold to score, gold to start from


def replay_llm(dataset: str, dialogues: Iterable[tuple[str, list[Turn]]], schema: dict[str, list[str]], client: Any,
               *, teacher_forcing: bool, task_text: dict[str, str] | None = None,
               slot_text: dict[str, str] | None = None, slot_aliases: dict[str, dict[str, str]] | None = None,
               noise: str | None = None, seed: int = 0,
               progress: Callable[[], None] | None = None) -> ReplayResult:
    """Score the model + engine on ``dialogues`` (each a list of :data:`Turn`)."""
    import json  # noqa: PLC0415

    from dskit.tooling.llm.understand import understand_parameters  # noqa: PLC0415

    driver = EngineDriver(schema)
    catalog = describe_catalog(driver.catalog_data, driver.task_names, driver.slot_names, task_text, slot_text,
                               slot_aliases)
    driver.set_catalog(catalog)
    stats = LLMStats()
    tracker = LLMTracker(driver, json.dumps(catalog, ensure_ascii=False), client, stats, understand_parameters())
    items = list(dialogues)
    mode = "llm, teacher-forced" if teacher_forcing else "llm, cumulative"
    if noise:
        mode += f", noise={noise} seed={seed}"
    result = ReplayResult(dataset=dataset, mode=mode, dialogues=len(items))
    scorer = Scorer(result, schema)
    rng = random.Random(seed)
    started = time.perf_counter()
    for did, turns in items:
        tracker.reset()
        previous: State = {}  # the gold state before this turn: the previous turn's, or the forced start
        for number, (user, system, gold, start) in enumerate(turns):
            if teacher_forcing and start is not None:
                tracker.sync(normalize(start))
            if teacher_forcing:
                previous = normalize(start) if start is not None else {}
            before = normalize(driver.slots())
            tracker.turn(perturb(user, noise, rng) if noise else user, system)
            scorer.add(did, number, normalize(driver.slots()), normalize(gold), previous=previous, before=before,
                       nothing=previous if teacher_forcing else {})
            previous = normalize(gold)
            if progress is not None:
                progress()
    result.seconds = time.perf_counter() - started
    result.engine_steps = driver.steps
    result.anomalies = dict(driver.anomalies)
    result.anomaly_examples = {**driver.examples, **({"model errors": stats.error_examples}
                                                     if stats.error_examples else {})}
    result.llm = stats.summary()
    return result
