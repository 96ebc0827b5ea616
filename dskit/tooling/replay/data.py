"""Reading data-set files as published: ``.json``, ``.json.zip`` (first JSON member) or ``.json.gz``."""

from __future__ import annotations

import gzip
import json
import zipfile
from pathlib import Path


class DataError(ValueError):
    """A data file that cannot be read or does not have the expected shape."""


def read_json(path: str | Path) -> object:
    """The JSON document in ``path``, unpacking a zip archive or a gzip file by its content."""
    path = Path(path)
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                members = [n for n in archive.namelist() if n.endswith(".json")] or archive.namelist()
                if not members:
                    raise DataError(f"{path}: empty zip archive")
                return json.loads(archive.read(members[0]).decode("utf-8"))
        raw = path.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        return json.loads(raw.decode("utf-8-sig"))
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except (ValueError, EOFError, zipfile.BadZipFile) as exc:
        if isinstance(exc, DataError):
            raise
        raise DataError(f"{path}: not a JSON document ({exc})") from None


def limited(items: list, limit: int | None) -> list:
    """The first ``limit`` items (all when ``limit`` is None or not positive)."""
    return items[:limit] if limit and limit > 0 else items
