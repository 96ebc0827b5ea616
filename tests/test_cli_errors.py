"""The CLI's error messages say what went wrong in words a user can act on (issue 21).

A catalog given to ``render``, a mistyped option, an endpoint that is down: each used to print
something beside the point (a bare ``'workflow'``, the top-level usage, a table of dashes).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dskit.tooling.cli import main

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "examples" / "catalogs" / "restaurant.json"
SUITE = ROOT / "examples" / "eval" / "en_booking.yaml"


def test_render_on_a_catalog_says_it_is_a_catalog_and_what_to_do(capsys: pytest.CaptureFixture) -> None:
    assert main(["render", str(CATALOG)]) == 2
    err = capsys.readouterr().err
    assert "task catalog" in err and "Chatflow DSL" in err and "dskit new" in err
    assert "'workflow'" not in err and "Traceback" not in err


def test_render_on_a_file_that_is_not_yaml_says_so(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    page = tmp_path / "notes.md"
    page.write_text("# Notes\n\nOne engine (`dskit/`) runs in three places: here.\n", encoding="utf-8")
    assert main(["render", str(page)]) == 2
    assert "not a Chatflow DSL" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "usage"), [
    (["eval", "--no-such-flag"], "usage: dskit eval"),
    (["bench", "flow", "--no-such-flag"], "usage: dskit bench flow"),
    (["--no-such-flag"], "usage: dskit [-h]"),
])
def test_a_wrong_flag_prints_the_usage_of_the_command_it_was_given_to(
        argv: list[str], usage: str, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2
    assert err.startswith(usage) and "unrecognized arguments: --no-such-flag" in err


def test_eval_with_the_endpoint_down_prints_only_the_error(capsys: pytest.CaptureFixture) -> None:
    code = main(["eval", str(SUITE), str(SUITE), "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                 "--retries", "0"])
    out, err = capsys.readouterr()
    assert code == 1
    assert out == ""  # no table of dashes
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines  # the same cause on both conversations is said once
    assert "no turn could be run (2 conversations)" in lines[0] and "cannot reach http://127.0.0.1:9" in lines[0]


def test_a_rate_in_the_eval_table_is_rounded_once() -> None:
    from dskit.tooling.eval.metrics import _rate
    from dskit.tooling.eval.report import fmt

    assert fmt(_rate(25, 31), "rate") == "80.6%"  # the held-out JGA the READMEs quote
    assert fmt(_rate(8, 31), "rate") == "25.8%"
