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
        assert all(label in doc["app"]["name"] for label in labels), name
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


def test_new_names_its_folder_after_the_catalog(tmp_path, monkeypatch) -> None:
    """Default folder ./dsl_<name>/ (docs/dsl.md): the catalog's ``name``."""
    import contextlib
    import io

    monkeypatch.chdir(tmp_path)
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["new", str(CATALOGS["zh"])]) == 0
    assert sorted(p.name for p in (tmp_path / "dsl_pet_clinic").iterdir()) == sorted(FILES)


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
