"""``dskit bench grounding`` (issue 20): grounding's recall with perfect understanding on CrossWOZ, every
gold change classified by where its value came from (CrossWOZ's own dialogue acts), beside the
"answers nothing" baseline. Figures are floors: accepting more of what the user said may only raise them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dskit.tooling.bench.grounding import _without_system, bench_grounding, dialogue_turns, source_of
from dskit.tooling.cli import main

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "fixtures" / "crosswoz_val_sample.json"
VALIDATION = ROOT.parent / "shared" / "data" / "crosswoz" / "val.json.zip"


def _dialogue() -> dict:
    """A user asks for a free sight, the system recommends 故宫 and drops the rating it could not meet."""
    return {"messages": [
        {"role": "usr", "content": "推荐一个免费的景点，评分4.5分以上", "dialog_act": [
            ["Inform", "景点", "门票", "免费"], ["Inform", "景点", "评分", "4.5分以上"]]},
        {"role": "sys", "content": "推荐您去故宫。", "dialog_act": [["Recommend", "景点", "名称", "故宫"]],
         "sys_state_init": {"景点": {"门票": "免费", "评分": "4.5分以上", "名称": ""}},
         "sys_state": {"景点": {"门票": "免费", "评分": "4.5分以上", "名称": ""}}},
        {"role": "usr", "content": "就去那儿吧，附近有酒店吗", "dialog_act": [["Select", "酒店", "源领域", "景点"]]},
        {"role": "sys", "content": "有北京饭店。", "dialog_act": [],
         "sys_state_init": {"景点": {"门票": "免费", "评分": "", "名称": "故宫"},
                            "酒店": {"周边景点": "故宫"}},
         "sys_state": {}},
    ]}


def test_each_gold_change_is_classified_by_where_its_value_came_from() -> None:
    first, second = dialogue_turns(_dialogue())
    assert source_of(first, "免费", "门票") == "user"  # the user's act says it
    assert source_of(second, "故宫", "名称") == "offered"  # the system's act offered it, the user took it
    assert source_of(second, None, "评分") == "system"  # dropped by the wizard: nobody asked
    assert source_of(second, "故宫", "周边景点") == "system"  # a relation the wizard filled from its database
    assert source_of(second, "颐和园", "名称") == "system"  # said by nobody
    # the user asks the wizard to pick a hotel near the sight (Select 酒店): a hotel it names is its pick
    assert source_of(second, "故宫", "名称", "酒店") == "system"
    assert source_of(second, "故宫", "名称", "景点") == "offered"  # the sight the user took is still theirs
    # several values of one slot, each said by the user in other words around them: the user's
    assert source_of(first, "免费 4.5分以上", "门票") == "user"
    assert source_of(first, "4.5分 颐和园", "评分") == "system"  # one part said by nobody


def test_a_value_the_wizards_reply_gives_is_its_own_pick() -> None:
    """"好的，那周边还有什么景点吗？" -> "周边景点有故宫": the annotators wrote 名称=故宫 into the state of the turn that
    asked, and 故宫 was named in an earlier reply too; it is the wizard's answer, not an offer the user took."""
    dialogue = _dialogue()
    dialogue["messages"][2] = {"role": "usr", "content": "好的，那周边还有什么景点吗？",
                               "dialog_act": [["Request", "景点", "周边景点", ""]]}
    dialogue["messages"][3]["dialog_act"] = [["Inform", "景点", "周边景点", "故宫"]]
    second = dialogue_turns(dialogue)[1]
    assert source_of(second, "故宫", "名称", "景点") == "system"
    assert source_of(dialogue_turns(_dialogue())[1], "故宫", "名称", "景点") == "offered"  # "就去那儿吧" took it


def test_the_users_wishes_leave_out_what_the_wizard_changed_by_itself() -> None:
    """Against the user's wishes a refused wizard change is right: the tracker that refuses the dropped
    rating scores the second turn right there, and wrong against CrossWOZ's gold."""
    dialogue = _dialogue()
    first, second = dialogue_turns(dialogue)
    changes = {"景点": {"评分": None, "名称": "故宫"}, "酒店": {"周边景点": "故宫"}}
    wishes = _without_system(second, first.gold, changes)
    assert wishes == {"景点": {"门票": "免费", "评分": "4.5分以上", "名称": "故宫"}}


def test_the_sample_keeps_what_the_user_said_and_beats_answering_nothing() -> None:
    result = bench_grounding(str(SAMPLE))
    forced, carried = result["teacher_forced"], result["cumulative"]
    assert result["dialogues"] == 12 and forced["turns"] == 90
    # recorded: 93.3% teacher-forced against 55.6% for a model that answers nothing; carried 26.7% against 0
    assert forced["jga"] >= 0.93 and forced["baseline_jga"] < 0.6
    # against the user's wishes (the wizard's own changes left out): 98.9% teacher-forced, 78.9% carried;
    # 73.3% carried since a question about an offered thing takes none of its figures (dskit.rules.offers): "那太好
    # 了，帮我省钱了啊。它电话是多少？" no longer takes the free attraction's 游玩时间 0.3小时, which the annotators
    # gave the user — the price of keeping "这家餐馆的周边有哪些景点啊？" from taking a restaurant's 人均68元 as the
    # user's budget (the 1.5B model wrote it, and every later turn carried it)
    assert forced["wishes_jga"] >= 0.98 and carried["wishes_jga"] >= 0.73
    assert forced["acceptance"]["user"] >= 0.98 and forced["changes"]["user"] >= 70
    assert carried["jga"] >= 0.25 and carried["baseline_jga"] == 0.0
    lost = sum(carried["wrong_turns_by_first_cause"].values())
    assert lost == carried["turns"] - round(carried["jga"] * carried["turns"])  # every wrong turn has a cause


def test_the_command_prints_the_table_with_its_baseline(capsys) -> None:
    assert main(["bench", "grounding", str(SAMPLE)]) == 0
    out = capsys.readouterr().out
    assert "answers nothing" in out and "teacher-forced" in out and "cumulative" in out
    assert main(["bench", "grounding", str(SAMPLE), "--json", "--limit", "2"]) == 0
    assert json.loads(capsys.readouterr().out)["dialogues"] == 2


def test_missing_data_says_where_to_get_it(capsys, tmp_path) -> None:
    assert main(["bench", "grounding", str(tmp_path / "none.json")]) == 2
    assert "thu-coai/CrossWOZ" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(not VALIDATION.exists(), reason="needs ../shared/data/crosswoz/val.json.zip (CrossWOZ validation)")
def test_first_100_validation_dialogues() -> None:
    """Recorded (first 100 validation dialogues): teacher-forced JGA 94.7% (answers nothing: 54.4%),
    98.6% against the user's wishes, changed turns 88.4%; values the user said accepted 99.4% of 656,
    offered and taken 96.8% of 31, system-made changes accepted 16.9% of 71 (should be refused; mostly
    deletions when the user starts a new search); carried 51.3% (answers nothing: 0%), 84.7% against the
    user's wishes. (Before the wizard's picks were classed as its own — a Select act of the value's domain,
    or a value its reply to the message gives — and before a message asking for a pick took none of the
    offered: 98.4%, offered 90.9% of 33, system-made 17.4% of 69, carried 84.9% against the wishes.) (Before the bounds, the no-charge phrases, unit-less ranges, CrossWOZ's rating aliases
    and details asked of the one thing recommended: 94.2%, 97.9%, 87.4%, 99.1%, 84.9%; carried 50.7%, 82.2%.)
    Then the rules on names and on a constraint given for another task (docs/grounding.md): TF JGA 94.6%,
    wishes 98.5%, changed turns 88.1%, values said 651 of 656 (99.2%: the one more refused is an annotation
    slip, 餐馆.名称 = "人均消费"), carried 51.3%, 84.4% against the wishes."""
    result = bench_grounding(str(VALIDATION), 100)
    forced, carried = result["teacher_forced"], result["cumulative"]
    assert forced["jga"] >= 0.945 and forced["baseline_jga"] < 0.55 and forced["changed_jga"] >= 0.88
    assert forced["wishes_jga"] >= 0.983 and carried["wishes_jga"] >= 0.84
    assert forced["acceptance"]["user"] >= 0.992 and forced["acceptance"]["offered"] >= 0.9
    assert forced["acceptance"]["system"] <= 0.18
    assert carried["jga"] >= 0.51
