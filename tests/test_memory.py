"""Long-term memory (dskit.memory) over a fake of Dify's plugin storage with the daemon's rules."""

from __future__ import annotations

import copy
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dskit.memory import (
    MEMORY_MAX_KEY_CHARS,
    MemoryDictKV,
    MemoryLimits,
    MemoryStore,
    memory_bm25,
    memory_fact_key,
    memory_index_key,
    memory_key_problem,
    memory_tokens,
    memory_worthiness,
)
from fakes.daemon import FakeKV, FakeStorage, daemon_key_problem, go_path_clean

SAFE_KEY = re.compile(r"^[A-Za-z0-9_:]+$")


def make_store(max_bytes: int = 1024 * 1024, limits: MemoryLimits | None = None) -> tuple[MemoryStore, FakeStorage]:
    storage = FakeStorage(max_bytes)
    ticks = iter(range(1_000, 10_000_000))
    return MemoryStore(FakeKV(storage), limits=limits, clock=lambda: next(ticks)), storage


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


# ------------------------------------------------------------------ keys


@pytest.mark.parametrize("user", ["..", "../../etc/passwd", "a/b", "a\\b", "x" * 300, "用户/..\\", "//", " "])
def test_hostile_user_ids_never_reach_a_key(user: str) -> None:
    store, storage = make_store()
    result = store.remember(user, "喜欢靠窗的座位")
    if not user.strip():
        assert not result["ok"] and result["param"] == "user"
    else:
        assert result["action"] == "added", result
        assert store.recall(user, "靠窗")["items"][0]["text"] == "喜欢靠窗的座位"
    assert storage.refused == []
    for _op, key in storage.log:
        assert SAFE_KEY.match(key), key
        assert len(key) <= MEMORY_MAX_KEY_CHARS
        assert not memory_key_problem(key)


def test_fact_key_rehashes_unsafe_ids() -> None:
    for bad in ["../x", "a/b", "\\", "z" * 300]:
        key = memory_fact_key("u", bad)
        assert SAFE_KEY.match(key) and len(key) <= MEMORY_MAX_KEY_CHARS
    assert memory_index_key("u") != memory_index_key("U")


@given(st.text(min_size=1, max_size=400))
@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
def test_any_user_id_gives_daemon_safe_keys(user: str) -> None:
    for key in (memory_index_key(user), memory_fact_key(user, "0123456789abcdef")):
        assert not daemon_key_problem(key, "set")
        assert SAFE_KEY.match(key)


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
     ("我的密码是 hunter2", "敏感"), ("卡号 6222 0212 3456 7890 123", "敏感")],
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
    store, storage = make_store(limits=MemoryLimits(max_bytes=900))
    n = 0
    while True:
        r = store.remember("u", f"第{n}条：喜欢的东西是{'很长的描述' * 5}{n}")
        if not r["ok"]:
            break
        n += 1
        assert n < 50
    assert r["error"] == "full" and "字节" in r["message"]
    assert store.usage("u")["bytes"] <= 900
    assert sum(len(v) for v in storage.data.values()) == store.usage("u")["bytes"]


def test_users_do_not_share_limits() -> None:
    store, _ = make_store(limits=MemoryLimits(max_items=1))
    assert store.remember("a", "喜欢猫")["action"] == "added"
    assert store.remember("b", "喜欢狗")["action"] == "added"
    assert store.remember("a", "喜欢鱼")["error"] == "full"


def test_daemon_storage_full_rolls_back() -> None:
    store, storage = make_store(max_bytes=700)
    store.remember("u", "喜欢猫")
    before = copy.deepcopy(storage.data)
    result = store.remember("u", "喜欢的长句子" * 40)
    assert result["ok"] is False and result["error"] == "storage"
    assert "存储空间已满" in result["message"]
    assert storage.data == before


def test_index_write_failure_undoes_fact_write() -> None:
    store, storage = make_store()
    store.remember("u", "座位：靠窗")
    before = copy.deepcopy(storage.data)
    storage.fail_next.append("exist")  # the first read fails: nothing is written
    assert store.remember("u", "座位：靠过道")["error"] == "storage"
    assert storage.data == before

    class FailSecondSet(FakeKV):
        sets = 0

        def set(self, key: str, val: bytes) -> None:
            FailSecondSet.sets += 1
            if FailSecondSet.sets == 2:
                raise Exception("save data failed: boom")
            super().set(key, val)

    store2 = MemoryStore(FailSecondSet(storage))
    result = store2.remember("u", "座位：靠过道")
    assert result["error"] == "storage" and "boom" in result["message"]
    assert storage.data == before  # the replaced fact record was restored
    result = store2.remember("u", "喜欢茶")  # third set and later succeed
    assert result["action"] == "added"


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


def test_forget_removes_fact_key_and_index_entry() -> None:
    store, storage = make_store()
    keep = store.remember("u", "喜欢猫")["fact"]["id"]
    gone = store.remember("u", "喜欢狗")["fact"]["id"]
    r = store.forget("u", fact_id=gone)
    assert r["deleted"] == [gone]
    assert memory_fact_key("u", gone) not in storage.data
    assert memory_fact_key("u", keep) in storage.data
    assert [i["id"] for i in store.recall("u", "", k=10)["items"]] == [keep]
    assert store.forget("u", fact_id=gone)["deleted"] == []
    assert store.forget("u", all=True)["deleted"] == [keep]
    assert storage.data == {}


def test_forget_by_subject_and_type() -> None:
    store, _ = make_store()
    store.remember("u", "饮食：清淡", type="preference")
    store.remember("u", "饮食：不吃花生", type="constraint")
    assert len(store.forget("u", subject="饮食", type="constraint")["deleted"]) == 1
    assert store.recall("u", "饮食")["items"][0]["type"] == "preference"
    assert store.forget("u")["param"] == "fact_id"


def test_corrupt_index_is_reported_and_forget_all_recovers() -> None:
    store, storage = make_store()
    store.remember("u", "喜欢猫")
    storage.data[memory_index_key("u")] = b"{not json"
    assert store.recall("u", "猫")["error"] == "corrupt_index"
    assert store.remember("u", "喜欢狗")["error"] == "corrupt_index"
    assert store.forget("u", all=True)["ok"] is True
    assert store.remember("u", "喜欢狗")["action"] == "added"


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
    assert storage.refused == []
