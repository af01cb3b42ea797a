"""Operators by name: every family registered through one explicit mechanism, `register`.

Families: the closed-world operators (`M-`, `harness.mutation.closed_world`) and the
control operators (`C-`, `harness.mutation.control_operators`) are registered when this
module is imported; the families in `FAMILIES` (module -> its function that takes
`register`: the Cosmic Ray and mutmut bridges, `CR-`/`MM-`) are imported and registered by
`load_families`, once, so importing this module stays cheap. `all_operators()` and
`get_operator()` call it first: they are the two ways to read the registry, and both see
every family. Another family calls `register(op)` itself or adds its module to `FAMILIES`.
"""

from __future__ import annotations

import importlib

from harness.errors import HarnessError
from harness.mutation.closed_world import CLOSED_WORLD_OPERATORS
from harness.mutation.control_operators import CONTROL_OPERATORS
from harness.mutation.model import Operator


class UnknownOperator(HarnessError, KeyError):
    """No operator is registered under the name (a KeyError, as the dict lookup was)."""

    def __str__(self) -> str:  # a KeyError prints its message quoted
        return str(self.args[0]) if self.args else ""


class OperatorRegistrationError(HarnessError, TypeError, ValueError):
    """`register` got something that is not an operator, or a name another operator holds."""


OPERATORS: dict[str, Operator] = {}

# module -> its function that takes `register` and registers the module's operators.
FAMILIES: dict[str, str] = {"harness.mutation.open_world": "register_open_world"}
PLUGINS = FAMILIES  # the old name of the same dict
_families_loaded = False


def register(operator: Operator) -> Operator:
    """Add `operator` under its name. Registering the same object again is a no-op; another
    object under a taken name is an error (names are ids in every mutant and ledger row)."""
    if not isinstance(operator, Operator):
        raise OperatorRegistrationError(
            f"{operator!r} is not an operator: it needs name, arm, defect_class, examples, "
            "occurrences(source, context) and mutate(source, context, occurrence)"
        )
    existing = OPERATORS.get(operator.name)
    if existing is not None and existing is not operator:
        raise OperatorRegistrationError(
            f"operator name {operator.name!r} is taken by {existing!r}; pick another name"
        )
    OPERATORS[operator.name] = operator
    return operator


def load_families() -> None:
    """Import each module of `FAMILIES` once and let it register its operators; a family
    whose module is not installed is left out (its operators are then unknown names)."""
    global _families_loaded
    if _families_loaded:
        return
    _families_loaded = True
    for module_name, hook in FAMILIES.items():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:  # the plugin exists but something it needs does not
                raise
            continue
        getattr(module, hook)(register)


load_plugins = load_families  # the old name


def all_operators() -> dict[str, Operator]:
    """Every registered operator of every family, by name, in registration order."""
    load_families()
    return dict(OPERATORS)


def get_operator(name: str) -> Operator:
    """The operator registered as `name`: one registered when this module was imported
    (closed world, controls) at once, any other once every family is loaded. A plan of
    closed-world operators alone then never imports the bridges (Cosmic Ray, mutmut and
    libcst: 1.1 s of a toy plan's 4 s `harness run`). A family cannot take a name
    registered here (`register` refuses it), so the answer is the same."""
    found = OPERATORS.get(name)
    if found is not None:
        return found
    load_families()
    try:
        return OPERATORS[name]
    except KeyError:
        raise UnknownOperator(
            f"unknown operator {name!r}; known operators: {', '.join(sorted(OPERATORS))}"
        ) from None


for _operator in (*CLOSED_WORLD_OPERATORS, *CONTROL_OPERATORS):
    register(_operator)
