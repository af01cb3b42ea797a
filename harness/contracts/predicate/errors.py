"""The predicate errors: `PredicateError` (not in the language, at compile time) and the
runtime errors, each with the `reason` code the checker reports."""

from __future__ import annotations

from typing import ClassVar

from harness.errors import HarnessError


class PredicateError(HarnessError, ValueError):
    """The text is not in the predicate language (raised by `compile_predicate`)."""


class PredicateRuntimeError(HarnessError):
    """Evaluation failed; `reason` is the code the checker reports."""

    reason: ClassVar[str] = "predicate_type_error"


class MissingPath(PredicateRuntimeError):
    """`x.name` on an object without key `name`, or a root that is not bound."""

    reason: ClassVar[str] = "no_observable_state"


class AbsentKey(PredicateRuntimeError):
    """`x[k]` where the object has no key k or the index is out of range."""

    reason: ClassVar[str] = "absent_key"


class PredicateTypeError(PredicateRuntimeError):
    """An operation on values of the wrong type (or a Python error inside one)."""

    reason: ClassVar[str] = "predicate_type_error"


class BudgetExceeded(PredicateRuntimeError):
    """Too many steps, or a value too large to build."""

    reason: ClassVar[str] = "predicate_budget_exceeded"
