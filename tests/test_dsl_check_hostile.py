"""check-dsl on files nobody should trust (issue 10, items 6 and 9).

A file we check is never executed by checking it: check-dsl is static by default. ``--run-code`` is
an explicit option, and then the code runs in the sandbox-like runner with Dify's restrictions
(no os, subprocess, sockets, file writes or reads outside the standard library). Bad files — not
UTF-8, YAML alias bombs, absurd nesting — get one line and exit status 1, never a traceback.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("yaml")

from dskit.tooling.cli import main  # noqa: E402
from dskit.tooling.dslbuild.builder import dump_yaml  # noqa: E402
from dskit.tooling.dslbuild.check import MAX_ALIASES, check_dsl, load_document  # noqa: E402
from dskit.tooling.dslbuild.flows import build_classic, build_fast  # noqa: E402


@pytest.fixture(scope="module")
def fast() -> dict[str, Any]:
    return build_fast().to_dict()


def _with_code(doc: dict[str, Any], code: str) -> dict[str, Any]:
    """``doc`` with the outcome node's code replaced (its outputs cannot be read statically)."""
    doc = copy.deepcopy(doc)
    node = next(n for n in doc["workflow"]["graph"]["nodes"] if n["id"] == "outcome")
    node["data"]["code"] = code
    return doc


def _evil(marker: Path) -> dict[str, str]:
    """Code nodes that would touch ``marker`` (or leak, or phone home) if anything ran them."""
    body = "    return dict(zip(KEYS, [''] * len(KEYS)))\n"
    keys = "KEYS = ['reply', 'sys_context_str', 'current_task', 'current_task_slots']\n"
    return {
        "os.system at import": f"import os\nos.system('touch {marker}')\n{keys}def main(**kw):\n{body}",
        "os.system in main": f"{keys}def main(**kw):\n    __import__('os').system('touch {marker}')\n{body}",
        "subprocess": f"{keys}def main(**kw):\n    __import__('subprocess').run(['touch', '{marker}'])\n{body}",
        "a file written": f"{keys}def main(**kw):\n    open('{marker}', 'w').write('x')\n{body}",
        "a secret read": f"{keys}def main(**kw):\n    KEYS[0] = open('/etc/hostname').read()\n{body}",
        "a socket": f"{keys}def main(**kw):\n    import socket\n    socket.create_connection(('127.0.0.1', 9))\n{body}",
        "os via sys.modules": f"import sys\n{keys}def main(**kw):\n    import json\n"
                              f"    sys.modules['os'].system('touch {marker}')\n{body}",
    }


@pytest.mark.parametrize("case", list(_evil(Path("/x"))))
def test_checking_never_runs_the_files_code(tmp_path: Path, fast: dict, case: str) -> None:
    marker = tmp_path / "ran"
    doc = _with_code(fast, _evil(marker)[case])
    path = tmp_path / "evil.yml"
    path.write_text(dump_yaml(doc), encoding="utf-8")
    assert not any("failed on empty inputs" in p.message or "refused" in p.message for p in check_dsl(doc))
    main(["check-dsl", str(path)])
    assert not marker.exists()


@pytest.mark.parametrize("case", list(_evil(Path("/x"))))
def test_run_code_runs_it_under_difys_restrictions(tmp_path: Path, fast: dict, case: str) -> None:
    marker = tmp_path / "ran"
    problems = check_dsl(_with_code(fast, _evil(marker)[case]), run_code=True)
    assert not marker.exists()
    found = [p for p in problems if p.node == "outcome" and p.field == "data.code"]
    assert found and ("refused" in found[0].message or "blocked" in found[0].message), problems


def test_our_own_files_pass_when_their_code_runs_restricted() -> None:
    """The restrictions are Dify's: the engine's nodes (json, re, dataclasses) run under them."""
    for doc in (build_fast().to_dict(), build_classic().to_dict()):
        assert check_dsl(doc, run_code=True) == []


def test_the_cli_is_static_unless_asked(tmp_path: Path, fast: dict, capsys: pytest.CaptureFixture) -> None:
    marker = tmp_path / "ran"
    path = tmp_path / "evil.yml"
    path.write_text(dump_yaml(_with_code(fast, _evil(marker)["os.system in main"])), encoding="utf-8")
    assert main(["check-dsl", str(path)]) == 0
    assert main(["check-dsl", "--run-code", str(path)]) == 1
    assert "refused by check-dsl's sandbox" in capsys.readouterr().out
    assert not marker.exists()


# --------------------------------------------------------------------------------------------------
# Bad files: one line, exit 1, no traceback
# --------------------------------------------------------------------------------------------------


def _bomb(levels: int, width: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels + 1):
        refs = ", ".join(f"*a{level - 1}" for _ in range(width))
        lines.append(f"a{level}: &a{level} [{refs}]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("levels", [8, 9, 30])
def test_a_yaml_alias_bomb_is_refused_before_it_expands(levels: int) -> None:
    text = _bomb(levels)
    assert len(text.encode()) < 2_500  # the 1.3 KB file that took 10 s and 359 MB, or never ended
    problems = check_dsl(text)
    assert len(problems) == 1 and problems[0].node == "document" and "alias" in problems[0].message


def test_a_few_aliases_still_load() -> None:
    assert load_document("base: &b {x: 1}\none: *b\ntwo: *b\n") == {"base": {"x": 1}, "one": {"x": 1}, "two": {"x": 1}}
    text = "x: &x [1]\n" + "".join(f"k{i}: *x\n" for i in range(MAX_ALIASES + 1))
    assert "aliases" in check_dsl(text)[0].message


def test_an_alias_into_itself_is_refused() -> None:
    assert "refers to the node that contains it" in check_dsl("a: &a [1, *a]\n")[0].message


def test_absurd_nesting_is_one_problem() -> None:
    assert "nested" in check_dsl("[" * 100_000 + "]" * 100_000)[0].message
    assert "nested" in check_dsl("a:\n" + "".join("  " * i + f"b{i}:\n" for i in range(1, 400)))[0].message


def test_code_that_python_cannot_parse_is_one_problem(fast: dict) -> None:
    for code in ("def main():\n    return {}\x00\n", "x = " + "(" * 5_000 + ")" * 5_000 + "\ndef main(): return {}\n"):
        problems = check_dsl(_with_code(fast, code))
        assert any(p.node == "outcome" and p.field == "data.code" for p in problems)


@pytest.mark.parametrize(("name", "data"), [
    ("latin-1", "名字: café\n".encode("utf-8").decode("utf-8").encode("latin-1", "replace") + b"\xe9\n"),
    ("utf-16", "version: '0.3.1'\n".encode("utf-16")),
    ("invalid", b"version: \xff\xfe\xfa\n"),
])
def test_a_file_that_is_not_utf8_gets_one_line(tmp_path: Path, capsys: pytest.CaptureFixture, name: str,
                                              data: bytes) -> None:
    path = tmp_path / f"{name}.yml"
    path.write_bytes(data)
    assert main(["check-dsl", str(path)]) == 1
    captured = capsys.readouterr()
    assert "not UTF-8" in captured.err and len(captured.err.strip().splitlines()) == 1
    assert "Traceback" not in captured.err + captured.out


def test_every_bad_file_gets_one_line_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    files = {"bomb.yml": _bomb(9).encode(), "deep.yml": b"[" * 50_000, "list.yml": b"- 1\n- 2\n",
             "empty.yml": b"", "bom.yml": "\ufeffversion: '0.3.1'\n".encode("utf-8")}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        assert main(["check-dsl", str(tmp_path / name)]) == 1, name
    assert main(["check-dsl", str(tmp_path / "missing.yml")]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    assert "bom.yml: not UTF-8" not in captured.err  # a BOM is tolerated; the file just is not a DSL
