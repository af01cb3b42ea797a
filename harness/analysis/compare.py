"""Two runs side by side per (arm, operator): detection rate, counted-only rate, Unknown
share, evidence bounds and Wilson intervals, and two directional claims, never merged.

- support (the design's rule, DESIGN.md Statistics): on the evidence bounds
  [P/N, (P+U)/N], A ≻ B only if LB_A > UB_B, B ≻ A only if LB_B > UB_A, else "?". A claim
  the undecided pairs cannot explain away; not a significance test.
- sampling-robust: the same rule on the Wilson-widened range [Wilson lower end of P/N,
  Wilson upper end of (P+U)/N] (design effect over tools): chance cannot explain it either.
  Every sampling-robust claim is a support claim; not the other way round.
Counted-only rate = P/(P+F) (the undecided pairs left out); Unknown share = U/N. Works for
two freezes of one checker, two checkers on one plan, or a sampled plan and its exhaustive
variant (`--by scope` lines up their recall-table scopes; the last column says how much
narrower B's interval is). For control arms the rate is the false-positive rate: higher is
worse.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pandas as pd

from harness.analysis.frame import ledger_frame
from harness.analysis.runs import RunMeta, load_run
from harness.analysis.scoring import (
    ALL,
    Counts,
    Scope,
    clusters_of,
    count,
    detected,
    groups,
    scored,
)
from harness.analysis.statistics import (
    Bounds,
    Claim,
    ClusteredInterval,
    clustered_wilson,
    compare_bounds,
)
from harness.analysis.table_model import Column, Kind, Row, Table
from harness.execution.ledger import LedgerRow


@dataclass(frozen=True)
class Side:
    """One run's numbers for one (arm, operator)."""

    counts: Counts
    interval: ClusteredInterval  # of P/n
    upper: ClusteredInterval  # of (P+U)/n

    @property
    def rate(self) -> float | None:
        return self.counts.detected / self.counts.n if self.counts.n else None

    @property
    def counted_only(self) -> float | None:
        return self.counts.counted_only

    @property
    def unknown_share(self) -> float | None:
        return self.counts.unknown_share

    @property
    def range(self) -> Bounds:
        """The Wilson-widened range: [Wilson lower of P/N, Wilson upper of (P+U)/N]."""
        return (self.interval.lo, self.upper.hi)


def side(frame: pd.DataFrame) -> Side:
    """The numbers of one (arm, operator)'s pairs, a slice of the ledger frame."""
    counts = count(frame)
    clusters = clusters_of(scored(frame), detected)
    return Side(
        counts,
        clustered_wilson(counts.detected, clusters),
        clustered_wilson(counts.detected + counts.undecided, clusters),
    )


GroupBy = Literal["arm", "scope"]


@dataclass(frozen=True)
class ComparisonRow:
    arm: str  # the arm, or `<arm kind> <scope>` when compared by scope
    operator: str
    a: Side | None
    b: Side | None
    support: Claim  # on the evidence bounds
    robust: Claim  # on the Wilson-widened ranges

    @property
    def width_ratio(self) -> float | None:
        """Width of B's 95% interval over A's: below 1, B's interval is narrower."""
        if self.a is None or self.b is None:
            return None
        width_a = self.a.interval.hi - self.a.interval.lo
        width_b = self.b.interval.hi - self.b.interval.lo
        return width_b / width_a if width_a > 0 else None


@dataclass(frozen=True)
class ComparisonResult:
    a: RunMeta
    b: RunMeta
    rows: tuple[ComparisonRow, ...]
    by: GroupBy = "arm"

    def row(self, arm: str, operator: str) -> ComparisonRow:
        for row in self.rows:
            if (row.arm, row.operator) == (arm, operator):
                return row
        raise KeyError((arm, operator))

    def decided(self) -> tuple[int, int]:
        """(rows with a support claim, rows with a sampling-robust claim)."""
        return (
            sum(1 for r in self.rows if r.support != "?"),
            sum(1 for r in self.rows if r.robust != "?"),
        )


def _groups(frame: pd.DataFrame, by: GroupBy) -> dict[tuple[str, str], pd.DataFrame]:
    """Each (arm, operator)'s pairs, and each arm's as (arm, all); by scope, the same per
    (arm kind and scope, operator), with every scope's pairs pooled as a third scope (the
    recall table's rows)."""
    out: dict[tuple[str, str], pd.DataFrame] = {}
    if by == "arm":
        parts = [((arm,), members) for (arm,), members in groups(frame, ["arm"])]
    else:
        parts = []
        order = {Scope.TOY.value: 0, Scope.REAL.value: 1}  # the recall table's order
        for (kind,), members in groups(frame, ["arm_kind"]):
            scopes = sorted(groups(members, ["scope"]), key=lambda kv: order[kv[0][0]])
            parts += [((kind, scope), g) for (scope,), g in scopes]
            parts.append(((kind, Scope.POOLED.value), members))
    for key, members in parts:
        name = " ".join(key)
        out |= {(name, op): g for (op,), g in groups(members, ["operator"])}
        out[(name, ALL)] = members
    return out


def _order(key: tuple[str, str]) -> tuple[str, bool, str]:
    return (key[0], key[1] == ALL, key[1])  # each arm's `all` row last


def _scope_order(keys: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """By arm kind, then scope as the recall tables order them, each `all` row last."""
    rank = {Scope.TOY.value: 0, Scope.REAL.value: 1, Scope.POOLED.value: 2}

    def key(k: tuple[str, str]) -> tuple[str, int, bool, str]:
        kind, _, scope = k[0].rpartition(" ")
        return (kind, rank[scope], k[1] == ALL, k[1])

    return sorted(keys, key=key)


def compare_rows(
    rows_a: Sequence[LedgerRow],
    meta_a: RunMeta,
    rows_b: Sequence[LedgerRow],
    meta_b: RunMeta,
    by: GroupBy = "arm",
) -> ComparisonResult:
    groups_a = _groups(ledger_frame(rows_a, meta_a), by)
    groups_b = _groups(ledger_frame(rows_b, meta_b), by)
    out = []
    keys = list(dict.fromkeys([*groups_a, *groups_b]))  # each side in its scope order
    for key in sorted(keys, key=_order) if by == "arm" else _scope_order(keys):
        a = side(groups_a[key]) if key in groups_a else None
        b = side(groups_b[key]) if key in groups_b else None
        support: Claim = "?"
        robust: Claim = "?"
        if a is not None and b is not None and a.counts.n and b.counts.n:
            support = compare_bounds(a.counts.evidence, b.counts.evidence)
            robust = compare_bounds(a.range, b.range)
        out.append(ComparisonRow(key[0], key[1], a, b, support, robust))
    return ComparisonResult(meta_a, meta_b, tuple(out), by)


def compare(run_a: Path, run_b: Path, by: GroupBy = "arm") -> ComparisonResult:
    meta_a, rows_a = load_run(run_a)
    meta_b, rows_b = load_run(run_b)
    return compare_rows(rows_a, meta_a, rows_b, meta_b, by)


def _label(meta: RunMeta) -> str:
    checker = f", checker {meta.checker}" if meta.checker else ""
    return f"{meta.plan}/{meta.run}{checker}"


def comparison_table(result: ComparisonResult) -> Table:
    """One table; render it with `harness.analysis.render` (markdown, LaTeX, CSV, rich)."""
    columns: list[Column] = [
        Column("arm" if result.by == "arm" else "arm kind, scope", "arm", Kind.TEXT),
        Column("operator", "operator", Kind.TEXT),
    ]
    for name in ("A", "B"):
        low = name.lower()
        columns += [
            Column(f"{name} n", f"{low}_n", Kind.INT),
            Column(f"{name} detected", f"{low}_detected", Kind.INT),
            Column(f"{name} rate", f"{low}_rate", Kind.FLOAT),
            Column(f"{name} P/(P+F)", f"{low}_counted_only", Kind.FLOAT),
            Column(f"{name} U/N", f"{low}_unknown_share", Kind.FLOAT),
            Column(f"{name} evidence", f"{low}_evidence", Kind.INTERVAL),
            Column(f"{name} 95% CI (deff)", f"{low}_ci", Kind.INTERVAL),
        ]
    columns.append(Column("support claim (evidence bounds)", "support_claim", Kind.TEXT))
    columns.append(
        Column("sampling-robust claim (Wilson-widened)", "sampling_robust_claim", Kind.TEXT)
    )
    columns.append(Column("CI width B/A", "ci_width_ratio", Kind.FLOAT))
    arms = sorted({r.arm for r in result.rows})
    rows = []
    for r in result.rows:
        cells: list[int | float | str | tuple[float, float] | None] = [r.arm, r.operator]
        for s in (r.a, r.b):
            if s is None:
                cells += [None] * 7
            else:
                ci = (s.interval.lo, s.interval.hi)
                cells += [
                    s.counts.n,
                    s.counts.detected,
                    s.rate,
                    s.counted_only,
                    s.unknown_share,
                    s.counts.evidence,
                    ci,
                ]
        cells += [r.support, r.robust, r.width_ratio]
        post_hoc = any(s is not None and s.counts.post_hoc for s in (r.a, r.b))
        rows.append(Row(tuple(cells), post_hoc=post_hoc, section=arms.index(r.arm)))
    decided = result.decided()
    return Table(
        "comparison",
        f"Comparison of A = {_label(result.a)} and B = {_label(result.b)}",
        f"A {result.a.freeze_id}, B {result.b.freeze_id}",
        tuple(columns),
        tuple(rows),
        notes=(
            "rate = detected / n (for control arms: the false-positive rate, lower is better); "
            "P/(P+F) = counted-only rate (undecided pairs left out); U/N = Unknown share "
            "(untestable, timeout, crash, compile_error).",
            "support claim: A>B only if A's lower evidence bound P/N exceeds B's upper "
            "evidence bound (P+U)/N, B>A the other way, ? otherwise: the undecided pairs "
            "cannot explain the difference away (a support rule, not a significance test).",
            "sampling-robust claim: the same rule on the Wilson-widened ranges [Wilson lower "
            "end of P/N, Wilson upper end of (P+U)/N] (design effect over tools): chance "
            "cannot explain it either.",
            "CI width B/A: the width of B's 95% CI (deff) over A's; below 1, B's is narrower "
            "(e.g. an exhaustive run B beside its sampled plan A).",
            f"support claims on {decided[0]} of {len(rows)} rows, sampling-robust claims on "
            f"{decided[1]}.",
        ),
        run_post_hoc=result.a.post_hoc or result.b.post_hoc,
    )
