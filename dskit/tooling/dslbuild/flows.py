"""The two code-node Chatflows: the fast layout (one understanding LLM) and the classic layout
(question rewrite, question classifier and parameter extractor, as many existing Chatflows are built).

Both start the same way, with nothing but the model before the model:

    start -> has_prompt -(ready)--------------> prompt -> understand (fast) | rewrite -> classify ... (classic)
                        \\-(else)-> context -----/

The understanding prompt up to the message depends only on what a turn leaves behind (the state, the
history, the summary), so the history node builds it when a turn ends (:func:`dskit.nodes.next_prompt`,
the very text of :func:`dskit.prompts.understanding_head`) and ``save`` stores it in conversation
variables (``prompt_head``, plus ``prompt_system`` for the fast layout or ``prompt_state`` for the
classic one). On an ordinary turn ``has_prompt`` finds it and the ``prompt`` aggregator hands the LLM
node that head followed by ``{{#sys.query#}}``: no code node runs before the model. The ``context``
code node builds the whole prompt instead (the same text the plugin's ``track_state`` sends) when
there is none to read, and the aggregator then hands over its ``head`` and ``message``:

- the first message of a conversation, and a Chatflow imported or upgraded mid-conversation (the
  variables are still empty);
- a turn after one that could not build it: ``save_state`` clears ``prompt_head`` when it writes the
  new state, and only ``save`` writes the new prompt, so a turn whose history node failed (its fail
  branch ends the turn), or that stopped anywhere between the two assigners, leaves no prompt showing
  an old state, and the next turn rebuilds it;
- a message with a line break (any character :data:`dskit.text.LINE_BREAK_CHARS` lists): the context
  node puts it on one line after "> ", so a message can never start a line of the prompt and pass for
  one of the engine's headers (docs/context.md, "What the model can trust"). A one-line message goes
  to the model as the user typed it; the engine's rendering differs only in dropping invisible format
  characters and surrounding spaces and in cutting a message over 1,000 tokens, which a Dify
  variable cannot do without a code node (such a message runs over the token budget by its excess;
  the state node refuses one over 8,000 characters whatever the model says).

A Dify user who edits ``TASK_CATALOG`` between two turns of a conversation sees the new catalog in the
model's prompt from the turn after the next (the head was built with the old one); the state node
always reads the current one.

Both share everything after the state node:

    state -> route(next_action) -+- ask/confirm, handoff, fallback -----------------+
                                 +- execute -> has_api -> call_api -> result -+     |
                                 |                    \\------------------------ execute_reply
                                 +- faq -> faq_search -> faq_knowledge -> faq_answer -+
                                 +- chitchat -> chat_answer ------------------------+
                                                                                    v
      reply -> save_state -> answer -> has_memory -(built)---------> memory -> need_summary -(due)-> summarize
                                                   \\-(else)-> history -/               \\              |
                                                                                     \\      summary_check
                                                                                      v           |
                                                                                    summary_out -> save

The state is saved before the answer (``save_state``), so nothing that fails after the reply can
lose it; ``save`` writes the memory and the next prompt. The memory of the turn (the new history and
summary, and the next turn's prompt) is built once, by whichever node has the reply: on a turn whose
reply is the state node's own question (ask, confirm, handoff, fallback; small talk with engine
notices) the state node builds it itself (its ``summary`` input bound, ``memory_ready`` true:
:func:`dskit.nodes.replies_itself`), so an ordinary turn runs one code node in all; on the others
(a task's outcome, a FAQ or small-talk answer) the ``history`` node builds it after the answer. The
``memory`` aggregator hands the later nodes whichever ran. After the answer every node that can fail
has an error strategy: ``summarize`` (a model timeout) continues with an empty text, which
``summary_check`` replaces by the extractive summary; ``summary_check`` (which rebuilds the next
prompt with the final summary) failing takes its fail branch to ``summary_out`` (the ``memory``
aggregator's summary and prompt); ``history`` failing ends the turn with the memory as it was and no prompt. Every
code node retries twice first (dify-sandbox's intermittent failures).

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
from dskit.classic import classic_labels
from dskit.tooling.dslbuild.conversation import declare_conversation_variables
from dskit.tooling.dslbuild.dify_versions import DEFAULT_TARGET, Target
from dskit.tooling.dslbuild.localize import localize
from dskit.prompts import UNDERSTANDING_SAMPLING
from dskit.text import LINE_BREAK_CHARS

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
    # (dskit.command_schema). Off by default: only a model with native structured output is constrained by
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
# the context node's output that stands in for it when none was built.
PROMPT_READS = {"fast": ("prompt_system", "prompt_head"), "classic": ("prompt_head", "prompt_state")}
PROMPT_GROUPS = {"prompt_system": ("system", "instructions"), "prompt_head": ("head", "head"),
                 "prompt_state": ("state", "state_text")}


def _base_flow(name: str, description: str, options: FlowOptions, layout: str) -> Flow:
    flow = Flow(name=name, description=description, opening_statement=opening_statement(options),
                target=options.target)
    declare_conversation_variables(flow, PROMPT_READS[layout])
    flow.env_var("TASK_CATALOG", catalog_text(options),
                 "任务目录 JSON（见 docs/catalog.md）。The task catalog as JSON (see docs/catalog.md).")
    flow.env_var("TASK_API_URL", "", "办理任务的接口地址，留空则只说明将要办理的内容。The URL the execute "
                 "branch POSTs the task to; empty: reply with what would be done.")
    flow.env_var("LLM_SUMMARY", "true", "true：历史溢出时用 LLM 合并摘要；false：只用抽取式摘要。true: an LLM "
                 "merges overflowing turns into the summary; false: extractive summary only.")
    flow.env_var("STATE_SECRET", "", "状态封印的密钥（密钥型，导出时不含其值）：设置后，在引擎之外被改动的状态会重新开始。"
                 "The key of the state's seal (a secret: exports leave it out): once set, a state changed "
                 "outside the engine starts clean (docs/state-format.md).", value_type="secret")
    flow.use_provider(options.provider, options.plugin_identifier)
    flow.add("start", n.start(desc="用户发来一条消息。A user message arrives (sys.query)."))
    _prompt_nodes(flow, PROMPT_READS[layout])
    return flow


def _prompt_nodes(flow: Flow, reads: tuple[str, ...]) -> None:
    """``has_prompt`` -> (``context`` when needed) -> ``prompt``: the understanding prompt in one place
    (the module docstring says when the context node runs)."""
    ready = [n.condition(["conversation", name], "not empty") for name in reads]
    ready += [n.condition(["sys", "query"], "not contains", char, cond_id=f"query-without-break-{ord(char):04x}")
              for char in LINE_BREAK_CHARS]
    flow.add("has_prompt", n.if_else(
        [n.case("ready", ready)], title="是否已有本轮提示词",
        desc="上一轮末尾已生成提示词、且消息只有一行（不含任何换行符）时直接调用模型；否则（首轮、上一轮未能生成、消息有换行）"
             "先由上下文节点生成。Calls the model directly when the last turn left the prompt and the message is "
             "one line (none of the line-break characters these conditions list); otherwise (the first turn, no "
             "prompt left, a line break) the context node builds it first."))
    _code_node(flow, "context", "context", {
        "query": ["sys", "query"], "sys_context_str": ["conversation", "sys_context_str"],
        "history": ["conversation", "history"], "summary": ["conversation", "summary"],
        "task_catalog": ["env", "TASK_CATALOG"],
    }, "理解上下文", "没有现成提示词时（如首轮）运行：精简目录+当前状态（含缺失槽位和上一轮追问）+摘要+去噪历史，控制在 "
       "token 预算内，消息写成一行。Runs when no prompt was left (the first turn): builds the model's view of "
       "the turn — compact catalog, state (missing slots, last question), summary and de-noised recent turns "
       "within a token budget, the message on one line.")
    groups: dict[str, list[list[str]]] = {}
    for name in reads:
        group, output = PROMPT_GROUPS[name]
        groups[group] = [["context", output], ["conversation", name]]
    groups["message"] = [["context", "message"], ["sys", "query"]]
    order = ("system", "head", "message", "state")
    flow.add("prompt", n.aggregator(
        [], title="本轮理解提示词", groups={g: groups[g] for g in order if g in groups},
        desc="上下文节点运行了就用它的输出，否则用上一轮末尾生成的提示词加用户消息：模型只从这里读。The context node's "
             "outputs when it ran, else the prompt the last turn left followed by the message: the model "
             "reads the prompt from here only."))
    flow.edge("start", "has_prompt")
    flow.edge("has_prompt", "prompt", "ready")
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
    everywhere (:data:`dskit.prompts.UNDERSTANDING_SAMPLING`: greedy, a fixed seed). A model whose
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
        "llm_summary": ["env", "LLM_SUMMARY"],
    }, "状态机", "按理解结果更新任务栈并决定下一步（追问/确认/执行/FAQ/闲聊/转人工/兜底）；只应用用户说过的值和动作。"
       "回复就是它的话术时（追问、确认等），它同时更新历史和摘要并生成下一轮提示词，历史节点不再运行。"
       "Applies the understanding's commands to the task stack and decides the next action; only what the "
       "user's message (or a recent one) supports is applied (docs/grounding.md). When its own text is the "
       "reply (ask, confirm, ...), it also updates the history and summary and builds the next prompt, so "
       "the history node does not run.")


def _route(flow: Flow) -> None:
    action = ["state", "next_action"]
    cases = [
        n.case("ask", [n.condition(action, "is", "ask_slot"), n.condition(action, "is", "confirm")], "or"),
        n.case("execute", [n.condition(action, "is", "execute")]),
        n.case("faq", [n.condition(action, "is", "faq")]),
        # Chitchat with engine notices and no open task (e.g. after a reset) needs no LLM: the else
        # branch says the engine's text.
        n.case("chitchat", [n.condition(action, "is", "chitchat"), n.condition(["state", "notices"], "empty")]),
        n.case("handoff", [n.condition(action, "is", "handoff")]),
    ]
    flow.add("route", n.if_else(cases, title="按下一步动作分支",
                                desc="按 next_action 分支；否则（兜底、或只需说出引擎提示时）直接回复状态机的话术。"
                                     "Branches on next_action; the else branch (fallback, or an engine "
                                     "notice such as a reset) replies with the state node's text."))
    flow.edge("state", "route")


def _execute_branch(flow: Flow) -> None:
    flow.add("has_api", n.if_else(
        [n.case("api", [n.condition(["env", "TASK_API_URL"], "not empty")])],
        title="是否配置了任务接口", desc="TASK_API_URL 非空才真正调用接口。Calls the task API only when "
                                        "TASK_API_URL is set."))
    flow.add("call_api", n.http_request(
        n.ref(["env", "TASK_API_URL"]), n.ref(["state", "execute_payload"]), title="调用任务接口",
        desc="POST {task_id, task, label, slots}；失败时输出默认值而不中断。POSTs the task; on failure it "
             "outputs defaults (status_code 0, error_message) instead of stopping the run."))
    _code_node(flow, "result", "result", {
        "sys_context_str": ["state", "sys_context_str"],
        "execute_payload": ["state", "execute_payload"],
        "ok": ["call_api", "status_code"],
        "detail": ["call_api", "body"],
        "state_secret": ["env", "STATE_SECRET"],
    }, "回写办理结果", "把接口结果写回状态；失败的任务回到栈顶等待重试。Records the API outcome in the "
       "state; a failed task goes back on top, awaiting a retry.")
    _code_node(flow, "execute_reply", "execute_reply", {
        "execute_payload": ["state", "execute_payload"],
        "question": ["state", "question"],
        "api_url": ["env", "TASK_API_URL"],
        "sys_context_str": ["state", "sys_context_str"],
        "recorded_state": ["result", "sys_context_str"],
        "ok": ["result", "ok"],
        "status_code": ["call_api", "status_code"],
        "error_message": ["call_api", "error_message"],
        "task_catalog": ["env", "TASK_CATALOG"],
    }, "办理结果话术", "告诉用户办成了、失败了（绝不冒充成功），或未配置接口时将要办理什么。Tells the user "
       "the task is done, that it failed (never passed off as success), or what would be done.")
    flow.edge("route", "has_api", "execute")
    flow.edge("has_api", "call_api", "api")
    flow.chain("call_api", "result", "execute_reply")
    flow.edge("has_api", "execute_reply", "false")


def _faq_branch(flow: Flow, options: FlowOptions) -> None:
    flow.add("faq_search", n.knowledge_retrieval(
        ["state", "faq_question"], title="知识库检索",
        desc="导入后请在此选择知识库。Pick your knowledge base here after import."))
    lang = "en" if options.lang == "en" else "zh"
    knowledge_node(flow, "faq_search", lang)
    prompt = prompts.faq_prompt(lang, n.ref(["state", "faq_question"]), n.ref(["faq_knowledge", "output"]))
    flow.add("faq_answer", n.llm(_model(options, 0.3, "faq_answer"), prompt["system"], prompt["user"], title="FAQ 回答",
                                 desc="根据检索到的知识简短回答。Answers briefly from the retrieved passages."))
    flow.edge("route", "faq_search", "faq")
    flow.chain("faq_search", "faq_knowledge", "faq_answer")


def knowledge_node(flow: Flow, search_id: str, lang: str) -> None:
    """The ``faq_knowledge`` template node: the retrieved passages as the text Dify's context would be
    (empty when none was found), so the FAQ prompt never depends on ``{{#context#}}``
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


def _reply_and_memory(flow: Flow, options: FlowOptions, layout: str) -> None:
    """Join the branches, answer, update the memory, build the next prompt and save.

    A FAQ or small-talk answer goes back to the open task: the answer node shows the model's text and
    then the state node's ``follow_up`` (a blank line and the task's question), and the history node
    records the two together — no template node, which would be one more sandbox run."""
    groups = {
        "reply": [["execute_reply", "reply"], ["faq_answer", "text"], ["chat_answer", "text"],
                  ["state", "question"]],
        "sys_context_str": [["execute_reply", "sys_context_str"], ["state", "sys_context_str"]],
    }
    flow.add("reply", n.aggregator([], title="本轮回复与状态", desc="汇合各分支：回复文本和最终状态。Joins "
                                   "the branches: the reply and the final state.", groups=groups))
    for handle in ("ask", "handoff", "false"):
        flow.edge("route", "reply", handle)
    for source in ("execute_reply", "faq_answer", "chat_answer"):
        flow.edge(source, "reply")
    state_items = [("sys_context_str", ["reply", "sys_context_str", "output"])]
    flow.add("save_state", n.assigner(state_items, title="保存对话状态", clears=("prompt_head",),
                                      desc="回复之前先保存状态：之后的节点失败也不会丢失；同时清空为旧状态生成的提示词，"
                                      "由本轮末尾重新生成。Saves the state before the reply, so that nothing failing "
                                      "after it can lose the turn, and clears the prompt made for the old state "
                                      "(the end of the turn writes the new one)."))
    shown = n.ref(["reply", "reply", "output"]) + n.ref(["state", "follow_up"])
    flow.add("answer", n.answer(shown, title="回复用户",
                                desc="本轮唯一的回复；FAQ 和闲聊回答之后接上未完成任务的问题。The one reply of this "
                                     "turn; after a FAQ or small-talk answer, the open task's question."))
    final_state = ["reply", "sys_context_str", "output"]
    _code_node(flow, "history", "history", {
        "old_history": ["conversation", "history"], "summary": ["conversation", "summary"],
        "user_query": ["sys", "query"], "answer": ["reply", "reply", "output"], "follow_up": ["state", "follow_up"],
        "decision": ["state", "decision"], "llm_summary": ["env", "LLM_SUMMARY"],
        "sys_context_str": final_state, "task_catalog": ["env", "TASK_CATALOG"],
    }, "更新对话历史", "追加本轮，保留最近几轮；移出的轮次并入摘要而不是丢弃；并用最终状态、新历史和摘要生成下一轮的理解提示词。"
       "失败时记忆保持原样，下一轮由上下文节点生成提示词。Appends this turn, keeps the recent ones; turns that "
       "leave the window go into the summary instead of being dropped; builds the next turn's understanding "
       "prompt from the final state, the new history and the summary. On failure the memory stays as it "
       "was and the next turn's context node builds the prompt.", fail_branch=True)
    flow.add("has_memory", n.if_else(
        [n.case("built", [_flag_condition(flow, ["state", "memory_ready"])])], title="状态机是否已更新记忆",
        desc="回复就是状态机的话术时，它已更新历史、摘要和下一轮提示词；否则由历史节点更新。The state node already "
             "updated the history, the summary and the next prompt when its own text is the reply; otherwise "
             "the history node does."))
    memory_names = ("history", "summary", "overflow", "summary_due", "summary_system", "summary_prompt",
                    *PROMPT_READS[layout])
    flow.add("memory", n.aggregator([], title="本轮记忆", groups={
        name: [["history", name], ["state", name]] for name in memory_names},
        group_types={"summary_due": "boolean" if flow.target.booleans else "number"},
        desc="历史节点运行了就用它的输出，否则用状态机的。The history node's outputs when it ran, else the "
             "state node's."))
    flow.add("need_summary", n.if_else([n.case("due", [_flag_condition(flow, ["memory", "summary_due", "output"])])],
                                       title="是否需要 LLM 摘要", desc="只有历史溢出时才多调用一次 LLM。Only an "
                                       "overflowing history costs an extra LLM call."))
    flow.add("summarize", n.default_values(n.with_retry(n.llm(
        _model(options, 0.2, "summarize"), n.ref(["memory", "summary_system", "output"]),
        n.ref(["memory", "summary_prompt", "output"]),
        title="LLM 合并摘要", desc="把移出窗口的旧对话合并进摘要；失败时输出空文本，由校验节点退回抽取式摘要。Merges "
        "the turns that left the window into the summary; on failure it outputs an empty text and the "
        "check falls back to the extractive summary."), max_retries=1, interval_ms=300), {"text": ""}))
    _code_node(flow, "summary_check", "summary", {
        "llm_text": ["summarize", "text"], "summary": ["memory", "summary", "output"],
        "overflow": ["memory", "overflow", "output"], "history": ["memory", "history", "output"],
        "sys_context_str": final_state, "task_catalog": ["env", "TASK_CATALOG"],
    }, "校验摘要", "拒答、空或过长时退回抽取式摘要，补回遗漏的数值；并用最终摘要重新生成下一轮提示词。Falls back to the "
       "extractive summary on a refusal or an empty or over-long answer; adds back dropped values; rebuilds "
       "the next turn's prompt with the final summary.", fail_branch=True)
    reads = PROMPT_READS[layout]
    groups = {"summary": [["summary_check", "summary"], ["memory", "summary", "output"]]}
    groups.update({name: [["summary_check", name], ["memory", name, "output"]] for name in reads})
    flow.add("summary_out", n.aggregator([], title="本轮摘要与下一轮提示词", groups=groups,
                                         desc="LLM 摘要（若有）及据此生成的提示词，否则历史节点的。The LLM summary "
                                         "and the prompt built with it if one was made, else the history node's."))
    items = [("history", ["memory", "history", "output"]), ("summary", ["summary_out", "summary", "output"])]
    items += [(name, ["summary_out", name, "output"]) for name in reads]
    flow.add("save", n.assigner(items, title="保存记忆", desc="写回历史、摘要和下一轮的理解提示词。Writes the "
                                "history, the summary and the next turn's understanding prompt."))
    flow.chain("reply", "save_state", "answer", "has_memory")
    flow.edge("has_memory", "memory", "built")
    flow.edge("has_memory", "history", "false")
    flow.chain("history", "memory", "need_summary")
    flow.edge("need_summary", "summarize", "due")
    flow.chain("summarize", "summary_check", "summary_out")
    flow.edge("summary_check", "summary_out", "fail-branch")
    flow.edge("need_summary", "summary_out", "false")
    flow.edge("summary_out", "save")


def _flag_condition(flow: Flow, selector: list[str]) -> dict[str, Any]:
    """An if-else condition "this flag output is true": a boolean on Dify 1.8+, else the number 1."""
    if flow.target.booleans:
        return n.condition(selector, "is", True, var_type="boolean")
    return n.condition(selector, "=", "1", var_type="number")


def _after_state(flow: Flow, options: FlowOptions, layout: str) -> None:
    _route(flow)
    _execute_branch(flow)
    _faq_branch(flow, options)
    _chitchat_branch(flow, options)
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
    """The understanding's JSON schema for the catalog the files carry (:mod:`dskit.command_schema`). A
    Dify user who edits ``TASK_CATALOG`` regenerates the files to change it."""
    from dskit.catalog import load_catalog  # noqa: PLC0415
    from dskit.command_schema import command_schema  # noqa: PLC0415

    return command_schema(load_catalog(catalog_text(options)))


def finish(flow: Flow, options: FlowOptions, layout: str) -> Flow:
    """The flow as built, or with its notes in the catalog's language only (``options.localized``)."""
    if options.localized:
        localize(flow, options.lang, layout, json.loads(catalog_text(options)))
    return flow


def classic_classes(catalog: dict[str, Any], lang: str = "zh") -> list[tuple[str, str]]:
    """Question-classifier classes: one per task (its label), then the non-task classes, whose labels
    come from the table the adapter reads them back with (:data:`dskit.classic.CLASSIC_CLASSES`)."""
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
