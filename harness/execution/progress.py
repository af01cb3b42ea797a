"""The run's progress bar: pairs done of total, rate, ETA, and counts by status.

The rate is that of scoring: pairs recorded in this session after the first one, over the
time since the first one, so set-up (targets, baselines, a cluster starting) is not in it.

Outside a terminal (a CI log, `nohup`, a pipe) rich draws no bar until the run ends, so an
hour's run would say nothing for an hour; there the same numbers are printed as a plain line
when scoring starts, every `PLAIN_EVERY_SECONDS` after, and when the last pair is recorded.

Before the first pair, a line per step of the set-up (`step`: the targets loaded and the
freeze verified, then each kind of the original tools' set-up and where it came from), in
a terminal and out of one: a run can spend from seconds to minutes there.
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
        return Text(self.run.pace_text())


class _RemainingColumn(ProgressColumn):
    def __init__(self, run: RunProgress):
        super().__init__()
        self.run = run

    def render(self, task: Task) -> Text:
        return Text(f"ETA {self.run.eta_text()}")


PLAIN_EVERY_SECONDS = 30.0


def _clock_text(seconds: float) -> str:
    minutes, seconds = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}"


class RunProgress:
    def __init__(
        self,
        console: Console,
        clock: Callable[[], float] = time.monotonic,
        after_row: Callable[[], None] | None = None,
    ):
        self.console = console
        self.plain = not console.is_terminal  # lines instead of a bar nobody would see
        self.printed: float | None = None  # when the last plain line was printed
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
        if self.plain:
            self.printed = self.clock()
            kept = f", {done:,} already in the ledger" if done else ""
            self._line(
                f"scoring {total - done:,} of {total:,} pairs{kept}; "
                f"the original tools are prepared first (cached per freeze)"
            )
            return
        self.task = self.progress.add_task("pairs", total=total, completed=done, counts="")
        self.progress.start()

    def step(self, text: str) -> None:
        """A line on the run's set-up (`harness.setup`'s log: the freeze verified, the
        original tools prepared), above the bar in a terminal."""
        self._line(f"set-up: {text}")

    def _counts(self) -> str:
        return " ".join(f"{k}={v}" for k, v in sorted(self.counts.items()))

    def _line(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def pace_text(self) -> str:
        rate = self.rate()
        return f"{rate:.1f} pairs/s" if rate else "- pairs/s"

    def eta_text(self) -> str:
        left = self.remaining()
        return "-:--:--" if left is None else _clock_text(left)

    def _plain_line(self, now: float) -> None:
        self._line(
            f"scoring: {self.done:,} of {self.total:,} pairs, {self.pace_text()}, "
            f"ETA {self.eta_text()}, {self._counts()}"
        )
        self.printed = now

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
            self.progress.update(self.task, advance=1, counts=self._counts())
        elif self.plain and (
            self.done >= self.total
            or self.printed is None
            or now - self.printed >= PLAIN_EVERY_SECONDS
        ):
            self._plain_line(now)
        if self.after_row is not None:
            self.after_row()

    def stop(self) -> None:
        if not self.plain:  # a Progress never started still ends on an empty line
            self.progress.stop()
