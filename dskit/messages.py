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
        "deny": "好的，请问需要修改哪一项？（{slots}）",
        "resume": "我们继续刚才的「{task}」。",
        "cancelled": "已取消「{task}」。",
        "cascade": "「{task}」依赖的信息已变化，已一并取消。",
        "evicted": "待办事项太多，已移除最早的「{task}」。",
        "reset": "好的，已清空当前所有事项。",
        "fallback": "抱歉，我没太理解您的意思，能换个说法再说一遍吗？",
        "handoff": "正在为您转接人工客服，请稍候。",
        "guard": "还需要先确认一项信息。",
        "nothing_open": "好的。还有什么可以帮您？",
        "rolled_back": "已将{slot}改回{value}。",
        "rolled_back_empty": "已清空{slot}。",
        "exec_failed": "抱歉，「{task}」办理失败：{detail}。{also}需要我再试一次吗？",
        "exec_failed_also": "「{task}」也未提交，重试时会一起提交。",
        "exec_ok": "「{task}」已办理完成。",
        "exec_ok_with": "「{task}」已一并提交。",
        "exec_dry": "（未配置 TASK_API_URL，未真正办理）将为您办理「{task}」：{values}。",
        "exec_dry_with": "并一起提交「{task}」：{values}。",
        "waiting": "「{task}」会在「{parent}」办理后一起提交。",
        "exec_unknown": "接口没有返回成功",
        "none": "无",
        "value_sep": "，",
        "kv": "{slot}：{value}",
        "yes": "是",
        "no": "否",
        "list_sep": "、",
        "broken_catalog": "系统配置有误，暂时无法办理，请稍后再试或联系人工客服。",
        "internal": "抱歉，系统出了点问题，请再说一遍。",
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
        "tool_internal": "插件内部错误（{name}），输入和状态都未改变。",
        "tool_no_user": "无法确定用户：请传入 user 参数",
    },
    "en": {
        "ack_values": "OK, noted {values}.",
        "ask_default": "What is your {slot}?",
        "confirm": "Please confirm: {task}, {values}. Shall I go ahead?",
        "confirm_resume": "Let's continue with {task}: {values}. Shall I go ahead now?",
        "confirm_none": "Shall I go ahead with {task}?",
        "deny": "OK, which one would you like to change? ({slots})",
        "resume": "Let's continue with {task}.",
        "cancelled": "{task} has been cancelled.",
        "cascade": "{task} depended on what changed, so it was cancelled too.",
        "evicted": "Too many open tasks: the oldest one, {task}, was dropped.",
        "reset": "OK, everything has been cleared.",
        "fallback": "Sorry, I did not quite get that. Could you say it another way?",
        "handoff": "I am transferring you to a human agent, please wait.",
        "guard": "One more thing needs confirming first.",
        "nothing_open": "OK. Anything else I can help with?",
        "rolled_back": "{slot} is back to {value}.",
        "rolled_back_empty": "{slot} has been cleared.",
        "exec_failed": "Sorry, {task} failed: {detail}. {also}Shall I try again?",
        "exec_failed_also": "{task} was not submitted either; it goes with the retry. ",
        "exec_ok": "{task} is done.",
        "exec_ok_with": " {task} was submitted with it.",
        "exec_dry": "(TASK_API_URL is not set, nothing was done) I would now do {task}: {values}.",
        "exec_dry_with": " Together with it: {task}: {values}.",
        "waiting": "{task} will be submitted together with {parent}, once {parent} is done.",
        "exec_unknown": "the API did not report success",
        "none": "none",
        "value_sep": ", ",
        "kv": "{slot}: {value}",
        "yes": "yes",
        "no": "no",
        "list_sep": ", ",
        "broken_catalog": "The assistant is misconfigured and cannot help with this right now; "
                          "please try again later or ask for a human agent.",
        "internal": "Sorry, something went wrong on our side. Could you say that again?",
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
        "tool_internal": "Internal plugin error ({name}); input and state are unchanged.",
        "tool_no_user": "cannot tell which user this is: pass the user parameter",
    },
}


def norm_lang(lang: object) -> str:
    """"en", "en_US", "en-GB" -> "en"; anything else -> "zh" (the default)."""
    return "en" if isinstance(lang, str) and lang.lower().startswith("en") else "zh"


def msg(key: str, lang: str = "zh", **values: object) -> str:
    """The text ``key`` in ``lang`` with ``values`` filled in."""
    table = MESSAGES[norm_lang(lang)]
    return table[key].format(**values)


def show_value(value: object, lang: str = "zh") -> str:
    """A slot value as an end user would read it: lists joined, booleans as 是/否."""
    if isinstance(value, bool):
        return msg("yes" if value else "no", lang)
    if isinstance(value, list):
        return msg("list_sep", lang).join(show_value(v, lang) for v in value)
    return str(value)
