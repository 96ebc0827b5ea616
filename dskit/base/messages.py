"""User-facing texts of the engine, Chinese by default, English available.

Every sentence the engine or the plugin says to an end user or an app builder comes from here, so
that a translation is one table and tests can look up the exact text they expect.
"""

from __future__ import annotations

MESSAGES: dict[str, dict[str, str]] = {
    "zh": {
        "ack_values": "好的，已记下{values}。",
        "ask_default": "请问您的{slot}是？",
        "confirm": "请确认：{task}，{values}。确认办理吗？",
        "confirm_resume": "我们继续刚才的「{task}」：{values}。现在为您办理吗？",
        "confirm_none": "请确认是否办理「{task}」？",
        "confirm_with": "；一并提交「{task}」：{values}",
        "check": "想跟您核对一下：{values}，对吗？",
        "check_clear": "清空{slot}",
        "deny": "好的，请问需要修改哪一项？（{slots}）",
        "unapplied": "抱歉，我没能确定您要修改什么，「{task}」暂未办理，目前是：{values}。请告诉我要修改哪一项。",
        "resume": "我们继续刚才的「{task}」。",
        "cancelled": "已取消「{task}」。",
        "cascade": "「{task}」依赖的信息已变化，已一并取消。",
        "evicted": "待办事项太多，已移除最早的「{task}」。",
        "reset": "好的，已清空当前所有事项。",
        "fallback": "抱歉，我没太理解您的意思，能换个说法再说一遍吗？",
        "handoff": "正在为您转接人工客服，请稍候。",
        "guard": "还需要先确认一项信息。",
        "clarify_value": "想确认一下{slot}：{options}？",
        "or": "还是",
        "nothing_open": "好的。还有什么可以帮您？",
        "rolled_back": "已将{slot}改回{value}。",
        "rolled_back_empty": "已清空{slot}。",
        "exec_failed": "抱歉，「{task}」办理失败：{detail}。{also}需要我再试一次吗？",
        "exec_failed_also": "「{task}」也未提交，重试时会一起提交。",
        "exec_ok": "「{task}」已办理完成。",
        "exec_ok_with": "「{task}」已一并提交。",
        "exec_dry": "没有真正办理：「{task}」{values}要由业务系统办理，这个助手还没有接入。",
        "exec_dry_read": "抱歉，这个问题我暂时答不了：「{task}」{values}要从业务系统查询，这个助手还没有接入。",
        "exec_dry_with": "「{task}」{values}也没有提交。",
        "exec_dry_values": "（{values}）",
        "exec_dry_builder": "（应用搭建者：请把环境变量 TASK_API_URL 设为任务接口的地址。）",
        "waiting": "「{task}」会在「{parent}」办理后一起提交。",
        "exec_unknown": "接口没有返回成功",
        "faq_none": "抱歉，资料里没有找到这个问题的答案，建议您咨询人工客服。",
        "done_no_change": "「{task}」已经提交办理，这里不能直接修改；如需更改，请说“重新办理”并告诉我新的内容，或转人工处理。",
        "none": "无",
        "value_sep": "，",
        "kv": "{slot}：{value}",
        "yes": "是",
        "no": "否",
        "list_sep": "、",
        "broken_catalog": "系统配置有误，暂时无法办理，请稍后再试或联系人工客服。",
        "internal": "抱歉，系统出了点问题，请再说一遍。",
        "message_too_long": "抱歉，这条消息太长了（{n} 个字），我没有处理。请精简到 {limit} 个字以内再发一次。",
        "state_full": "抱歉，需要记住的内容太多了，这条消息没有保存。请说得简短一些，或先取消不需要的事项。",
        # the plugin tools' parameter errors (tools/_common.py)
        "tool_bad_param": "参数 {param} 有误：{problem}",
        "tool_required": "不能为空",
        "tool_too_long": "太长（{n} 个字符，上限 {limit}）",
        "tool_not_text": "必须是文本，收到的是 {kind}",
        "tool_not_json": "不是有效的 JSON（{detail}）",
        "tool_not_int": "必须是 {low} 到 {high} 之间的整数",
        "tool_not_choice": "必须是 {choices} 之一",
        "tool_catalog": "任务目录无效：{problems}",
        "tool_bad_state": "不是可用的对话状态（{detail}）。状态未改变；要从头开始，请清空该变量，或把 bad_state 设为 restart",
        "tool_unknown_task": "目录里没有任务 {task}",
        "tool_query_required": "不能为空：没有用户本轮的消息，就无法核对模型的指令是否有据（docs/grounding.md），状态未改变。请传入 sys.query",
        "tool_not_bool": "必须是 true 或 false（也可以写 1/0、yes/no、是/否），收到的是 {value}",
        "tool_not_outcome": "必须是 true 或 false（也可以写 1/0、yes/no、是/否、success/ok/成功、failed/error/失败，或 HTTP 状态码），收到的是 {value}",
        "tool_internal": "插件内部错误（{name}），输入和状态都未改变。",
    },
    "en": {
        "ack_values": "OK, noted {values}.",
        "ask_default": "What is your {slot}?",
        "confirm": "Please confirm: {task}, {values}. Shall I go ahead?",
        "confirm_resume": "Let's continue with {task}: {values}. Shall I go ahead now?",
        "confirm_none": "Shall I go ahead with {task}?",
        "confirm_with": "; together with {task}: {values}",
        "check": "Just to check: {values}. Is that right?",
        "check_clear": "clear {slot}",
        "deny": "OK, which one would you like to change? ({slots})",
        "unapplied": "Sorry, I could not tell what you want to change, so {task} is on hold. Now: {values}. Which item should I change?",
        "resume": "Let's continue with {task}.",
        "cancelled": "{task} has been cancelled.",
        "cascade": "{task} depended on what changed, so it was cancelled too.",
        "evicted": "Too many open tasks: the oldest one, {task}, was dropped.",
        "reset": "OK, everything has been cleared.",
        "fallback": "Sorry, I did not quite get that. Could you say it another way?",
        "handoff": "I am transferring you to a human agent, please wait.",
        "guard": "One more thing needs confirming first.",
        "clarify_value": "Just to be sure, the {slot}: {options}?",
        "or": " or ",
        "nothing_open": "OK. Anything else I can help with?",
        "rolled_back": "{slot} is back to {value}.",
        "rolled_back_empty": "{slot} has been cleared.",
        "exec_failed": "Sorry, {task} failed: {detail}. {also}Shall I try again?",
        "exec_failed_also": "{task} was not submitted either; it goes with the retry. ",
        "exec_ok": "{task} is done.",
        "exec_ok_with": "{task} was submitted with it.",
        "exec_dry": "Nothing was done: {task}{values} needs a system this assistant is not connected to yet.",
        "exec_dry_read": "Sorry, I can't answer that yet: {task}{values} needs a system this assistant is not connected to.",
        "exec_dry_with": "{task}{values} was not submitted either.",
        "exec_dry_values": " ({values})",
        "exec_dry_builder": "(App builder: set the environment variable TASK_API_URL to your task API.)",
        "waiting": "{task} will be submitted together with {parent}, once {parent} is done.",
        "exec_unknown": "the API did not report success",
        "faq_none": "Sorry, I could not find the answer to that in our information; a human agent can help you with it.",
        "done_no_change": "{task} has already been submitted and cannot be changed here. To change it, ask for a new one with what should be different, or ask for a person.",
        "none": "none",
        "value_sep": ", ",
        "kv": "{slot}: {value}",
        "yes": "yes",
        "no": "no",
        "list_sep": ", ",
        "broken_catalog": "The assistant is misconfigured and cannot help with this right now; "
                          "please try again later or ask for a human agent.",
        "internal": "Sorry, something went wrong on our side. Could you say that again?",
        "message_too_long": "Sorry, that message is too long ({n} characters), so I did not act on it. Please send it again in at most {limit} characters.",
        "state_full": "Sorry, that is more than I can keep track of, so this message was not saved. "
                      "Please say it more briefly, or cancel something you no longer need.",
        # the plugin tools' parameter errors (tools/_common.py)
        "tool_bad_param": "Parameter {param} is invalid: {problem}",
        "tool_required": "must not be empty",
        "tool_too_long": "is too long ({n} characters, limit {limit})",
        "tool_not_text": "must be text, got {kind}",
        "tool_not_json": "is not valid JSON ({detail})",
        "tool_not_int": "must be an integer from {low} to {high}",
        "tool_not_choice": "must be one of {choices}",
        "tool_catalog": "the task catalog is invalid: {problems}",
        "tool_bad_state": "is not a usable dialogue state ({detail}). The state is unchanged; to start afresh, clear the variable or set bad_state to restart",
        "tool_unknown_task": "the catalog has no task {task}",
        "tool_query_required": "must not be empty: without the user's message of this turn the model's commands cannot be checked against it (docs/grounding.md); the state is unchanged. Pass sys.query",
        "tool_not_bool": "must be true or false (1/0, yes/no, 是/否 also work), got {value}",
        "tool_not_outcome": "must be true or false (1/0, yes/no, 是/否, success/ok/成功, failed/error/失败 or an HTTP status code also work), got {value}",
        "tool_internal": "Internal plugin error ({name}); input and state are unchanged.",
    },
}


def norm_lang(lang: object) -> str:
    """"en", "en_US", "en-GB" -> "en"; anything else -> "zh" (the default)."""
    return "en" if isinstance(lang, str) and lang.lower().startswith("en") else "zh"


def msg(key: str, lang: str = "zh", **values: object) -> str:
    """The text ``key`` in ``lang`` with ``values`` filled in."""
    table = MESSAGES[norm_lang(lang)]
    return table[key].format(**values)


def sentences(lang: str, *parts: str) -> str:
    """Sentences one after another: Chinese runs them together, English needs a space between.

    Every place that puts one engine sentence after another goes through here ("Let's continue with
    Book a cleaning." then "What phone number ..."): joined with "" they read "cleaning.What". A part
    that already ends (or the next that starts) with white space gets no second space."""
    text = ""
    for part in parts:
        if not part:
            continue
        if text and norm_lang(lang) == "en" and not text[-1].isspace() and not part[0].isspace():
            text += " "
        text += part
    return text


def show_value(value: object, lang: str = "zh") -> str:
    """A slot value as an end user would read it: lists joined, booleans as 是/否."""
    if isinstance(value, bool):
        return msg("yes" if value else "no", lang)
    if isinstance(value, list):
        return msg("list_sep", lang).join(show_value(v, lang) for v in value)
    return str(value)


# ---------------------------------------------------------------- long-term memory (plugin)
# What remember / recall / forget say. A table of its own because code nodes never use memory:
# the bundler leaves it out of them.

MEMORY_MESSAGES: dict[str, dict[str, str]] = {
    "zh": {
        "added": "已记住：{text}",
        "duplicate": "这条已经记过了：{text}",
        "replaced": "已更新：{subject}从「{old}」改为「{text}」（旧值保留在历史里）",
        "rejected": "没有记住：{reason}",
        "recalled": "找到 {n} 条相关记忆",
        "recalled_none": "没有找到相关记忆",
        "forgot": "已删除 {n} 条记忆",
        "forgot_none": "没有找到要删除的记忆",
        "erase_failed": "已从记忆中删除 {n} 条，但存储里还留有旧副本没能删除（{detail}）。请稍后再执行一次 forget。",
        "listed": "共 {n} 条记忆",
        "bad_param": "参数 {param} 有误：{problem}",
        "full_items": "长期记忆已满：该用户已有 {n} 条（上限 {limit} 条）。请先用 forget 删除不再需要的记忆。",
        "full_bytes": "长期记忆已满：该用户已用 {used} 字节，这条需要 {need} 字节，上限 {limit} 字节。请先用 forget 删除不再需要的记忆。",
        "storage_full": "插件存储空间已满（Dify 对插件存储的总量限制），这条记忆没有写入。请删除一些旧记忆。",
        "storage_error": "存储暂时不可用，记忆未改变：{detail}",
        "busy": "这位用户的记忆正被其他调用同时修改，这次没有改动任何内容，请再试一次。",
        "corrupt": "该用户的记忆数据已损坏，无法读取。可用 forget（all=true）清空后重新开始。",
        "no_user": "无法确定当前用户：Dify 没有传入用户 ID，记忆未读取也未写入。",
        "r_empty": "内容为空",
        "r_short": "内容太短，不像一条值得长期记住的事实",
        "r_filler": "这是寒暄或附和，不值得长期记住",
        "r_question": "这是一个提问，不是关于用户的事实",
        "r_secret_password": "内容像是密码、口令或 PIN，出于隐私不存入长期记忆",
        "r_secret_code": "内容像是验证码，出于隐私不存入长期记忆",
        "r_secret_key": "内容像是 API 密钥、令牌或私钥，出于隐私不存入长期记忆",
        "r_secret_card": "内容像是银行卡号或卡片安全码，出于隐私不存入长期记忆",
        "r_secret_id": "内容像是身份证件号码，出于隐私不存入长期记忆",
        "p_type": "必须是 preference、profile 或 constraint 之一（也可写 偏好、资料、约束）",
        "p_too_long": "太长（{n} 个字符，上限 {limit}）",
        "p_empty": "不能为空",
        "p_k": "必须是 1 到 {limit} 之间的整数",
        "p_forget_target": "请给出 fact_id、subject 或 all=true 之一",
        "p_not_text": "必须是文本",
        "label_preference": "偏好",
        "label_profile": "资料",
        "label_constraint": "约束",
        "subject_sep": "：",
    },
    "en": {
        "added": "Remembered: {text}",
        "duplicate": "Already remembered: {text}",
        "replaced": "Updated {subject}: \"{old}\" -> \"{text}\" (the old value is kept in its history)",
        "rejected": "Not remembered: {reason}",
        "recalled": "Found {n} related memories",
        "recalled_none": "No related memories found",
        "forgot": "Deleted {n} memories",
        "forgot_none": "Nothing matched, nothing deleted",
        "erase_failed": "Removed {n} from memory, but an older stored copy could not be erased ({detail}). Run forget again later.",
        "listed": "{n} memories in total",
        "bad_param": "Parameter {param} is invalid: {problem}",
        "full_items": "Long-term memory is full: this user has {n} facts (limit {limit}). Use forget to delete facts that are no longer needed.",
        "full_bytes": "Long-term memory is full: this user uses {used} bytes, this fact needs {need} more, the limit is {limit} bytes. Use forget to delete facts that are no longer needed.",
        "storage_full": "The plugin's storage is full (Dify's cap on plugin storage); the fact was not written. Delete some old memories.",
        "storage_error": "Storage is unavailable right now; memory is unchanged: {detail}",
        "busy": "This user's memory is being changed by other calls at the same moment; nothing was changed. Please try again.",
        "corrupt": "This user's memory data is damaged and cannot be read. Use forget with all=true to start afresh.",
        "no_user": "Cannot tell who the user is: Dify passed no user id, so memory was neither read nor written.",
        "r_empty": "the text is empty",
        "r_short": "the text is too short to be a fact worth keeping",
        "r_filler": "this is small talk or an acknowledgement, not worth keeping",
        "r_question": "this is a question, not a fact about the user",
        "r_secret_password": "this looks like a password, passcode or PIN; it is not kept, for privacy",
        "r_secret_code": "this looks like a verification code; it is not kept, for privacy",
        "r_secret_key": "this looks like an API key, token or private key; it is not kept, for privacy",
        "r_secret_card": "this looks like a payment card number or its security code; it is not kept, for privacy",
        "r_secret_id": "this looks like an identity document number; it is not kept, for privacy",
        "p_type": "must be one of preference, profile or constraint",
        "p_too_long": "is too long ({n} characters, limit {limit})",
        "p_empty": "must not be empty",
        "p_k": "must be an integer from 1 to {limit}",
        "p_forget_target": "give one of fact_id, subject or all=true",
        "p_not_text": "must be text",
        "label_preference": "preference",
        "label_profile": "profile",
        "label_constraint": "constraint",
        "subject_sep": ": ",
    },
}


def memory_msg(key: str, lang: str = "zh", **values: object) -> str:
    """A text of the long-term memory tools in ``lang`` with ``values`` filled in."""
    return MEMORY_MESSAGES[norm_lang(lang)][key].format(**values)
