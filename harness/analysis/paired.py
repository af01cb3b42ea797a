"""`better_than`: a new run against a published one, pair for pair, on the pairs both share.

Shared pairs: closed-world pairs (arm kind `closed_world`) with the same pair id in both
ledgers and in n in both (infra errors left out), per scope: toy, real, each benchmark of
the real targets (the name before the first `-`: agentdojo, bfcl, tau2) and pooled. On
them:

- the paired table: detected by both, only by the new run, only by the old, by neither;
- the support rule on evidence bounds, beside it: each run's [P/N, (P+U)/N] over the shared
  pairs (U: undecided, DESIGN.md Statistics); "new>old" only if the new run's lower end
  exceeds the old run's upper end, "old>new" the other way, "?" otherwise;
- the paired sampling-robust claim: McNemar's exact test on the discordant pairs (only new
  b, only old c; two-sided binomial test of b against b + c at 1/2, statsmodels
  `mcnemar(exact=True)`; McNemar 1947, Psychometrika 12:153); "new>old" when p < ALPHA and
  b > c, "old>new" when p < ALPHA and c > b, "?" otherwise.

The outcome of a `better_than` prediction (README, "Predictions that compare"):
  - held       the support claim is new>old AND the paired sampling-robust claim is new>old;
  - failed     the new run's upper evidence bound does not exceed the old run's lower one
               ((P+U)/N of new ≤ P/N of old: even every undecided pair counted as detected
               would not make it better), or the paired claim is old>new;
  - undecided  anything else, and no shared pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from harness.analysis.frame import ledger_frame
from harness.analysis.scoring import Scope
from harness.analysis.statistics import Bounds, compare_bounds, evidence_bounds
from harness.execution.ledger import LedgerRow
from harness.execution.plan import benchmark_of

ALPHA = 0.05
CLOSED_WORLD = "closed_world"


@dataclass(frozen=True)
class PairedTable:
    """Shared pairs of one scope, new run against old."""

    scope: str
    both: int
    only_new: int
    only_old: int
    neither: int
    undecided_new: int
    undecided_old: int

    @property
    def n(self) -> int:
        return self.both + self.only_new + self.only_old + self.neither

    @property
    def evidence_new(self) -> Bounds:
        detected = self.both + self.only_new
        return evidence_bounds(detected, self.n - detected - self.undecided_new, self.undecided_new)

    @property
    def evidence_old(self) -> Bounds:
        detected = self.both + self.only_old
        return evidence_bounds(detected, self.n - detected - self.undecided_old, self.undecided_old)

    @property
    def support(self) -> str:
        """new>old / old>new / ? on the evidence bounds (A = new, B = old)."""
        if not self.n:
            return "?"
        claim = compare_bounds(self.evidence_new, self.evidence_old)
        return {"A>B": "new>old", "B>A": "old>new"}.get(claim, "?")

    @property
    def mcnemar_p(self) -> float | None:
        """McNemar's exact two-sided p on the discordant pairs; None when there are none."""
        return mcnemar_exact(self.only_new, self.only_old)

    @property
    def paired_claim(self) -> str:
        """The paired sampling-robust claim: McNemar's exact test at ALPHA, with direction."""
        p = self.mcnemar_p
        if p is None or p >= ALPHA:
            return "?"
        return "new>old" if self.only_new > self.only_old else "old>new"


def mcnemar_exact(only_new: int, only_old: int) -> float | None:
    """Two-sided exact McNemar p-value: the binomial test of b = only_new against b + c at
    probability 1/2 (statsmodels.stats.contingency_tables.mcnemar, exact=True)."""
    if only_new + only_old == 0:
        return None
    from statsmodels.stats.contingency_tables import mcnemar

    return float(mcnemar([[0, only_new], [only_old, 0]], exact=True).pvalue)


def scope_parts(shared: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The shared pairs (a merge with the new run's `scope_new` and `target_new`) per scope:
    toy, real, each real benchmark (sorted), then pooled; a scope without pairs left out,
    pooled never."""
    parts = [
        (scope.value, shared[shared["scope_new"].astype(str) == scope.value])
        for scope in (Scope.TOY, Scope.REAL)
    ]
    real = shared[shared["scope_new"].astype(str) == Scope.REAL.value]
    benches = real["target_new"].astype(str).map(benchmark_of)
    parts += [(bench, real[benches == bench]) for bench in sorted(set(benches))]
    return [(name, part) for name, part in parts if not part.empty] + [(Scope.POOLED.value, shared)]


def shared_pairs(
    new: pd.DataFrame, old: pd.DataFrame, columns: Sequence[str], arm_kind: str | None = None
) -> pd.DataFrame:
    """The pairs in n in both ledger frames (of `arm_kind`, or of every arm kind), one row
    each: `scope`, `target` and `columns` of both runs, suffixed `_new` and `_old`."""
    keep = ["pair_id", "scope", "target", *columns]

    def counted(frame: pd.DataFrame) -> pd.DataFrame:
        mask = frame["in_n"]
        if arm_kind is not None:
            mask = mask & (frame["arm_kind"] == arm_kind)
        return frame[mask][keep]

    return counted(new).merge(
        counted(old), on="pair_id", suffixes=("_new", "_old"), validate="one_to_one"
    )


def paired_tables(new: Sequence[LedgerRow], old: Sequence[LedgerRow]) -> list[PairedTable]:
    """One table per scope with shared pairs (toy, real, each real benchmark), then
    pooled."""
    return paired_frames(ledger_frame(new), ledger_frame(old))


def paired_frames(
    new: pd.DataFrame, old: pd.DataFrame, arm_kind: str = CLOSED_WORLD
) -> list[PairedTable]:
    """`paired_tables` of two ledger frames; `arm_kind` open_world pairs the open-world
    pairs instead (descriptive: `better_than` is scored on the closed world only)."""
    out = []
    for name, part in scope_parts(shared_pairs(new, old, ["detected", "undecided"], arm_kind)):
        dn = part["detected_new"].astype(bool)
        do = part["detected_old"].astype(bool)
        out.append(
            PairedTable(
                scope=name,
                both=int((dn & do).sum()),
                only_new=int((dn & ~do).sum()),
                only_old=int((~dn & do).sum()),
                neither=int((~dn & ~do).sum()),
                undecided_new=int(part["undecided_new"].astype(bool).sum()),
                undecided_old=int(part["undecided_old"].astype(bool).sum()),
            )
        )
    return out


def better_than_outcome(table: PairedTable | None) -> str:
    """held / failed / undecided by the module rule."""
    if table is None or not table.n:
        return "undecided"
    if table.support == "new>old" and table.paired_claim == "new>old":
        return "held"
    if table.evidence_new[1] <= table.evidence_old[0] or table.paired_claim == "old>new":
        return "failed"
    return "undecided"
