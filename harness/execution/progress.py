"""The run's progress bar: pairs done of total, rate, ETA, and counts by status."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text


class RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.1f} pairs/s" if speed else "- pairs/s")


class RunProgress:
    def __init__(self, console: Console):
        self.counts: Counter[str] = Counter()
        self.progress = Progress(
            TextColumn("scoring"),
            BarColumn(),
            MofNCompleteColumn(),
            RateColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[counts]}"),
            console=console,
        )
        self.task: int | None = None

    def start(self, total: int, done: int) -> None:
        self.task = self.progress.add_task("pairs", total=total, completed=done, counts="")
        self.progress.start()

    def advance(self, status: str) -> None:
        self.counts[str(status)] += 1
        if self.task is not None:
            counts = " ".join(f"{k}={v}" for k, v in sorted(self.counts.items()))
            self.progress.update(self.task, advance=1, counts=counts)

    def stop(self) -> None:
        self.progress.stop()
