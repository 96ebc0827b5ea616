"""The prompts of the Chatflow's LLM nodes, Chinese by default, English available.

The understanding prompt is not here: it is the engine's (:func:`dskit.context.prompts.understanding_prompt`),
built up to the message at the end of each turn by the history node (or, when none was built, by the
``context`` code node), so the DSL and the plugin send the model the same text. The LLM nodes read it
through the ``prompt`` aggregator (:mod:`.flows`): ``head`` + ``message`` is the whole user prompt,
``state`` the model's view of the state alone, which the classic layout's classifier and extractor
read. The other prompts are short on purpose: the answer node shows a FAQ or small-talk answer
followed by the engine's pending question, so the model never has to remember the task.

The FAQ answer reads the retrieved passages through Dify's LLM context (``{{#context#}}``), which Dify
fills only when the retrieval found something (api/core/workflow/nodes/llm/node.py); the Chatflows call
the FAQ model only then (``has_passages``), and say the engine's "not found" sentence otherwise.
"""

from __future__ import annotations

from dskit.tooling.dslbuild.node_data import ref

# Each LLM node's max_tokens: room for its longest sensible answer and little more. A small model
# sometimes never stops (a parameter extractor once generated for 14 minutes); the cap bounds the
# time and cost of a call. The understanding JSON of a dense message with several commands is about
# 150-250 tokens; the extractor writes every parameter (mostly empty strings); a classifier answers
# one short JSON object; a rewrite is one sentence; FAQ answers are at most three sentences, small
# talk one; a summary is at most 300 characters (zh) or 200 words (en).
MAX_TOKENS = {"understand": 512, "rewrite": 160, "classify": 160, "extract": 512, "faq_answer": 320,
              "chat_answer": 120, "summarize": 600}

# The understanding prompt as the ``prompt`` aggregator gives it (:func:`.flows.prompt_nodes`): the head
# (catalog, state, summary, recent turns, the latest-message header) and the message after it; after a
# FAQ or small-talk turn the head stops where the model's answer goes in the last turn, and that answer
# (``pending``) and the rest of the head (``tail``) come before the message ("" on other turns).
PROMPT_SYSTEM = ref(["prompt", "system", "output"])
CONTEXT = (ref(["prompt", "head", "output"]) + ref(["prompt", "pending", "output"]) + ref(["prompt", "tail", "output"])
           + ref(["prompt", "message", "output"]))
STATE = ref(["prompt", "state", "output"])  # the model's view of the state alone
SUMMARY = ref(["conversation", "summary"])
QUERY = ref(["sys", "query"])

REWRITE = {
    "zh": {
        "system": "你是问题改写助手。结合任务目录、当前状态和对话历史，把用户最新一句话改写成一句完整、独立、"
                  "不含代词和省略的话。只输出改写后的句子；如果无需改写，原样输出。不要回答问题。",
        "user": CONTEXT,
    },
    "en": {
        "system": "You rewrite the user's latest message into one complete, self-contained sentence, resolving "
                  "pronouns and ellipsis from the task catalog, the current state and the conversation. Output "
                  "the rewritten sentence only (unchanged if it needs no rewriting). Do not answer it.",
        "user": CONTEXT,
    },
}

CLASSIFY = {
    "zh": f"当前状态：\n{STATE}\n用户在回答追问、补充或修改当前任务的信息时，选择“补充信息”；"
          "提出目录中的任务时选择该任务；对确认问题说是/不是时选择“确认”/“否认”。",
    "en": f"Current state:\n{STATE}\nWhen the user answers a question about, adds to or changes the current "
          "task, choose “more info”; a new task from the catalog is that task; yes/no to a confirmation "
          "question is “confirm”/“deny”.",
}

EXTRACT = {
    "zh": f"当前状态：\n{STATE}\n只提取用户这句话里明确说出的值，没说的参数留空字符串。",
    "en": f"Current state:\n{STATE}\nExtract only values this message states; leave the others as empty strings.",
}


# The plugin layout's FAQ answer reads the passages through this template node's output, never through
# Dify's ``{{#context#}}``: real Dify substitutes ``{{#context#}}`` only when the retrieval returned
# something (api/core/workflow/nodes/llm/node.py: the context is filled only when non-empty), so with an
# empty or missing knowledge base the model would read the raw placeholder, while graphon substitutes "".
# The template builds the very text Dify and graphon make of a retrieval result for the context (each
# passage's summary, if any, and content, one per line, the whole stripped). The code-node layouts read
# the context itself, behind an if-else that calls the model only when passages were found (a template
# is one more sandbox run: issue 39).
_PASSAGES = ("{% filter trim %}{% for item in result %}{% if item.summary is defined and item.summary %}{{ item.summary }}\n{% endif %}"
             "{{ item.content }}\n{% endfor %}{% endfilter %}")
KNOWLEDGE_TEMPLATE = {"zh": _PASSAGES, "en": _PASSAGES}
CONTEXT_PLACEHOLDER = "{{#context#}}"  # Dify's LLM context, filled from the node's context variable


def faq_prompt(lang: str, question_ref: str, knowledge_ref: str) -> dict[str, str]:
    """The FAQ answer's messages; ``knowledge_ref`` is the passages as text (never ``{{#context#}}``)."""
    if lang == "en":
        return {
            "system": "Answer the user's question from the knowledge below, briefly (at most 3 sentences). "
                      "If the knowledge does not cover it, say you are not sure and suggest asking a human "
                      f"agent. Do not ask follow-up questions.\n\n## Knowledge\n{knowledge_ref}",
            "user": question_ref,
        }
    return {
        "system": "根据下面的知识回答用户的问题，简洁（不超过3句）。知识里没有答案时，说明不确定，并建议转人工。"
                  f"不要反问。\n\n## 知识\n{knowledge_ref}",
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

