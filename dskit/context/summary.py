"""The rolling summary: turns that leave the history window are merged into one capped string.

A plain window throws turns beyond the last 10 away; here they are summarised instead of dropped,
the first fix for the cost of long conversations (docs/design.md, "History as text"). Two ways to
merge, the same contract:

- by an LLM, when the Chatflow has one: :func:`summary_prompt` gives the system and user text, and
  :func:`summary_accept` checks the answer (empty, refused, too long, or missing a value that the
  overflow carried → the extractive lines fill the gap);
- otherwise extractively (:func:`summary_extractive`): one line per turn that set a slot, confirmed or
  completed something, built from the sentences that carried the values and the replies that recorded
  them ("好的，已记下日期：周五"). Noise and plain questions leave nothing.

The summary is capped in estimated tokens and in bytes (it is a Dify conversation variable too).
When over the cap, the oldest lines go first, lines about corrected turns before the rest.
"""

from __future__ import annotations

import re

from ..base.messages import norm_lang
from ..rules.noise import noise_carries_value, noise_is_question, noise_records, noise_tag_turns
from ..base.tokens import estimate_tokens, truncate_to_tokens

SUMMARY_MAX_TOKENS = 400
SUMMARY_MAX_BYTES = 4_800  # fits the 5,120-byte variable limit of early Dify releases
SUMMARY_LINE_CHARS = 160
SUMMARY_MAX_LINES = 200  # only the newest lines of an oversized summary are considered
_SENTENCE = re.compile(r"[^。！？!?；;\n]+[。！？!?；;]?")
_ACK = re.compile(r"已记下|已将|已改为|改回|\bnoted\b|\bis back to\b", re.I)
_CLAUSE = re.compile(r"[，,；;]")
_PAIR_VALUE = re.compile(r"[:：]\s*([^，,；;。:：\s（）()]{1,30})")
_VALUE_TOKEN = re.compile(r"[0-9][0-9:：.\-/]*|「[^」]{1,30}」|“[^”]{1,30}”")
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")
_PREFIX = re.compile(r"^(?:合并后的)?(?:摘要|总结|summary)\s*[:：]\s*", re.I)
_REFUSAL = re.compile(r"^(?:抱歉|对不起|作为(?:一个)?AI|I'?m sorry|Sorry|As an AI)", re.I)

_TEXTS = {
    "zh": {
        "user": "用户：", "assistant": "助手：", "join": "；", "corrected": "（后被更正）",
        "answered": "（答「{q}」）", "none": "（无）",
        "system": (
            "你是对话摘要助手。把“已有摘要”和“移出窗口的对话”合并成一份新的滚动摘要，供后续轮次的模型阅读。\n"
            "规则：\n"
            "1. 保留用户提供或确认的全部关键信息：时间、日期、地点、人数、姓名、电话、订单号、金额等槽位值，"
            "用户确认、取消或更正的事项，以及已办理的结果。数字与专有名词照原样保留，不要改写。\n"
            "2. 用户后来更正过的信息，只保留更正后的值，并注明“已更正”。\n"
            "3. 删去寒暄、感谢、“嗯/好的”之类的应答、情绪宣泄、重复提问，以及失败或被拒绝的回复"
            "（标为 [noise] 的轮次一律删去）。\n"
            "4. 不要编造，不要加入对话里没有的内容，不要回答用户的问题。\n"
            "5. 按时间顺序写成要点，每行以“- ”开头，总长度不超过 {max_chars} 个字。\n"
            "6. 只输出摘要本身，不要标题、解释或代码块。"
        ),
        "user_prompt": "已有摘要：\n{summary}\n\n移出窗口的对话：\n{overflow}\n\n请输出合并后的摘要：",
    },
    "en": {
        "user": "user: ", "assistant": "assistant: ", "join": "; ", "corrected": " (later corrected)",
        "answered": " (answering \"{q}\")", "none": "(none)",
        "system": (
            "You maintain a rolling summary of a conversation. Merge the existing summary and the turns that "
            "just left the history window into one new summary, for the model to read in later turns.\n"
            "Rules:\n"
            "1. Keep every key fact the user gave or confirmed: dates, times, places, counts, names, phone "
            "numbers, order numbers, amounts (slot values), what the user confirmed, cancelled or corrected, "
            "and the results of completed tasks. Copy numbers and names exactly.\n"
            "2. For information the user corrected later, keep only the corrected value and say it was corrected.\n"
            "3. Drop greetings, thanks, acknowledgements, venting, repeated questions and failed or refused "
            "replies (turns marked [noise] always go).\n"
            "4. Do not invent anything, add nothing that was not said, do not answer the user's questions.\n"
            "5. Write bullet points in time order, each line starting with \"- \", at most {max_chars} characters "
            "in all.\n"
            "6. Output the summary only: no title, no explanation, no code block."
        ),
        "user_prompt": "Existing summary:\n{summary}\n\nTurns that left the window:\n{overflow}\n\n"
                       "Write the merged summary:",
    },
}


def _clip(text: str, limit: int = SUMMARY_LINE_CHARS) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text or "") if s.strip()]


def _record(reply: str) -> str:
    """The part of a reply that records something: the clause with the marker and the value clauses after it."""
    for sentence in _sentences(reply):
        if not noise_records(sentence):
            continue
        clauses = [c for c in _CLAUSE.split(sentence) if c.strip()]
        start = next(i for i, c in enumerate(clauses) if noise_records(c) or i == len(clauses) - 1)
        kept = [clauses[start].strip()]
        for clause in clauses[start + 1:]:
            if not noise_carries_value(clause):
                break
            kept.append(clause.strip())
        return "，".join(kept)
    return ""


def _echo(reply: str, answer: str) -> str:
    """The reply's clauses that repeat a short user answer ("苏州" -> "苏州今天：晴转多云，5℃~18℃")."""
    key = answer.strip(" 。.!！?？")
    if len(key) < 2:
        return ""
    for sentence in _sentences(reply):
        if key in sentence and not noise_is_question(sentence):
            return _clip(sentence, 60)
    return ""


def summary_fact_line(turn: dict, tag: str, reason: str, prev_assistant: str = "", lang: str = "zh") -> str:
    """The summary line for one turn ('' when the turn carried nothing worth keeping).

    Kept: what the reply recorded or completed ("已记下日期：周五", "已为您预订陶陶居，周五 19:00"),
    and the user's sentences that carry a value, correction or decision (the whole short message
    when the turn is essential but no sentence matched, e.g. "北京" answering a question, which is
    then shown with the question it answered).
    """
    if tag == "noise" or (tag == "optional" and reason != "corrected"):
        return ""
    lang = norm_lang(lang)
    t = _TEXTS[lang]
    user = " ".join((turn.get("user", "") or "").split())
    said = [s for s in _sentences(user) if noise_carries_value(s)]
    if not said and user and len(user) <= 60:
        said = [user]
    record = _record(turn.get("assistant", "") or "")
    if not record and said and len(user) <= 20:
        record = _echo(turn.get("assistant", "") or "", user)
    if record and said and all(v in record for v in _VALUE_TOKEN.findall("".join(said))):
        said = []  # the reply recorded everything the user said with a value: keep the record only
    parts = []
    if said:
        text = _clip(("" if lang == "zh" else " ").join(said), 60 if record else SUMMARY_LINE_CHARS)
        if not record and prev_assistant and noise_is_question(prev_assistant) and len(user) <= 20:
            text += t["answered"].format(q=_clip(prev_assistant, 40))
        parts.append(t["user"] + text)
    if record:
        parts.append(t["assistant"] + _clip(record, 100))
    if not parts:
        return ""
    line = "- " + t["join"].join(parts)
    if reason == "corrected":
        line += t["corrected"]
    return line


def summary_fact_lines(turns: list[dict], lang: str = "zh") -> list[str]:
    """Summary lines for a run of turns.

    Tags come from :func:`dskit.rules.noise.noise_tag_turns`, unless a turn carries both ``tag`` and
    ``reason`` (resolved by :func:`dskit.context.history.append_turn` while its neighbours were known);
    ``prev_assistant`` on a turn is the reply before it, when that turn is not in the list.
    """
    tags = noise_tag_turns(turns)
    lines, prev = [], ""
    for turn, info in zip(turns, tags):
        if turn.get("reason") and turn.get("tag") in ("essential", "optional", "noise"):
            info = {"tag": turn["tag"], "reason": turn["reason"]}  # resolved by the caller, in context
        prev = turn.get("prev_assistant", prev) or prev
        line = summary_fact_line(turn, info["tag"], info["reason"], prev, lang)
        if line:
            lines.append(line)
        prev = turn.get("assistant", "") or ""
    return lines


def summary_units(summary: str) -> list[str]:
    """A summary cut into units that can be dropped one by one: its lines, or sentences of one line."""
    text = (summary or "").strip()
    if not text:
        return []
    lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
    if len(lines) == 1 and estimate_tokens(lines[0]) > 60:
        lines = _sentences(lines[0])
    return lines[-SUMMARY_MAX_LINES:]


def _size_ok(lines: list[str], max_tokens: int) -> bool:
    text = "\n".join(lines)
    return estimate_tokens(text) <= max_tokens and len(text.encode("utf-8")) <= SUMMARY_MAX_BYTES


def summary_values(line: str) -> set[str]:
    """The values a summary line carries: numbers, quoted names, and what follows "slot：" pairs."""
    body = re.sub(r"^- ?", "", line)
    for label in ("用户：", "助手：", "user: ", "assistant: "):
        body = body.replace(label, "；")
    values = set(_VALUE_TOKEN.findall(body)) | set(_PAIR_VALUE.findall(body))
    return {v.strip() for v in values if v.strip()}


def _shows(value: str, text: str, start: int = 0) -> bool:
    """``value`` appears in ``text[start:]`` (a number only as a whole number: "23" is not in "1230")."""
    if value[:1].isdigit():
        return re.compile(rf"(?<![0-9]){re.escape(value)}(?![0-9])").search(text, start) is not None
    return text.find(value, start) >= 0


def summary_superseded(line: str, later: str, start: int = 0) -> bool:
    """True when ``line`` only acknowledged slot values ("已记下时间：19:00") that ``later[start:]`` shows again.

    Only acknowledgements qualify: their values are all "slot：value" pairs, so nothing else is lost.
    """
    if len(line) > SUMMARY_LINE_CHARS * 4 or not _ACK.search(line):
        return False  # our acknowledgement lines are short; a long one came from elsewhere
    values = summary_values(line)
    return bool(values) and all(_shows(v, later, start) for v in values)


def summary_is_fact(line: str) -> bool:
    """True when a summary line records something or carries a value (what must not be lost)."""
    return noise_records(line) or noise_carries_value(line[:SUMMARY_LINE_CHARS * 4].split("：", 1)[-1])


def summary_ranks(lines: list[str], lang: str = "zh", after: str = "") -> list[int]:
    """How soon each line may go: 0 corrected, 1 superseded by a later line (or by ``after``, e.g. the
    state), 2 not a fact (:func:`summary_is_fact`), 3 a fact. Lines go by rank, then oldest first."""
    corrected = _TEXTS[norm_lang(lang)]["corrected"]
    joined = "\n".join(lines) + "\n" + after
    ranks, pos = [], 0
    for i, line in enumerate(lines):
        pos += len(line) + 1  # where the next line starts in ``joined``
        if line.endswith(corrected):
            ranks.append(0)
        elif (i + 1 < len(lines) or after) and summary_superseded(line, joined, pos):
            ranks.append(1)
        elif not summary_is_fact(line):
            ranks.append(2)
        else:
            ranks.append(3)
    return ranks


def summary_victim(lines: list[str], lang: str = "zh", keep_facts: bool = False) -> int:
    """The index of the line to drop first (see :func:`summary_ranks`); -1 when none may go
    (no lines, or only facts left and ``keep_facts``)."""
    if not lines:
        return -1
    ranks = summary_ranks(lines, lang)
    best = min(range(len(lines)), key=lambda i: (ranks[i], i))
    return -1 if keep_facts and ranks[best] == 3 else best


def summary_trim(lines: list[str], max_tokens: int = SUMMARY_MAX_TOKENS, lang: str = "zh") -> list[str]:
    """Drop lines until the summary fits, in :func:`summary_ranks` order; a lone line is cut short.

    Sizes are summed per line (an upper bound of the whole), so the work is linear in the lines.
    """
    lines = list(lines)[-SUMMARY_MAX_LINES:]
    if _size_ok(lines, max_tokens):
        return lines
    ranks = summary_ranks(lines, lang)
    tokens = [estimate_tokens(line) + 1 for line in lines]
    sizes = [len(line.encode("utf-8")) + 1 for line in lines]
    total, total_bytes, gone = sum(tokens), sum(sizes), set()
    for i in sorted(range(len(lines)), key=lambda i: (ranks[i], i)):
        if (total <= max_tokens and total_bytes <= SUMMARY_MAX_BYTES) or len(gone) == len(lines) - 1:
            break
        gone.add(i)
        total, total_bytes = total - tokens[i], total_bytes - sizes[i]
    kept = [line for i, line in enumerate(lines) if i not in gone]
    while kept and not _size_ok(kept, max_tokens):
        if len(kept) == 1:
            cut = truncate_to_tokens(kept[0], max_tokens)
            cut = cut.encode("utf-8")[:SUMMARY_MAX_BYTES - 3].decode("utf-8", "ignore")
            return [cut] if cut else []
        del kept[0]
    return kept


def summary_merge(summary: str, new_lines: list[str], max_tokens: int = SUMMARY_MAX_TOKENS,
                  lang: str = "zh") -> str:
    """Old summary + new lines (duplicates skipped), trimmed to the caps."""
    lines = summary_units(summary)
    seen = set(lines)
    for line in new_lines:
        if line not in seen:
            lines.append(line)
            seen.add(line)
    return "\n".join(summary_trim(lines, _max(max_tokens), lang))


def _max(max_tokens: object) -> int:
    try:
        value = int(max_tokens)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return SUMMARY_MAX_TOKENS
    return min(max(value, 20), 20_000)


def summary_extractive(summary: str, overflow_turns: list[dict], max_tokens: int = SUMMARY_MAX_TOKENS,
                       lang: str = "zh") -> str:
    """Merge overflow turns into the summary without an LLM."""
    return summary_merge(summary, summary_fact_lines(overflow_turns, lang), max_tokens, lang)


def summary_prompt(summary: str, overflow: str, lang: str = "zh",
                   max_tokens: int = SUMMARY_MAX_TOKENS) -> dict:
    """The LLM prompt that merges ``overflow`` (history text) into ``summary``: {"system", "user"}.

    ``max_chars`` in the rules is derived from the token cap (about 1.5 Chinese characters per token).
    """
    t = _TEXTS[norm_lang(lang)]
    limit = _max(max_tokens)
    max_chars = int(limit * 1.5) if norm_lang(lang) == "zh" else limit * 4
    return {
        "system": t["system"].replace("{max_chars}", str(max_chars)),
        "user": t["user_prompt"].replace("{summary}", (summary or "").strip() or t["none"])
                                .replace("{overflow}", (overflow or "").strip() or t["none"]),
    }


def _clean_llm(text: object) -> str:
    if not isinstance(text, str):
        return ""
    text = _FENCE.sub("", text.strip()).strip()
    text = re.sub(r"<think>.*?</think>", "", text, flags=re.S).strip()
    return _PREFIX.sub("", text).strip()


def summary_accept(llm_text: object, fallback_summary: str, overflow_turns: list[dict],
                   max_tokens: int = SUMMARY_MAX_TOKENS, lang: str = "zh") -> dict:
    """Check an LLM summary: {"summary", "source": "llm"|"extractive", "added_facts": n}.

    Refused, empty or far-too-long answers give ``fallback_summary`` (the extractive merge). Fact
    lines whose values (numbers, quoted names) the LLM left out are appended, so nothing the
    overflow carried is lost by a sloppy model.
    """
    limit = _max(max_tokens)
    text = _clean_llm(llm_text)
    if not text or _REFUSAL.match(text) or estimate_tokens(text) > 3 * limit:
        return {"summary": summary_merge(fallback_summary, [], limit, lang), "source": "extractive",
                "added_facts": 0}
    lines = summary_units(text)
    added = 0
    for fact in summary_fact_lines(overflow_turns, lang):
        values = _VALUE_TOKEN.findall(fact)
        if values and any(v not in text for v in values):
            lines.append(fact)
            added += 1
    return {"summary": "\n".join(summary_trim(lines, limit, lang)), "source": "llm", "added_facts": added}
