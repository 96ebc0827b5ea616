"""Run several callers against the fake storage one request at a time, in a chosen order.

Threads are real (each caller is an ordinary blocking function, as a tool invocation is), but every
storage request first waits at :meth:`StepScheduler.gate` until the scheduler lets exactly that one
through. Between two requests a caller computes freely; the scheduler waits until every live caller
is either finished or waiting at the gate, then ``choose(n)`` picks which of the ``n`` waiting callers
goes next. So an interleaving is a sequence of small integers: hypothesis can generate and shrink it,
and the same sequence always gives the same run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class StepScheduler:
    """A gate for :class:`dskit.tooling.dslrun.plugin_daemon.FakeStorage` that serialises requests in a chosen order."""

    def __init__(self, choose: Callable[[int], int], *, max_steps: int = 100_000) -> None:
        self.choose = choose
        self.max_steps = max_steps
        self.steps = 0
        self._cv = threading.Condition()
        self._local = threading.local()
        self._running: set[int] = set()
        self._waiting: set[int] = set()
        self._granted: int | None = None

    def gate(self, op: str, key: str) -> None:
        """Called by the storage before each request: wait for this caller's turn."""
        me = getattr(self._local, "index", None)
        if me is None:  # a request from outside run() (set-up or checks): no scheduling
            return
        with self._cv:
            self._running.discard(me)
            self._waiting.add(me)
            self._cv.notify_all()
            while self._granted != me:
                self._cv.wait()
            self._granted = None

    def run(self, callers: list[Callable[[], Any]]) -> list[Any]:
        """Run ``callers`` to the end; returns their results (an exception is returned, not raised)."""
        results: list[Any] = [None] * len(callers)

        def body(index: int, fn: Callable[[], Any]) -> None:
            self._local.index = index
            try:
                results[index] = fn()
            except BaseException as exc:  # noqa: BLE001 - reported to the test as a value
                results[index] = exc
            finally:
                with self._cv:
                    self._running.discard(index)
                    self._cv.notify_all()

        with self._cv:
            self._running = set(range(len(callers)))
        threads = [threading.Thread(target=body, args=(i, fn), daemon=True) for i, fn in enumerate(callers)]
        for thread in threads:
            thread.start()
        with self._cv:
            while True:
                while self._running or self._granted is not None:
                    self._cv.wait()
                if not self._waiting:
                    break
                self.steps += 1
                if self.steps > self.max_steps:
                    raise RuntimeError("interleaving did not finish: a caller keeps retrying")
                order = sorted(self._waiting)
                pick = order[self.choose(len(order)) % len(order)]
                self._waiting.discard(pick)
                self._running.add(pick)
                self._granted = pick
                self._cv.notify_all()
        for thread in threads:
            thread.join()
        return results
