"""The verdict of a run on its registered predictions, said the same way everywhere: the last
three lines of `harness run` and `harness report`, and the banner at the top of report.html.
Did this freeze score as predicted? Counts first, then every failed prediction by name with
its observed value, interval and what was predicted, then where the report is."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.analysis.predictions import Outcome, PredictionRow


@dataclass(frozen=True)
class Verdict:
    held: int
    failed: tuple[PredictionRow, ...]
    undecided: int

    @property
    def scored(self) -> int:
        return self.held + len(self.failed) + self.undecided

    def counts(self) -> str:
        if not self.scored:
            return "no predictions to score"
        return (
            f"{self.scored} predictions scored: {self.held} held, {len(self.failed)} failed, "
            f"{self.undecided} undecided"
        )


def verdict_of(predictions: Sequence[PredictionRow]) -> Verdict:
    outcomes = [p.outcome for p in predictions]
    return Verdict(
        outcomes.count(Outcome.HELD),
        tuple(p for p in predictions if p.outcome is Outcome.FAILED),
        outcomes.count(Outcome.UNDECIDED),
    )


def describe(prediction: PredictionRow) -> str:
    """`recall_floor real M-PARTIAL: 0.611 [0.386, 0.797], predicted ≥ 0.800`."""
    observed = prediction.observed if prediction.observed is not None else "nothing observed"
    if prediction.interval is not None:
        lo, hi = prediction.interval
        observed += f" [{lo:.3f}, {hi:.3f}]"
    return (
        f"{prediction.kind.value} {prediction.scope} {prediction.subject}: {observed}, "
        f"predicted {prediction.predicted}"
    )


def verdict_lines(predictions: Sequence[PredictionRow], report: str) -> list[str]:
    """Three lines: the counts, the failed predictions (or that none failed), the report."""
    verdict = verdict_of(predictions)
    failed = (
        "failed: " + "; ".join(describe(p) for p in verdict.failed)
        if verdict.failed
        else "failed: none"
    )
    return [f"verdict: {verdict.counts()}", failed, f"report: {report}"]


def report_pointer(run_dir: Path, page: Path) -> str:
    """Where report.html is, or the command that writes it."""
    if page.is_file():
        return str(page)
    return f"{page} (not written yet: harness report {run_dir})"
