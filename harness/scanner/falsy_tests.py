"""Check `falsy_truthiness_test` (hint: ignored_argument): a truthiness test of a parameter
whose type has a meaningful falsy value."""

from __future__ import annotations

import ast
import itertools
from collections.abc import Collection, Iterator

from harness.scanner.flags import _FALSY_BY_TYPE, ScanCheck, ScanFlag
from harness.scanner.model import (
    _agent_params,
    _call_name,
    _const_str,
    _flag,
    _Func,
    _short,
    _walk_body,
)


def _falsy_example(annotation: ast.expr | None) -> str | None:
    """What falsy value the annotated type admits (None for bool, classes, unannotated)."""
    if annotation is None:
        return None
    text = _const_str(annotation)
    if text is not None:  # a string annotation: parse it, still without evaluating anything
        try:
            annotation = ast.parse(text, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(annotation, ast.Name | ast.Attribute):
        return _FALSY_BY_TYPE.get(_call_name(annotation) or "")
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _falsy_example(annotation.left) or _falsy_example(annotation.right)
    if isinstance(annotation, ast.Subscript):
        base = _call_name(annotation.value)
        inner = annotation.slice
        if base in {"Optional", "Annotated"}:
            first = inner.elts[0] if isinstance(inner, ast.Tuple) else inner
            return _falsy_example(first)
        if base == "Union":
            elts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            return next((e for e in map(_falsy_example, elts) if e), None)
        return _FALSY_BY_TYPE.get(base or "")
    return None


def _tested_names(test: ast.expr) -> Iterator[ast.Name]:
    """Bare names whose truthiness decides `test` (directly, under `not`, or in and/or)."""
    if isinstance(test, ast.Name):
        yield test
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from _tested_names(test.operand)
    elif isinstance(test, ast.BoolOp):
        for value in test.values:
            yield from _tested_names(value)


def _is_empty_literal(node: ast.expr) -> bool:
    """`0`, `""`, `[]`, `{}`, `()`, `set()` and the like (not None, which differs from 0)."""
    if isinstance(node, ast.Constant):
        return node.value is not None and not node.value
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return not node.elts
    if isinstance(node, ast.Dict):
        return not node.keys
    return (
        isinstance(node, ast.Call)
        and not node.args
        and not node.keywords
        and _call_name(node.func) in {"list", "dict", "set", "tuple", "str", "int", "float"}
    )


def _statement_keyword(stmt: ast.stmt, lines: list[str]) -> str:
    if isinstance(stmt, ast.If):
        row = lines[stmt.lineno - 1] if stmt.lineno <= len(lines) else ""
        return "elif" if row[stmt.col_offset :].startswith("elif") else "if"
    return {ast.While: "while", ast.Assert: "assert"}.get(type(stmt), "if")


def _truthiness_hits(
    fn: _Func, names: Collection[str], lines: list[str]
) -> list[tuple[ast.Name, str, str | None]]:
    """(name node, snippet shown, suggested replacement or None) per truthiness test of one
    of `names` in `fn`."""
    hits: list[tuple[ast.Name, str, str | None]] = []
    seen: set[int] = set()

    def add_test(test: ast.expr, render: str, keyword: str | None, colon: str) -> None:
        for name in _tested_names(test):
            if name.id not in names or id(name) in seen:
                continue
            seen.add(id(name))
            suggestion = None
            if keyword is not None and test is name:
                suggestion = f"{keyword} {name.id} is not None{colon}"
            elif keyword is not None and isinstance(test, ast.UnaryOp) and test.operand is name:
                suggestion = f"{keyword} {name.id} is None{colon}"
            hits.append((name, render, suggestion))

    for node in _walk_body(fn.node):
        if isinstance(node, ast.If | ast.While | ast.Assert):
            keyword = _statement_keyword(node, lines)
            colon = "" if isinstance(node, ast.Assert) else ":"
            add_test(node.test, f"{keyword} {_short(node.test)}{colon}", keyword, colon)
        elif isinstance(node, ast.IfExp):
            add_test(node.test, f"... if {_short(node.test)} else ...", None, "")
        elif isinstance(node, ast.comprehension):
            for cond in node.ifs:
                add_test(cond, f"... if {_short(cond)}", None, "")
        elif isinstance(node, ast.match_case) and node.guard is not None:
            add_test(node.guard, f"case ... if {_short(node.guard)}:", None, "")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "bool"
            and len(node.args) == 1
        ):
            add_test(node.args[0], _short(node), None, "")
    # `p or default` / `p and x` as values: every operand but the last is tested.
    for node in _walk_body(fn.node):
        if isinstance(node, ast.BoolOp):
            for value, following in itertools.pairwise(node.values):
                # `ids or []` swaps an empty value for an equal one: harmless.
                if not (isinstance(node.op, ast.Or) and _is_empty_literal(following)):
                    add_test(value, _short(node), None, "")
    return hits


def _check_falsy_tests(
    fn: _Func, injected: frozenset[str], file: str, lines: list[str]
) -> list[ScanFlag]:
    falsy = {
        a.arg: example
        for a in _agent_params(fn, injected)
        if (example := _falsy_example(a.annotation)) is not None
    }
    if not falsy:
        return []
    flags: list[ScanFlag] = []
    for name, render, suggestion in _truthiness_hits(fn, falsy, lines):
        advice = f"use `{suggestion}`" if suggestion else f"test `{name.id} is None` explicitly"
        flags.append(
            _flag(
                ScanCheck.FALSY_TRUTHINESS_TEST,
                file,
                fn,
                name.lineno,
                f"`{render}` treats {falsy[name.id]} like a missing {name.id}; {advice}",
            )
        )
    return flags
