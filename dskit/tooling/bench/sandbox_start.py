"""How dify-sandbox starts the Python of a code node, modelled for timing (``dskit bench turn --runner``).

Why: a code node's cost is paid in a fresh interpreter on every call, and *how* the sandbox hands the
code to that interpreter decides what a byte of code costs. Read from langgenius/dify-sandbox,
``internal/core/runner/python/prescript.py`` and ``python.go``:

- **releases up to 0.2.14** (0.2.12 and before on Python 3.10, 0.2.13 and 0.2.14 on the ``python:3``
  image): ``InitializeEnvironment`` XORs the code Dify sends (the node's code with Dify's runner and the
  inputs around it) with a random 64-byte key and writes it base64-encoded into the prescript; the child
  ``python3 <that file> <lib path> <key>`` decodes it, undoes the XOR **in a Python loop over every byte**
  (``for i in range(code_len): code[i] = code[i] ^ key[i % key_len]``), then ``exec(code)`` of the bytes.
  Every byte of the file -- comments, docstrings and the texts of functions compiled on first call
  included -- passes through that loop (about 90-110 ns a byte here).
- **0.2.15**: the child ``python3 <bootstrap> <lib path>`` reads the code from file descriptor 3 and runs
  ``exec(compile(code, "<fd3>", "exec"))``.

Both prescripts first import ctypes, os, sys and traceback, install an excepthook and chdir. The
stand-ins here do all of that; they leave out loading ``python.so`` through ctypes and installing seccomp
(a Go c-shared library built with the sandbox, not available here) and the ``preload`` text (empty for
a python3 code node). The 0.2.15 stand-in reads the code from the descriptor the parent's open code
file already has, named as one more argument, not from descriptor 3: putting the file on descriptor 3 of
this process would redirect whatever uses it here (in a pytest-xdist worker, the pipe from the controller),
and remapping it only in the child needs a ``preexec_fn``, which makes Python fork this whole process for
every run and times the fork (a bare start measured 42 ms instead of 34). Reading an inherited descriptor
costs the same whatever its number. The interpreter runs with ``-I -S``: the sandbox gives it an empty
environment and no home (``-I``), and its ``site`` would read this machine's site-packages, not the
sandbox image's (``-S``). A real start pays for python.so, seccomp and ``site`` too, in the bare node's
start as in every other, so the multiples of a bare start measured with these stand-ins are upper
bounds. ``file`` is the model of the earlier figures: ``python -I -S file.py``.
"""

from __future__ import annotations

import base64
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

RUNNERS = ("file", "sandbox-0.2.14", "sandbox-0.2.15")
KEY_LENGTH = 64  # python.go: "generate a random 512 bit key"

# The prescript's steps before the code runs, less python.so and seccomp (see the module docstring).
_PRELUDE = '''import ctypes
import os
import sys
import traceback


def excepthook(type, value, tb):
    sys.stderr.write("".join(traceback.format_exception(type, value, tb)))
    sys.stderr.flush()
    sys.exit(-1)


sys.excepthook = excepthook

running_path = sys.argv[1]
if not running_path:
    exit(-1)
'''

XOR_PRESCRIPT = _PRELUDE + '''
key = sys.argv[2]
if not key:
    exit(-1)

from base64 import b64decode
key = b64decode(key)

os.chdir(running_path)

code = b64decode("{code}")

def decrypt(code, key):
    key_len = len(key)
    code_len = len(code)
    code = bytearray(code)
    for i in range(code_len):
        code[i] = code[i] ^ key[i % key_len]
    return bytes(code)

code = decrypt(code, key)
exec(code)
'''

FD3_PRESCRIPT = _PRELUDE + '''
os.chdir(running_path)

with os.fdopen(int(sys.argv[2]), "rb") as code_fd:  # 0.2.15 reads descriptor 3 (see the module docstring)
    code = code_fd.read().decode("utf-8")

exec(compile(code, "<fd3>", "exec"))
'''


def xor(data: bytes, key: bytes) -> bytes:
    """``InitializeEnvironment``'s encryption (python.go, up to 0.2.14): each byte XOR the key's byte at
    its position modulo the key's length; the prescript's ``decrypt`` undoes it the same way."""
    return bytes(byte ^ key[index % len(key)] for index, byte in enumerate(data))


@dataclass(frozen=True)
class Launch:
    """One prepared run: the interpreter's arguments after the interpreter, and the file (if any) the
    child reads its code from on an inherited descriptor."""

    args: tuple[str, ...]
    code_file: Path | None = None

    def run(self, python: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
        """Start the fresh interpreter and wait for it. The code file is opened here and handed down
        under the descriptor it has, so no descriptor of this process changes."""
        if self.code_file is None:
            return subprocess.run([python, *self.args], cwd=cwd, capture_output=True, check=False)  # noqa: S603
        with self.code_file.open("rb") as code:
            descriptor = code.fileno()
            return subprocess.run([python, *self.args, str(descriptor)], cwd=cwd,  # noqa: S603
                                  capture_output=True, check=False, pass_fds=(descriptor,))


def prepare(runner: str, program: str, folder: Path, name: str, key: bytes | None = None) -> Launch:
    """Write what ``runner`` needs to run ``program`` (the code Dify sends to the sandbox) into ``folder``."""
    if runner == "file":
        path = folder / f"{name}.py"
        path.write_text(program, encoding="utf-8")
        return Launch(("-I", "-S", str(path)))
    if runner == "sandbox-0.2.14":
        key = key or os.urandom(KEY_LENGTH)
        sealed = base64.b64encode(xor(program.encode("utf-8"), key)).decode("ascii")
        path = folder / f"{name}.py"
        path.write_text(XOR_PRESCRIPT.replace("{code}", sealed, 1), encoding="utf-8")
        return Launch(("-I", "-S", str(path), str(folder), base64.b64encode(key).decode("ascii")))
    if runner == "sandbox-0.2.15":
        code = folder / f"{name}.code"
        code.write_bytes(program.encode("utf-8"))
        bootstrap = folder / "bootstrap.py"
        if not bootstrap.exists():
            bootstrap.write_text(FD3_PRESCRIPT, encoding="utf-8")
        return Launch(("-I", "-S", str(bootstrap), str(folder)), code_file=code)
    raise ValueError(f"unknown runner {runner!r} (one of {', '.join(RUNNERS)})")
