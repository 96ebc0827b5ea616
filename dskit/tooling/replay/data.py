"""Reading data-set files as published: ``.json``, ``.json.zip`` (first JSON member) or ``.json.gz``.

A file is recognised by its first bytes, not its name. Everything that can be wrong with a file —
unreadable, a damaged or truncated archive, more data than :data:`MAX_DATA_BYTES` once unpacked (a
zip bomb), text that is not UTF-8, nesting deeper than the JSON decoder follows, not JSON at all —
is one :class:`DataError` whose message names the file and the problem in one line.
"""

from __future__ import annotations

import gzip
import json
import zipfile
import zlib
from pathlib import Path

# The most bytes read from a file or unpacked from an archive. CrossWOZ's largest published file
# (train.json) unpacks to about 400 MB; a zip bomb unpacks to far more.
MAX_DATA_BYTES = 512 * 1024 * 1024
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")
_GZIP_MAGIC = b"\x1f\x8b"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


class DataError(ValueError):
    """A data file that cannot be read or does not have the expected shape."""


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MiB"


def _read_zip(path: Path) -> bytes:
    """The first JSON member of a zip archive (the first member when none ends in .json), bounded."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = [m for m in archive.infolist() if not m.is_dir()]
            member = next((m for m in members if m.filename.endswith(".json")), members[0] if members else None)
            if member is None:
                raise DataError(f"{path}: empty zip archive")
            if member.file_size > MAX_DATA_BYTES:
                raise DataError(f"{path}: {member.filename} unpacks to {_mib(member.file_size)}, over the "
                                f"{_mib(MAX_DATA_BYTES)} this command reads")
            with archive.open(member) as handle:
                raw = handle.read(MAX_DATA_BYTES + 1)
    except DataError:
        raise
    except (zipfile.BadZipFile, EOFError, zlib.error, RuntimeError, NotImplementedError, ValueError, OSError) as exc:
        raise DataError(f"{path}: broken zip archive, damaged or truncated ({exc})") from None
    if len(raw) > MAX_DATA_BYTES:
        raise DataError(f"{path}: unpacks to more than {_mib(MAX_DATA_BYTES)}, the most this command reads")
    return raw


def _read_gzip(path: Path) -> bytes:
    """A gzip file's content, bounded."""
    try:
        with gzip.open(path, "rb") as handle:
            raw = handle.read(MAX_DATA_BYTES + 1)
    except (EOFError, zlib.error, OSError) as exc:
        raise DataError(f"{path}: broken gzip file, damaged or truncated ({exc})") from None
    if len(raw) > MAX_DATA_BYTES:
        raise DataError(f"{path}: unpacks to more than {_mib(MAX_DATA_BYTES)}, the most this command reads")
    return raw


def _read_plain(path: Path) -> bytes:
    size = path.stat().st_size
    if size > MAX_DATA_BYTES:
        raise DataError(f"{path}: {_mib(size)}, over the {_mib(MAX_DATA_BYTES)} this command reads")
    return path.read_bytes()


def decode_json(raw: bytes, where: str) -> object:
    """The JSON document in ``raw`` (UTF-8, a BOM allowed); DataError with a one-line reason otherwise."""
    if raw.startswith(_UTF16_BOMS) or raw.startswith(b"\x00\x00\xfe\xff"):
        raise DataError(f"{where}: UTF-16/32 text; save it as UTF-8")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"{where}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
                        "save it as UTF-8") from None
    try:
        return json.loads(text)
    except RecursionError:
        raise DataError(f"{where}: JSON nested too deeply to read") from None
    except ValueError as exc:
        raise DataError(f"{where}: not a JSON document ({exc})") from None


def read_json(path: str | Path) -> object:
    """The JSON document in ``path``, unpacking a zip archive or a gzip file by its content."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            head = handle.read(4)
        if head.startswith(_ZIP_MAGIC):
            raw = _read_zip(path)
        elif head.startswith(_GZIP_MAGIC):
            raw = _read_gzip(path)
        else:
            raw = _read_plain(path)
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror or exc})") from None
    return decode_json(raw, str(path))


def limited(items: list, limit: int | None) -> list:
    """The first ``limit`` items (all when ``limit`` is None or not positive)."""
    return items[:limit] if limit and limit > 0 else items
