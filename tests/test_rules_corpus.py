"""The rules corpus (tests/rules_corpus.py) loads, splits and runs; its held half stays unprinted.

Floors that can fail, and no figures yet: the lead sets figure floors once rules are written against
the work half. Nothing here prints a sentence of either half.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict

import pytest

import rules_corpus as rc
from dskit.turn.machine import step
from dskit.state.state import load_state


@pytest.fixture(scope="module")
def cases() -> list[rc.RulesCase]:
    return rc.all_cases()


@pytest.fixture(scope="module")
def result(cases) -> dict:
    return rc.tally(step, load_state, cases)


def test_the_corpus_loads_with_unique_keys(cases):
    assert len(cases) > 400
    keys = [c.key for c in cases]
    assert len(keys) == len(set(keys))
    for case in cases:
        assert isinstance(case, rc.Case)  # grounding_corpus's harness runs it
        number = int(case.cid.split(":", 1)[0])
        assert case.cls == rc.CLASSES[number] and case.cid == f"{number}:{case.cid.split(':', 2)[1]}:{case.message}"
        assert case.kind in ("attack", "genuine")


def test_every_class_has_cases_in_both_halves(cases):
    seen = defaultdict(set)
    for case in cases:
        seen[(case.cls, case.kind)].add(rc.half(case))
    for cls in rc.CLASSES.values():
        kinds = [kind for kind in ("attack", "genuine") if (cls, kind) in seen]
        assert kinds == ["attack", "genuine"], f"{cls}: both kinds"
        for kind in kinds:
            assert seen[(cls, kind)] == {"work", "held"}, f"{cls} {kind}: both halves"


def test_the_split_is_the_hash_of_the_id_and_about_even(cases):
    for case in cases[:50]:
        odd = hashlib.sha256(case.cid.encode("utf-8")).digest()[0] % 2 == 1
        assert rc.half(case) == ("held" if odd else "work")
    counts = Counter(rc.half(c) for c in cases)
    assert 0.4 < counts["held"] / len(cases) < 0.6


def test_no_sentence_is_in_both_halves(cases):
    halves = defaultdict(set)
    for case in cases:
        halves[case.message].add(rc.half(case))
    assert not [m for m, h in halves.items() if len(h) > 1]


def test_each_class_is_large_and_mostly_generated(cases):
    per_class = Counter(c.cls for c in cases)
    generated = Counter(c.cls for c in cases if c.generated)
    for cls in rc.CLASSES.values():
        assert per_class[cls] >= 40, cls
        assert generated[cls] * 2 >= per_class[cls], cls
    for number in (1, 2, 3):
        assert per_class[rc.CLASSES[number]] >= 100


def test_every_predicate_runs_and_every_case_has_an_outcome(cases, result):
    empty = {"task_stack": []}
    for case in cases:
        assert callable(case.bad)
        assert isinstance(case.bad(empty, empty, {"next_action": "ask_slot"}), bool)
    counted = sum(sum(row[kind].values()) for table in result["table"].values() for row in table.values()
                  for kind in ("attack", "genuine"))
    assert counted == len(cases)


def test_a_clarification_on_the_slot_is_asked_never_a_failure_of_a_genuine_case(cases):
    empty = {"task_stack": []}
    for case in cases:
        assert case.ask, case.cid
        clarify = {"next_action": "clarify", "slot": case.ask[0] or None}
        if case.kind == "genuine":
            assert case.bad(empty, empty, clarify) is False, case.cid
        assert rc.asks(clarify, case.ask)
        assert not rc.asks({"next_action": "clarify", "slot": "no_such_slot"}, case.ask)


def test_the_oracles():
    assert [rc.cn_number(n) for n in (11, 15, 20, 23, 99)] == ["十一", "十五", "二十", "二十三", "九十九"]
    assert rc.cn_number(2, liang=True) == "两" and rc.cn_number(12, liang=True) == "十二"
    assert [rc.en_number(n) for n in (12, 15, 40, 42)] == ["twelve", "fifteen", "forty", "forty-two"]
    assert rc.parts_of(15, "cn") == [1, 5, 10] and rc.parts_of(20, "cn") == [2, 10] and rc.parts_of(12, "ar") == [1, 2]
    assert rc.parts_of(23, "en") == [2, 3, 20]
    assert [rc.clock(12, 0, "am"), rc.clock(12, 30, "pm"), rc.clock(7, 15, "pm"), rc.clock(9, 0, "am")] == \
        ["00:00", "12:30", "19:15", "09:00"]
    assert rc.other_half("07:30") == "19:30" and rc.other_half("12:00") == "00:00"
    assert rc.hhmm("8:00") == "08:00" and rc.hhmm("八点") is None
    assert all(rc.holds_clock(v) for v in ("周六晚上六点半", "后天6点", "周日18:30", "Saturday at 7pm", "Friday, half past 6"))
    assert not any(rc.holds_clock(v) for v in ("周六", "周六晚上", "12月5号", "next Friday", None))


def test_no_sentence_holds_another_of_its_class_across_the_halves(cases):
    by_class = defaultdict(lambda: {"work": set(), "held": set()})
    for case in cases:
        by_class[case.cls][rc.half(case)].add(case.message.lower())
    for cls, halves in by_class.items():
        crossing = [(h, w) for h in halves["held"] for w in halves["work"] if h in w or w in h]
        assert not crossing, f"{cls}: {len(crossing)} sentences inside another across the halves"


def _shown_messages(out: str) -> list[str]:
    return [line.split("message:  ", 1)[1] for line in out.splitlines() if line.startswith("    message:  ")]


@pytest.mark.parametrize("argv", [[], ["--json"]])
def test_the_default_output_is_counts_only(argv, result, monkeypatch, capsys):
    monkeypatch.setattr(rc, "tally", lambda *args, **kwargs: result)
    assert rc.main(argv) == 0
    out = capsys.readouterr().out
    expected = json.dumps(result["table"], ensure_ascii=False, indent=1) if argv else rc.render(result["table"])
    assert out == expected + "\n"


@pytest.mark.parametrize("argv", [["--show"], ["--show", "--class", "1"], ["--show", "--half", "work"]])
def test_show_prints_the_work_half_only(argv, cases, result, monkeypatch, capsys):
    monkeypatch.setattr(rc, "tally", lambda *args, **kwargs: result)
    assert rc.main(argv) == 0
    shown = _shown_messages(capsys.readouterr().out)
    held = {c.message for c in cases if rc.half(c) == "held"}
    work = {c.message for c in cases if rc.half(c) == "work"}
    assert shown and set(shown) <= work and not set(shown) & held


def test_the_held_half_prints_only_when_named(cases, result, monkeypatch, capsys):
    monkeypatch.setattr(rc, "tally", lambda *args, **kwargs: result)
    rc.main(["--show", "--half", "held"])
    shown = _shown_messages(capsys.readouterr().out)
    assert shown == [case.message for case, _, _ in result["failures"]["held"]]
    assert set(shown) <= {c.message for c in cases if rc.half(c) == "held"}


def _engine_that_ignores(case: rc.RulesCase, *, clarify: bool):
    """The real engine for the prepared dialogue; for the case's message (and its follow-up) it changes
    nothing and either asks for the case's slot or just asks for something else."""
    ignored = {case.message} | ({case.followup[0]} if case.followup else set())

    def fake_step(state, understanding, catalog, **kwargs):
        if kwargs.get("query") not in ignored:
            return step(state, understanding, catalog, **kwargs)
        decision = {"next_action": "clarify" if clarify else "ask_slot", "slot": (case.ask[0] or None) if clarify
                    else None, "execute": None, "dropped": [], "applied": []}
        return state, decision
    return fake_step


def test_no_case_is_settled_by_its_setup(cases):
    """An engine that ignores the message keeps no genuine case and acts on no attack: every case turns on
    its message. One that only asks about the case's slot is 'asked' on every case."""
    for case in cases:
        outcome, _ = rc.judge(case, _engine_that_ignores(case, clarify=False), load_state)
        assert outcome == "refused", (case.cid, case.kind, outcome)
        outcome, _ = rc.judge(case, _engine_that_ignores(case, clarify=True), load_state)
        assert outcome == "asked", (case.cid, case.kind, outcome)
