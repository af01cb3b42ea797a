"""harness.errors: one root for every exception, and its table naming each class."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest

import harness
from harness import errors
from harness.errors import HarnessError, UserError
from harness.mutation.registry import (
    OPERATORS,
    OperatorRegistrationError,
    UnknownOperator,
    get_operator,
    register,
)

# KeyboardInterrupt on purpose, and private control flow: named in errors.py's docstring
OUTSIDE_THE_ROOT = {
    "harness.execution.isolation.Stopped",
    "harness.mutation.ast_operator._Fallback",
}


def harness_exceptions() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(harness.__path__, "harness."):
        if info.name == "harness.__main__":  # importing it runs the CLI
            continue
        try:
            module = importlib.import_module(info.name)
        except ModuleNotFoundError as exc:  # an optional benchmark not installed here
            if exc.name and exc.name.split(".")[0] == "harness":
                raise
            continue
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__ == info.name:
                found[f"{info.name}.{value.__qualname__}"] = value
    return found


def test_every_exception_is_a_harness_error_and_listed_with_its_module() -> None:
    table = dict(re.findall(r"^\| `(\w+)`[^|]*\| `([\w.]+)` \|", errors.__doc__ or "", re.M))
    found = harness_exceptions()
    assert len(found) >= 18
    for path, cls in found.items():
        if path in OUTSIDE_THE_ROOT:
            assert not issubclass(cls, HarnessError)
            assert path in " ".join((errors.__doc__ or "").split())
            continue
        assert issubclass(cls, HarnessError), path
        assert table.get(cls.__name__) == cls.__module__, f"{path} is not in errors.py's table"
    listed = {f"{module}.{name}" for name, module in table.items()}
    assert listed <= set(found), listed - set(found)  # the table names no class that is gone


def test_registry_errors_are_harness_errors_and_still_what_callers_catch() -> None:
    with pytest.raises(UnknownOperator, match=r"^unknown operator 'M-NOPE'; known operators: "):
        get_operator("M-NOPE")
    assert issubclass(UnknownOperator, KeyError) and issubclass(UnknownOperator, HarnessError)
    with pytest.raises(OperatorRegistrationError, match="not an operator"):
        register(object())  # type: ignore[arg-type]
    with pytest.raises(OperatorRegistrationError, match="taken"):
        register(type(OPERATORS["M-PHANTOM"])())
    assert issubclass(UserError, HarnessError)
