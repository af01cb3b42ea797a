"""harness.execution.ledger: the row schema, its migration of older rows, the pair score."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from harness.execution.ledger import LEDGER_SCHEMA_VERSION, LedgerRow, PairScore, PairStatus

ROW = {
    "schema_version": LEDGER_SCHEMA_VERSION,
    "pair_id": "p1",
    "mutant_id": "m1",
    "tool": "transfer",
    "arm": "closed_world",
    "operator": "M-PHANTOM",
    "defect_class": "phantom_effect",
    "target": "toy_domain",
    "target_version": "1",
    "freeze_id": "f",
    "status": "missed",
    "timing": {"seconds": 0.1, "started_at": "2026-01-01T00:00:00+00:00"},
}


def test_a_version_one_row_is_migrated_to_not_graded() -> None:
    old = {**ROW, "schema_version": 1}
    row = LedgerRow.model_validate_json(json.dumps(old))
    assert (row.schema_version, row.grader_caught, row.grader_tasks) == (1, None, [])
    # read, dumped and read again (as report and the tests do): the same row
    assert LedgerRow.model_validate(row.model_dump(mode="json")) == row


def test_a_row_of_a_newer_schema_is_refused() -> None:
    with pytest.raises(ValidationError, match="newer than this harness reads"):
        LedgerRow.model_validate({**ROW, "schema_version": LEDGER_SCHEMA_VERSION + 1})


def test_a_pair_score_holds_exactly_the_row_fields_scoring_decides() -> None:
    row_fields = LedgerRow.model_fields
    for name, field in PairScore.model_fields.items():
        assert row_fields[name].annotation == field.annotation, name
    # what the runner knows without scoring the pair
    assert set(row_fields) - set(PairScore.model_fields) == {
        *("schema_version", "pair_id", "mutant_id", "tool", "arm", "operator"),
        *("defect_class", "target", "target_version", "freeze_id", "post_hoc"),
        *("predicted", "timing"),
    }
    with pytest.raises(ValidationError):
        PairScore(status=PairStatus.MISSED, pair_id="p1")  # type: ignore[call-arg]


def test_a_version_three_row_reads_as_not_recorded_even_if_it_carried_the_fields() -> None:
    """Version 4 added kill_vector, graded_clauses and new_violations[].probe: an older row
    has none of them recorded, whatever a hand edit put there."""
    old = {**ROW, "schema_version": 3, "kill_vector": [0], "graded_clauses": ["pre.x"]}
    row = LedgerRow.model_validate(old)
    assert (row.kill_vector, row.graded_clauses) == (None, None)
    new = LedgerRow.model_validate({**ROW, "kill_vector": [0, 2], "graded_clauses": ["pre.x"]})
    assert (new.schema_version, new.kill_vector, new.graded_clauses) == (4, [0, 2], ["pre.x"])
    assert LedgerRow.model_validate(new.model_dump(mode="json")) == new
