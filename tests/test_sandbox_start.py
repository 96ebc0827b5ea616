"""The stand-ins for how dify-sandbox starts a code node's Python (``dskit bench turn --runner``).

The rules are dify-sandbox's own (langgenius/dify-sandbox, internal/core/runner/python): up to 0.2.14,
python.go's ``InitializeEnvironment`` XORs the code with a random 64-byte key and writes it base64-encoded
into prescript.py, whose ``decrypt`` undoes it byte by byte before ``exec(code)``; 0.2.15's prescript reads
the code from file descriptor 3 and runs ``exec(compile(code, "<fd3>", "exec"))`` (the stand-in
reads the same code from the descriptor it inherits, see sandbox_start's docstring). A stand-in that ran
something else, or printed something else, would time the wrong thing: each must run Dify's program and
print exactly what a plain run prints.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dskit.tooling.bench import sandbox_start as start
from dskit.tooling.codegen.sandbox import dify_program

NODE = '''def main(text: str, n: int) -> dict:
    """A node with a non-ASCII input and output, as ours have."""
    return {"echo": text * n, "bytes": len(text.encode("utf-8"))}
'''
INPUTS = {"text": "还是七点吧", "n": 2}


def _plain(program: str, folder: Path) -> bytes:
    path = folder / "plain.py"
    path.write_text(program, encoding="utf-8")
    return subprocess.run([sys.executable, "-I", "-S", str(path)], capture_output=True, check=True).stdout


@pytest.mark.parametrize("runner", start.RUNNERS)
def test_each_runner_runs_difys_program_and_prints_what_a_plain_run_prints(runner: str, tmp_path: Path) -> None:
    program = dify_program(NODE, INPUTS)
    expected = _plain(program, tmp_path)
    assert b"<<RESULT>>" in expected and b'"bytes": 15' in expected  # json.dumps escapes the echo
    done = start.prepare(runner, program, tmp_path, "node").run(sys.executable, tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == expected


def test_up_to_0_2_14_the_file_holds_the_code_only_sealed_with_the_key(tmp_path: Path) -> None:
    program = dify_program(NODE, INPUTS)
    key = bytes(range(1, start.KEY_LENGTH + 1))
    launch = start.prepare("sandbox-0.2.14", program, tmp_path, "node", key=key)
    written = Path(launch.args[-3]).read_text(encoding="utf-8")
    assert "def main(" not in written and "还是七点吧" not in written  # nothing readable: sealed, base64
    assert start.xor(start.xor(program.encode(), key), key) == program.encode()
    assert start.xor(b"\x00" * 130, key) == key * 2 + key[:2]  # each byte against the key's byte at i % 64
    # a node that raises: the prescript's excepthook writes the traceback and exits non-zero, as in the sandbox
    failing = start.prepare("sandbox-0.2.14", "raise ValueError('坏了')\n", tmp_path, "bad", key=key)
    done = failing.run(sys.executable, tmp_path)
    assert done.returncode != 0 and "ValueError: 坏了" in done.stderr.decode()


def test_0_2_15_reads_the_code_on_an_inherited_descriptor_and_redirects_none_of_ours(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bench runs inside other processes: in a pytest-xdist worker descriptor 3 is the pipe from the
    controller, and putting the code file there, even for a moment, lost the worker's messages (a CI run
    ended with the controller waiting for a test the worker had finished). No descriptor of this process
    may be redirected, and the ones it has stay what they were."""
    program = dify_program(NODE, INPUTS)
    launch = start.prepare("sandbox-0.2.15", program, tmp_path, "node")
    assert launch.code_file is not None and launch.code_file.read_bytes() == program.encode()
    assert "def main(" not in Path(launch.args[-2]).read_text(encoding="utf-8")  # the bootstrap holds no code

    def redirect(*args: object) -> None:
        raise AssertionError(f"a descriptor of the bench's own process was redirected: dup2{args}")

    held = os.pipe()  # takes the lowest free descriptors, so descriptor 3 is in use, as in an xdist worker
    try:
        os.fstat(3)
        before = _descriptors()
        with monkeypatch.context() as patch:  # undone before pytest's own capture redirects at teardown
            patch.setattr(os, "dup2", redirect)
            done = launch.run(sys.executable, tmp_path)
        assert done.returncode == 0, done.stderr.decode()
        assert _descriptors() == before
    finally:
        for descriptor in held:
            os.close(descriptor)


def _descriptors() -> dict[int, tuple[int, int]]:
    """{descriptor: (device, inode)} of every descriptor this process has open."""
    found = {}
    for name in os.listdir("/proc/self/fd") if Path("/proc/self/fd").is_dir() else map(str, range(64)):
        try:
            status = os.fstat(int(name))
        except OSError:
            continue
        found[int(name)] = (status.st_dev, status.st_ino)
    return found


def test_an_unknown_runner_is_named_in_the_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="sandbox-0.2.15"):
        start.prepare("sandbox-9", "print(1)\n", tmp_path, "x")
