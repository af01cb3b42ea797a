"""The run as a mutation-testing-elements report (Stryker's JSON schema, version 1), so its
HTML viewer and dashboards can show which mutants the checker killed.

Only defect-injecting arms (closed world, open world) are listed: a control is not a
defect, so its "survival" is the right answer and would distort the mutation score; the
precision tables report controls. A mutant's id is its pair id (one mutant may be scored
against several tools); `killedBy` lists the clauses that newly VIOLATE.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from harness.analysis.scoring import ArmKind, arm_kind
from harness.execution.draw import Corpus
from harness.execution.ledger import LedgerRow, MissCause, PairStatus
from harness.mutation.model import FunctionSite

SCHEMA_VERSION = "1"
LANGUAGE = "python"
REPORTED_ARMS = (ArmKind.CLOSED_WORLD, ArmKind.OPEN_WORLD)

MutantStatus = Literal[
    "Killed", "Survived", "NoCoverage", "CompileError", "RuntimeError", "Timeout", "Ignored"
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Position(_Model):
    line: int  # 1-based
    column: int  # 1-based


class Location(_Model):
    start: Position  # inclusive
    end: Position  # exclusive


class MutantResult(_Model):
    id: str
    mutatorName: str  # the schema spells it so
    location: Location
    status: MutantStatus
    statusReason: str | None = None
    killedBy: list[str] | None = None
    description: str | None = None


class FileResult(_Model):
    language: str = LANGUAGE
    source: str
    mutants: list[MutantResult]


class Thresholds(_Model):
    """Mutation-score percentages the viewer colours by (Stryker's defaults)."""

    high: int = 80
    low: int = 60


class MutationTestReport(_Model):
    schemaVersion: str = SCHEMA_VERSION
    thresholds: Thresholds = Thresholds()
    files: dict[str, FileResult]
    config: dict[str, str | bool]


def status_of(row: LedgerRow) -> tuple[MutantStatus, str | None]:
    """The schema's status for a pair, and why (when the status alone does not say)."""
    match row.status:
        case PairStatus.DETECTED:
            return "Killed", row.witness.detail if row.witness else None
        case PairStatus.MISSED if row.miss_cause is MissCause.UNREACHED:
            return "NoCoverage", "unreached: not live on the independent corpus nor on any probe"
        case PairStatus.MISSED:
            cause = row.miss_cause.value if row.miss_cause else "unknown cause"
            return "Survived", f"missed: {cause}" + (f" ({row.error})" if row.error else "")
        case PairStatus.UNTESTABLE:
            return "Survived", "untestable: no clause of the tool could be graded"
        case PairStatus.TIMEOUT:
            return "Timeout", row.error
        case PairStatus.COMPILE_ERROR:
            return "CompileError", row.error
        case PairStatus.CRASH:
            return "RuntimeError", row.error
        case PairStatus.INFRA_ERROR:
            return "Ignored", f"infra_error (the harness failed, not the mutant): {row.error}"
    raise AssertionError(row.status)


def _location(site: FunctionSite | None, source: str) -> Location:
    if site is None:
        return Location(start=Position(line=1, column=1), end=Position(line=1, column=1))
    lines = source.splitlines()
    end_column = len(lines[site.end_line - 1]) + 1 if site.end_line <= len(lines) else 1
    return Location(
        start=Position(line=site.start_line, column=1),
        end=Position(line=site.end_line, column=end_column),
    )


def mutation_report(
    rows: Iterable[LedgerRow],
    corpus: Corpus | None,
    read_source: Callable[[str, str], str],
    config: dict[str, str | bool],
) -> MutationTestReport:
    """`read_source(target, file)` gives the installed file's text or "" (I/O stays outside).
    Without a corpus, each mutant sits at 1:1 of a file named `<target>/<tool>`."""
    sites = {p.pair_id: p.mutant.site for p in corpus.pairs} if corpus else {}
    files: dict[str, FileResult] = {}
    for row in sorted(rows, key=lambda r: r.pair_id):
        if arm_kind(row) not in REPORTED_ARMS:
            continue
        site = sites.get(row.pair_id)
        path = site.file if site else f"{row.target}/{row.tool}"
        if path not in files:
            files[path] = FileResult(
                source=read_source(row.target, site.file) if site else "", mutants=[]
            )
        status, reason = status_of(row)
        where = f"in {site.qualname}" if site else "(site unknown)"
        files[path].mutants.append(
            MutantResult(
                id=row.pair_id,
                mutatorName=row.operator,
                location=_location(site, files[path].source),
                status=status,
                statusReason=reason,
                killedBy=[v.clause_id for v in row.new_violations] if status == "Killed" else None,
                description=f"{row.operator} {where}, scored against tool {row.tool}",
            )
        )
    for file in files.values():
        file.mutants.sort(key=lambda m: (m.location.start.line, m.id))
    return MutationTestReport(files=dict(sorted(files.items())), config=config)
