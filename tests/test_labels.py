"""The 15 observation labels and the most-severe primary-label rule (issue 18)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from harness.checker.verdicts import ClauseVerdict, DefectClass, ToolReport, Verdict
from harness.contracts.labels import LABELS, PUBLISHED_SEVERITY, primary_label, severity
from harness.contracts.model import ObservationClause

TAXONOMY = {
    "expired_before_use",
    "rate_limited",
    "scheduled_unavailable",
    "version_conflict",
    "wrong_value",
    "missing_constraint",
    "mutated_token",
    "signature_mismatch",
    "compensation_failure",
    "wrong_hash",
    "shortcut_taken",
    "missing_token",
    "backoff_violation",
    "success",
    "other",
}


def clause(label: str) -> dict:
    return {
        "id": "obs.x",
        "text": "t",
        "axis": "integrity",
        "label": label,
        "issued_by": "issue",
        "artifact": "token",
        "artifact_from": "token",
        "predicate": "args.token == issued.token",
        "inferred": True,
    }


@pytest.mark.parametrize("label", sorted(TAXONOMY))
def test_every_taxonomy_label_is_accepted(label: str) -> None:
    assert ObservationClause.model_validate(clause(label)).label == label


def test_the_label_set_is_the_taxonomy_and_nothing_else() -> None:
    assert set(LABELS) == TAXONOMY and len(LABELS) == 15
    with pytest.raises(ValidationError):
        ObservationClause.model_validate(clause("teapot"))


def test_published_severities() -> None:
    assert PUBLISHED_SEVERITY == {
        "expired_before_use": -1.0,
        "mutated_token": -1.0,
        "shortcut_taken": -0.9,
        "wrong_value": -0.8,
        "missing_constraint": -0.7,
        "rate_limited": -0.5,
        "other": -0.3,
    }


@pytest.mark.parametrize(
    ("labels", "primary"),
    [
        (["rate_limited", "wrong_value"], "wrong_value"),
        (["missing_constraint", "shortcut_taken", "rate_limited"], "shortcut_taken"),
        # equal published severity: the order of the taxonomy (validity first)
        (["mutated_token", "expired_before_use"], "expired_before_use"),
        # an unranked failure label counts as `other` and never outranks a published one
        (["signature_mismatch", "rate_limited"], "rate_limited"),
        # ... but is preferred to `other` itself, being specific
        (["other", "signature_mismatch"], "signature_mismatch"),
        # two unranked labels: taxonomy order
        (["wrong_hash", "version_conflict"], "version_conflict"),
        # success is never primary beside a failure
        (["success", "backoff_violation"], "backoff_violation"),
        (["success"], "success"),
        ([None, "other"], "other"),
        ([], None),
    ],
)
def test_primary_label_is_the_most_severe(labels: list, primary: str | None) -> None:
    assert primary_label(labels) == primary


def test_unranked_labels_rank_as_other_and_success_as_zero() -> None:
    for label in TAXONOMY - set(PUBLISHED_SEVERITY) - {"success"}:
        assert severity(label) == -0.3
    assert severity("success") == 0.0
    with pytest.raises(ValueError, match="unknown observation label"):
        severity("teapot")


def test_a_tool_breaking_several_observation_clauses_has_one_primary_label() -> None:
    def violated(clause_id: str, label: str) -> ClauseVerdict:
        return ClauseVerdict(
            clause_id=clause_id,
            verdict=Verdict.VIOLATES,
            defect_class=DefectClass.INTEGRITY_BREAK,
            label=label,
        )

    report = ToolReport(
        tool="t",
        verdict=Verdict.VIOLATES,
        clauses=[
            violated("obs.a", "signature_mismatch"),
            violated("obs.b", "expired_before_use"),
            ClauseVerdict(clause_id="eff.c", verdict=Verdict.CONFORMS),
        ],
    )
    assert report.primary_label() == "expired_before_use"
