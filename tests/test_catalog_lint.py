"""A catalog that loads can still make a small model copy values or a reply show raw names:
``dskit validate`` warns, the shipped catalogs have nothing to warn about, and replies always name a
slot readably."""

from __future__ import annotations

import json

from dskit.catalog.catalog import load_catalog
from dskit.catalog.catalog_lint import catalog_warnings, example_in
from dskit.tooling.cli import main as cli_main
from enginekit import Dialogue, cmd, start


def _catalog(**slots) -> dict:
    return {"version": 1, "tasks": {"order": {"label": "下单", "slots": slots}}}


def test_example_values_in_descriptions_are_flagged():
    assert example_in("用餐日期，保留用户说法，如 周五、下周六、2026-01-28").startswith("如 周五")
    assert example_in("24小时制 HH:MM，晚上8点 -> 20:00") == "-> 20:00"
    assert example_in("the city, e.g. Paris") == "e.g. Paris"
    assert example_in("账单月份，保留用户的原话；用户没说就不填（查本月）") == ""
    warnings = catalog_warnings(_catalog(month={"label": "月份", "description": "如 2026-01"}))
    assert warnings == ["$.tasks.order.slots.month.description: holds an example value ('如 2026-01'); a small "
                        "model copies examples into commands - describe the value instead"]


def test_a_slot_without_a_display_name_is_flagged_and_shown_by_its_description():
    data = _catalog(plan={"type": "string", "required": True}, need_router={"type": "boolean", "description": "是否需要路由器"})
    warnings = catalog_warnings(data)
    assert len(warnings) == 2 and "replies would show the raw name 'plan'" in warnings[0]
    assert all("a user can name this slot" in w and "only by its name" in w for w in warnings)  # what it costs
    assert "raw name" not in warnings[1]  # need_router is shown by its short description
    spec = load_catalog(data).tasks["order"]
    assert spec.slots["need_router"].display == "是否需要路由器" and spec.slots["plan"].display == "plan"
    d = Dialogue(data)
    d.say(start("order", plan="千兆", need_router=True))
    assert "是否需要路由器：是" in d.decision["question"] and "need_router" not in d.decision["question"]


def test_acting_without_confirmation_is_flagged_unless_read_only():
    data = {"version": 1, "tasks": {"pay": {"confirm": False, "slots": {}},
                                    "balance": {"read_only": True, "confirm": False, "slots": {}}}}
    assert catalog_warnings(data) == ["$.tasks.pay.confirm: false for a task that is not read_only - it runs as "
                                      "soon as it is complete, without the user seeing its values (set read_only "
                                      "for an enquiry)"]


def test_confirmation_is_the_default_for_a_task_that_acts():
    catalog = load_catalog({"version": 1, "tasks": {"pay": {"slots": {}}, "look": {"read_only": True, "slots": {}}}})
    assert catalog.tasks["pay"].confirm and not catalog.tasks["look"].confirm
    d = Dialogue({"version": 1, "tasks": {"pay": {"label": "付款", "slots": {"amount": {"type": "integer", "label": "金额"}}}}})
    d.say(start("pay", amount=30))
    assert d.decision["next_action"] == "confirm" and d.decision["question"] == "请确认：付款，金额：30。确认办理吗？"
    d.say(cmd("confirm"))
    assert d.decision["next_action"] == "execute"


def test_validate_prints_warnings_and_still_passes(tmp_path, capsys):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(_catalog(day={"label": "日期", "description": "比如 明天"})), encoding="utf-8")
    assert cli_main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "ok, 1 warning(s)" in out and "warning: $.tasks.order.slots.day.description" in out
