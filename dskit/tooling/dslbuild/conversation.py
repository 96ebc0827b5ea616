"""The conversation variables of the three Chatflows (fast, classic, plugin), declared once.

All are strings with the default ``''`` (JSON travels as text), so a layout can never declare a
variable with another type than the next one. ``sys_context_str`` is the state and the only source of
truth; ``history`` and ``summary`` are the memory. ``current_task`` and ``current_task_slots`` are
copies derived from the state for prompts that reference them as ``{{#conversation.…#}}`` — the
classic layout's rewrite, classifier and extractor prompts, and the fast layout's understanding
prompt when it has no context node. A layout whose prompts do not read them neither declares nor
writes them (the fast layout reads the state through its context node, the plugin layout through
``track_state``), so a turn stores nothing that nobody reads.
"""

from __future__ import annotations

from dataclasses import dataclass

from dskit.tooling.dslbuild.builder import Flow


@dataclass(frozen=True)
class ConversationVariable:
    name: str
    description: str  # Chinese, then English: the editor shows it to the person who imports the file
    task_copy: bool = False  # derived from the state, declared only where a prompt reads it


CONVERSATION_VARIABLES = (
    ConversationVariable("history", "最近几轮对话（每轮末尾更新）。Recent turns, updated at the end of every turn."),
    ConversationVariable("summary", "更早对话的摘要（移出窗口的轮次并入）。Summary of older turns, merged in when "
                                    "they leave the window."),
    ConversationVariable("sys_context_str", "完整对话状态 JSON：任务栈、词槽、历史值。The whole dialogue state "
                                            "(task stack, slots, slot history) as JSON."),
    ConversationVariable("current_task", "当前任务名，由状态派生，供提示词引用。Name of the task in focus, "
                                         "derived from the state for prompts.", task_copy=True),
    ConversationVariable("current_task_slots", "当前任务词槽 JSON，未填为 null，由状态派生。The focused task's "
                                               "slots as JSON, null when empty, derived from the state.",
                         task_copy=True),
)

TASK_COPIES = tuple(var.name for var in CONVERSATION_VARIABLES if var.task_copy)


def declare_conversation_variables(flow: Flow, *, task_copies: bool) -> None:
    """Declare the variables a layout uses: always the state and memory; the task copies on request."""
    for var in CONVERSATION_VARIABLES:
        if task_copies or not var.task_copy:
            flow.conversation_var(var.name, var.description, "")
