"""The plan's predictions, scored: one row per prediction with what was predicted, what was
observed, the interval and an outcome.

The rule (one for every numeric prediction): the interval is the Wilson 95% interval with
the Kish design effect over tools (clusters = tools), the interval the recall, escape and
flag-precision tables print. A prediction names a side of a bound: a floor f the closed
side [f, 1], a ceiling c the closed side [0, c].
  - held       the whole interval lies on the predicted side (floor: lo ≥ f; ceiling: hi ≤ c);
  - failed     the whole interval lies on the other side (floor: hi < f; ceiling: lo > c);
  - undecided  it straddles the bound (or there are no pairs: the interval is [0, 1]).
Recall is detected / n (undecided pairs count as not detected, as in the recall table).
A negative control's verdict holds when the observed tool verdict equals the predicted one,
fails when the checker gave another verdict, and is undecided when it gave none the
prediction could be tested against (timeout, crash, compile_error, infra_error, or
UNTESTABLE where CONFORMS or VIOLATES was predicted).
A `benchmark_recall_floor` is the recall floor on one benchmark's pairs alone (its scope
is the benchmark's name); its rows come first.
A `better_than` prediction (this checker beats a published run, per scope) is scored on
the closed-world pairs both runs share, by the rule in `harness.analysis.paired`: held when
the support rule on evidence bounds and McNemar's exact test (the paired sampling-robust
claim) both say new>old; failed when the new run's upper evidence bound does not exceed the
old run's lower one, or the test says old>new; undecided otherwise.
A `same_as` prediction (this checker decides every shared pair as a published run did) is
scored on the pairs of every arm both runs share, by the rule in `harness.analysis.same_as`:
held when some pair is shared and none changed a decision, failed when one did (the first
three named in `observed`), undecided when none is shared or the run is not found. It is
a claim about those pairs, not a sample: no interval.
A failed prediction is a result, not an error: `--strict` turns it into exit code 3.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TypeVar

import pandas as pd

from harness.analysis.frame import ledger_frame
from harness.analysis.paired import PairedTable, better_than_outcome, paired_frames
from harness.analysis.runs import load_rows
from harness.analysis.same_as import SameTable, same_as_outcome, same_tables
from harness.analysis.scoring import (
    ALL,
    EscapeRow,
    RecallRow,
    Scope,
    closed_world_recall,
    flag_precision,
    negative_controls,
    open_world_escapes,
)
from harness.analysis.statistics import Bounds
from harness.checker.verdicts import Verdict
from harness.execution.ledger import LedgerRow
from harness.execution.plan import POOLED_KEY, BetterThan, Predictions, SameAs, in_benchmark

PREDICTION_FAILED_EXIT = 3
NAMED_CHANGES = 3  # changed pairs a failed `same_as` names in `observed`
T = TypeVar("T", PairedTable, SameTable)  # a comparison's table of one scope


class Outcome(StrEnum):
    HELD = "held"
    FAILED = "failed"
    UNDECIDED = "undecided"


def floor_outcome(floor: float, interval: Bounds) -> Outcome:
    """A floor holds when the interval lies at or above it, fails when wholly below it."""
    lo, hi = interval
    if lo >= floor:
        return Outcome.HELD
    if hi < floor:
        return Outcome.FAILED
    return Outcome.UNDECIDED


def ceiling_outcome(ceiling: float, interval: Bounds) -> Outcome:
    """A ceiling holds when the interval lies at or below it, fails when wholly above it."""
    lo, hi = interval
    if hi <= ceiling:
        return Outcome.HELD
    if lo > ceiling:
        return Outcome.FAILED
    return Outcome.UNDECIDED


def verdict_outcome(predicted: Verdict | None, observed: Verdict | None) -> Outcome:
    if predicted is None or observed is None:
        return Outcome.UNDECIDED
    if observed is predicted:
        return Outcome.HELD
    if observed is Verdict.UNTESTABLE:  # the checker graded nothing: the claim is untested
        return Outcome.UNDECIDED
    return Outcome.FAILED


class PredictionKind(StrEnum):
    RECALL_FLOOR = "recall_floor"
    PRECISION_FLOOR = "precision_floor"
    ESCAPE_RATE_CEILING = "escape_rate_ceiling"
    NEGATIVE_CONTROL = "negative_control"
    BETTER_THAN = "better_than"
    SAME_AS = "same_as"


@dataclass(frozen=True)
class PredictionRow:
    kind: PredictionKind
    scope: str  # toy / real / pooled; a negative control's target
    subject: str  # operator, `all`, `flags`, or `control / tool`
    predicted: str  # `≥ 0.800`, `≤ 0.200`, or a verdict
    observed: str | None  # the rate (3 decimals) or the verdict; None: nothing observed
    n: int
    interval: Bounds | None  # None for a verdict
    outcome: Outcome
    post_hoc: bool
    paired: PairedTable | None = None  # better_than: the shared pairs, new against old
    # better_than: every scope's table against the same run (the paired table shows them
    # all, the predicted ones with their outcome)
    paired_context: tuple[PairedTable, ...] = ()
    same: SameTable | None = None  # same_as: the shared pairs, those that changed
    # same_as: every scope's table against the same run (the same_as table shows them all)
    same_context: tuple[SameTable, ...] = ()


def _share(value: float | None) -> str | None:
    return None if value is None else f"{value:.3f}"


NO_PAIRS: Bounds = (0.0, 1.0)


def _recall_row(r: RecallRow, scope: str, operator: str, floor: float) -> PredictionRow:
    interval = (r.recall.clustered.lo, r.recall.clustered.hi)
    return PredictionRow(
        PredictionKind.RECALL_FLOOR,
        scope,
        operator,
        f"≥ {floor:.3f}",
        _share(r.recall.value),
        r.recall.n,
        interval,
        floor_outcome(floor, interval) if r.recall.n else Outcome.UNDECIDED,
        r.counts.post_hoc,
    )


def _recall_rows(frame: pd.DataFrame, floors: dict[str, float]) -> list[PredictionRow]:
    recall = closed_world_recall(frame)
    out = []
    for operator, floor in floors.items():
        name = ALL if operator == POOLED_KEY else operator
        found = [r for r in recall if r.operator == name]
        out += [_recall_row(r, r.scope.value, operator, floor) for r in found]
        if not found:  # predicted, never drawn: the claim stands untested
            out.append(_untested(PredictionKind.RECALL_FLOOR, operator, f"≥ {floor:.3f}"))
    return out


def _benchmark_rows(
    frame: pd.DataFrame, floors: dict[str, dict[str, float]]
) -> list[PredictionRow]:
    """`benchmark_recall_floor`: the recall rule on one benchmark's pairs alone, scope =
    the benchmark (its pooled row: a benchmark is all real or all toy)."""
    out = []
    for bench, by_operator in floors.items():
        mine = frame[[in_benchmark(t, bench) for t in frame["target"]]] if len(frame) else frame
        pooled = {r.operator: r for r in closed_world_recall(mine) if r.scope is Scope.POOLED}
        for operator, floor in by_operator.items():
            r = pooled.get(ALL if operator == POOLED_KEY else operator)
            if r is None:
                row = _untested(PredictionKind.RECALL_FLOOR, operator, f"≥ {floor:.3f}", bench)
            else:
                row = _recall_row(r, bench, operator, floor)
            out.append(row)
    return out


def _untested(
    kind: PredictionKind, subject: str, predicted: str, scope: str = Scope.POOLED.value
) -> PredictionRow:
    return PredictionRow(
        kind, scope, subject, predicted, None, 0, NO_PAIRS, Outcome.UNDECIDED, False
    )


def _precision_rows(frame: pd.DataFrame, floor: float | None) -> list[PredictionRow]:
    if floor is None:
        return []
    found = flag_precision(frame)
    out = []
    for r in found:
        interval = (r.precision.clustered.lo, r.precision.clustered.hi)
        out.append(
            PredictionRow(
                PredictionKind.PRECISION_FLOOR,
                r.scope.value,
                "flags",
                f"≥ {floor:.3f}",
                _share(r.precision.value),
                r.flags,
                interval,
                floor_outcome(floor, interval),
                r.post_hoc,
            )
        )
    return out or [_untested(PredictionKind.PRECISION_FLOOR, "flags", f"≥ {floor:.3f}")]


def _escape_rows(
    frame: pd.DataFrame, ceilings: dict[str, float], escapes: Sequence[EscapeRow] | None
) -> list[PredictionRow]:
    if not ceilings:
        return []
    if escapes is None:
        escapes = open_world_escapes(frame)
    by_operator = {r.operator: r for r in escapes}
    out = []
    for operator, ceiling in ceilings.items():
        r = by_operator.get(ALL if operator == POOLED_KEY else operator)
        if r is None:
            out.append(_untested(PredictionKind.ESCAPE_RATE_CEILING, operator, f"≤ {ceiling:.3f}"))
            continue
        interval = (r.escape.clustered.lo, r.escape.clustered.hi)
        out.append(
            PredictionRow(
                PredictionKind.ESCAPE_RATE_CEILING,
                Scope.POOLED.value,
                operator,
                f"≤ {ceiling:.3f}",
                _share(r.escape.value),
                r.escape.n,
                interval,
                ceiling_outcome(ceiling, interval) if r.escape.n else Outcome.UNDECIDED,
                r.counts.post_hoc,
            )
        )
    return out


def _control_rows(frame: pd.DataFrame) -> list[PredictionRow]:
    keys = zip(frame["operator"].tolist(), frame["tool"].tolist(), strict=True)
    targets = dict(zip(keys, frame["target"].tolist(), strict=True))
    return [
        PredictionRow(
            PredictionKind.NEGATIVE_CONTROL,
            targets.get((r.control, r.tool), ""),
            f"{r.control} / {r.tool}",
            r.predicted.value if r.predicted else "—",
            r.observed.value if r.observed else None,
            1,
            None,
            verdict_outcome(r.predicted, r.observed),
            r.post_hoc,
        )
        for r in negative_controls(frame)
    ]


def _per_scope(
    frame: pd.DataFrame,
    specs: Sequence[BetterThan] | Sequence[SameAs],
    root: str | Path | None,
    tables_of: Callable[[pd.DataFrame, pd.DataFrame], Sequence[T]],
) -> Iterator[tuple[BetterThan | SameAs, str, T | None, tuple[T, ...], bool]]:
    """Each predicted scope of each prediction naming a published run: (the prediction, the
    scope, its table or None, every scope's table against that run, whether the run was
    found), the run's ledger loaded once per prediction."""
    for spec in specs:
        old = _old_frame(spec.run, root)
        context = () if old is None else tuple(tables_of(frame, old))
        tables = {t.scope: t for t in context}
        for scope in spec.scopes:
            yield spec, scope, tables.get(scope), context, old is not None


def _better_than_rows(
    frame: pd.DataFrame, specs: Sequence[BetterThan], root: str | Path | None, post_hoc: bool
) -> list[PredictionRow]:
    out = []
    for spec, scope, table, context, found in _per_scope(frame, specs, root, paired_frames):
        observed = None
        if table is not None and table.n:
            p = table.mcnemar_p
            observed = (
                f"both {table.both}, only new {table.only_new}, only old {table.only_old}, "
                f"neither {table.neither}; support {table.support}; McNemar exact "
                f"p={'—' if p is None else f'{p:.4f}'} ({table.paired_claim})"
            )
        out.append(
            PredictionRow(
                PredictionKind.BETTER_THAN,
                scope,
                spec.run,
                f"> {spec.run}",
                observed if found else "run not found",
                table.n if table is not None else 0,
                None,  # evidence bounds and the test: the paired table beside it
                Outcome(better_than_outcome(table)),
                post_hoc,
                table,
                context,
            )
        )
    return out


def _same_as_rows(
    frame: pd.DataFrame, specs: Sequence[SameAs], root: str | Path | None, post_hoc: bool
) -> list[PredictionRow]:
    return [
        PredictionRow(
            PredictionKind.SAME_AS,
            scope,
            spec.run,
            f"= {spec.run}",
            _same_observed(table) if found else "run not found",
            table.n if table is not None else 0,
            None,  # a claim about the shared pairs, not a sample
            Outcome(same_as_outcome(table)),
            post_hoc,
            same=table,
            same_context=context,
        )
        for spec, scope, table, context, found in _per_scope(frame, specs, root, same_tables)
    ]


def _same_observed(table: SameTable | None) -> str | None:
    """`2 of 6 shared pairs changed: a (status missed→detected), b (live none→true)`."""
    if table is None or not table.n:
        return None
    said = f"{len(table.changed)} of {table.n} shared pairs changed"
    if not table.changed:
        return said
    named = ", ".join(str(c) for c in table.changed[:NAMED_CHANGES])
    more = len(table.changed) - NAMED_CHANGES
    return f"{said}: {named}" + (f" and {more} more" if more > 0 else "")


def _old_frame(run: str, root: str | Path | None) -> pd.DataFrame | None:
    """The published run's ledger frame; None when it is not there to compare with."""
    folder = Path(root or ".") / run
    if not (folder / "ledger.jsonl").is_file():
        return None
    return ledger_frame(load_rows(folder))


def score_predictions(
    rows: Sequence[LedgerRow], predictions: Predictions | None, root: str | Path | None = None
) -> list[PredictionRow]:
    """`score_frame_predictions` on the frame of `rows`."""
    return score_frame_predictions(ledger_frame(rows), predictions, root)


def score_frame_predictions(
    frame: pd.DataFrame,
    predictions: Predictions | None,
    root: str | Path | None = None,
    escapes: Sequence[EscapeRow] | None = None,
) -> list[PredictionRow]:
    """Every prediction of the plan (`predictions`; None when unknown) and every negative
    control's predicted verdict (carried by its ledger row), in that order, from the ledger
    frame (`ledger_frame`); `root`: the project root a `better_than` or `same_as` run is
    relative to (the current folder when None); `escapes`: the frame's `open_world_escapes`,
    computed here (when a ceiling is predicted) unless the caller has them already."""
    out: list[PredictionRow] = []
    if predictions is not None:
        # a benchmark's own floors first: a held-out benchmark's are the blind claims
        out += _benchmark_rows(frame, predictions.benchmark_recall_floor)
        out += _recall_rows(frame, predictions.recall_floor)
        out += _precision_rows(frame, predictions.precision_floor)
        out += _escape_rows(frame, predictions.escape_rate_ceiling, escapes)
        post_hoc = bool(frame["post_hoc"].any()) if len(frame) else False
        out += _better_than_rows(frame, predictions.better_than, root, post_hoc)
        out += _same_as_rows(frame, predictions.same_as, root, post_hoc)
    return out + _control_rows(frame)


def failed(predictions: Sequence[PredictionRow]) -> list[PredictionRow]:
    return [p for p in predictions if p.outcome is Outcome.FAILED]
