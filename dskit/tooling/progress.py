"""Steps of a command that takes seconds, shown on stderr as they begin: no wait is a silent one.

Two shapes, one module (every command's progress display is built here, not by hand in each):
:func:`steps` for a few steps of unknown length, :func:`counted` for a run of counted items (files
generated, scenarios, conversations, replayed turns).

On a terminal: one rich line — a spinner, the command's label, the step running now and the elapsed
time — that goes away when the steps are done, so what stays on screen is the command's own output.
Elsewhere (a pipe, a log file): the label, then a dot for every further step on the same line, so a
log shows that work went on without a line per step.

A new user's path (set-up, ``dskit demo``, ``dskit new``, ``dskit chat``) has no step silent for more
than 5 seconds on a 2-core machine (issue 21). Tests count the steps a command reports through
:data:`LISTENERS`, never the time they take.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO

# Called with (label, step) for every step any command reports: what tests count.
LISTENERS: list[Callable[[str, str], None]] = []


@contextmanager
def steps(label: str, *, stream: IO[str] | None = None, plain: bool = True) -> Iterator[Callable[[str], None]]:
    """``with steps("fast: building and checking") as step: step("reading the YAML") ...``

    Each ``step(what)`` says that ``what`` begins now. Print nothing else on ``stream`` inside the block
    (outside a terminal the dots stay on one line until the block ends). ``plain=False``: nothing at all
    outside a terminal (a chat turn waiting for the model: a log gets the answer, not the wait)."""
    out = stream if stream is not None else sys.stderr

    def tell(what: str) -> None:
        for listener in LISTENERS:
            listener(label, what)

    if not out.isatty() and not plain:
        yield tell
        return
    if not out.isatty():
        dots: list[bool] = []

        def plain(what: str) -> None:
            tell(what)
            out.write(f"{label}…" if not dots else ".")
            out.flush()
            dots.append(True)

        try:
            yield plain
        finally:
            if dots:
                out.write("\n")
                out.flush()
        return
    from rich.console import Console  # noqa: PLC0415 - tooling imports libraries lazily
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn  # noqa: PLC0415

    with Progress(SpinnerColumn(), TextColumn(f"[bold]{label}[/bold]"), TextColumn("{task.description}"),
                  TimeElapsedColumn(), console=Console(file=out), transient=True) as bar:
        task = bar.add_task("", total=None)

        def live(what: str) -> None:
            tell(what)
            bar.update(task, description=what)

        yield live


class Counter:
    """What a :func:`counted` block is told: an item begins, or an item is done."""

    def __init__(self, label: str, update: Callable[..., None] | None) -> None:
        self.label = label
        self._update = update
        self._begun = False

    def begin(self, what: str) -> None:
        """``what`` begins now; the item before it (if any) is done."""
        for listener in LISTENERS:
            listener(self.label, what)
        if self._update is not None:
            self._update(advance=1 if self._begun else 0, description=what)
        self._begun = True

    def done(self, what: str = "") -> None:
        """One more item is done (``what``: its name, shown beside the bar)."""
        if self._update is not None:
            self._update(advance=1, **({"description": what} if what else {}))


@contextmanager
def counted(label: str, total: int | None, *, stream: IO[str] | None = None, transient: bool = True,
            quiet: bool = False) -> Iterator[Counter]:
    """``with counted("bench flow", 12) as bar: bar.begin("booking (fast)") ...`` or ``bar.done()``.

    On a terminal: one rich bar (the label, the bar, done/total, the elapsed time, the item), gone at the end
    unless ``transient`` is false. Elsewhere, or with ``quiet``: nothing on ``stream`` (a log or a pipe gets
    the command's output, not a bar); :data:`LISTENERS` still hear every item that begins. ``total`` None:
    the count without a total. ``stream`` is fixed when the block starts, so a command that redirects
    sys.stderr inside the block (bench cassettes) still draws on the terminal."""
    out = stream if stream is not None else sys.stderr
    if quiet or not out.isatty():
        yield Counter(label, None)
        return
    from rich.console import Console  # noqa: PLC0415 - tooling imports libraries lazily
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn  # noqa: PLC0415

    with Progress(TextColumn(f"[bold]{label}[/bold]"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.description}"), console=Console(file=out), transient=transient) as bar:
        task = bar.add_task("", total=total)
        counter = Counter(label, lambda **change: bar.update(task, **change))
        yield counter
        if total is not None:
            bar.update(task, completed=total)
