"""Check `optional_bool_truthiness` (hint: ignored_argument): a truthiness test of a
`bool | None` parameter, where `False` is a value of its own."""

from __future__ import annotations

import ast

from harness.scanner.falsy_tests import _truthiness_hits
from harness.scanner.flags import ScanCheck, ScanFlag
from harness.scanner.model import _agent_params, _call_name, _const_str, _flag, _Func


def _annotation_node(annotation: ast.expr | None) -> ast.expr | None:
    text = _const_str(annotation) if annotation is not None else None
    if text is None:
        return annotation
    try:  # a string annotation: parse it, still without evaluating anything
        return ast.parse(text, mode="eval").body
    except SyntaxError:
        return None


def _union_members(annotation: ast.expr | None) -> list[ast.expr] | None:
    """The members of `X | Y`, `Optional[X]` or `Union[X, Y]`; None for anything else."""
    node = _annotation_node(annotation)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left = _union_members(node.left) or [node.left]
        right = _union_members(node.right) or [node.right]
        return [*left, *right]
    if isinstance(node, ast.Subscript):
        base = _call_name(node.value)
        inner = node.slice
        elts = list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
        if base == "Optional":
            return [*elts, ast.Constant(None)]
        if base == "Union":
            return elts
        if base == "Annotated":
            return _union_members(elts[0])
    return None


def _is_optional_bool(annotation: ast.expr | None) -> bool:
    """`bool | None` in any spelling: exactly bool and None."""
    members = _union_members(annotation)
    if members is None:
        return False
    kinds = set()
    for member in members:
        none = isinstance(member, ast.Constant) and member.value is None
        if none or _call_name(member) == "NoneType":
            kinds.add("None")
        else:
            kinds.add(_call_name(member) or "?")
    return kinds == {"bool", "None"}


def _check_optional_bool_tests(
    fn: _Func, injected: frozenset[str], file: str, lines: list[str]
) -> list[ScanFlag]:
    names = {a.arg for a in _agent_params(fn, injected) if _is_optional_bool(a.annotation)}
    if not names:
        return []
    flags: list[ScanFlag] = []
    for name, render, suggestion in _truthiness_hits(fn, names, lines):
        advice = f"use `{suggestion}`" if suggestion else f"test `{name.id} is None` explicitly"
        flags.append(
            _flag(
                ScanCheck.OPTIONAL_BOOL_TRUTHINESS,
                file,
                fn,
                name.lineno,
                f"`{render}` treats an explicit False like a missing {name.id} (bool | None: "
                f"None is 'leave as it is', False a value); {advice}",
            )
        )
    return flags
