"""The plugin-flavoured Chatflow: the fast layout with our plugin's tool nodes instead of code nodes.

    start -> recall -> track_state -> route(next_action) -+- ask/confirm, handoff, fallback ------+
                                                          +- execute -> exec_reply ---------------+
                                                          +- faq -> faq_search -> faq_knowledge -> faq_answer
                                                          +- chitchat -> chat_answer
                                                                                                  v
                       reply -> save_state -> answer -> compress -> save (history and summary)

``track_state`` (one tool node) does what ``context`` + ``understand`` + ``state`` do in the fast
layout: the user's model reads the message with our understanding prompt (a reverse LLM call from
the plugin), then the state machine decides. ``compress_history`` replaces the history and summary
nodes; ``recall`` feeds the user's long-term memory to the FAQ and chitchat answers. The file needs
the plugin installed (a ``package`` dependency: ``dskit build`` makes the .difypkg) and the model
provider (a ``marketplace`` dependency). The execute branch says plainly that nothing was done
(``track_state``'s ``no_api_reply``, in the catalog's labels); a real task API goes between ``route``
and ``exec_reply`` (see the fast layout's ``call_api``).

The package dependency names the package exactly, ``dskit/dialogue_state_kit:0.2.0@<checksum>``:
Dify's plugin daemon refuses the whole missing-dependency check for an identifier without its
checksum (:mod:`.dify_rules`). The checksum is that of the package ``dskit build`` makes from this
checkout (:func:`dskit.tooling.plugin_package.plugin_identifier`), so ``dskit gen --check`` keeps the
repository copy current and ``dskit build`` writes the same identifier into ``dist/``.

As in the other layouts the state is saved before the answer; ``compress`` (which may call a model)
retries once and, if it still fails, leaves the memory as it was (fail branch with no edge).
"""

from __future__ import annotations

from typing import Any

from dskit.context.prompts import UNDERSTANDING_SAMPLING
from dskit.tooling.dslbuild import node_data as n
from dskit.tooling.dslbuild import prompts
from dskit.tooling.dslbuild.builder import Flow
from dskit.tooling.dslbuild.conversation import declare_conversation_variables
from dskit.tooling.dslbuild.flows import ROOT, FlowOptions, catalog_text, finish, knowledge_node, opening_statement

PLUGIN_FILE = "dsl/dialogue_chatflow_plugin.yml"
PLUGIN_AUTHOR = "dskit"
PLUGIN_NAME = "dialogue_state_kit"
PROVIDER_ID = f"{PLUGIN_AUTHOR}/{PLUGIN_NAME}/{PLUGIN_NAME}"

TOOL_LABELS = {
    "track_state": "跟踪对话状态（调用模型）",
    "compress_history": "压缩历史",
    "recall": "回忆",
    "remember": "记住",
}


def package_dependency(identifier: str) -> dict[str, Any]:
    """Dify's ``dependencies`` entry for a plugin installed from a local package file."""
    version = identifier.partition(":")[2].partition("@")[0]
    return {"current_identifier": None, "type": "package",
            "value": {"plugin_unique_identifier": identifier, "version": version}}


def our_plugin_identifier(options: FlowOptions) -> str:
    """The identifier of the package this checkout builds, unless the options name one."""
    if options.package_identifier:
        return options.package_identifier
    from dskit.tooling.plugin_package import plugin_identifier  # noqa: PLC0415

    return plugin_identifier(ROOT)


def variable(selector: list[str]) -> dict[str, Any]:
    return {"type": "variable", "value": list(selector)}


def mixed(text: str) -> dict[str, Any]:
    return {"type": "mixed", "value": text}


def constant(value: Any) -> dict[str, Any]:
    return {"type": "constant", "value": value}


def model_selector(options: FlowOptions, max_tokens: int, sampling: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ``model-selector`` tool configuration (what the editor stores for a picked LLM), its answers
    bounded by ``max_tokens`` (prompts.MAX_TOKENS); ``sampling`` for the understanding (what track_state
    asks for whatever the selector says: :data:`dskit.context.prompts.UNDERSTANDING_SAMPLING`)."""
    params = dict(sampling) if sampling else {"temperature": 0.1}
    return constant({"provider": options.provider, "model": options.model, "model_type": "llm",
                     "mode": "chat", "type": "model-selector",
                     "completion_params": {**params, "max_tokens": max_tokens}})


def tool(tool_name: str, parameters: dict[str, dict[str, Any]], configurations: dict[str, Any], *,
         title: str, desc: str, identifier: str) -> dict[str, Any]:
    """A Dify tool node calling one of our plugin's tools."""
    return {
        "type": "tool", "title": title, "desc": desc, "selected": False,
        "provider_id": PROVIDER_ID, "provider_type": "builtin", "provider_name": PROVIDER_ID,
        "tool_name": tool_name, "tool_label": TOOL_LABELS.get(tool_name, tool_name),
        "tool_description": "", "is_team_authorization": True,
        "plugin_unique_identifier": identifier,
        "tool_parameters": parameters, "tool_configurations": configurations,
        "tool_node_version": "2", "params": {}, "paramSchemas": [], "output_schema": None,
    }


def build_plugin(options: FlowOptions | None = None) -> Flow:
    options = options or FlowOptions()
    identifier = our_plugin_identifier(options)
    flow = Flow(name="对话状态机（插件版）Dialogue State Kit - plugin tools",
                description="用 Dialogue State Kit 插件的工具节点：跟踪状态、压缩历史、长期记忆。The fast layout "
                            "built from the Dialogue State Kit plugin's tool nodes.",
                opening_statement=opening_statement(options), target=options.target)
    declare_conversation_variables(flow)
    flow.env_var("TASK_CATALOG", catalog_text(options),
                 "任务目录 JSON（见 docs/catalog.md）。The task catalog as JSON (see docs/catalog.md).")
    flow.dependencies.append(package_dependency(identifier))
    flow.use_provider(options.provider, options.plugin_identifier)
    lang = "en" if options.lang == "en" else "zh"

    flow.add("start", n.start(desc="用户发来一条消息。A user message arrives (sys.query)."))
    flow.add("recall", tool("recall", {"query": mixed(n.ref(["sys", "query"]))}, {"lang": constant("auto")},
                            title="回忆用户记忆", desc="按本轮消息找出这位用户的长期记忆。Finds this user's "
                            "long-term facts related to the message.", identifier=identifier))
    flow.add("track_state", tool("track_state", {
        "query": mixed(n.ref(["sys", "query"])),
        "sys_context_str": variable(["conversation", "sys_context_str"]),
        "catalog": variable(["env", "TASK_CATALOG"]),
        "history": variable(["conversation", "history"]),
        "summary": variable(["conversation", "summary"]),
    }, {"model": model_selector(options, prompts.MAX_TOKENS["understand"], UNDERSTANDING_SAMPLING), "bad_state": constant("refuse"),
        "lang": constant("auto")},
        title="跟踪对话状态", desc="你选的模型理解本轮消息，状态机决定下一步。Your model understands the "
        "message; the state machine decides the next action.", identifier=identifier))
    flow.chain("start", "recall", "track_state")

    action = ["track_state", "next_action"]
    flow.add("route", n.if_else([
        n.case("ask", [n.condition(action, "is", "ask_slot"), n.condition(action, "is", "confirm")], "or"),
        n.case("execute", [n.condition(action, "is", "execute")]),
        n.case("faq", [n.condition(action, "is", "faq")]),
        n.case("chitchat", [n.condition(action, "is", "chitchat"),
                            n.condition(["track_state", "notices"], "empty")]),
        n.case("handoff", [n.condition(action, "is", "handoff")]),
    ], title="按下一步动作分支", desc="按 next_action 分支；否则直接回复状态机的话术。Branches on "
       "next_action; the else branch replies with the engine's text."))
    flow.edge("track_state", "route")

    # what the user reads of the task is track_state's no_api_reply, in the catalog's labels as the fast
    # Chatflow shows them (never the payload's slot keys), then the next question
    flow.add("exec_reply", n.template(
        "{{ text }}{% if question %}\n\n{{ question }}{% endif %}",
        [("text", ["track_state", "no_api_reply"]), ("question", ["track_state", "question"])],
        title="办理话术", desc="说明任务没有真正办理（未接入任务接口；只读查询则说明无法给出结果），用目录里的显示名，再接下一个问题"
                               "（接口调用可加在此前）。Says the task was not carried out (no task API; a read-only "
                               "enquiry cannot be answered), in the catalog's labels, then the next question."))
    flow.edge("route", "exec_reply", "execute")

    flow.add("faq_search", n.knowledge_retrieval(["track_state", "faq_question"], title="知识库检索",
                                                 desc="导入后请在此选择知识库。Pick your knowledge base here."))
    knowledge_node(flow, "faq_search", lang)
    faq = prompts.faq_prompt(lang, n.ref(["track_state", "faq_question"]),  # as the fast Chatflow asks
                             n.ref(["faq_knowledge", "output"]))
    flow.add("faq_answer", n.llm(n.model_config(options.provider, options.model, 0.3,
                                                       {"max_tokens": prompts.MAX_TOKENS["faq_answer"]}), faq["system"],
                                 faq["user"] + "\n\n" + n.ref(["recall", "memories"]), title="FAQ 回答",
                                 desc="根据检索到的知识简短回答。Answers from the retrieved passages."))
    flow.edge("route", "faq_search", "faq")
    flow.chain("faq_search", "faq_knowledge", "faq_answer")

    chat = prompts.chitchat_prompt(lang, n.ref(["track_state", "current_task_label"]))  # as the fast Chatflow
    flow.add("chat_answer", n.llm(n.model_config(options.provider, options.model, 0.7,
                                                        {"max_tokens": prompts.MAX_TOKENS["chat_answer"]}), chat["system"],
                                  chat["user"] + "\n\n" + n.ref(["recall", "memories"]), title="闲聊回复",
                                  desc="一句话回应闲聊。A one-sentence reply to small talk."))
    flow.edge("route", "chat_answer", "chitchat")

    # a FAQ or small-talk answer goes back to the open task: the answer node shows the model's text, then
    # track_state's follow_up (a blank line and the task's question) — no template node, which would be
    # one more sandbox run; compress records the turn as the Chatflows' history node does (with the
    # decision: the engine's follow-up alone after a FAQ or small-talk answer, dskit.state.views.memory_reply)
    flow.add("reply", n.aggregator(
        [["exec_reply", "output"], ["faq_answer", "text"], ["chat_answer", "text"], ["track_state", "question"]],
        title="本轮回复", desc="汇合各分支的回复。Joins the branches' replies."))
    for handle in ("ask", "handoff", "false"):
        flow.edge("route", "reply", handle)
    for source in ("exec_reply", "faq_answer", "chat_answer"):
        flow.edge(source, "reply")
    shown = n.ref(["reply", "output"]) + n.ref(["track_state", "follow_up"])
    flow.add("save_state", n.assigner([("sys_context_str", ["track_state", "sys_context_str"])],
                                      title="保存对话状态", desc="回复之前先保存状态：之后的节点失败也不会丢失。Saves "
                                      "the state before the reply, so that nothing failing after it can lose "
                                      "the turn."))
    flow.add("answer", n.answer(shown, title="回复用户", desc="本轮唯一的回复；FAQ 和闲聊回答之后接上未完成任务的问题。"
                                "The one reply of this turn; after a FAQ or small-talk answer, the open task's question."))
    flow.add("compress", n.fail_branch(n.with_retry(tool("compress_history", {
        "history": variable(["conversation", "history"]),
        "user_query": mixed(n.ref(["sys", "query"])),
        "answer": mixed(n.ref(["reply", "output"])),
        "follow_up": mixed(n.ref(["track_state", "follow_up"])),
        "decision": mixed(n.ref(["track_state", "decision"])),
        "summary": variable(["conversation", "summary"]),
    }, {"max_turns": constant(10), "max_bytes": constant(150000), "summary_max_tokens": constant(400),
        "summarizer": constant("auto"), "model": model_selector(options, prompts.MAX_TOKENS["summarize"]),
        "lang": constant("auto")},
        title="压缩历史", desc="追加本轮；移出窗口的轮次并入摘要；失败时记忆保持原样。Appends the turn; turns that "
        "leave the window go into the summary; on failure the memory stays as it was.", identifier=identifier),
        max_retries=1, interval_ms=300)))
    flow.add("save", n.assigner([
        ("history", ["compress", "history"]),
        ("summary", ["compress", "summary"]),
    ], title="保存记忆", desc="写回历史和摘要。Writes the history and the summary."))
    flow.chain("reply", "save_state", "answer", "compress", "save")
    return finish(flow, options, "plugin")
