"""Prompts for the one LLM call per turn that produces the understanding contract.

The instructions are static (they go into a Dify LLM node's system prompt as they are); the per-turn
input is built from the catalog, a brief of the state, the history and the user's message. Seed 000's
rules are kept ("未提及的槽位必须保留原值" becomes unnecessary: the model only reports changes) and
seed 003's query rewrite is folded into the same call (`rewritten_query`).
"""

from __future__ import annotations

import json
from typing import Any

from .catalog import Catalog, catalog_compact, load_catalog
from .gaps import missing_slots
from .messages import norm_lang
from .state import load_state

_INSTRUCTIONS_ZH = """你是对话理解器。根据任务目录、当前状态、对话历史和用户最新输入，输出一个 JSON 对象，只输出 JSON，不要任何解释：
{"rewritten_query": "结合上下文补全指代和省略后的完整问题", "commands": [ ... ]}

可用的命令（commands 可以有多个，按用户说的顺序）：
- {"type": "start_task", "task": 任务名, "slots": {槽位: 值}}  用户提出目录中的新任务
- {"type": "set_slots", "task": 任务名, "slots": {槽位: 值}}  补充或修改已打开任务的槽位；值为 null 表示删除该槽位
- {"type": "rollback_slot", "task": 任务名, "slot": 槽位}  用户要撤回上一次修改（如“还是七点吧”“还是原来的吧”）
- {"type": "cancel_task", "task": 任务名}  用户不要某个任务了
- {"type": "confirm"} / {"type": "deny"}  用户对确认问题回答是 / 否
- {"type": "faq", "question": 完整问题}  知识性提问（政策、规则、介绍等），不改变任务
- {"type": "chitchat"}  寒暄、闲聊、情绪表达
- {"type": "handoff", "reason": 原因}  用户要求人工客服
- {"type": "reset"}  用户要求全部重来
- {"type": "cannot_handle"}  完全无法理解

规则：
1. 只使用目录中的任务名和槽位名；值要符合类型和可选值，无法确定的值不要写。
2. 只输出本轮变化：没提到的槽位不要输出（状态由系统保存）。
3. 新值覆盖旧值；相对说法（如“提前一小时”）要根据当前状态算出新值。
4. 用户取消后重新开始（如“不订了，下周六再说吧”）输出 cancel_task 再 start_task，只带新说的槽位。
5. 一句话有多个意图（如“订周六的，顺便查下北京天气”）就输出多个命令；有多个打开的任务时 set_slots 要写 task。
6. 回答确认问题用 confirm/deny；回答是/否类槽位（布尔）用 set_slots 写 true/false。"""

_INSTRUCTIONS_EN = """You are the dialogue understanding step. From the task catalog, the current state, the history and the
user's latest message, output one JSON object and nothing else:
{"rewritten_query": "the message made self-contained (pronouns and ellipsis resolved)", "commands": [ ... ]}

Commands (several are fine, in the order the user said them):
- {"type": "start_task", "task": NAME, "slots": {SLOT: VALUE}}  the user asks for a new task from the catalog
- {"type": "set_slots", "task": NAME, "slots": {SLOT: VALUE}}  add or change slots of an open task; null deletes a slot
- {"type": "rollback_slot", "task": NAME, "slot": SLOT}  the user takes a change back ("make it seven again")
- {"type": "cancel_task", "task": NAME}  the user drops a task
- {"type": "confirm"} / {"type": "deny"}  yes / no to a confirmation question
- {"type": "faq", "question": FULL_QUESTION}  a knowledge question; tasks stay as they are
- {"type": "chitchat"}  greetings, small talk, feelings
- {"type": "handoff", "reason": WHY}  the user asks for a human
- {"type": "reset"}  the user wants to start over
- {"type": "cannot_handle"}  the message cannot be understood at all

Rules:
1. Use only task and slot names from the catalog; values must fit the slot's type and options; never guess.
2. Report only what changes this turn: leave unmentioned slots out (the system keeps the state).
3. A new value replaces the old one; compute relative changes ("an hour earlier") from the current state.
4. Cancel-then-restart is cancel_task followed by start_task with only the newly said slots.
5. Several intents in one message give several commands; with several open tasks, set_slots names its task.
6. Answer a confirmation question with confirm/deny; a yes/no (boolean) slot with set_slots true/false."""


def understanding_instructions(lang: str = "zh") -> str:
    """The system prompt of the understanding LLM (static, so it can sit in a DSL node as it is)."""
    return _INSTRUCTIONS_EN if norm_lang(lang) == "en" else _INSTRUCTIONS_ZH


def state_brief(state_str: Any, catalog: Any, lang: str = "zh") -> str:
    """The state as an LLM needs it: open tasks top first, their slots, what is missing, what was asked.

    Much shorter than the raw JSON (no timeline, counters or histories) and never trimmed by the
    context budget: it is what anchors references such as "改成明天吧" (seed 000 §4.2).
    """
    cat: Catalog = load_catalog(catalog)
    state, _ = load_state(state_str)
    en = norm_lang(lang) == "en"
    if not state["task_stack"]:
        return "No open task." if en else "当前没有进行中的任务。"
    lines = []
    for depth, task in enumerate(reversed(state["task_stack"])):
        spec = cat.tasks.get(task["name"])
        if spec is None:
            continue
        missing = missing_slots(task, spec)
        marker = ("current" if en else "当前") if depth == 0 else ("suspended" if en else "挂起")
        lines.append(f"- [{marker}] {task['name']} ({spec.display}) stage={task['stage']} "
                     f"slots={json.dumps(task['slots'], ensure_ascii=False)} missing={json.dumps(missing, ensure_ascii=False)}")
    asking = state["counters"].get("asking")
    if asking:
        lines.append(("Last question asked for: " if en else "上一轮追问的槽位：") + asking.split(".", 1)[-1])
    return "\n".join(lines)


def understanding_input(catalog: Any, state_str: Any, query: str, *, history: str = "", summary: str = "",
                        lang: str = "zh") -> str:
    """The user prompt of the understanding LLM: catalog, state, summary, history and the new message."""
    cat = load_catalog(catalog)
    en = norm_lang(lang) == "en"
    parts = [("## Task catalog\n" if en else "## 任务目录\n") + catalog_compact(cat),
             ("## Current state\n" if en else "## 当前状态\n") + state_brief(state_str, cat, lang)]
    if summary.strip():
        parts.append(("## Summary of earlier turns\n" if en else "## 更早对话摘要\n") + summary.strip())
    if history.strip():
        parts.append(("## Recent turns\n" if en else "## 最近对话\n") + history.strip())
    parts.append(("## User's latest message\n" if en else "## 用户最新输入\n") + str(query or "").strip())
    return "\n\n".join(parts)
