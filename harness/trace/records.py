"""The records of `harness trace`: one row per (defect, task), the repairs and the result a
run of it returns. Below both `run` (which builds them) and `tables` (which renders them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from harness.mutation.model import Mutant
from harness.trace.basis import Basis
from harness.trace.controls import ControlRow
from harness.trace.readsites import ReadSite

TRACE_SCHEMA_VERSION = 1


class SiteRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: str
    path: str | None
    where: str
    note: str = ""


def site_record(site: ReadSite) -> SiteRecord:
    return SiteRecord(
        kind=site.kind.value,
        path=site.dotted() if site.path is not None else None,
        where=site.where,
        note=site.note,
    )


class TraceRow(BaseModel):
    """One (defect, task). A defect is one VIOLATES tool of the baseline with its violated
    clauses; `by_clause` keeps the basis of each clause apart."""

    model_config = ConfigDict(extra="forbid")
    schema_version: int = TRACE_SCHEMA_VERSION
    target: str
    target_version: str
    tool: str
    mutant_id: str | None = None  # set when the defect is a detected pair of a run
    clauses: list[str]
    defect_classes: list[str]
    fields: list[str]
    task: str
    basis: Basis
    by_clause: dict[str, Basis]
    grounding: str
    matched_sites: list[SiteRecord]  # the reads behind the basis
    unresolved_sites: list[SiteRecord]  # every read the extractor could not name
    gold_call: bool
    reached: bool | None  # None: no gold call, or the trigger could not be evaluated
    reaching_clauses: list[str]


class RepairRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")
    status: str  # validated; stale: the baseline has none of the clauses it repairs
    target: str
    tool: str
    repair: str
    clauses_repaired: list[str]
    still_violated: list[str]
    text: str
    diff: str
    construction: str | None
    could_not_hold: list[str]


@dataclass
class Defect:
    """A VIOLATES tool of a baseline, or a detected pair of a run (then `mutant` is the
    drawn mutant, applied while the gold paths are replayed)."""

    target: str
    target_version: str
    tool: str
    violations: list[dict[str, Any]]
    mutant: Mutant | None = None

    @property
    def clauses(self) -> list[str]:
        return [v["clause_id"] for v in self.violations]


@dataclass
class TraceResult:
    rows: list[TraceRow] = field(default_factory=list)
    repairs: list[RepairRecord] = field(default_factory=list)
    controls: list[ControlRow] = field(default_factory=list)
    source: str = ""
    freeze: str = "baseline"  # a run's freeze id when the defects are its detected pairs
