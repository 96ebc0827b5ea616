"""``dskit validate`` and ``dskit replay`` on bad files (issue 10, item 9): one line on stderr and a
non-zero exit, never a traceback, and never more read or unpacked than the bound."""

from __future__ import annotations

import gzip
import io
import json
import shutil
import struct
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dskit.tooling.cli import main
from dskit.tooling.replay import data as replay_data

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CROSSWOZ = FIXTURES / "crosswoz_val_sample.json"
RISAWOZ = FIXTURES / "risawoz_sample.json"

BAD_BYTES = {
    "latin-1": '{"version": 1, "tasks": {"café": {}}}'.encode("latin-1"),
    "utf-16": '{"version": 1, "tasks": {}}'.encode("utf-16"),
    "invalid-utf8": b'{"version": 1, \xff\xfe\x80}',
    "deep-array": b"[" * 100_000 + b"]" * 100_000,
    "deep-object": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    "empty": b"",
    "nul": b"\x00" * 10,
    "not-json": b"version: 1\n",
}


def _one_line_failure(capsys, code: int) -> str:
    captured = capsys.readouterr()
    assert code != 0
    assert "Traceback" not in captured.err + captured.out
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    return lines[0]


def _validate_result(capsys, path: Path) -> tuple[int, str]:
    code = main(["validate", str(path)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    return code, captured.err + captured.out


@pytest.mark.parametrize("name", BAD_BYTES)
def test_validate_bad_files(tmp_path, capsys, name):
    path = tmp_path / f"{name}.json"
    path.write_bytes(BAD_BYTES[name])
    code, output = _validate_result(capsys, path)
    assert code == 1
    assert {"latin-1": "not UTF-8 text (byte 0xe9 at offset", "utf-16": "UTF-16/32 text",
            "invalid-utf8": "not UTF-8 text (byte 0xff", "deep-array": "$: nested too deeply",
            "deep-object": "$: nested too deeply", "empty": "$: not valid JSON",
            "nul": "$: not valid JSON", "not-json": "$: not valid JSON"}[name] in output


def test_validate_a_directory_and_a_missing_file(tmp_path, capsys):
    assert "cannot read" in _one_line_failure(capsys, main(["validate", str(tmp_path)]))
    assert "cannot read" in _one_line_failure(capsys, main(["validate", str(tmp_path / "nope.json")]))


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300) | st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_validate_any_bytes_without_a_traceback(tmp_path, capsys, raw):
    path = tmp_path / "any.json"
    path.write_bytes(raw)
    code, output = _validate_result(capsys, path)
    assert code in (0, 1) and output.strip()


# ---------------------------------------------------------------- replay


def _replay(capsys, dataset: str, path: Path) -> str:
    return _one_line_failure(capsys, main(["replay", dataset, str(path)]))


@pytest.mark.parametrize("dataset", ["crosswoz", "risawoz"])
@pytest.mark.parametrize("name", ["latin-1", "utf-16", "invalid-utf8", "deep-array", "deep-object", "empty"])
def test_replay_bad_files(tmp_path, capsys, dataset, name):
    path = tmp_path / f"{name}.json"
    path.write_bytes(BAD_BYTES[name])
    line = _replay(capsys, dataset, path)
    assert line.startswith(f"dskit replay: {path}: ")


@pytest.mark.parametrize("dataset,content,expected", [
    ("crosswoz", {"1": {"messages": []}}, "no dialogue states to replay"),
    ("crosswoz", {}, "no dialogue states to replay"),
    ("crosswoz", {"1": {"messages": [1, "x"]}}, "not CrossWOZ data as expected"),
    ("crosswoz", {"1": {"messages": [{"role": "sys", "sys_state_init": [1, 2]}]}}, "not CrossWOZ data as expected"),
    ("crosswoz", [1, 2], "not CrossWOZ dialogues"),
    ("crosswoz", {"1": {"messages": [{"role": "usr", "dialog_act": [["Inform", "酒店", "名称", "x"]]}]}},
     "no dialogue states to replay"),
    ("risawoz", [{"dialogue": []}], "no dialogue states to replay"),
    ("risawoz", [{"dialogue": [1]}], "not RiSAWOZ data as expected"),
    ("risawoz", [{"dialogue": [{"belief_state": {"turn_inform": [1]}}]}], "not RiSAWOZ data as expected"),
    ("risawoz", {"format": "dskit.state"}, "not RiSAWOZ dialogues"),
], ids=repr)
def test_replay_foreign_and_empty_shapes(tmp_path, capsys, dataset, content, expected):
    path = tmp_path / "data.json"
    path.write_text(json.dumps(content, ensure_ascii=False), encoding="utf-8")
    assert expected in _replay(capsys, dataset, path)


def test_a_truncated_zip_is_reported_as_a_broken_zip(tmp_path, capsys):
    archive = tmp_path / "val.json.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(CROSSWOZ, "val.json")
    raw = archive.read_bytes()
    for cut in (len(raw) // 2, len(raw) - 10, 30):
        archive.write_bytes(raw[:cut])
        assert "broken zip archive" in _replay(capsys, "crosswoz", archive)


def test_a_truncated_gzip_is_reported_as_a_broken_gzip(tmp_path, capsys):
    packed = tmp_path / "data.json.gz"
    raw = gzip.compress(RISAWOZ.read_bytes())
    packed.write_bytes(raw[: len(raw) // 2])
    assert "broken gzip file" in _replay(capsys, "risawoz", packed)


@pytest.fixture
def small_bound(monkeypatch):
    monkeypatch.setattr(replay_data, "MAX_DATA_BYTES", 1024 * 1024)


def test_a_zip_bomb_is_refused_by_its_declared_size(tmp_path, capsys, small_bound):
    archive = tmp_path / "bomb.json.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("val.json", b" " * (3 * 1024 * 1024))
    assert archive.stat().st_size < 10_000
    assert "unpacks to 3 MiB, over the 1 MiB" in _replay(capsys, "crosswoz", archive)


def test_a_zip_bomb_that_lies_about_its_size_is_not_unpacked_past_the_lie(tmp_path, capsys, small_bound):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("val.json", b" " * (3 * 1024 * 1024))
    raw = bytearray(buffer.getvalue())
    central = raw.rfind(b"PK\x01\x02")
    struct.pack_into("<I", raw, central + 24, 1000)  # the central directory's uncompressed size
    struct.pack_into("<I", raw, 22, 1000)  # and the local header's
    archive = tmp_path / "liar.json.zip"
    archive.write_bytes(bytes(raw))
    assert "broken zip archive" in _replay(capsys, "crosswoz", archive)


def test_a_gzip_bomb_is_refused(tmp_path, capsys, small_bound):
    packed = tmp_path / "bomb.json.gz"
    packed.write_bytes(gzip.compress(b" " * (3 * 1024 * 1024)))
    assert "unpacks to more than 1 MiB" in _replay(capsys, "risawoz", packed)


def test_good_files_still_replay(tmp_path, capsys):
    archive = tmp_path / "val.json.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(CROSSWOZ, "val.json")
    assert main(["replay", "crosswoz", str(archive), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["jga"] == 1.0
    copy = tmp_path / "r.json"
    shutil.copy(RISAWOZ, copy)
    assert main(["replay", "risawoz", str(copy), "--json"]) == 0
