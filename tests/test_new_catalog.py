"""``dskit new``: a catalog written from docs/catalog.md alone becomes a Chatflow in its own language.

Two catalogs a Dify builder could have written from docs/catalog.md — a bike-repair shop in English
and a pet clinic in Chinese (examples/catalogs/) — go through ``dskit new``. The files must pass the
checks, name the catalog's tasks, carry no text of the example tasks (restaurant, travel) and no
text in the other language, and a short English conversation must run through the English one in
graphon, Dify's workflow engine.

Legitimately shared between the languages (and so not checked): node ids and variable names (they
are ``{{#node.var#}}`` references), code-node source (the engine's message tables hold both languages
and pick the catalog's at run time), the catalog JSON itself, model and plugin names, and identifiers
quoted in a Chinese note (``next_action``, ``TASK_API_URL``) or acronyms Dify's Chinese UI keeps (FAQ,
LLM, JSON): :mod:`dskit.tooling.dslbuild.localize`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml")

from dskit.tooling.cli import main  # noqa: E402
from dskit.tooling.dslbuild.localize import CJK, foreign_texts, strings  # noqa: E402

pytestmark = pytest.mark.slow  # builds and checks three Chatflows per catalog

ROOT = Path(__file__).resolve().parents[1]
CATALOGS = {"en": ROOT / "examples" / "catalogs" / "bike_repair_en.json",
            "zh": ROOT / "examples" / "catalogs" / "pet_clinic_zh.json"}
EXAMPLE_CATALOGS = [ROOT / "examples" / "catalogs" / "restaurant.json",
                    ROOT / "examples" / "catalogs" / "travel_assistant.json",
                    ROOT / "examples" / "eval" / "catalogs" / "restaurant_travel_en.json"]
FILES = ("dialogue_chatflow.yml", "dialogue_chatflow_classic.yml", "dialogue_chatflow_plugin.yml")


def example_task_texts() -> set[str]:
    """What the example tasks say: labels, descriptions, examples and questions (short words such as
    "日期" that any catalog may use are left out)."""
    texts: set[str] = set()
    for path in EXAMPLE_CATALOGS:
        for spec in json.loads(path.read_text(encoding="utf-8"))["tasks"].values():
            texts.update([spec.get("label") or "", spec.get("description") or "", *(spec.get("examples") or [])])
            texts.update(slot.get("ask") or "" for slot in (spec.get("slots") or {}).values())
    return {t for t in texts if len(t) >= 3}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, dict[str, Any]]:
    """lang -> {"out": stdout of `dskit new`, "code": exit status, "docs": {file: YAML document}}."""
    import contextlib
    import io

    results = {}
    for lang, catalog in CATALOGS.items():
        out_dir = tmp_path_factory.mktemp(f"new_{lang}")
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            code = main(["new", str(catalog), "--out", str(out_dir)])
        docs = {name: yaml.safe_load((out_dir / name).read_text(encoding="utf-8")) for name in FILES}
        results[lang] = {"out": buffer.getvalue(), "code": code, "docs": docs}
    return results


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_new_writes_three_checked_chatflows(built, lang) -> None:
    result = built[lang]
    assert result["code"] == 0, result["out"]
    assert result["out"].count(": ok") >= 4, result["out"]  # the catalog, then each of the three files


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_user_visible_text_is_in_the_catalogs_language(built, lang) -> None:
    for name, doc in built[lang]["docs"].items():
        assert foreign_texts(doc, lang) == [], name
        if lang == "en":  # stronger: no CJK anywhere but in code-node source
            cjk = [".".join(p) for p, text in strings(doc) if p[-1] != "code" and CJK.search(text)]
            assert cjk == [], f"{name}: {cjk[:5]}"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_chatflows_speak_of_the_catalogs_tasks_only(built, lang) -> None:
    catalog = json.loads(CATALOGS[lang].read_text(encoding="utf-8"))
    labels = [spec["label"] for spec in catalog["tasks"].values()]
    examples = {spec["examples"][0] for spec in catalog["tasks"].values()}
    forbidden = example_task_texts()
    for name, doc in built[lang]["docs"].items():
        features = doc["workflow"]["features"]
        assert all(label in features["opening_statement"] for label in labels), name
        assert set(features["suggested_questions"]) == examples, name
        assert doc["app"]["name"].startswith(catalog["name"]), name  # the app is named after the assistant
        leaks = [(".".join(p), t) for p, t in strings(doc) if p[-1] != "code" for f in forbidden if f in t]
        assert leaks == [], f"{name}: {leaks[:3]}"
    classic = built[lang]["docs"]["dialogue_chatflow_classic.yml"]
    classifier = next(n["data"] for n in classic["workflow"]["graph"]["nodes"] if n["id"] == "classify")
    assert {c["name"] for c in classifier["classes"]} >= set(labels)


def test_the_default_files_stay_bilingual() -> None:
    """The shipped dsl/ files (default catalog) keep their Chinese titles with bilingual notes."""
    doc = yaml.safe_load((ROOT / "dsl" / "dialogue_chatflow.yml").read_text(encoding="utf-8"))
    state = next(n["data"] for n in doc["workflow"]["graph"]["nodes"] if n["id"] == "state")
    assert state["title"] == "状态机" and "Applies the understanding" in state["desc"]
    assert doc["workflow"]["features"]["suggested_questions"] == []


def test_gen_catalog_builds_the_same_localized_files(tmp_path) -> None:
    """`dskit gen --catalog` and `dskit new` share the builder: the same fast file, byte for byte."""
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["gen", "--catalog", str(CATALOGS["en"]), "--out", str(tmp_path / "gen")]) == 0
        assert main(["new", str(CATALOGS["en"]), "--out", str(tmp_path / "new")]) == 0
    for name in FILES:
        assert (tmp_path / "gen" / name).read_text(encoding="utf-8") == \
            (tmp_path / "new" / name).read_text(encoding="utf-8"), name


def test_new_refuses_a_broken_catalog(tmp_path, capsys) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"version": 1, "language": "en", "tasks": {"t": {"slots": {
        "x": {"type": "colour"}}}}}), encoding="utf-8")
    assert main(["new", str(broken), "--out", str(tmp_path / "out")]) == 1
    assert "$.tasks.t.slots.x.type" in capsys.readouterr().out
    assert not (tmp_path / "out").exists()


def test_new_names_its_folder_and_apps_after_the_catalog_and_says_where(tmp_path, monkeypatch) -> None:
    """Default folder ./dsl_<name>/ (docs/dsl.md): the catalog's free-text ``name`` as a folder name, Chinese
    kept; the Dify apps are called by that name and the layout, and the last lines say where it all went."""
    import contextlib
    import io

    monkeypatch.chdir(tmp_path)
    catalog = json.loads(CATALOGS["en"].read_text(encoding="utf-8"))
    catalog["name"] = "Bright Smile Dental assistant"
    (tmp_path / "dental.json").write_text(json.dumps(catalog), encoding="utf-8")
    for path, folder, app in ((CATALOGS["zh"], "dsl_宠物医院助手", "宠物医院助手（快速版）"),
                              (tmp_path / "dental.json", "dsl_bright_smile_dental_assistant",
                               "Bright Smile Dental assistant (fast)")):
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            assert main(["new", str(path)]) == 0
        assert sorted(p.name for p in (tmp_path / folder).iterdir()) == sorted(FILES)
        fast = yaml.safe_load((tmp_path / folder / FILES[0]).read_text(encoding="utf-8"))
        assert fast["app"]["name"] == app
        said = buffer.getvalue().splitlines()
        assert str(tmp_path / folder) in said[-2] and app in said[-2], said[-2:]


@pytest.mark.parametrize("name, slug", [
    ("Bright Smile Dental assistant", "bright_smile_dental_assistant"),
    ("星辰驾校 学车助手", "星辰驾校_学车助手"),
    ("../../etc/passwd", "etc_passwd"),
    (".hidden", "hidden"),
    ("ＡＢＣ１２３ Café!", "abc123_café"),
    ("🦷🦷", ""),
])
def test_a_catalog_name_becomes_a_safe_folder_name(name, slug) -> None:
    from dskit.tooling.commands.gen import catalog_folder, folder_slug

    assert folder_slug(name) == slug
    folder = catalog_folder(Path("my catalog.json"), json.dumps({"name": name}))
    assert folder.name == "dsl_" + (slug or "my_catalog") and len(folder.parts) == 1


# ------------------------------------------------------------------------------- a conversation


def _u(query: str, *commands: dict[str, Any]) -> str:
    return json.dumps({"rewritten_query": query, "commands": list(commands)})


def test_an_english_conversation_runs_through_the_new_chatflow_in_graphon(built) -> None:
    pytest.importorskip("graphon")
    from dskit.tooling.dslrun.graphon import Conversation

    text = yaml.safe_dump(built["en"]["docs"]["dialogue_chatflow.yml"], allow_unicode=True, sort_keys=False)
    conversation = Conversation(text, knowledge=lambda query: [])  # a knowledge base that finds nothing
    r1 = conversation.turn("My electric bike's rear brake squeaks, can you fix it?", {"understand": _u(
        "My electric bike's rear brake squeaks, can you fix it?",
        {"type": "start_task", "task": "book_repair",
         "slots": {"bike_type": "electric", "problem": "rear brake squeaks"}})})
    assert r1.output("state", "next_action") == "ask_slot"
    assert "Which day would you like to bring it in?" in r1.answer
    r2 = conversation.turn("Do you fix carbon frames?", {
        "understand": _u("Do you fix carbon frames?", {"type": "faq", "question": "Do you fix carbon frames?"})})
    assert r2.output("state", "next_action") == "faq"
    assert [call.node_id for call in r2.llm_calls] == ["understand"]  # nothing found: no FAQ model call
    assert r2.answer.startswith("Sorry, I could not find the answer to that")  # the catalog's language
    assert "Which day would you like to bring it in?" in r2.answer  # back to the open task
    r3 = conversation.turn("Saturday morning", {"understand": _u(
        "I will bring it on Saturday morning", {"type": "set_slots", "slots": {"day": "Saturday morning"}})})
    assert r3.output("state", "next_action") == "confirm"
    assert "Please confirm" in r3.answer and "electric" in r3.answer
    r4 = conversation.turn("yes please", {"understand": _u("yes", {"type": "confirm"})})
    assert r4.output("state", "next_action") == "execute"
    assert "Book a bike repair" in r4.answer
    for result in (r1, r2, r3, r4):
        assert result.succeeded
        assert not CJK.search(result.answer), result.answer
