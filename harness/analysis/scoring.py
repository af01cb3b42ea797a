"""Ledger rows → counts and rates per arm, operator, scope and tool (DESIGN.md, Scoring).

Pure functions over `LedgerRow`s; the statuses and what counts in a denominator come from
`PairStatus`. A pair's tool (within its target) is its cluster for the design effect.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property

from harness.analysis.statistics import (
    Bounds,
    ClusteredInterval,
    cluster_bootstrap,
    clustered_wilson,
    evidence_bounds,
    wilson_interval,
)
from harness.checker.verdicts import DefectClass, Verdict
from harness.execution.ledger import LedgerRow, MissCause, PairStatus

TOY_TARGET = "toy_domain"
ALL = "all"  # the operator name of a pooled row


class ArmKind(StrEnum):
    CLOSED_WORLD = "closed_world"
    CONTROLS = "controls"
    NEGATIVE_CONTROLS = "negative_controls"
    OPEN_WORLD = "open_world"


_KINDS = frozenset(kind.value for kind in ArmKind)
# An arm named otherwise in a plan is recognised by its operator family.
_FAMILY_KIND = (
    ("NC-", ArmKind.NEGATIVE_CONTROLS),
    ("M-", ArmKind.CLOSED_WORLD),
    ("C-", ArmKind.CONTROLS),
)


def arm_kind(row: LedgerRow) -> ArmKind:
    if row.arm in _KINDS:
        return ArmKind(row.arm)
    for prefix, kind in _FAMILY_KIND:
        if row.operator.startswith(prefix):
            return kind
    return ArmKind.OPEN_WORLD


class Scope(StrEnum):
    """Real benchmark tools, the toy domain, or both."""

    REAL = "real"
    TOY = "toy"
    POOLED = "pooled"


def scope_of(row: LedgerRow) -> Scope:
    return Scope.TOY if row.target == TOY_TARGET else Scope.REAL


@dataclass(frozen=True)
class Counts:
    """Pairs by outcome. `error` = timeout + crash + compile_error; `infra` is outside n."""

    detected: int = 0
    missed: int = 0
    untestable: int = 0
    error: int = 0
    infra: int = 0
    class_matched: int = 0
    live: int = 0
    escapes: int = 0
    mutants: int = 0
    post_hoc: bool = False

    @property
    def n(self) -> int:
        return self.detected + self.missed + self.untestable + self.error

    @property
    def undecided(self) -> int:
        return self.untestable + self.error

    @property
    def evidence(self) -> Bounds:
        return evidence_bounds(self.detected, self.missed, self.undecided)

    @property
    def counted_only(self) -> float | None:
        """P/(P+F): the rate among pairs with a decided outcome (undecided left out)."""
        decided = self.detected + self.missed
        return self.detected / decided if decided else None

    @property
    def unknown_share(self) -> float | None:
        """U/N: the share of pairs whose outcome is undecided."""
        return self.undecided / self.n if self.n else None


def is_escape(row: LedgerRow) -> bool:
    """Live (differs from the original on the independent corpus) and missed."""
    return bool(row.live) and row.status is PairStatus.MISSED


def count(rows: Iterable[LedgerRow]) -> Counts:
    rows = list(rows)
    statuses = Counter(r.status for r in rows)
    scored = [r for r in rows if r.status.in_denominator]
    return Counts(
        detected=statuses[PairStatus.DETECTED],
        missed=statuses[PairStatus.MISSED],
        untestable=statuses[PairStatus.UNTESTABLE],
        error=sum(n for s, n in statuses.items() if s.undecided and s is not PairStatus.UNTESTABLE),
        infra=sum(n for s, n in statuses.items() if not s.in_denominator),
        class_matched=sum(1 for r in scored if r.class_matched and r.status is PairStatus.DETECTED),
        live=sum(1 for r in scored if r.live),
        escapes=sum(1 for r in scored if is_escape(r)),
        mutants=len({r.mutant_id for r in rows}),
        post_hoc=any(r.post_hoc for r in rows),
    )


@dataclass(frozen=True)
class Rate:
    """x of n, with the plain Wilson interval and the one widened by clustering on tools."""

    x: int
    n: int
    plain: Bounds
    clustered: ClusteredInterval
    clusters: tuple[tuple[int, int], ...] = ()  # (successes, size) per tool

    @property
    def value(self) -> float | None:
        return self.x / self.n if self.n else None

    @cached_property
    def bootstrap(self) -> Bounds | None:
        """The cluster-bootstrap interval over tools (a sensitivity check; None: < 2 tools)."""
        return cluster_bootstrap(self.clusters)


def clusters_of(
    rows: Sequence[LedgerRow], success: Callable[[LedgerRow], bool]
) -> list[tuple[int, int]]:
    """(successes, size) per (target, tool), in sorted order."""
    cells: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        cell = cells[(row.target, row.tool)]
        cell[0] += int(success(row))
        cell[1] += 1
    return [(s, n) for _, (s, n) in sorted(cells.items())]


def rate(rows: Sequence[LedgerRow], success: Callable[[LedgerRow], bool]) -> Rate:
    """The rate of `success` among `rows` (which must all be in the denominator)."""
    clusters = clusters_of(rows, success)
    x = sum(s for s, _ in clusters)
    n = len(rows)
    return Rate(x, n, wilson_interval(x, n), clustered_wilson(x, clusters), tuple(clusters))


def scored(rows: Iterable[LedgerRow]) -> list[LedgerRow]:
    return [r for r in rows if r.status.in_denominator]


def detected(row: LedgerRow) -> bool:
    return row.status is PairStatus.DETECTED


def not_flagged(row: LedgerRow) -> bool:
    return row.status is not PairStatus.DETECTED


def class_matched(row: LedgerRow) -> bool:
    return detected(row) and bool(row.class_matched)


def by_operator(rows: Iterable[LedgerRow]) -> dict[str, list[LedgerRow]]:
    groups: dict[str, list[LedgerRow]] = defaultdict(list)
    for row in rows:
        groups[row.operator].append(row)
    return dict(sorted(groups.items()))


def of_kind(rows: Iterable[LedgerRow], kind: ArmKind) -> list[LedgerRow]:
    return [r for r in rows if arm_kind(r) is kind]


# --- closed world -------------------------------------------------------------------------


@dataclass(frozen=True)
class RecallRow:
    scope: Scope
    operator: str
    counts: Counts
    recall: Rate
    class_matched: Rate


def _recall_row(scope: Scope, operator: str, rows: list[LedgerRow]) -> RecallRow:
    denominator = scored(rows)
    return RecallRow(
        scope, operator, count(rows), rate(denominator, detected), rate(denominator, class_matched)
    )


def closed_world_recall(rows: Iterable[LedgerRow]) -> list[RecallRow]:
    """Per scope (real, toy — when it has pairs — then pooled): each operator, then all."""
    arm = of_kind(rows, ArmKind.CLOSED_WORLD)
    out: list[RecallRow] = []
    for scope in Scope:
        members = arm if scope is Scope.POOLED else [r for r in arm if scope_of(r) is scope]
        if not members:
            continue
        for operator, group in by_operator(members).items():
            out.append(_recall_row(scope, operator, group))
        out.append(_recall_row(scope, ALL, members))
    return out


# The two axes of an observation clause, by the defect class an operator instantiates.
OBSERVATION_AXES: dict[DefectClass, str] = {
    DefectClass.VALIDITY_BREAK: "validity",
    DefectClass.INTEGRITY_BREAK: "integrity",
}


def observation_axis_recall(rows: Iterable[LedgerRow]) -> list[RecallRow]:
    """Closed-world pairs whose operator instantiates an observation axis, per scope (as in
    `closed_world_recall`): one row per axis (validity, integrity), named by the axis."""
    arm = [r for r in of_kind(rows, ArmKind.CLOSED_WORLD) if r.defect_class in OBSERVATION_AXES]
    out: list[RecallRow] = []
    for scope in Scope:
        members = arm if scope is Scope.POOLED else [r for r in arm if scope_of(r) is scope]
        for axis in OBSERVATION_AXES.values():
            group = [r for r in members if OBSERVATION_AXES.get(r.defect_class) == axis]
            if group:
                out.append(_recall_row(scope, axis, group))
    return out


# --- controls -----------------------------------------------------------------------------


@dataclass(frozen=True)
class SpecificityRow:
    """Controls are not defects: a control flagged (detected) is a false positive. The
    unflagged share is the specificity, the flagged share the false-positive rate."""

    arm: str
    operator: str
    counts: Counts
    specificity: Rate  # not flagged / n
    false_positive: Rate  # flagged / n


def _specificity_row(arm: str, operator: str, rows: list[LedgerRow]) -> SpecificityRow:
    denominator = scored(rows)
    return SpecificityRow(
        arm, operator, count(rows), rate(denominator, not_flagged), rate(denominator, detected)
    )


def control_specificity(rows: Iterable[LedgerRow]) -> list[SpecificityRow]:
    """Per control arm: each operator, then all; then both arms pooled."""
    rows = list(rows)
    out: list[SpecificityRow] = []
    pooled: list[LedgerRow] = []
    for kind in (ArmKind.CONTROLS, ArmKind.NEGATIVE_CONTROLS):
        members = of_kind(rows, kind)
        if not members:
            continue
        pooled += members
        for operator, group in by_operator(members).items():
            out.append(_specificity_row(kind.value, operator, group))
        out.append(_specificity_row(kind.value, ALL, members))
    if pooled:
        out.append(_specificity_row(ALL, ALL, pooled))
    return out


# --- flag precision -----------------------------------------------------------------------


def correct_flag(row: LedgerRow) -> bool:
    """A flag (detected) is correct on a mutant, and on a negative control only when the
    plan predicted it to VIOLATE; on a control, or a negative control predicted to CONFORM
    (or to be UNTESTABLE), it is a false flag."""
    kind = arm_kind(row)
    if kind is ArmKind.CONTROLS:
        return False
    if kind is ArmKind.NEGATIVE_CONTROLS:
        return row.predicted is Verdict.VIOLATES
    return True


@dataclass(frozen=True)
class FlagPrecisionRow:
    """Precision over flags: correct flags / all flags (DESIGN.md, Statistics)."""

    scope: Scope
    on_mutants: int  # flags on closed- and open-world pairs
    on_controls: int
    on_negative_controls: int
    precision: Rate  # correct flags / flags, clusters = tools
    post_hoc: bool

    @property
    def flags(self) -> int:
        return self.precision.n

    @property
    def false_flags(self) -> int:
        return self.precision.n - self.precision.x


def _flag_row(scope: Scope, flags: list[LedgerRow]) -> FlagPrecisionRow:
    kinds = Counter(arm_kind(r) for r in flags)
    return FlagPrecisionRow(
        scope,
        kinds[ArmKind.CLOSED_WORLD] + kinds[ArmKind.OPEN_WORLD],
        kinds[ArmKind.CONTROLS],
        kinds[ArmKind.NEGATIVE_CONTROLS],
        rate(flags, correct_flag),
        any(r.post_hoc for r in flags),
    )


def flag_precision(rows: Iterable[LedgerRow]) -> list[FlagPrecisionRow]:
    """Per scope (real, toy — when they have flags — then pooled) over every flagged pair."""
    flags = [r for r in rows if r.status is PairStatus.DETECTED]
    if not flags:
        return []
    out = []
    for scope in Scope:
        members = flags if scope is Scope.POOLED else [r for r in flags if scope_of(r) is scope]
        if members:
            out.append(_flag_row(scope, members))
    return out


@dataclass(frozen=True)
class NegativeControlRow:
    control: str
    tool: str
    predicted: Verdict | None
    observed: Verdict | None
    status: PairStatus
    hit: bool
    detail: str  # why the prediction failed; empty on a hit
    post_hoc: bool


def negative_controls(rows: Iterable[LedgerRow]) -> list[NegativeControlRow]:
    out = []
    for row in of_kind(rows, ArmKind.NEGATIVE_CONTROLS):
        hit = row.predicted is not None and row.tool_verdict is row.predicted
        if hit:
            detail = ""
        elif row.witness is not None:
            detail = row.witness.detail
        elif row.tool_verdict is None:
            detail = f"no verdict ({row.status.value}{': ' + row.error if row.error else ''})"
        else:
            detail = row.error or ""
        out.append(
            NegativeControlRow(
                row.operator,
                row.tool,
                row.predicted,
                row.tool_verdict,
                row.status,
                hit,
                detail,
                row.post_hoc,
            )
        )
    return sorted(out, key=lambda r: (r.control, r.tool))


# --- open world ---------------------------------------------------------------------------


@dataclass(frozen=True)
class EscapeRow:
    """Escape rate = escapes / live pairs (a pair that is not live cannot escape)."""

    operator: str
    counts: Counts
    escape: Rate


def _escape_row(operator: str, rows: list[LedgerRow]) -> EscapeRow:
    live = [r for r in scored(rows) if r.live]
    return EscapeRow(operator, count(rows), rate(live, is_escape))


def family_of(operator: str) -> str:
    """`CR-core/ReplaceBinaryOperator_Add_Sub` → `CR-core`; `MM-string` → `MM`."""
    head = operator.split("/", 1)[0]
    return head if "/" in operator else head.split("-", 1)[0]


def open_world_escapes(rows: Iterable[LedgerRow]) -> list[EscapeRow]:
    """Each operator, then each family (`<family>/*`), then all."""
    arm = of_kind(rows, ArmKind.OPEN_WORLD)
    if not arm:
        return []
    out = [_escape_row(op, group) for op, group in by_operator(arm).items()]
    families: dict[str, list[LedgerRow]] = defaultdict(list)
    for row in arm:
        families[family_of(row.operator)].append(row)
    out += [_escape_row(f"{family}/*", group) for family, group in sorted(families.items())]
    out.append(_escape_row(ALL, arm))
    return out


@dataclass(frozen=True)
class MissCauseRow:
    cause: str
    escapes: int
    misses: int
    share_of_escapes: float | None


UNKNOWN_CAUSE = "unknown"


def escape_causes(rows: Iterable[LedgerRow]) -> list[MissCauseRow]:
    """Open-world misses by cause (every cause listed, in DESIGN.md's order)."""
    misses = [r for r in of_kind(rows, ArmKind.OPEN_WORLD) if r.status is PairStatus.MISSED]
    if not misses:
        return []
    cause = Counter(r.miss_cause.value if r.miss_cause else UNKNOWN_CAUSE for r in misses)
    escaped = Counter(
        r.miss_cause.value if r.miss_cause else UNKNOWN_CAUSE for r in misses if is_escape(r)
    )
    total = sum(escaped.values())
    names = [c.value for c in MissCause] + ([UNKNOWN_CAUSE] if cause[UNKNOWN_CAUSE] else [])
    return [
        MissCauseRow(name, escaped[name], cause[name], escaped[name] / total if total else None)
        for name in names
    ]


@dataclass(frozen=True)
class CauseCountRow:
    """A closed-world (scope, operator)'s misses split by cause, every cause counted."""

    scope: Scope
    operator: str
    misses: int
    causes: tuple[tuple[str, int], ...]  # (cause, misses), in DESIGN.md's order
    post_hoc: bool

    def of(self, cause: str) -> int:
        return dict(self.causes).get(cause, 0)


def _cause_count_row(scope: Scope, operator: str, rows: list[LedgerRow]) -> CauseCountRow:
    misses = [r for r in rows if r.status is PairStatus.MISSED]
    found = Counter(r.miss_cause.value if r.miss_cause else UNKNOWN_CAUSE for r in misses)
    names = [c.value for c in MissCause] + [UNKNOWN_CAUSE]
    return CauseCountRow(
        scope,
        operator,
        len(misses),
        tuple((name, found[name]) for name in names),
        any(r.post_hoc for r in rows),
    )


def closed_world_miss_causes(rows: Iterable[LedgerRow]) -> list[CauseCountRow]:
    """Per scope (real, toy, pooled, as in `closed_world_recall`): each operator, then all.
    Empty when the closed-world arm has no miss."""
    arm = of_kind(rows, ArmKind.CLOSED_WORLD)
    if not any(r.status is PairStatus.MISSED for r in arm):
        return []
    out: list[CauseCountRow] = []
    for scope in Scope:
        members = arm if scope is Scope.POOLED else [r for r in arm if scope_of(r) is scope]
        if not members:
            continue
        for operator, group in by_operator(members).items():
            out.append(_cause_count_row(scope, operator, group))
        out.append(_cause_count_row(scope, ALL, members))
    return out


# --- per tool -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolRow:
    arm: str
    target: str
    tool: str
    counts: Counts
    detection: Rate


def per_tool(rows: Iterable[LedgerRow]) -> list[ToolRow]:
    groups: dict[tuple[str, str, str], list[LedgerRow]] = defaultdict(list)
    for row in rows:
        groups[(arm_kind(row).value, row.target, row.tool)].append(row)
    return [
        ToolRow(arm, target, tool, count(group), rate(scored(group), detected))
        for (arm, target, tool), group in sorted(groups.items())
    ]


# --- grader arm ---------------------------------------------------------------------------

GRADER_ARMS = (ArmKind.CLOSED_WORLD, ArmKind.OPEN_WORLD)  # the arms that inject defects


def with_grader(rows: Iterable[LedgerRow]) -> list[LedgerRow]:
    """Closed- and open-world pairs in the denominator that carry a grader verdict
    (`grader_caught` not null: the target has its own grader and the replay ran)."""
    return [
        r
        for r in rows
        if r.grader_caught is not None and r.status.in_denominator and arm_kind(r) in GRADER_ARMS
    ]


def grader_caught(row: LedgerRow) -> bool:
    return bool(row.grader_caught)


@dataclass(frozen=True)
class GraderRow:
    """The checker and the target's own grader on the same pairs; the four cells of their
    agreement (`both + checker_only + grader_only + neither == n`)."""

    arm: str
    operator: str
    checker: Rate  # detected / n
    grader: Rate  # grader caught / n
    both: int
    checker_only: int
    grader_only: int
    neither: int
    post_hoc: bool

    @property
    def n(self) -> int:
        return self.checker.n


def _grader_row(arm: str, operator: str, rows: list[LedgerRow]) -> GraderRow:
    cells = Counter((detected(r), grader_caught(r)) for r in rows)
    return GraderRow(
        arm,
        operator,
        rate(rows, detected),
        rate(rows, grader_caught),
        both=cells[(True, True)],
        checker_only=cells[(True, False)],
        grader_only=cells[(False, True)],
        neither=cells[(False, False)],
        post_hoc=any(r.post_hoc for r in rows),
    )


def grader_arm(rows: Iterable[LedgerRow]) -> list[GraderRow]:
    """Per defect-injecting arm with grader data: each operator, then all; then both arms
    pooled. Empty when no pair carries a grader verdict."""
    members = with_grader(rows)
    out: list[GraderRow] = []
    for kind in GRADER_ARMS:
        arm = [r for r in members if arm_kind(r) is kind]
        if not arm:
            continue
        for operator, group in by_operator(arm).items():
            out.append(_grader_row(kind.value, operator, group))
        out.append(_grader_row(kind.value, ALL, arm))
    if members:
        out.append(_grader_row(ALL, ALL, members))
    return out


def task_order(task_id: str) -> tuple[str, int, str]:
    """`user_task_2` before `user_task_10`: by stem, then number, then the id itself."""
    stem, _, number = task_id.rpartition("_")
    return (stem, int(number), task_id) if number.isdigit() else (task_id, -1, task_id)


@dataclass(frozen=True)
class GraderToolRow:
    """A tool's pairs with a grader verdict and the union of the tasks their mutants changed:
    the benchmark scores a defective tool corrupted, as observed."""

    target: str
    tool: str
    pairs: int
    caught: int
    tasks: tuple[str, ...]  # in task order
    post_hoc: bool


def grader_tasks_by_tool(rows: Iterable[LedgerRow]) -> list[GraderToolRow]:
    groups: dict[tuple[str, str], list[LedgerRow]] = defaultdict(list)
    for row in with_grader(rows):
        groups[(row.target, row.tool)].append(row)
    return [
        GraderToolRow(
            target,
            tool,
            len(group),
            sum(1 for r in group if grader_caught(r)),
            tuple(sorted({t for r in group for t in r.grader_tasks}, key=task_order)),
            any(r.post_hoc for r in group),
        )
        for (target, tool), group in sorted(groups.items())
    ]
