"""Catalog patterns run on every user's message (issue 10, item 5): catastrophic ones are refused at
validation with their JSON path, and no value longer than the slot takes is ever matched.

No timing anywhere: refusal is checked, and what reaches ``re.fullmatch`` is counted.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from conftest import ROOT
from dskit.catalog.catalog import SlotSpec, coerce_slot_value, load_catalog, validate_catalog, CatalogError
from dskit.base.redos import redos_problem
from dskit.tooling.codegen.sandbox import sandbox_python

# Each of these makes re backtrack exponentially (or as n^3) on a failing text.
CATASTROPHIC = [
    r"(a+)+$",                      # issue 10: 8.5 s on 27 characters
    r"^([A-Za-z0-9]+\s?)*$",        # issue 10: 2.3 s on 25 characters
    r"(a*)*b", r"(a|a)*b", r"(a|aa)*b", r"(.*,)*x", r"(\w+\d+)*$", r"(a*b*)*c", r"(\s*\w+\s*)+$",
    r"(a?){20}a{20}", r"([a-z]+,?)+$", r"(x+x+)+y", r"^(\d+)+$", r"(\w+\s?)+$", r"(.|\n)*x", r"((ab)*|a)*c",
    r".*.*.*=", r"(?i)(ab|AB?)+$",
]
# Ordinary slot patterns, and the rewrites docs/catalog.md suggests: accepted.
SAFE = [
    r"^1[3-9]\d{9}$", r"^\d{4}-\d{2}-\d{2}$", r"^([01]?\d|2[0-3]):[0-5]\d$", r"^[A-Z]{2}\d{6}$",
    r"[\w.+-]+@[\w-]+(\.[\w-]+)+", r"^(\d{1,3}\.){3}\d{1,3}$", r"^[\u4e00-\u9fa5]{2,10}$", r"^.*\d+$",
    r"^\+?\d[\d -]{6,20}\d$", r"^(\S+\s)*\S+$", r"((ab)*c)*", r"([^,]*,)*", r"(a+b)*", r"(ab|cd)*", r"(\w|\d)+",
    r"a+", r"^(?:[A-Za-z0-9]+(?:\s[A-Za-z0-9]+)*\s?)?$", r"(a[bc])*", r"(ab?)*", r"(?:a++)+", r"(?>a+)+",
]


@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_catastrophic_patterns_are_found(pattern):
    assert redos_problem(pattern)


@pytest.mark.parametrize("pattern", SAFE)
def test_ordinary_patterns_pass(pattern):
    assert redos_problem(pattern) == ""


@pytest.mark.parametrize("pattern", [r"(a+)+$", r"^([A-Za-z0-9]+\s?)*$"])
def test_the_issue_patterns_are_refused_with_their_json_path(restaurant, pattern):
    restaurant["tasks"]["book_restaurant"]["slots"]["budget"]["pattern"] = pattern
    problems = validate_catalog(json.dumps(restaurant, ensure_ascii=False))
    assert len(problems) == 1
    assert problems[0].startswith("$.tasks.book_restaurant.slots.budget.pattern: refused")
    assert "ReDoS" in problems[0] and "nested repeats" in problems[0]
    with pytest.raises(CatalogError):
        load_catalog(restaurant)


def test_pattern_problems_name_invalid_and_oversized_patterns_too():
    base = {"version": 1, "tasks": {"t": {"slots": {"s": {"pattern": "("}}}}}
    assert validate_catalog(base)[0].startswith("$.tasks.t.slots.s.pattern: not a valid regular expression")
    base["tasks"]["t"]["slots"]["s"]["pattern"] = "a" * 1001
    assert validate_catalog(base) == ["$.tasks.t.slots.s.pattern: longer than 1000 characters"]
    base["tasks"]["t"]["slots"]["s"]["pattern"] = "(" * 10_000 + ")" * 10_000
    assert validate_catalog(base)[0].startswith("$.tasks.t.slots.s.pattern:")


def test_a_value_is_measured_before_it_is_matched(monkeypatch):
    """The cap: nothing longer than max_length ever reaches the pattern, whatever its length."""
    matched: list[int] = []
    real = re.fullmatch

    def counting(pattern, text, flags=0):
        matched.append(len(text))
        return real(pattern, text, flags)

    monkeypatch.setattr(re, "fullmatch", counting)
    spec = SlotSpec(name="code", pattern=r"^.*\d+$", max_length=50)
    codes = SlotSpec(name="codes", pattern=r"^.*\d+$", max_length=50, multiple=True)
    for slot, value in ((spec, "a" * 51), (spec, " " + "1" * 51 + " "), (spec, "x" * 1_000_000),
                        (codes, ["1" * 60, "2" * 60])):
        ok, _, reason = coerce_slot_value(slot, value)
        assert not ok and "longer than the 50" in reason
    assert matched == []
    assert coerce_slot_value(spec, "  abc123  ")[:2] == (True, "abc123")
    assert matched == [6]


def test_numbers_and_booleans_never_scan_long_text(monkeypatch):
    """Number words are parsed with regular expressions too; long text is refused before them."""
    scanned: list[int] = []
    real_sub = re.Pattern.sub

    class Spy:
        def __init__(self, compiled):
            self.compiled = compiled

        def sub(self, repl, text, count=0):
            scanned.append(len(text))
            return real_sub(self.compiled, repl, text, count)

    import dskit.catalog.catalog as catalog_module
    monkeypatch.setattr(catalog_module, "_NUMBER_SUFFIX_RE", Spy(catalog_module._NUMBER_SUFFIX_RE))
    for slot_type in ("integer", "number", "boolean"):
        ok, _, reason = coerce_slot_value(SlotSpec(name="n", type=slot_type), " " * 100_000 + "3")
        assert not ok and "longer than the 100" in reason
    assert scanned == []


def test_the_check_agrees_on_the_sandboxes_python_310():
    """Dify's sandbox may run Python 3.10, where the parser is sre_parse, not re._parser."""
    python = sandbox_python()
    if python is None:
        pytest.skip("no Python 3.10 interpreter here (dify-sandbox releases run 3.10; set DSKIT_SANDBOX_PYTHON)")
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); from dskit.base.redos import redos_problem; "
            "print(json.dumps([bool(redos_problem(p)) for p in json.loads(sys.argv[2])]))")
    patterns = [p for p in CATASTROPHIC + SAFE if "(?>" not in p and "++" not in p]  # 3.11+ syntax
    out = subprocess.run([python, "-c", code, str(ROOT), json.dumps(patterns)], capture_output=True, text=True,
                         check=True).stdout
    assert json.loads(out) == [bool(redos_problem(p)) for p in patterns]
