"""The module model every check reads: functions with their scope, lines and agent parameters,
parsed once per source text; and state writes as the scanner sees them (a store to non-local
data, or a call of a mutating method or of a writer function of the same module)."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from harness.scanner.flags import (
    _CLASS_HINTS,
    _FRESH_CALLS,
    _MUTATORS,
    _SNIPPET_LIMIT,
    FuncNode,
    ScanCheck,
    ScanError,
    ScanFlag,
)


@dataclass
class _Func:
    """One function or method, with the per-function facts the checks share."""

    qualname: str
    name: str
    scope: str
    node: FuncNode
    end_line: int
    own: list[ast.AST]
    fresh: frozenset[str]
    declared_global: frozenset[str]
    aliases: dict[str, str] = field(default_factory=dict)

    @property
    def line(self) -> int:
        return self.node.lineno


@dataclass
class _Module:
    file: str
    lines: list[str]
    functions: list[_Func]
    by_name: dict[str, list[_Func]]
    writer_names: frozenset[str]


def _walk_own(roots: Iterable[ast.AST]) -> Iterator[ast.AST]:
    """Pre-order walk that does not enter nested functions or classes (they are scanned alone)."""
    stack = [n for n in reversed(list(roots)) if not _is_scope(n)]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(c for c in reversed(list(ast.iter_child_nodes(node))) if not _is_scope(c))


def _is_scope(node: ast.AST) -> bool:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)


def _walk_body(fn: FuncNode) -> Iterator[ast.AST]:
    """Every node of the body, nested functions included (closures use the outer parameters)."""
    for stmt in fn.body:
        yield from ast.walk(stmt)


def _parse(source: str, file: str) -> ast.Module:
    try:
        return ast.parse(source, filename=file)
    except SyntaxError as exc:
        raise ScanError(f"{file}:{exc.lineno or '?'}: cannot parse: {exc.msg}") from exc
    except ValueError as exc:  # null bytes on Python 3.11
        line = source.count("\n", 0, max(source.find("\0"), 0)) + 1
        raise ScanError(f"{file}:{line}: cannot parse: {exc}") from exc


def _build_module(tree: ast.Module, source: str, file: str) -> _Module:
    lines = source.splitlines()
    functions: list[_Func] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                qualname = prefix + child.name
                functions.append(_make_func(child, qualname, prefix.rstrip("."), lines))
                visit(child, qualname + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    by_name: dict[str, list[_Func]] = {}
    for fn in functions:
        by_name.setdefault(fn.name, []).append(fn)
    # Helpers that write directly; a call to one counts as a write in its caller.
    writers = frozenset(
        fn.name for fn in functions if any(_is_write(n, fn, frozenset()) for n in fn.own)
    )
    return _Module(file, lines, functions, by_name, writers)


def _make_func(node: FuncNode, qualname: str, scope: str, lines: list[str]) -> _Func:
    own = list(_walk_own(node.body))
    params = {a.arg for a in _all_args(node.args)}
    declared = frozenset(
        name for n in own if isinstance(n, ast.Global | ast.Nonlocal) for name in n.names
    )
    fn = _Func(
        qualname=qualname,
        name=node.name,
        scope=scope,
        node=node,
        end_line=_extended_end(node, lines),
        own=own,
        fresh=_fresh_locals(own, params),
        declared_global=declared,
    )
    for n in own:
        # `accounts = bank.accounts` makes later `accounts[k] = v` a write of "accounts".
        if (
            isinstance(n, ast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name)
            and isinstance(n.value, ast.Attribute | ast.Subscript)
        ):
            aliased = _field_of(n.value, fn.aliases)
            if aliased is not None:
                fn.aliases[n.targets[0].id] = aliased
    return fn


def _extended_end(node: FuncNode, lines: list[str]) -> int:
    """Last line of the function, counting trailing comments indented deeper than the def."""
    end = node.end_lineno or node.lineno
    for index in range(end, len(lines)):  # index is the 0-based position of line index+1
        text = lines[index]  # no tab expansion: col_offset counts a tab as one
        stripped = text.lstrip()
        if not stripped:
            continue
        if stripped.startswith("#") and len(text) - len(stripped) > node.col_offset:
            end = index + 1
            continue
        break
    return end


def _all_args(args: ast.arguments) -> list[ast.arg]:
    return [*args.posonlyargs, *args.args, *args.kwonlyargs]


def _agent_params(fn: _Func, injected: frozenset[str]) -> list[ast.arg]:
    return [
        a for a in _all_args(fn.node.args) if a.arg not in injected and a.arg not in {"self", "cls"}
    ]


def _is_fresh(value: ast.expr) -> bool:
    if isinstance(
        value,
        ast.List
        | ast.Dict
        | ast.Set
        | ast.Tuple
        | ast.ListComp
        | ast.DictComp
        | ast.SetComp
        | ast.GeneratorExp
        | ast.Constant
        | ast.JoinedStr,
    ):
        return True
    return isinstance(value, ast.Call) and _call_name(value.func) in _FRESH_CALLS


def _fresh_locals(own: list[ast.AST], params: set[str]) -> frozenset[str]:
    """Locals every binding of which is a new container: mutating them touches no state."""
    fresh_bindings: set[int] = set()
    neutral: set[int] = set()
    for n in own:
        if isinstance(n, ast.Assign):
            for target in n.targets:
                if isinstance(target, ast.Name) and _is_fresh(n.value):
                    fresh_bindings.add(id(target))
        elif isinstance(n, ast.AnnAssign | ast.NamedExpr):
            if n.value is not None and isinstance(n.target, ast.Name) and _is_fresh(n.value):
                fresh_bindings.add(id(n.target))
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            neutral.add(id(n.target))  # `parts += [x]` keeps a fresh list fresh
    fresh: set[str] = set()
    stale: set[str] = set(params)
    for n in own:
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and id(n) not in neutral:
            (fresh if id(n) in fresh_bindings else stale).add(n.id)
    return frozenset(fresh - stale)


def _call_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _root_name(expr: ast.expr) -> str | None:
    """The variable at the bottom of `a.b[c].d` or `d.setdefault(k, []).append`."""
    while True:
        if isinstance(expr, ast.Attribute | ast.Subscript):
            expr = expr.value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            expr = expr.func.value
        else:
            break
    return expr.id if isinstance(expr, ast.Name) else None


def _const_str(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _field_of(expr: ast.expr, aliases: dict[str, str]) -> str | None:
    """The record field or collection a store/mutation lands in: `x.a[k]` -> "a"."""
    if isinstance(expr, ast.Attribute):
        return expr.attr
    if isinstance(expr, ast.Subscript):
        key = _const_str(expr.slice)
        return key if key is not None else _field_of(expr.value, aliases)
    if isinstance(expr, ast.Name):
        return aliases.get(expr.id)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        return _field_of(expr.func.value, aliases)
    return None


def _short(node: ast.AST, limit: int = _SNIPPET_LIMIT) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _flag(check: ScanCheck, file: str, fn: _Func, line: int, message: str) -> ScanFlag:
    return ScanFlag(
        check=check,
        file=file,
        function=fn.qualname,
        line=line,
        class_hint=_CLASS_HINTS[check],
        message=message,
    )


def _is_state_target(target: ast.expr, fn: _Func) -> bool:
    if isinstance(target, ast.Tuple | ast.List):
        return any(_is_state_target(e, fn) for e in target.elts)
    if isinstance(target, ast.Starred):
        return _is_state_target(target.value, fn)
    if isinstance(target, ast.Attribute | ast.Subscript):
        return _root_name(target) not in fn.fresh
    if isinstance(target, ast.Name):
        return target.id in fn.declared_global
    return False


def _is_write(node: ast.AST, fn: _Func, writer_names: frozenset[str]) -> bool:
    """Does this single node store into state (not into a container the function built)?"""
    if isinstance(node, ast.Assign | ast.Delete):
        return any(_is_state_target(t, fn) for t in node.targets)
    if isinstance(node, ast.AugAssign):
        return _is_state_target(node.target, fn)
    if isinstance(node, ast.AnnAssign):
        return node.value is not None and _is_state_target(node.target, fn)
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _MUTATORS:
            return _root_name(func.value) not in fn.fresh
        name = _call_name(func)
        return name is not None and name != fn.name and name in writer_names
    return False


def _contains_write(nodes: Iterable[ast.AST], fn: _Func, writer_names: frozenset[str]) -> bool:
    return any(_is_write(n, fn, writer_names) for n in _walk_own(nodes))
