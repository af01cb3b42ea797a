"""Observation checks: the integrity and validity comparisons of a function, in any form.

A *check* is one comparison node in one *place* of the function's own scope:
- the test of a guard (`sites.Guard`, either form: refusing or accepting);
- the value of a `return` (a returned boolean: `return hmac.compare_digest(a, b)`);
- the value bound to a local that a guard test or a `return` later reads
  (`valid = sig == expected`, then `if not valid: return False, "signature"`).

An *integrity* check: a `compare_digest` call (hmac's or secrets'), or an `==` / `!=`
comparison with one side computed by a digest or signing helper (`hmac.*`, `hashlib.*`,
`.digest()` / `.hexdigest()`, a callee or attribute whose name says sign, digest, hmac,
hash, checksum, etag or signature; or a local bound to one) and the other side not a
constant (an argument or a state value).
A *validity* check: a comparison (`<`, `<=`, `>`, `>=`, `==`, `!=`) one of whose operands
reads the clock: a clock field of the contract's observation clauses, a name or attribute
`now`, or a call of `time()`, `monotonic()`, `now()` or `utcnow()`.

The *passing value* of a check is what the comparison evaluates to when the check lets the
call through, found from the place: truthy refusing-guard test = refuse, truthy
accepting-guard test or returned value = accept, each `not` on the way flips it; through
anything but `not` / `and` / `or` it is unknown.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from harness.mutation.sites import FunctionNode, Guard, guards, own_nodes, own_statements

_SIGNING = re.compile(r"sign|digest|hmac|hash|checksum|etag|\bmac\b|mac$", re.IGNORECASE)
_CLOCK_CALLS = frozenset({"time", "monotonic", "now", "utcnow", "time_ns", "monotonic_ns"})
ORDERING: dict[type, type] = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
NEGATED: dict[type, type] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
}

Axis = Literal["integrity", "validity"]


@dataclass(frozen=True, eq=False)
class Check:
    """One comparison (`node`) in one place; `guard` when the place is a guard's test,
    `whole` when the comparison is that whole test (under `not`s only)."""

    place: ast.stmt
    node: ast.expr
    passes: bool | None
    guard: Guard | None = None
    whole: bool = False


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    return ""


def is_digest_call(node: ast.AST) -> bool:
    """`hmac.compare_digest(...)`, `secrets.compare_digest(...)`, `compare_digest(...)`."""
    return isinstance(node, ast.Call) and _dotted(node.func).rpartition(".")[2] == "compare_digest"


def _signing_expr(expr: ast.AST, signed_locals: frozenset[str]) -> bool:
    for node in own_nodes(expr):
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name.partition(".")[0] in {"hmac", "hashlib"} or _SIGNING.search(
                name.rpartition(".")[2]
            ):
                return True
        elif (isinstance(node, ast.Attribute) and _SIGNING.search(node.attr)) or (
            isinstance(node, ast.Name) and node.id in signed_locals
        ):
            return True
    return False


def signed_locals(fn: FunctionNode) -> frozenset[str]:
    """Locals bound (as plain names) to a value computed by a digest or signing helper, to a
    fixpoint (`query_sig = sign(q)`, `expected = query_sig.lower()`)."""
    bindings: list[tuple[str, ast.expr]] = []
    for stmt in own_statements(fn):
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    bindings.append((target.id, stmt.value))
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value:
            bindings.append((stmt.target.id, stmt.value))
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, value in bindings:
            if name not in found and _signing_expr(value, frozenset(found)):
                found.add(name)
                changed = True
    return frozenset(found)


def _is_constant(expr: ast.expr) -> bool:
    return all(
        isinstance(n, ast.Constant | ast.Tuple | ast.List | ast.Load | ast.UnaryOp | ast.unaryop)
        for n in ast.walk(expr)
    )


def is_integrity_comparison(node: ast.AST, signed: frozenset[str]) -> bool:
    if is_digest_call(node):
        return True
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return False
    if not isinstance(node.ops[0], ast.Eq | ast.NotEq):
        return False
    left, right = node.left, node.comparators[0]
    return (_signing_expr(left, signed) and not _is_constant(right)) or (
        _signing_expr(right, signed) and not _is_constant(left)
    )


def reads_clock(expr: ast.AST, clock_fields: frozenset[str]) -> bool:
    for n in ast.walk(expr):
        if isinstance(n, ast.Attribute) and (n.attr in clock_fields or n.attr == "now"):
            return True
        if isinstance(n, ast.Name) and (n.id in clock_fields or n.id == "now"):
            return True
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in clock_fields:
            return True
        if isinstance(n, ast.Call) and _dotted(n.func).rpartition(".")[2] in _CLOCK_CALLS:
            return True
    return False


def is_validity_comparison(node: ast.AST, clock_fields: frozenset[str]) -> bool:
    return (
        isinstance(node, ast.Compare)
        and all(type(op) in NEGATED for op in node.ops)
        and reads_clock(node, clock_fields)
    )


def _polarity(root: ast.expr, target: ast.expr) -> int | None:
    """+1 when `target` being truthy pushes `root` truthy, -1 when falsy; None when the
    path from `root` to `target` goes through anything but `not`, `and`, `or`."""
    if root is target:
        return 1
    if isinstance(root, ast.UnaryOp) and isinstance(root.op, ast.Not):
        inner = _polarity(root.operand, target)
        return None if inner is None else -inner
    if isinstance(root, ast.BoolOp):
        for value in root.values:
            inner = _polarity(value, target)
            if inner is not None:
                return inner
            if any(n is target for n in ast.walk(value)):
                return None
    return None


def _whole(test: ast.expr, target: ast.expr) -> bool:
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    return test is target


def _nodes_in(expr: ast.expr, wanted) -> Iterator[ast.expr]:
    for node in own_nodes(expr):
        if isinstance(node, ast.expr) and wanted(node):
            yield node


def find_checks(fn: FunctionNode, refusals: frozenset[str], wanted) -> list[Check]:
    """The checks of the function (see the module rule), each comparison once, in source
    order of their places: guards first, then returns, then bound locals."""
    found: list[Check] = []
    seen: set[int] = set()

    def add(check: Check) -> None:
        if id(check.node) not in seen:
            seen.add(id(check.node))
            found.append(check)

    uses: list[tuple[ast.expr, int]] = []  # (expression that decides, its sense)
    for guard in guards(fn, refusals):
        sense = -1 if guard.refuses_in_body else 1
        uses.append((guard.node.test, sense))
        for node in _nodes_in(guard.node.test, wanted):
            polarity = _polarity(guard.node.test, node)
            passes = None if polarity is None else polarity * sense > 0
            add(Check(guard.node, node, passes, guard, _whole(guard.node.test, node)))
    returns = [s for s in own_statements(fn) if isinstance(s, ast.Return) and s.value is not None]
    for stmt in returns:
        assert stmt.value is not None
        uses.append((stmt.value, 1))
        for node in _nodes_in(stmt.value, wanted):
            polarity = _polarity(stmt.value, node)
            add(Check(stmt, node, None if polarity is None else polarity > 0))
    for stmt in own_statements(fn):
        if not (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            continue
        name = stmt.targets[0].id
        readers = [
            (expr, sense, n)
            for expr, sense in uses
            for n in ast.walk(expr)
            if isinstance(n, ast.Name) and n.id == name
        ]
        if not readers:
            continue
        expr, sense, reader = readers[0]
        use = _polarity(expr, reader)
        for node in _nodes_in(stmt.value, wanted):
            inner = _polarity(stmt.value, node)
            passes = None if use is None or inner is None else inner * use * sense > 0
            add(Check(stmt, node, passes))
    return found


def integrity_checks(fn: FunctionNode, refusals: frozenset[str]) -> list[Check]:
    signed = signed_locals(fn)
    return find_checks(fn, refusals, lambda n: is_integrity_comparison(n, signed))


def validity_checks(
    fn: FunctionNode, refusals: frozenset[str], clock_fields: frozenset[str]
) -> list[Check]:
    return find_checks(fn, refusals, lambda n: is_validity_comparison(n, clock_fields))


def inverted(node: ast.expr) -> ast.expr:
    """The comparison's opposite: a single operator negated (`==` -> `!=`, `<` -> `>=`),
    anything else under `not`."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in NEGATED:
        return ast.Compare(node.left, [NEGATED[type(node.ops[0])]()], node.comparators)
    return ast.UnaryOp(ast.Not(), node)


def shifted(node: ast.expr) -> ast.expr | None:
    """The first ordering operator's boundary moved (`<` <-> `<=`, `>` <-> `>=`); None when
    the comparison has none."""
    if not isinstance(node, ast.Compare):
        return None
    for index, op in enumerate(node.ops):
        if type(op) in ORDERING:
            ops = list(node.ops)
            ops[index] = ORDERING[type(op)]()
            return ast.Compare(node.left, ops, node.comparators)
    return None


def replace_expression(root: ast.AST, old: ast.expr, new: ast.expr) -> None:
    """Put `new` where `old` is, anywhere under `root`."""
    for parent in ast.walk(root):
        for name, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, name, new)
                return
            if isinstance(value, list):
                for index, item in enumerate(value):
                    if item is old:
                        value[index] = new
                        return
    raise LookupError("the comparison is not under the given node")
