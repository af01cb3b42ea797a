"""harness.mutation.registry: operator names and registration errors."""

from __future__ import annotations

import pytest
from mutation_support import CLOSED, CONTROLS

from harness.mutation.model import Operator
from harness.mutation.registry import OPERATORS, get_operator, register


def test_registry_names_and_errors() -> None:
    assert set(CLOSED) == {
        "M-PHANTOM",
        "M-PRECOND",
        "M-IGNARG",
        "M-PARTIAL",
        "M-INVAR",
        "M-RESET",
        "M-VALIDITY",
        "M-INTEGRITY",
    }
    assert set(CONTROLS) == {"C-REORDER", "C-COMMUTE", "C-RENAME", "C-REWORD", "C-EXTRACT"}
    assert all(isinstance(OPERATORS[name], Operator) for name in [*CLOSED, *CONTROLS])
    with pytest.raises(KeyError, match=r"known operators: .*M-PHANTOM"):
        get_operator("M-NOPE")
    register(OPERATORS["M-PHANTOM"])  # the same object again is fine
    with pytest.raises(ValueError, match="taken"):
        register(type(OPERATORS["M-PHANTOM"])())
