"""dskit replay on the full data sets in ../shared (skipped when they are not there)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dskit.tooling.replay import replay_crosswoz, replay_risawoz

pytestmark = pytest.mark.slow  # generation, graphon runs or recorded-model replays: `-m "not slow"` skips them

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
CROSSWOZ_VAL = SHARED / "data" / "crosswoz" / "val.json.zip"
RISAWOZ_FEWSHOT = SHARED / "data" / "risawoz" / "zh_fewshot.json.gz"

needs_crosswoz = pytest.mark.skipif(not CROSSWOZ_VAL.exists(),
                                    reason=f"CrossWOZ validation set not found at {CROSSWOZ_VAL}")
needs_risawoz = pytest.mark.skipif(not RISAWOZ_FEWSHOT.exists(),
                                   reason=f"RiSAWOZ few-shot file not found at {RISAWOZ_FEWSHOT}")


@needs_crosswoz
def test_full_validation_set_gold_deltas_is_exact() -> None:
    result = replay_crosswoz(str(CROSSWOZ_VAL), "gold-deltas")
    assert (result.dialogues, result.turns) == (500, 4229)
    assert result.jga == 1.0
    assert result.anomalies == {}


@needs_crosswoz
def test_full_validation_set_user_acts() -> None:
    """The rule tracker's figure: 3048 of 4229 turns (72.07%; 71.96% comparing values unstripped)."""
    result = replay_crosswoz(str(CROSSWOZ_VAL), "user-acts")
    assert result.turns == 4229 and result.joint_correct >= 3048  # a floor: the engine may only do better
    assert result.anomalies == {}


@needs_risawoz
def test_full_risawoz_fewshot() -> None:
    cumulative = replay_risawoz(str(RISAWOZ_FEWSHOT))
    forced = replay_risawoz(str(RISAWOZ_FEWSHOT), teacher_forcing=True)
    assert (cumulative.dialogues, cumulative.turns) == (100, 659) and cumulative.joint_correct >= 642
    assert forced.turns == 659 and forced.joint_correct >= 653
    assert cumulative.anomalies == {} and forced.anomalies == {}
