"""The tooling's one code-node runner: it behaves like Dify's sandbox, so tests catch what Dify rejects.

Everything that runs a pasted script goes through :func:`run_code_node`: the graphon harness (via
:class:`LocalCodeExecutor`), check-dsl's run on empty inputs, the code-node tests and ``dskit bench
nodes --process``. (``bench nodes`` times ``main`` in-process with :func:`main_in_process`.)

Dify runs a code node by appending a small driver to the pasted script (``main(**inputs)``, JSON dump
between ``<<RESULT>>`` tags), executing it in dify-sandbox (CPython, standard library only, 3.10 on
the releases most people run), then checking the result against the node's declared outputs. This
module reproduces each step: the same driver text, a separate interpreter started with ``-I -S`` (no
site-packages) in a temporary directory, an import guard, and the output checks of graphon's
``CodeNode`` with Dify's default limits (api/configs/feature: CODE_MAX_NUMBER etc.). Messages copy
graphon's wording so a failure here reads like the failure a user would see in Dify.

``strict=True`` (the default) is stricter than Dify in three ways that matter for our nodes: ``None``
is refused for a declared output, a declared boolean must be a real ``bool``, and NaN is refused.
Dify lets those through and the next node (an assigner writing a string variable) breaks instead.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import tokenize
import types
from base64 import b64encode
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from dskit.base.limits import CODE_MAX_STRING_LENGTH
from dskit.tooling.codegen.pythons import GONE_AFTER_310, NEWER_THAN_310

RESULT_TAG = "<<RESULT>>"
SCIENTIFIC_NOTATION = re.compile(r"^-?\d+\.?\d*e[+-]\d+$", re.IGNORECASE)
OUTPUT_TYPES = (
    "string",
    "number",
    "boolean",
    "object",
    "array[string]",
    "array[number]",
    "array[object]",
    "array[boolean]",
)


@dataclass(frozen=True)
class Limits:
    """Dify's code-node output limits (api/configs/feature defaults, same in graphon 0.8.0), with
    the string cap of the oldest Dify we support (dskit/base/limits.py: 80,000 in 1.8.0; 400,000 since
    Dify PR #26592), so that a pasted node that 1.8 would fail fails in our runner too."""

    max_string_length: int = CODE_MAX_STRING_LENGTH
    max_number: int = 9_223_372_036_854_775_807
    min_number: int = -9_223_372_036_854_775_807
    max_precision: int = 20
    max_depth: int = 5
    max_number_array_length: int = 1_000
    max_string_array_length: int = 30
    max_object_array_length: int = 30


DIFY_LIMITS = Limits()

# Standard-library modules dify-sandbox blocks (seccomp / restricted import): importing them either
# fails or kills the run, so a pasted script must not use them.
SANDBOX_BLOCKED = frozenset({"subprocess", "ctypes", "fcntl", "multiprocessing", "_posixsubprocess", "pty"})
# Attributes added after 3.10 that a script would silently depend on.
_NEWER_ATTRIBUTES = {
    "datetime": {"UTC"},
    "enum": {"StrEnum", "verify", "ReprEnum", "EnumCheck", "global_enum", "member", "nonmember"},
    "typing": {"Self", "override", "LiteralString", "Never", "assert_never", "reveal_type", "Required",
               "NotRequired", "TypeVarTuple", "Unpack", "assert_type", "dataclass_transform", "TypeAliasType",
               "get_overloads", "clear_overloads"},
    "itertools": {"batched"},
    "hashlib": {"file_digest"},
    "asyncio": {"TaskGroup", "timeout", "Runner"},
    "contextlib": {"chdir"},
    "operator": {"call"},
    "math": {"cbrt", "exp2", "sumprod"},
}


def portable_stdlib() -> frozenset[str]:
    """Top-level module names a pasted script may import: in the stdlib of 3.10 and of this Python."""
    return frozenset(sys.stdlib_module_names) - NEWER_THAN_310


class CodeNodeError(Exception):
    """A code node failed the way it would fail in Dify; ``message`` names the field or import."""

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail


# --------------------------------------------------------------------------------------------------
# Static checks (before running)
# --------------------------------------------------------------------------------------------------

def check_source(code: str, progress: Callable[[str], None] | None = None) -> list[str]:
    """Every reason Dify's sandbox would refuse ``code`` before it runs; empty when it looks fine.

    Checks: Python 3.10 syntax, no relative import, imports only from the portable standard library
    and not from modules the sandbox blocks, no 3.11+ attributes, a top-level ``main`` function.
    ``progress`` is told each check as it begins (an engine node of 300 KB takes seconds).
    """
    step = progress or (lambda _what: None)
    step("Python 3.10 syntax")
    try:
        tree = ast.parse(code, feature_version=(3, 10))
    except SyntaxError as error:
        return [f"syntax error (Python 3.10): {error.msg} (line {error.lineno})"]
    step("imports")
    problems = _import_problems(tree)
    step("f-string quotes")
    problems += _fstring_quote_problems(code)
    step("names newer than Python 3.10")
    problems += _newer_attribute_problems(tree)
    problems += _regex_problems(tree)
    if not any(isinstance(node, ast.FunctionDef) and node.name == "main" for node in tree.body):
        problems.append("no top-level function `main`: Dify calls main(**inputs)")
    problems += _deferred_problems(tree)
    return problems


def _deferred_problems(tree: ast.Module) -> list[str]:
    """The same checks on each function kept as text to compile on first call (codegen/deferred.py)."""
    from dskit.tooling.codegen.deferred import deferred_sources  # noqa: PLC0415

    problems: list[str] = []
    for name, text in deferred_sources(tree).items():
        source = ("if 1:" + text) if "." in name else text
        try:
            inner = ast.parse(source, feature_version=(3, 10))
        except SyntaxError as error:
            problems.append(f"deferred `{name}`: syntax error (Python 3.10): {error.msg} (line {error.lineno})")
            continue
        for problem in (_import_problems(inner) + _fstring_quote_problems(source) + _newer_attribute_problems(inner)
                        + _regex_problems(inner)):
            problems.append(f"deferred `{name}`: {problem}")
    return problems


def _guarded_imports(tree: ast.AST) -> set[int]:
    """The import statements (their ``id``) made directly in the body of a ``try`` whose ``except``
    catches ImportError (or ModuleNotFoundError) and imports something else: where a module that only
    one of the sandbox's Pythons has can be tried, because its absence falls back."""
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try):
            continue
        for handler in node.handlers:
            caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
            falls_back = any(isinstance(inner, (ast.Import, ast.ImportFrom)) for inner in ast.walk(handler))
            if falls_back and any(isinstance(name, ast.Name) and name.id in ("ImportError", "ModuleNotFoundError")
                                  for name in caught):
                guarded.update(id(stmt) for stmt in node.body if isinstance(stmt, (ast.Import, ast.ImportFrom)))
    return guarded


def _import_problems(tree: ast.AST) -> list[str]:
    """Refuse relative imports and anything outside the portable, unblocked standard library (a module
    only one of 3.10 and 3.12 has is let through where its absence falls back: :func:`_guarded_imports`)."""
    allowed = portable_stdlib()
    guarded = _guarded_imports(tree)
    problems: list[str] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                problems.append(f"line {node.lineno}: relative import `from {'.' * node.level}{node.module or ''}`"
                                " (a code node is one self-contained file)")
                continue
            names = [node.module or ""]
        for name in names:
            top = name.partition(".")[0]
            if top in SANDBOX_BLOCKED:
                problems.append(f"line {node.lineno}: import of '{top}' is blocked by Dify's sandbox")
            elif top not in allowed and not (id(node) in guarded and top in NEWER_THAN_310 | GONE_AFTER_310):
                problems.append(f"line {node.lineno}: import of '{top}' is not allowed: "
                                "code nodes may import the Python 3.10 standard library only")
    return problems


def _fstring_quote_problems(code: str) -> list[str]:
    """Python 3.12 lets an f-string reuse its own quote inside ``{}``; 3.10 does not parse that."""
    if not hasattr(tokenize, "FSTRING_START"):
        return []
    problems: list[str] = []
    stack: list[str] = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return []
    for tok in tokens:
        if tok.type in (tokenize.STRING, tokenize.FSTRING_START):
            quote = _quote_of(tok.string)
            if stack and any(quote[0] == outer[0] for outer in stack):
                problems.append(f"line {tok.start[0]}: f-string reuses its quote character inside {{}}"
                                " (needs Python 3.12; the sandbox may run 3.10)")
            if tok.type == tokenize.FSTRING_START:
                stack.append(quote)
        elif tok.type == tokenize.FSTRING_END and stack:
            stack.pop()
    return problems


def _quote_of(token_text: str) -> str:
    """The opening quote of a string token, prefix letters stripped."""
    body = token_text.lstrip("rRbBuUfF")
    return body[:3] if body[:3] in ('"""', "'''") else body[:1]


def _newer_attribute_problems(tree: ast.AST) -> list[str]:
    """Flag ``from typing import Self`` / ``datetime.UTC``-style uses of post-3.10 names."""
    problems: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in _NEWER_ATTRIBUTES:
            for alias in node.names:
                if alias.name in _NEWER_ATTRIBUTES[node.module]:
                    problems.append(f"line {node.lineno}: {node.module}.{alias.name} is newer than Python 3.10")
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
              and node.attr in _NEWER_ATTRIBUTES.get(node.value.id, ())):
            problems.append(f"line {node.lineno}: {node.value.id}.{node.attr} is newer than Python 3.10")
    return problems


_RE_FUNCTIONS = {"compile", "search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer"}


def _folded_string(node: ast.AST | None, names: dict[str, ast.AST], depth: int = 0) -> str | None:
    """A string expression made of literals and module-level string constants, else None."""
    if depth > 20:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return _folded_string(names[node.id], names, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = _folded_string(node.left, names, depth + 1)
        right = _folded_string(node.right, names, depth + 1)
        return None if left is None or right is None else left + right
    return None


def regex_310_problem(pattern: str) -> str:
    """Regex syntax Python 3.11 added (possessive quantifiers, atomic groups): 3.10 raises re.error."""
    index, in_class = 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if pattern[index + 1: index + 2] == "]" or pattern[index + 1: index + 3] == "^]":
                index += 2 if pattern[index + 1] == "]" else 3
                continue
        elif pattern.startswith("(?>", index):
            return "atomic group (?>...)"
        elif char in "*+?" and pattern[index + 1: index + 2] == "+" and index > 0 and pattern[index - 1] not in "(|":
            return f"possessive quantifier {char}+"
        elif char == "}" and pattern[index + 1: index + 2] == "+" and re.search(r"\{\d*,?\d*$", pattern[:index]):
            return "possessive quantifier }+"
        index += 1
    return ""


def _regex_problems(tree: ast.AST) -> list[str]:
    """Regex literals passed to ``re`` functions that Python 3.10's re module cannot compile."""
    problems: list[str] = []
    names = {stmt.targets[0].id: stmt.value for stmt in getattr(tree, "body", [])
             if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "_LazyPattern" \
                and len(node.args) >= 2:  # the bundler's deferred re.compile(pattern): name, then pattern
            argument = node.args[1]
        elif not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                  and node.func.attr in _RE_FUNCTIONS):
            continue
        else:
            argument = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "pattern"), None)
        pattern = _folded_string(argument, names)
        problem = regex_310_problem(pattern) if pattern is not None else ""
        if problem:
            problems.append(f"line {node.lineno}: regex uses a {problem} (Python 3.11+; the sandbox may run 3.10)")
    return problems


# --------------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------------

# Started as ``python -I -S -c BOOTSTRAP``: reads {"path", "driver", "allowed", "restricted"} on
# stdin, installs an import guard, runs the pasted script as the ``__main__`` module (as
# dify-sandbox runs a file), then Dify's driver in that module's namespace: together exactly the
# program :func:`dify_program` shows. Loading the script from a file lets Python cache its bytecode:
# an engine node is 90-180 KB, and compiling it on every run would dominate long graphon suites.
#
# ``restricted`` (for code we did not write: ``check-dsl --run-code`` on a downloaded file) reads and
# compiles the script first, then installs Dify's sandbox restrictions before any of it runs: the
# script's own imports of os, subprocess, sockets and the like fail, and an audit hook (PEP 578,
# which the script cannot remove) refuses process creation, network, ctypes, file-system changes,
# directory listings, loading the C modules behind processes and sockets, and opening any file
# outside the standard library, whatever path the script takes to reach them. The parent adds
# resource limits (no files written, no new processes, memory, CPU).
_BOOTSTRAP = r"""
import sys, json
_dskit_boot = json.loads(sys.stdin.buffer.read().decode("utf-8"))
class _DskitImportGuard:
    allowed = frozenset(_dskit_boot["allowed"]) | frozenset(sys.stdlib_module_names)
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        top = name.partition(".")[0]
        if top not in cls.allowed:
            raise ImportError("import of '%s' is not allowed: code nodes may import the standard library only" % top)
        return None
sys.meta_path.insert(0, _DskitImportGuard)
if _dskit_boot.get("restricted"):
    import builtins, os, types
    with open(_dskit_boot["path"], encoding="utf-8") as _dskit_file:
        _dskit_code = compile(_dskit_file.read(), _dskit_boot["path"], "exec")
    _dskit_driver = compile(_dskit_boot["driver"], "<dify-driver>", "exec")
    _dskit_roots = (os.path.realpath(os.path.dirname(os.__file__)) + os.sep,)
    _dskit_blocked_modules = frozenset(_dskit_boot["blocked"])
    _dskit_never_loaded = frozenset(_dskit_boot["never_loaded"])
    _dskit_blocked_events = frozenset(_dskit_boot["events"])
    _dskit_write = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    def _dskit_refuse(what):
        raise PermissionError("refused by check-dsl's sandbox (as in Dify's): " + what)
    def _dskit_audit(event, args):
        if event in _dskit_blocked_events or event.startswith(("socket.", "ctypes.", "subprocess.", "shutil.")):
            _dskit_refuse(event)
        if event == "import" and str(args[0]).partition(".")[0] in _dskit_never_loaded:
            _dskit_refuse("loading " + str(args[0]))
        if event == "open":
            path, mode, flags = (list(args) + [None, None, 0])[:3]
            if isinstance(mode, str) and any(c in mode for c in "wax+") or (flags or 0) & _dskit_write:
                _dskit_refuse("opening a file for writing")
            _dskit_inside(path, "reading ")
        if event in ("os.listdir", "os.scandir"):
            _dskit_inside(args[0] if args else ".", "listing ")
    def _dskit_inside(path, what):
        if isinstance(path, (str, bytes)):
            real = os.path.realpath(os.fsdecode(path)) + os.sep
            if not real.startswith(_dskit_roots):
                _dskit_refuse(what + real.rstrip(os.sep))
        elif path is None:
            _dskit_refuse(what + "the working directory")
    _dskit_import = builtins.__import__
    def _dskit_guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        if (globals or {}).get("__name__") == "__main__" and name.partition(".")[0] in _dskit_blocked_modules:
            raise ImportError("import of '%s' is refused by check-dsl's sandbox (Dify's sandbox forbids it)"
                              % name.partition(".")[0])
        return _dskit_import(name, globals, locals, fromlist, level)
    _dskit_main = types.ModuleType("__main__")
    _dskit_main.__file__ = _dskit_boot["path"]
    sys.modules["__main__"] = _dskit_main
    builtins.__import__ = _dskit_guarded_import
    sys.addaudithook(_dskit_audit)
    del _dskit_file, _dskit_boot
    exec(_dskit_code, _dskit_main.__dict__)
    exec(_dskit_driver, _dskit_main.__dict__)
else:
    import importlib.util
    _dskit_spec = importlib.util.spec_from_file_location("__main__", _dskit_boot["path"])
    _dskit_main = importlib.util.module_from_spec(_dskit_spec)
    sys.modules["__main__"] = _dskit_main
    _dskit_spec.loader.exec_module(_dskit_main)
    exec(compile(_dskit_boot["driver"], "<dify-driver>", "exec"), _dskit_main.__dict__)
"""

# What a restricted run refuses. Modules: a script importing one of these directly fails at once,
# as in dify-sandbox. Audit events (https://docs.python.org/3/library/audit_events.html): every
# socket.*, ctypes.*, subprocess.* and shutil.* event, plus these.
RESTRICTED_MODULES = frozenset({
    "os", "posix", "nt", "subprocess", "_posixsubprocess", "socket", "_socket", "ssl", "select", "selectors",
    "asyncio", "ctypes", "_ctypes", "multiprocessing", "_multiprocessing", "pty", "fcntl", "signal", "resource",
    "shutil", "tempfile", "glob", "pathlib", "urllib", "http", "ftplib", "smtplib", "poplib", "imaplib",
    "telnetlib", "xmlrpc", "webbrowser", "mmap", "sqlite3", "_sqlite3", "importlib", "runpy", "code", "pdb",
})
RESTRICTED_EVENTS = frozenset({
    "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "os.kill", "os.killpg",
    "os.startfile", "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.chdir",
    "os.link", "os.symlink", "os.truncate", "os.utime", "os.putenv", "os.unsetenv", "os.listxattr",
    "os.setxattr", "os.removexattr", "os.chflags", "os.lchflags", "os.mkfifo",
    "os.mknod", "pty.spawn", "glob.glob", "glob.glob/2", "sqlite3.connect", "urllib.Request", "http.client.connect",
    "ftplib.connect", "smtplib.connect", "poplib.connect", "imaplib.open", "telnetlib.Telnet.open",
    "webbrowser.open", "mmap.__new__", "resource.setrlimit", "sys.remote_exec",
})
# Modules a restricted run never loads, whoever asks (none of them is needed by json, re, dataclasses
# or typing): the C parts of processes, sockets and ctypes, which a script could otherwise reach
# through ``__import__`` without naming them in an import statement.
NEVER_LOADED = frozenset({"_posixsubprocess", "subprocess", "_socket", "socket", "_ssl", "ssl", "_ctypes", "ctypes",
                          "_multiprocessing", "multiprocessing", "pty", "_sqlite3", "mmap"})
# Resource limits of a restricted run (seconds of CPU are the timeout's).
RESTRICTED_MEMORY_BYTES = 1 << 30


def dify_driver(inputs: Mapping[str, Any]) -> str:
    """The python3 driver Dify appends to a pasted script (graphon's text): call main, print the JSON."""
    payload = b64encode(json.dumps(dict(inputs), ensure_ascii=False).encode("utf-8")).decode("utf-8")
    return "\n".join([
        "import json",
        "from base64 import b64decode",
        "",
        f"inputs_obj = json.loads(b64decode('{payload}').decode('utf-8'))",
        "output_obj = main(**inputs_obj)",
        "output_json = json.dumps(output_obj, indent=4)",
        f"result = f\'\'\'{RESULT_TAG}{{output_json}}{RESULT_TAG}\'\'\'",
        "print(result)",
        "",
    ])


def dify_program(code: str, inputs: Mapping[str, Any]) -> str:
    """The script Dify actually runs: the pasted code plus its python3 driver."""
    return code.rstrip() + "\n\n" + dify_driver(inputs)


def run_code_node(
    code: str,
    inputs: Mapping[str, Any],
    outputs: Mapping[str, str] | None = None,
    *,
    timeout: float = 15.0,
    python: str | None = None,
    strict: bool = True,
    limits: Limits = DIFY_LIMITS,
    restricted: bool = False,
) -> dict[str, Any]:
    """Run ``main(**inputs)`` of a pasted code node the way Dify does and return its checked outputs.

    ``outputs`` maps each declared output to its Dify type; ``None`` skips the output checks (graphon
    does them itself when it calls :class:`LocalCodeExecutor`). ``python`` picks another interpreter,
    e.g. a 3.10 one to match the sandbox. ``restricted`` runs code we did not write under Dify's
    sandbox restrictions (see ``_BOOTSTRAP``). Raises :class:`CodeNodeError` on any refusal or failure.
    """
    problems = checked_source(code)
    if problems:
        raise CodeNodeError(problems[0], "\n".join(problems))
    try:
        json.dumps(dict(inputs), ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError) as error:  # UnicodeEncodeError: Dify's orjson refuses lone surrogates too
        raise CodeNodeError(f"inputs are not JSON-serialisable: {error}") from error
    stdout = _run_process(_cached_script(code), dify_driver(inputs), python or sys.executable, timeout,
                          restricted=restricted)
    result = parse_result(stdout)
    if outputs is None:
        return result
    return check_outputs(result, outputs, strict=strict, limits=limits)


_CHECKED: dict[str, tuple[str, ...]] = {}  # check_source by text, the most recent 64
_CHECKED_LOCK = threading.Lock()


def checked_source(code: str, progress: Callable[[str], None] | None = None) -> tuple[str, ...]:
    """:func:`check_source`, once per distinct text (the same engine node runs again and again);
    ``progress`` hears each check of a text not checked yet."""
    found = _CHECKED.get(code)
    if found is None:
        found = tuple(check_source(code, progress))
        with _CHECKED_LOCK:
            _CHECKED[code] = found
            while len(_CHECKED) > 64:
                del _CHECKED[next(iter(_CHECKED))]
    return found


def prepare_code_node(code: str, progress: Callable[[str], None] | None = None, *, python: str | None = None) -> None:
    """Do now, step by step, what the first run of ``code`` would do silently: check its source as
    the sandbox does, and compile the script's bytecode (kept beside it, so every later run starts from
    it; only for this interpreter, whose bytecode it is). A problem is left for the run to report."""
    checked_source(code, progress)
    if python not in (None, sys.executable):
        return
    if progress is not None:
        progress("compiling")
    import importlib.util  # noqa: PLC0415
    import py_compile  # noqa: PLC0415

    path = _cached_script(code)
    with contextlib.suppress(py_compile.PyCompileError, OSError):
        py_compile.compile(path, cfile=importlib.util.cache_from_source(path), doraise=True)


def _cached_script(code: str) -> str:
    """Path of a file holding ``code``, written once per distinct text (atomically: runs share it)."""
    digest = hashlib.sha256(code.encode("utf-8")).hexdigest()[:24]
    directory = Path(tempfile.gettempdir()) / f"dskit-code-nodes-{os.getuid()}"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"dskit_node_{digest}.py"
    if not path.exists():
        fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(code)
        os.replace(tmp, path)
    return str(path)


def _run_process(path: str, driver: str, python: str, timeout: float, *, restricted: bool = False) -> str:
    """Run script + driver in a fresh isolated interpreter in a temporary directory; return stdout."""
    request: dict[str, Any] = {"path": path, "driver": driver, "allowed": sorted(portable_stdlib())}
    if restricted:
        request |= {"restricted": True, "blocked": sorted(RESTRICTED_MODULES), "events": sorted(RESTRICTED_EVENTS),
                    "never_loaded": sorted(NEVER_LOADED)}
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONIOENCODING": "utf-8", "LANG": "C.UTF-8"}
    with tempfile.TemporaryDirectory(prefix="dskit-node-") as cwd:
        try:
            done = subprocess.run(  # noqa: S603 - a chosen interpreter on a checked script
                [python, "-I", "-S", "-c", _BOOTSTRAP],
                input=json.dumps(request).encode("utf-8"), capture_output=True, cwd=cwd, env=env,
                timeout=timeout, check=False,
                preexec_fn=_restricted_limits(timeout) if restricted else None,  # noqa: PLW1509
            )
        except subprocess.TimeoutExpired as error:
            raise CodeNodeError(f"code node timed out after {timeout:g} s") from error
    stderr = done.stderr.decode("utf-8", "replace")
    if done.returncode != 0:
        last = next((line for line in reversed(stderr.strip().splitlines()) if line.strip()), "")
        raise CodeNodeError(f"error: {last or f'exit status {done.returncode}'}", stderr)
    return done.stdout.decode("utf-8", "replace")


def _restricted_limits(timeout: float) -> Callable[[], None]:
    """Resource limits applied in the child before it starts: no file written, no new process, bounded
    memory and CPU (root is exempt from the process limit; the audit hook covers that case)."""
    def apply() -> None:
        import resource  # noqa: PLC0415 - POSIX only, and only in the child

        cpu = max(1, int(timeout) + 1)
        for limit, value in ((resource.RLIMIT_FSIZE, 0), (resource.RLIMIT_NPROC, 0),
                             (resource.RLIMIT_AS, RESTRICTED_MEMORY_BYTES), (resource.RLIMIT_CPU, cpu)):
            try:
                resource.setrlimit(limit, (value, value))
            except (ValueError, OSError):
                pass
    return apply


def main_in_process(code: str, name: str) -> Callable[..., dict[str, Any]]:
    """``main`` of a pasted script loaded into this interpreter, for ``dskit bench nodes`` only.

    No isolation and no checks: it measures the time ``main`` itself takes, without the interpreter
    start a sandbox run adds. Anything that must behave like Dify uses :func:`run_code_node`.
    """
    module = types.ModuleType(f"_dskit_bench_{name}")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(code, f"<code-node {name}>", "exec"), module.__dict__)  # noqa: S102 - our generated script
    return module.__dict__["main"]


def parse_result(stdout: str) -> dict[str, Any]:
    """Extract the tagged JSON result as Dify does, including its scientific-notation conversion."""
    match = re.search(rf"{RESULT_TAG}(.*){RESULT_TAG}", stdout, re.DOTALL)
    if not match:
        raise CodeNodeError(f"Failed to parse result: no result tag found in response. Response: {stdout[:200]}...")
    try:
        result = json.loads(match.group(1))
    except json.JSONDecodeError as error:
        raise CodeNodeError(f"Failed to parse JSON response: {error}.") from error
    if not isinstance(result, dict):
        raise CodeNodeError(f"Result must be a dict, got {type(result).__name__}")
    return _convert_scientific(result)


def _convert_scientific(value: Any) -> Any:
    """Dify turns any string that looks like ``1e+5`` into a float before checking types."""
    if isinstance(value, str) and SCIENTIFIC_NOTATION.match(value):
        try:
            return float(value)
        except ValueError:
            return value
    if isinstance(value, dict):
        return {key: _convert_scientific(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_convert_scientific(inner) for inner in value]
    return value


# --------------------------------------------------------------------------------------------------
# Output checks (graphon CodeNode._transform_result, Dify's messages)
# --------------------------------------------------------------------------------------------------

def check_outputs(
    result: Mapping[str, Any],
    outputs: Mapping[str, str],
    *,
    strict: bool = True,
    limits: Limits = DIFY_LIMITS,
) -> dict[str, Any]:
    """Check a result against declared outputs; return it normalised as Dify would store it."""
    checker = _Checker(limits, strict)
    for name, kind in outputs.items():
        if kind not in OUTPUT_TYPES:
            raise CodeNodeError(f"Output type {kind} is not supported.")
    checked: dict[str, Any] = {}
    for name, kind in outputs.items():
        if name not in result:
            raise CodeNodeError(f"Output {name} is missing.")
        checked[name] = checker.typed(result[name], kind, name, depth=1)
    extra = sorted(set(result) - set(outputs))
    if extra:
        raise CodeNodeError(f"Not all output parameters are validated. Undeclared output `{extra[0]}`.")
    return checked


class _Checker:
    """One validation pass; holds the limits and strictness."""

    def __init__(self, limits: Limits, strict: bool) -> None:
        self.limits = limits
        self.strict = strict

    def typed(self, value: Any, kind: str, path: str, depth: int) -> Any:
        if value is None:
            if self.strict:
                raise CodeNodeError(f"Output {path} is None; a declared {kind} output needs a value.")
            return None
        if kind == "string":
            if not isinstance(value, str):
                raise CodeNodeError(f"Output {path} must be a string, got {type(value).__name__} instead.")
            return self.string(value, path)
        if kind == "number":
            if not isinstance(value, (int, float)):
                raise CodeNodeError(f"Output {path} is not a number, got {type(value)} instead.")
            return int(value) if isinstance(value, bool) else self.number(value, path)
        if kind == "boolean":
            if self.strict and not isinstance(value, bool):
                raise CodeNodeError(f"Output {path} must be a boolean, got {type(value).__name__} instead.")
            return value
        if kind == "object":
            if not isinstance(value, dict):
                raise CodeNodeError(f"Output {path} is not an object, got {type(value)} instead.")
            return self.untyped_object(value, path, depth + 1)
        return self.array(value, kind[len("array["):-1], path, depth)

    def string(self, value: str, path: str) -> str:
        if len(value) > self.limits.max_string_length:
            raise CodeNodeError(f"The length of output variable `{path}` must be"
                                f" less than {self.limits.max_string_length} characters")
        return value.replace("\x00", "")

    def number(self, value: int | float, path: str) -> int | float:
        if isinstance(value, float) and math.isnan(value) and self.strict:
            raise CodeNodeError(f"Output variable `{path}` is NaN.")
        if value > self.limits.max_number or value < self.limits.min_number:
            raise CodeNodeError(f"Output variable `{path}` is out of range, it must be between "
                                f"{self.limits.min_number} and {self.limits.max_number}.")
        if isinstance(value, float) and math.isfinite(value):
            exponent = Decimal(str(value)).normalize().as_tuple().exponent
            precision = -exponent if isinstance(exponent, int) and exponent < 0 else 0
            if precision > self.limits.max_precision:
                raise CodeNodeError(f"Output variable `{path}` has too high precision,"
                                    f" it must be less than {self.limits.max_precision} digits.")
        return value

    def array(self, value: Any, item: str, path: str, depth: int) -> list[Any]:
        if not isinstance(value, list):
            raise CodeNodeError(f"Output {path} is not an array, got {type(value)} instead.")
        cap = {"string": self.limits.max_string_array_length, "number": self.limits.max_number_array_length,
               "object": self.limits.max_object_array_length}.get(item)
        if cap is not None and len(value) > cap:
            raise CodeNodeError(f"The length of output variable `{path}` must be less than {cap} elements.")
        out: list[Any] = []
        for index, inner in enumerate(value):
            inner_path = f"{path}[{index}]"
            if item == "number" and (inner is None or not isinstance(inner, (int, float))):
                raise CodeNodeError(f"The element at index {index} of output variable `{path}` must be a number.")
            if inner is None:
                out.append(None)
                continue
            if item == "string" and not isinstance(inner, str):
                raise CodeNodeError(f"Output {inner_path} must be a string, got {type(inner).__name__} instead.")
            if item == "boolean" and not isinstance(inner, bool):
                raise CodeNodeError(f"Output {inner_path} is not a boolean, got {type(inner)} instead.")
            if item == "object" and not isinstance(inner, dict):
                raise CodeNodeError(f"Output {inner_path} is not an object, got {type(inner)} instead "
                                    f"at index {index}.")
            out.append(self.typed(inner, item, inner_path, depth) if item != "object"
                       else self.untyped_object(inner, inner_path, depth + 1))
        return out

    def untyped_object(self, value: dict[str, Any], path: str, depth: int) -> dict[str, Any]:
        """An object output without a schema: every value checked by its own type, depth-limited."""
        if depth > self.limits.max_depth:
            raise CodeNodeError(f"Depth limit {self.limits.max_depth} reached, object too deep.")
        for key, inner in value.items():
            self.untyped(inner, f"{path}.{key}", depth)
        return value

    def untyped(self, value: Any, path: str, depth: int) -> None:
        if value is None or isinstance(value, bool):
            return
        if isinstance(value, dict):
            self.untyped_object(value, path, depth + 1)
        elif isinstance(value, (int, float)):
            self.number(value, path)
        elif isinstance(value, str):
            self.string(value, path)
        elif isinstance(value, list):
            self.untyped_list(value, path, depth)
        else:
            raise CodeNodeError(f"Output {path} is not a valid type.")

    def untyped_list(self, value: list[Any], path: str, depth: int) -> None:
        first = next((inner for inner in value if inner is not None), None)
        if first is None:
            return
        for kind in ((int, float), (str,), (dict,), (list,)):
            if isinstance(first, kind) and all(inner is None or isinstance(inner, kind) for inner in value):
                for index, inner in enumerate(value):
                    if inner is not None:
                        self.untyped(inner, f"{path}[{index}]", depth + (1 if kind in ((dict,), (list,)) else 0))
                return
        raise CodeNodeError(f"Output {path} is not a valid array. make sure all elements are of the same type.")


# --------------------------------------------------------------------------------------------------
# graphon adapter
# --------------------------------------------------------------------------------------------------

class LocalCodeExecutor:
    """graphon ``CodeExecutorProtocol`` backed by :func:`run_code_node`, replacing the HTTP sandbox.

    Use: ``monkeypatch.setattr(graphon.dsl.node_factory, "SandboxCodeExecutor", LocalCodeExecutor)``.
    graphon's CodeNode validates outputs itself, so ``execute`` only runs and parses, like the sandbox.
    It counts calls (``calls``) so tests can assert how often code ran.
    """

    def __init__(self, settings: object | None = None, *, timeout: float = 30.0, python: str | None = None) -> None:
        self.settings = settings
        self.timeout = timeout
        self.python = python
        self.calls = 0

    def execute(self, *, language: object, code: str, inputs: Mapping[str, Any]) -> Mapping[str, Any]:
        """Run python3 code; anything else is refused as the sandbox would."""
        name = str(getattr(language, "value", language))
        if name != "python3":
            raise CodeNodeError(f"Unsupported language {name}")
        self.calls += 1
        plain = json.loads(json.dumps(dict(inputs), default=_segment_default))
        return run_code_node(code, plain, None, timeout=self.timeout, python=self.python)

    def is_execution_error(self, error: Exception) -> bool:
        return isinstance(error, CodeNodeError)

    def prepare(self, code: str, progress: Callable[[str], None] | None = None) -> None:
        """What the first run of ``code`` would do before running it (:func:`prepare_code_node`)."""
        prepare_code_node(code, progress, python=self.python)


def _segment_default(value: Any) -> Any:
    """Serialise graphon segments/files the way graphon's ``dumps_with_segments`` does, roughly."""
    for attribute in ("to_object", "model_dump", "to_dict"):
        method = getattr(value, attribute, None)
        if callable(method):
            return method()
    return str(value)


def sandbox_python() -> str | None:
    """A working Python 3.10 interpreter on this machine (the sandbox's version), or ``None``.

    Looks at ``DSKIT_SANDBOX_PYTHON``, pyenv's versions, then ``python3.10`` on PATH; each candidate
    is asked for its version, because a pyenv shim exists even when it cannot run.
    """
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates = [os.environ.get("DSKIT_SANDBOX_PYTHON", "")]
    candidates += [str(path) for path in sorted(pyenv_root.glob("versions/3.10*/bin/python3.10"))]
    candidates.append(shutil.which("python3.10") or "")
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK) and _is_python310(candidate):
            return candidate
    return None


def _is_python310(python: str) -> bool:
    try:
        done = subprocess.run([python, "-I", "-S", "-c", "import sys; print(sys.version_info[:2])"],
                              capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and done.stdout.strip() == b"(3, 10)"
