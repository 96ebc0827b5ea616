"""``dskit bench context``: the simulation, the targets of the issue, the JSON shape, the plot."""

from __future__ import annotations

import json

import pytest

from dskit.tooling.bench import bench_modules
from dskit.tooling.bench.context import SERIES, is_visible, prompts, run_bench, simulate
from dskit.tooling.cli import main


@pytest.fixture(scope="module")
def bench() -> dict:
    return run_bench()


def test_simulation_is_seeded_and_runs_through_the_engine() -> None:
    a, b = simulate(20, seed=3), simulate(20, seed=3)
    assert [t["user"] for t in a] == [t["user"] for t in b]
    assert len(a) == 20 and all(json.loads(t["state"])["format"] == "dskit.state" for t in a)
    assert any(t["tag"] == "essential" for t in a) and any(t["tag"] == "chat" for t in a)
    assert a[-1]["confirmed"], "booking turns must leave confirmed slots"
    assert simulate(20, seed=4)[0]["user"] != a[0]["user"] or simulate(20, seed=4) != a


def test_visibility_is_by_value() -> None:
    assert is_visible("陶陶居", "已为您预订陶陶居")
    assert is_visible(3, "人数：3。") and not is_visible(3, "13:00")
    assert is_visible(["市中心", "东区"], "市中心或东区") and not is_visible(["市中心", "西区"], "市中心")


def test_prompts_after_n_turns() -> None:
    convo = simulate(12, seed=0)
    texts = prompts(convo, 12)
    assert texts["full"].count("\n\n---\n\n") == 11
    assert texts["window10"].count("\n\n---\n\n") == 9
    assert "【当前状态】" in texts["dskit"]


def test_targets_of_the_issue(bench: dict) -> None:
    i10, i30, i50 = (bench["turns"].index(n) for n in (10, 30, 50))
    assert bench["full"][i30] >= 4 * bench["dskit"][i30]          # at least 4x fewer tokens at 30 turns
    assert bench["dskit"][i50] <= 1.3 * bench["dskit"][i10]       # grows by at most 1.3x from 10 to 50
    assert all(v == 1.0 for v in bench["slots_visible"]["dskit"])  # every confirmed slot stays visible
    assert bench["slots_visible"]["window10"][i30] < 1.0            # the window alone loses them
    assert all(v == 1.0 for v in bench["slots_visible"]["full"])


def test_json_keys(capsys) -> None:
    assert main(["bench", "context", "--json", "--seeds", "1", "--turns", "5,12"]) == 0
    data = json.loads(capsys.readouterr().out)
    for key in ("turns", *SERIES, "slots_visible"):
        assert key in data
    assert data["turns"] == [5, 12] and len(data["dskit"]) == 2
    assert set(data["slots_visible"]) == set(SERIES)


def test_table_and_plot(tmp_path, capsys) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "bench.png"
    assert main(["bench", "context", "--seeds", "1", "--turns", "10,30,50", "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "full/dskit" in out and "at 30 turns" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_discovers_its_modules(capsys) -> None:
    names = [m.__name__.rsplit(".", 1)[-1] for m in bench_modules()]
    assert "context" in names and "tokens" in names
    assert main(["bench"]) == 0
    assert "context" in capsys.readouterr().out
