"""The ledger frame → counts and rates per arm, operator, scope and tool (DESIGN.md, Scoring).

Every count is a group-by over the typed columns of the frame `ledger_frame(rows, meta)`
builds (harness/analysis/frame.py, docs/ledger.md "The ledger as a frame"); the functions
return the typed rows the tables are built from. Only the per-row columns (`arm_kind`,
`scope_of`, `is_escape`) are defined here on a `LedgerRow`: the frame computes its columns
with them. The statuses and what counts in a denominator come from `PairStatus`. A pair's
tool (within its target) is its cluster for the design effect.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property

import numpy as np
import pandas as pd

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
from harness.execution.plan import TOY_TARGET

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
    """The arm kind of a row: its arm when that names a kind, else its operator's family."""
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
    """Toy when the row's target is the toy domain, else real."""
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


# A success: a frame → a bool Series over its rows (the numerator of a rate).
Success = Callable[[pd.DataFrame], pd.Series]


def _flag(column: pd.Series) -> pd.Series:
    """A nullable boolean column as plain bool, <NA> counted as False."""
    return column.fillna(False).astype(bool)


def _bools(column: pd.Series) -> np.ndarray:
    """A bool or nullable boolean column as a numpy bool array, <NA> counted as False."""
    return column.to_numpy(dtype=bool, na_value=False)


def count(frame: pd.DataFrame) -> Counts:
    """The outcome counts of the frame's pairs (numpy reductions over its columns: the
    tables call this hundreds of times on small slices, where pandas' per-call cost
    dominates)."""
    status = frame["status"]
    statuses = dict(
        zip(
            status.cat.categories,
            np.bincount(status.cat.codes.to_numpy(), minlength=len(status.cat.categories)),
            strict=True,
        )
    )
    in_n = _bools(frame["in_n"])
    scored_detected = in_n & _bools(frame["detected"])
    return Counts(
        detected=int(statuses[PairStatus.DETECTED.value]),
        missed=int(statuses[PairStatus.MISSED.value]),
        untestable=int(statuses[PairStatus.UNTESTABLE.value]),
        error=int(
            sum(statuses[s.value] for s in PairStatus if s.undecided)
            - statuses[PairStatus.UNTESTABLE.value]
        ),
        infra=int((~in_n).sum()),
        class_matched=int((scored_detected & _bools(frame["class_matched"])).sum()),
        live=int((in_n & _bools(frame["live"])).sum()),
        escapes=int((in_n & _bools(frame["escape"])).sum()),
        mutants=int(frame["mutant_id"].nunique()),
        post_hoc=bool(_bools(frame["post_hoc"]).any()),
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


# The columns the counts read: the tables slice the frame hundreds of times, and a slice
# copies every column it keeps.
COUNTED = [
    "mutant_id",
    "target",
    "tool",
    "arm",
    "arm_kind",
    "scope",
    "operator",
    "defect_class",
    "status",
    "in_n",
    "detected",
    "undecided",
    "class_matched",
    "live",
    "escape",
    "miss_cause",
    "grader_caught",
    "grader_task_ids",
    "predicted",
    "post_hoc",
]


def counted(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with only the columns the counts read (`COUNTED`)."""
    return frame[COUNTED]


def groups(frame: pd.DataFrame, by: list[str]) -> list[tuple[tuple[str, ...], pd.DataFrame]]:
    """The frame's non-empty groups by the columns `by`, keyed by their values as strings, in
    sorted key order."""
    if frame.empty:
        return []
    found = frame.groupby(by, observed=True, sort=False)
    return sorted(
        ((tuple(str(k) for k in key), group) for key, group in found), key=lambda kv: kv[0]
    )


def clusters_of(frame: pd.DataFrame, success: Success) -> list[tuple[int, int]]:
    """(successes, size) per (target, tool), in sorted order: a group-by on the two
    categorical columns' codes (numpy, for the same reason as `count`)."""
    if frame.empty:
        return []
    target, tool = frame["target"].cat, frame["tool"].cat
    key = target.codes.to_numpy(dtype=np.int64) * len(tool.categories) + tool.codes.to_numpy()
    cells, cell = np.unique(key, return_inverse=True)
    sizes = np.bincount(cell, minlength=len(cells))
    successes = np.bincount(cell, weights=_bools(success(frame)), minlength=len(cells))
    names = [
        (
            str(target.categories[k // len(tool.categories)]),
            str(tool.categories[k % len(tool.categories)]),
        )
        for k in cells
    ]
    return [(int(s), int(n)) for _, s, n in sorted(zip(names, successes, sizes, strict=True))]


def rate(frame: pd.DataFrame, success: Success) -> Rate:
    """The rate of `success` among the frame's pairs (which must all be in the denominator)."""
    clusters = clusters_of(frame, success)
    x = sum(s for s, _ in clusters)
    n = len(frame)
    return Rate(x, n, wilson_interval(x, n), clustered_wilson(x, clusters), tuple(clusters))


def scored(frame: pd.DataFrame) -> pd.DataFrame:
    """The pairs in the denominator (every status but infra_error)."""
    return frame[frame["in_n"]]


def detected(frame: pd.DataFrame) -> pd.Series:
    return frame["detected"]


def not_flagged(frame: pd.DataFrame) -> pd.Series:
    return ~frame["detected"]


def class_matched(frame: pd.DataFrame) -> pd.Series:
    """Detected with the operator's own class."""
    return frame["detected"] & _flag(frame["class_matched"])


def escaped(frame: pd.DataFrame) -> pd.Series:
    return frame["escape"]


def by_operator(frame: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(operator, its pairs), by operator name."""
    return [(key[0], group) for key, group in groups(frame, ["operator"])]


def of_kind(frame: pd.DataFrame, kind: ArmKind) -> pd.DataFrame:
    return frame[frame["arm_kind"] == kind.value]


def in_scope(frame: pd.DataFrame, scope: Scope) -> pd.DataFrame:
    """The pairs of a scope; the pooled scope is every pair."""
    return frame if scope is Scope.POOLED else frame[frame["scope"] == scope.value]


def _status_is(frame: pd.DataFrame, status: PairStatus) -> pd.Series:
    return frame["status"] == status.value


# --- closed world -------------------------------------------------------------------------


@dataclass(frozen=True)
class RecallRow:
    scope: Scope
    operator: str
    counts: Counts
    recall: Rate
    class_matched: Rate


def _recall_row(scope: Scope, operator: str, frame: pd.DataFrame) -> RecallRow:
    denominator = scored(frame)
    return RecallRow(
        scope, operator, count(frame), rate(denominator, detected), rate(denominator, class_matched)
    )


def closed_world_recall(frame: pd.DataFrame) -> list[RecallRow]:
    """Per scope (real, toy — when it has pairs — then pooled): each operator, then all."""
    frame = counted(frame)
    arm = of_kind(frame, ArmKind.CLOSED_WORLD)
    out: list[RecallRow] = []
    for scope in Scope:
        members = in_scope(arm, scope)
        if members.empty:
            continue
        for operator, group in by_operator(members):
            out.append(_recall_row(scope, operator, group))
        out.append(_recall_row(scope, ALL, members))
    return out


# The two axes of an observation clause, by the defect class an operator instantiates.
OBSERVATION_AXES: dict[DefectClass, str] = {
    DefectClass.VALIDITY_BREAK: "validity",
    DefectClass.INTEGRITY_BREAK: "integrity",
}


def observation_axis_recall(frame: pd.DataFrame) -> list[RecallRow]:
    """Closed-world pairs whose operator instantiates an observation axis, per scope (as in
    `closed_world_recall`): one row per axis (validity, integrity), named by the axis."""
    frame = counted(frame)
    arm = of_kind(frame, ArmKind.CLOSED_WORLD)
    axis = arm["defect_class"].map({c.value: a for c, a in OBSERVATION_AXES.items()})
    arm = arm.assign(axis=axis.astype(object))[axis.notna()]
    out: list[RecallRow] = []
    for scope in Scope:
        members = in_scope(arm, scope)
        for name in OBSERVATION_AXES.values():
            group = members[members["axis"] == name]
            if not group.empty:
                out.append(_recall_row(scope, name, group))
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


def _specificity_row(arm: str, operator: str, frame: pd.DataFrame) -> SpecificityRow:
    denominator = scored(frame)
    return SpecificityRow(
        arm, operator, count(frame), rate(denominator, not_flagged), rate(denominator, detected)
    )


CONTROL_ARMS = (ArmKind.CONTROLS, ArmKind.NEGATIVE_CONTROLS)


def control_specificity(frame: pd.DataFrame) -> list[SpecificityRow]:
    """Per control arm: each operator, then all; then both arms pooled."""
    frame = counted(frame)
    out: list[SpecificityRow] = []
    for kind in CONTROL_ARMS:
        members = of_kind(frame, kind)
        if members.empty:
            continue
        for operator, group in by_operator(members):
            out.append(_specificity_row(kind.value, operator, group))
        out.append(_specificity_row(kind.value, ALL, members))
    pooled = frame[frame["arm_kind"].isin([k.value for k in CONTROL_ARMS])]
    if not pooled.empty:
        out.append(_specificity_row(ALL, ALL, pooled))
    return out


# --- flag precision -----------------------------------------------------------------------


def correct_flag(frame: pd.DataFrame) -> pd.Series:
    """A flag (detected) is correct on a mutant, and on a negative control only when the
    plan predicted it to VIOLATE; on a control, or a negative control predicted to CONFORM
    (or to be UNTESTABLE), it is a false flag."""
    kind = frame["arm_kind"]
    negative = kind == ArmKind.NEGATIVE_CONTROLS.value
    violates = frame["predicted"] == Verdict.VIOLATES.value
    return (kind != ArmKind.CONTROLS.value) & (~negative | violates)


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


def _flag_row(scope: Scope, flags: pd.DataFrame) -> FlagPrecisionRow:
    kinds = flags["arm_kind"].value_counts()  # every kind, zero where absent
    return FlagPrecisionRow(
        scope,
        int(kinds[ArmKind.CLOSED_WORLD.value] + kinds[ArmKind.OPEN_WORLD.value]),
        int(kinds[ArmKind.CONTROLS.value]),
        int(kinds[ArmKind.NEGATIVE_CONTROLS.value]),
        rate(flags, correct_flag),
        bool(flags["post_hoc"].any()),
    )


def flag_precision(frame: pd.DataFrame) -> list[FlagPrecisionRow]:
    """Per scope (real, toy — when they have flags — then pooled) over every flagged pair."""
    frame = counted(frame)
    flags = frame[frame["detected"]]
    if flags.empty:
        return []
    out = []
    for scope in Scope:
        members = in_scope(flags, scope)
        if not members.empty:
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


def _value(cell: object) -> str | None:
    """A frame cell as text; <NA> / NaN as None."""
    return None if pd.isna(cell) else str(cell)


def _verdict(cell: object) -> Verdict | None:
    text = _value(cell)
    return Verdict(text) if text is not None else None


def negative_controls(frame: pd.DataFrame) -> list[NegativeControlRow]:
    """One row per negative-control pair: the predicted and the observed verdict, and why a
    prediction failed (the witness, or the status and error when there is no verdict)."""
    out = []
    columns = ["operator", "tool", "predicted", "tool_verdict", "status", "witness", "error"]
    arm = of_kind(frame, ArmKind.NEGATIVE_CONTROLS)
    for operator, tool, predicted, observed, status, witness, error, post_hoc in zip(
        *(arm[c].tolist() for c in columns), arm["post_hoc"].tolist(), strict=True
    ):
        predicted, observed, error = _verdict(predicted), _verdict(observed), _value(error)
        status = PairStatus(status)
        hit = predicted is not None and observed is predicted
        if hit:
            detail = ""
        elif (witness := _value(witness)) is not None:
            detail = witness
        elif observed is None:
            detail = f"no verdict ({status.value}{': ' + error if error else ''})"
        else:
            detail = error or ""
        out.append(
            NegativeControlRow(
                str(operator), str(tool), predicted, observed, status, hit, detail, bool(post_hoc)
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


def _escape_row(operator: str, frame: pd.DataFrame) -> EscapeRow:
    live = frame[_bools(frame["in_n"]) & _bools(frame["live"])]
    return EscapeRow(operator, count(frame), rate(live, escaped))


def family_of(operator: str) -> str:
    """`CR-core/ReplaceBinaryOperator_Add_Sub` → `CR-core`; `MM-string` → `MM`."""
    head = operator.split("/", 1)[0]
    return head if "/" in operator else head.split("-", 1)[0]


GENERATORS = {"CR": "Cosmic Ray", "MM": "mutmut"}  # an open-world operator's name prefix


def generator_of(operator: str) -> str:
    """`CR-core/NumberReplacer` → `Cosmic Ray`; `MM-string` → `mutmut`; else the prefix."""
    head = family_of(operator).split("-", 1)[0]
    return GENERATORS.get(head, head)


def escape_label(row: EscapeRow, operators: Sequence[str]) -> str:
    """The operator cell of an escape row: the `all` row says loudly when it pools several
    generators (their operators are not one population: never read it as one)."""
    generators = sorted({generator_of(op) for op in operators})
    if row.operator != ALL or len(generators) < 2:
        return row.operator
    return f"all (POOLED GENERATORS: {' + '.join(generators)})"


def open_world_escapes(frame: pd.DataFrame) -> list[EscapeRow]:
    """Each operator, then each family (`<family>/*`), then all."""
    frame = counted(frame)
    arm = of_kind(frame, ArmKind.OPEN_WORLD)
    if arm.empty:
        return []
    out = [_escape_row(op, group) for op, group in by_operator(arm)]
    families = arm.assign(family=arm["operator"].astype(str).map(family_of))
    out += [_escape_row(f"{key[0]}/*", group) for key, group in groups(families, ["family"])]
    out.append(_escape_row(ALL, arm))
    return out


@dataclass(frozen=True)
class MissCauseRow:
    cause: str
    escapes: int
    misses: int
    share_of_escapes: float | None


UNKNOWN_CAUSE = "unknown"


def _causes(frame: pd.DataFrame) -> dict[str, int]:
    """Misses per cause (`unknown` for a miss with none); causes with none left out."""
    found = frame["miss_cause"].astype(object).fillna(UNKNOWN_CAUSE).value_counts()
    return {str(cause): int(n) for cause, n in found.items()}


def escape_causes(frame: pd.DataFrame) -> list[MissCauseRow]:
    """Open-world misses by cause (every cause listed, in DESIGN.md's order)."""
    frame = counted(frame)
    arm = of_kind(frame, ArmKind.OPEN_WORLD)
    misses = arm[_status_is(arm, PairStatus.MISSED)]
    if misses.empty:
        return []
    cause = _causes(misses)
    escaped_cause = _causes(misses[misses["escape"]])
    total = sum(escaped_cause.values())
    names = [c.value for c in MissCause] + ([UNKNOWN_CAUSE] if cause.get(UNKNOWN_CAUSE) else [])
    return [
        MissCauseRow(
            name,
            escaped_cause.get(name, 0),
            cause.get(name, 0),
            escaped_cause.get(name, 0) / total if total else None,
        )
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


def _cause_count_row(scope: Scope, operator: str, frame: pd.DataFrame) -> CauseCountRow:
    misses = frame[_status_is(frame, PairStatus.MISSED)]
    found = _causes(misses)
    names = [c.value for c in MissCause] + [UNKNOWN_CAUSE]
    return CauseCountRow(
        scope,
        operator,
        len(misses),
        tuple((name, found.get(name, 0)) for name in names),
        bool(frame["post_hoc"].any()),
    )


def closed_world_miss_causes(frame: pd.DataFrame) -> list[CauseCountRow]:
    """Per scope (real, toy, pooled, as in `closed_world_recall`): each operator, then all.
    Empty when the closed-world arm has no miss."""
    frame = counted(frame)
    arm = of_kind(frame, ArmKind.CLOSED_WORLD)
    if not _status_is(arm, PairStatus.MISSED).any():
        return []
    out: list[CauseCountRow] = []
    for scope in Scope:
        members = in_scope(arm, scope)
        if members.empty:
            continue
        for operator, group in by_operator(members):
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


def per_tool(frame: pd.DataFrame) -> list[ToolRow]:
    """Per (arm kind, target, tool), in that order."""
    frame = counted(frame)
    return [
        ToolRow(arm, target, tool, count(group), rate(scored(group), detected))
        for (arm, target, tool), group in groups(frame, ["arm_kind", "target", "tool"])
    ]


# --- grader arm ---------------------------------------------------------------------------

GRADER_ARMS = (ArmKind.CLOSED_WORLD, ArmKind.OPEN_WORLD)  # the arms that inject defects


def with_grader(frame: pd.DataFrame) -> pd.DataFrame:
    """Closed- and open-world pairs in the denominator that carry a grader verdict
    (`grader_caught` not null: the target has its own grader and the replay ran)."""
    injected = frame["arm_kind"].isin([k.value for k in GRADER_ARMS])
    return frame[frame["grader_caught"].notna() & frame["in_n"] & injected]


def grader_caught(frame: pd.DataFrame) -> pd.Series:
    return _flag(frame["grader_caught"])


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


def _grader_row(arm: str, operator: str, frame: pd.DataFrame) -> GraderRow:
    checker, grader = detected(frame), grader_caught(frame)
    return GraderRow(
        arm,
        operator,
        rate(frame, detected),
        rate(frame, grader_caught),
        both=int((checker & grader).sum()),
        checker_only=int((checker & ~grader).sum()),
        grader_only=int((~checker & grader).sum()),
        neither=int((~checker & ~grader).sum()),
        post_hoc=bool(frame["post_hoc"].any()),
    )


def grader_arm(frame: pd.DataFrame) -> list[GraderRow]:
    """Per defect-injecting arm with grader data: each operator, then all; then both arms
    pooled. Empty when no pair carries a grader verdict."""
    frame = counted(frame)
    members = with_grader(frame)
    out: list[GraderRow] = []
    for kind in GRADER_ARMS:
        arm = of_kind(members, kind)
        if arm.empty:
            continue
        for operator, group in by_operator(arm):
            out.append(_grader_row(kind.value, operator, group))
        out.append(_grader_row(kind.value, ALL, arm))
    if not members.empty:
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


def _task_union(ids: pd.Series) -> tuple[str, ...]:
    """The union of comma-separated task-id lists, in task order."""
    tasks = {t for text in ids.dropna() for t in str(text).split(", ") if t}
    return tuple(sorted(tasks, key=task_order))


def grader_tasks_by_tool(frame: pd.DataFrame) -> list[GraderToolRow]:
    """Per (target, tool) with grader data: pairs, pairs the grader caught, the tasks."""
    frame = counted(frame)
    return [
        GraderToolRow(
            target,
            tool,
            len(group),
            int(grader_caught(group).sum()),
            _task_union(group["grader_task_ids"]),
            bool(group["post_hoc"].any()),
        )
        for (target, tool), group in groups(with_grader(frame), ["target", "tool"])
    ]
