"""The conversation variables of the three Chatflows (fast, classic, plugin), declared once.

All are strings with the default ``''`` (JSON travels as text), so a layout can never declare a
variable with another type than the next one. ``sys_context_str`` is the state and the only source of
truth; ``history`` and ``summary`` are the memory. Nothing derived from the state is stored: every
layout's prompts read the state through the model's view of it (the code-node layouts' ``context``
node, the plugin layout's ``track_state``), so a turn stores nothing that nobody reads.
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


def declare_conversation_variables(flow: Flow) -> None:
    """Declare the state and the memory."""
    for var in CONVERSATION_VARIABLES:
        flow.conversation_var(var.name, var.description, "")
