"""Refusal by return: which `return` statements of a function refuse.

A *refusal* is what a tool does instead of acting: a `raise`, or a `return` whose value
the target says is a failure. Statically a return's value is known only in part, so it is
read as a *shape* (literals kept, every other part a hole: `return False, reason` is
`[False, ?]`, `return {"error": f"no {key}"}` is `{"error": "no ?"}`) and each hole is
filled in turn with every value of `FILLERS`. A return is a refusal when, for every
filling, the first judge with an opinion says so:

1. the contract's success signal, for the tool's own function only, when it is
   `signal: result` (its predicate false on the value: a refusal; true: a success);
2. the adapter's `is_refusal(value)` (`default_is_refusal` when it has none: `False`,
   `(False, ...)`, `{"error": ...}`, `"Error: ..."`).

A judge that answers differently for different fillings, or fails on them, has no opinion
on that return; with no judge holding one, the return is not a refusal.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Any

from harness.contracts.model import Contract
from harness.contracts.predicate import PredicateRuntimeError, compile_predicate
from harness.targets.adapter import is_refusal
from harness.targets.equality import JSON

# Values a hole of a returned shape is filled with, one at a time (all holes alike).
FILLERS: tuple[JSON, ...] = (None, True, False, 0, 1, "", "x", [], {})


class _Hole:
    """A part of a returned value that is not a literal."""


HOLE = _Hole()


class _Template:
    """An f-string: literal parts and holes."""

    def __init__(self, parts: list[str | _Hole]):
        self.parts = parts


def shape(expr: ast.expr) -> Any:
    """The static shape of a returned expression: literals, lists (tuples too), dicts with
    constant keys, f-strings as templates; anything else a hole."""
    if isinstance(expr, ast.Constant):
        return expr.value if isinstance(expr.value, str | int | float | bool | None) else HOLE
    if isinstance(expr, ast.Tuple | ast.List):
        if any(isinstance(e, ast.Starred) for e in expr.elts):
            return HOLE
        return [shape(e) for e in expr.elts]
    if isinstance(expr, ast.Dict):
        if any(k is None or not isinstance(k, ast.Constant) for k in expr.keys):
            return HOLE  # `**other` or a computed key: the keys are unknown
        return {str(k.value): shape(v) for k, v in zip(expr.keys, expr.values, strict=True)}  # type: ignore[union-attr]
    if isinstance(expr, ast.JoinedStr):
        parts: list[str | _Hole] = []
        for value in expr.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                parts.append(value.value)
            else:
                parts.append(HOLE)
        return _Template(parts)
    return HOLE


def fillings(value: Any, filler: JSON) -> JSON:
    """`value` with every hole filled by `filler` (an f-string hole by its `str`)."""
    if value is HOLE:
        return filler
    if isinstance(value, _Template):
        return "".join(str(filler) if p is HOLE else p for p in value.parts)  # type: ignore[misc]
    if isinstance(value, list):
        return [fillings(item, filler) for item in value]
    if isinstance(value, dict):
        return {k: fillings(v, filler) for k, v in value.items()}
    return value


def _has_hole(value: Any) -> bool:
    if value is HOLE or isinstance(value, _Template):
        return True
    if isinstance(value, list):
        return any(_has_hole(v) for v in value)
    if isinstance(value, dict):
        return any(_has_hole(v) for v in value.values())
    return False


def instances(expr: ast.expr) -> Iterator[JSON]:
    """The concrete values a returned expression stands for, one per filler (one value
    when it has no hole)."""
    value = shape(expr)
    if not _has_hole(value):
        yield value
        return
    for filler in FILLERS:
        yield fillings(value, filler)


Judge = Callable[[JSON], bool | None]


def _unanimous(judge: Judge, values: list[JSON]) -> bool | None:
    answers = set()
    for value in values:
        try:
            answer = judge(value)
        except Exception:  # a judge that cannot read this value has no opinion on it
            return None
        if answer is None:
            return None
        answers.add(bool(answer))
    return answers.pop() if len(answers) == 1 else None


def success_judge(contract: Contract | None) -> Judge | None:
    """The contract's `signal: result` success predicate as a judge (refusal = predicate
    false), or None when the contract has no such signal."""
    if contract is None or contract.success.signal != "result" or not contract.success.predicate:
        return None
    predicate = compile_predicate(contract.success.predicate)

    def judge(value: JSON) -> bool | None:
        try:
            return not predicate.holds({"result": value, "args": {}})
        except PredicateRuntimeError:
            return None

    return judge


def judges(adapter: Any, contract: Contract | None, is_tool_function: bool) -> list[Judge]:
    found: list[Judge] = []
    signal = success_judge(contract) if is_tool_function else None
    if signal is not None:
        found.append(signal)
    found.append(lambda value: is_refusal(adapter, value))
    return found


def is_refusal_return(expr: ast.expr | None, judges: list[Judge]) -> bool:
    """Whether `return expr` refuses, by the first judge with an opinion (module rule)."""
    if expr is None:
        return False
    values = list(instances(expr))
    for judge in judges:
        answer = _unanimous(judge, values)
        if answer is not None:
            return answer
    return False


def refusal_returns(fn: ast.AST, judges: list[Judge]) -> frozenset[str]:
    """`ast.unparse` of the value of every `return` of `fn`'s own scope that refuses: how a
    `SiteContext` carries the classification to operators that parse the text again."""
    # here, not at the top: importing the sites package imports its context module, which
    # imports this one
    from harness.mutation.sites.facts import own_statements

    assert isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef)
    return frozenset(
        ast.unparse(stmt.value)
        for stmt in own_statements(fn)
        if isinstance(stmt, ast.Return)
        and stmt.value is not None
        and is_refusal_return(stmt.value, judges)
    )
