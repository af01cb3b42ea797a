"""Every registered operator's examples (`Operator.examples`), run: a reader sees what each
operator does, and a change to what it does fails here first."""

from __future__ import annotations

import pytest

from harness.mutation.model import Operator, OperatorExample
from harness.mutation.registry import all_operators

OPERATORS = all_operators()
CASES = [
    pytest.param(operator, number, example, id=f"{name}#{number}")
    for name, operator in OPERATORS.items()
    for number, example in enumerate(operator.examples)
]


def test_every_operator_shows_at_least_one_mutation() -> None:
    assert len(OPERATORS) > 200  # every family is loaded: closed world, controls, bridges
    for name, operator in OPERATORS.items():
        assert isinstance(operator, Operator), name
        assert any(e.after is not None for e in operator.examples), f"{name} has no example"


@pytest.mark.parametrize(("operator", "number", "example"), CASES)
def test_operator_example(operator: Operator, number: int, example: OperatorExample) -> None:
    offered = operator.occurrences(example.before, example.context)
    if example.after is None:  # a near miss: the operator offers no such occurrence
        assert offered <= example.occurrence
        return
    assert example.occurrence < offered
    assert operator.mutate(example.before, example.context, example.occurrence) == example.after
