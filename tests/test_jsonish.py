"""dskit.base.jsonish: lenient JSON from raw LLM text."""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dskit.base import jsonish
from dskit.base.jsonish import extract_json, loads_strict_or_none

# ---------------------------------------------------------------- strategies

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
_DICTS = st.dictionaries(st.text(max_size=10), _VALUES, max_size=6)
# Characters that steer the parser into its interesting branches.
_NASTY = st.text(
    alphabet=st.sampled_from(
        list('{}[]"\',:：，“”‘’\\/#*\n \tuxTFNtfn0123456789.eE+-_a中😀\x00')
    ),
    max_size=60,
)
_PROSE = st.text(max_size=40).filter(lambda s: "{" not in s and "[" not in s)


def _same(a: object, b: object) -> bool:
    """Equality that also tells 1 from 1.0 and True."""
    if isinstance(b, dict):
        return isinstance(a, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in b)
    if isinstance(b, list):
        return isinstance(a, list) and len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b


def _prefix_of(rec: object, orig: object) -> bool:
    """``rec`` is what a truncated ``orig`` may recover: complete members equal, the last a prefix."""
    if isinstance(orig, dict):
        if not isinstance(rec, dict):
            return False
        keys = list(rec)
        if keys != list(orig)[: len(keys)]:
            return False
        if not keys:
            return True
        return all(_same(rec[k], orig[k]) for k in keys[:-1]) and _prefix_of(rec[keys[-1]], orig[keys[-1]])
    if isinstance(orig, list):
        if not isinstance(rec, list) or len(rec) > len(orig):
            return False
        if not rec:
            return True
        return all(map(_same, rec[:-1], orig)) and _prefix_of(rec[-1], orig[len(rec) - 1])
    return _same(rec, orig)


# ---------------------------------------------------------------- properties


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(), _NASTY, st.binary().map(lambda b: b.decode("latin-1"))))
def test_never_raises_on_any_text(text: str) -> None:
    value, error = extract_json(text)
    assert (value is None) == bool(error)
    assert value is None or isinstance(value, (dict, list))


@given(st.one_of(st.none(), st.integers(), st.binary(), st.lists(st.text()), st.floats()))
def test_non_text_is_refused_with_a_reason(value: object) -> None:
    """Only text (or UTF-8 bytes) holds JSON: anything else is refused, never guessed at, and says why."""
    result, error = extract_json(value)  # type: ignore[arg-type]
    if isinstance(value, bytes):
        text = value.decode("utf-8", "replace")
        assert (result, error) == extract_json(text)
    else:
        assert result is None
        assert error in ("no text", "input is not text")


@settings(max_examples=300)
@given(_DICTS, _PROSE, st.text(max_size=40), st.sampled_from(["", "```json\n", "```\n", "```JSON "]),
       st.sampled_from([None, 2]), st.booleans())
def test_dict_in_prose_and_fences_parses_back(d, before, after, fence, indent, ascii_only) -> None:
    body = json.dumps(d, ensure_ascii=ascii_only, indent=indent)
    closing = "\n```" if fence else ""
    value, error = extract_json(f"{before}{fence}{body}{closing}{after}")
    assert error == ""
    assert _same(value, d)


@settings(max_examples=300)
@given(_DICTS.filter(bool), st.sampled_from([None, 2]))
def test_lenient_path_reads_json_exactly(d, indent) -> None:
    """A trailing comma makes ``json`` fail, so the lenient parser alone must read every value."""
    body = json.dumps(d, ensure_ascii=False, indent=indent)
    value, error = extract_json(body[:-1].rstrip() + ",\n}")
    assert error == ""
    assert _same(value, d)


_PY_TEXT = st.text(max_size=12).filter(lambda s: s.isprintable())
_PY_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | _PY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_PY_TEXT, inner, max_size=3),
    max_leaves=10,
)


@given(st.dictionaries(_PY_TEXT, _PY_VALUES, max_size=5))
def test_python_repr_parses_back(d) -> None:
    value, error = extract_json(f"结果：{d!r}")
    assert error == ""
    assert _same(value, d)


@settings(max_examples=400)
@given(_DICTS, st.data(), st.sampled_from([None, 2]))
def test_truncation_recovers_only_complete_values(d, data, indent) -> None:
    body = json.dumps(d, ensure_ascii=False, indent=indent)
    cut = data.draw(st.integers(min_value=0, max_value=len(body)))
    value, _error = extract_json("好的：\n" + body[:cut])
    assert value is None or isinstance(value, dict)
    if cut == len(body):
        assert _same(value, d)
    elif value is not None:
        assert _prefix_of(value, d), (body[:cut], value)


@settings(max_examples=200)
@given(st.lists(st.dictionaries(st.sampled_from(["a", "commands", "x"]), st.integers(), max_size=2),
                min_size=1, max_size=4))
def test_prefer_keys_choose_the_first_matching_object(dicts) -> None:
    text = " 然后 ".join(json.dumps(d) for d in dicts)
    value, error = extract_json(text, prefer_keys=("commands",))
    matching = [d for d in dicts if "commands" in d]
    assert error == ""
    assert value == (matching[0] if matching else dicts[0])


# ---------------------------------------------------------------- real-world table

_TABLE = [
    # (LLM output, expected value)
    ('{"intent": "订酒店"}', {"intent": "订酒店"}),
    ('好的，我理解了您的需求。\n```json\n{"commands": [{"type": "start_task", "task": "订酒店"}]}\n```\n如有问题请告诉我。',
     {"commands": [{"type": "start_task", "task": "订酒店"}]}),
    ('```\n{"a": 1}\n```', {"a": 1}),
    ('根据用户的输入，输出如下：{"城市": "北京", "人数": 2,}', {"城市": "北京", "人数": 2}),
    ('{"slots": {"日期": "明天",},}', {"slots": {"日期": "明天"}}),
    ("{'city': '上海', 'people': 3}", {"city": "上海", "people": 3}),
    ("{'ok': True, 'cancel': False, 'value': None}", {"ok": True, "cancel": False, "value": None}),
    ('{commands: [{type: "set_slots", slots: {城市: "杭州"}}]}',
     {"commands": [{"type": "set_slots", "slots": {"城市": "杭州"}}]}),
    ('{\n  // 用户想改日期\n  "date": "周五", /* 注释 */ "time": "19:00"\n}', {"date": "周五", "time": "19:00"}),
    ('{“城市”: “北京”, “日期”: “后天”}', {"城市": "北京", "日期": "后天"}),
    ('{"城市"："北京"，"人数"：4}', {"城市": "北京", "人数": 4}),
    ('{"reply": "推荐"全聚德"烤鸭"}', {"reply": '推荐"全聚德"烤鸭'}),
    ('{"a": "x"\n "b": "y"}', {"a": "x", "b": "y"}),
    ('{"a": 1 "b": 2}', {"a": 1, "b": 2}),
    ('{"a": [1, 2}', {"a": [1, 2]}),
    # truncated: close what is open, drop what is incomplete
    ('{"commands": [{"type": "set_slots", "slots": {"城市": "北京", "日期": "明',
     {"commands": [{"type": "set_slots", "slots": {"城市": "北京"}}]}),
    ('{"城市": "北京", "日期"', {"城市": "北京"}),
    ('{"城市": "北京", "日期":', {"城市": "北京"}),
    ('{"人数": 12', {}),
    ('{"人数": 12 ', {"人数": 12}),
    ('{"ok": tr', {}),
    ('{"ok": true', {"ok": True}),
    ('```json\n{"a": "b", "c": ["d", "e', {"a": "b", "c": ["d"]}),
    ('{"s": "\\u4e2', {}),
    # several objects and prose brackets
    ('示例：{"x": 1}\n实际：{"commands": []}', {"commands": []}),
    ('我把{城市}理解为北京：{"城市": "北京"}', {"城市": "北京"}),
    ('[注意] 输出 {"a": 1}', {"a": 1}),
    ('[1, 2, 3]', [1, 2, 3]),
    ('[{"type": "chitchat"}]', [{"type": "chitchat"}]),
    ('"{\\"a\\": 1}"', {"a": 1}),  # double-encoded
    ('{"e": "😀", "n": "\\ud83d\\ude00"}', {"e": "😀", "n": "😀"}),
    ('{"path": "C:\\d\\x41"}', {"path": "C:\\dA"}),
    ("\ufeff{\u3000\"a\"\u3000:\u30001}", {"a": 1}),
    ('{"n": -Infinity, "m": NaN}', None),  # checked separately below
]


@pytest.mark.parametrize(("text", "expected"), [case for case in _TABLE if case[1] is not None])
def test_real_world_outputs(text: str, expected: object) -> None:
    value, error = extract_json(text, prefer_keys=("commands",))
    assert error == ""
    assert _same(value, expected)


def test_non_finite_numbers_like_json() -> None:
    value, error = extract_json('前言 {"n": -Infinity, "m": NaN, "k": 1,}')
    assert error == ""
    assert value["n"] == -math.inf and math.isnan(value["m"]) and value["k"] == 1


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (None, "no text"),
        ("", "empty text"),
        ("   \n", "empty text"),
        ("没有任何 JSON。", "no JSON object found"),
        ("用{城市}和{日期}填空", "no JSON object found"),
        ("[啊 {\"a\": ???}", "no parsable JSON object found"),
    ],
)
def test_failure_reasons(text: str | None, reason: str) -> None:
    assert extract_json(text) == (None, reason)  # type: ignore[arg-type]


def test_non_text_and_bytes() -> None:
    assert extract_json(42) == (None, "input is not text")  # type: ignore[arg-type]
    assert extract_json('{"a": "中"}'.encode()) == ({"a": "中"}, "")  # type: ignore[arg-type]


def test_prefer_keys_may_be_a_single_string() -> None:
    assert extract_json('{"a": 1} {"b": 2}', prefer_keys="b") == ({"b": 2}, "")  # type: ignore[arg-type]


def test_loads_strict_or_none() -> None:
    assert loads_strict_or_none(' {"a": 1} ') == {"a": 1}
    assert loads_strict_or_none('{"a": 1,}') is None
    assert loads_strict_or_none(None) is None
    assert loads_strict_or_none("") is None


# ---------------------------------------------------------------- size and linearity


@pytest.mark.parametrize(
    "unit",
    ["[", "{", "[1,", '{"a":[', "{a:", "x{", "说明{x} ", "[1e", '["', "['", "😀{", '{"a":1,} ', "\x00"],
)
def test_work_grows_linearly(unit: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Count parser steps (not seconds): doubling adversarial input at most about doubles the work."""
    calls = {"n": 0}
    original = jsonish._JsonishParser.skip

    def counting_skip(self, pos):
        calls["n"] += 1
        return original(self, pos)

    monkeypatch.setattr(jsonish._JsonishParser, "skip", counting_skip)
    work = []
    for size in (40_000, 80_000):
        calls["n"] = 0
        extract_json(unit * (size // len(unit)), prefer_keys=("zz",))
        work.append(calls["n"])
    assert work[1] <= 2.2 * work[0] + 1_000, work


def test_one_megabyte_answers() -> None:
    padding = "说明文字。" * 200_000
    value, error = extract_json(padding + '```json\n{"commands": [], "x": "' + "长" * 10_000 + '"}\n```')
    assert error == "" and value["commands"] == []
    value, error = extract_json('{"k": "' + "值" * 1_000_000)
    assert (value, error) == ({}, "")


_ANY_CODE_POINT = st.text(st.one_of(st.characters(exclude_categories=()),
                                    st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff", "\ud83d", "\ude00", "😀"])),
                          max_size=30)


@given(_ANY_CODE_POINT)
def test_has_surrogates_is_the_surrogate_range_search_it_replaces(text):
    from dskit.base.jsonish import has_surrogates, scrub_surrogates

    assert has_surrogates(text) == bool(re.search("[\ud800-\udfff]", text))
    assert not has_surrogates(scrub_surrogates(text))
