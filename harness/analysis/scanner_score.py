"""The static scanner scored against a ledger of confirmed defect sites.

A *confirmed site* (`sites/<benchmark>.yaml`) is a span of lines of a target's source where a
person, reading the source after the checker's baseline witness, confirmed a defect. A scan
flag is *on* a site when it names the same file and its line lies in the site's span
[line, end_line]. Per target: sites flagged / sites (recall of the scanner alone, also for the
agent-visible sites only) and flags elsewhere (flags on no confirmed site: leads no witness
confirmed, not necessarily false).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from harness.checker.verdicts import DefectClass
from harness.contracts.loader import problems_from_validation, read_yaml
from harness.contracts.model import Tier
from harness.errors import Problem, UserError
from harness.scanner import ScanFlag, scan_target
from harness.targets.registry import load_target

SITES_SCHEMA_VERSION = 1


class ConfirmedSite(BaseModel):
    """One defect a person confirmed in the source, with the witness that shows it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    target: str
    tool: str = Field(description="the tool whose call shows the defect")
    file: str = Field(description="relative to the target's source root, as scan flags name it")
    function: str = Field(description="qualified name of the function holding the lines")
    line: int = Field(ge=1)
    end_line: int | None = Field(default=None, description="last line of the span (default: line)")
    defect_class: DefectClass
    tier: Tier = Field(description="the tier of the promise broken (the baseline finding's)")
    clauses: list[str] = Field(min_length=1, description="the baseline's violated clause ids")
    witness: str = Field(min_length=1, description="the call and what it showed")
    reading: str = Field(min_length=1, description="what the source does there, and why")

    @model_validator(mode="after")
    def _span(self) -> ConfirmedSite:
        if self.end_line is not None and self.end_line < self.line:
            raise ValueError("end_line must not be before line")
        return self

    @property
    def last_line(self) -> int:
        return self.end_line or self.line

    def holds(self, flag: ScanFlag) -> bool:
        return flag.file == self.file and self.line <= flag.line <= self.last_line


class SiteLedger(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    schema_version: Literal[1] = SITES_SCHEMA_VERSION
    description: str
    sites: list[ConfirmedSite]


class TargetScore(BaseModel):
    """The scanner on one target: confirmed sites flagged, and flags elsewhere."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    target: str
    sites: int
    sites_flagged: int
    agent_visible_sites: int
    agent_visible_flagged: int
    flags: int
    flags_on_sites: int
    flags_elsewhere: int
    flagged_site_ids: list[str]
    missed_site_ids: list[str]
    elsewhere: list[str] = Field(description="file:line function check of each flag elsewhere")


def load_sites(path: Path) -> SiteLedger:
    data = read_yaml(path)
    try:
        ledger = SiteLedger.model_validate(data)
    except ValidationError as exc:
        raise UserError(problems_from_validation(str(path), exc, data)) from exc
    problems = []
    seen: set[str] = set()
    for index, site in enumerate(ledger.sites):
        where = f"sites[{index}] ({site.id})"
        if site.id in seen:
            problems.append(Problem(str(path), where, "id used twice", "give each site its own id"))
        seen.add(site.id)
        adapter = load_target(site.target).adapter
        if site.tool not in adapter.tool_names():
            problems.append(
                Problem(str(path), where, f"tool {site.tool} is not a tool of {site.target}", "fix")
            )
        source = adapter.source_root() / site.file
        if not source.is_file():
            problems.append(
                Problem(str(path), where, f"file {site.file} is not in the target's source", "fix")
            )
        elif site.last_line > len(source.read_text(encoding="utf-8").splitlines()):
            problems.append(
                Problem(str(path), where, f"lines {site.line}-{site.last_line} past the end", "fix")
            )
    if problems:
        raise UserError(problems)
    return ledger


def score_target(
    target: str, sites: Sequence[ConfirmedSite], flags: Sequence[ScanFlag]
) -> TargetScore:
    """The score of `flags` (one target's scan) against that target's `sites`."""
    flagged = [s for s in sites if any(s.holds(f) for f in flags)]
    visible = [s for s in sites if s.tier is Tier.AGENT_VISIBLE]
    on_sites = [f for f in flags if any(s.holds(f) for s in sites)]
    elsewhere = [f for f in flags if f not in on_sites]
    return TargetScore(
        target=target,
        sites=len(sites),
        sites_flagged=len(flagged),
        agent_visible_sites=len(visible),
        agent_visible_flagged=sum(1 for s in visible if s in flagged),
        flags=len(flags),
        flags_on_sites=len(on_sites),
        flags_elsewhere=len(elsewhere),
        flagged_site_ids=[s.id for s in flagged],
        missed_site_ids=[s.id for s in sites if s not in flagged],
        elsewhere=[f"{f.file}:{f.line} {f.function} {f.check}" for f in elsewhere],
    )


def score_scan(path: Path, targets: Sequence[str] | None = None) -> list[TargetScore]:
    """Scan each target of the ledger (or `targets`) whole and score it."""
    ledger = load_sites(path)
    names = list(targets) if targets else sorted({s.target for s in ledger.sites})
    return [
        score_target(
            name,
            [s for s in ledger.sites if s.target == name],
            scan_target(load_target(name)),
        )
        for name in names
    ]
