"""The verdict model every checker reports in: clause verdicts, tool roll-ups, reports."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from harness.contracts.labels import primary_label
from harness.defects import DefectClass

REPORT_SCHEMA_VERSION = 1


class Verdict(StrEnum):
    CONFORMS = "CONFORMS"
    VIOLATES = "VIOLATES"
    UNTESTABLE = "UNTESTABLE"


class UntestableReason(StrEnum):
    NO_OBSERVABLE_STATE = "no_observable_state"
    PREDICATE_TYPE_ERROR = "predicate_type_error"
    PREDICATE_BUDGET = "predicate_budget_exceeded"
    NO_RESET_PATH = "no_reset_path"
    ADAPTER_UNSUPPORTED = "adapter_unsupported"
    NO_LEGAL_PROBE = "no_legal_probe"
    NO_VIOLATING_PROBE = "no_violating_probe"
    NO_VARIANT_PROBE = "no_variant_probe"
    EFFECT_ABSENT_NOT_BICONDITIONAL = "effect_absent_not_biconditional"
    LEGAL_CALL_REFUSED = "legal_call_refused"
    NO_CONTRACT = "no_contract"
    CHECKER_ERROR = "checker_error"


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ProbeRecord(_Record):
    """One call from a fresh environment (or a step of a sequence)."""

    kind: str = Field(description="happy, violate:<clause>, variant:<arg>, joint_falsy, sequence")
    tool: str
    args: dict[str, Any]
    success: bool
    result: Any = None
    error_type: str | None = None
    error_message: str | None = None


class StateChange(_Record):
    path: str
    before: Any
    after: Any


class Witness(_Record):
    """Why a clause VIOLATES: the probes, the state diff, and a one-line account."""

    probes: list[ProbeRecord]
    state_diff: list[StateChange] = Field(default_factory=list)
    detail: str


class ClauseVerdict(_Record):
    clause_id: str
    verdict: Verdict
    defect_class: DefectClass | None = None
    reason: UntestableReason | None = None
    detail: str | None = None
    witness: Witness | None = None
    probes_graded: int = 0
    label: str | None = Field(
        default=None, description="Observation clauses: the HTTP/API failure label they cite"
    )


class ToolReport(_Record):
    tool: str
    verdict: Verdict
    clauses: list[ClauseVerdict]
    probes_run: int = 0

    def violations(self) -> list[ClauseVerdict]:
        return [c for c in self.clauses if c.verdict is Verdict.VIOLATES]

    def defect_classes(self) -> set[DefectClass]:
        return {c.defect_class for c in self.violations() if c.defect_class is not None}

    def primary_label(self) -> str | None:
        """The one label of a tool that breaks several observation clauses: the most severe
        of their labels (`harness.contracts.labels.primary_label`)."""
        return primary_label(c.label for c in self.violations())


class CheckReport(_Record):
    schema_version: int = REPORT_SCHEMA_VERSION
    checker: str
    checker_version: str
    target: str
    target_version: str
    tools: list[ToolReport]

    def tool(self, name: str) -> ToolReport:
        for report in self.tools:
            if report.tool == name:
                return report
        raise KeyError(name)


def roll_up(clauses: list[ClauseVerdict]) -> Verdict:
    """VIOLATES if any clause violates; UNTESTABLE only if no clause could be graded."""
    if any(c.verdict is Verdict.VIOLATES for c in clauses):
        return Verdict.VIOLATES
    if clauses and all(c.verdict is Verdict.UNTESTABLE for c in clauses):
        return Verdict.UNTESTABLE
    if not clauses:
        return Verdict.UNTESTABLE
    return Verdict.CONFORMS
