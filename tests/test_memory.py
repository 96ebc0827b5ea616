"""Long-term memory (dskit.context.memory) over a fake of Dify's plugin storage with the daemon's rules."""

from __future__ import annotations

import copy
import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dskit.context.memory import (
    MEMORY_KEY_PREFIX,
    MEMORY_LEGACY_PREFIX,
    MEMORY_MAX_KEY_CHARS,
    MemoryDictKV,
    MemoryLimits,
    MemoryStore,
    memory_bm25,
    memory_document,
    memory_key_problem,
    memory_tokens,
    memory_user_id,
    memory_user_tag,
    memory_worthiness,
)
from dskit.tooling.dslrun.plugin_daemon import FakeDaemonError, FakeKV, FakeStorage, daemon_key_problem, go_path_clean

SAFE_KEY = re.compile(r"^[A-Za-z0-9_:]+$")


def make_store(max_bytes: int = 1024 * 1024, limits: MemoryLimits | None = None) -> tuple[MemoryStore, FakeStorage]:
    storage = FakeStorage(max_bytes)
    ticks = iter(range(1_000, 10_000_000))
    return MemoryStore(FakeKV(storage), limits=limits, clock=lambda: next(ticks)), storage


def documents(storage: FakeStorage) -> dict[str, bytes]:
    """The stored documents (what holds user data), without the version markers and hint."""
    return {k: v for k, v in storage.data.items() if ":d:" in k}


def texts_in_storage(storage: FakeStorage, *texts: str) -> list[str]:
    """Which of ``texts`` still appear anywhere in storage."""
    return [t for t in texts if any(t.encode("utf-8") in v for v in storage.data.values())]


# ------------------------------------------------------------------ the fake itself


@pytest.mark.parametrize(
    "key, op, refused",
    [
        ("a", "set", False),
        ("../x", "get", True),
        ("a/../../x", "exist", True),
        ("a\\b", "del", True),
        ("a" * 256, "set", False),
        ("a" * 257, "set", True),
        ("a" * 300, "get", False),  # the daemon checks the length on save only
        ("", "get", True),
    ],
)
def test_fake_daemon_key_rules(key: str, op: str, refused: bool) -> None:
    assert bool(daemon_key_problem(key, op)) is refused


def test_go_path_clean_matches_go() -> None:
    assert go_path_clean("a/../b") == "b"
    assert go_path_clean("../../x") == "../../x"
    assert go_path_clean("/../etc") == "/etc"
    assert go_path_clean("a//b/./c/") == "a/b/c"
    assert go_path_clean("") == "."


def test_fake_storage_size_cap_counts_overwrite_difference() -> None:
    storage = FakeStorage(10)
    kv = FakeKV(storage)
    kv.set("k", b"12345678")
    kv.set("k", b"1234567890")  # +2 bytes: fits exactly
    with pytest.raises(Exception, match="allocated size"):
        kv.set("k2", b"x")
    with pytest.raises(Exception, match="load data failed"):
        kv.get("missing")


def test_fake_storage_fails_before_or_after_applying() -> None:
    """Failure injection at the daemon boundary: refused (nothing applied) or applied, answer lost."""
    storage = FakeStorage(fail=lambda op, key: True if key == "a" else "after" if key == "b" else False)
    kv = FakeKV(storage)
    with pytest.raises(FakeDaemonError, match="injected failure"):
        kv.set("a", b"1")
    with pytest.raises(FakeDaemonError, match="timeout"):
        kv.set("b", b"1")
    kv.set("c", b"1")
    assert storage.data == {"b": b"1", "c": b"1"}


def test_fake_storage_gate_sees_every_request_in_order() -> None:
    seen: list[tuple[str, str]] = []
    storage = FakeStorage(gate=lambda op, key: seen.append((op, key)))
    kv = FakeKV(storage)
    kv.set("k", b"v")
    assert kv.exist("k") and kv.get("k") == b"v"
    kv.delete("k")
    assert seen == [("set", "k"), ("exist", "k"), ("get", "k"), ("del", "k")] == storage.log


# ------------------------------------------------------------------ users and keys


def key_shape_refusals(storage: FakeStorage) -> list[tuple[str, str, str]]:
    """Requests the daemon refused because of the key itself (a missing key is not that)."""
    return [r for r in storage.refused if "traversal" in r[2] or "256" in r[2] or "required" in r[2]]


@pytest.mark.parametrize("user", ["..", "../../etc/passwd", "a/b", "a\\b", "x" * 300, "用户/..\\", "//", " "])
def test_hostile_user_ids_never_reach_a_key(user: str) -> None:
    store, storage = make_store()
    result = store.remember(user, "喜欢靠窗的座位")
    if not user.strip():
        assert not result["ok"] and result["param"] == "user"
    else:
        assert result["action"] == "added", result
        assert store.recall(user, "靠窗")["items"][0]["text"] == "喜欢靠窗的座位"
    assert key_shape_refusals(storage) == []
    for _op, key in storage.log:
        assert SAFE_KEY.match(key), key
        assert len(key) <= MEMORY_MAX_KEY_CHARS
        assert not memory_key_problem(key)
        assert user.strip() not in key.split(":") or user.strip() == ".."


@given(st.text(min_size=1, max_size=400), st.text(max_size=300), st.integers(0, 10**12))
@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
def test_any_user_id_gives_daemon_safe_keys(user: str, space: str, version: int) -> None:
    document = memory_document(MemoryDictKV(), user, space)
    for key in (document.doc_key(version), document.x_key(version), document.y_key(version), document.head_key()):
        assert not daemon_key_problem(key, "set")
        assert SAFE_KEY.match(key) and len(key) <= MEMORY_MAX_KEY_CHARS


@pytest.mark.parametrize("variant", [" alice ", "ａｌｉｃｅ", "ali\u200bce", "alice\n", "\u3000alice", "alice\ufeff"])
def test_one_user_has_one_bucket(variant: str) -> None:
    """The same id written with other spaces, widths or invisible characters is the same user."""
    store, _ = make_store()
    store.remember("alice", "喜欢靠窗的座位")
    assert memory_user_id(variant) == "alice"
    assert [i["text"] for i in store.recall(variant, "座位")["items"]] == ["喜欢靠窗的座位"]
    assert store.remember(variant, "喜欢靠窗的座位")["action"] == "duplicate"


def test_ids_that_differ_stay_apart() -> None:
    assert memory_user_tag("alice") != memory_user_tag("Alice")  # ids may be case-sensitive
    uuid = "8F3C2A10-1B2C-4D5E-8F90-A1B2C3D4E5F6"
    assert memory_user_tag(uuid) == memory_user_tag(uuid.lower())  # Dify's UUIDs are not
    assert memory_user_tag("alice", "bob") != memory_user_tag("bob")
    assert memory_user_tag("alice", "") == memory_user_tag("alice")
    assert memory_user_tag("alice bob") != memory_user_tag("alice", "bob")


@given(st.text(max_size=60))
@settings(max_examples=200)
def test_user_id_normalisation_is_stable(raw: str) -> None:
    once = memory_user_id(raw)
    assert memory_user_id(once) == once and once == once.strip()


def test_a_space_splits_one_users_memory_and_reaches_nobody_else() -> None:
    store, _ = make_store()
    store.remember("bob", "喜欢靠过道的座位")
    store.remember("alice", "喜欢靠窗的座位", space="crm-42")
    store.remember("alice", "喜欢无糖咖啡")
    assert [i["text"] for i in store.recall("alice", "", k=10, space="crm-42")["items"]] == ["喜欢靠窗的座位"]
    assert [i["text"] for i in store.recall("alice", "", k=10)["items"]] == ["喜欢无糖咖啡"]
    # a space named like another user is still alice's own
    assert store.recall("alice", "", k=10, space="bob")["items"] == []
    assert store.forget("alice", all=True, space="bob")["deleted"] == []
    assert [i["text"] for i in store.recall("bob", "", k=10)["items"]] == ["喜欢靠过道的座位"]


# ------------------------------------------------------------------ remember


def test_add_duplicate_replace_with_history() -> None:
    store, _ = make_store()
    first = store.remember("u", "座位：靠窗")
    assert first["action"] == "added" and first["fact"]["subject"] == "座位"
    dup = store.remember("u", "座位: 靠窗。")
    assert dup["action"] == "duplicate" and dup["fact"]["seen"] == 2
    new = store.remember("u", "靠过道", subject="座位")
    assert new["action"] == "replaced"
    assert new["replaced"]["text"] == "靠窗"
    assert [h["text"] for h in new["fact"]["history"]] == ["靠窗"]
    assert "靠窗" in new["message"] and "靠过道" in new["message"]
    facts = store.facts("u")["items"]
    assert len(facts) == 1 and facts[0]["text"] == "靠过道"


def test_same_subject_different_type_does_not_contradict() -> None:
    store, _ = make_store()
    store.remember("u", "饮食：清淡", type="preference")
    r = store.remember("u", "饮食：不吃花生", type="constraint")
    assert r["action"] == "added"
    assert store.usage("u")["items"] == 2


def test_history_is_bounded() -> None:
    store, _ = make_store(limits=MemoryLimits(max_history=3))
    for city in ["北京", "上海", "广州", "深圳", "成都"]:
        store.remember("u", f"城市：{city}", type="profile")
    fact = store.facts("u")["items"][0]
    assert fact["text"] == "成都"
    assert [h["text"] for h in fact["history"]] == ["上海", "广州", "深圳"]


@pytest.mark.parametrize(
    "text, reason_word",
    [("", "空"), ("嗯", "短"), ("好的", "寒暄"), ("谢谢！", "寒暄"), ("明天会下雨吗？", "提问"),
     ("我的密码是 hunter2", "密码"), ("卡号 6222 0212 3456 7890 123", "卡号")],
)
def test_not_worth_remembering(text: str, reason_word: str) -> None:
    store, storage = make_store()
    result = store.remember("u", text)
    if text:
        assert result["action"] == "rejected" and reason_word in result["message"]
    else:
        assert result["param"] == "text"
    assert storage.data == {}


def test_worthiness_keeps_real_facts() -> None:
    for text in ["我对花生过敏", "住在杭州西湖区", "prefers window seats", "预算 5000 左右"]:
        assert memory_worthiness(text) == "", text


@pytest.mark.parametrize(
    "kwargs, param",
    [({"text": "x" * 501}, "text"), ({"text": "喜欢猫", "type": "opinion"}, "type"),
     ({"text": "喜欢猫", "subject": "s" * 65}, "subject"), ({"text": 42}, "text"),
     ({"text": "喜欢猫", "source": "s" * 201}, "source")],
)
def test_bad_input_names_the_parameter_and_changes_nothing(kwargs: dict, param: str) -> None:
    store, storage = make_store()
    store.remember("u", "喜欢狗")
    before = copy.deepcopy(storage.data)
    text = kwargs.pop("text")
    result = store.remember("u", text, **kwargs)
    assert result["ok"] is False and result["param"] == param
    assert param in result["message"]
    assert storage.data == before


def test_english_messages() -> None:
    store, _ = make_store()
    assert store.remember("u", "likes green tea", lang="en")["message"].startswith("Remembered")
    assert "Parameter type" in store.remember("u", "x y", type="bogus", lang="en")["message"]


# ------------------------------------------------------------------ limits


def test_item_limit_message_and_nothing_written() -> None:
    store, storage = make_store(limits=MemoryLimits(max_items=3))
    for food in ["苹果", "香蕉", "橙子"]:
        assert store.remember("u", f"喜欢吃{food}")["action"] == "added"
    before = copy.deepcopy(storage.data)
    full = store.remember("u", "喜欢吃葡萄")
    assert full["ok"] is False and full["error"] == "full"
    assert "已满" in full["message"] and "3" in full["message"] and "forget" in full["message"]
    assert storage.data == before
    # replacing an existing fact still works when full
    assert store.remember("u", "水果：榴莲")["ok"] is False
    store.forget("u", fact_id=store.recall("u", "苹果")["items"][0]["id"])
    assert store.remember("u", "喜欢吃葡萄")["action"] == "added"


def test_byte_limit_message() -> None:
    store, storage = make_store(limits=MemoryLimits(max_bytes=2000))
    n = 0
    while True:
        r = store.remember("u", f"第{n}条：喜欢的东西是{'很长的描述' * 5}{n}")
        if not r["ok"]:
            break
        n += 1
        assert n < 50
    assert n >= 3 and r["error"] == "full" and "字节" in r["message"]
    assert store.usage("u")["bytes"] <= 2000
    assert [len(v) for v in documents(storage).values()] == [store.usage("u")["bytes"]]


def test_users_do_not_share_limits() -> None:
    store, _ = make_store(limits=MemoryLimits(max_items=1))
    assert store.remember("a", "喜欢猫")["action"] == "added"
    assert store.remember("b", "喜欢狗")["action"] == "added"
    assert store.remember("a", "喜欢鱼")["error"] == "full"


def test_daemon_storage_full_changes_nothing() -> None:
    store, storage = make_store(max_bytes=1500)
    store.remember("u", "喜欢猫")
    before = documents(storage)
    result = store.remember("u", "喜欢的长句子" * 80)
    assert result["ok"] is False and result["error"] == "storage"
    assert "存储空间已满" in result["message"]
    assert documents(storage) == before
    assert [i["text"] for i in store.recall("u", "", k=10)["items"]] == ["喜欢猫"]


@pytest.mark.parametrize("when", [True, "after"])
def test_a_failed_document_write_changes_nothing(when: object) -> None:
    """Refused, or applied with the answer lost (a timeout): either way the fact is not in memory."""
    store, storage = make_store()
    store.remember("u", "座位：靠窗")
    before = documents(storage)
    storage.fail = lambda op, key: when if op == "set" and ":d:" in key else False
    result = store.remember("u", "座位：靠过道")
    assert result["error"] == "storage" and "injected" in result["message"]
    storage.fail = None
    assert documents(storage) == before
    assert store.recall("u", "座位")["text"] == "[偏好] 座位：靠窗"
    assert store.remember("u", "喜欢茶")["action"] == "added"


def test_a_failed_read_writes_nothing() -> None:
    store, storage = make_store()
    store.remember("u", "座位：靠窗")
    before = copy.deepcopy(storage.data)
    storage.fail = lambda op, key: op in ("get", "exist")
    assert store.remember("u", "座位：靠过道")["error"] == "storage"
    assert storage.data == before


# ------------------------------------------------------------------ recall


def test_recall_ranks_by_bigram_bm25() -> None:
    store, _ = make_store()
    store.remember("u", "喜欢靠窗的座位")
    store.remember("u", "对花生过敏", type="constraint")
    store.remember("u", "住在杭州", type="profile")
    store.remember("u", "预算五千元左右")
    top = store.recall("u", "订机票要什么座位", k=2)
    assert top["items"][0]["text"] == "喜欢靠窗的座位"
    assert store.recall("u", "有什么过敏", k=1)["items"][0]["type"] == "constraint"
    assert store.recall("u", "杭州天气", type="profile")["items"][0]["text"] == "住在杭州"
    assert store.recall("u", "火星", k=3)["items"] == []
    assert "[约束] 对花生过敏" in store.recall("u", "花生")["text"]


def test_empty_query_returns_most_recent() -> None:
    store, _ = make_store()
    for t in ["喜欢猫", "喜欢狗", "喜欢鸟"]:
        store.remember("u", t)
    assert [i["text"] for i in store.recall("u", "", k=2)["items"]] == ["喜欢鸟", "喜欢狗"]


@pytest.mark.parametrize("k", [0, -1, 51, "abc", 2.5, True])
def test_recall_bad_k(k: object) -> None:
    store, _ = make_store()
    r = store.recall("u", "x", k=k)  # type: ignore[arg-type]
    assert r["ok"] is False and r["param"] == "k"


def test_user_a_never_recalls_user_b() -> None:
    store, _ = make_store()
    store.remember("alice", "喜欢靠窗的座位")
    store.remember("bob", "喜欢靠过道的座位")
    texts = [i["text"] for i in store.recall("alice", "座位", k=10)["items"]]
    assert texts == ["喜欢靠窗的座位"]


@given(
    facts=st.lists(
        st.tuples(st.sampled_from(["a", "b", "../a", "a/", "A"]), st.text(min_size=2, max_size=30)),
        max_size=12,
    ),
    query=st.text(max_size=20),
)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_isolation_property(facts: list[tuple[str, str]], query: str) -> None:
    store, _ = make_store()
    owned: dict[str, set[str]] = {}
    for user, text in facts:
        r = store.remember(user, text)
        if r.get("fact"):
            owned.setdefault(user, set()).add(r["fact"]["id"])
    for user in {"a", "b", "../a", "a/", "A"}:
        got = {i["id"] for i in store.recall(user, query, k=50)["items"]}
        assert got <= owned.get(user, set())


def test_tokens_and_bm25() -> None:
    assert memory_tokens("靠窗座位") == ["靠窗", "窗座", "座位"]
    assert memory_tokens("喜欢Python编程!") == ["喜欢", "python", "编程"]
    assert memory_tokens("猫") == ["猫"]
    scores = memory_bm25("座位", ["靠窗座位", "花生过敏", ""])
    assert scores[0] > 0 and scores[1] == 0 and scores[2] == 0
    assert memory_bm25("", ["x"]) == [0.0]


# ------------------------------------------------------------------ forget


def test_forget_leaves_no_copy_behind() -> None:
    store, storage = make_store()
    keep = store.remember("u", "喜欢猫")["fact"]["id"]
    gone = store.remember("u", "喜欢狗")["fact"]["id"]
    r = store.forget("u", fact_id=gone)
    assert r == {"ok": True, "deleted": [gone], "message": "已删除 1 条记忆"}
    assert texts_in_storage(storage, "喜欢狗", "喜欢猫") == ["喜欢猫"]
    assert len(documents(storage)) == 1  # only the current document holds data
    assert [i["id"] for i in store.recall("u", "", k=10)["items"]] == [keep]
    assert store.forget("u", fact_id=gone)["deleted"] == []
    assert store.forget("u", all=True)["deleted"] == [keep]
    assert texts_in_storage(storage, "喜欢狗", "喜欢猫") == []


def test_a_failed_delete_says_it_failed_and_forget_again_finishes() -> None:
    store, storage = make_store()
    store.remember("u", "喜欢猫")
    gone = store.remember("u", "喜欢狗")["fact"]["id"]
    storage.fail = lambda op, key: op == "del"
    r = store.forget("u", fact_id=gone)
    assert r["ok"] is False and r["error"] == "erase_incomplete" and r["deleted"] == [gone]
    assert "旧副本" in r["message"] and "forget" in r["message"]
    assert store.recall("u", "狗")["items"] == []  # out of memory already
    assert texts_in_storage(storage, "喜欢狗") == ["喜欢狗"]  # but a copy is still stored: said so
    storage.fail = None
    again = store.forget("u", fact_id=gone)
    assert again["ok"] is True and texts_in_storage(storage, "喜欢狗") == []


def test_forget_by_subject_and_type() -> None:
    store, _ = make_store()
    store.remember("u", "饮食：清淡", type="preference")
    store.remember("u", "饮食：不吃花生", type="constraint")
    assert len(store.forget("u", subject="饮食", type="constraint")["deleted"]) == 1
    assert store.recall("u", "饮食")["items"][0]["type"] == "preference"
    assert store.forget("u")["param"] == "fact_id"


def test_corrupt_document_is_reported_and_forget_all_recovers() -> None:
    store, storage = make_store()
    store.remember("u", "喜欢猫")
    (key,) = documents(storage)
    storage.data[key] = b"{not json"
    assert store.recall("u", "猫")["error"] == "corrupt"
    assert store.remember("u", "喜欢狗")["error"] == "corrupt"
    assert store.forget("u", all=True)["ok"] is True
    assert store.remember("u", "喜欢狗")["action"] == "added"
    assert list(documents(storage).values()) != [b"{not json"]


def test_facts_kept_by_0_1_0_are_read_then_moved() -> None:
    """0.1.0 kept an index key and one key per fact: an upgrade finds them and erases the old keys."""
    store, storage = make_store()
    tag = memory_user_tag("u")
    storage.data[f"{MEMORY_LEGACY_PREFIX}:{tag}:idx"] = json.dumps({"v": 1, "items": [
        {"id": "0123456789abcdef", "type": "preference", "subject": "座位", "text": "靠窗", "updated": 5, "size": 9},
    ]}, ensure_ascii=False).encode()
    storage.data[f"{MEMORY_LEGACY_PREFIX}:{tag}:f:0123456789abcdef"] = json.dumps(
        {"v": 1, "id": "0123456789abcdef", "type": "preference", "subject": "座位", "text": "靠窗",
         "created": 1, "updated": 5, "seen": 3, "source": "s", "history": [{"text": "靠过道"}]},
        ensure_ascii=False).encode()
    assert store.recall("u", "座位")["text"] == "[偏好] 座位：靠窗"
    assert store.remember("u", "喜欢茶")["action"] == "added"
    assert not any(k.startswith(MEMORY_LEGACY_PREFIX) for k in storage.data)
    fact = next(f for f in store.facts("u")["items"] if f["subject"] == "座位")
    assert fact["seen"] == 3 and fact["history"] == [{"text": "靠过道"}]
    assert all(k.startswith(MEMORY_KEY_PREFIX) for k in storage.data)


def test_dict_kv_behaves_like_dify() -> None:
    kv = MemoryDictKV()
    with pytest.raises(Exception):
        kv.get("missing")
    store = MemoryStore(kv)
    assert store.remember("u", "喜欢猫")["action"] == "added"
    assert store.recall("u", "猫")["items"]


# ------------------------------------------------------------------ never raises


junk = st.one_of(st.none(), st.integers(), st.floats(allow_nan=True), st.text(max_size=600),
                 st.lists(st.text(max_size=5), max_size=3), st.booleans(), st.binary(max_size=10))


@given(user=junk, text=junk, kind=junk, subject=junk, query=junk, k=junk)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_public_methods_never_raise(user, text, kind, subject, query, k) -> None:
    store, storage = make_store()
    for result in (
        store.remember(user, text, type=kind, subject=subject, source=query),
        store.recall(user, query, k=k, type=kind),
        store.forget(user, fact_id=text, subject=subject, type=kind, all=bool(k)),
        store.facts(user),
    ):
        assert isinstance(result, dict) and isinstance(result["message"], str) and "ok" in result
    assert key_shape_refusals(storage) == []
