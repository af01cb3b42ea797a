"""The run's progress bar: pairs done of total, rate, ETA, and counts by status.

The rate is that of scoring: pairs recorded in this session after the first one, over the
time since the first one, so set-up (targets, baselines, a cluster starting) is not in it.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
)
from rich.text import Text


class _RateColumn(ProgressColumn):
    def __init__(self, run: RunProgress):
        super().__init__()
        self.run = run

    def render(self, task: Task) -> Text:
        rate = self.run.rate()
        return Text(f"{rate:.1f} pairs/s" if rate else "- pairs/s")


class _RemainingColumn(ProgressColumn):
    def __init__(self, run: RunProgress):
        super().__init__()
        self.run = run

    def render(self, task: Task) -> Text:
        left = self.run.remaining()
        if left is None:
            return Text("ETA -:--:--")
        minutes, seconds = divmod(round(left), 60)
        hours, minutes = divmod(minutes, 60)
        return Text(f"ETA {hours}:{minutes:02d}:{seconds:02d}")


class RunProgress:
    def __init__(
        self,
        console: Console,
        clock: Callable[[], float] = time.monotonic,
        after_row: Callable[[], None] | None = None,
    ):
        self.after_row = after_row  # called once a row is recorded (`harness.cli.StopLatch`)
        self.counts: Counter[str] = Counter()
        self.clock = clock
        self.total = 0
        self.done = 0
        self.first: float | None = None  # when this session recorded its first pair
        self.last: float | None = None
        self.scored = 0
        self.progress = Progress(
            TextColumn("scoring"),
            BarColumn(),
            MofNCompleteColumn(),
            _RateColumn(self),
            _RemainingColumn(self),
            TextColumn("{task.fields[counts]}"),
            console=console,
        )
        self.task: int | None = None

    def start(self, total: int, done: int) -> None:
        self.total, self.done = total, done
        self.task = self.progress.add_task("pairs", total=total, completed=done, counts="")
        self.progress.start()

    def rate(self) -> float | None:
        """Pairs per second of scoring; None before two pairs are recorded."""
        if self.first is None or self.last is None or self.last <= self.first:
            return None
        return (self.scored - 1) / (self.last - self.first)

    def remaining(self) -> float | None:
        rate = self.rate()
        return None if not rate else (self.total - self.done) / rate

    def advance(self, status: str) -> None:
        now = self.clock()
        self.first = now if self.first is None else self.first
        self.last = now
        self.scored += 1
        self.done += 1
        self.counts[str(status)] += 1
        if self.task is not None:
            counts = " ".join(f"{k}={v}" for k, v in sorted(self.counts.items()))
            self.progress.update(self.task, advance=1, counts=counts)
        if self.after_row is not None:
            self.after_row()

    def stop(self) -> None:
        self.progress.stop()
