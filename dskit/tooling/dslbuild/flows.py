"""The two code-node Chatflows: the fast layout (one understanding LLM) and the classic layout
(question rewrite, question classifier and parameter extractor, as many existing Chatflows are built).

Both start the same way, with nothing but the model before the model:

    start -> has_prompt -(ready | fresh)------> prompt -> understand (fast) | rewrite -> classify ... (classic)
                        \\-(else)-> context -----/

The understanding prompt up to the message depends only on what a turn leaves behind (the state, the
history, the summary), so the node that keeps the memory builds it when a turn ends
(:func:`dskit.surfaces.nodes.next_prompt`, the very text of :func:`dskit.context.prompts.understanding_head`) and the
turn's one assigner stores it with the state (``prompt_head``, plus ``prompt_system`` for the fast
layout or ``prompt_state`` for the classic one). A new conversation's prompt variables start with the
prompt of an empty conversation for the file's catalog (:func:`fresh_prompt`). On every turn
``has_prompt`` finds a prompt — ``ready`` (stored by the last turn) or ``fresh`` (the first message,
while ``TASK_CATALOG`` is the catalog the file was generated with) — and the ``prompt`` aggregator hands
the LLM node that head, the last turn's model answer (``reply_pending``), the rest of the head after it
(``prompt_tail``) and ``{{#sys.query#}}``: no code node runs before the model. The ``context`` code node
builds the whole prompt instead (the same text the plugin's ``track_state`` sends) when there is none
to read, and the aggregator then hands over its outputs:

- the first message with an edited ``TASK_CATALOG`` (the file's first prompt shows the catalog it was
  generated with), and a Chatflow imported or upgraded mid-conversation (no prompt stored);
- a turn after one whose prompt could not be built (:func:`dskit.surfaces.nodes.next_prompt` returns "": a
  catalog that cannot be read, a text over Dify's string limit);
- a message, or a last model answer, with a line break (any character :data:`dskit.base.text.LINE_BREAK_CHARS`
  lists): the context node puts it on one line (the message after "> "), so it can never start a line
  of the prompt and pass for one of the engine's headers (docs/context.md, "What the model can trust").
  A one-line message goes to the model as the user typed it; the engine's rendering differs only in
  dropping invisible format characters and surrounding spaces and in cutting a message over 1,000
  tokens, which a Dify variable cannot do without a code node (such a message runs over the token
  budget by its excess; the state node refuses one over 8,000 characters whatever the model says).

A Dify user who edits ``TASK_CATALOG`` in the middle of a conversation sees the new catalog in the
model's prompt from the turn after the next (the head was built with the old one); the state node
always reads the current one.

Both share everything after the state node (issue 39: an ordinary turn runs eight nodes, one in the
sandbox; a FAQ or small-talk turn one sandbox run too; a turn calling the task API two):

    state -> route -+- own: save -> answer                                  (ask, confirm, handoff, fallback,
                    |                                                        an execution with no task API)
                    +- faq -> faq_search -> has_passages -(found)-> faq_answer -+
                    |                                    \\-(else)--------------+
                    +- chitchat -> chat_answer ------------------------------+
                    +- execute -> call_api -> outcome -----------------------+
                    +- else (an LLM summary due) ----------------------------+
                                                                             v
          reply -> save_all -> answer_all -> need_summary -(due)-> summarize -> summary_check -> save_summary

The state node keeps the memory — the new history and summary, the next prompt — on every turn but one
that calls the task API, whose ``outcome`` node records the result, says it and keeps the memory in one
sandbox run. A FAQ or small-talk answer, which a model gives after the state node, is not recorded: the
memory keeps the engine's own text of that turn, the open task's question (:func:`dskit.state.views.memory_reply`,
issue 40), so the next prompt is the same on every surface. ``reply_pending`` and ``prompt_tail`` stay empty;
they serve a history written before that decision with a mark where the answer went
(:data:`dskit.context.history.PENDING_MARK`, :func:`dskit.context.history.fill_pending`). One v2 assigner writes the state, the memory and the next prompt before the answer
(``save`` on the ordinary turn, ``save_all`` on the joining branch), so nothing that fails after the
reply can lose the turn. After the answer only the optional LLM summary runs: ``summarize`` (a model
timeout) continues with an empty text, which ``summary_check`` replaces by the extractive summary;
``summary_check`` failing takes its fail branch, which has no edge — the extractive summary and its
prompt are already saved. Every code node retries twice first (dify-sandbox's intermittent failures).

The FAQ model reads the passages as Dify's LLM context (``{{#context#}}``) and is called only when the
retrieval found something (``has_passages``): Dify fills the placeholder only then. Nothing found, the
reply is the state node's "not found" (``reply``), with no model call.

Only the understanding differs: ``understand`` (one LLM call returning rewrite, routing and slots)
versus ``rewrite`` -> ``classify`` -> ``extract`` -> ``adapter`` (three focused LLM nodes; the rewrite
reads the whole prompt, the classifier and the extractor the state view alone).
Node ids are short English words (they appear in ``{{#id.var#}}`` references); titles are Chinese
and each ``desc`` carries the English explanation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dskit.tooling.dslbuild import node_data as n
from dskit.tooling.dslbuild import prompts
from dskit.tooling.dslbuild.builder import DEFAULT_MODEL, DEFAULT_PROVIDER, Flow
from dskit.tooling.dslbuild.code_sources import code_source
from dskit.surfaces.classic import classic_labels
from dskit.tooling.dslbuild.conversation import declare_conversation_variables
from dskit.tooling.dslbuild.dify_versions import DEFAULT_TARGET, Target
from dskit.tooling.dslbuild.localize import localize
from dskit.base.text import LINE_BREAK_CHARS
from dskit.context.prompts import UNDERSTANDING_SAMPLING

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE_CATALOGS = ("restaurant", "travel_assistant")
FAST_FILE = "dsl/dialogue_chatflow.yml"
CLASSIC_FILE = "dsl/dialogue_chatflow_classic.yml"


@dataclass(frozen=True)
class FlowOptions:
    """What ``dskit gen`` lets a user choose for the generated DSL."""

    provider: str = DEFAULT_PROVIDER
    model: str = DEFAULT_MODEL
    plugin_identifier: str | None = None  # the model provider's plugin, author/name:version@checksum
    package_identifier: str | None = None  # our plugin's package; default: the one this checkout builds
    catalog_json: str | None = None  # default: the example catalogs merged
    lang: str = "zh"  # prompts' language
    target: Target = DEFAULT_TARGET  # the Dify release the files are for (``dskit gen --dify-version``)
    # True for a user's own catalog (``dskit new``, ``gen --catalog``): every note in ``lang`` only, the
    # app named after the catalog, suggested questions from its tasks (:mod:`.localize`). False keeps
    # the shipped files' bilingual notes.
    localized: bool = False
    # True: the fast layout's understand node asks Dify for structured output with the catalog's JSON schema
    # (dskit.turn.command_schema). Off by default: only a model with native structured output is constrained by
    # it; for any other Dify adds a generic JSON prompt and the schema to the system prompt and fails the
    # node on an answer it cannot parse (docs/dify.md, "Structured output").
    structured_output: bool = False


def default_catalog() -> dict[str, Any]:
    """The restaurant and travel examples as one catalog (the default ``TASK_CATALOG``)."""
    tasks: dict[str, Any] = {}
    policy: dict[str, Any] = {}
    for name in EXAMPLE_CATALOGS:
        data = json.loads((ROOT / "examples" / "catalogs" / f"{name}.json").read_text(encoding="utf-8"))
        tasks.update(data["tasks"])
        policy = data.get("policy") or policy
    return {"version": 1, "name": "restaurant_and_travel",
            "description": "The restaurant booking and travel assistant examples, together.",
            "language": "zh", "tasks": tasks, "policy": policy}


def catalog_text(options: FlowOptions) -> str:
    if options.catalog_json is not None:
        return options.catalog_json
    return json.dumps(default_catalog(), ensure_ascii=False, separators=(",", ":"))


# --------------------------------------------------------------------------------------------------
# Shared parts
# --------------------------------------------------------------------------------------------------


def _code_node(flow: Flow, node_id: str, role: str, bindings: dict[str, list[str]], title: str,
               desc: str, *, fail_branch: bool = False) -> None:
    """Add a code node for ``role`` with every input bound (a missing binding is a bug here); it
    retries on failure, and with ``fail_branch`` takes its fail branch instead of stopping the run."""
    source = code_source(role, booleans=flow.target.booleans)
    missing = [name for name in source.inputs if name not in bindings and name not in source.optional]
    if missing:
        raise KeyError(f"{node_id}: no binding for inputs {missing}")
    inputs = [(name, bindings[name]) for name in source.inputs if name in bindings]
    inputs += [(name, sel) for name, sel in bindings.items() if name not in source.inputs]
    data = n.with_retry(n.code(source.code, inputs, source.outputs, title=title, desc=desc))
    flow.add(node_id, n.fail_branch(data) if fail_branch else data)


# The prompt variables each layout's LLM nodes read, the ``prompt`` aggregator's group for each, and
# the context node's output that stands in for it when none was built. Every layout also reads the last
# turn's model answer between the head and its tail (``reply_pending``, ``prompt_tail``).
PROMPT_READS = {"fast": ("prompt_system", "prompt_head"), "classic": ("prompt_head", "prompt_state")}
PROMPT_GROUPS = {"prompt_system": ("system", "instructions"), "prompt_head": ("head", "head"),
                 "prompt_state": ("state", "state_text"), "prompt_tail": ("tail", "tail"),
                 "reply_pending": ("pending", "pending")}
PENDING_READS = ("prompt_tail", "reply_pending")


def fresh_prompt(options: FlowOptions) -> dict[str, str]:
    """The understanding prompt of a conversation's first message, up to the message, for this file's
    catalog: the context node's own outputs for an empty state, history and summary (its head is the
    same for every message within the reserve, :func:`dskit.context.prompts.understanding_head`). The prompt
    variables start with it, so that the first message, too, calls the model with no code node before
    it (``has_prompt``'s ``fresh`` case). {} when the catalog cannot be read (the context node then
    runs and says why)."""
    from dskit.surfaces.nodes import context_node  # noqa: PLC0415 - the engine, as the node runs it

    built = context_node("", "", "", "", catalog_text(options))
    if built.get("error"):
        return {}
    return {"prompt_system": built["instructions"], "prompt_head": built["head"], "prompt_state": built["state_text"]}


def _base_flow(name: str, description: str, options: FlowOptions, layout: str) -> Flow:
    flow = Flow(name=name, description=description, opening_statement=opening_statement(options),
                target=options.target)
    fresh = fresh_prompt(options)
    declare_conversation_variables(flow, PROMPT_READS[layout] + PENDING_READS, defaults=fresh)
    flow.env_var("TASK_CATALOG", catalog_text(options),
                 "任务目录 JSON（见 docs/catalog.md）。The task catalog as JSON (see docs/catalog.md).")
    flow.env_var("TASK_API_URL", "", "办理任务的接口地址；留空则如实说明没有真正办理（只读查询说明无法给出结果）。The URL "
                 "the execute branch POSTs the task to; empty: the reply says plainly that nothing was done (a "
                 "read-only enquiry: that it cannot be answered).")
    flow.env_var("LLM_SUMMARY", "true", "true：历史溢出时用 LLM 合并摘要；false：只用抽取式摘要。true: an LLM "
                 "merges overflowing turns into the summary; false: extractive summary only.")
    flow.env_var("STATE_SECRET", "", "状态封印的密钥（密钥型，导出时不含其值）：设置后，在引擎之外被改动的状态会重新开始。"
                 "The key of the state's seal (a secret: exports leave it out): once set, a state changed "
                 "outside the engine starts clean (docs/state-format.md).", value_type="secret")
    flow.use_provider(options.provider, options.plugin_identifier)
    flow.add("start", n.start(desc="用户发来一条消息。A user message arrives (sys.query)."))
    _prompt_nodes(flow, PROMPT_READS[layout], catalog_text(options) if fresh else None)
    return flow


def _one_line(selector: list[str], name: str) -> list[dict[str, Any]]:
    """Conditions "``selector`` holds none of the line-break characters" (:data:`LINE_BREAK_CHARS`)."""
    return [n.condition(selector, "not contains", char, cond_id=f"{name}-without-break-{ord(char):04x}")
            for char in LINE_BREAK_CHARS]


def _prompt_nodes(flow: Flow, reads: tuple[str, ...], fresh_catalog: str | None) -> None:
    """``has_prompt`` -> (``context`` when needed) -> ``prompt``: the understanding prompt in one place
    (the module docstring says when the context node runs). ``fresh_catalog``: the catalog text the
    prompt variables' defaults were built with (None: no defaults, the first message runs the context
    node)."""
    ready = [n.condition(["conversation", name], "not empty") for name in reads]
    ready += [n.condition(["conversation", "sys_context_str"], "not empty")]
    ready += _one_line(["sys", "query"], "query") + _one_line(["conversation", "reply_pending"], "pending")
    cases = [n.case("ready", ready)]
    if fresh_catalog is not None:
        cases.append(n.case("fresh", [
            n.condition(["conversation", "sys_context_str"], "empty"),
            n.condition(["conversation", "history"], "empty"),
            *[n.condition(["conversation", name], "not empty") for name in reads],
            n.condition(["env", "TASK_CATALOG"], "is", fresh_catalog, cond_id="catalog-as-generated"),
            *_one_line(["sys", "query"], "fresh-query")]))
    flow.add("has_prompt", n.if_else(
        cases, title="是否已有本轮提示词",
        desc="上一轮末尾已生成提示词（首轮：文件自带的空对话提示词，且任务目录未改），且消息和上一轮模型回答都只有一行时，直接调用模型；"
             "否则（上一轮未能生成、改了 TASK_CATALOG、有换行）先由上下文节点生成。Calls the model directly when the last "
             "turn left the prompt (on the first message: the file's own prompt for an empty conversation, while "
             "TASK_CATALOG is the one it was generated with) and the message and the last turn's model answer are "
             "one line each (none of the line-break characters these conditions list); otherwise (no prompt left, "
             "an edited TASK_CATALOG, a line break) the context node builds it first."))
    _code_node(flow, "context", "context", {
        "query": ["sys", "query"], "sys_context_str": ["conversation", "sys_context_str"],
        "history": ["conversation", "history"], "summary": ["conversation", "summary"],
        "task_catalog": ["env", "TASK_CATALOG"], "reply_pending": ["conversation", "reply_pending"],
    }, "理解上下文", "没有现成提示词时运行：精简目录+当前状态（含缺失槽位和上一轮追问）+摘要+去噪历史，控制在 token 预算内，"
       "消息和上一轮模型回答写成一行。Runs when no prompt was left: builds the model's view of the turn — compact "
       "catalog, state (missing slots, last question), summary and de-noised recent turns within a token budget, "
       "the message and the last turn's model answer on one line.")
    groups: dict[str, list[list[str]]] = {}
    for name in reads + PENDING_READS:
        group, output = PROMPT_GROUPS[name]
        groups[group] = [["context", output], ["conversation", name]]
    groups["message"] = [["context", "message"], ["sys", "query"]]
    order = ("system", "head", "pending", "tail", "message", "state")
    flow.add("prompt", n.aggregator(
        [], title="本轮理解提示词", groups={g: groups[g] for g in order if g in groups},
        desc="上下文节点运行了就用它的输出，否则用上一轮末尾生成的提示词、上一轮的模型回答和用户消息：模型只从这里读。"
             "The context node's outputs when it ran, else the prompt the last turn left, the last turn's model "
             "answer and the message: the model reads the prompt from here only."))
    flow.edge("start", "has_prompt")
    flow.edge("has_prompt", "prompt", "ready")
    if fresh_catalog is not None:
        flow.edge("has_prompt", "prompt", "fresh")
    flow.edge("has_prompt", "context", "false")
    flow.edge("context", "prompt")


def opening_statement(options: FlowOptions) -> str:
    """The chat's opening line, naming the catalog's tasks."""
    try:
        tasks = json.loads(catalog_text(options)).get("tasks") or {}
        labels = [str((spec or {}).get("label") or name) for name, spec in tasks.items()]
    except (ValueError, AttributeError):
        labels = []
    if options.lang == "en":
        return "Hello! I can help with: " + ", ".join(labels) + "." if labels else "Hello! How can I help?"
    return "您好！我可以帮您：" + "、".join(labels) + "。" if labels else "您好！有什么可以帮您？"


def _model(options: FlowOptions, temperature: float | None, node_id: str) -> dict[str, Any]:
    """The model block of LLM node ``node_id``, its max_tokens bounded (:data:`prompts.MAX_TOKENS`);
    ``temperature`` None: a node that decides the state, sampled as the understanding call is
    everywhere (:data:`dskit.context.prompts.UNDERSTANDING_SAMPLING`: greedy, a fixed seed). A model whose
    provider declares no seed parameter never receives it (Dify keeps only declared parameters)."""
    if temperature is None:
        return n.model_config(options.provider, options.model, UNDERSTANDING_SAMPLING["temperature"],
                              {"seed": UNDERSTANDING_SAMPLING["seed"], "max_tokens": prompts.MAX_TOKENS[node_id]})
    return n.model_config(options.provider, options.model, temperature, {"max_tokens": prompts.MAX_TOKENS[node_id]})


def _state_node(flow: Flow, understanding: list[str]) -> None:
    _code_node(flow, "state", "state", {
        "understanding": understanding,
        "sys_context_str": ["conversation", "sys_context_str"],
        "task_catalog": ["env", "TASK_CATALOG"],
        "query": ["sys", "query"], "history": ["conversation", "history"],
        "state_secret": ["env", "STATE_SECRET"], "summary": ["conversation", "summary"],
        "llm_summary": ["env", "LLM_SUMMARY"], "conversation_id": ["sys", "conversation_id"],
        "reply_pending": ["conversation", "reply_pending"], "api_url": ["env", "TASK_API_URL"],
    }, "状态机", "按理解结果更新任务栈并决定下一步（追问/确认/执行/FAQ/闲聊/转人工/兜底）；只应用用户说过的值和动作。"
       "除了调用任务接口的轮次，它同时更新历史和摘要并生成下一轮提示词（FAQ、闲聊的模型回答留待下一轮补进历史）。"
       "Applies the understanding's commands to the task stack and decides the next action; only what the "
       "user's message (or a recent one) supports is applied (docs/grounding.md). On every turn but one that "
       "calls the task API it also updates the history and summary and builds the next prompt (a FAQ or "
       "small-talk answer, which a model gives after it, goes into the history on the next turn).")


def _route(flow: Flow) -> None:
    action = ["state", "next_action"]
    not_due = _flag_condition(flow, ["state", "summary_due"], False)
    cases = [
        n.case("faq", [n.condition(action, "is", "faq")]),
        # Chitchat with engine notices and no open task (e.g. after a reset) needs no LLM: the state node
        # says the engine's text.
        n.case("chitchat", [n.condition(action, "is", "chitchat"), n.condition(["state", "notices"], "empty")]),
        # The state node keeps the memory on every turn but an execution that calls the task API.
        n.case("execute", [_flag_condition(flow, ["state", "memory_ready"], False)]),
        n.case("own", [not_due]),
    ]
    flow.add("route", n.if_else(cases, title="按下一步动作分支",
                                desc="FAQ、闲聊由模型回答；调用任务接口的办理等接口的结果；其余（追问、确认、转人工、兜底、未接入"
                                     "接口的办理）回复状态机的话术，保存后直接回复；需要 LLM 摘要时走汇合分支。FAQ and small "
                                     "talk are answered by a model; an execution with a task API waits for its "
                                     "outcome; every other turn (ask, confirm, handoff, fallback, an execution with "
                                     "no task API) says the state node's reply, saved first; a turn with an LLM "
                                     "summary due takes the joining branch."))
    flow.edge("state", "route")


def _own_reply(flow: Flow, layout: str) -> None:
    """The ordinary turn's end: one assigner writes the state, the memory and the next prompt, then the
    state node's reply. Nothing runs after the answer."""
    items = [(name, ["state", name]) for name in ("sys_context_str", "history", "summary",
                                                   *PROMPT_READS[layout], *PENDING_READS)]
    flow.add("save", n.assigner(items, title="保存状态与记忆", desc="一次写回状态、历史、摘要和下一轮提示词，再回复。"
                                "Writes the state, the history, the summary and the next turn's prompt at once, "
                                "before the reply."))
    flow.add("answer", n.answer(n.ref(["state", "reply"]), title="回复用户",
                                desc="状态机的话术：追问、确认、转人工、兜底，或未接入任务接口时的说明。The state "
                                     "node's reply: a question, a confirmation, a handoff, a fallback, or what "
                                     "happens with no task API."))
    flow.edge("route", "save", "own")
    flow.chain("save", "answer")


def _execute_branch(flow: Flow) -> None:
    flow.add("call_api", n.http_request(
        n.ref(["env", "TASK_API_URL"]), n.ref(["state", "execute_payload"]), title="调用任务接口",
        headers={"Idempotency-Key": n.ref(["state", "execute_key"])},
        desc="POST 办理内容，请求头带幂等键 execute_key：同一个键就是同一次提交（重试时不要重复办理）；失败时输出默认值而不中断。"
             "POSTs the task with its Idempotency-Key header (the "
             "same key is the same submission: a retry must not act twice); on failure it outputs defaults "
             "(status_code 0, error_message) instead of stopping the run."))
    _code_node(flow, "outcome", "outcome", {
        "sys_context_str": ["state", "sys_context_str"], "execute_payload": ["state", "execute_payload"],
        "ok": ["call_api", "status_code"], "detail": ["call_api", "body"],
        "error_message": ["call_api", "error_message"], "api_url": ["env", "TASK_API_URL"],
        "question": ["state", "question"], "task_catalog": ["env", "TASK_CATALOG"],
        "state_secret": ["env", "STATE_SECRET"], "old_history": ["conversation", "history"],
        "reply_pending": ["conversation", "reply_pending"], "summary": ["conversation", "summary"],
        "user_query": ["sys", "query"], "decision": ["state", "decision"], "llm_summary": ["env", "LLM_SUMMARY"],
    }, "办理结果", "把接口结果写回状态（失败的任务回到栈顶等待重试），告诉用户办成了还是失败了（绝不冒充成功），并更新历史、"
       "摘要和下一轮提示词。Records the API's outcome in the state (a failed task goes back on top, awaiting a "
       "retry), tells the user it is done or failed (never passed off as success), and updates the history, "
       "the summary and the next prompt.")
    flow.edge("route", "call_api", "execute")
    flow.chain("call_api", "outcome")


def _faq_branch(flow: Flow, options: FlowOptions) -> None:
    flow.add("faq_search", n.knowledge_retrieval(
        ["state", "faq_question"], title="知识库检索",
        desc="导入后请在此选择知识库。Pick your knowledge base here after import."))
    flow.add("has_passages", n.if_else(
        [n.case("found", [n.condition(["faq_search", "result"], "not empty", var_type="array[object]")])],
        title="是否检索到资料", desc="检索到资料才请模型回答；否则回复状态机的“没有找到”。The model answers only when "
                                    "passages were found; otherwise the state node's \"not found\" is the reply."))
    lang = "en" if options.lang == "en" else "zh"
    prompt = prompts.faq_prompt(lang, n.ref(["state", "faq_question"]), prompts.CONTEXT_PLACEHOLDER)
    flow.add("faq_answer", n.llm(_model(options, 0.3, "faq_answer"), prompt["system"], prompt["user"], title="FAQ 回答",
                                 context=["faq_search", "result"],
                                 desc="根据检索到的资料简短回答（资料经 LLM 的上下文进入提示词，只在检索到时才调用）。Answers "
                                      "briefly from the retrieved passages (Dify's LLM context; called only when "
                                      "passages were found)."))
    flow.edge("route", "faq_search", "faq")
    flow.chain("faq_search", "has_passages")
    flow.edge("has_passages", "faq_answer", "found")


def knowledge_node(flow: Flow, search_id: str, lang: str) -> None:
    """The plugin layout's ``faq_knowledge`` template node: the retrieved passages as the text Dify's
    context would be (empty when none was found), so the FAQ prompt never depends on ``{{#context#}}``
    (:data:`prompts.KNOWLEDGE_TEMPLATE`)."""
    flow.add("faq_knowledge", n.template(prompts.KNOWLEDGE_TEMPLATE[lang], [("result", [search_id, "result"])],
                                         title="整理检索结果", desc="把检索到的段落拼成文本（与 Dify 的上下文相同）；没有找到时为空。"
                                         "Joins the retrieved passages into text, as Dify's context does; empty "
                                         "when none was found."))


def _chitchat_branch(flow: Flow, options: FlowOptions) -> None:
    prompt = prompts.chitchat_prompt(options.lang, n.ref(["state", "current_task_label"]))
    flow.add("chat_answer", n.llm(_model(options, 0.7, "chat_answer"), prompt["system"], prompt["user"], title="闲聊回复",
                                  desc="一句话回应闲聊。A one-sentence reply to small talk."))
    flow.edge("route", "chat_answer", "chitchat")


# The joining branch's memory: the outcome node's when the task API answered, else the state node's.
MEMORY_GROUPS = ("sys_context_str", "history", "summary", "overflow", "summary_due", "summary_system",
                 "summary_prompt")


def _reply_and_memory(flow: Flow, options: FlowOptions, layout: str) -> None:
    """Every turn but the ordinary one joins here: answer, then the LLM summary when one is due.

    A FAQ or small-talk answer goes back to the open task: the answer node shows the model's text and
    then the state node's ``follow_up`` (a blank line and the task's question); the state node recorded
    the turn with its own text, the task's question (issue 40: the model's answer is not recorded, so
    every surface sends the same next prompt) — no code node after the model (issue 39). ``reply_pending``
    stays empty: it only serves a history written with a mark before that decision."""
    reads = PROMPT_READS[layout]
    groups = {
        "reply": [["outcome", "reply"], ["faq_answer", "text"], ["chat_answer", "text"], ["state", "reply"]],
        # never the FAQ or small-talk model's text: the memory keeps the engine's own text of such a turn
        # (views.memory_reply, issue 40), so the next prompt is the engine target's and the plugin's too
        "reply_pending": [["outcome", "reply_pending"], ["state", "reply_pending"]],
        **{name: [["outcome", name], ["state", name]] for name in MEMORY_GROUPS + reads + ("prompt_tail",)},
    }
    flow.add("reply", n.aggregator([], title="本轮回复与记忆", groups=groups,
                                   group_types={"summary_due": "boolean" if flow.target.booleans else "number"},
                                   desc="汇合各分支：回复文本、最终状态和本轮记忆（接口办理时取办理结果节点的，否则取状态机的）。"
                                        "Joins the branches: the reply, the final state and this turn's memory (the "
                                        "outcome node's after a task API call, else the state node's)."))
    flow.edge("route", "reply", "false")
    flow.edge("has_passages", "reply", "false")
    for source in ("outcome", "faq_answer", "chat_answer"):
        flow.edge(source, "reply")
    items = [(name, ["reply", name, "output"]) for name in ("sys_context_str", "history", "summary", *reads,
                                                             "prompt_tail", "reply_pending")]
    flow.add("save_all", n.assigner(items, title="保存状态与记忆（汇合）",
                                    desc="回复之前一次写回状态、历史、摘要、下一轮提示词和上一轮的模型回答：之后的节点失败也不会丢失。"
                                    "Writes the state, the history, the summary, the next prompt and this turn's "
                                    "model answer at once, before the reply, so that nothing failing after it can "
                                    "lose the turn."))
    shown = n.ref(["reply", "reply", "output"]) + n.ref(["state", "follow_up"])
    flow.add("answer_all", n.answer(shown, title="回复用户（汇合）",
                                    desc="本轮的回复；FAQ 和闲聊回答之后接上未完成任务的问题。This turn's reply; after a "
                                         "FAQ or small-talk answer, the open task's question."))
    flow.add("need_summary", n.if_else([n.case("due", [_flag_condition(flow, ["reply", "summary_due", "output"])])],
                                       title="是否需要 LLM 摘要", desc="只有历史溢出时才多调用一次 LLM。Only an "
                                       "overflowing history costs an extra LLM call."))
    flow.add("summarize", n.default_values(n.with_retry(n.llm(
        _model(options, 0.2, "summarize"), n.ref(["reply", "summary_system", "output"]),
        n.ref(["reply", "summary_prompt", "output"]),
        title="LLM 合并摘要", desc="把移出窗口的旧对话合并进摘要；失败时输出空文本，由校验节点退回抽取式摘要。Merges "
        "the turns that left the window into the summary; on failure it outputs an empty text and the "
        "check falls back to the extractive summary."), max_retries=1, interval_ms=300), {"text": ""}))
    _code_node(flow, "summary_check", "summary", {
        "llm_text": ["summarize", "text"], "summary": ["reply", "summary", "output"],
        "overflow": ["reply", "overflow", "output"], "history": ["reply", "history", "output"],
        "sys_context_str": ["reply", "sys_context_str", "output"], "task_catalog": ["env", "TASK_CATALOG"],
    }, "校验摘要", "拒答、空或过长时退回抽取式摘要，补回遗漏的数值；并用最终摘要重新生成下一轮提示词；失败时保留已保存的抽取式摘要。"
       "Falls back to the extractive summary on a refusal or an empty or over-long answer; adds back dropped "
       "values; rebuilds the next turn's prompt with the final summary. On failure the extractive summary "
       "already saved stays.", fail_branch=True)
    items = [(name, ["summary_check", name]) for name in ("summary", *reads, "prompt_tail")]
    flow.add("save_summary", n.assigner(items, title="保存摘要", desc="写回 LLM 摘要和据此生成的下一轮提示词。Writes "
                                        "the LLM summary and the next turn's prompt built with it."))
    flow.chain("reply", "save_all", "answer_all", "need_summary")
    flow.edge("need_summary", "summarize", "due")
    flow.chain("summarize", "summary_check", "save_summary")


def _flag_condition(flow: Flow, selector: list[str], value: bool = True) -> dict[str, Any]:
    """An if-else condition "this flag output is ``value``": a boolean on Dify 1.8+, else the number 1/0."""
    if flow.target.booleans:
        return n.condition(selector, "is", value, var_type="boolean")
    return n.condition(selector, "=", "1" if value else "0", var_type="number")


def _after_state(flow: Flow, options: FlowOptions, layout: str) -> None:
    _route(flow)
    _faq_branch(flow, options)
    _chitchat_branch(flow, options)
    _execute_branch(flow)
    _own_reply(flow, layout)
    _reply_and_memory(flow, options, layout)


# --------------------------------------------------------------------------------------------------
# The two layouts
# --------------------------------------------------------------------------------------------------


def build_fast(options: FlowOptions | None = None) -> Flow:
    """One understanding LLM, then the state node decides: <= 1 LLM call before the state update."""
    options = options or FlowOptions()
    flow = _base_flow("对话状态机（快速版）Dialogue State Kit - fast",
                      "一次 LLM 调用完成改写、路由和槽位提取，状态机决定下一步。One LLM call rewrites, routes "
                      "and extracts slots; the state machine decides.", options, "fast")
    understand = n.llm(_model(options, None, "understand"), prompts.PROMPT_SYSTEM, prompts.CONTEXT,
                       title="理解：改写+路由+槽位",
                       desc="输出理解 JSON：rewritten_query 与 commands。Returns the understanding "
                            "JSON: rewritten_query and commands.")
    if options.structured_output:
        understand = n.structured_output(understand, understanding_schema(options))
    flow.add("understand", understand)
    flow.edge("prompt", "understand")
    _state_node(flow, ["understand", "text"])
    flow.edge("understand", "state")
    _after_state(flow, options, "fast")
    return finish(flow, options, "fast")


def understanding_schema(options: FlowOptions) -> dict[str, Any]:
    """The understanding's JSON schema for the catalog the files carry (:mod:`dskit.turn.command_schema`). A
    Dify user who edits ``TASK_CATALOG`` regenerates the files to change it."""
    from dskit.catalog.catalog import load_catalog  # noqa: PLC0415
    from dskit.turn.command_schema import command_schema  # noqa: PLC0415

    return command_schema(load_catalog(catalog_text(options)))


def finish(flow: Flow, options: FlowOptions, layout: str) -> Flow:
    """The flow as built, or with its notes in the catalog's language only (``options.localized``)."""
    if options.localized:
        localize(flow, options.lang, layout, json.loads(catalog_text(options)))
    return flow


def classic_classes(catalog: dict[str, Any], lang: str = "zh") -> list[tuple[str, str]]:
    """Question-classifier classes: one per task (its label), then the non-task classes, whose labels
    come from the table the adapter reads them back with (:data:`dskit.surfaces.classic.CLASSIC_CLASSES`)."""
    classes = [(f"task_{name}", str(spec.get("label") or name)) for name, spec in catalog["tasks"].items()]
    return classes + classic_labels(lang)


PARAMETER_WORDS = {
    "zh": {"choices": "可选：", "list_sep": "、", "number": "数字", "boolean": "是/否", "sep": "；"},
    "en": {"choices": "one of: ", "list_sep": ", ", "number": "a number", "boolean": "yes/no", "sep": "; "},
}


def classic_parameters(catalog: dict[str, Any], lang: str = "zh") -> list[dict[str, Any]]:
    """One extractor parameter per slot name across tasks, all strings, described in ``lang``.

    Strings on purpose: graphon (and Dify) fill a parameter the model left out with 0 for numbers and
    false for booleans, which would set slots nobody mentioned; an empty string is skipped by the
    adapter, and the engine coerces "3" or "是" to the slot's type.
    """
    words_of = PARAMETER_WORDS["en" if lang == "en" else "zh"]
    params: dict[str, dict[str, Any]] = {}
    for spec in catalog["tasks"].values():
        for slot, raw in (spec.get("slots") or {}).items():
            words = [str(raw.get("label") or slot), str(raw.get("description") or "")]
            if raw.get("enum"):
                words.append(words_of["choices"] + words_of["list_sep"].join(str(v) for v in raw["enum"]))
            if raw.get("type") in {"integer", "number"}:
                words.append(words_of["number"])
            if raw.get("type") == "boolean":
                words.append(words_of["boolean"])
            text = words_of["sep"].join(w for w in words if w)
            entry = params.setdefault(slot, {"name": slot, "type": "string", "required": False,
                                             "description": text})
            if text not in entry["description"]:
                entry["description"] += " | " + text
    return list(params.values())


def build_classic(options: FlowOptions | None = None) -> Flow:
    """The classic layout: rewrite -> classify -> extract -> adapter -> the same state node."""
    options = options or FlowOptions()
    catalog = json.loads(catalog_text(options))
    flow = _base_flow("对话状态机（经典版）Dialogue State Kit - classic",
                      "经典布局：改写、分类、参数提取三个 LLM 节点，再由状态机决定。The classic layout: "
                      "query rewrite, question classifier and parameter extractor, then the state machine.",
                      options, "classic")
    lang = "en" if options.lang == "en" else "zh"
    rewrite = prompts.REWRITE[lang]
    flow.add("rewrite", n.llm(_model(options, None, "rewrite"), rewrite["system"], rewrite["user"], title="问题改写",
                              desc="结合历史把问题改写完整。Rewrites the message into a self-contained question."))
    classes = classic_classes(catalog, lang)
    flow.add("classify", n.question_classifier(
        _model(options, None, "classify"), ["rewrite", "text"], classes, prompts.CLASSIFY[lang], title="问题分类",
        desc="任务 / 补充信息 / 确认 / 否认 / 取消 / 重置 / FAQ / 闲聊 / 转人工。Routes the question."))
    parameters = classic_parameters(catalog, lang)
    flow.add("extract", n.parameter_extractor(
        _model(options, None, "extract"), ["rewrite", "text"], parameters, prompts.EXTRACT[lang], title="参数提取",
        desc="提取这句话里说出的词槽。Extracts the slots this message states."))
    bindings: dict[str, list[str]] = {
        "class_name": ["classify", "class_name"],
        "query": ["rewrite", "text"],
        "task_catalog": ["env", "TASK_CATALOG"],
        "sys_context_str": ["conversation", "sys_context_str"],
    }
    for param in parameters:
        bindings[param["name"]] = ["extract", param["name"]]
    _code_node(flow, "adapter", "classic_adapter", bindings, "经典适配器",
               "把分类结果和提取的参数转换成理解 JSON。Turns the class and the parameters into the "
               "understanding JSON.")
    flow.chain("prompt", "rewrite", "classify")
    extract_classes = {cid for cid, _ in classes if cid.startswith("task_")} | {"more_info"}
    for cid, _ in classes:
        flow.edge("classify", "extract" if cid in extract_classes else "adapter", cid)
    flow.edge("extract", "adapter")
    _state_node(flow, ["adapter", "understanding"])
    flow.edge("adapter", "state")
    _after_state(flow, options, "classic")
    return finish(flow, options, "classic")
