"""What a user reads: the pages they are sent to exist, every field is documented, no insider jargon.

These tests read the repository's Markdown and templates; they run in well under a second.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dskit.catalog.catalog import _TOP_KEYS

ROOT = Path(__file__).resolve().parents[1]
READMES = ("README.md", "README_zh.md")
LINK = re.compile(r"\]\(([^)#\s]+)(#[^)\s]*)?\)")


def _user_pages() -> list[Path]:
    """Everything a user reads: both READMEs and docs/*.md."""
    return [ROOT / name for name in READMES] + sorted((ROOT / "docs").glob("*.md"))


@pytest.mark.parametrize("readme", READMES)
def test_both_readmes_send_users_to_the_run_it_in_dify_page(readme: str) -> None:
    assert "](docs/dify.md)" in (ROOT / readme).read_text(encoding="utf-8")


@pytest.mark.parametrize("page", _user_pages() + sorted((ROOT / "readme").glob("*.md")), ids=lambda p: p.name)
def test_relative_links_lead_to_files_that_exist(page: Path) -> None:
    """On GitHub, from the page's own folder. (docs/plugin.md and readme/*.md are also packaged: `dskit
    build` rewrites their links for the package, tests/test_plugin_package.py.)"""
    missing = []
    for target, _anchor in LINK.findall(page.read_text(encoding="utf-8")):
        if "://" in target or target.startswith("mailto:"):
            continue
        if not (page.parent / target).exists():
            missing.append(target)
    assert not missing, f"{page.name} links to {missing}"


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces to hyphens."""
    heads = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


def test_the_model_provider_section_the_readmes_point_to_exists() -> None:
    assert "another-model-provider" in _anchors(ROOT / "docs" / "catalog.md")
    for readme in READMES:
        assert "docs/catalog.md#another-model-provider" in (ROOT / readme).read_text(encoding="utf-8")


def test_the_catalog_page_documents_every_top_level_field() -> None:
    text = (ROOT / "docs" / "catalog.md").read_text(encoding="utf-8")
    for key in sorted(_TOP_KEYS):
        assert f"| `{key}`" in text or f"`{key}`, " in text, key


def test_the_provider_page_shows_a_full_identifier_example() -> None:
    text = (ROOT / "docs" / "catalog.md").read_text(encoding="utf-8")
    section = text[text.index("## Another model provider"):]
    assert "marketplace_plugin_unique_identifier" in section
    assert "--plugin-identifier" in section and "--provider" in section


def test_env_example_names_what_the_plugin_sdk_reads() -> None:
    """The template's keys are the SDK's settings fields: a typo would leave the plugin installing locally."""
    import importlib.util

    # read the settings class's source: importing dify_plugin would monkey-patch this process (gevent)
    spec = importlib.util.find_spec("dify_plugin")
    assert spec is not None and spec.origin
    source = (Path(spec.origin).parent / "config" / "config.py").read_text(encoding="utf-8")
    fields = set(re.findall(r"^    ([A-Z_]+): ", source, flags=re.M))
    assert "REMOTE_INSTALL_KEY" in fields
    keys = {line.split("=", 1)[0].lstrip("# ").strip()
            for line in (ROOT / ".env.example").read_text(encoding="utf-8").splitlines() if "=" in line}
    assert {"INSTALL_METHOD", "REMOTE_INSTALL_URL", "REMOTE_INSTALL_KEY"} <= keys
    assert keys <= fields, keys - fields


def test_the_plugin_page_says_how_to_get_the_package() -> None:
    text = (ROOT / "docs" / "plugin.md").read_text(encoding="utf-8")
    assert "Download" not in text
    assert "dskit build" in text and "FORCE_VERIFYING_SIGNATURE=false" in text


def test_the_dify_page_covers_what_a_real_dify_does() -> None:
    text = (ROOT / "docs" / "dify.md").read_text(encoding="utf-8")
    for fact in ("completed-with-warnings", "FORCE_VERIFYING_SIGNATURE=false", "auto_generate_name",
                 "variable inspector", "## Troubleshooting", "sandbox"):
        assert fact in text, fact


def test_licence_and_changelog_exist() -> None:
    assert "Apache License" in (ROOT / "LICENSE").read_text(encoding="utf-8")[:200]
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## 0.1.0" in changelog and "## 0.2.0" in changelog


def test_the_replay_page_says_where_crosswoz_is_published() -> None:
    text = (ROOT / "docs" / "replay.md").read_text(encoding="utf-8")
    section = text[text.index("## Getting the data"):]
    assert "github.com/thu-coai/CrossWOZ" in section
    assert "data/crosswoz" in section and "val.json.zip" in section and "test.json.zip" in section
    assert "getting-the-data" in _anchors(ROOT / "docs" / "replay.md")
    for readme in READMES:
        assert "docs/replay.md#getting-the-data" in (ROOT / readme).read_text(encoding="utf-8")


def test_the_licence_is_an_spdx_string_so_set_up_prints_no_deprecation_warnings() -> None:
    """A `project.license` table made setuptools print ~75 warning lines over the set-up's last line."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["license"] == "Apache-2.0"
    assert project["project"]["license-files"] == ["LICENSE"]
    assert any(req.startswith("setuptools>=") and int(req.split(">=")[1].split(".")[0]) >= 77
               for req in project["build-system"]["requires"])


def test_set_up_ends_with_what_to_run_next() -> None:
    script = (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8").rstrip()
    tail = script[script.rindex("ready:"):]
    assert "next:" in tail and "dskit demo" in tail and "dskit validate" in tail


ENGLISH_PAGES = ("README.md", "docs/dify.md", "docs/dsl.md", "docs/catalog.md", "docs/plugin.md")


def _english_part(name: str) -> str:
    """A page's English text (docs/dsl.md ends with a Chinese section)."""
    return (ROOT / name).read_text(encoding="utf-8").split("## 中文说明")[0]


@pytest.mark.parametrize("name", ENGLISH_PAGES)
def test_english_pages_teach_dskit_new_for_a_users_own_catalog(name: str) -> None:
    """`dskit new` checks the catalog and the files it writes; `gen --catalog` is the maintainer's tool."""
    assert "gen --catalog" not in _english_part(name)


@pytest.mark.parametrize("name", ENGLISH_PAGES)
def test_english_pages_name_a_node_by_the_english_chatflows_title(name: str) -> None:
    """A Chinese node title (the shipped files') is only ever given next to the title a Chatflow written
    for an English catalog shows, so a reader with that Chatflow open finds the node."""
    import yaml

    from dskit.tooling.dslbuild.localize import EN_TITLES

    doc = yaml.safe_load((ROOT / "dsl" / "dialogue_chatflow.yml").read_text(encoding="utf-8"))
    titles = {n["data"]["title"]: EN_TITLES[n["id"]] for n in doc["workflow"]["graph"]["nodes"]
              if n["id"] in EN_TITLES and re.search(r"[\u4e00-\u9fff]", n["data"]["title"])}
    text = _english_part(name)
    alone = [zh for zh, en in titles.items()
             for m in re.finditer(rf"(?<![\u4e00-\u9fff]){re.escape(zh)}(?![\u4e00-\u9fff])", text)
             if en not in text[max(0, m.start() - 160):m.end() + 160]]
    assert not alone, f"{name}: {alone}"


def test_the_dify_page_says_what_a_real_dify_1_12_needs() -> None:
    text = (ROOT / "docs" / "dify.md").read_text(encoding="utf-8")
    assert "dskit new" in text
    for fact in ("X-CSRF-Token", "POST /console/api/login", "`graph`, `features`", "`prompt_system`", "`prompt_head`",
                 "400,000", "80,000", "X-WORKSPACE-ID"):
        assert fact in text, fact
    assert not re.search(r"[Pp]aste (your|the) (catalog|`?TASK_CATALOG)", text)  # `dskit new` put it in the files
