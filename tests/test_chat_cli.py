"""``dskit chat`` against endpoints that fail: one line per failed turn, never a traceback, exit 1.

Issue 10 item 9: it printed graphon's tracebacks, exited 0 when every turn failed, and hung past 100 s
on a server sending one byte every 10 s (the timeout was per read). The shared model client bounds
each whole request by ``--deadline``.
"""

from __future__ import annotations

from dskit.tooling.cli import main
from evalkit import model
from fakes.openai_server import fake_openai


def test_a_dripping_server_fails_each_turn_at_the_deadline(capsys) -> None:
    with fake_openai(("drip", 0.05, "{}")) as fake:
        code = main(["chat", "--base-url", fake.base_url, "--model", "m", "--deadline", "0.4",
                     "--say", "你好", "--say", "帮我订个位子"])
        requests = len(fake.requests)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 1 and requests == 2  # one request a turn: a deadline is not retried
    assert len(lines) == 2 and all(line.startswith("[error] turn ") and "within 0.4 s" in line for line in lines)
    assert "Traceback" not in err + out and "助手" not in out


def test_an_endpoint_that_is_down_fails_every_turn_with_one_line_and_exit_1(capsys) -> None:
    code = main(["chat", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--retries", "0",
                 "--say", "你好", "--say", "在吗"])
    out, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in err
    assert err.count("[error] turn") == 2 and "cannot reach" in err


def test_http_errors_and_a_recovering_endpoint(capsys) -> None:
    """A 500 on the first turn (retries exhausted), then a working model: one error, then answers."""
    steps = [("status", 500, {"error": {"message": "model crashed"}})] * 2 + [("answer", model())]
    with fake_openai(*steps) as fake:
        code = main(["chat", "--base-url", fake.base_url, "--model", "m", "--retries", "1",
                     "--say", "在吗", "--say", "帮我订明天中午十二点的桌子，两位"])
    out, err = capsys.readouterr()
    assert code == 1 and err.count("[error]") == 1 and "HTTP 500: model crashed" in err
    assert out.count("助手 / assistant>") == 1 and "餐厅" in out


def test_a_working_model_exits_0(capsys) -> None:
    with fake_openai(("answer", model())) as fake:
        code = main(["chat", "--base-url", fake.base_url, "--model", "m", "--verbose",
                     "--say", "帮我订明天中午十二点的桌子，两位"])
    out, _ = capsys.readouterr()
    assert code == 0 and "next_action=ask_slot" in out and "llm_calls=1" in out
