"""Census and superpopulation, side by side, with dominator recall (issue 29, items 2–3).

Two questions, never confused (DESIGN.md, Statistics):
  - **the pool** (census): what is the rate on the candidates this plan could draw? An arm
    that scores every kept candidate (`draw: all`) answers it without sampling error: the
    rate is known up to its undecided pairs, [P/N, (P+U)/N] (the evidence bounds). A
    sampled arm answers it with a Wilson interval under the finite-population correction
    (`fpc_wilson`), shown when the sample is at least `FPC_SHARE` of its pool (Cochran 1977,
    §2.5: below 5% the correction is negligible);
  - **other tools of this kind** (superpopulation): the Wilson interval with the design
    effect over tools, the headline interval of the recall and escape tables. More mutants
    of the same tools do not narrow it.
Dominator recall is recall on the minimal mutant set of each tool (docs/ledger.md,
"Dominator recall"), over the pairs whose kill vector the ledger records; a ledger before
version 4 records none, and the columns say "not recorded".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.analysis.runs import RunMeta
from harness.analysis.scoring import (
    ALL,
    TOY_TARGET,
    ArmKind,
    Rate,
    Scope,
    arm_kind,
    escape_label,
    family_of,
    scope_of,
)
from harness.analysis.statistics import Bounds, evidence_bounds, fpc_wilson, minimal_mutants
from harness.analysis.tables import Column, Kind, Row, Table
from harness.execution.draw import OperatorPool
from harness.execution.ledger import LedgerRow, PairStatus

FPC_SHARE = 0.05
NOT_RECORDED = "not recorded"


@dataclass(frozen=True)
class Dominators:
    """A row's minimal mutant set: its size, how many of it were detected (or escaped), and
    how many live pairs it was drawn from. None throughout: no kill vector recorded."""

    live: int
    minimal: int
    hits: int

    @property
    def rate(self) -> float | None:
        return self.hits / self.minimal if self.minimal else None


def dominators(rows: Sequence[LedgerRow], hit: Callable[[LedgerRow], bool]) -> Dominators | None:
    """The minimal set per (target, tool) over the rows' live pairs with a kill vector
    (`minimal_mutants`); `hit` says whether a representative counts (detected, or escaped).
    None when no row records a kill vector (ledgers before version 4)."""
    recorded = [r for r in rows if r.kill_vector is not None and r.status.in_denominator]
    if not recorded:
        return None
    by_tool: dict[tuple[str, str], dict[str, LedgerRow]] = defaultdict(dict)
    for r in recorded:
        if r.kill_vector:
            by_tool[(r.target, r.tool)][r.pair_id] = r
    live = minimal = hits = 0
    for pairs in by_tool.values():
        kills = {pid: frozenset(str(i) for i in r.kill_vector or []) for pid, r in pairs.items()}
        chosen = minimal_mutants(kills)
        live += len(pairs)
        minimal += len(chosen)
        hits += sum(hit(pairs[pid]) for pid in chosen)
    return Dominators(live, minimal, hits)


def _pool_size(pools: Sequence[OperatorPool], kind: str, scope: Scope, operator: str) -> tuple:
    """(kept, drawn) over the pools of `kind` in `scope` and `operator` (or every operator,
    or every operator of a `<family>/*`); (None, None) when run.json records no pools."""
    chosen = [
        p
        for p in pools
        if p.kind == kind
        and (scope is Scope.POOLED or (scope is Scope.TOY) == (p.target == TOY_TARGET))
        and (
            operator == ALL
            or p.operator == operator
            or (operator.endswith("/*") and family_of(p.operator) == operator[:-2])
        )
    ]
    if not chosen:
        return None, None
    return sum(p.kept for p in chosen), sum(p.drawn for p in chosen)


def pool_interval(
    x: int, n: int, undecided: int, kept: int | None, drawn: int | None
) -> tuple[str, Bounds | None]:
    """The pool's own rate: ("census", evidence bounds) when every kept candidate was drawn;
    ("sample, FPC", Wilson under the FPC) when the sample is ≥ FPC_SHARE of the pool;
    ("sample", None) below it, and ("unknown", None) when the pool is not recorded."""
    if kept is None or drawn is None or kept == 0:
        return "unknown", None
    if drawn >= kept:
        return "census", evidence_bounds(x, n - x - undecided, undecided)
    if drawn / kept < FPC_SHARE or n == 0:
        return "sample", None
    # The pool's share of the scored pairs is the drawn share (infra_error pairs aside).
    population = max(n, round(kept * n / drawn))
    return "sample, FPC", fpc_wilson(x, n, population)


def _dominator_cells(found: Dominators | None) -> tuple:
    if found is None:
        return (NOT_RECORDED, None, None, None)
    return (str(found.live), found.minimal, found.hits, found.rate)


RECALL_NOTES = (
    "Two questions. pool: the recall on the candidates this plan could draw. A census "
    "(every kept candidate scored, draw: all) has no sampling error: its recall is known up "
    "to the undecided pairs, [P/N, (P+U)/N]. A sample of at least 5% of its pool gets the "
    "Wilson interval with the finite-population correction, n* = n(N-1)/(N-n) "
    "(Cochran 1977, 3.2); below 5% none is shown.",
    "other tools of this kind: the Wilson interval with the design effect over tools "
    "(the recall table's 95% CI (deff)); a superpopulation question that more mutants of the "
    "same tools do not narrow.",
    "Dominator recall: recall on each tool's minimal mutant set under dynamic subsumption "
    "over the independent liveness corpus (docs/ledger.md); live = pairs with a non-empty "
    "kill vector; not recorded: the ledger predates kill vectors (schema < 4).",
)


def _recall_census_rows(rows: Sequence[LedgerRow], meta: RunMeta) -> list[Row]:
    from harness.analysis.frame import ledger_frame
    from harness.analysis.scoring import closed_world_recall

    closed = [r for r in rows if arm_kind(r) is ArmKind.CLOSED_WORLD]
    out = []
    for r in closed_world_recall(ledger_frame(rows, meta)):
        members = [
            row
            for row in closed
            if (r.scope is Scope.POOLED or scope_of(row) is r.scope)
            and (r.operator == ALL or row.operator == r.operator)
        ]
        kept, drawn = _pool_size(meta.pools, "closed_world", r.scope, r.operator)
        c = r.counts
        kind, interval = pool_interval(c.detected, c.n, c.undecided, kept, drawn)
        found = dominators(members, lambda row: row.status is PairStatus.DETECTED)
        out.append(
            Row(
                (
                    r.scope.value,
                    r.operator,
                    c.n,
                    kept,
                    kind,
                    r.recall.value,
                    interval,
                    _superpopulation(r.recall),
                    *_dominator_cells(found),
                ),
                None,
                c.post_hoc,
                list(Scope).index(r.scope),
            )
        )
    return out


def _superpopulation(rate: Rate) -> Bounds:
    return (rate.clustered.lo, rate.clustered.hi)


def recall_census_table(rows: Sequence[LedgerRow], meta: RunMeta) -> Table | None:
    body = _recall_census_rows(rows, meta)
    if not body:
        return None
    columns = (
        Column("scope", "scope", Kind.TEXT),
        Column("operator", "operator", Kind.TEXT),
        Column("n", "n", Kind.INT),
        Column("pool N", "pool", Kind.INT),
        Column("pool scored as", "pool_kind", Kind.TEXT),
        Column("recall", "recall", Kind.FLOAT),
        Column("pool: recall (census bounds or FPC 95% CI)", "pool_ci", Kind.INTERVAL),
        Column("other tools of this kind: 95% CI (deff)", "superpopulation_ci", Kind.INTERVAL),
        Column("live (kill vector)", "live_with_kill_vector", Kind.TEXT),
        Column("minimal set", "minimal", Kind.INT),
        Column("minimal detected", "minimal_detected", Kind.INT),
        Column("dominator recall", "dominator_recall", Kind.FLOAT),
    )
    return Table(
        "closed_world_recall_census",
        "Closed-world recall: the pool (census) and other tools (superpopulation)",
        meta.freeze_id,
        columns,
        tuple(body),
        notes=RECALL_NOTES,
        run_post_hoc=meta.post_hoc,
    )


def _escape_pool(
    escape: Rate, pairs: int, kept: int | None, drawn: int | None
) -> tuple[str, Bounds | None]:
    """The pool's escape rate: a census knows it exactly (every live pair is decided); a
    sample of at least FPC_SHARE of its pool gets the FPC Wilson interval, with the pool's
    live pairs estimated as kept × the drawn live share."""
    if kept is None or drawn is None or kept == 0:
        return "unknown", None
    if drawn >= kept:
        value = escape.value
        return "census", None if value is None else (value, value)
    if drawn / kept < FPC_SHARE or not escape.n or not pairs:
        return "sample", None
    live_pool = max(escape.n, round(kept * escape.n / pairs))
    return "sample, FPC", fpc_wilson(escape.x, escape.n, live_pool)


def escape_census_table(rows: Sequence[LedgerRow], meta: RunMeta) -> Table | None:
    from harness.analysis.frame import ledger_frame
    from harness.analysis.scoring import open_world_escapes

    opened = [r for r in rows if arm_kind(r) is ArmKind.OPEN_WORLD]
    operators = sorted({r.operator for r in opened})
    body = []
    for e in open_world_escapes(ledger_frame(rows, meta)):
        members = [
            row
            for row in opened
            if e.operator == ALL
            or row.operator == e.operator
            or (e.operator.endswith("/*") and family_of(row.operator) == e.operator[:-2])
        ]
        kept, drawn = _pool_size(meta.pools, "open_world", Scope.POOLED, e.operator)
        kind, interval = _escape_pool(e.escape, e.counts.n, kept, drawn)
        found = dominators(members, lambda row: bool(row.live) and row.status is PairStatus.MISSED)
        body.append(
            Row(
                (
                    escape_label(e, operators),
                    e.escape.n,
                    kept,
                    kind,
                    e.escape.value,
                    interval,
                    _superpopulation(e.escape),
                    *_dominator_cells(found),
                ),
                None,
                e.counts.post_hoc,
                2 if e.operator == ALL else int(e.operator.endswith("/*")),
            )
        )
    if not body:
        return None
    columns = (
        Column("operator", "operator", Kind.TEXT),
        Column("live", "live", Kind.INT),
        Column("pool N (pairs)", "pool", Kind.INT),
        Column("pool scored as", "pool_kind", Kind.TEXT),
        Column("escape rate", "escape_rate", Kind.FLOAT),
        Column("pool: escape rate (census or FPC 95% CI)", "pool_ci", Kind.INTERVAL),
        Column("other tools of this kind: 95% CI (deff)", "superpopulation_ci", Kind.INTERVAL),
        Column("live (kill vector)", "live_with_kill_vector", Kind.TEXT),
        Column("minimal set", "minimal", Kind.INT),
        Column("minimal escaped", "minimal_escaped", Kind.INT),
        Column("dominator escape rate", "dominator_escape_rate", Kind.FLOAT),
    )
    return Table(
        "open_world_escapes_census",
        "Open-world escapes: the pool (census) and other tools (superpopulation)",
        meta.freeze_id,
        columns,
        tuple(body),
        notes=(
            "escape rate = escapes / live pairs. pool: a census (every kept candidate "
            "scored) knows its escape rate exactly (an escape is decided for every live "
            "pair); a sample of at least 5% of its pool gets the FPC Wilson interval with "
            "the pool's live pairs estimated as N x the drawn live share.",
            RECALL_NOTES[1],
            "Dominator escape rate: escapes among each tool's minimal set of live mutants "
            "(docs/ledger.md) / the set's size. not recorded: the ledger predates kill "
            "vectors (schema < 4).",
            "all pools every generator (Cosmic Ray and mutmut): read the <family>/* rows.",
        ),
        run_post_hoc=meta.post_hoc,
    )
