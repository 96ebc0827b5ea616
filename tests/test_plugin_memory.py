"""remember / recall / forget through the SDK, with the fake daemon's storage rules and size cap."""

from __future__ import annotations

import dify_plugin  # noqa: F401  (first: gevent monkey-patching)

import copy
import json
import re

import pytest

from dskit.memory import memory_fact_key, memory_index_key
from fakes.daemon import FakeDaemon, daemon_key_problem
from fakes.sdk import PLUGIN_ROOT, assert_consistent, invoke


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
    assert daemon.storage.data == {}  # fact key and (now empty) index both removed
    assert set(daemon.calls) == {"storage"}


def test_user_a_never_recalls_user_b(daemon: FakeDaemon) -> None:
    remember("喜欢靠窗的座位", user_id="alice")
    remember("喜欢靠过道的座位", user_id="bob")
    assert [i["text"] for i in recall("座位", user_id="alice").variables["items"]] == ["喜欢靠窗的座位"]
    assert [i["text"] for i in recall("座位", user_id="bob").variables["items"]] == ["喜欢靠过道的座位"]
    # the explicit user parameter overrides the caller (e.g. a workflow passing sys.user_id)
    assert recall("座位", user_id="alice", user="bob").variables["items"][0]["text"] == "喜欢靠过道的座位"
    assert recall("座位", user_id="carol").variables["count"] == 0


@pytest.mark.parametrize("user", ["..", "../../other-tenant/x", "a/b", "a\\b", "x" * 300, "//", "用户/../"])
def test_hostile_user_ids_are_hashed_into_safe_keys(daemon: FakeDaemon, user: str) -> None:
    out = remember("我对花生过敏", user=user, type="constraint")
    assert out.variables["ok"] is True, out.text
    assert recall("花生", user=user).variables["count"] == 1
    assert recall("花生", user="..x").variables["count"] == 0
    assert daemon.storage.refused == []
    for _op, key in daemon.storage.log:
        assert re.fullmatch(r"[A-Za-z0-9_:]+", key) and len(key) <= 256
        assert not daemon_key_problem(key, "set")
    assert user not in json.dumps(list(daemon.storage.data)) or user in ("..",)  # never the raw id


def test_the_fake_daemon_refuses_raw_traversal_keys(daemon: FakeDaemon) -> None:
    """The fake is strict where the real daemon is: a naive key would have been refused."""
    with pytest.raises(Exception, match="path traversal"):
        list(daemon.invoke("storage", {"opt": "set", "key": "mem/../../x", "value": "00"}))
    with pytest.raises(Exception, match="256"):
        list(daemon.invoke("storage", {"opt": "set", "key": "k" * 300, "value": "00"}))


def test_no_user_at_all_is_a_clear_error(daemon: FakeDaemon) -> None:
    out = remember("喜欢猫", user_id="")
    assert out.variables["ok"] is False and out.variables["error_param"] == "user"
    assert daemon.storage.data == {}


def test_batch_of_candidates(daemon: FakeDaemon) -> None:
    batch = json.dumps(["好的", "住在杭州", {"text": "不吃辣", "type": "constraint", "subject": "饮食"},
                        {"text": "我的密码是123"}], ensure_ascii=False)
    out = remember(batch)
    v = out.variables
    assert (v["added"], v["rejected"]) == (2, 2)
    assert len(out.text.splitlines()) == 4
    assert recall("辣", type="constraint").variables["items"][0]["subject"] == "饮食"


@pytest.mark.parametrize(
    "params, param_name",
    [
        ({"text": "[broken json"}, "text"),
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
    assert daemon.storage.data == before


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
    assert everything.variables["count"] == 1 and daemon.storage.data == {}


def test_forget_removes_the_index_entry_even_if_the_fact_delete_fails(daemon: FakeDaemon) -> None:
    keep = remember("喜欢猫").variables["saved"][0]["id"]
    drop = remember("喜欢狗").variables["saved"][0]["id"]
    daemon.storage.fail_next.append("del")
    out = invoke("forget", {"fact_id": drop}, user_id="alice")
    assert out.variables["deleted"] == [drop]
    assert [i["id"] for i in recall("", top_k=10).variables["items"]] == [keep]
    assert memory_index_key("alice") in daemon.storage.data


def test_user_limit_message_when_full(daemon: FakeDaemon, monkeypatch: pytest.MonkeyPatch) -> None:
    from dskit.memory import MemoryLimits, MemoryStore

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
    before = copy.deepcopy(small.storage.data)
    out = remember("喜欢" + "很长的东西" * 60)
    assert out.variables["ok"] is False and "存储空间已满" in out.text
    assert small.storage.data == before


def test_storage_permission_is_required(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text((PLUGIN_ROOT / "manifest.yaml").read_text(encoding="utf-8")
                        .replace("    storage:\n      enabled: true", "    storage:\n      enabled: false"),
                        encoding="utf-8")
    FakeDaemon(manifest=manifest).patch(monkeypatch)
    out = remember("喜欢猫")
    assert out.variables["ok"] is False and "permission denied" in out.text


def test_fact_keys_are_what_the_engine_says(daemon: FakeDaemon) -> None:
    fact_id = remember("喜欢猫").variables["saved"][0]["id"]
    assert set(daemon.storage.data) == {memory_index_key("alice"), memory_fact_key("alice", fact_id)}
