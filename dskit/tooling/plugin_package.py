"""Package the Dify plugin: ``dist/dialogue_state_kit-<version>.difypkg`` plus the DSL files.

A ``.difypkg`` is a plain zip of the plugin directory (forward slashes), filtered by ``.difyignore``
(gitignore syntax; ``.gitignore`` when there is none). Dify's own packager is a Go binary (``dify
plugin package``) we do not have here, so this module reproduces what it does, including the quirks
of its ignore matcher (go-git's ``gitignore`` package): a pattern without a slash matches a path
component at any depth, a pattern with one is anchored at the root and matches its prefix, and
``!negation`` never re-includes anything (the daemon only asks "does any pattern exclude this?").

Two size limits apply: Dify refuses an uploaded file over ``PLUGIN_MAX_PACKAGE_SIZE`` (15 MiB by
default; api/configs/feature/__init__.py, checked in api/controllers/console/workspace/plugin.py
against the file's length), and the daemon one whose entries add up to more than
``MAX_PLUGIN_PACKAGE_SIZE`` uncompressed (50 MB by default; dify-plugin-daemon .env.example,
pkg/plugin_packager/decoder/zip.go ``NewZipPluginDecoderWithSizeLimit``).

A package is known to Dify by its unique identifier ``author/name:version@checksum``; the checksum is
the daemon's (pkg/plugin_packager/decoder/checksum.go ``CalculateChecksum``): for every zip entry,
sorted by path, sha256 of the path then sha256 of the content, all concatenated and hashed with
sha256. :func:`plugin_identifier` computes it for the package ``dskit build`` would write (the build
is reproducible: same files, same identifier), so the plugin Chatflow can name it exactly.

Two checks guard against packages that would install but not run:

* ``pyproject.toml`` / ``uv.lock`` must not be packaged: the daemon prefers them over
  ``requirements.txt`` (``uv sync``), and ours is the project's, not the plugin's;
* the README Dify shows on the plugin page is ``docs/plugin.md``, packed as ``README.md`` (the
  repository's own README.md is for developers); ``--readme FILE`` packs another file instead.

The Markdown files are written for the repository, where their relative links work on GitHub
(``docs/plugin.md`` links ``../PRIVACY.md`` and ``dify.md``). In the package they sit elsewhere
(``docs/plugin.md`` becomes ``README.md``) and ``docs/`` is not packaged, so every packaged Markdown
file has its relative links rewritten (:func:`packaged_markdown`): a link to a packaged file points to
where that file is in the package, a link to a file the package does not hold becomes its name and its
place in the project's repository, as plain text.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import posixpath
import re
import shutil
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

MAX_PACKAGE_FILE_BYTES = 15 * 1024 * 1024  # Dify's PLUGIN_MAX_PACKAGE_SIZE: the .difypkg file
MAX_PACKAGE_BYTES = 50 * 1024 * 1024  # the daemon's MAX_PLUGIN_PACKAGE_SIZE: entries uncompressed
ZIP_DATE = (2026, 1, 1, 0, 0, 0)  # fixed: the same tree gives the same bytes
FORBIDDEN = ("pyproject.toml", "uv.lock")
REQUIRED = ("manifest.yaml", "main.py", "requirements.txt", "PRIVACY.md", "README.md")


class BuildError(Exception):
    """The plugin cannot be packaged; the message says why."""


@dataclass(frozen=True)
class IgnorePattern:
    """One line of ``.difyignore``, parsed the way go-git's ``gitignore.ParsePattern`` does."""

    parts: tuple[str, ...]
    dir_only: bool
    is_glob: bool
    inclusion: bool

    @classmethod
    def parse(cls, line: str) -> "IgnorePattern":
        inclusion = line.startswith("!")
        if inclusion:
            line = line[1:]
        if not line.endswith("\\ "):
            line = line.rstrip(" ")
        dir_only = line.endswith("/")
        if dir_only:
            line = line[:-1]
        return cls(tuple(line.split("/")), dir_only, "/" in line, inclusion)

    def excludes(self, parts: list[str], is_dir: bool) -> bool:
        """True when this pattern says "exclude" for the path ``parts`` (negations never do)."""
        if self.inclusion:
            return False
        matched = self._glob(parts, is_dir) if self.is_glob else self._simple(parts, is_dir)
        return matched

    def _simple(self, parts: list[str], is_dir: bool) -> bool:
        for i, name in enumerate(parts):
            if not fnmatch.fnmatchcase(name, self.parts[0]):
                continue
            if self.dir_only and not is_dir and i == len(parts) - 1:
                return False
            return True
        return False

    def _glob(self, parts: list[str], is_dir: bool) -> bool:
        path = list(parts)
        matched = False
        can_traverse = False
        for i, pattern in enumerate(self.parts):
            if pattern == "":
                can_traverse = False
                continue
            if pattern == "**":
                if i == len(self.parts) - 1:
                    break
                can_traverse = True
                continue
            if "**" in pattern:
                return False
            if not path:
                return False
            if can_traverse:
                can_traverse = False
                while path:
                    name = path.pop(0)
                    if fnmatch.fnmatchcase(name, pattern):
                        matched = True
                        break
                    if not path:
                        matched = False
            else:
                if not fnmatch.fnmatchcase(path[0], pattern):
                    return False
                matched = True
                path.pop(0)
        if matched and self.dir_only and not is_dir and not path:
            matched = False
        return matched


def read_ignore(root: Path) -> list[IgnorePattern]:
    """The patterns of ``.difyignore`` (or ``.gitignore``), comments and blank lines skipped."""
    for name in (".difyignore", ".gitignore"):
        file = root / name
        if file.is_file():
            lines = file.read_text(encoding="utf-8").split("\n")
            return [IgnorePattern.parse(l.strip()) for l in lines if l.strip() and not l.strip().startswith("#")]
    return []


def is_ignored(patterns: list[IgnorePattern], rel: str, is_dir: bool) -> bool:
    """Whether ``rel`` (a forward-slash path under the root) is left out of the package."""
    parts = rel.split("/")
    return any(p.excludes(parts, is_dir) for p in patterns)


def collect_files(root: Path) -> list[str]:
    """Every file the package gets, as sorted forward-slash paths (ignored directories not entered)."""
    patterns = read_ignore(root)
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath).relative_to(root).as_posix()
        prefix = "" if base == "." else base + "/"
        dirnames[:] = sorted(d for d in dirnames if not is_ignored(patterns, prefix + d, True))
        for name in sorted(filenames):
            rel = prefix + name
            if not is_ignored(patterns, rel, False) and not os.path.islink(os.path.join(dirpath, name)):
                found.append(rel)
    return sorted(found)


def manifest_identity(root: Path) -> tuple[str, str]:
    """(name, version) from manifest.yaml."""
    author, name, version = manifest_author_name_version(root)
    _ = author
    return name, version


def manifest_author_name_version(root: Path) -> tuple[str, str, str]:
    """(author, name, version) from manifest.yaml: the daemon's plugin identity."""
    import yaml  # tooling: imported lazily

    data = yaml.safe_load((root / "manifest.yaml").read_text(encoding="utf-8")) or {}
    author, name, version = data.get("author"), data.get("name"), data.get("version")
    if not all(isinstance(v, str) and v for v in (author, name, version)):
        raise BuildError("manifest.yaml needs an author, a name and a version")
    return author, name, version


def daemon_checksum(entries: Iterable[tuple[str, bytes]]) -> str:
    """The plugin daemon's checksum of a package's (path, content) entries (``CalculateChecksum``)."""
    digests = {path: hashlib.sha256(content).digest() for path, content in entries}
    data = b"".join(hashlib.sha256(path.encode("utf-8")).digest() + digests[path] for path in sorted(digests))
    return hashlib.sha256(data).hexdigest()


def package_checksum(package: Path) -> str:
    """The daemon's checksum of a built ``.difypkg``: its zip entries as the daemon walks them."""
    with zipfile.ZipFile(package) as zf:
        return daemon_checksum((info.filename, zf.read(info)) for info in zf.infolist() if not info.is_dir())


def plugin_identifier(root: Path, *, readme: Path | None = None) -> str:
    """``author/name:version@checksum`` of the package ``dskit build`` writes from ``root`` (no zip
    needed: the checksum depends only on the packaged paths and contents)."""
    root = Path(root).resolve()
    author, name, version = manifest_author_name_version(root)
    sources, _ = package_sources(root, root / "dist", readme=readme)
    return f"{author}/{name}:{version}@{daemon_checksum(package_entries(root, sources).items())}"


# A Markdown link or image target: [text](target) with no space in the target.
MD_LINK = re.compile(r"\[([^\]\n]*)\]\(([^)\s]+)\)")


def packaged_markdown(text: str, rel: str, source: Path, root: Path, packaged: dict[Path, str]) -> str:
    """``text`` (the Markdown file ``source``, packaged at ``rel``) with each relative link made to work
    in the package: to the packaged file's place, or, for a file the package does not hold, the link's
    text and the file's path in the project's repository (``packaged``: file on disk -> package path)."""

    def fix(match: re.Match[str]) -> str:
        label, target = match.group(1), match.group(2)
        path, _, anchor = target.partition("#")
        if not path or "://" in path or path.startswith(("mailto:", "/")):
            return match.group(0)
        on_disk = (source.parent / path).resolve()
        if on_disk in packaged:
            moved = posixpath.relpath(packaged[on_disk], posixpath.dirname(rel) or ".")
            return f"[{label}]({moved}{'#' + anchor if anchor else ''})"
        if not on_disk.is_relative_to(root):
            return match.group(0)
        where = on_disk.relative_to(root).as_posix()
        if label.strip("`") in (where, path):
            return f"`{where}` (in the project's repository)"
        return f"{label} (`{where}` in the project's repository)"

    return MD_LINK.sub(fix, text)


def package_entries(root: Path, sources: dict[str, Path]) -> dict[str, bytes]:
    """{path in the package: the bytes packed there}: the files as they are, Markdown with its links
    made to work in the package (:func:`packaged_markdown`)."""
    root = root.resolve()
    packaged = {path.resolve(): rel for rel, path in sources.items()}
    entries = {}
    for rel, path in sources.items():
        data = path.read_bytes()
        if rel.endswith(".md"):
            data = packaged_markdown(data.decode("utf-8"), rel, path.resolve(), root, packaged).encode("utf-8")
        entries[rel] = data
    return entries


@dataclass
class BuildResult:
    """What ``build_package`` wrote."""

    package: Path
    files: list[str]
    uncompressed_bytes: int
    readme_source: str
    dsl: list[Path] = field(default_factory=list)


def package_sources(root: Path, out_dir: Path, *, readme: Path | None = None) -> tuple[dict[str, Path], str]:
    """({path in the package: file on disk}, where README.md comes from): what the package holds."""
    root = root.resolve()
    if not (root / "manifest.yaml").is_file():
        raise BuildError(f"{root} has no manifest.yaml: not a plugin root")
    files = collect_files(root)
    out_dir = out_dir.resolve()
    if out_dir.is_relative_to(root):
        inside = out_dir.relative_to(root).as_posix()
        files = [f for f in files if not (f == inside or f.startswith(inside + "/"))]
    forbidden = [f for f in files if f in FORBIDDEN]
    if forbidden:
        raise BuildError(f"{', '.join(forbidden)} would be packaged: Dify's daemon would install from it "
                         "instead of requirements.txt. List it in .difyignore.")

    sources = {f: root / f for f in files}
    readme_source = "README.md"
    if readme is not None:
        sources["README.md"] = readme
        readme_source = str(readme)
    elif (root / "docs" / "plugin.md").is_file():
        # The repository's README.md is for developers; Dify's plugin page gets the plugin's own.
        sources["README.md"] = root / "docs" / "plugin.md"
        readme_source = "docs/plugin.md"
    missing = [f for f in REQUIRED if f not in sources]
    if missing:
        raise BuildError(f"required file(s) missing: {', '.join(missing)}")
    return dict(sorted(sources.items())), readme_source


def build_package(root: Path, out_dir: Path, *, readme: Path | None = None) -> BuildResult:
    """Write ``<out_dir>/<name>-<version>.difypkg``; raises BuildError with the reason."""
    root = root.resolve()
    sources, readme_source = package_sources(root, out_dir, readme=readme)
    entries = package_entries(root, sources)
    name, version = manifest_identity(root)
    total = sum(len(data) for data in entries.values())
    if total > MAX_PACKAGE_BYTES:
        raise BuildError(f"the package would be {total:,} bytes uncompressed; the plugin daemon refuses more "
                         f"than {MAX_PACKAGE_BYTES:,} (MAX_PLUGIN_PACKAGE_SIZE)")

    out_dir = out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    package = out_dir / f"{name}-{version}.difypkg"
    tmp = package.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for rel in sorted(entries):
            info = zipfile.ZipInfo(rel, date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, entries[rel])
    size = tmp.stat().st_size
    if size > MAX_PACKAGE_FILE_BYTES:
        tmp.unlink()
        raise BuildError(f"the package would be a {size:,}-byte file; Dify refuses uploads over "
                         f"{MAX_PACKAGE_FILE_BYTES:,} bytes (PLUGIN_MAX_PACKAGE_SIZE, 15 MiB)")
    tmp.replace(package)
    return BuildResult(package, sorted(sources), total, readme_source)


def copy_dsl(root: Path, out_dir: Path, package: Path | None = None) -> list[Path]:
    """Copy ``dsl/*.yml`` next to the package (the Chatflows users import in Dify); in a file that
    depends on this plugin, the plugin's identifier becomes exactly that of ``package``."""
    dsl_dir = root / "dsl"
    if not dsl_dir.is_dir():
        return []
    out_dir.mkdir(parents=True, exist_ok=True)
    identity = None
    if package is not None:
        author, name, version = manifest_author_name_version(root.resolve())
        identity = (f"{author}/{name}:", f"{author}/{name}:{version}@{package_checksum(package)}")
    copied = []
    for src in sorted(dsl_dir.iterdir()):
        if src.is_file() and src.suffix in (".yml", ".yaml"):
            dest = out_dir / src.name
            text = src.read_text(encoding="utf-8")
            if identity is not None:
                text = with_package_identifier(text, *identity)
            dest.write_text(text, encoding="utf-8", newline="\n")
            copied.append(dest)
    return copied


def with_package_identifier(text: str, prefix: str, identifier: str) -> str:
    """``text`` (a DSL) with the identifier of its ``package`` dependency starting with ``prefix``
    replaced by ``identifier`` everywhere (the dependency and every tool node naming it)."""
    import yaml  # noqa: PLC0415

    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    deps = doc.get("dependencies") if isinstance(doc, dict) else None
    for dep in deps if isinstance(deps, list) else []:
        value = dep.get("value") if isinstance(dep, dict) else None
        old = value.get("plugin_unique_identifier") if isinstance(value, dict) else None
        if dep.get("type") == "package" and isinstance(old, str) and old.startswith(prefix) and old != identifier:
            text = text.replace(old, identifier)
    return text


def build(root: Path, out_dir: Path | None = None, *, dsl: bool = True, readme: Path | None = None) -> BuildResult:
    """The ``dskit build`` step: the package, then the DSL files (the plugin one naming that package)."""
    root = Path(root)
    out_dir = Path(out_dir) if out_dir is not None else root / "dist"
    result = build_package(root, out_dir, readme=readme)
    if dsl:
        result.dsl = copy_dsl(root, out_dir, result.package)
    return result
