"""The local code-node runner refuses and accepts what Dify's sandbox and CodeNode would."""

from __future__ import annotations

import json

import pytest

from dskit.tooling.codegen.sandbox import (
    DIFY_LIMITS,
    CodeNodeError,
    LocalCodeExecutor,
    check_outputs,
    check_source,
    dify_program,
    parse_result,
    portable_stdlib,
    run_code_node,
    sandbox_python,
)

ECHO = 'def main(a: str = "", b: str = "") -> dict:\n    return {"r": a + b}\n'


def returning(expression: str) -> str:
    """A code node whose main returns the given expression."""
    return f"import math\n\ndef main() -> dict:\n    return {expression}\n"


def test_runs_main_with_inputs_in_a_separate_process():
    code = "import os\n\ndef main(a: str, b: str) -> dict:\n    return {'r': a + b, 'pid': os.getpid()}\n"
    result = run_code_node(code, {"a": "北京", "b": "🙂"}, {"r": "string", "pid": "number"})
    assert result["r"] == "北京🙂"
    import os

    assert result["pid"] != os.getpid()


def test_working_directory_is_a_fresh_temporary_directory():
    code = "import os\n\ndef main() -> dict:\n    return {'cwd': os.getcwd(), 'files': len(os.listdir('.'))}\n"
    result = run_code_node(code, {}, {"cwd": "string", "files": "number"})
    assert "dskit-node-" in result["cwd"]
    assert result["files"] == 0


def test_the_program_is_difys_driver_text():
    program = dify_program(ECHO, {"a": "x"})
    assert program.startswith(ECHO.rstrip())
    assert "output_obj = main(**inputs_obj)" in program
    assert "json.dumps(output_obj, indent=4)" in program


@pytest.mark.parametrize("source, fragment", [
    ("import numpy\n\ndef main():\n    return {}\n", "import of 'numpy' is not allowed"),
    ("from requests import get\n\ndef main():\n    return {}\n", "import of 'requests' is not allowed"),
    ("def main():\n    import yaml\n    return {}\n", "import of 'yaml' is not allowed"),
    ("import subprocess\n\ndef main():\n    return {}\n", "blocked by Dify's sandbox"),
    ("import ctypes\n\ndef main():\n    return {}\n", "blocked by Dify's sandbox"),
    ("import tomllib\n\ndef main():\n    return {}\n", "import of 'tomllib' is not allowed"),
    # A module only 3.12 (or only 3.10) has is refused unless its absence falls back to another import.
    ("from _sha2 import sha256\n\ndef main():\n    return {}\n", "import of '_sha2' is not allowed"),
    ("try:\n    from _sha2 import sha256\nexcept ImportError:\n    sha256 = None\n\ndef main():\n    return {}\n",
     "import of '_sha2' is not allowed"),
    ("try:\n    from _sha2 import sha256\nexcept ValueError:\n    from hashlib import sha256\n\ndef main():\n"
     "    return {}\n", "import of '_sha2' is not allowed"),
    ("try:\n    import numpy\nexcept ImportError:\n    import json\n\ndef main():\n    return {}\n",
     "import of 'numpy' is not allowed"),
    ("from .catalog import x\n\ndef main():\n    return {}\n", "relative import"),
    ("from typing import Self\n\ndef main():\n    return {}\n", "typing.Self is newer than Python 3.10"),
    ("import datetime\n\ndef main():\n    return {'r': str(datetime.UTC)}\n", "datetime.UTC is newer"),
    ("type X = int\n\ndef main():\n    return {}\n", "syntax error (Python 3.10)"),
    ("def main():\n    d = {'k': 1}\n    return {'r': f\"{d[\"k\"]}\"}\n", "f-string reuses its quote"),
    ("def handler():\n    return {}\n", "no top-level function `main`"),
    ("import re\nX = re.compile(r'a*+b')\n\ndef main():\n    return {}\n", "possessive quantifier *+"),
    ("import re\nP = r'(?>a' + r'b)'\nX = re.compile(P)\n\ndef main():\n    return {}\n", "atomic group"),
    ("import re\n\ndef main():\n    return {'r': str(re.search(pattern=r'x{2}+', string='xx'))}\n", "}+"),
])
def test_refused_before_running(source, fragment):
    assert any(fragment in problem for problem in check_source(source))
    with pytest.raises(CodeNodeError) as info:
        run_code_node(source, {}, {})
    assert fragment in info.value.message


@pytest.mark.parametrize("guarded", ["from _sha2 import sha256", "from _sha256 import sha256", "import tomllib"])
def test_a_version_specific_module_with_a_fallback_passes(guarded):
    """A module one of the sandbox's Pythons lacks may be tried where ImportError falls back, and the
    script runs on this Python either way (dskit.state.integrity.sha256_hex does it for the seal)."""
    source = (f"try:\n    {guarded}\nexcept (ImportError, AttributeError):\n    from hashlib import sha256\n\n"
              "def main():\n    return {'ok': 'yes'}\n")
    assert check_source(source) == []
    assert run_code_node(source, {}, {"ok": "string"}) == {"ok": "yes"}


@pytest.mark.parametrize("pattern", [r"[+*]+", r"\++", r"a+?", r"(?:a|b)+", r"x\*+", r"[]+]+", r"a{2}"])
def test_ordinary_regexes_pass_the_310_check(pattern):
    assert check_source(f"import re\nX = re.compile({pattern!r})\n\ndef main():\n    return {{}}\n") == []


def test_dynamic_import_of_a_third_party_module_is_refused_at_run_time():
    code = "def main() -> dict:\n    mod = __import__('yaml')\n    return {'r': 'x'}\n"
    assert check_source(code) == []
    with pytest.raises(CodeNodeError, match="import of 'yaml' is not allowed"):
        run_code_node(code, {}, {"r": "string"})


def test_site_packages_are_not_reachable_even_for_stdlib_named_lookups():
    code = ("import importlib.util\n\ndef main() -> dict:\n"
            "    return {'r': str(importlib.util.find_spec('pytest') is None)}\n")
    with pytest.raises(CodeNodeError, match="'pytest' is not allowed"):
        run_code_node(code, {}, {"r": "string"})


def test_portable_stdlib_excludes_modules_missing_from_310():
    allowed = portable_stdlib()
    assert {"json", "re", "dataclasses", "hashlib", "unicodedata"} <= allowed
    assert "tomllib" not in allowed


@pytest.mark.parametrize("expression, outputs, message", [
    ("{'r': 1}", {"r": "string"}, "Output r must be a string, got int instead."),
    ("{'r': 'x'}", {"r": "string", "s": "string"}, "Output s is missing."),
    ("{'r': 'x', 'z': 1}", {"r": "string"}, "Not all output parameters are validated."),
    ("{'r': 'x' * 80001}", {"r": "string"}, "The length of output variable `r` must be less than 80000"),
    ("{'r': 2 ** 63}", {"r": "number"}, "Output variable `r` is out of range"),
    ("{'r': -(2 ** 63)}", {"r": "number"}, "Output variable `r` is out of range"),
    ("{'r': 'a'}", {"r": "number"}, "Output r is not a number"),
    ("{'r': 1.000000000000000000001}", {"r": "number"}, None),
    ("{'r': 1}", {"r": "boolean"}, "Output r must be a boolean"),
    ("{'r': None}", {"r": "string"}, "Output r is None"),
    ("{'r': ['a'] * 31}", {"r": "array[string]"}, "must be less than 30 elements"),
    ("{'r': [1] * 1001}", {"r": "array[number]"}, "must be less than 1000 elements"),
    ("{'r': [{}] * 31}", {"r": "array[object]"}, "must be less than 30 elements"),
    ("{'r': ['a', 1]}", {"r": "array[string]"}, "Output r[1] must be a string"),
    ("{'r': [True, 'x']}", {"r": "array[boolean]"}, "Output r[1] is not a boolean"),
    ("{'r': {'a': {'b': {'c': {'d': {'e': 1}}}}}}", {"r": "object"}, "Depth limit 5 reached"),
    ("{'r': {'a': {'b': {'c': 1}}}}", {"r": "object"}, None),
    ("{'r': '1e+5'}", {"r": "string"}, "Output r must be a string, got float instead."),
    ("{'r': 'x'}", {"r": "array[any]"}, "Output type array[any] is not supported."),
])
def test_output_checks_name_the_field(expression, outputs, message):
    code = returning(expression)
    if message is None:
        run_code_node(code, {}, outputs)
        return
    with pytest.raises(CodeNodeError) as info:
        run_code_node(code, {}, outputs)
    assert message in info.value.message


def test_nan_is_refused_when_strict_and_passed_like_dify_otherwise():
    result = {"r": float("nan")}
    with pytest.raises(CodeNodeError, match="NaN"):
        check_outputs(result, {"r": "number"})
    assert check_outputs(result, {"r": "number"}, strict=False)["r"] != 0


def test_nul_is_stripped_from_strings_as_dify_does():
    assert check_outputs({"r": "a\x00b"}, {"r": "string"}) == {"r": "ab"}


def test_booleans_in_number_outputs_become_integers():
    assert check_outputs({"r": True}, {"r": "number"}) == {"r": 1}


def test_scientific_notation_strings_become_floats_like_dify():
    stdout = 'noise\n<<RESULT>>{"a": "1e+5", "b": "1e5", "c": ["2E-3"]}<<RESULT>>\n'
    assert parse_result(stdout) == {"a": 100000.0, "b": "1e5", "c": [0.002]}


@pytest.mark.parametrize("code, message", [
    ("def main():\n    raise ValueError('boom')\n", "ValueError: boom"),
    ("def main():\n    return 3\n", "Result must be a dict, got int"),
    ("def main():\n    return {'r': object()}\n", "TypeError"),
    ("def main(a):\n    return {}\n", "missing 1 required positional argument"),
])
def test_failures_inside_the_node(code, message):
    with pytest.raises(CodeNodeError) as info:
        run_code_node(code, {}, {"r": "string"})
    assert message in info.value.message


def test_timeout():
    with pytest.raises(CodeNodeError, match="timed out"):
        run_code_node("def main():\n    while True:\n        pass\n", {}, {}, timeout=1)


def test_user_prints_do_not_confuse_the_result():
    code = "def main():\n    print('<<RESULT>> not this')\n    print('hello')\n    return {'r': 'ok'}\n"
    with pytest.raises(CodeNodeError):
        # Dify's greedy regex spans from the first tag to the last: a printed tag breaks the node there too.
        run_code_node(code, {}, {"r": "string"})
    code = "def main():\n    print('hello')\n    return {'r': 'ok'}\n"
    assert run_code_node(code, {}, {"r": "string"}) == {"r": "ok"}


def test_inputs_must_be_json():
    with pytest.raises(CodeNodeError, match="JSON"):
        run_code_node(ECHO, {"a": object()}, {"r": "string"})
    with pytest.raises(CodeNodeError, match="JSON"):  # graphon's orjson refuses lone surrogates
        run_code_node(ECHO, {"a": "\ud83d"}, {"r": "string"})


def test_no_declared_outputs_returns_the_raw_result():
    assert run_code_node(returning("{'x': [1, 'a']}"), {}, None) == {"x": [1, "a"]}


def test_large_inputs_and_outputs_round_trip():
    big = "汉" * 79_000  # under the 80,000-character output cap of Dify 1.8 (dskit/base/limits.py)
    assert run_code_node(ECHO, {"a": big, "b": "\x00🙂"}, {"r": "string"})["r"] == big + "🙂"


# ---------------------------------------------------------------- parity with graphon's CodeNode

def _graphon_node():
    from graphon.nodes.code.code_node import CodeNode
    from graphon.nodes.code.limits import CodeNodeLimits

    node = CodeNode.__new__(CodeNode)
    node._limits = CodeNodeLimits(
        max_string_length=DIFY_LIMITS.max_string_length, max_number=DIFY_LIMITS.max_number,
        min_number=DIFY_LIMITS.min_number, max_precision=DIFY_LIMITS.max_precision,
        max_depth=DIFY_LIMITS.max_depth, max_number_array_length=DIFY_LIMITS.max_number_array_length,
        max_string_array_length=DIFY_LIMITS.max_string_array_length,
        max_object_array_length=DIFY_LIMITS.max_object_array_length)
    return node


PARITY_CASES = [
    ({"r": "x"}, {"r": "string"}),
    ({"r": 1}, {"r": "string"}),
    ({"r": "x" * 80_001}, {"r": "string"}),
    ({"r": "a\x00"}, {"r": "string"}),
    ({"r": 3}, {"r": "number"}),
    ({"r": True}, {"r": "number"}),
    ({"r": 1.5}, {"r": "number"}),
    ({"r": 2 ** 63}, {"r": "number"}),
    ({"r": 0.1 + 0.2}, {"r": "number"}),
    ({"r": 1e-25}, {"r": "number"}),
    ({"r": "3"}, {"r": "number"}),
    ({"r": True}, {"r": "boolean"}),
    ({"r": {"a": 1, "b": ["x"]}}, {"r": "object"}),
    ({"r": {"a": {"b": {"c": {"d": {"e": 1}}}}}}, {"r": "object"}),
    ({"r": "x"}, {"r": "object"}),
    ({"r": ["a", "b"]}, {"r": "array[string]"}),
    ({"r": ["a"] * 31}, {"r": "array[string]"}),
    ({"r": ["a", 1]}, {"r": "array[string]"}),
    ({"r": [1, 2.5]}, {"r": "array[number]"}),
    ({"r": [1, "a"]}, {"r": "array[number]"}),
    ({"r": [{"a": 1}, None]}, {"r": "array[object]"}),
    ({"r": [1]}, {"r": "array[object]"}),
    ({"r": [True, None]}, {"r": "array[boolean]"}),
    ({"r": [True, 1]}, {"r": "array[boolean]"}),
    ({"r": "x"}, {"r": "string", "s": "number"}),
    ({"r": "x", "s": 1}, {"r": "string"}),
]


@pytest.mark.parametrize("result, outputs", PARITY_CASES)
def test_non_strict_checks_match_graphon(result, outputs):
    from graphon.nodes.code.entities import CodeNodeData

    schema = {name: CodeNodeData.Output(type=kind, children=None) for name, kind in outputs.items()}
    try:
        expected = ("ok", dict(_graphon_node().transform_result(result, schema)))
    except Exception as error:  # graphon's own error classes
        expected = ("error", str(error))
    try:
        actual = ("ok", check_outputs(result, outputs, strict=False))
    except CodeNodeError as error:
        actual = ("error", error.message)
    assert actual[0] == expected[0], (actual, expected)
    if actual[0] == "ok":
        assert actual[1] == expected[1]
    else:
        assert actual[1].startswith(expected[1])


# ---------------------------------------------------------------- graphon adapter and Python 3.10

def test_local_executor_implements_graphons_protocol():
    from graphon.nodes.code.entities import CodeLanguage

    executor = LocalCodeExecutor()
    assert executor.execute(language=CodeLanguage.PYTHON3, code=ECHO, inputs={"a": "x", "b": "y"}) == {"r": "xy"}
    assert executor.calls == 1
    with pytest.raises(CodeNodeError, match="Unsupported language") as info:
        executor.execute(language=CodeLanguage.JAVASCRIPT, code="function main() {}", inputs={})
    assert executor.is_execution_error(info.value)
    assert not executor.is_execution_error(ValueError("other"))


def test_local_executor_accepts_graphons_constructor_argument():
    from graphon.dsl.entities import DslCodeSettings

    executor = LocalCodeExecutor(DslCodeSettings())
    assert executor.execute(language="python3", code=returning("{'n': 1}"), inputs={}) == {"n": 1}


def test_runs_under_the_sandboxes_python_310_when_available():
    python = sandbox_python()
    if python is None:
        pytest.skip("no Python 3.10 interpreter on this machine (set DSKIT_SANDBOX_PYTHON)")
    code = "import sys\n\ndef main() -> dict:\n    return {'v': '%d.%d' % sys.version_info[:2]}\n"
    assert run_code_node(code, {}, {"v": "string"}, python=python) == {"v": "3.10"}
    # Syntax 3.12 accepts but 3.10 does not is caught statically, before any interpreter is involved.
    with pytest.raises(CodeNodeError, match="f-string"):
        run_code_node("def main():\n    return {'v': f\"{'a'}{\"b\"}\"}\n", {}, {"v": "string"}, python=python)


def test_json_inputs_of_every_type_arrive_as_in_dify():
    code = "def main(s, n, b, o, l) -> dict:\n    return {'r': repr((s, n, b, o, l))}\n"
    inputs = {"s": "x", "n": 1.5, "b": True, "o": {"k": [1]}, "l": None}
    result = run_code_node(code, inputs, {"r": "string"})
    assert result["r"] == repr(("x", 1.5, True, {"k": [1]}, None))
    assert json.loads(json.dumps(inputs)) == inputs
