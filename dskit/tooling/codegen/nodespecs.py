"""What each generated code node is: entry function, inputs and where to bind them, typed outputs,
and the variable-assigner write-backs that make its state survive to the next turn.

One table drives everything a user sees about a node: the header of code_nodes/<name>.py, the
READMEs, the runner checks in the tests and (later) the DSL generator, so they cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dskit.surfaces.classic import CLASSIC_CLASSES
from dskit.context.context import CONTEXT_TOTAL_BUDGET, CONTEXT_ZONE_BUDGETS
from dskit.state.records import NEXT_ACTIONS
from dskit.base.limits import CODE_MAX_STRING_LENGTH, MIN_DIFY_VERSION


@dataclass(frozen=True)
class Bind:
    """Where an input variable comes from: a conversation/env/sys variable or an upstream node's output."""

    scope: str  # "conversation" | "env" | "sys" | "node"
    name: str  # variable name, or for "node" the upstream node's role in English
    output: str = ""  # for "node": which output of that node
    name_zh: str = ""  # for "node": the role in Chinese

    def text(self, lang: str = "en") -> str:
        """``{{#conversation.history#}}`` or ``<understanding LLM>.text``."""
        if self.scope == "node":
            role = self.name_zh if lang == "zh" and self.name_zh else self.name
            return f"<{role}>.{self.output}"
        return "{{#" + f"{self.scope}.{self.name}" + "#}}"


@dataclass(frozen=True)
class NodeInput:
    """One input variable of the code node (the ``main`` parameter of the same name)."""

    name: str
    bind: Bind
    en: str
    zh: str
    type: str = "string"
    optional: bool = False
    default: str = '""'  # the default in main's signature (a Python literal): when it is not bound
    annotation: str = "str"


@dataclass(frozen=True)
class NodeOutput:
    """One declared output: its Dify type and what it holds."""

    name: str
    type: str
    en: str
    zh: str


@dataclass(frozen=True)
class NodeSetting:
    """A knob with a default in ``main``'s signature: edit the default, or bind a variable of that name."""

    name: str
    default: str  # a Python literal, pasted into main's signature
    en: str
    zh: str
    annotation: str = "str"


@dataclass(frozen=True)
class WriteBack:
    """A variable-assigner item: ``conversation.<variable>`` over-written with this node's ``output``."""

    variable: str
    output: str
    operation: str = "over-write"


@dataclass(frozen=True)
class NodeSpec:
    """One code node: generated into code_nodes/<name>.py from ``entry``."""

    name: str
    title_en: str
    title_zh: str
    entry: str  # "dskit.surfaces.nodes:state_node"
    summary_en: str
    summary_zh: str
    inputs: tuple[NodeInput, ...]
    outputs: tuple[NodeOutput, ...]
    writes: tuple[WriteBack, ...] = ()
    settings: tuple[NodeSetting, ...] = ()
    pass_extra: bool = False  # extra input variables reach the entry function as keyword arguments
    extra_en: str = ""
    extra_zh: str = ""
    notes_en: tuple[str, ...] = field(default_factory=tuple)
    notes_zh: tuple[str, ...] = field(default_factory=tuple)

    @property
    def filename(self) -> str:
        return f"{self.name}.py"

    @property
    def entry_function(self) -> str:
        return self.entry.partition(":")[2]

    def output_types(self) -> dict[str, str]:
        """{output: Dify type}, in declaration order: what ``run_code_node`` checks."""
        return {o.name: o.type for o in self.outputs}

    def conversation_variables(self) -> list[str]:
        """Conversation variables the node reads or writes (all string-typed, default '')."""
        names = [i.bind.name for i in self.inputs if i.bind.scope == "conversation"]
        names += [w.variable for w in self.writes]
        return list(dict.fromkeys(names))

    def env_variables(self) -> list[str]:
        return list(dict.fromkeys(i.bind.name for i in self.inputs if i.bind.scope == "env"))


def _s(name: str, en: str, zh: str) -> NodeOutput:
    return NodeOutput(name, "string", en, zh)


# The classic classifier's non-task classes, as the adapter reads them (dskit/surfaces/classic.py).
_CLASSES_ZH = " / ".join(c.label_zh for c in CLASSIC_CLASSES)
_CLASSES_EN = " / ".join(f"{c.label_zh} ({c.label_en})" for c in CLASSIC_CLASSES)
STATE_STR = Bind("conversation", "sys_context_str")
CATALOG = Bind("env", "TASK_CATALOG")
QUERY = Bind("sys", "query")
SECRET = NodeInput("state_secret", Bind("env", "STATE_SECRET"),
                   "a secret environment variable that keys the state's seal: a state changed outside the "
                   "engine then starts clean (docs/state-format.md); unset or '': a plain digest, whose "
                   "failure only withdraws pending confirmations",
                   "密钥型环境变量，作为状态封印的密钥：在引擎之外被改动的状态会重新开始（见 docs/state-format.md）；"
                   "不设或为空：普通摘要，校验失败只撤回待确认的内容", optional=True)

# CODE_MAX_STRING_LENGTH (80,000 characters); the node's longest output is the summary prompt: up to
# this cap of overflow, the summary (at most 20,000 characters are read) and the instructions.
HISTORY_CODE_NODE_MAX_BYTES = CODE_MAX_STRING_LENGTH - 24_000

# The next turn's prompt, as the history node (or the state node keeping the memory) returns it.
_NEXT_PROMPT_OUTPUTS = (
    _s("prompt_system", "the next turn's understanding system prompt ('' when not built): write it back",
       "下一轮理解 LLM 的系统提示词（未生成时为空）：写回会话变量"),
    _s("prompt_head", "the next turn's understanding user prompt up to the message, ending in \"> \": the LLM "
       "reads it followed by `{{#sys.query#}}`; '' when not built (the next turn then runs the context node)",
       "下一轮理解 LLM 用户提示词中消息之前的部分（以“> ”结尾）：LLM 读它再接 `{{#sys.query#}}`；未生成时为空（下一轮改由上下文节点生成）"),
    _s("prompt_tail", "when this turn's reply is a model's answer still to come (a FAQ or small-talk turn the "
       "state node keeps): the rest of the head after where that answer goes — the LLM reads `prompt_head`, "
       "`{{#conversation.reply_pending#}}`, `prompt_tail`, then the message; '' on other turns",
       "本轮回复是稍后才有的模型回答时（状态机节点记下的 FAQ 或闲聊轮次）：提示词中该回答之后的部分——LLM 依次读 `prompt_head`、"
       "`{{#conversation.reply_pending#}}`、`prompt_tail` 和消息；其他轮次为空"),
    _s("prompt_state", "the model's view of the state after this turn (for the classic layout's classifier "
       "and extractor); '' when not built", "本轮之后的状态视图（供经典布局的问题分类器和参数提取器使用）；未生成时为空"),
)

# The history node's window and summary settings; the state node has them too, for the turns it keeps
# the memory of itself (its ``summary`` input bound), so that both keep a turn the same way.
_HISTORY_SETTINGS = (
    NodeSetting("max_turns", "10", "turns kept in the window", "窗口保留的轮数", "int"),
    NodeSetting("max_bytes", str(HISTORY_CODE_NODE_MAX_BYTES),
                f"byte cap of the history variable: fits Dify {MIN_DIFY_VERSION}'s "
                f"{CODE_MAX_STRING_LENGTH:,}-character limit on code-node strings; on Dify with the "
                "400,000 limit (PR #26592) up to 190000", f"历史变量的字节上限：适配 Dify {MIN_DIFY_VERSION} "
                f"代码节点字符串 {CODE_MAX_STRING_LENGTH:,} 字符的上限；字符串上限为 400,000 的新版 Dify "
                "（PR #26592）可设到 190000", "int"),
    NodeSetting("summary_max_tokens", "400", "token budget of the summary", "摘要的 token 预算", "int"),
    NodeSetting("llm_summary", "False", "True: also ask an LLM to summarise (summary_due, summary_prompt)",
                "True：另外请 LLM 生成摘要（见 summary_due、summary_prompt）", "bool"),
)

STATE = NodeSpec(
    name="state",
    title_en="State machine",
    title_zh="状态机",
    entry="dskit.surfaces.nodes:state_node",
    summary_en="Applies the understanding LLM's commands to the task stack and decides the next action "
               "(ask a slot, confirm, execute, FAQ, chitchat, handoff, fallback).",
    summary_zh="把理解 LLM 输出的指令应用到任务栈上，并决定下一步动作（追问词槽、确认、执行、FAQ、闲聊、转人工、兜底）。",
    inputs=(
        NodeInput("understanding", Bind("node", "understanding LLM", "text", "理解 LLM"),
                  "raw text of the understanding LLM (JSON with rewritten_query and commands; prose and "
                  "code fences are tolerated)",
                  "理解 LLM 的原始输出（含 rewritten_query 与 commands 的 JSON；容忍多余文字和代码块）"),
        NodeInput("sys_context_str", STATE_STR, "the dialogue state (JSON text; '' on the first turn)",
                  "对话状态（JSON 文本；首轮为空）"),
        NodeInput("task_catalog", CATALOG, "the task catalog (JSON text)", "任务目录（JSON 文本）"),
        NodeInput("query", QUERY, "the user's message: only values and actions it supports are applied "
                  "(docs/grounding.md); unbound, every valid command is applied",
                  "用户本轮输入：只应用有据可查的值和动作（见 docs/grounding.md）；不绑定则应用所有有效指令",
                  optional=True),
        NodeInput("history", Bind("conversation", "history"), "the history, for the user's recent messages "
                  "(a value given a turn or two ago is grounded too)", "对话历史：用户最近几轮说过的值也算有据",
                  optional=True),
        SECRET,
        NodeInput("summary", Bind("conversation", "summary"), "the rolling summary: bind it (with `history`) and "
                  "a turn whose reply is this node's `question` also keeps the memory here, as the history node "
                  "would (`memory_ready`); unbound, it never does", "滚动摘要：绑定它（及 `history`）后，回复即本节点 "
                  "`question` 的轮次也在这里更新记忆，与历史节点相同（见 `memory_ready`）；不绑定则从不更新",
                  optional=True, default="None", annotation="str | None"),
        NodeInput("reply_pending", Bind("conversation", "reply_pending"), "the last turn's FAQ or small-talk answer, "
                  "stored by the Chatflow after it: bind it (with `summary`) and this node keeps the memory of a FAQ "
                  "or small-talk turn too, with a mark where the model's answer goes, and puts the stored answer in "
                  "its place on the next turn; store this node's `reply_pending`, or the model's answer when one "
                  "came, in the variable of that name", "上一轮的 FAQ 或闲聊回答（由 Chatflow 在回答之后保存）：绑定它（及 "
                  "`summary`）后，本节点也为 FAQ、闲聊轮次更新记忆，在模型回答的位置留下标记，下一轮再把保存的回答放进去；"
                  "把本节点的 `reply_pending`（模型回答了就用模型的回答）写入同名会话变量", optional=True, default="None",
                  annotation="str | None"),
        NodeInput("api_url", Bind("env", "TASK_API_URL"), "the task API's address: bound and empty, an execution "
                  "is answered here (`reply`: nothing was done, `no_api_reply` and a line for the app builder) and "
                  "the memory kept; unbound, an execution's reply is left to the execute branch",
                  "任务接口地址：绑定且为空时，办理轮次在这里回复（`reply`：没有真正办理，即 `no_api_reply` 加一行给应用搭建者的提示）"
                  "并更新记忆；不绑定则办理的回复交给执行分支", optional=True, default="None", annotation="str | None"),
        NodeInput("conversation_id", Bind("sys", "conversation_id"), "Dify's conversation id: it keys an "
                  "execution for the task API (`execute_key`, the payload's `idempotency_key`: the same key is the "
                  "same submission); unbound, executions carry no key", "Dify 的会话 ID：用作本次办理的幂等键"
                  "（`execute_key`、payload 的 `idempotency_key`：同一个键就是同一次提交）；不绑定则不带幂等键",
                  optional=True),
    ),
    settings=(
        NodeSetting("reference_date", '""', "the day relative dates (明天, 上个月) count from, YYYY-MM-DD; "
                    "'' = today by the sandbox's clock", "相对日期（明天、上个月）的基准日 YYYY-MM-DD；为空=沙箱时钟的今天"),
        *_HISTORY_SETTINGS,
        NodeSetting("history_lang", '"zh"', "language of the summary texts when this node keeps the memory (the "
                    "history node's `lang`)", "本节点更新记忆时摘要文字的语言（即历史节点的 `lang`）"),
    ),
    outputs=(
        _s("sys_context_str", "the new state: write it back", "新状态：写回会话变量"),
        _s("next_action", f"{' | '.join(NEXT_ACTIONS)}: branch on it", f"{' | '.join(NEXT_ACTIONS)}：按它分支"),
        _s("question", "ready text to say: the slot question, the confirmation, or the open task's pending "
           "question after a FAQ/chitchat answer", "可直接回复的话术：追问、确认，或 FAQ/闲聊之后待继续的问题"),
        _s("current_task", "name of the task in focus ('' if none)", "当前任务名（无则为空）"),
        _s("current_task_label", "its display label", "当前任务的显示名"),
        _s("current_task_stage", "COLLECTING | CONFIRMING ('' if none)", "COLLECTING | CONFIRMING（无则为空）"),
        _s("current_task_slots", "JSON object of the current task's filled slots in catalog order ({} if none; "
           "the empty required ones are in missing_slots)", "当前任务已填词槽的 JSON 对象，按目录顺序（无则为 {}；仍缺的必填词槽见 missing_slots）"),
        _s("slot", "the slot being asked ('' if none)", "正在追问的词槽（无则为空）"),
        _s("missing_slots", "JSON array of required slots still missing", "仍缺的必填词槽（JSON 数组）"),
        _s("execute_payload", "when next_action is execute: JSON {task_id, task, label, slots, subtasks, "
           "idempotency_key} for the API (subtasks: the sub-tasks submitted with it); else {}",
           "next_action 为 execute 时：给接口用的 JSON {task_id, task, label, slots, subtasks, idempotency_key}（subtasks：一并提交的子任务）；否则为 {}"),
        _s("execute_key", "when next_action is execute: the execution's idempotency key (conversation, task, "
           "approval; also the payload's idempotency_key): send it as the Idempotency-Key header ('' otherwise, or "
           "when conversation_id is unbound)", "next_action 为 execute 时：本次办理的幂等键（会话、任务、确认内容；即 payload 的 "
           "idempotency_key），作为 Idempotency-Key 请求头发送（否则为空；未绑定 conversation_id 时也为空）"),
        _s("execute_task", "name of the task to execute ('' otherwise): branch to its API on it",
           "要执行的任务名（否则为空）：按它分支到对应接口"),
        _s("faq_question", "when next_action is faq: the question for the knowledge base",
           "next_action 为 faq 时：用于检索知识库的问题"),
        _s("handoff_reason", "when next_action is handoff: why (user_request, max_attempts, not_understood, ...)",
           "next_action 为 handoff 时：原因（user_request、max_attempts、not_understood 等）"),
        _s("rewritten_query", "the self-contained rewritten question", "改写后的完整问题"),
        _s("notices", "short engine notices (cancelled, waiting for its parent, resumed, ...), one per line",
           "引擎提示（已取消、等待父任务、继续某任务等），每行一条"),
        _s("resumed_task", "name of a suspended task brought back to the top this turn ('' if none)",
           "本轮恢复到栈顶的挂起任务名（无则为空）"),
        NodeOutput("stack_depth", "number", "open tasks on the stack", "任务栈中未完成任务数"),
        _s("decision", "the whole decision as JSON (for logs and advanced templates)",
           "完整决策 JSON（用于日志和高级模板）"),
        _s("error", "'' when fine; else why the turn fell back (e.g. a broken catalog: state unchanged)",
           "正常为空；否则为兜底原因（如任务目录有误：状态保持不变）"),
        _s("follow_up", "on a FAQ or small-talk turn answered by a model: a blank line and the open task's pending "
           "question, to show after the answer and give the history node ('' otherwise)",
           "由模型回答的 FAQ 或闲聊轮次：空一行再接未完成任务的问题，显示在回答之后，并交给历史节点（其他轮次为空）"),
        _s("no_api_reply", "when next_action is execute: the reply when no task API is connected — nothing was done, "
           "or (a read-only enquiry) no answer can be given, in the catalog's labels ('' otherwise)",
           "next_action 为 execute 时：未接入任务接口时的回复——没有真正办理，或（只读查询）无法给出结果，用目录里的显示名（其他轮次为空）"),
        NodeOutput("memory_ready", "boolean", "this node kept the memory of the turn (`summary` bound; every turn "
                   "but an execution with a task API, and with `reply_pending` bound a FAQ or small-talk turn too): "
                   "the outputs below are the history node's, and that node need not run",
                   "本节点已更新本轮记忆（绑定了 `summary`；除调用任务接口的办理之外的轮次，绑定 `reply_pending` 时也包括 FAQ 和闲聊轮次）："
                   "以下输出即历史节点的输出，无需再运行历史节点"),
        _s("history", "when memory_ready: the new history (the history node's `history`)",
           "memory_ready 时：新历史（即历史节点的 `history`）"),
        _s("summary", "when memory_ready: the new summary", "memory_ready 时：新摘要"),
        _s("overflow", "when memory_ready: the turns that left the window", "memory_ready 时：移出窗口的轮次"),
        NodeOutput("summary_due", "boolean", "when memory_ready: run the summary LLM (as the history node's)",
                   "memory_ready 时：需要运行摘要 LLM（同历史节点）"),
        _s("summary_system", "when memory_ready: system prompt for the summary LLM", "memory_ready 时：摘要 LLM 的系统提示词"),
        _s("summary_prompt", "when memory_ready: user prompt for the summary LLM", "memory_ready 时：摘要 LLM 的用户提示词"),
        *_NEXT_PROMPT_OUTPUTS,
        _s("reply", "when memory_ready: what the reply says when this node writes it — the question, the no-task-API "
           "reply, or on a FAQ turn what to say when the knowledge base found nothing; '' when a model or the task "
           "API answers", "memory_ready 时：由本节点写的回复——问题、未接入任务接口时的回复，或 FAQ 轮次知识库没有找到时要说的话；"
           "由模型或任务接口回答时为空"),
        _s("reply_pending", "on a FAQ or small-talk turn (`reply_pending` bound): what to store in "
           "`conversation.reply_pending` when no model answered (the not-found reply); '' otherwise",
           "FAQ 或闲聊轮次（绑定了 `reply_pending`）：没有模型回答时写入 `conversation.reply_pending` 的内容（没有找到的回复）；否则为空"),
    ),
    writes=(WriteBack("sys_context_str", "sys_context_str"),),
    notes_en=("The outputs are the plugin's `update_dialogue_state` / `track_state` outputs with the same names "
              "and values; objects and arrays arrive here as JSON text (docs/engine-api.md). For the model, "
              "read the state through the context node (`context`, `state_text`), not these fields.",),
    notes_zh=("输出与插件 `update_dialogue_state` / `track_state` 的输出同名同值；对象和数组在这里是 JSON 文本（见 docs/engine-api.md）。"
              "给模型看的状态请用上下文节点的 `context`、`state_text`，而不是这些字段。",),
)

CLASSIC_ADAPTER = NodeSpec(
    name="classic_adapter",
    title_en="Classic adapter (classifier + extractor)",
    title_zh="经典布局适配器（问题分类器 + 参数提取器）",
    entry="dskit.surfaces.nodes:classic_adapter_node",
    summary_en="For Chatflows built the classic way (question classifier, then parameter extractor): turns "
               "the class and the extracted parameters into the understanding the state node reads.",
    summary_zh="适用于经典布局的 Chatflow（问题分类器 → 参数提取器）：把分类结果和提取的参数转换成状态机节点读取的理解结果。",
    inputs=(
        NodeInput("class_name", Bind("node", "question classifier", "class_name", "问题分类器"),
                  "the class name: a task name or label, 单轮任务/多轮任务 (task then read from a `task` "
                  f"parameter), or one of {_CLASSES_EN}",
                  f"分类名：任务名或任务显示名；单轮任务/多轮任务（任务名取自参数 `task`）；或 {_CLASSES_ZH} 之一"),
        NodeInput("query", QUERY, "the user's message (or the rewritten one)", "用户问题（或改写后的问题）"),
        NodeInput("task_catalog", CATALOG, "the task catalog (JSON text)", "任务目录（JSON 文本）"),
        NodeInput("sys_context_str", STATE_STR, "the dialogue state, to know the current task",
                  "对话状态，用于判断当前任务"),
        NodeInput("params_json", Bind("node", "template / aggregator", "output", "模板转换/变量聚合"),
                  "optional: the extracted parameters as one JSON object", "可选：以一个 JSON 对象给出的提取参数",
                  optional=True),
    ),
    outputs=(
        _s("understanding", "the understanding JSON: wire it to the state node's `understanding`",
           "理解结果 JSON：接到状态机节点的 `understanding`"),
        _s("rewritten_query", "the query passed through", "透传的问题"),
        _s("error", "'' when fine; else why the commands are cannot_handle", "正常为空；否则说明原因"),
    ),
    pass_extra=True,
    extra_en="Add one more input variable per parameter-extractor parameter, named exactly like the slot "
             "(e.g. `city` <- <parameter extractor>.city). Empty values are skipped.",
    extra_zh="每个参数提取器的参数各加一个输入变量，变量名与词槽名完全相同（如 `city` <- <参数提取器>.city）。空值会被跳过。",
)

RESULT = NodeSpec(
    name="result",
    title_en="Task result",
    title_zh="任务结果回写",
    entry="dskit.surfaces.nodes:result_node",
    summary_en="After the execute branch called the task's API: records success or failure in the state; "
               "a failed task goes back on the stack, awaiting a retry.",
    summary_zh="执行分支调用接口之后：把成功或失败写回状态；失败的任务回到任务栈，等待重试。",
    inputs=(
        NodeInput("sys_context_str", STATE_STR, "the dialogue state (already written back by the state node)",
                  "对话状态（状态机节点已写回的）"),
        NodeInput("execute_payload", Bind("node", "state node", "execute_payload", "状态机节点"),
                  "the state node's execute_payload", "状态机节点的 execute_payload"),
        NodeInput("ok", Bind("node", "API call", "status_code", "接口调用"),
                  "outcome: true/false, 1/0, success/成功, or an HTTP status (2xx = success)",
                  "结果：true/false、1/0、success/成功，或 HTTP 状态码（2xx 为成功）"),
        NodeInput("detail", Bind("node", "API call", "body", "接口调用"), "optional detail (first 300 chars kept)",
                  "可选详情（保留前 300 字）", optional=True),
        SECRET,
    ),
    outputs=(
        _s("sys_context_str", "the new state: write it back", "新状态：写回会话变量"),
        NodeOutput("ok", "boolean", "whether the task succeeded", "任务是否成功"),
        _s("error", "'' when fine; else why nothing was recorded", "正常为空；否则说明未记录的原因"),
    ),
    writes=(WriteBack("sys_context_str", "sys_context_str"),),
)

EXECUTE_REPLY = NodeSpec(
    name="execute_reply",
    title_en="Execute reply",
    title_zh="办理结果话术",
    entry="dskit.surfaces.nodes:execute_reply_node",
    summary_en="The execute branch's reply: the task is done, it failed (never passed off as success; the "
               "task waits for a retry), or — with no task API configured — what would be done.",
    summary_zh="执行分支的回复：已办理完成、办理失败（绝不冒充成功，任务等待重试），或未配置任务接口时说明将要办理什么。",
    inputs=(
        NodeInput("execute_payload", Bind("node", "state node", "execute_payload", "状态机节点"),
                  "the state node's execute_payload", "状态机节点的 execute_payload"),
        NodeInput("question", Bind("node", "state node", "question", "状态机节点"),
                  "the next question after the task (asked only when it succeeded or nothing was called)",
                  "办理后的下一个问题（只在成功或未调用接口时接上）"),
        NodeInput("api_url", Bind("env", "TASK_API_URL"), "the task API's address; empty: nothing was called",
                  "任务接口地址；为空表示没有调用"),
        NodeInput("sys_context_str", Bind("node", "state node", "sys_context_str", "状态机节点"),
                  "the state node's new state", "状态机节点输出的新状态"),
        NodeInput("recorded_state", Bind("node", "task result", "sys_context_str", "任务结果回写"),
                  "the result node's state (when the API was called)", "结果回写节点的状态（调用了接口时）",
                  optional=True),
        NodeInput("ok", Bind("node", "task result", "ok", "任务结果回写"), "the result node's ok",
                  "结果回写节点的 ok", optional=True),
        NodeInput("status_code", Bind("node", "API call", "status_code", "接口调用"), "the HTTP status",
                  "HTTP 状态码", optional=True),
        NodeInput("error_message", Bind("node", "API call", "error_message", "接口调用"),
                  "the HTTP node's error message, if any", "HTTP 节点的错误信息（如有）", optional=True),
        NodeInput("task_catalog", CATALOG, "the task catalog (for slot labels and the language)",
                  "任务目录（用于槽位名称和语言）"),
    ),
    outputs=(
        _s("reply", "the text for the user", "给用户的回复"),
        _s("sys_context_str", "the state after the outcome was recorded: write it back", "记录结果后的状态：写回会话变量"),
    ),
    writes=(WriteBack("sys_context_str", "sys_context_str"),),
)

# The next turn's understanding prompt, built at the end of a turn by the history node (and rebuilt by
# the summary node with the LLM's summary): what they read for it, its settings (the context node's,
# same names and defaults, so the two build one text) and what they return.
_NEXT_PROMPT_INPUTS = (
    NodeInput("sys_context_str", Bind("node", "final state", "sys_context_str", "本轮最终状态"),
              "the state after this turn (the state node's, or the execute branch's once the outcome is "
              "recorded): with `task_catalog`, the next turn's understanding prompt is built from it",
              "本轮之后的状态（状态机节点的，或执行分支记录结果之后的）：与 `task_catalog` 一起绑定时，据此生成下一轮理解提示词",
              optional=True),
    NodeInput("task_catalog", CATALOG, "the task catalog: bind it and `sys_context_str` to build the next "
              "turn's understanding prompt here (unbound: the prompt outputs are '')",
              "任务目录：与 `sys_context_str` 一起绑定时在这里生成下一轮理解提示词（不绑定则提示词输出为空）", optional=True),
    NodeInput("memory", Bind("node", "memory lookup", "text", "记忆检索"),
              "long-term memory lines that do not depend on the next message, if you have any (memory looked "
              "up from the message belongs in the context node)", "与下一条消息无关的长期记忆（如有；按消息检索的记忆请交给上下文节点）",
              optional=True),
)
_NEXT_PROMPT_SETTINGS = (
    NodeSetting("total_budget", str(CONTEXT_TOTAL_BUDGET), "token budget of the next prompt (as in the context "
                "node)", "下一轮提示词的 token 预算（与上下文节点一致）", "int"),
    NodeSetting("history_budget", str(CONTEXT_ZONE_BUDGETS["history"]), "token budget of summary + recent turns "
                "(as in the context node)", "摘要加最近对话的 token 预算（与上下文节点一致）", "int"),
    NodeSetting("memory_budget", str(CONTEXT_ZONE_BUDGETS["memory"]), "token budget of the memory lines (as in "
                "the context node)", "记忆的 token 预算（与上下文节点一致）", "int"),
    NodeSetting("prompt_lang", '""', "language of the next prompt: zh or en; '' follows the catalog (the "
                "context node's `lang`)", "下一轮提示词的语言：zh 或 en；为空时跟随任务目录（即上下文节点的 `lang`）"),
)
_NEXT_PROMPT_NOTE_EN = (
    "The next turn's prompt: bind `sys_context_str` (the state after this turn) and `task_catalog`, write "
    "`prompt_system`, `prompt_head` and `prompt_tail` (and `prompt_state` if other prompts read the state) into "
    "conversation variables of the same names in the assigner that writes the state, and give the understanding "
    "LLM the system prompt `{{#conversation.prompt_system#}}` and the user prompt "
    "`{{#conversation.prompt_head#}}{{#conversation.reply_pending#}}{{#conversation.prompt_tail#}}{{#sys.query#}}` "
    "(`reply_pending`: the last FAQ or small-talk answer, see the state node; '' otherwise). An IF/ELSE before the "
    "LLM sends a turn through `context.py` when `prompt_head` is empty or the message or `reply_pending` has a line "
    "break. The Chatflows in dsl/ are wired this way, and start a conversation with `prompt_*` set to the prompt of "
    "an empty conversation: no code node runs before the model.")
_NEXT_PROMPT_NOTE_ZH = (
    "下一轮提示词：绑定 `sys_context_str`（本轮之后的状态）和 `task_catalog`，在写回状态的同一个变量赋值里把 `prompt_system`、"
    "`prompt_head`、`prompt_tail`（其他提示词要读状态时再加 `prompt_state`）写回同名会话变量，理解 LLM 的系统提示词用 "
    "`{{#conversation.prompt_system#}}`，用户提示词用 "
    "`{{#conversation.prompt_head#}}{{#conversation.reply_pending#}}{{#conversation.prompt_tail#}}{{#sys.query#}}`"
    "（`reply_pending`：上一轮的 FAQ 或闲聊回答，见状态机节点；否则为空）。在 LLM 之前加条件分支：`prompt_head` 为空，"
    "或消息、`reply_pending` 中有换行时改走 `context.py`。dsl/ 中的 Chatflow 就是这样连接的，新对话的 `prompt_*` 以空对话的提示词开始："
    "模型之前不运行任何代码节点。")


# The history node's default byte cap. Dify 1.8 fails a code node whose string output is longer than
HISTORY = NodeSpec(
    name="history",
    title_en="History (window + summary)",
    title_zh="对话历史（窗口 + 摘要）",
    entry="dskit.surfaces.nodes:history_node",
    summary_en="Appends this turn to the history, keeps the last turns under a turn and byte cap (noise "
               "leaves first), and merges the turns that leave into the rolling summary instead of "
               "dropping them. Put it after the answer, at the end of the turn. Given the catalog and the state "
               "after the turn, it also builds the next turn's understanding prompt, so that no code node needs "
               "to run before the model.",
    summary_zh="把本轮对话追加到历史，按轮数和字节上限保留最近几轮（噪声优先移出），移出的轮次合并进滚动摘要而不是直接丢弃。"
               "放在回答之后、本轮末尾。绑定任务目录和本轮之后的状态时，它还会生成下一轮的理解提示词，模型之前就不必再运行代码节点。",
    inputs=(
        NodeInput("old_history", Bind("conversation", "history"), "the history so far ('' at first)",
                  "已有历史（首轮为空）"),
        NodeInput("summary", Bind("conversation", "summary"), "the rolling summary so far", "已有摘要"),
        NodeInput("user_query", QUERY, "the user's message of this turn", "本轮用户输入"),
        NodeInput("answer", Bind("node", "answer LLM", "text", "回答 LLM"),
                  "this turn's reply (see extra inputs for several answer branches)",
                  "本轮回复（多个回答分支见“额外输入”）"),
        NodeInput("decision", Bind("node", "state node", "decision", "状态机节点"),
                  "the state node's decision: turns that set or confirmed something are kept longest",
                  "状态机节点的 decision：设置或确认了信息的轮次保留最久", optional=True),
        NodeInput("follow_up", Bind("node", "state node", "follow_up", "状态机节点"),
                  "what the reply showed after a model's answer (the state node's `follow_up`): recorded with it",
                  "回复在模型回答之后显示的内容（状态机节点的 `follow_up`）：一并记入历史", optional=True),
        *_NEXT_PROMPT_INPUTS,
    ),
    settings=(
        *_HISTORY_SETTINGS,
        NodeSetting("lang", '"zh"', "language of the summary texts: zh or en", "摘要文字的语言：zh 或 en"),
        *_NEXT_PROMPT_SETTINGS,
    ),
    outputs=(
        _s("history", "the new history: write it back", "新历史：写回会话变量"),
        _s("model_history", "the history as a model should read it (noise out, corrections marked)",
           "给模型读的历史（去掉噪声，标注被更正的内容）"),
        _s("summary", "the new summary (overflow merged in without an LLM): write it back",
           "新摘要（不用 LLM 合并了移出的轮次）：写回会话变量"),
        _s("overflow", "the turns that left the window this turn ('' if none)", "本轮移出窗口的轮次（无则为空）"),
        NodeOutput("overflow_turns", "number", "how many turns left the window", "移出窗口的轮数"),
        NodeOutput("turns", "number", "turns in the window", "窗口中的轮数"),
        _s("tag", "this turn's tag: essential | optional | noise", "本轮标签：essential | optional | noise"),
        NodeOutput("summary_due", "boolean", "llm_summary is on and turns overflowed: run the summary LLM",
                   "开启 llm_summary 且有轮次移出：需要运行摘要 LLM"),
        _s("summary_system", "system prompt for the summary LLM", "摘要 LLM 的系统提示词"),
        _s("summary_prompt", "user prompt for the summary LLM", "摘要 LLM 的用户提示词"),
        NodeOutput("truncated", "number", "1 when a single over-long turn had to be cut", "单轮过长被截断时为 1"),
        *_NEXT_PROMPT_OUTPUTS,
    ),
    writes=(WriteBack("history", "history"), WriteBack("summary", "summary")),
    pass_extra=True,
    extra_en="Several answer branches? Add one input per branch (any names, e.g. `answer_faq`): the first "
             "non-empty one is used when `answer` is empty.",
    extra_zh="有多个回答分支？每个分支加一个输入变量（名字随意，如 `answer_faq`）：`answer` 为空时取第一个非空的。",
    notes_en=("Optional LLM summary: set `llm_summary = True`, add an IF/ELSE on `summary_due`, an LLM node "
              "with `summary_system` / `summary_prompt`, then `summary.py`; its assigner writes "
              "`conversation.summary` after this node's.", _NEXT_PROMPT_NOTE_EN),
    notes_zh=("可选的 LLM 摘要：设 `llm_summary = True`，用条件分支判断 `summary_due`，接一个以 `summary_system` / "
              "`summary_prompt` 为提示词的 LLM 节点，再接 `summary.py`；它的变量赋值在本节点之后写 `conversation.summary`。",
              _NEXT_PROMPT_NOTE_ZH),
)

SUMMARY = NodeSpec(
    name="summary",
    title_en="Summary check (optional LLM summary)",
    title_zh="摘要校验（可选的 LLM 摘要）",
    entry="dskit.surfaces.nodes:summary_node",
    summary_en="Checks the summary LLM's answer: a refusal, an empty or a far-too-long answer falls back to "
               "the history node's summary, and values the LLM dropped are added back.",
    summary_zh="校验摘要 LLM 的输出：拒答、空或过长时退回历史节点的摘要；LLM 漏掉的数值会被补回。",
    inputs=(
        NodeInput("llm_text", Bind("node", "summary LLM", "text", "摘要 LLM"), "the summary LLM's answer",
                  "摘要 LLM 的输出"),
        NodeInput("summary", Bind("node", "history node", "summary", "历史节点"),
                  "the history node's summary (the fallback)", "历史节点输出的摘要（兜底）"),
        NodeInput("overflow", Bind("node", "history node", "overflow", "历史节点"),
                  "the history node's overflow", "历史节点输出的 overflow"),
        NodeInput("history", Bind("node", "history node", "history", "历史节点"),
                  "the history node's new history: the next turn's prompt is rebuilt with it and the checked "
                  "summary", "历史节点输出的新历史：用它和校验后的摘要重新生成下一轮提示词", optional=True),
        *_NEXT_PROMPT_INPUTS,
    ),
    settings=(
        NodeSetting("summary_max_tokens", "400", "token budget of the summary (as in the history node)",
                    "摘要的 token 预算（与历史节点一致）", "int"),
        NodeSetting("lang", '"zh"', "zh or en", "zh 或 en"),
        *_NEXT_PROMPT_SETTINGS,
    ),
    outputs=(
        _s("summary", "the checked summary: write it back", "校验后的摘要：写回会话变量"),
        _s("source", "llm | extractive", "llm | extractive（抽取式兜底）"),
        NodeOutput("added_facts", "number", "fact lines added back because the LLM dropped their values",
                   "因 LLM 遗漏数值而补回的事实行数"),
        *_NEXT_PROMPT_OUTPUTS,
    ),
    writes=(WriteBack("summary", "summary"),),
    notes_en=("With the history node building the next turn's prompt, bind the same `sys_context_str` and "
              "`task_catalog` here and write this node's `prompt_*` outputs instead of the history node's: "
              "they are built with the checked summary.",),
    notes_zh=("历史节点生成下一轮提示词时，这里也绑定同样的 `sys_context_str` 和 `task_catalog`，并改写回本节点的 `prompt_*` 输出："
              "它们用校验后的摘要生成。",),
)

CONTEXT = NodeSpec(
    name="context",
    title_en="Context for the understanding LLM",
    title_zh="理解 LLM 的上下文",
    entry="dskit.surfaces.nodes:context_node",
    summary_en="Builds the understanding LLM's prompt: the catalog in compact form, the state (never cut), "
               "memory, the summary and the recent turns without noise, within a token budget, then the "
               "user's latest message. Put it at the start of the turn, before the understanding LLM — or, with "
               "the history node building the next prompt at the end of each turn, only on the turns that have "
               "none (the first), as the Chatflows in dsl/ do.",
    summary_zh="生成理解 LLM 的提示词：精简的任务目录、当前状态（永不截断）、记忆、摘要和去噪后的最近对话，控制在 token 预算内，"
               "最后是用户最新输入。放在本轮开头、理解 LLM 之前；若由历史节点在每轮末尾生成下一轮提示词，"
               "则只在没有现成提示词的轮次（首轮）运行它，dsl/ 中的 Chatflow 就是这样做的。",
    inputs=(
        NodeInput("query", QUERY, "the user's message of this turn", "本轮用户输入"),
        NodeInput("sys_context_str", STATE_STR, "the dialogue state", "对话状态"),
        NodeInput("history", Bind("conversation", "history"), "the history (written by history.py)",
                  "对话历史（由 history.py 写入）"),
        NodeInput("summary", Bind("conversation", "summary"), "the rolling summary", "滚动摘要"),
        NodeInput("task_catalog", CATALOG, "the task catalog (JSON text)", "任务目录（JSON 文本）"),
        NodeInput("memory", Bind("node", "memory lookup", "text", "记忆检索"),
                  "long-term memory lines, if you have any", "长期记忆（如有）", optional=True),
        NodeInput("reply_pending", Bind("conversation", "reply_pending"), "the last turn's FAQ or small-talk answer "
                  "(see the state node): put, on one line, where the history waits for it",
                  "上一轮的 FAQ 或闲聊回答（见状态机节点）：写成一行，放进历史中等它的位置", optional=True),
    ),
    settings=(
        NodeSetting("total_budget", "3000", "token budget of the whole context", "整个上下文的 token 预算", "int"),
        NodeSetting("history_budget", "360", "token budget of summary + recent turns", "摘要加最近对话的 token 预算",
                    "int"),
        NodeSetting("memory_budget", "400", "token budget of the memory lines", "记忆的 token 预算", "int"),
        NodeSetting("lang", '""', "zh or en; '' follows the catalog", "zh 或 en；为空时跟随任务目录"),
    ),
    outputs=(
        _s("context", "the user prompt of the understanding LLM", "理解 LLM 的用户提示词"),
        _s("instructions", "the matching system prompt (the understanding contract)", "配套的系统提示词（理解结果的格式约定）"),
        _s("state_text", "the model's view of the state alone (open tasks, filled and missing slots, the slot "
           "asked last turn): for other prompts that need the state", "单独的状态视图（进行中的任务、已填和缺少的词槽、上一轮追问的词槽）：供其他提示词引用"),
        NodeOutput("tokens", "number", "estimated tokens of `context`", "`context` 的估算 token 数"),
        NodeOutput("over_budget", "boolean", "true when catalog + state alone exceed the budget",
                   "仅任务目录和状态就超出预算时为 true"),
        _s("report", "JSON: tokens per zone, what was cut and why", "JSON：各区 token 数、删减了什么及原因"),
        _s("error", "'' when fine; else e.g. a broken catalog (its section is left out)",
           "正常为空；否则如任务目录有误（该部分被省略）"),
        _s("head", "`context` up to the message, ending in \"> \" (the form the history node's `prompt_head` "
           "has)", "`context` 中消息之前的部分，以“> ”结尾（与历史节点的 `prompt_head` 同形）"),
        _s("message", "the message as `context` ends with it: one line, cut to 1,000 tokens",
           "`context` 末尾的消息：一行，截到 1,000 token"),
        _s("pending", "the last turn's model answer on one line, when the history waits for it; `context` is `head` "
           "+ `pending` + `tail` + `message`", "历史在等上一轮模型回答时：写成一行的该回答；`context` 即 `head` + `pending` + `tail` + `message`"),
        _s("tail", "the rest of the head after `pending` ('' when nothing is pending)", "`pending` 之后的其余部分（没有待补回答时为空）"),
    ),
)

OUTCOME = NodeSpec(
    name="outcome",
    title_en="Task outcome (result + reply + memory)",
    title_zh="办理结果（回写 + 话术 + 记忆）",
    entry="dskit.surfaces.nodes:outcome_node",
    summary_en="After the execute branch called the task's API, in one sandbox run: records success or failure "
               "in the state (a failed task waits for a retry), tells the user (never passing a failure off as "
               "success), and keeps the memory with the next prompt — `result.py`, `execute_reply.py` and "
               "`history.py` together.",
    summary_zh="执行分支调用接口之后，一次沙箱运行完成：把成功或失败写回状态（失败的任务等待重试），告诉用户结果（绝不冒充成功），"
               "并更新记忆、生成下一轮提示词——即 `result.py`、`execute_reply.py` 和 `history.py` 合在一起。",
    inputs=(
        NodeInput("sys_context_str", Bind("node", "state node", "sys_context_str", "状态机节点"),
                  "the state node's new state", "状态机节点输出的新状态"),
        NodeInput("execute_payload", Bind("node", "state node", "execute_payload", "状态机节点"),
                  "the state node's execute_payload", "状态机节点的 execute_payload"),
        NodeInput("ok", Bind("node", "API call", "status_code", "接口调用"),
                  "the HTTP status (2xx = success)", "HTTP 状态码（2xx 为成功）"),
        NodeInput("detail", Bind("node", "API call", "body", "接口调用"), "the API's answer (first 300 chars kept)",
                  "接口返回内容（保留前 300 字）", optional=True),
        NodeInput("error_message", Bind("node", "API call", "error_message", "接口调用"),
                  "the HTTP node's error message, if any", "HTTP 节点的错误信息（如有）", optional=True),
        NodeInput("api_url", Bind("env", "TASK_API_URL"), "the task API's address", "任务接口地址"),
        NodeInput("question", Bind("node", "state node", "question", "状态机节点"),
                  "the next question after the task (asked only when it succeeded)", "办理后的下一个问题（只在成功时接上）"),
        NodeInput("task_catalog", CATALOG, "the task catalog (labels, language, the next prompt)",
                  "任务目录（显示名、语言、下一轮提示词）"),
        SECRET,
        NodeInput("old_history", Bind("conversation", "history"), "the history so far", "已有历史"),
        NodeInput("reply_pending", Bind("conversation", "reply_pending"), "the last turn's FAQ or small-talk answer "
                  "(see the state node)", "上一轮的 FAQ 或闲聊回答（见状态机节点）", optional=True),
        NodeInput("summary", Bind("conversation", "summary"), "the rolling summary so far", "已有摘要"),
        NodeInput("user_query", QUERY, "the user's message of this turn", "本轮用户输入"),
        NodeInput("decision", Bind("node", "state node", "decision", "状态机节点"),
                  "the state node's decision", "状态机节点的 decision", optional=True),
    ),
    settings=(
        *_HISTORY_SETTINGS,
        NodeSetting("history_lang", '"zh"', "language of the summary texts (the history node's `lang`)",
                    "摘要文字的语言（即历史节点的 `lang`）"),
    ),
    outputs=(
        _s("sys_context_str", "the state with the outcome recorded: write it back", "记录结果后的状态：写回会话变量"),
        _s("reply", "the text for the user", "给用户的回复"),
        _s("reply_pending", "always '': nothing waits for a model", "总是为空：没有要等的模型回答"),
        NodeOutput("ok", "boolean", "whether the task succeeded", "任务是否成功"),
        _s("error", "'' when the outcome was recorded; else why not", "记录了结果时为空；否则说明原因"),
        _s("history", "the new history: write it back", "新历史：写回会话变量"),
        _s("summary", "the new summary: write it back", "新摘要：写回会话变量"),
        _s("overflow", "the turns that left the window", "移出窗口的轮次"),
        NodeOutput("summary_due", "boolean", "run the summary LLM (as the history node's)", "需要运行摘要 LLM（同历史节点）"),
        _s("summary_system", "system prompt for the summary LLM", "摘要 LLM 的系统提示词"),
        _s("summary_prompt", "user prompt for the summary LLM", "摘要 LLM 的用户提示词"),
        *_NEXT_PROMPT_OUTPUTS,
    ),
    writes=(WriteBack("sys_context_str", "sys_context_str"), WriteBack("history", "history"),
            WriteBack("summary", "summary")),
)

# The nodes ``dskit gen`` writes, in README order.
NODE_SPECS: list[NodeSpec] = [HISTORY, CONTEXT, STATE, CLASSIC_ADAPTER, RESULT, EXECUTE_REPLY, OUTCOME, SUMMARY]


def spec_by_name(name: str) -> NodeSpec:
    for spec in NODE_SPECS:
        if spec.name == name:
            return spec
    raise KeyError(name)
