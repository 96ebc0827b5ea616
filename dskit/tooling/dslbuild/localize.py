"""One language for every text a Dify user sees in a Chatflow built for their catalog.

The shipped files (``dsl/*.yml``, the default catalog) keep their bilingual notes: Chinese titles, and
each description in Chinese then English, for whoever imports them. A Chatflow built for a user's own
catalog (``dskit new``, ``dskit gen --catalog``) speaks the catalog's ``language`` only: node titles,
node descriptions, variable descriptions, the app's name and description, the opening statement and
the suggested questions. The flows are built once, bilingually, and :func:`localize` then keeps one
half of each note, so the two can never say different things about a node.

What stays shared on purpose: node ids and variable names (they are references, ``{{#state.question#}}``),
code-node source (the engine's message tables hold both languages and pick the catalog's at run time)
and identifiers quoted inside descriptions (``next_action``, ``TASK_API_URL``).
"""

from __future__ import annotations

import re
from typing import Any

from dskit.tooling.dslbuild.builder import Flow

# CJK ideographs and CJK/full-width punctuation: what marks the Chinese half of a bilingual note.
CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")

# English titles by node id (the Chinese titles are the ones the flows are built with).
EN_TITLES = {
    "start": "Start", "has_prompt": "Prompt ready for this turn?", "prompt": "This turn's understanding prompt",
    "context": "Understanding context", "understand": "Understand: rewrite + route + slots",
    "state": "State machine", "route": "Branch on next action", "has_api": "Task API configured?",
    "call_api": "Call the task API", "result": "Record the outcome", "execute_reply": "Outcome reply",
    "faq_search": "Knowledge retrieval", "faq_knowledge": "Passages as text", "faq_answer": "FAQ answer",
    "chat_answer": "Small-talk reply", "reply": "This turn's reply and memory",
    "save_state": "Save the dialogue state", "answer": "Reply to the user", "history": "Update the history",
    "has_memory": "Memory updated by the state node?", "memory": "This turn's memory",
    "need_summary": "LLM summary needed?", "summarize": "LLM summary merge", "summary_check": "Check the summary",
    "summary_out": "This turn's summary and next prompt", "save": "Save the state and memory", "rewrite": "Question rewrite",
    "classify": "Question classifier", "extract": "Parameter extractor", "adapter": "Classic adapter",
    "recall": "Recall user memory", "track_state": "Track the dialogue state", "exec_reply": "What will be done",
    "compress": "Compress the history", "has_passages": "Passages found?", "outcome": "Task outcome",
    "save_all": "Save the state and memory (joined)", "answer_all": "Reply to the user (joined)",
    "save_summary": "Save the summary",
}
EN_TOOL_LABELS = {"recall": "Recall", "track_state": "Track the dialogue state (calls the model)",
                  "compress_history": "Compress the history"}
APP_NAMES = {
    "zh": {"fast": "对话助手（快速版）", "classic": "对话助手（经典版）", "plugin": "对话助手（插件版）"},
    "en": {"fast": "Dialogue assistant (fast)", "classic": "Dialogue assistant (classic)",
           "plugin": "Dialogue assistant (plugin tools)"},
}
# After a catalog's own name: which of the three files this app is (the three are imported side by side).
LAYOUT_SUFFIXES = {
    "zh": {"fast": "（快速版）", "classic": "（经典版）", "plugin": "（插件版）"},
    "en": {"fast": " (fast)", "classic": " (classic)", "plugin": " (plugin tools)"},
}


class LocalizeError(ValueError):
    """A note that is not "Chinese, then English": a builder bug, never a file to write."""


def split_bilingual(text: str) -> tuple[str, str]:
    """("中文。", "English.") of a note written Chinese first, then English.

    The English half starts after the last CJK character; a note without one is English only.
    """
    last = -1
    for match in CJK.finditer(text):
        last = match.end()
    if last < 0:
        return "", text.strip()
    return text[:last].strip(), text[last:].strip()


def one_language(text: str, lang: str, where: str) -> str:
    """The ``lang`` half of a bilingual note; refuses a note that lacks it."""
    zh, en = split_bilingual(text)
    half = en if lang == "en" else zh
    if not half:
        raise LocalizeError(f"{where}: no {lang} half in {text!r}")
    return half


def suggested_questions(catalog: dict[str, Any], limit: int = 3) -> list[str]:
    """Up to ``limit`` openers, one per task: its first example, else its label."""
    out: list[str] = []
    for name, spec in (catalog.get("tasks") or {}).items():
        spec = spec or {}
        examples = [str(e) for e in spec.get("examples") or [] if str(e).strip()]
        text = examples[0] if examples else str(spec.get("label") or name)
        if text not in out:
            out.append(text)
        if len(out) == limit:
            break
    return out


def app_name(catalog: dict[str, Any], lang: str, layout: str) -> str:
    """The Dify app's name: the catalog's ``name`` (on one line) and the layout ("Bright Smile Dental
    assistant (fast)"), so the app a user imports is called what they called their assistant; a catalog
    without a name gets "Dialogue assistant (fast): " and its first task labels."""
    name = " ".join(str(catalog.get("name") or "").split())
    if name:
        return name + LAYOUT_SUFFIXES[lang][layout]
    labels = [str((spec or {}).get("label") or task) for task, spec in (catalog.get("tasks") or {}).items()]
    joined = ("、" if lang == "zh" else ", ").join(labels[:3]) + ("…" if len(labels) > 3 else "")
    return APP_NAMES[lang][layout] + (("：" if lang == "zh" else ": ") + joined if joined else "")


def localize(flow: Flow, lang: str, layout: str, catalog: dict[str, Any]) -> Flow:
    """Rewrite ``flow``'s notes in ``lang`` only (see the module docstring); returns ``flow``."""
    lang = "en" if lang == "en" else "zh"
    for node in flow.nodes:
        data = node["data"]
        node_id = node["id"]
        if lang == "en":
            if node_id not in EN_TITLES:
                raise LocalizeError(f"node {node_id}: no English title")
            data["title"] = EN_TITLES[node_id]
            if "tool_label" in data:
                data["tool_label"] = EN_TOOL_LABELS.get(str(data.get("tool_name")), str(data.get("tool_name")))
        if data.get("desc"):
            data["desc"] = one_language(data["desc"], lang, f"node {node_id}")
        for message in data.get("prompt_template") or []:  # message ids are made from the title
            if isinstance(message, dict) and "role" in message:
                message["id"] = f"{data['title']}-{message['role']}"
    for var in flow.conversation_variables + flow.environment_variables:
        var["description"] = one_language(var["description"], lang, f"variable {var['name']}")
    flow.name = app_name(catalog, lang, layout)
    flow.description = str(catalog.get("description") or "").strip() or flow.opening_statement
    flow.suggested_questions = suggested_questions(catalog)
    return flow


# --------------------------------------------------------------------------------------------------
# Checking a built document: which texts are not in the catalog's language
# --------------------------------------------------------------------------------------------------

# Fields a Dify user reads in the editor or the chat: titles, notes, prompts, templates, class names,
# parameter and variable descriptions, the app's name, the opening statement, suggested questions.
USER_VISIBLE = {"title", "desc", "description", "name", "opening_statement", "suggested_questions", "text",
                "instruction", "instructions", "template", "tool_label", "query_prompt_template"}
# Read by no one as prose: code-node source (the engine's tables carry both languages), the catalog
# itself (the user's own JSON, keys in English), ids, selectors, types, models, plugin identifiers.
NEVER_PROSE = {"code", "value", "id", "variable_selector", "value_selector", "selector", "type", "provider",
               "mode", "variable", "value_type", "marketplace_plugin_unique_identifier", "icon"}
# What a Chinese text may keep in Latin letters: acronyms and terms Dify's own Chinese UI keeps, the
# values an environment variable takes, and the understanding JSON's field names.
ACRONYMS = {"FAQ", "LLM", "JSON", "API", "URL", "POST", "HTTP", "Dify", "ID", "token", "true", "false",
            "commands"}
_SKIP = re.compile(r"\{\{#[^#]*#\}\}|\{\{.*?\}\}|\{%.*?%\}|\{[^{}]*\}|\S*[_./]\S*")
_WORD = re.compile(r"[A-Za-z]{2,}")


def strings(doc: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str]]:
    """Every string of a YAML document with the path of keys (list items as their index) to it."""
    if isinstance(doc, dict):
        return [item for key, value in doc.items() for item in strings(value, (*path, str(key)))]
    if isinstance(doc, list):
        return [item for index, value in enumerate(doc) for item in strings(value, (*path, str(index)))]
    return [(path, doc)] if isinstance(doc, str) else []


def _field(path: tuple[str, ...]) -> str:
    """The key a string sits under (for a list of strings, the list's key)."""
    for key in reversed(path):
        if not key.isdigit():
            return key
    return ""


def foreign_texts(doc: dict[str, Any], lang: str) -> list[str]:
    """``path: text`` of each user-visible string not in ``lang``: any CJK character in an English
    document; an English word (not an identifier, a reference or an acronym) in a Chinese one."""
    found = []
    for path, text in strings(doc):
        field = _field(path)
        if field in NEVER_PROSE or field not in USER_VISIBLE:
            continue
        if field == "name" and path[0] != "app" and "classes" not in path:
            continue  # variable, parameter and model names are identifiers; the app's and classes' are prose
        if lang == "en":
            bad = CJK.search(text) is not None
        else:
            words = [w for w in _WORD.findall(_SKIP.sub(" ", text)) if w not in ACRONYMS]
            bad = bool(words)
        if bad:
            found.append(f"{'.'.join(path)}: {text[:80]!r}")
    return found
