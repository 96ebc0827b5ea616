"""Concurrent use of one user's long-term memory over the fake daemon storage: what gets lost.

Definitions (independent of how the store lays out its keys, so they measure any design):

* **lost** — a ``remember`` reported ``added`` (and no ``forget`` reported deleting it), yet the
  fact is not in ``recall`` once every call has finished;
* **orphan** — after a final ``forget all`` (nothing else running), a stored value still contains
  the text of one of the facts: data the user can no longer see or erase, outside the per-user caps;
* **resurrection** — a fact that existed before a ``forget all`` and that the ``forget`` reported
  deleted is back in ``recall`` after the ``forget`` and the ``remember`` racing it have finished;
* **silent failed delete** — a ``forget`` that said ``ok`` while a copy of the fact stays in storage.

Each caller gets its own :class:`MemoryStore` (as every tool invocation does) over the same storage.
The results count events; nothing here depends on wall-clock time except the fake's latency.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dskit.context.memory import MemoryStore
from dskit.tooling.dslrun.plugin_daemon import FakeKV, FakeStorage

USER = "race-user"


@dataclass
class RaceCounts:
    """Totals over the trials of one experiment."""

    trials: int = 0
    reported: int = 0  # calls that reported "added"
    lost: int = 0
    orphans: int = 0
    resurrections: int = 0  # trials in which a deleted fact came back
    errors: int = 0  # calls that said they failed (allowed: a failure that says so loses nothing)
    notes: list[str] = field(default_factory=list)

    def row(self) -> str:
        return (f"trials={self.trials} reported_added={self.reported} lost={self.lost} "
                f"orphans={self.orphans} resurrections={self.resurrections} errors={self.errors}")


def _store(storage: FakeStorage) -> MemoryStore:
    return MemoryStore(FakeKV(storage))


def _run_threads(callers: list[Callable[[], Any]]) -> list[Any]:
    """Start all callers at once (a barrier) and collect their results."""
    barrier = threading.Barrier(len(callers))
    results: list[Any] = [None] * len(callers)

    def body(i: int) -> None:
        barrier.wait()
        try:
            results[i] = callers[i]()
        except BaseException as exc:  # noqa: BLE001
            results[i] = exc

    threads = [threading.Thread(target=body, args=(i,)) for i in range(len(callers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def recalled_texts(storage: FakeStorage, user: str = USER) -> set[str]:
    """The texts ``recall`` returns for ``user`` (at most 50), read without latency or failures.

    The facts used here have no subject and are unchanged by the store's NFKC clean-up, so the
    recalled text is exactly the text that was remembered.
    """
    latency, fail, gate = storage.latency, storage.fail, storage.gate
    storage.latency, storage.fail, storage.gate = 0.0, None, None
    try:
        result = _store(storage).recall(user, "", k=50)
    finally:
        storage.latency, storage.fail, storage.gate = latency, fail, gate
    assert result["ok"], result
    return {item["text"] for item in result["items"]}


def orphans_after_forget_all(storage: FakeStorage, texts: list[str], user: str = USER) -> int:
    """Values still holding one of ``texts`` after a quiet ``forget all`` (0 when all is erased)."""
    storage.latency, storage.fail, storage.gate = 0.0, None, None
    _store(storage).forget(user, all=True)
    return sum(1 for value in storage.data.values()
               if any(text.encode("utf-8") in value for text in texts))


def remember_race(writers: int, trials: int, *, latency: float = 0.005,
                  run: Callable[[list[Callable[[], Any]]], list[Any]] | None = None,
                  storage_factory: Callable[[int], FakeStorage] | None = None) -> RaceCounts:
    """``writers`` parallel ``remember`` calls (different facts) for one user, ``trials`` times."""
    counts = RaceCounts()
    for trial in range(trials):
        storage = storage_factory(trial) if storage_factory else FakeStorage(latency=latency, seed=trial)
        texts = [f"喜欢第{i}号口味的冰淇淋 第{trial}轮" for i in range(writers)]
        results = (run or _run_threads)([(lambda t=t: _store(storage).remember(USER, t)) for t in texts])
        added = [t for t, r in zip(texts, results) if isinstance(r, dict) and r.get("action") == "added"]
        counts.errors += sum(1 for r in results if not (isinstance(r, dict) and r.get("ok")))
        present = recalled_texts(storage)
        counts.trials += 1
        counts.reported += len(added)
        counts.lost += sum(1 for t in added if t not in present)
        counts.orphans += orphans_after_forget_all(storage, texts)
    return counts


def forget_race(trials: int, *, writers: int = 1, latency: float = 0.005,
                run: Callable[[list[Callable[[], Any]]], list[Any]] | None = None,
                storage_factory: Callable[[int], FakeStorage] | None = None) -> RaceCounts:
    """``forget all`` racing ``writers`` ``remember`` calls, after three facts were stored."""
    counts = RaceCounts()
    for trial in range(trials):
        storage = storage_factory(trial) if storage_factory else FakeStorage(latency=latency, seed=1000 + trial)
        old = [f"旧事实{i} 住在第{i}街区 第{trial}轮" for i in range(3)]
        quiet = _store(storage)
        saved_latency, storage.latency = storage.latency, 0.0
        for text in old:
            assert quiet.remember(USER, text)["action"] == "added"
        storage.latency = saved_latency
        new = [f"新事实{i} 喜欢第{i}种茶 第{trial}轮" for i in range(writers)]
        callers = [lambda: _store(storage).forget(USER, all=True)]
        callers += [(lambda t=t: _store(storage).remember(USER, t)) for t in new]
        results = (run or _run_threads)(callers)
        forgot, remembered = results[0], results[1:]
        counts.trials += 1
        counts.errors += sum(1 for r in results if not (isinstance(r, dict) and r.get("ok")))
        present = recalled_texts(storage)
        deleted_ids = set(forgot.get("deleted", [])) if isinstance(forgot, dict) else set()
        old_back = [t for t in old if t in present] if isinstance(forgot, dict) and forgot.get("ok") else []
        if old_back:
            counts.resurrections += 1
        for text, r in zip(new, remembered):
            if isinstance(r, dict) and r.get("action") == "added":
                counts.reported += 1
                if text not in present and r["fact"]["id"] not in deleted_ids:
                    counts.lost += 1
        counts.orphans += orphans_after_forget_all(storage, old + new)
    return counts


def silent_failed_deletes(trials: int = 10) -> int:
    """``forget`` of one fact while the storage refuses one ``del``: how often it still said ok."""
    silent = 0
    for trial in range(trials):
        storage = FakeStorage()
        store = _store(storage)
        keep = store.remember(USER, f"喜欢猫 第{trial}轮")["fact"]["id"]
        text = f"喜欢狗 第{trial}轮"
        drop = store.remember(USER, text)["fact"]["id"]
        assert keep != drop
        storage.fail_next.append("del")
        result = store.forget(USER, fact_id=drop)
        still_stored = any(text.encode("utf-8") in value for value in storage.data.values())
        if result.get("ok") and still_stored:
            silent += 1
    return silent
