"""harness.mutation.registry: operator names and registration errors."""

from __future__ import annotations

import json
import subprocess
import sys

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


LOOKUPS = """
import json, sys
from harness.mutation import registry
first = [registry.get_operator(n).name for n in ("M-PHANTOM", "C-REORDER")]
before = sorted(m for m in ("libcst", "mutmut", "cosmic_ray") if m in sys.modules)
bridge = registry.get_operator(sys.argv[1]).name
after = sorted(m for m in ("libcst", "mutmut", "cosmic_ray") if m in sys.modules)
print(json.dumps([first, before, bridge, after, registry.get_operator("M-PHANTOM").name]))
"""


@pytest.mark.parametrize("bridge", ["CR-core/ReplaceBinaryOperator_Add_Sub", "MM-string"])
def test_a_closed_world_name_is_found_without_importing_the_bridges(bridge: str) -> None:
    """In a fresh process: the closed-world and control operators are found without the
    Cosmic Ray and mutmut bridges (nor libcst) imported; a bridge's name loads them, and
    the first names still give the same operators."""
    done = subprocess.run(
        [sys.executable, "-c", LOOKUPS, bridge], capture_output=True, text=True, check=True
    )
    first, before, found, after, again = json.loads(done.stdout)
    assert first == ["M-PHANTOM", "C-REORDER"] and before == []
    assert found == bridge and after == ["cosmic_ray", "libcst", "mutmut"]
    assert again == "M-PHANTOM"
