"""The DSL commands from the command line: check-dsl, render, demo, chat (against a local fake
OpenAI-compatible server) and bench flow."""

from __future__ import annotations

import copy
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("graphon")

from dskit.tooling.cli import main  # noqa: E402
from dskit.tooling.dslbuild.builder import dump_yaml  # noqa: E402
from dskit.tooling.dslbuild.flows import build_fast  # noqa: E402


@pytest.fixture(scope="module")
def fast_doc() -> dict[str, Any]:
    return build_fast().to_dict()


def test_check_dsl_ok_and_broken(tmp_path: Path, fast_doc: dict, capsys: pytest.CaptureFixture) -> None:
    good = tmp_path / "good.yml"
    good.write_text(dump_yaml(fast_doc), encoding="utf-8")
    assert main(["check-dsl", str(good)]) == 0
    assert "ok" in capsys.readouterr().out
    broken_doc = copy.deepcopy(fast_doc)
    for node in broken_doc["workflow"]["graph"]["nodes"]:
        if node["id"] == "answer":
            node["data"]["answer"] = "{{#reply.text#}}"
    broken = tmp_path / "broken.yml"
    broken.write_text(dump_yaml(broken_doc), encoding="utf-8")
    assert main(["check-dsl", "--no-run", str(good), str(broken)]) == 1
    out = capsys.readouterr().out
    assert "answer: data.answer: reply.text is not an output of 'reply'" in out


def test_check_dsl_missing_file(tmp_path: Path) -> None:
    assert main(["check-dsl", str(tmp_path / "nope.yml")]) == 1


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_render(tmp_path: Path, fast_doc: dict, suffix: str) -> None:
    pytest.importorskip("matplotlib")
    source = tmp_path / "flow.yml"
    source.write_text(dump_yaml(fast_doc), encoding="utf-8")
    out = tmp_path / f"flow{suffix}"
    assert main(["render", str(source), "--out", str(out)]) == 0
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG") if suffix == ".png" else b"<svg" in data[:2000]


def test_render_refuses_other_formats(tmp_path: Path) -> None:
    assert main(["render", str(tmp_path / "x.yml"), "--out", str(tmp_path / "x.jpg")]) == 2


def test_demo_runs_seed000_with_recorded_outputs(capsys: pytest.CaptureFixture) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "录制" in out and "graphon" in out
    assert out.count("next_action") == 6
    assert "ask_slot" in out and "faq" in out and "confirm" in out and "execute" in out
    assert '"people": 2' in out and '"quiet": true' in out  # seed 000's last table row
    assert "餐厅：老地方粤菜馆" in out


def _answer(handler: BaseHTTPRequestHandler, content: str) -> None:
    """Send one chat completion with ``content`` (what both fake servers answer with)."""
    data = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


class _FakeOpenAI(BaseHTTPRequestHandler):
    """Answers like a model that follows our prompts: JSON for the understanding node, text otherwise."""

    calls: list[dict[str, Any]] = []

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        _ = format, args

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])).decode("utf-8"))
        type(self).calls.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
        user = body["messages"][-1]["content"].rstrip().splitlines()[-1]  # the latest message comes last
        if "rewritten_query" in system:  # the understanding node
            if "天气" in user:
                content = json.dumps({"rewritten_query": "查询北京天气",
                                      "commands": [{"type": "start_task", "task": "weather", "slots": {}}]})
            else:
                content = json.dumps({"rewritten_query": "北京", "commands": [
                    {"type": "set_slots", "slots": {"city": "北京"}}]})
        else:
            content = "好的。"
        _answer(self, content)


def test_chat_against_a_local_openai_compatible_server(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeOpenAI)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _FakeOpenAI.calls = []
    monkeypatch.setenv("DSKIT_TEST_KEY", "sk-test")
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/v1"
        code = main(["chat", "--base-url", base, "--model", "m1", "--api-key-env", "DSKIT_TEST_KEY",
                     "--say", "查天气", "--say", "北京", "--verbose"])
    finally:
        server.shutdown()
        server.server_close()
    assert code == 0
    out = capsys.readouterr().out
    assert "请问您想查询哪个城市的天气？" in out
    assert "「查询天气」" in out and "城市：北京" in out
    assert all(c["path"] == "/v1/chat/completions" and c["auth"] == "Bearer sk-test" for c in _FakeOpenAI.calls)
    assert {c["body"]["model"] for c in _FakeOpenAI.calls} == {"m1"}
    assert len(_FakeOpenAI.calls) == 2  # one understanding call a turn, nothing else


def test_bench_flow_json(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    import dskit.tooling.dslrun.scenarios as scenarios

    only = [s for s in scenarios.load_scenarios() if s.name == "seed000_booking"]
    monkeypatch.setattr(scenarios, "load_scenarios", lambda *a, **k: only)
    assert main(["bench", "flow", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    fast, classic = result["shared_turns"]["fast"], result["shared_turns"]["classic"]
    assert fast["turns"] == classic["turns"] == 5
    assert fast["llm_calls"] == {"mean": 1.0, "max": 1}
    assert classic["llm_calls"] == {"mean": 2.8, "max": 3}  # a yes needs no parameter extraction
    assert result["ratio_classic_over_fast"]["llm_calls"] == 2.8
    assert fast["failed_turns"] == classic["failed_turns"] == 0


def test_demo_without_graphon_says_what_to_install(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture) -> None:
    """`pip install -e .` without scripts/setup.sh leaves graphon out: one line, no traceback."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "graphon" else real(name, *a))
    assert main(["demo"]) == 2
    captured = capsys.readouterr()
    assert len(captured.err.strip().splitlines()) == 1 and "scripts/setup.sh" in captured.err
    assert "graphon" in captured.err and "Traceback" not in captured.err + captured.out


def test_demo_in_english_is_an_english_conversation(capsys: pytest.CaptureFixture) -> None:
    """`dskit demo --lang en`: the English example catalog through its English Chatflow, end to end."""
    import re

    assert main(["demo", "--lang", "en"]) == 0
    out = capsys.readouterr().out
    assert out.count("next_action") == 6
    assert "ask_slot" in out and "faq" in out and "confirm" in out and "execute" in out
    assert "Which restaurant would you like?" in out and "Please confirm: table booking" in out
    assert "minimum spend" in out and '"people": 2' in out and "restaurant: Old Town Cantonese" in out
    assert not re.search(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]", out)  # not one Chinese character


class _FakeEnglishModel(_FakeOpenAI):
    """Understands the bike-repair catalog's opening message; anything else is small talk."""

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])).decode("utf-8"))
        type(self).calls.append({"path": self.path, "body": body})
        system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
        if "rewritten_query" in system:
            content = json.dumps({"rewritten_query": "Is my bike ready? Ticket R1234", "commands": [
                {"type": "start_task", "task": "repair_status", "slots": {"ticket": "R1234"}}]})
        else:
            content = "Sure."
        _answer(self, content)


def test_chat_with_a_catalog_speaks_its_language(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture) -> None:
    """`dskit chat --catalog FILE`: the Chatflow built for the catalog, in its language."""
    catalog = Path(__file__).resolve().parents[1] / "examples" / "catalogs" / "bike_repair_en.json"
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeEnglishModel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _FakeEnglishModel.calls = []
    monkeypatch.setenv("DSKIT_TEST_KEY", "sk-test")
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/v1"
        code = main(["chat", "--catalog", str(catalog), "--base-url", base, "--model", "m1",
                     "--api-key-env", "DSKIT_TEST_KEY", "--say", "Is my bike ready? Ticket R1234"])
    finally:
        server.shutdown()
        server.server_close()
    assert code == 0
    out = capsys.readouterr().out
    assert out.startswith("assistant> ") and "Check a repair's status" in out, out
    assert "Hello" not in out and "助手" not in out
    understanding = _FakeEnglishModel.calls[0]["body"]["messages"]
    assert "book_repair" in json.dumps(understanding)  # the model was shown the bike-repair catalog


def test_chat_refuses_a_broken_catalog(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    broken = tmp_path / "c.json"
    broken.write_text('{"version": 1, "tasks": {}}', encoding="utf-8")
    assert main(["chat", "--catalog", str(broken), "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]) == 2
    err = capsys.readouterr().err
    assert "--catalog" in err and "problem" in err
