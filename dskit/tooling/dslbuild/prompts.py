"""The prompts of the Chatflow's LLM nodes, Chinese by default, English available.

The understanding prompt is the one that matters: the engine's instructions for the understanding
contract (:mod:`dskit.prompts`), with the catalog, the task in focus, the summary and the recent
history in front of the model: the state goes into the prompt, the rewriting model's temperature
stays low, and history travels as text because window memory reaches no LLM node on the DSL path. The other prompts are short on purpose: FAQ and chitchat answers are appended
to the engine's pending question by a template, so the model never has to remember the task.
"""

from __future__ import annotations

from dskit.tooling.dslbuild.node_data import ref

CATALOG = ref(["env", "TASK_CATALOG"])
TASK = ref(["conversation", "current_task"])
SLOTS = ref(["conversation", "current_task_slots"])
SUMMARY = ref(["conversation", "summary"])
HISTORY = ref(["conversation", "history"])
QUERY = ref(["sys", "query"])

def understand_prompt(lang: str) -> dict[str, str]:
    """The understanding LLM: the engine's own instructions, then catalog, state, memory and message.

    The system prompt is :func:`dskit.prompts.understanding_instructions` verbatim, so the DSL and the
    engine's prompt tests can never disagree about the contract. The user message mirrors
    :func:`dskit.prompts.understanding_input`, built from Dify variables instead of Python values.
    """
    from dskit.prompts import understanding_instructions  # noqa: PLC0415

    if lang == "en":
        user = (f"## Task catalog (JSON)\n{CATALOG}\n\n## Current state\nCurrent task: {TASK}\n"
                f"Its slots (null = not filled): {SLOTS}\n\n## Summary of earlier turns\n{SUMMARY}\n\n"
                f"## Recent turns\n{HISTORY}\n\n## User's latest message\n{QUERY}")
    else:
        user = (f"## 任务目录（JSON）\n{CATALOG}\n\n## 当前状态\n当前任务：{TASK}\n"
                f"当前任务槽位（null 表示未填）：{SLOTS}\n\n## 更早对话摘要\n{SUMMARY}\n\n"
                f"## 最近对话\n{HISTORY}\n\n## 用户最新输入\n{QUERY}")
    return {"system": understanding_instructions(lang), "user": user}


REWRITE = {
    "zh": {
        "system": f"""你是问题改写助手。结合对话历史，把用户最新一句话改写成一句完整、独立、不含代词和省略的话。
只输出改写后的句子；如果无需改写，原样输出。不要回答问题。

## 早前对话摘要
{SUMMARY}

## 最近对话
{HISTORY}

## 当前任务
{TASK}：{SLOTS}""",
        "user": QUERY,
    },
    "en": {
        "system": f"""You rewrite the user's latest message into one complete, self-contained sentence, resolving pronouns and ellipsis from the conversation.
Output the rewritten sentence only (unchanged if it needs no rewriting). Do not answer it.

## Summary of the earlier conversation
{SUMMARY}

## Recent conversation
{HISTORY}

## Current task
{TASK}: {SLOTS}""",
        "user": QUERY,
    },
}

CLASSIFY = {
    "zh": f"当前任务：{TASK}。用户在回答追问、补充或修改当前任务的信息时，选择“补充信息”；"
          "提出目录中的任务时选择该任务；对确认问题说是/不是时选择“确认”/“否认”。",
    "en": f"Current task: {TASK}. When the user answers a question about, adds to or changes the current "
          "task, choose “more info”; a new task from the catalog is that task; yes/no to a confirmation "
          "question is “confirm”/“deny”.",
}

EXTRACT = {
    "zh": f"当前任务：{TASK}，已有词槽：{SLOTS}。只提取用户这句话里明确说出的值，没说的参数留空字符串。",
    "en": f"Current task: {TASK}, slots so far: {SLOTS}. Extract only values this message states; leave "
          "the others as empty strings.",
}


def faq_prompt(lang: str, question_ref: str) -> dict[str, str]:
    if lang == "en":
        return {
            "system": "Answer the user's question from the knowledge below, briefly (at most 3 sentences). "
                      "If the knowledge does not cover it, say you are not sure and suggest asking a human "
                      "agent. Do not ask follow-up questions.\n\n## Knowledge\n{{#context#}}",
            "user": question_ref,
        }
    return {
        "system": "根据下面的知识回答用户的问题，简洁（不超过3句）。知识里没有答案时，说明不确定，并建议转人工。"
                  "不要反问。\n\n## 知识\n{{#context#}}",
        "user": question_ref,
    }


def chitchat_prompt(lang: str, task_ref: str) -> dict[str, str]:
    if lang == "en":
        return {
            "system": "You are a friendly assistant. Reply to the user's small talk in one short sentence. "
                      f"Do not ask questions: the open task ({task_ref}) is brought back right after your reply.",
            "user": QUERY,
        }
    return {
        "system": f"你是友好的助手。用一句简短的话回应用户的寒暄或闲聊。不要提问：你的回复之后，系统会接着引导用户回到未完成的任务（{task_ref}）。",
        "user": QUERY,
    }


def summary_prompt(lang: str, overflow_ref: str) -> dict[str, str]:
    if lang == "en":
        return {
            "system": "Merge the older dialogue turns into the running summary. Keep every fact that matters "
                      "for the user's tasks (what they want, values they gave or changed, decisions), drop "
                      "greetings and small talk. At most 200 words. Output the new summary only.\n\n"
                      f"## Summary so far\n{SUMMARY}",
            "user": overflow_ref,
        }
    return {
        "system": "把较早的对话合并进已有摘要。保留与用户任务有关的事实（想办什么、给出或修改过的信息、已做的决定），"
                  f"去掉寒暄和闲聊。不超过300字。只输出新的摘要。\n\n## 已有摘要\n{SUMMARY}",
        "user": overflow_ref,
    }


REPLY_TEMPLATE = "{{ answer }}{% if question %}\n\n{{ question }}{% endif %}"
