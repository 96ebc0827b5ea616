"""The state's seal without OpenSSL: CPython's own SHA-2 gives the same digest, and an ordinary turn of
a sealing node no longer loads ``hashlib`` (libcrypto) or ``hmac`` in the sandbox (issue 22).

Why it matters: ``import hashlib`` cost about 2.5 ms of every sandbox run of the state, history,
context, summary and result nodes (a tenth of a bare node's start, ``dskit bench nodes --cold``). The
seal must stay the same digest, or every state stored before the upgrade would read as changed outside
the engine and its pending confirmation would be withdrawn.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dskit.state.integrity import DIGEST_CHARS, digest, seal, seal_of, seal_problem, sha256_hex
from dskit.tooling.generated import REPO_ROOT
from dskit.tooling.codegen.sandbox import dify_program, sandbox_python

SEALING_NODES = ("state", "history", "context", "summary", "result")
PROBE = "\nimport sys\nprint('LOADED', sorted(m for m in ('_hashlib', 'hashlib', 'hmac') if m in sys.modules))\n"


@given(st.binary(max_size=2000))
def test_the_digest_is_hashlibs(raw):
    assert sha256_hex(raw) == hashlib.sha256(raw).hexdigest()


def test_seals_written_before_stay_valid():
    """The plain seal is the first 24 hex digits of SHA-256 of the canonical JSON, as hashlib made it."""
    state = {"task_stack": [{"id": "t1", "name": "book_restaurant", "slots": {"time": "19:00", "people": 4}}],
             "done": [], "counters": {}, "next_task_seq": 2, "handoff": None, "offers": {}}
    canonical = json.dumps({key: state[key] for key in ("task_stack", "done", "counters", "next_task_seq",
                                                         "handoff", "offers")},
                           ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")
    assert seal_of(state) == hashlib.sha256(canonical).hexdigest()[:DIGEST_CHARS]
    keyed = hmac.new(b"s3cret", canonical, hashlib.sha256).hexdigest()[:DIGEST_CHARS]
    assert seal_of(state, "s3cret") == keyed


def test_a_seal_that_does_not_hold_is_still_found():
    state = {"task_stack": [{"id": "t1", "name": "weather", "slots": {}}], "done": [], "counters": {}}
    for secret in ("", "s3cret"):
        seal(state, secret)
        assert seal_problem(state, secret) == ""
        changed = dict(state, seal=state["seal"][:-1] + ("0" if state["seal"][-1] != "0" else "1"))
        assert "does not match" in seal_problem(changed, secret)
        assert "does not match" in seal_problem(dict(state, seal="封印" * 12), secret)  # non-ASCII: no crash
    assert digest({"a": 1}) != digest({"a": 1}, "s3cret")


def _loaded(node: str, inputs: dict, python: str) -> tuple[list[str], dict]:
    code = (REPO_ROOT / "code_nodes" / f"{node}.py").read_text(encoding="utf-8")
    done = subprocess.run([python, "-I", "-S", "-"], input=dify_program(code, inputs) + PROBE,
                          capture_output=True, text=True, check=True)
    result, _, probe = done.stdout.partition("<<RESULT>>")[2].partition("<<RESULT>>")
    return eval(probe.strip().removeprefix("LOADED "), {}), json.loads(result)  # a list literal we printed


@pytest.mark.parametrize("node", SEALING_NODES)
def test_an_ordinary_turn_loads_no_openssl(node):
    """Each sealing node's ordinary turn (the inputs of ``dskit bench nodes --cold``) in a fresh
    interpreter: neither hashlib nor hmac is imported; with a secret, the state node does import them."""
    import sys

    from dskit.tooling.bench.code_nodes import typical_inputs
    from dskit.tooling.codegen.code_nodes import node_script
    from dskit.tooling.codegen.nodespecs import spec_by_name
    from dskit.tooling.codegen.sandbox import main_in_process

    scripts = {name: main_in_process(node_script(spec_by_name(name)), f"seal_{name}") for name in ("state", "history")}
    inputs = typical_inputs(scripts)[node]
    loaded, outputs = _loaded(node, inputs, sys.executable)
    assert loaded == [], f"{node} loaded {loaded}"
    assert outputs  # the node ran and answered
    if node == "state":
        keyed, outputs = _loaded(node, inputs | {"state_secret": "s3cret"}, sys.executable)
        assert "hmac" in keyed and outputs["sys_context_str"]


def test_the_sandboxes_python_310_writes_the_same_seal():
    """dify-sandbox's Python 3.10 has ``_sha256`` where 3.12 has ``_sha2``: the state node seals alike."""
    import sys

    python = sandbox_python()
    if python is None:
        pytest.skip("no Python 3.10 interpreter here (dify-sandbox releases run 3.10; set DSKIT_SANDBOX_PYTHON)")
    from dskit.tooling.bench.code_nodes import typical_inputs
    from dskit.tooling.codegen.code_nodes import node_script
    from dskit.tooling.codegen.nodespecs import spec_by_name
    from dskit.tooling.codegen.sandbox import main_in_process

    scripts = {name: main_in_process(node_script(spec_by_name(name)), f"seal310_{name}") for name in ("state", "history")}
    inputs = typical_inputs(scripts)["state"]
    old, new = _loaded("state", inputs, python), _loaded("state", inputs, sys.executable)
    assert old[0] == [] and json.loads(old[1]["sys_context_str"])["seal"] == json.loads(new[1]["sys_context_str"])["seal"]
