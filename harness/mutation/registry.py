"""Operators by name: the closed-world operators, the controls, and whatever registers
through `register`.

Hook for other operator families: call `register(op)` for each operator, or list the
module and its registration function in `PLUGINS` (the open-world bridge,
`harness.mutation.open_world.register_open_world(register)`); `load_plugins` (called by
`get_operator` on its first call) imports them once, so importing this module stays cheap.
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
PLUGINS: dict[str, str] = {"harness.mutation.open_world": "register_open_world"}
_plugins_loaded = False


def register(operator: Operator) -> Operator:
    """Add `operator` under its name. Registering the same object again is a no-op; another
    object under a taken name is an error (names are ids in every mutant and ledger row)."""
    if not isinstance(operator, Operator):
        raise OperatorRegistrationError(
            f"{operator!r} is not an operator: it needs name, arm, defect_class, "
            "occurrences(source, context) and mutate(source, context, occurrence)"
        )
    existing = OPERATORS.get(operator.name)
    if existing is not None and existing is not operator:
        raise OperatorRegistrationError(
            f"operator name {operator.name!r} is taken by {existing!r}; pick another name"
        )
    OPERATORS[operator.name] = operator
    return operator


def load_plugins() -> None:
    """Import each plugin module once and let it register its operators."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for module_name, hook in PLUGINS.items():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:  # the plugin exists but something it needs does not
                raise
            continue
        getattr(module, hook)(register)


def get_operator(name: str) -> Operator:
    """The operator registered as `name` (plugins are loaded on the first call, so after it
    `OPERATORS` holds every family)."""
    load_plugins()
    try:
        return OPERATORS[name]
    except KeyError:
        raise UnknownOperator(
            f"unknown operator {name!r}; known operators: {', '.join(sorted(OPERATORS))}"
        ) from None


for _operator in (*CLOSED_WORLD_OPERATORS, *CONTROL_OPERATORS):
    register(_operator)
