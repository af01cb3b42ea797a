"""Census and superpopulation, side by side, with dominator recall (issue 29, items 2–3).

Two questions, never confused (DESIGN.md, Statistics):
  - **the pool**: what is the rate on the candidates this plan could draw? An arm that
    scores every kept candidate (`draw: all`) is a census of its pool: the rate is known up
    to its undecided pairs, [P/N, (P+U)/N] (the evidence bounds). A sampled row is a
    stratified sample (strata = each arm's operator pool, drawn at its own fraction), so its
    plain rate x/n is not the pool's: the pool's rate is the stratified estimate
    Σ W_h p_h with the finite-population correction in each stratum (`stratified_wilson`);
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
from typing import TYPE_CHECKING, TypeVar

from harness.analysis.runs import RunMeta
from harness.analysis.scoring import (
    ALL,
    ArmKind,
    EscapeRow,
    Rate,
    RecallRow,
    Scope,
    arm_kind,
    closed_world_recall,
    escape_label,
    family_of,
    is_escape,
    open_world_escapes,
    scope_of,
)
from harness.analysis.statistics import Bounds, Stratum, minimal_mutants, stratified_wilson
from harness.analysis.table_model import Column, Kind, Row, Table
from harness.execution.draw import OperatorPool
from harness.execution.ledger import LedgerRow, PairStatus

if TYPE_CHECKING:
    import pandas as pd

S = TypeVar("S")

NOT_RECORDED = "not recorded"
CENSUS, SAMPLE, UNKNOWN = "census", "stratified sample", "unknown"


@dataclass(frozen=True)
class Dominators:
    """A row's minimal mutant set: the live pairs it is drawn from, its size, and how many of
    it were detected (or escaped)."""

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


@dataclass(frozen=True)
class StratumCount:
    """One (arm, operator) pool: the row's successes x of the n pairs in the rate's
    denominator, `scored` pairs in n at all (infra errors left out), out of the pairs
    `drawn` from the `kept` candidates (run.json's pools)."""

    x: int
    n: int
    scored: int
    drawn: int
    kept: int

    @property
    def population(self) -> int:
        """N_h: the kept candidates, scaled by the share of scored pairs the rate counts
        (for escapes: the live share, so N_h estimates the live pool)."""
        if self.drawn >= self.kept:
            return self.kept
        return max(self.n, round(self.kept * self.n / max(1, self.scored)))


def strata(
    rows: Sequence[LedgerRow],
    pools: Sequence[OperatorPool],
    success: Callable[[LedgerRow], bool],
    counted: Callable[[LedgerRow], bool],
) -> list[StratumCount] | None:
    """The rows' strata: per (arm, operator), x = `success` among the rows `counted` (the
    rate's denominator). None when run.json records no pool for one of them."""
    kept = {(p.arm, p.operator): (p.drawn, p.kept) for p in pools}
    grouped: dict[tuple[str, str], list[LedgerRow]] = defaultdict(list)
    for r in rows:
        grouped[(r.arm, r.operator)].append(r)
    out = []
    for key, members in sorted(grouped.items()):
        if key not in kept:
            return None
        counted_rows = [r for r in members if counted(r)]
        scored = sum(r.status.in_denominator for r in members)
        drawn, total = kept[key]
        out.append(
            StratumCount(sum(map(success, counted_rows)), len(counted_rows), scored, drawn, total)
        )
    return out


PoolEstimate = tuple[float, Bounds]


def pool_estimate(found: list[StratumCount] | None) -> tuple[str, PoolEstimate | None]:
    """How the pool's rate is known: (census, None) when every stratum was drawn whole (the
    caller gives the census figure); (stratified sample, (p_st, interval)) otherwise
    (`stratified_wilson` over the strata's populations); (unknown, None) without pools."""
    if not found:
        return UNKNOWN, None
    if all(s.drawn >= s.kept for s in found):
        return CENSUS, None
    return SAMPLE, stratified_wilson([Stratum(s.x, s.n, s.population) for s in found])


def _dominator_cells(found: Dominators | None) -> tuple:
    if found is None:
        return (NOT_RECORDED, None, None, None)
    return (str(found.live), found.minimal, found.hits, found.rate)


RECALL_NOTES = (
    "Two questions. pool: the recall on the candidates this plan could draw. A census "
    "(every kept candidate scored, draw: all) has no sampling error: its recall is known up "
    "to the undecided pairs, [P/n, (P+U)/n]. A sampled row is a stratified sample (strata = "
    "each arm's operator pool, drawn at its own fraction): its plain recall is not the "
    "pool's; the pool estimate is sum W_h p_h with W_h = N_h/N and its Wilson interval at "
    "the design's effective size, finite-population correction in each stratum "
    "(Cochran 1977, 5.3; pool N = kept candidates).",
    "other tools of this kind: the Wilson interval with the design effect over tools "
    "(the recall table's 95% CI (deff)); a superpopulation question that more mutants of the "
    "same tools do not narrow.",
    "Dominator recall: recall on each tool's minimal mutant set under dynamic subsumption "
    "over the independent liveness corpus (docs/ledger.md); live = pairs with a non-empty "
    "kill vector; not recorded: the ledger predates kill vectors (schema < 4).",
)


def _pool_cells(
    kind: str, estimate: PoolEstimate | None, value: float | None, census: Bounds | None
) -> tuple[float | None, Bounds | None]:
    if kind == CENSUS:
        return value, census
    if estimate is not None:
        return estimate
    return None, None


def _superpopulation(rate: Rate) -> Bounds:
    return (rate.clustered.lo, rate.clustered.hi)


def _in_operator(member: str, operator: str) -> bool:
    """Whether a pair of operator `member` counts in the table row named `operator`."""
    return (
        operator == ALL
        or member == operator
        or (operator.endswith("/*") and family_of(member) == operator[:-2])
    )


def _in_row(row: LedgerRow, operator: str) -> bool:
    return _in_operator(row.operator, operator)


def _or_scored(
    given: Sequence[S] | None,
    rows: Sequence[LedgerRow],
    meta: RunMeta,
    score: Callable[[pd.DataFrame], list[S]],
) -> Sequence[S]:
    """`given`, or `score` of the rows' ledger frame when the caller has none."""
    if given is not None:
        return given
    from harness.analysis.frame import ledger_frame

    return score(ledger_frame(rows, meta))


def recall_census_table(
    rows: Sequence[LedgerRow], meta: RunMeta, recall: Sequence[RecallRow] | None = None
) -> Table | None:
    """`recall`: `closed_world_recall` of the rows' frame, computed here unless the caller
    has it already."""
    recall = _or_scored(recall, rows, meta, closed_world_recall)
    closed = [r for r in rows if arm_kind(r) is ArmKind.CLOSED_WORLD]
    body = []
    for r in recall:
        members = [
            row
            for row in closed
            if (r.scope is Scope.POOLED or scope_of(row) is r.scope) and _in_row(row, r.operator)
        ]
        found = strata(
            members,
            meta.pools,
            lambda row: row.status is PairStatus.DETECTED,
            lambda row: row.status.in_denominator,
        )
        kind, estimate = pool_estimate(found)
        c = r.counts
        value, interval = _pool_cells(kind, estimate, r.recall.value, c.evidence)
        best = dominators(members, lambda row: row.status is PairStatus.DETECTED)
        body.append(
            Row(
                (
                    r.scope.value,
                    r.operator,
                    c.n,
                    sum(s.kept for s in found) if found else None,
                    kind,
                    r.recall.value,
                    value,
                    interval,
                    _superpopulation(r.recall),
                    *_dominator_cells(best),
                ),
                None,
                c.post_hoc,
                list(Scope).index(r.scope),
            )
        )
    if not body:
        return None
    columns = (
        Column("scope", "scope", Kind.TEXT),
        Column("operator", "operator", Kind.TEXT),
        Column("n", "n", Kind.INT),
        Column("pool N", "pool", Kind.INT),
        Column("pool known by", "pool_kind", Kind.TEXT),
        Column("recall", "recall", Kind.FLOAT),
        Column("pool: recall", "pool_recall", Kind.FLOAT),
        Column("pool: census bounds or 95% CI", "pool_ci", Kind.INTERVAL),
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


def escape_census_table(
    rows: Sequence[LedgerRow], meta: RunMeta, escapes: Sequence[EscapeRow] | None = None
) -> Table | None:
    """`escapes`: `open_world_escapes` of the rows' frame, computed here unless the caller
    has it already."""
    escapes = _or_scored(escapes, rows, meta, open_world_escapes)
    by_operator: dict[str, list[LedgerRow]] = defaultdict(list)
    for r in rows:
        if arm_kind(r) is ArmKind.OPEN_WORLD:
            by_operator[r.operator].append(r)
    operators = sorted(by_operator)
    body = []
    for e in escapes:
        # a row's members: its operator's rows, its family's, or all (grouped once: an
        # exhaustive run has thousands of rows and hundreds of operators)
        members = [
            row for op in operators if _in_operator(op, e.operator) for row in by_operator[op]
        ]
        found = strata(
            members, meta.pools, is_escape, lambda row: row.status.in_denominator and bool(row.live)
        )
        kind, estimate = pool_estimate(found)
        value, interval = _pool_cells(
            kind,
            estimate,
            e.escape.value,
            (e.escape.value, e.escape.value) if e.escape.value is not None else None,
        )
        best = dominators(members, is_escape)
        body.append(
            Row(
                (
                    escape_label(e, operators),
                    e.escape.n,
                    sum(s.kept for s in found) if found else None,
                    kind,
                    e.escape.value,
                    value,
                    interval,
                    _superpopulation(e.escape),
                    *_dominator_cells(best),
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
        Column("pool known by", "pool_kind", Kind.TEXT),
        Column("escape rate", "escape_rate", Kind.FLOAT),
        Column("pool: escape rate", "pool_escape_rate", Kind.FLOAT),
        Column("pool: census or 95% CI", "pool_ci", Kind.INTERVAL),
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
            "pair); a sampled row is a stratified sample (strata = each arm's operator "
            "pool): the pool estimate weights each stratum by its live pool, estimated as "
            "kept x the stratum's drawn live share, with the finite-population correction.",
            RECALL_NOTES[1],
            "Dominator escape rate: escapes among each tool's minimal set of live mutants "
            "(docs/ledger.md) / the set's size. not recorded: the ledger predates kill "
            "vectors (schema < 4).",
            "all pools every generator (Cosmic Ray and mutmut): read the <family>/* rows.",
        ),
        run_post_hoc=meta.post_hoc,
    )
