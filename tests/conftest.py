"""Fixtures shared by test files: the toy domain's pairs under every closed-world and control
operator, enumerated once per session."""

from __future__ import annotations

import pytest
from mutation_support import CLOSED, CONTROLS, TARGET, TOOLS

from harness.mutation.enumerate import enumerate_pairs
from harness.mutation.model import Pair


@pytest.fixture(scope="session")
def all_pairs() -> list[Pair]:
    return enumerate_pairs(TARGET, TOOLS, [*CLOSED, *CONTROLS])
