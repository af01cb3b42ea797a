"""The public API: `compile_predicate(text) -> Predicate`, validated once, evaluated many times."""

from __future__ import annotations

import ast
import functools
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.contracts.predicate.errors import (
    AbsentKey,
    BudgetExceeded,
    PredicateError,
    PredicateRuntimeError,
    PredicateTypeError,
)
from harness.contracts.predicate.interpreter import Run, _export, _Interpreter, compile_program
from harness.contracts.predicate.language import (
    BUILTINS,
    DEFAULT_BUDGET,
    DEFAULT_ROOTS,
    MAX_NESTING,
)
from harness.contracts.predicate.read_sets import (
    _args_by_name,
    _args_read,
    _bound_paths_read,
    _paths_read,
)
from harness.contracts.predicate.validator import _nesting, _Validator
from harness.contracts.predicate.values import _Lazy
from harness.targets.equality import JSON, STRICT, EqualityPolicy


@dataclass(frozen=True)
class Predicate:
    """A compiled predicate. Build it with `compile_predicate`."""

    text: str
    roots: frozenset[str]
    args_read: frozenset[str]
    paths_read: frozenset[tuple[str, tuple[str, ...]]]
    # The validated AST; filled by compile_predicate (or validated here if omitted).
    _tree: ast.expr | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self._tree is None:
            object.__setattr__(self, "_tree", _validated_tree(self.text, self.roots))

    @functools.cached_property
    def bound_paths_read(self) -> frozenset[tuple[str, tuple[str, ...]]]:
        """`paths_read` with comprehension-bound names resolved: ``(root, segments)`` where
        ``*`` stands for any element (see `_bound_paths_read`)."""
        assert self._tree is not None
        return _bound_paths_read(self._tree, self.roots)

    @functools.cached_property
    def args_by_name(self) -> bool:
        """Whether the value depends on `args` only through the keys in `args_read`."""
        assert self._tree is not None
        return _args_by_name(self._tree, self.roots)

    @functools.cached_property
    def _program(self) -> Run:
        """The tree compiled into closures, once per predicate (not pickled: rebuilt)."""
        assert self._tree is not None
        return compile_program(self._tree)

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_program"}

    @functools.cached_property
    def args_depended_on(self) -> tuple[str, ...] | None:
        """The sorted names of the arguments the value depends on; None: possibly all."""
        return tuple(sorted(self.args_read)) if self.args_by_name else None

    def evaluate(
        self,
        bindings: Mapping[str, JSON],
        *,
        policy: EqualityPolicy = STRICT,
        budget: int = DEFAULT_BUDGET,
    ) -> Any:
        """The predicate's value under `bindings` (root name -> JSON value).

        Raises MissingPath, AbsentKey, PredicateTypeError or BudgetExceeded; never any
        other exception."""
        interpreter = _Interpreter(bindings, policy, budget, self.text)
        try:
            value = self._program(interpreter, {})
            if isinstance(value, _Lazy):
                raise PredicateTypeError(
                    f"`{self.text[:120]}` is a generator: wrap it in any(), all(), sum(), "
                    "sorted() or a list comprehension"
                )
            return _export(value)
        except PredicateRuntimeError:
            raise
        except (RecursionError, MemoryError) as exc:  # data nested or sized beyond reason
            raise BudgetExceeded(f"`{self.text[:120]}`: {type(exc).__name__}") from None
        except Exception as exc:  # the contract: nothing else escapes
            raise PredicateTypeError(
                f"`{self.text[:120]}`: {type(exc).__name__}: {str(exc)[:200]}"
            ) from None

    def holds(
        self,
        bindings: Mapping[str, JSON],
        *,
        policy: EqualityPolicy = STRICT,
        budget: int = DEFAULT_BUDGET,
    ) -> bool:
        """bool(evaluate(...)), except AbsentKey -> False: a clause about a record that is
        not there does not hold. Other PredicateRuntimeErrors propagate."""
        try:
            return bool(self.evaluate(bindings, policy=policy, budget=budget))
        except AbsentKey:
            return False


def _validated_tree(text: str, roots: frozenset[str]) -> ast.expr:
    if not isinstance(text, str):
        raise PredicateError(f"a predicate is a string, got {type(text).__name__}")
    for root in roots:
        if not root.isidentifier() or root in BUILTINS or root.startswith("_"):
            raise PredicateError(f"root {root!r} is not a usable name: use a plain identifier")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. invalid escape sequences in literals
            tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        where = f", line {exc.lineno} column {exc.offset}" if exc.offset else ""
        fix = (
            "wrap a multi-line predicate in parentheses"
            if "\n" in text.strip()
            else "write a single expression such as post.x == args.y"
        )
        raise PredicateError(f"not a Python expression ({exc.msg}{where}): {fix}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise PredicateError(
            f"cannot parse the predicate ({type(exc).__name__}): write a single, shorter expression"
        ) from None
    if _nesting(tree) > MAX_NESTING:
        raise PredicateError(
            f"predicate nested more than {MAX_NESTING} levels deep: split it into several clauses"
        )
    _Validator(roots).check(tree.body, frozenset(), 0)
    return tree.body


def compile_predicate(text: str, *, roots: frozenset[str] = DEFAULT_ROOTS) -> Predicate:
    """Parse and validate `text`; raises PredicateError (one line: what is wrong and what
    to write instead)."""
    roots = frozenset(roots)
    tree = _validated_tree(text, roots)
    return Predicate(
        text=text,
        roots=roots,
        args_read=_args_read(tree, roots),
        paths_read=_paths_read(tree, roots),
        _tree=tree,
    )
