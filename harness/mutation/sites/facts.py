"""Function facts: statements, locals, parameters, state writes and guards of one function,
the one definition of "what counts as a write" the operators and the site context share."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from harness.mutation.sites.index import _dotted, _is_none
from harness.mutation.sites.source import (
    FRESH_CALLS,
    IN_PLACE_FUNCTIONS,
    MUTATING_METHODS,
    SCOPE_NODES,
    FunctionNode,
)


def own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """`node` and its descendants, not entering nested function, class or lambda bodies."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        children = list(ast.iter_child_nodes(current))
        if current is not node and isinstance(current, SCOPE_NODES):
            continue
        stack.extend(reversed(children))


def statements_in(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of `body` at any depth, in source order (nested defs and classes are
    yielded but not entered)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, SCOPE_NODES):
            continue
        for name in ("body", "orelse", "finalbody"):
            yield from statements_in(getattr(stmt, name, []) or [])
        for handler in getattr(stmt, "handlers", []) or []:
            yield from statements_in(handler.body)
        for case in getattr(stmt, "cases", []) or []:
            yield from statements_in(case.body)


def own_statements(fn: FunctionNode) -> Iterator[ast.stmt]:
    """Every statement of the function's own scope at any depth, in source order."""
    return statements_in(fn.body)


def parameter_names(fn: FunctionNode) -> list[str]:
    args = fn.args
    names = [a.arg for a in [*args.posonlyargs, *args.args]]
    if args.vararg:
        names.append(args.vararg.arg)
    names.extend(a.arg for a in args.kwonlyargs)
    if args.kwarg:
        names.append(args.kwarg.arg)
    return names


def _bound_names(target: ast.expr) -> Iterator[ast.Name]:
    if isinstance(target, ast.Name):
        yield target
    elif isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _bound_names(element)
    elif isinstance(target, ast.Starred):
        yield from _bound_names(target.value)


def local_bindings(fn: FunctionNode) -> dict[str, list[ast.expr | None]]:
    """Names bound in the function's own scope -> the values bound (None when not a plain
    `name = value`). Parameters and global/nonlocal names are left out."""
    bindings: dict[str, list[ast.expr | None]] = {}
    declared: set[str] = set()
    for stmt in own_statements(fn):
        for node in own_nodes(stmt):
            if node is not stmt and isinstance(node, ast.stmt):
                continue  # visited as a statement of its own
            if isinstance(node, ast.Global | ast.Nonlocal):
                declared.update(node.names)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    plain = isinstance(target, ast.Name)
                    for name in _bound_names(target):
                        bindings.setdefault(name.id, []).append(node.value if plain else None)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                if node.value is not None:
                    bindings.setdefault(node.target.id, []).append(node.value)
            elif isinstance(node, ast.AugAssign | ast.For | ast.AsyncFor):
                for name in _bound_names(node.target):
                    bindings.setdefault(name.id, []).append(None)
            elif isinstance(node, ast.With | ast.AsyncWith):
                for item in node.items:
                    if item.optional_vars is not None:
                        for name in _bound_names(item.optional_vars):
                            bindings.setdefault(name.id, []).append(None)
            elif isinstance(node, ast.NamedExpr):
                bindings.setdefault(node.target.id, []).append(None)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                bindings.setdefault(node.name, []).append(None)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                for alias in node.names:
                    bound = alias.asname or alias.name.partition(".")[0]
                    bindings.setdefault(bound, []).append(None)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                bindings.setdefault(node.name, []).append(None)
    params = set(parameter_names(fn))
    return {k: v for k, v in bindings.items() if k not in params and k not in declared}


def _is_fresh_value(value: ast.expr) -> bool:
    if isinstance(
        value,
        ast.Constant
        | ast.List
        | ast.Dict
        | ast.Set
        | ast.Tuple
        | ast.ListComp
        | ast.SetComp
        | ast.DictComp
        | ast.GeneratorExp
        | ast.JoinedStr
        | ast.BinOp
        | ast.Compare
        | ast.BoolOp,
    ):
        return True
    if isinstance(value, ast.Call):
        name = _dotted(value.func).rpartition(".")[2]
        return name in FRESH_CALLS or name[:1].isupper()  # a class: a new instance
    return False


def fresh_locals(fn: FunctionNode) -> frozenset[str]:
    """Locals only ever bound to new objects (displays, constructors, copies): writes
    through them change nothing the caller can see."""
    return frozenset(
        name
        for name, values in local_bindings(fn).items()
        if all(v is not None and _is_fresh_value(v) for v in values)
    )


def root_name(expr: ast.expr) -> str | None:
    """The variable at the bottom of `a.b[c].d`, `a.get(k).append` or `*a`."""
    while True:
        if isinstance(expr, ast.Attribute | ast.Subscript | ast.Starred):
            expr = expr.value
        elif isinstance(expr, ast.Call):
            expr = expr.func
        elif isinstance(expr, ast.Name):
            return expr.id
        else:
            return None


def chain_fields(expr: ast.expr) -> frozenset[str]:
    """Attribute names and constant keys along `a.b[c]["d"].e` (not the root variable)."""
    found: set[str] = set()
    while True:
        if isinstance(expr, ast.Attribute):
            found.add(expr.attr)
            expr = expr.value
        elif isinstance(expr, ast.Subscript):
            key = expr.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str | int):
                found.add(str(key.value))
            expr = expr.value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            expr = expr.func.value  # d.get(k).x: the method name is not a field
        elif isinstance(expr, ast.Starred):
            expr = expr.value
        else:
            return frozenset(found)


def _is_state_target(target: ast.expr, fresh: frozenset[str]) -> bool:
    if isinstance(target, ast.Tuple | ast.List):
        return any(_is_state_target(t, fresh) for t in target.elts)
    if isinstance(target, ast.Starred):
        return _is_state_target(target.value, fresh)
    if isinstance(target, ast.Attribute | ast.Subscript):
        return root_name(target) not in fresh
    return False


def _target_fields(target: ast.expr) -> frozenset[str]:
    if isinstance(target, ast.Tuple | ast.List):
        return frozenset().union(*(_target_fields(t) for t in target.elts))
    if isinstance(target, ast.Attribute | ast.Subscript | ast.Starred):
        return chain_fields(target)
    return frozenset()


@dataclass(frozen=True)
class WriteCall:
    """A call that changes state: a mutating method, an in-place function or a writer."""

    call: ast.Call
    kind: Literal["method", "in_place", "writer"]
    fields: frozenset[str]


def write_call(
    call: ast.Call, fresh: frozenset[str], writer_names: frozenset[str]
) -> WriteCall | None:
    func = call.func
    if isinstance(func, ast.Attribute):
        name = func.attr
        receiver_fresh = root_name(func.value) in fresh
        if name in IN_PLACE_FUNCTIONS and call.args:
            if root_name(call.args[0]) not in fresh:
                return WriteCall(call, "in_place", chain_fields(call.args[0]))
            return None
        if name in MUTATING_METHODS and not receiver_fresh:
            return WriteCall(call, "method", chain_fields(func.value))
        if name in writer_names and not receiver_fresh:
            return WriteCall(call, "writer", frozenset())
        return None
    if isinstance(func, ast.Name):
        if func.id in IN_PLACE_FUNCTIONS and call.args:
            if root_name(call.args[0]) not in fresh:
                return WriteCall(call, "in_place", chain_fields(call.args[0]))
            return None
        if func.id in writer_names and func.id not in fresh:
            return WriteCall(call, "writer", frozenset())
    return None


@dataclass(frozen=True)
class StateWrite:
    """One statement that writes state.

    kind `assign`: an assignment, augmented assignment or `del` of an attribute or subscript
    of something not created locally; `call`: an expression statement that is a write call;
    `value`: another simple statement (`x = ...`, `return ...`) whose value contains write
    calls (`record = bank._record_transfer(...)`).
    """

    statement: ast.stmt
    kind: Literal["assign", "call", "value"]
    calls: tuple[WriteCall, ...]
    fields: frozenset[str]


def _write_calls(
    node: ast.AST, fresh: frozenset[str], writer_names: frozenset[str]
) -> list[WriteCall]:
    found = []
    for sub in own_nodes(node):
        if isinstance(sub, ast.Call):
            hit = write_call(sub, fresh, writer_names)
            if hit is not None:
                found.append(hit)
    return found


def only_volatile(write: StateWrite, volatile_fields: frozenset[str]) -> bool:
    """Whether everything `write` writes is volatile: its assigned fields (for an
    assignment) and the fields of each of its write calls are non-empty subsets of
    `volatile_fields`. A writer-helper call names no fields, so it never is (whether the
    helper itself only writes volatile state is decided by leaving it out of the writers)."""
    if not volatile_fields:
        return False
    parts = [hit.fields for hit in write.calls]
    if write.kind == "assign":
        parts.append(write.fields)
    return all(part and part <= volatile_fields for part in parts)


def state_writes(
    fn: FunctionNode, writer_names: Iterable[str] = (), volatile_fields: Iterable[str] = ()
) -> list[StateWrite]:
    """The function's state-write statements at any depth, in source order; those that
    write only `volatile_fields` (see `only_volatile`) left out."""
    writers = frozenset(writer_names)
    volatile = frozenset(volatile_fields)
    fresh = fresh_locals(fn)
    out: list[StateWrite] = []
    for stmt in own_statements(fn):
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, ast.AugAssign | ast.AnnAssign):
            targets, value = [stmt.target], stmt.value
        elif isinstance(stmt, ast.Delete):
            targets = stmt.targets
        elif isinstance(stmt, ast.Expr | ast.Return):
            value = stmt.value
        else:
            continue
        if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
            continue
        state_targets = [t for t in targets if _is_state_target(t, fresh)]
        calls = _write_calls(value, fresh, writers) if value is not None else []
        if state_targets:
            fields = frozenset().union(*(_target_fields(t) for t in state_targets))
            out.append(StateWrite(stmt, "assign", tuple(calls), fields))
        elif isinstance(stmt, ast.Expr) and calls and calls[0].call is stmt.value:
            out.append(StateWrite(stmt, "call", tuple(calls), calls[0].fields))
        elif calls:
            fields = frozenset().union(*(c.fields for c in calls))
            out.append(StateWrite(stmt, "value", tuple(calls), fields))
    return [write for write in out if not only_volatile(write, volatile)]


def is_refusal(stmt: ast.stmt, refusals: frozenset[str] = frozenset()) -> bool:
    """A `raise`, or a `return` whose value is one of `refusals` (see
    `SiteContext.refusal_returns`)."""
    if isinstance(stmt, ast.Raise):
        return True
    return (
        isinstance(stmt, ast.Return)
        and stmt.value is not None
        and ast.unparse(stmt.value) in refusals
    )


@dataclass(frozen=True, eq=False)
class Guard:
    """An `if` that decides between refusing and going on.

    `refuses_in_body`: `if COND: ... <refusal>` (its own body raises or returns a refusal);
    otherwise the *accepting* form `if COND: ... return <ok>` whose refusal branch is the
    `else` or the statement right after the `if`, a refusal (`if ok: return True, ""`
    followed by `return False, "expired"`)."""

    node: ast.If
    refuses_in_body: bool


def _guard_at(stmt: ast.stmt, after: ast.stmt | None, refusals: frozenset[str]) -> Guard | None:
    if not isinstance(stmt, ast.If):
        return None
    if any(is_refusal(s, refusals) for s in stmt.body):
        return Guard(stmt, True)
    last = stmt.body[-1]
    accepting = isinstance(last, ast.Return) and not is_refusal(last, refusals)
    if not accepting:
        return None
    branch = stmt.orelse[0] if stmt.orelse else after
    if branch is not None and not isinstance(branch, ast.If) and is_refusal(branch, refusals):
        return Guard(stmt, False)
    return None


def is_guard(stmt: ast.stmt, refusals: frozenset[str] = frozenset()) -> bool:
    """`if COND: ... <refusal> ...`: an if whose own body refuses directly (raises, or
    returns one of `refusals`)."""
    return isinstance(stmt, ast.If) and any(is_refusal(s, refusals) for s in stmt.body)


def guard_list(body: list[ast.stmt], refusals: frozenset[str] = frozenset()) -> list[Guard]:
    """The guards of `body` at any depth, both forms (see `Guard`), in source order."""
    found: list[Guard] = []

    def visit(block: list[ast.stmt]) -> None:
        for index, stmt in enumerate(block):
            after = block[index + 1] if index + 1 < len(block) else None
            guard = _guard_at(stmt, after, refusals)
            if guard is not None:
                found.append(guard)
            if isinstance(stmt, SCOPE_NODES):
                continue
            for name in ("body", "orelse", "finalbody"):
                visit(getattr(stmt, name, []) or [])
            for handler in getattr(stmt, "handlers", []) or []:
                visit(handler.body)
            for case in getattr(stmt, "cases", []) or []:
                visit(case.body)

    visit(body)
    return found


def guards(fn: FunctionNode, refusals: frozenset[str] = frozenset()) -> list[Guard]:
    """The function's guards at any depth, in source order (see `Guard`)."""
    return guard_list(fn.body, refusals)


def returns_value(fn: FunctionNode) -> bool:
    return any(
        isinstance(stmt, ast.Return) and stmt.value is not None and not _is_none(stmt.value)
        for stmt in own_statements(fn)
    )
