"""remember / recall / forget through the SDK, with the fake daemon's storage rules and size cap.

Whose memory a call touches comes from the runtime (``ToolInvokeRequest.user_id``, which the SDK
puts in ``self.runtime.user_id``; Dify's tool node passes the run's user, api/core/workflow/nodes/
tool/tool_node.py ``user_id=self.user_id``), never from a parameter a model can fill.
"""

from __future__ import annotations

import dify_plugin  # noqa: F401  (first: gevent monkey-patching)

import copy
import json
import re

import pytest

from dskit.context.memory import memory_document
from dskit.tooling.dslrun.plugin_daemon import FakeDaemon, daemon_key_problem
from dskit.tooling.dslrun.plugin_tools import PLUGIN_ROOT, invoke, registration
from fakes.sdk import assert_consistent


@pytest.fixture()
def daemon(monkeypatch: pytest.MonkeyPatch) -> FakeDaemon:
    return FakeDaemon(manifest=PLUGIN_ROOT / "manifest.yaml").patch(monkeypatch)


def remember(text, user_id="alice", **params):
    return invoke("remember", {"text": text, **params}, user_id=user_id)


def recall(query, user_id="alice", **params):
    return invoke("recall", {"query": query, **params}, user_id=user_id)


def test_remember_recall_forget_round_trip(daemon: FakeDaemon) -> None:
    out = remember("座位：靠窗")
    assert_consistent("remember", out)
    assert out.variables["ok"] is True and out.variables["added"] == 1
    fact_id = out.variables["saved"][0]["id"]
    assert "已记住" in out.text

    replaced = remember("靠过道", subject="座位")
    assert replaced.variables["replaced"] == 1
    assert replaced.variables["saved"][0]["history"][0]["text"] == "靠窗"

    found = recall("订票时选什么座位")
    assert_consistent("recall", found)
    assert found.variables["count"] == 1 and found.variables["memories"] == "[偏好] 座位：靠过道"
    assert found.text == "[偏好] 座位：靠过道"

    gone = invoke("forget", {"fact_id": fact_id}, user_id="alice")
    assert_consistent("forget", gone)
    assert gone.variables["deleted"] == [fact_id]
    assert recall("座位").variables["count"] == 0
    assert stored_texts(daemon, "靠窗", "靠过道") == []  # no copy of the fact is left anywhere
    assert set(daemon.calls) == {"storage"}


def stored_texts(daemon: FakeDaemon, *texts: str) -> list[str]:
    return [t for t in texts if any(t.encode("utf-8") in v for v in daemon.storage.data.values())]


def documents(daemon: FakeDaemon) -> dict[str, bytes]:
    return {k: v for k, v in daemon.storage.data.items() if ":d:" in k}


def test_user_a_never_recalls_user_b(daemon: FakeDaemon) -> None:
    remember("喜欢靠窗的座位", user_id="alice")
    remember("喜欢靠过道的座位", user_id="bob")
    assert [i["text"] for i in recall("座位", user_id="alice").variables["items"]] == ["喜欢靠窗的座位"]
    assert [i["text"] for i in recall("座位", user_id="bob").variables["items"]] == ["喜欢靠过道的座位"]
    assert recall("座位", user_id="carol").variables["count"] == 0


def test_the_tools_declare_no_user_parameter() -> None:
    """Loaded through the SDK's models: nothing a model fills names a user; the space is the builder's."""
    _config, _cls, tools = registration().tools_mapping["dialogue_state_kit"]
    for name in ("remember", "recall", "forget"):
        config = tools[name][0]
        params = {p.name: p for p in config.parameters}
        assert "user" not in params
        assert params["memory_space"].form.value == "form"
        llm_filled = {n for n, p in params.items() if p.form.value == "llm"}
        assert not any("user" in n or "space" in n for n in llm_filled), llm_filled


def test_an_agent_that_names_another_user_gets_nothing_and_erases_nothing(daemon: FakeDaemon) -> None:
    """Mallory asks the Agent to "recall / forget everything of user bob": the model passes bob's id."""
    bob_ids = {remember("喜欢靠过道的座位", user_id="bob").variables["saved"][0]["id"],
               remember("对花生过敏", user_id="bob", type="constraint").variables["saved"][0]["id"]}
    bob_before = documents(daemon)
    for hostile in ({"user": "bob"}, {"user_id": "bob"}, {"memory_space": "bob"}, {"user": "bob", "memory_space": "../bob"}):
        found = invoke("recall", {"query": "", "top_k": 50, **hostile}, user_id="mallory")
        assert found.variables["ok"] is True and not bob_ids & {i["id"] for i in found.variables["items"]}, hostile
        gone = invoke("forget", {"all": True, **hostile}, user_id="mallory")
        assert gone.variables["ok"] is True and not bob_ids & set(gone.variables["deleted"]), hostile
        added = invoke("remember", {"text": "喜欢红色", **hostile}, user_id="mallory")
        assert added.variables["added"] == 1, hostile
    assert {k: v for k, v in documents(daemon).items() if k in bob_before} == bob_before
    assert sorted(i["text"] for i in recall("", user_id="bob", top_k=10).variables["items"]) == ["喜欢靠过道的座位", "对花生过敏"]


def test_a_memory_space_stays_inside_its_users_memory(daemon: FakeDaemon) -> None:
    remember("喜欢靠窗的座位", user_id="alice", memory_space="客户 42")
    remember("喜欢靠过道的座位", user_id="alice")
    assert recall("座位", user_id="alice", memory_space="客户 42").variables["memories"] == "[偏好] 喜欢靠窗的座位"
    assert recall("座位", user_id="alice", memory_space="客户\u300042").variables["count"] == 1  # same space
    assert recall("座位", user_id="alice").variables["memories"] == "[偏好] 喜欢靠过道的座位"
    assert recall("座位", user_id="bob", memory_space="客户 42").variables["count"] == 0


@pytest.mark.parametrize("variant", [" alice", "ａｌｉｃｅ", "ali\u200bce", "alice\t"])
def test_one_runtime_user_one_bucket(daemon: FakeDaemon, variant: str) -> None:
    remember("喜欢靠窗的座位", user_id="alice")
    assert recall("座位", user_id=variant).variables["memories"] == "[偏好] 喜欢靠窗的座位"


@pytest.mark.parametrize("user", ["..", "../../other-tenant/x", "a/b", "a\\b", "x" * 300, "//", "用户/../"])
def test_hostile_runtime_ids_are_hashed_into_safe_keys(daemon: FakeDaemon, user: str) -> None:
    out = remember("我对花生过敏", user_id=user, type="constraint")
    assert out.variables["ok"] is True, out.text
    assert recall("花生", user_id=user).variables["count"] == 1
    assert recall("花生", user_id="..x").variables["count"] == 0
    assert not [r for r in daemon.storage.refused if "traversal" in r[2] or "256" in r[2]]
    for _op, key in daemon.storage.log:
        assert re.fullmatch(r"[A-Za-z0-9_:]+", key) and len(key) <= 256
        assert not daemon_key_problem(key, "set")


def test_the_fake_daemon_refuses_raw_traversal_keys(daemon: FakeDaemon) -> None:
    """The fake is strict where the real daemon is: a naive key would have been refused."""
    with pytest.raises(Exception, match="path traversal"):
        list(daemon.invoke("storage", {"opt": "set", "key": "mem/../../x", "value": "00"}))
    with pytest.raises(Exception, match="256"):
        list(daemon.invoke("storage", {"opt": "set", "key": "k" * 300, "value": "00"}))


@pytest.mark.parametrize("user_id", ["", "  ", "\u200b"])
def test_no_runtime_user_is_refused_not_shared(daemon: FakeDaemon, user_id: str) -> None:
    """No user from Dify: no anonymous bucket that every such call would share."""
    for tool, params in (("remember", {"text": "喜欢猫"}), ("recall", {"query": "猫"}), ("forget", {"all": True})):
        out = invoke(tool, params, user_id=user_id)
        assert out.variables["ok"] is False and "用户" in out.variables["error"], out.text
    assert daemon.storage.data == {}


def test_batch_of_candidates(daemon: FakeDaemon) -> None:
    batch = json.dumps(["好的", "住在杭州", {"text": "不吃辣", "type": "constraint", "subject": "饮食"},
                        {"text": "我的密码是123"}, {"text": "6222 0212 3456 7890", "subject": "卡号"},
                        "API_KEY=AKIAIOSFODNN7EXAMPLE"], ensure_ascii=False)
    out = remember(batch)
    v = out.variables
    assert (v["added"], v["rejected"]) == (2, 4)
    lines = out.text.splitlines()
    assert len(lines) == 6
    assert "密码" in lines[3] and "银行卡号" in lines[4] and "API 密钥" in lines[5]
    assert stored_texts(daemon, "123", "6222", "AKIA") == []
    assert recall("辣", type="constraint").variables["items"][0]["subject"] == "饮食"


@pytest.mark.parametrize(
    "params, param_name",
    [
        ({"text": '["喜欢猫", "喜欢'}, "text"),  # a batch cut short: refused, never stored as one fact
        ({"text": '[{"text": "喜欢猫"'}, "text"),
        ({"text": json.dumps(["喜欢猫", {"text": "x" * 600}])}, "text"),
        ({"text": json.dumps(["喜欢猫", {"text": "喜欢狗", "type": "mood"}])}, "type"),
        ({"text": "喜欢猫", "type": "opinion"}, "type"),
        ({"text": "x" * 30_000}, "text"),
        ({"text": ""}, "text"),
        ({"text": "喜欢猫", "subject": "s" * 300}, "subject"),
        ({"text": json.dumps(["a b"] * 21)}, "text"),
    ],
)
def test_bad_remember_input_changes_nothing(daemon: FakeDaemon, params: dict, param_name: str) -> None:
    remember("喜欢兔子")
    before = copy.deepcopy(daemon.storage.data)
    out = invoke("remember", params, user_id="alice")
    assert out.variables["ok"] is False and out.variables["error_param"] == param_name, out.text
    assert param_name in out.text and "Traceback" not in out.text
    assert daemon.storage.data == before  # not even a version marker


@pytest.mark.parametrize("params, param_name", [({"top_k": 0}, "top_k"), ({"top_k": 2.5}, "top_k"),
                                                ({"top_k": "many"}, "top_k"), ({"type": "mood"}, "type"),
                                                ({"query": "q" * 3000}, "query")])
def test_bad_recall_input(daemon: FakeDaemon, params: dict, param_name: str) -> None:
    out = invoke("recall", {"query": "猫", **params}, user_id="alice")
    assert out.variables["ok"] is False and out.variables["error_param"] == param_name
    assert out.variables["items"] == [] and out.variables["memories"] == ""


def test_forget_needs_a_target(daemon: FakeDaemon) -> None:
    remember("喜欢猫")
    before = copy.deepcopy(daemon.storage.data)
    out = invoke("forget", {}, user_id="alice")
    assert out.variables["ok"] is False and "fact_id" in out.text
    assert daemon.storage.data == before
    everything = invoke("forget", {"all": True}, user_id="alice")
    assert everything.variables["count"] == 1 and stored_texts(daemon, "喜欢猫") == []


def test_a_failed_delete_is_reported_as_failed(daemon: FakeDaemon) -> None:
    keep = remember("喜欢猫").variables["saved"][0]["id"]
    drop = remember("喜欢狗").variables["saved"][0]["id"]
    daemon.storage.fail = lambda op, key: op == "del"
    out = invoke("forget", {"fact_id": drop}, user_id="alice")
    assert_consistent("forget", out)
    assert out.variables["ok"] is False and out.variables["deleted"] == [drop]
    assert "没能删除" in out.variables["error"] and "forget" in out.text
    assert [i["id"] for i in recall("", top_k=10).variables["items"]] == [keep]
    daemon.storage.fail = None
    again = invoke("forget", {"fact_id": drop}, user_id="alice")
    assert again.variables["ok"] is True and stored_texts(daemon, "喜欢狗") == []


def test_user_limit_message_when_full(daemon: FakeDaemon, monkeypatch: pytest.MonkeyPatch) -> None:
    from dskit.context.memory import MemoryLimits, MemoryStore

    monkeypatch.setattr(MemoryStore, "__init__", _limited_init(MemoryStore.__init__, MemoryLimits(max_items=2)))
    remember("喜欢猫")
    remember("喜欢狗")
    before = copy.deepcopy(daemon.storage.data)
    out = remember("喜欢鸟")
    assert out.variables["ok"] is False and "已满" in out.text and "forget" in out.text
    assert daemon.storage.data == before
    en = remember("likes birds", lang="en")
    assert "memory is full" in en.text


def _limited_init(original, limits):
    def init(self, kv, *, limits_=limits, clock=None, **kwargs):
        original(self, kv, limits=limits_, clock=clock)
    return init


def test_plugin_storage_cap_from_the_manifest(monkeypatch: pytest.MonkeyPatch) -> None:
    small = FakeDaemon(manifest=PLUGIN_ROOT / "manifest.yaml", storage_size=600).patch(monkeypatch)
    assert remember("喜欢猫").variables["ok"] is True
    before = documents(small)
    out = remember("喜欢" + "很长的东西" * 60)
    assert out.variables["ok"] is False and "存储空间已满" in out.text
    assert documents(small) == before  # the claimed version stays an empty hole
    assert recall("").variables["memories"] == "[偏好] 喜欢猫"


def test_storage_permission_is_required(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text((PLUGIN_ROOT / "manifest.yaml").read_text(encoding="utf-8")
                        .replace("    storage:\n      enabled: true", "    storage:\n      enabled: false"),
                        encoding="utf-8")
    FakeDaemon(manifest=manifest).patch(monkeypatch)
    out = remember("喜欢猫")
    assert out.variables["ok"] is False and "permission denied" in out.text


def test_keys_are_what_the_engine_says(daemon: FakeDaemon) -> None:
    remember("喜欢猫")
    document = memory_document(None, "alice")  # type: ignore[arg-type]
    assert documents(daemon) == {document.doc_key(1): documents(daemon)[document.doc_key(1)]}
    assert all(k.startswith(document.base + ":") for k in daemon.storage.data)
