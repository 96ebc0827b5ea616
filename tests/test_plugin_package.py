"""``dskit build``: the .difypkg is a clean zip of the plugin that loads through the SDK once unzipped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from dskit.tooling.plugin_package import (
    MAX_PACKAGE_FILE_BYTES,
    BuildError,
    IgnorePattern,
    build,
    collect_files,
    copy_dsl,
    is_ignored,
    package_checksum,
    plugin_identifier,
    read_ignore,
)
from dskit.tooling.cli import main as cli_main
from fakes.daemon_rules import declaration_problems

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    assert cli_main(["build", "--root", str(ROOT), "--out", str(out)]) == 0
    return out / "dialogue_state_kit-0.2.0.difypkg"


@pytest.fixture(scope="module")
def unzipped(package: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("plugin")
    with zipfile.ZipFile(package) as zf:
        zf.extractall(target)
    return target


def test_package_contents(package: Path) -> None:
    with zipfile.ZipFile(package) as zf:
        names = zf.namelist()
        total = sum(info.file_size for info in zf.infolist())
    assert total < 50 * 1024 * 1024
    assert all("\\" not in n and not n.startswith("/") and ".." not in n.split("/") for n in names)
    for required in ("manifest.yaml", "main.py", "requirements.txt", "README.md", "PRIVACY.md",
                     "readme/README_zh_Hans.md", "_assets/icon.svg", "provider/dialogue_state_kit.yaml",
                     "provider/dialogue_state_kit.py", "tools/track_state.yaml", "tools/_common.py",
                     "dskit/__init__.py", "dskit/turn/machine.py", "dskit/context/memory.py"):
        assert required in names, required
    tops = {n.split("/")[0] for n in names}
    assert tops <= {"manifest.yaml", "main.py", "requirements.txt", "README.md", "PRIVACY.md", "LICENSE",
                    "readme", "_assets", "provider", "tools", "dskit"}, tops
    for banned in ("tests/", "docs/", ".ci/", "dist/", "dsl/", "scripts/", "examples/", "code_nodes/",
                   "dskit/tooling/", ".venv/", "__pycache__/", ".git/"):
        assert not any(n.startswith(banned) or f"/{banned}" in n for n in names), banned
    assert "pyproject.toml" not in names and not any(n.endswith(".pyc") for n in names)
    # the licence travels with the plugin; the project's changelog, the debugging key's template and
    # the Chatflows `gen --catalog` writes next to the checkout do not
    assert "LICENSE" in names
    for project_only in (".env.example", ".env", "CHANGELOG.md"):
        assert project_only not in names, project_only


def test_catalog_chatflows_written_in_the_checkout_stay_out() -> None:
    patterns = read_ignore(ROOT)
    assert is_ignored(patterns, "dsl_my_shop", True)
    assert is_ignored(patterns, ".env.example", False) and is_ignored(patterns, "CHANGELOG.md", False)
    assert not is_ignored(patterns, "LICENSE", False)


def _daemon_checksum(package: Path) -> str:
    """dify-plugin-daemon pkg/plugin_packager/decoder/checksum.go ``CalculateChecksum``, as written
    there: walk the zip's entries, map path -> sha256(content), sort the paths, concatenate
    sha256(path) + that digest for each, sha256 the whole, hex."""
    import hashlib

    with zipfile.ZipFile(package) as zf:
        digests = {info.filename: hashlib.sha256(zf.read(info)).digest() for info in zf.infolist()}
    data = b"".join(hashlib.sha256(name.encode()).digest() + digests[name] for name in sorted(digests))
    return hashlib.sha256(data).hexdigest()


def _package_identifier(dsl_text: str) -> str:
    import yaml

    deps = yaml.safe_load(dsl_text)["dependencies"]
    return next(d["value"]["plugin_unique_identifier"] for d in deps if d["type"] == "package")


def test_the_plugin_chatflow_names_the_built_package_exactly(package: Path) -> None:
    """The identifier in dist/ and in dsl/ is author/name:version@checksum of this very .difypkg, the
    checksum computed the daemon's way (issue 9: without it the daemon refuses the dependency check)."""
    expected = f"dskit/dialogue_state_kit:0.2.0@{_daemon_checksum(package)}"
    dist = (package.parent / "dialogue_chatflow_plugin.yml").read_text(encoding="utf-8")
    assert _package_identifier(dist) == expected
    assert dist.count(expected) == 1 + dist.count("tool_name:")  # the dependency and every tool node
    assert plugin_identifier(ROOT) == expected
    assert _package_identifier((ROOT / "dsl" / "dialogue_chatflow_plugin.yml").read_text(encoding="utf-8")) == expected


def test_a_changed_plugin_file_changes_the_identifier(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "_assets").mkdir(parents=True)
    for name in ("manifest.yaml", "main.py", "requirements.txt", "PRIVACY.md", "README.md"):
        (root / name).write_text((ROOT / name).read_text(encoding="utf-8"), encoding="utf-8")
    first = plugin_identifier(root)
    (root / "main.py").write_text("# changed\n", encoding="utf-8")
    assert plugin_identifier(root) != first and first.startswith("dskit/dialogue_state_kit:0.2.0@")


def test_the_package_file_fits_difys_upload_limit(package: Path) -> None:
    """Dify refuses an uploaded package over PLUGIN_MAX_PACKAGE_SIZE, 15 MiB of the file
    (api/configs/feature/__init__.py; api/controllers/console/workspace/plugin.py)."""
    assert MAX_PACKAGE_FILE_BYTES == 15 * 1024 * 1024
    assert package.stat().st_size < MAX_PACKAGE_FILE_BYTES


def test_package_is_reproducible(package: Path, tmp_path: Path) -> None:
    again = build(ROOT, tmp_path, dsl=False).package
    assert again.read_bytes() == package.read_bytes()


def test_unzipped_package_passes_the_daemon_rules(unzipped: Path) -> None:
    assert declaration_problems(unzipped) == []


def test_unzipped_package_loads_and_runs_through_the_sdk(unzipped: Path) -> None:
    """A fresh interpreter in the unzipped folder (as the daemon runs it): registration, then tools."""
    script = textwrap.dedent(f"""
        import dify_plugin, json, sys
        sys.path.append({str(TESTS)!r})  # only for the fake daemon; the plugin comes from the cwd
        from pathlib import Path
        from dify_plugin.config.config import DifyPluginEnv, InstallMethod
        from dify_plugin.core.entities.plugin.request import ToolInvokeRequest
        from dify_plugin.core.plugin_executor import PluginExecutor
        from dify_plugin.core.plugin_registration import PluginRegistration
        from dify_plugin.core.runtime import Session
        from _pytest.monkeypatch import MonkeyPatch
        from dskit.tooling.dslrun.plugin_daemon import FakeDaemon
        import dskit
        reg = PluginRegistration(DifyPluginEnv())
        executor = PluginExecutor(DifyPluginEnv(), reg)
        mp = MonkeyPatch()
        FakeDaemon(manifest="manifest.yaml").patch(mp)
        session = Session(session_id="s", executor=None, reader=None, writer=None, install_method=InstallMethod.Local)
        def run(tool, params):
            req = ToolInvokeRequest(user_id="u1", provider="dialogue_state_kit", tool=tool, credentials={{}},
                                    tool_parameters=params)
            return {{m.message.variable_name: m.message.variable_value
                    for m in executor.invoke_tool(session, req) if m.type.value == "variable"}}
        catalog = Path({str(ROOT / "examples/catalogs/restaurant.json")!r}).read_text(encoding="utf-8")
        understanding = json.dumps({{"commands": [{{"type": "start_task", "task": "book_restaurant",
                                                   "slots": {{"people": 2}}}}]}})
        state = run("update_dialogue_state", {{"understanding": understanding, "catalog": catalog,
                                               "query": "订餐，两个人"}})
        remembered = run("remember", {{"text": "座位：靠窗"}})
        recalled = run("recall", {{"query": "座位"}})
        print(json.dumps({{
            "dskit": str(Path(dskit.__file__).resolve().parent),
            "tools": sorted(reg.tools_mapping["dialogue_state_kit"][2]),
            "next_action": state["next_action"],
            "remembered": remembered["added"],
            "recalled": recalled["memories"],
        }}, ensure_ascii=False))
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    proc = subprocess.run([sys.executable, "-c", script], cwd=unzipped, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Path(result["dskit"]) == (unzipped / "dskit").resolve()  # the packaged engine, not the repo's
    assert len(result["tools"]) == 9
    assert result["next_action"] == "ask_slot"
    assert result["remembered"] == 1 and result["recalled"] == "[偏好] 座位：靠窗"


def test_dsl_files_are_copied(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "dsl").mkdir(parents=True)
    (root / "dsl" / "a.yml").write_text("app: {}\n", encoding="utf-8")
    (root / "dsl" / "notes.txt").write_text("x", encoding="utf-8")
    copied = copy_dsl(root, tmp_path / "out")
    assert [p.name for p in copied] == ["a.yml"]
    assert copy_dsl(tmp_path / "nothing", tmp_path / "out") == []


def test_repo_build_copies_the_projects_dsl(package: Path) -> None:
    expected = sorted(p.name for p in (ROOT / "dsl").glob("*.yml")) if (ROOT / "dsl").is_dir() else []
    assert sorted(p.name for p in package.parent.glob("*.yml")) == expected
    for name in expected:  # the repository copies already name this package: copied unchanged
        assert (package.parent / name).read_text(encoding="utf-8") == (ROOT / "dsl" / name).read_text(encoding="utf-8")


# ------------------------------------------------------------------ .difyignore semantics (go-git's)


@pytest.mark.parametrize(
    "pattern, path, is_dir, excluded",
    [
        ("tests/", "tests", True, True),
        ("tests/", "a/tests", True, True),           # no slash inside: any depth
        ("tests/", "tests", False, False),           # dir-only
        ("tests/", "tests/x.py", False, True),       # a file under an excluded directory component
        ("*.pyc", "a/b/c.pyc", False, True),
        ("dskit/tooling/", "dskit/tooling", True, True),
        ("dskit/tooling/", "x/dskit/tooling", True, False),  # a slash inside: anchored at the root
        ("dskit/__main__.py", "dskit/__main__.py", False, True),
        ("/docs", "docs/plugin.md", False, True),
        ("**/cache", "a/b/cache", True, True),
        ("build/", "dskit/tooling/plugin_package.py", False, False),
        ("!main.py", "main.py", False, False),       # negations never exclude (and never re-include)
    ],
)
def test_ignore_matcher(pattern: str, path: str, is_dir: bool, excluded: bool) -> None:
    assert is_ignored([IgnorePattern.parse(pattern)], path, is_dir) is excluded


def test_gitignore_is_the_fallback(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("# c\n\nsecret.txt\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("x", encoding="utf-8")
    (tmp_path / "keep.txt").write_text("x", encoding="utf-8")
    assert len(read_ignore(tmp_path)) == 1
    assert collect_files(tmp_path) == [".gitignore", "keep.txt"]


def test_build_refuses_a_packaged_pyproject(tmp_path: Path) -> None:
    for name in ("manifest.yaml", "main.py", "requirements.txt", "PRIVACY.md"):
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())
    (tmp_path / "README.md").write_text("# x\n", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\n", encoding="utf-8")
    with pytest.raises(BuildError, match="pyproject.toml"):
        build(tmp_path, tmp_path / "dist")
    (tmp_path / ".difyignore").write_text("pyproject.toml\ndist/\n", encoding="utf-8")
    assert build(tmp_path, tmp_path / "dist").package.is_file()


def test_build_falls_back_to_docs_plugin_md_and_reports_missing_files(tmp_path: Path) -> None:
    for name in ("manifest.yaml", "main.py", "requirements.txt"):
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())
    with pytest.raises(BuildError, match="PRIVACY.md"):
        build(tmp_path, tmp_path / "dist")
    (tmp_path / "PRIVACY.md").write_text("p", encoding="utf-8")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "plugin.md").write_text("# plugin page\n", encoding="utf-8")
    (tmp_path / ".difyignore").write_text("docs/\ndist/\n", encoding="utf-8")
    result = build(tmp_path, tmp_path / "dist")
    assert result.readme_source == "docs/plugin.md"
    with zipfile.ZipFile(result.package) as zf:
        assert zf.read("README.md") == b"# plugin page\n"


def test_cli_reports_failure(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert cli_main(["build", "--root", str(tmp_path)]) == 1
    assert "no manifest.yaml" in capsys.readouterr().err


def test_the_plugin_page_is_docs_plugin_md_not_the_developer_readme(tmp_path: Path) -> None:
    for name in ("manifest.yaml", "main.py", "requirements.txt", "PRIVACY.md"):
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())
    (tmp_path / "README.md").write_text("# developers: set-up, tests\n", encoding="utf-8")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "plugin.md").write_text("# plugin page\n", encoding="utf-8")
    (tmp_path / ".difyignore").write_text("docs/\ndist/\n", encoding="utf-8")
    result = build(tmp_path, tmp_path / "dist")
    with zipfile.ZipFile(result.package) as zf:
        assert zf.read("README.md") == b"# plugin page\n"


def test_every_relative_link_of_the_packaged_pages_leads_to_a_file_of_the_package(package: Path) -> None:
    """docs/plugin.md links ../PRIVACY.md and dify.md, which work on GitHub; packed as README.md at the
    package's root, the first must point to PRIVACY.md, and a page the package does not hold
    (docs/dify.md) is named with its place in the repository instead of a link that leads nowhere."""
    import re

    with zipfile.ZipFile(package) as zf:
        names = set(zf.namelist())
        pages = {name: zf.read(name).decode("utf-8") for name in names if name.endswith(".md")}
    assert {"README.md", "readme/README_zh_Hans.md", "PRIVACY.md"} <= set(pages)
    for name, text in pages.items():
        for target in re.findall(r"\]\(([^)#\s]+)", text):
            if "://" not in target:
                resolved = os.path.normpath(os.path.join(os.path.dirname(name), target)).replace(os.sep, "/")
                assert resolved in names, f"{name} links {target}"
    readme = pages["README.md"]
    assert "](PRIVACY.md)" in readme and "](readme/README_zh_Hans.md)" in readme
    assert "`docs/dify.md` (in the project's repository)" in readme
    assert "](../README.md)" in pages["readme/README_zh_Hans.md"]


def test_a_link_to_a_packaged_file_moves_with_the_page(tmp_path: Path) -> None:
    for name in ("manifest.yaml", "main.py", "requirements.txt", "PRIVACY.md"):
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "plugin.md").write_text(
        "[Privacy](../PRIVACY.md#data) · [the page](other.md) · [site](https://example.com/x.md)\n", encoding="utf-8")
    (tmp_path / "docs" / "other.md").write_text("# other\n", encoding="utf-8")
    (tmp_path / ".difyignore").write_text("docs/\ndist/\n", encoding="utf-8")
    result = build(tmp_path, tmp_path / "dist")
    with zipfile.ZipFile(result.package) as zf:
        assert zf.read("README.md").decode() == ("[Privacy](PRIVACY.md#data) · the page (`docs/other.md` in the "
                                                 "project's repository) · [site](https://example.com/x.md)\n")
    assert plugin_identifier(tmp_path).endswith("@" + package_checksum(result.package))  # the rewritten bytes
