"""The observation failure labels: the 15 of the taxonomy observation clauses come from, and
the most-severe rule that gives a tool breaking several observation clauses one primary
label.

Severities (lower = more severe) are the published ones where the table ranks a label:
expired_before_use -1.0, mutated_token -1.0, shortcut_taken -0.9, wrong_value -0.8,
missing_constraint -0.7, rate_limited -0.5, other -0.3.
Rule for the labels the table does not rank: an unranked *failure* label (the other validity
and integrity labels) counts as severe as `other` (-0.3): a failure the table does not
grade, never assumed worse than one it does; `success` is 0.0 and is never primary while a
failure label is present. Ties go to the published label first, then to a specific label
before `other`, then to the order of `LABELS` (validity, integrity, meta as listed).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, get_args

FailureLabel = Literal[
    # validity
    "expired_before_use",
    "rate_limited",
    "scheduled_unavailable",
    "version_conflict",
    # integrity
    "wrong_value",
    "missing_constraint",
    "mutated_token",
    "signature_mismatch",
    "compensation_failure",
    "wrong_hash",
    "shortcut_taken",
    "missing_token",
    "backoff_violation",
    # meta
    "success",
    "other",
]
LABELS: tuple[str, ...] = get_args(FailureLabel)

PUBLISHED_SEVERITY: dict[str, float] = {
    "expired_before_use": -1.0,
    "mutated_token": -1.0,
    "shortcut_taken": -0.9,
    "wrong_value": -0.8,
    "missing_constraint": -0.7,
    "rate_limited": -0.5,
    "other": -0.3,
}
UNRANKED_FAILURE_SEVERITY = PUBLISHED_SEVERITY["other"]
SUCCESS_SEVERITY = 0.0


def severity(label: str) -> float:
    """The label's severity by the module rule; a label outside `LABELS` is an error."""
    if label not in LABELS:
        raise ValueError(f"unknown observation label {label!r}; known: {', '.join(LABELS)}")
    if label in PUBLISHED_SEVERITY:
        return PUBLISHED_SEVERITY[label]
    return SUCCESS_SEVERITY if label == "success" else UNRANKED_FAILURE_SEVERITY


def _rank(label: str) -> tuple[float, int, int, int]:
    return (
        severity(label),
        0 if label in PUBLISHED_SEVERITY and label != "other" else 1,
        1 if label == "other" else 0,
        LABELS.index(label),
    )


def primary_label(labels: Iterable[str | None]) -> str | None:
    """The most severe of `labels` (None entries ignored); None when there is none."""
    present = [label for label in labels if label is not None]
    return min(present, key=_rank) if present else None
