"""Which clause caught what (issue 29, item 4): per clause, the mutants it detected, those
only it detected, and the clauses that graded mutants but never detected one.

A clause detects a pair when it is among the pair's `new_violations` (a VIOLATES the
original's baseline lacked); it detects it alone when it is the only one. A clause covered
a pair when the checker graded it on the mutated tool (`graded_clauses`, ledger version 4).
Only defect-injecting arms count (closed world, open world): a control's "detection" is a
false flag, reported by the precision tables. Ledgers before version 4 record no graded
clauses: "never detected" cannot be told from "never graded" there, and the table says so.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from harness.analysis.runs import RunMeta
from harness.analysis.scoring import ArmKind, arm_kind
from harness.analysis.table_model import Column, Kind, Row, Table
from harness.execution.ledger import LedgerRow, PairStatus

DEFECT_ARMS = (ArmKind.CLOSED_WORLD, ArmKind.OPEN_WORLD)


@dataclass(frozen=True)
class ClauseYield:
    target: str
    tool: str
    clause_id: str
    covered: int | None  # None: not recorded (ledger before version 4)
    detected: int
    only: int


def clause_yield(rows: Sequence[LedgerRow]) -> list[ClauseYield]:
    """Every clause that detected or (where recorded) covered a defect pair, sorted by
    target, tool and clause."""
    defect = [r for r in rows if arm_kind(r) in DEFECT_ARMS and r.status.in_denominator]
    covered: dict[tuple[str, str, str], int] = defaultdict(int)
    detected: dict[tuple[str, str, str], int] = defaultdict(int)
    only: dict[tuple[str, str, str], int] = defaultdict(int)
    recorded = any(r.graded_clauses is not None for r in defect)
    for r in defect:
        for clause in r.graded_clauses or []:
            covered[(r.target, r.tool, clause)] += 1
        if r.status is not PairStatus.DETECTED:
            continue
        clauses = sorted({v.clause_id for v in r.new_violations})
        for clause in clauses:
            detected[(r.target, r.tool, clause)] += 1
        if len(clauses) == 1:
            only[(r.target, r.tool, clauses[0])] += 1
    keys = sorted(set(covered) | set(detected))
    return [
        ClauseYield(*key, covered.get(key, 0) if recorded else None, detected[key], only[key])
        for key in keys
    ]


def clause_yield_table(rows: Sequence[LedgerRow], meta: RunMeta) -> Table | None:
    found = clause_yield(rows)
    if not found:
        return None

    def never(c: ClauseYield) -> bool:  # graded defect pairs, detected none
        return bool(c.covered) and not c.detected

    recorded = any(c.covered is not None for c in found)
    columns = (
        Column("target", "target", Kind.TEXT),
        Column("tool", "tool", Kind.TEXT),
        Column("clause", "clause", Kind.TEXT),
        Column("covered", "covered", Kind.INT),
        Column("detected", "detected", Kind.INT),
        Column("only this clause", "only", Kind.INT),
    )
    ordered = sorted(found, key=lambda c: (never(c), c.target, c.tool, c.clause_id))
    body = tuple(
        Row(
            (c.target, c.tool, c.clause_id, c.covered, c.detected, c.only),
            section=int(never(c)),
        )
        for c in ordered
    )
    notes = [
        "Defect pairs only (closed and open world). detected: pairs whose new violations "
        "include the clause; only this clause: pairs it alone detected; covered: pairs on "
        "which the checker graded it (CONFORMS or VIOLATES).",
    ]
    if recorded:
        notes.append(
            f"{sum(map(never, found))} clauses graded defect pairs but never detected one "
            "(the rows after the rule)."
        )
    else:
        notes.append(
            "covered: not recorded (ledger before version 4): clauses that never detected "
            "anything cannot be listed."
        )
    return Table(
        "clause_yield",
        "Which clause caught what",
        meta.freeze_id,
        columns,
        body,
        notes=tuple(notes),
        run_post_hoc=meta.post_hoc,
    )
