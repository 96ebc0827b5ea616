"""The conversation variables of the three Chatflows (fast, classic, plugin), declared once.

All are strings with the default ``''`` (JSON travels as text), so a layout can never declare a
variable with another type than the next one. ``sys_context_str`` is the state and the only source of
truth; ``history`` and ``summary`` are the memory. The code-node layouts also keep the next turn's
understanding prompt up to the message (``prompt_*``), built by the history node when a turn ends from
the state, history and summary it leaves, so that the next turn's model call needs no code node first
(dskit/tooling/dslbuild/flows.py); each layout declares only the ones its prompts read, and the plugin
layout none (its ``track_state`` tool builds the prompt).
"""

from __future__ import annotations

from dataclasses import dataclass

from dskit.tooling.dslbuild.builder import Flow


@dataclass(frozen=True)
class ConversationVariable:
    name: str
    description: str  # Chinese, then English: the editor shows it to the person who imports the file


CONVERSATION_VARIABLES = (
    ConversationVariable("history", "最近几轮对话（每轮末尾更新）。Recent turns, updated at the end of every turn."),
    ConversationVariable("summary", "更早对话的摘要（移出窗口的轮次并入）。Summary of older turns, merged in when "
                                    "they leave the window."),
    ConversationVariable("sys_context_str", "完整对话状态 JSON：任务栈、词槽、历史值。The whole dialogue state "
                                            "(task stack, slots, slot history) as JSON."),
)

# The next turn's prompt (dskit.surfaces.nodes.next_prompt), written with the state by one assigner, so a prompt never
# outlives the state it shows; a new conversation's starts as the file's prompt for an empty conversation.
PROMPT_VARIABLES = {
    "prompt_system": ConversationVariable(
        "prompt_system", "下一轮理解 LLM 的系统提示词（每轮末尾生成）。The understanding LLM's system prompt for the "
                         "next turn, built at the end of every turn."),
    "prompt_head": ConversationVariable(
        "prompt_head", "下一轮理解提示词中消息之前的部分（每轮末尾生成，为空时由上下文节点生成）。The next turn's "
                       "understanding prompt up to the message, built at the end of every turn (empty: the context "
                       "node builds it)."),
    "prompt_state": ConversationVariable(
        "prompt_state", "下一轮提示词中的状态视图（每轮末尾生成）。The model's view of the state for the next "
                        "turn's prompts, built at the end of every turn."),
    "prompt_tail": ConversationVariable(
        "prompt_tail", "FAQ、闲聊轮次之后：下一轮提示词中上一轮模型回答之后的部分。After a FAQ or small-talk turn: "
                       "the next prompt's rest after where that turn's model answer goes."),
    "reply_pending": ConversationVariable(
        "reply_pending", "上一轮的 FAQ 或闲聊回答，下一轮补进历史。The last turn's FAQ or small-talk answer, put into "
                         "the history on the next turn."),
}


def declare_conversation_variables(flow: Flow, prompt: tuple[str, ...] = (),
                                   defaults: dict[str, str] | None = None) -> None:
    """Declare the state, the memory and the ``prompt`` variables this layout's prompts read; ``defaults``:
    the values a new conversation starts with (the prompt of an empty conversation), else ''."""
    for var in CONVERSATION_VARIABLES + tuple(PROMPT_VARIABLES[name] for name in prompt):
        flow.conversation_var(var.name, var.description, (defaults or {}).get(var.name, ""))
