"""dskit replay: CrossWOZ and RiSAWOZ dialogue states through the real engine (fixtures only)."""

from __future__ import annotations

import contextlib
import copy
import gzip
import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from dskit.catalog.catalog import NAME_RE, validate_catalog
from dskit.tooling.cli import main
from dskit.tooling.replay import replay_crosswoz, replay_risawoz
from dskit.tooling.replay.crosswoz import DIRECT_SLOTS, apply_user_acts, crosswoz_schema, load_crosswoz
from dskit.tooling.replay.data import DataError
from dskit.tooling.replay.driver import EngineDriver, build_catalog, diff, engine_name
from dskit.tooling.replay.risawoz import load_risawoz, risawoz_schema

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CROSSWOZ = FIXTURES / "crosswoz_val_sample.json"
RISAWOZ = FIXTURES / "risawoz_sample.json"


# ---------------------------------------------------------------- CrossWOZ, gold deltas


def test_gold_deltas_reproduce_every_gold_state() -> None:
    result = replay_crosswoz(str(CROSSWOZ), "gold-deltas")
    assert (result.dialogues, result.turns) == (12, 90)
    assert result.jga == 1.0
    assert result.slot_accuracy == 1.0
    assert result.anomalies == {}
    assert result.engine_steps == result.turns  # one engine turn per dialogue turn


def test_gold_deltas_exercise_additions_overwrites_and_deletions() -> None:
    """The fixture is only a good test if the deltas contain all three kinds of change."""
    kinds = {"add": 0, "overwrite": 0, "delete": 0}
    for _, dialogue in load_crosswoz(str(CROSSWOZ)):
        previous: dict = {}
        for message in dialogue["messages"]:
            if message["role"] != "sys":
                continue
            gold = {d: {s: v for s, v in slots.items() if s != "selectedResults" and v}
                    for d, slots in message["sys_state_init"].items()}
            for domain, changes in diff(previous, gold).items():
                for slot, value in changes.items():
                    kind = "delete" if value is None else "overwrite" if slot in previous.get(domain, {}) else "add"
                    kinds[kind] += 1
            previous = gold
    assert all(count >= 5 for count in kinds.values()), kinds


# ---------------------------------------------------------------- CrossWOZ, user acts


def _reference_user_acts(dialogues: list[tuple[str, dict]]) -> tuple[int, int]:
    """The CrossWOZ paper's rule-DST evaluation on plain dicts (no engine), values compared stripped.

    Written independently of dskit.tooling.replay so that the engine-driven figure is checked
    against the method itself: every slot of every domain starts empty, each system turn starts
    from the previous system turn's gold sys_state, and is compared with its sys_state_init.
    """
    schema = crosswoz_schema(dialogues)
    correct = total = 0
    for _, dialogue in dialogues:
        belief = {d: {s: "" for s in slots} for d, slots in schema.items()}
        messages = dialogue["messages"]
        for i, message in enumerate(messages):
            if message["role"] != "sys":
                continue
            if i > 2:
                for domain, slots in messages[i - 2]["sys_state"].items():
                    for slot, value in slots.items():
                        if slot != "selectedResults":
                            belief[domain][slot] = value
            acts = messages[i - 1]["dialog_act"]
            for intent, domain, _slot, value in acts:
                if intent == "Select" and belief.get(value, {}).get("名称"):
                    name = belief[value]["名称"]
                    if domain == value:
                        belief[domain] = {s: "" for s in belief[domain]}
                    belief[domain]["周边" + value] = name
            for intent, domain, slot, value in acts:
                if intent != "Inform":
                    continue
                if slot in DIRECT_SLOTS:
                    belief[domain][slot] = value
                elif slot == "推荐菜":
                    belief[domain][slot] = (belief[domain][slot] + " " + value).strip()
                elif slot.startswith("酒店设施-") and value == "是":
                    old = belief[domain]["酒店设施"]
                    belief[domain]["酒店设施"] = (old + " " + slot.split("-")[1]).strip()
            gold = {d: {s: v.strip() for s, v in slots.items() if s != "selectedResults"}
                    for d, slots in message["sys_state_init"].items()}
            mine = {d: {s: v.strip() for s, v in slots.items()} for d, slots in belief.items()}
            total += 1
            correct += mine == gold
            belief = copy.deepcopy(belief)
    return correct, total


def test_user_acts_match_the_reference_method() -> None:
    result = replay_crosswoz(str(CROSSWOZ), "user-acts")
    correct, total = _reference_user_acts(load_crosswoz(str(CROSSWOZ)))
    assert (result.joint_correct, result.turns) == (correct, total)  # the same method: the same turns right
    assert 0.5 < result.jga < 1.0
    assert result.anomalies == {}


def test_rule_tracker_accumulates_and_selects() -> None:
    state = {"景点": {"名称": "故宫"}, "酒店": {"名称": "如家", "评分": "4分"}}
    acts = [
        ["Select", "酒店", "源领域", "景点"],
        ["Select", "酒店", "源领域", "酒店"],  # same domain: constraints cleared, 周边酒店 = old name
        ["Inform", "餐馆", "推荐菜", "烤鸭"],
        ["Inform", "餐馆", "推荐菜", "炸酱面"],
        ["Inform", "酒店", "酒店设施-早餐服务", "是"],
        ["Inform", "酒店", "酒店设施-健身房", "否"],
        ["Inform", "酒店", "酒店设施-叫醒服务", "是"],
        ["Inform", "景点", "评分", "4.5分以上"],
        ["Inform", "景点", "名称", ""],
        ["Request", "景点", "地址", ""],
        ["General", "thank", "none", "none"],
    ]
    assert apply_user_acts(state, acts) == {
        "景点": {"评分": "4.5分以上"},
        "酒店": {"周边酒店": "如家", "酒店设施": "早餐服务 叫醒服务"},
        "餐馆": {"推荐菜": "烤鸭 炸酱面"},
    }
    assert state == {"景点": {"名称": "故宫"}, "酒店": {"名称": "如家", "评分": "4分"}}  # not mutated


# ---------------------------------------------------------------- RiSAWOZ


def test_risawoz_cumulative_replay_keeps_slots_gold_drops_silently() -> None:
    result = replay_risawoz(str(RISAWOZ))
    assert (result.dialogues, result.turns) == (5, 40) and result.joint_correct >= 36
    assert result.anomalies == {}
    stale = {(f.dialogue, f.turn): f.diffs for f in result.failures}
    assert stale[("train_goal_4-7###557", 2)] == {"火车.坐席": ("一等 座", "")}
    assert all(gold == "" for diffs in stale.values() for _mine, gold in diffs.values())


def test_risawoz_teacher_forced_fails_only_where_gold_drops() -> None:
    result = replay_risawoz(str(RISAWOZ), teacher_forcing=True)
    assert result.turns == 40 and result.joint_correct >= 38
    assert [(f.dialogue, f.turn) for f in result.failures] == [("tv_goal_3-41_v2###9786", 4),
                                                               ("train_goal_4-7###557", 2)]


def test_risawoz_slot_names_outside_the_catalog_rules_are_mapped() -> None:
    schema = risawoz_schema(load_risawoz(str(RISAWOZ)))
    assert "制片国家/地区" in schema["电视剧"]
    catalog, _tasks, slots = build_catalog(schema)
    assert validate_catalog(catalog) == []
    assert slots["电视剧"]["制片国家/地区"] == "制片国家_地区"


# ---------------------------------------------------------------- driver and helpers


def test_engine_names_are_valid_and_unique() -> None:
    taken: set[str] = set()
    for name in ["制片国家/地区", "制片国家_地区", "a b", "名称", "x" * 80, "/"]:
        new = engine_name(name, taken)
        assert NAME_RE.match(new) and new not in taken
        taken.add(new)
    assert engine_name("名称", set()) == "名称"


def test_driver_sets_overwrites_and_deletes() -> None:
    driver = EngineDriver({"酒店": ["名称", "价格"], "地铁": ["出发地", "目的地"]})
    driver.apply({"酒店": {"名称": "如家", "价格": "300元"}, "地铁": {"出发地": None}})
    assert driver.slots() == {"酒店": {"名称": "如家", "价格": "300元"}}
    assert driver.open_domains() == {"酒店"}  # a deletion alone opens nothing
    driver.apply({"酒店": {"价格": None, "名称": "  汉庭\t"}, "地铁": {"出发地": "西单"}})
    assert driver.slots() == {"酒店": {"名称": "汉庭"}, "地铁": {"出发地": "西单"}}
    driver.apply({"地铁": {"出发地": ""}})
    assert driver.slots() == {"酒店": {"名称": "汉庭"}}
    assert driver.open_domains() == {"酒店", "地铁"}  # the task stays open with no slots
    assert driver.anomalies == {}
    driver.reset()
    assert driver.slots() == {}


def test_diff_lists_every_change() -> None:
    before = {"a": {"x": "1", "y": "2"}, "b": {"z": "3"}}
    after = {"a": {"x": "1", "y": "4"}, "c": {"w": "5"}}
    assert diff(before, after) == {"a": {"y": "4"}, "b": {"z": None}, "c": {"w": "5"}}
    assert diff(after, after) == {}


# ---------------------------------------------------------------- files and CLI


def test_archives_read_like_plain_json(tmp_path: Path) -> None:
    archive = tmp_path / "val.json.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(CROSSWOZ, "val.json")
    packed = tmp_path / "sample.json.gz"
    packed.write_bytes(gzip.compress(RISAWOZ.read_bytes()))
    assert replay_crosswoz(str(archive)).turns == 90
    assert replay_risawoz(str(packed)).turns == 40


def test_unreadable_files_raise_data_error(tmp_path: Path) -> None:
    garbage = tmp_path / "x.json"
    garbage.write_text("{not json", encoding="utf-8")
    with pytest.raises(DataError):
        replay_crosswoz(str(garbage))
    with pytest.raises(DataError):
        replay_crosswoz(str(RISAWOZ))  # a RiSAWOZ file is not CrossWOZ
    with pytest.raises(DataError):
        replay_risawoz(str(CROSSWOZ))
    with pytest.raises(DataError):
        replay_risawoz(str(tmp_path / "missing.json"))
    with pytest.raises(ValueError):
        replay_crosswoz(str(CROSSWOZ), "sys-acts")


def _run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    return code, out.getvalue()


@pytest.mark.parametrize(
    "argv",
    [["replay", "crosswoz", str(CROSSWOZ), "--json"],
     ["replay", "crosswoz", str(CROSSWOZ), "--from", "user-acts", "--json"],
     ["replay", "risawoz", str(RISAWOZ), "--json"],
     ["replay", "risawoz", str(RISAWOZ), "--json", "--teacher-forcing", "--limit", "2"]],
)
def test_cli_json_has_exactly_the_documented_keys(argv: list[str]) -> None:
    code, out = _run(argv)
    data = json.loads(out)
    assert code == 0
    assert set(data) == {"jga", "slot_accuracy", "dialogues", "turns", "turns_per_second"}
    assert 0 <= data["jga"] <= 1 and 0 <= data["slot_accuracy"] <= 1 and data["turns"] > 0


def test_cli_json_gold_deltas_is_exactly_one() -> None:
    _code, out = _run(["replay", "crosswoz", str(CROSSWOZ), "--json"])
    assert json.loads(out)["jga"] == 1.0


@pytest.mark.parametrize(("lang", "label"), [("zh", "联合目标准确率"), ("en", "joint goal accuracy")])
def test_cli_table_in_both_languages(lang: str, label: str) -> None:
    code, out = _run(["replay", "risawoz", str(RISAWOZ), "--lang", lang, "--failures", "2"])
    assert code == 0
    assert label in out and "36/40" in out and "tv_goal_3-41_v2###9786" in out


def test_cli_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["replay", "crosswoz", str(tmp_path / "nope.json.zip")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_limit_takes_the_first_dialogues(tmp_path: Path) -> None:
    copy_path = tmp_path / "copy.json"
    shutil.copy(CROSSWOZ, copy_path)
    result = replay_crosswoz(str(copy_path), limit=3)
    assert result.dialogues == 3 and result.jga == 1.0
