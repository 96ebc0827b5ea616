"""A new user's path — set-up, ``dskit demo``, ``dskit new CATALOG``, ``dskit chat --catalog`` — has no
step silent for more than 5 seconds (issue 21): the seconds each takes are shown step by step.

Counted, never timed: the steps a command reports (:data:`dskit.tooling.progress.LISTENERS`), and that
the work that took seconds in one piece is now several steps — each code node's sandbox checks and
compilation, graphon's import in parts, reading and writing the YAML. Measured on this machine (2 cores
shared with a model server) before and after: ``dskit new`` silent for 12.8 s, then at most 1.1 s;
``dskit demo`` 9.9 s, then 2.4 s; ``dskit chat --catalog`` about 10 s before its first answer without a
word, then at most 2.2 s; set-up 79 s (pip), then a line every 3 s.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from dskit.tooling import progress
from dskit.tooling.cli import main

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "examples" / "catalogs" / "bike_repair_en.json"


@pytest.fixture
def heard(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every (label, step) a command reports while the test runs."""
    seen: list[tuple[str, str]] = []
    monkeypatch.setattr(progress, "LISTENERS", [lambda label, what: seen.append((label, what))])
    return seen


@pytest.fixture
def unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget which code-node sources were checked already in this process (the first run does it all)."""
    from dskit.tooling.codegen import sandbox

    monkeypatch.setattr(sandbox, "_CHECKED", {})


def test_outside_a_terminal_a_dot_per_step_on_one_line(heard) -> None:
    out = io.StringIO()
    with progress.steps("fast: building and checking", stream=out) as step:
        for what in ("building", "writing", "reading"):
            step(what)
    assert out.getvalue() == "fast: building and checking….." + "\n"
    assert heard == [("fast: building and checking", w) for w in ("building", "writing", "reading")]


def test_a_quiet_block_prints_nothing_outside_a_terminal_but_is_counted(heard) -> None:
    out = io.StringIO()
    with progress.steps("助手 / assistant>", stream=out, plain=False) as step:
        step("asking the model: Understanding")
    assert out.getvalue() == "" and heard == [("助手 / assistant>", "asking the model: Understanding")]


def test_a_block_without_steps_prints_nothing() -> None:
    out = io.StringIO()
    with progress.steps("nothing to say", stream=out):
        pass
    assert out.getvalue() == ""


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_counted_run_is_silent_outside_a_terminal_but_heard(heard) -> None:
    out = io.StringIO()
    with progress.counted("bench flow", 2, stream=out) as bar:
        bar.begin("booking (fast)")
        bar.begin("booking (classic)")
        bar.done()
    assert out.getvalue() == ""
    assert heard == [("bench flow", "booking (fast)"), ("bench flow", "booking (classic)")]


def test_a_counted_run_draws_one_bar_on_a_terminal_and_quiet_silences_it() -> None:
    screen = _Terminal()
    with progress.counted("dskit eval", 3, stream=screen, transient=False) as bar:
        for name in ("a", "b", "c"):
            bar.done(name)
    assert "dskit eval" in screen.getvalue() and "3/3" in screen.getvalue()
    quiet = _Terminal()
    with progress.counted("dskit eval", 3, stream=quiet, quiet=True) as bar:
        bar.done("a")
    assert quiet.getvalue() == ""


def test_every_progress_bar_is_built_in_progress_py() -> None:
    """tooling/progress.py is the one place a rich progress display is built (it was built by hand in six)."""
    tooling = ROOT / "dskit" / "tooling"
    by_hand = [str(path.relative_to(ROOT)) for path in sorted(tooling.rglob("*.py"))
               if path.name != "progress.py" and re.search(r"\bProgress\(", path.read_text(encoding="utf-8"))]
    assert by_hand == []


@pytest.mark.slow  # checks the shipped Chatflow twice
def test_check_dsl_reports_each_code_node_and_each_sandbox_check(unchecked) -> None:
    """The check of a Chatflow is one step per part, and a code node's sandbox checks one step each:
    the engine's largest node (300 KB) took seconds in one piece."""
    import yaml

    from dskit.tooling.dslbuild.check import check_dsl

    text = (ROOT / "dsl" / "dialogue_chatflow.yml").read_text(encoding="utf-8")
    nodes = [n["data"] for n in yaml.safe_load(text)["workflow"]["graph"]["nodes"] if n["data"]["type"] == "code"]
    seen: list[str] = []
    assert check_dsl(text, progress=seen.append) == []
    assert seen[:2] == ["reading the YAML", "the graph, its references and templates"]
    assert seen[-1] == "models, layout and Dify's rules"
    reported = [w for w in seen if w.startswith("code node ") and ":" not in w]
    assert reported == [f"code node {n['title']}" for n in nodes]
    checks = ("Python 3.10 syntax", "imports", "f-string quotes", "names newer than Python 3.10")
    for check in checks:  # each distinct source checked afresh, every check a step of its own
        assert sum(w.endswith(f": {check}") for w in seen) == len({n["code"] for n in nodes})
    again: list[str] = []
    check_dsl(text, progress=again.append)  # checked already: one step a node, nothing to redo
    assert not [w for w in again if w.startswith("code node ") and ":" in w]


@pytest.mark.slow  # builds and checks three Chatflows
def test_dskit_new_reports_every_step_of_every_file(heard, unchecked, tmp_path: Path, capsys) -> None:
    assert main(["new", str(CATALOG), "--out", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    labels = list(dict.fromkeys(label for label, _ in heard))
    assert labels == [f"{layout}: building and checking" for layout in ("fast", "classic", "plugin")]
    for label in labels:
        steps = [what for lab, what in heard if lab == label]
        assert steps[:3] == ["building the Chatflow", "writing the YAML", "reading the YAML"]
        assert steps[-1] == "models, layout and Dify's rules"
    fast = [what for lab, what in heard if lab == labels[0]]
    import yaml  # noqa: PLC0415

    written = yaml.safe_load((tmp_path / "dialogue_chatflow.yml").read_text(encoding="utf-8"))
    code_nodes = [n for n in written["workflow"]["graph"]["nodes"] if n["data"]["type"] == "code"]
    assert len(code_nodes) >= 4  # the fast Chatflow's context, state, outcome and summary nodes
    assert len([w for w in fast if w.startswith("code node ") and ":" not in w]) == len(code_nodes)  # each one
    assert len([w for w in fast if w.endswith(": f-string quotes")]) == len(code_nodes)  # each node's checks, not one wait
    # outside a terminal: one line of dots per file, and the results on stdout as before
    assert err.count("building and checking…") == 3 and "ok (" in out


@pytest.mark.slow  # runs the demo conversation in graphon
def test_dskit_demo_shows_what_happens_before_its_first_turn(heard, unchecked, capsys) -> None:
    assert main(["demo"]) == 0
    out, err = capsys.readouterr()
    steps = [what for label, what in heard if label == "准备演示"]
    assert steps[:2] == ["building the Chatflow", "writing the YAML"]
    assert [w for w in steps if w.startswith("loading graphon")] == [
        f"loading graphon, Dify's workflow engine: {part}" for _, part in __import__(
            "dskit.tooling.dslrun.graphon", fromlist=["GRAPHON_PARTS"]).GRAPHON_PARTS]
    nodes = [w for w in steps if w.startswith("code node ") and ":" not in w]
    assert len(nodes) >= 3 and all(f"{node}: compiling" in steps for node in nodes)
    assert err.startswith("准备演示…") and out.count("next_action") == 6  # the demo itself unchanged


@pytest.mark.slow  # builds the Chatflow for a catalog and runs a turn in graphon
def test_dskit_chat_shows_its_preparation_and_what_each_turn_waits_for(heard, unchecked, capsys) -> None:
    """Against a replayed cassette that does not hold this conversation: each turn fails at once, after
    saying which model call it waited for."""
    code = main(["chat", "--catalog", str(CATALOG), "--model", "m", "--replay",
                 str(ROOT / "tests" / "cassettes" / "engine_qwen-1.5b.jsonl"), "--say", "Is my bike ready?"])
    out, err = capsys.readouterr()
    ready = [what for label, what in heard if label == "dskit chat: getting ready"]
    turn = [what for label, what in heard if label == "you>" or label == "assistant>"]
    assert code == 1 and ready[:2] == ["building the Chatflow", "writing the YAML"]
    assert "reading the Chatflow" in ready and any(w.startswith("loading graphon") for w in ready)
    assert any(w.endswith(": compiling") for w in ready)
    assert turn[0] == "running the Chatflow" and turn[1].startswith("asking the model: ")
    assert err.count("\n") == err.count("[error]") + err.count("warning:")  # a log gets no progress dots


def test_set_up_runs_every_slow_step_with_a_heartbeat() -> None:
    """scripts/setup.sh: the virtual environment and each pip install run through `step`, which shows the
    seconds and pip's latest line while they run (pip -q was silent for up to 80 s)."""
    script = (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8")
    body = script[script.index("PY=$(find_python)"):]
    commands = [line.strip() for line in body.splitlines() if re.search(r"-m (venv|pip)\b", line)]
    assert len(commands) == 4 and all(line.startswith("step ") or line.startswith(".venv/bin/python -m pip")
                                      for line in commands)
    steps = re.findall(r"^\s*step (\d) ", body, re.M)
    assert steps == ["1", "2", "3", "4"]
    for line in body.splitlines():
        if "pip install" in line and not line.strip().startswith(("step", "#", ".venv/bin/python -m pip")):
            pytest.fail(f"a pip install outside `step`: {line}")
    assert " -q" not in body  # pip's lines feed the heartbeat; they go to .venv/setup.log
    heartbeat = script[script.index("step() {"):script.index("PY=$(find_python)")]
    assert "sleep 1" in heartbeat and "% 3" in heartbeat and "tail -n 1" in heartbeat
