"""Control operators: rewrites that keep behaviour identical (the controls arm, no defect
class). A checker that reports one of them VIOLATES has a false positive.

Each operator only acts where it can argue the rewrite is behaviour-preserving; the
residual risks (documented per class) come from Python's dynamic dispatch: a custom
`__add__`/`__eq__` that is not symmetric, a property setter with side effects, an attribute
write that raises.
"""

from __future__ import annotations

import ast
import itertools
from typing import Any

from harness.mutation.ast_operator import AstOperator, body_start, replace_statement
from harness.mutation.model import WITHDRAW, Arm, SiteContext, example
from harness.mutation.sites import (
    FunctionNode,
    is_guard,
    local_bindings,
    own_nodes,
    own_statements,
    parameter_names,
)

# Methods that cannot raise on a list/dict/set receiver with any argument values we accept.
_SAFE_METHODS = frozenset({"append", "appendleft", "add", "discard", "clear", "insert"})
# Functions whose presence means names are looked up as strings: renaming is unsafe.
_INTROSPECTION = frozenset({"locals", "vars", "eval", "exec", "dir", "globals"})


def _attribute_chain(expr: ast.expr) -> bool:
    """`a`, `a.b`, `a.b.c`: names and attributes only (no calls, no subscripts)."""
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return isinstance(expr, ast.Name)


def _inert(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) or _attribute_chain(expr)


def _touched(node: ast.AST) -> set[str]:
    """Every variable and attribute name a statement mentions."""
    found: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            found.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            found.add(sub.attr)
    return found


def _simple_write(stmt: ast.stmt) -> str | None:
    """The attribute a plain write changes, for statements that cannot raise and read
    nothing but names and attributes: `a.b = x`, `a.b += 1`, `a.items.append(x)`."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target, value = stmt.targets[0], stmt.value
    elif isinstance(stmt, ast.AugAssign):
        target, value = stmt.target, stmt.value
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        if (
            isinstance(call.func, ast.Attribute)
            and call.func.attr in _SAFE_METHODS
            and isinstance(call.func.value, ast.Attribute)
            and _attribute_chain(call.func.value)
            and all(_inert(a) for a in call.args)
            and not call.keywords
        ):
            return call.func.value.attr
        return None
    else:
        return None
    if isinstance(target, ast.Attribute) and _attribute_chain(target) and _inert(value):
        return target.attr
    return None


class Reorder(AstOperator):
    """C-REORDER: two adjacent state writes swapped when they are independent: each is a
    plain write that cannot raise (`_simple_write`), and neither mentions the attribute the
    other writes (so the targets differ and neither reads what the other writes). Residual
    risk: a property setter or `__setattr__` with side effects."""

    name = "C-REORDER"
    arm = Arm.CONTROLS
    defect_class = None
    examples = (
        example(
            """\
def open_account(bank, owner):
    bank.owner = owner
    bank.status = "open"
    return "opened"
""",
            """\
def open_account(bank, owner):
    bank.status = 'open'
    bank.owner = owner
    return "opened"
""",
            injected=["bank"],
        ),
    )

    def candidates(self, fn: FunctionNode, context: SiteContext) -> list[Any]:
        found = []
        for block in _blocks(fn):
            for first, second in itertools.pairwise(block):
                a, b = _simple_write(first), _simple_write(second)
                if a and b and a not in _touched(second) and b not in _touched(first):
                    found.append(first)
        return sorted(found, key=lambda s: (s.lineno, s.col_offset))

    def transform(self, fn: FunctionNode, candidate: Any, variant: int, context: SiteContext):
        for block in _blocks(fn):
            for index, stmt in enumerate(block[:-1]):
                if stmt is candidate:
                    block[index], block[index + 1] = block[index + 1], block[index]
                    return


def _blocks(fn: FunctionNode) -> list[list[ast.stmt]]:
    """Every statement list of the function's own scope."""
    blocks = [fn.body]
    for stmt in own_statements(fn):
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        blocks.extend(
            getattr(stmt, name)
            for name in ("body", "orelse", "finalbody")
            if getattr(stmt, name, None)
        )
        blocks.extend(h.body for h in getattr(stmt, "handlers", None) or [])
    return blocks


_MIRROR: dict[type, type] = {
    ast.Eq: ast.Eq,
    ast.NotEq: ast.NotEq,
    ast.Lt: ast.Gt,
    ast.LtE: ast.GtE,
    ast.Gt: ast.Lt,
    ast.GtE: ast.LtE,
    ast.Is: ast.Is,
    ast.IsNot: ast.IsNot,
}
_NUMERIC_CALLS = frozenset({"len", "int", "float", "abs", "round", "sum", "min", "max"})


class Commute(AstOperator):
    """C-COMMUTE: `a + b` -> `b + a` and `a * b` -> `b * a`, and a single comparison mirrored
    (`a == b` -> `b == a`, `a < b` -> `b > a`, `x is None` -> `None is x`).

    Only where one operand is a name or a constant, so swapping the evaluation order moves
    no side effect and no exception. `+` also needs numeric evidence for one operand (a
    number, an int/float parameter, `len(...)`...) and neither may look like a string or a
    sequence (str constant, f-string, list or tuple display, str/list parameter); `*` skips
    str constants and f-strings. Residual risk: two variables of unknown type that are both
    strings or lists, or a user type whose operator is not symmetric.
    """

    name = "C-COMMUTE"
    arm = Arm.CONTROLS
    defect_class = None
    examples = (
        example(
            """\
def total(a: int, b: int) -> int:
    return a + b
""",
            """\
def total(a: int, b: int) -> int:
    return b + a
""",
        ),
    )

    def candidates(self, fn: FunctionNode, context: SiteContext) -> list[Any]:
        kinds = _annotation_kinds(fn)
        found = []
        for stmt in fn.body:
            for node in own_nodes(stmt):
                if self._commutes(node, kinds) or _mirrors(node):
                    found.append(node)
        return sorted(found, key=lambda n: (n.lineno, n.col_offset))

    @staticmethod
    def _commutes(node: ast.AST, kinds: dict[str, str]) -> bool:
        if not isinstance(node, ast.BinOp) or not (_plain(node.left) or _plain(node.right)):
            return False
        sides = (node.left, node.right)
        if isinstance(node.op, ast.Mult):
            return not any(_str_literal(s) for s in sides)
        if isinstance(node.op, ast.Add):
            if any(_str_literal(s) or _sequence_like(s, kinds) for s in sides):
                return False
            return any(_numeric(s, kinds) for s in sides)
        return False

    def transform(self, fn: FunctionNode, candidate: Any, variant: int, context: SiteContext):
        if isinstance(candidate, ast.BinOp):
            candidate.left, candidate.right = candidate.right, candidate.left
        else:
            candidate.left, candidate.comparators = candidate.comparators[0], [candidate.left]
            candidate.ops = [_MIRROR[type(candidate.ops[0])]()]


def _mirrors(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and type(node.ops[0]) in _MIRROR
        and (_plain(node.left) or _plain(node.comparators[0]))
    )


def _plain(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Name | ast.Constant)


def _str_literal(expr: ast.expr) -> bool:
    return isinstance(expr, ast.JoinedStr) or (
        isinstance(expr, ast.Constant) and isinstance(expr.value, str | bytes)
    )


def _annotation_kinds(fn: FunctionNode) -> dict[str, str]:
    """Parameter -> the base name of its annotation (`int`, `str`, `list`...)."""
    args = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
    return {
        a.arg: ast.unparse(a.annotation).partition("[")[0] for a in args if a.annotation is not None
    }


def _sequence_like(expr: ast.expr, kinds: dict[str, str]) -> bool:
    if isinstance(expr, ast.List | ast.Tuple | ast.ListComp):
        return True
    if isinstance(expr, ast.Name):
        return kinds.get(expr.id, "") in {"str", "bytes", "list", "tuple", "List", "Tuple"}
    return False


def _numeric(expr: ast.expr, kinds: dict[str, str]) -> bool:
    if isinstance(expr, ast.Constant):
        return type(expr.value) in (int, float)
    if isinstance(expr, ast.Name):
        return kinds.get(expr.id) in {"int", "float"}
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name):
        return expr.func.id in _NUMERIC_CALLS
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Sub | ast.FloorDiv | ast.Mod):
        return _numeric(expr.left, kinds) or _numeric(expr.right, kinds)
    return False


class Rename(AstOperator):
    """C-RENAME: one local variable renamed everywhere in the function (to `<name>_value`,
    or a numbered variant that the function does not use). Skipped for names bound by an
    import, a nested def or class, a global/nonlocal declaration, names that are also a
    parameter of a nested function or lambda, and in functions that use locals(), vars(),
    eval(), exec(), dir() or globals()."""

    name = "C-RENAME"
    arm = Arm.CONTROLS
    defect_class = None
    examples = (
        example(
            """\
def total(a, b):
    result = a + b
    return result
""",
            """\
def total(a, b):
    result_value = a + b
    return result_value
""",
        ),
    )

    def candidates(self, fn: FunctionNode, context: SiteContext) -> list[Any]:
        names = [n for n in ast.walk(fn) if isinstance(n, ast.Name)]
        if any(n.id in _INTROSPECTION for n in names):
            return []
        excluded = {a.arg for a in ast.walk(fn) if isinstance(a, ast.arg)}
        for node in ast.walk(fn):
            if isinstance(node, ast.Global | ast.Nonlocal):
                excluded.update(node.names)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                excluded.update(a.asname or a.name.partition(".")[0] for a in node.names)
            elif node is not fn and isinstance(
                node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
            ):
                excluded.add(node.name)
        first_seen: dict[str, tuple[int, int]] = {}
        for node in names:
            if node.id not in first_seen or (node.lineno, node.col_offset) < first_seen[node.id]:
                first_seen[node.id] = (node.lineno, node.col_offset)
        locals_ = [n for n in local_bindings(fn) if n not in excluded and n in first_seen]
        return sorted(locals_, key=lambda n: first_seen[n])

    def transform(self, fn: FunctionNode, candidate: Any, variant: int, context: SiteContext):
        used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
        used.update(parameter_names(fn))
        new = f"{candidate}_value"
        counter = 2
        while new in used:
            new = f"{candidate}_value{counter}"
            counter += 1
        for node in ast.walk(fn):
            if isinstance(node, ast.Name) and node.id == candidate:
                node.id = new
            elif isinstance(node, ast.ExceptHandler) and node.name == candidate:
                node.name = new


REWORD_PREFIX = "Request refused: "


def _message(stmt: ast.stmt) -> ast.expr | None:
    if not (isinstance(stmt, ast.Raise) and isinstance(stmt.exc, ast.Call) and stmt.exc.args):
        return None
    first = stmt.exc.args[0]
    if isinstance(first, ast.JoinedStr) or (
        isinstance(first, ast.Constant) and isinstance(first.value, str)
    ):
        return first
    return None


class Reword(AstOperator):
    """C-REWORD: the message of a raised exception reworded (prefixed with "Request
    refused: "); the exception type and arguments after the message are kept. The error
    message text is the only thing that changes: controls assume checkers grade error types,
    not wording."""

    name = "C-REWORD"
    arm = Arm.CONTROLS
    defect_class = None
    examples = (
        example(
            WITHDRAW,
            """\
def withdraw(bank, account, amount):
    if amount > bank.balances[account]:
        raise ValueError('Request refused: insufficient funds')
    bank.balances[account] -= amount
    return "ok"
""",
            injected=["bank"],
        ),
    )

    def candidates(self, fn: FunctionNode, context: SiteContext) -> list[Any]:
        return [s for s in own_statements(fn) if _message(s) is not None]

    def transform(self, fn: FunctionNode, candidate: Any, variant: int, context: SiteContext):
        message = _message(candidate)
        if isinstance(message, ast.JoinedStr):
            head = message.values[0] if message.values else None
            if isinstance(head, ast.Constant):  # one literal part, as the parser would give
                head.value = REWORD_PREFIX + head.value
            else:
                message.values.insert(0, ast.Constant(REWORD_PREFIX))
        elif isinstance(message, ast.Constant):
            message.value = REWORD_PREFIX + message.value


_SCOPE_ESCAPES = (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)


class Extract(AstOperator):
    """C-EXTRACT: a guard `if COND: raise E(...)` (no else) moved into a nested helper
    function defined at the top of the body, called where the guard was. The helper reads
    the function's variables through its closure at call time, so it sees what the guard
    saw. Skipped when the guard assigns (`:=`), awaits, yields or uses `super`/`__class__`."""

    name = "C-EXTRACT"
    arm = Arm.CONTROLS
    defect_class = None
    examples = (
        example(
            WITHDRAW,
            """\
def withdraw(bank, account, amount):
    def _check_guard():
        if amount > bank.balances[account]:
            raise ValueError('insufficient funds')
    _check_guard()
    bank.balances[account] -= amount
    return "ok"
""",
            injected=["bank"],
        ),
    )

    def candidates(self, fn: FunctionNode, context: SiteContext) -> list[Any]:
        found = []
        for stmt in own_statements(fn):
            if not (is_guard(stmt) and len(stmt.body) == 1 and not stmt.orelse):
                continue
            if stmt.body[0].exc is None:  # a bare re-raise needs the handler's exception
                continue
            nodes = list(ast.walk(stmt))
            if any(isinstance(n, _SCOPE_ESCAPES) for n in nodes):
                continue
            if any(isinstance(n, ast.Name) and n.id in {"super", "__class__"} for n in nodes):
                continue
            found.append(stmt)
        return found

    def transform(self, fn: FunctionNode, candidate: Any, variant: int, context: SiteContext):
        used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
        used.update(parameter_names(fn))
        used.update(n.name for n in ast.walk(fn) if isinstance(n, ast.FunctionDef))
        helper = "_check_guard"
        counter = 2
        while helper in used:
            helper = f"_check_guard{counter}"
            counter += 1
        call = ast.Expr(ast.Call(ast.Name(helper, ast.Load()), [], []))
        replace_statement(fn, candidate, [call])
        definition = ast.FunctionDef(
            name=helper,
            args=ast.arguments([], [], None, [], [], None, []),
            body=[candidate],
            decorator_list=[],
            returns=None,
        )
        fn.body.insert(body_start(fn), definition)


CONTROL_OPERATORS: tuple[AstOperator, ...] = (Reorder(), Commute(), Rename(), Reword(), Extract())
