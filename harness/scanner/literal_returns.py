"""Check `literal_success_return` (hint: phantom_effect): a fixed success value returned by a
writer function on a path with no state write before it."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from harness.scanner.flags import _ERROR_KEYS, _FAILURE_TEXT, _SUCCESS_KEYS, ScanCheck, ScanFlag
from harness.scanner.model import (
    _all_args,
    _const_str,
    _contains_write,
    _flag,
    _Func,
    _is_scope,
    _is_write,
    _Module,
    _short,
)


def _is_literalish(node: ast.expr, params: set[str], top: bool) -> bool:
    """A value fixed at write time: constants, constant displays, param-only f-strings."""
    if isinstance(node, ast.Constant):
        if not top:
            return True
        if isinstance(node.value, str | bytes):
            return bool(node.value)
        return node.value is True
    if isinstance(node, ast.JoinedStr):
        return all(_is_literal_fstring_part(v, params) for v in node.values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return not top and isinstance(node.operand, ast.Constant)
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            return False  # `**spread` reads a mapping
        parts: list[ast.expr] = [k for k in node.keys if k is not None] + node.values
    elif isinstance(node, ast.List | ast.Tuple | ast.Set):
        parts = node.elts
    else:
        return False
    if not all(_is_literalish(p, params, False) for p in parts):
        return False
    # A success claim needs words or True: `(None, -1)` and `[]` are sentinels, not claims.
    return not top or any(_is_literalish(p, params, True) for p in _leaves(node))


def _leaves(node: ast.expr) -> Iterator[ast.expr]:
    """Scalar values of a display; dict keys are names, not claims."""
    if isinstance(node, ast.Dict):
        for value in node.values:
            yield from _leaves(value)
    elif isinstance(node, ast.List | ast.Tuple | ast.Set):
        for element in node.elts:
            yield from _leaves(element)
    else:
        yield node


def _is_literal_fstring_part(part: ast.expr, params: set[str]) -> bool:
    if isinstance(part, ast.Constant):
        return True
    if isinstance(part, ast.FormattedValue):
        spec_ok = part.format_spec is None or _is_literalish(part.format_spec, params, False)
        return isinstance(part.value, ast.Name) and part.value.id in params and spec_ok
    return False


def _reads_as_failure(node: ast.expr) -> bool:
    """Error and no-op replies legitimately come before any write; only successes are leads."""
    if isinstance(node, ast.Dict):
        for key, value in zip(node.keys, node.values, strict=True):
            name = _const_str(key) if key is not None else None
            if name is None:
                continue
            lowered = name.lower()
            if lowered in _SUCCESS_KEYS:
                if isinstance(value, ast.Constant) and value.value is False:
                    return True
                continue
            empty = isinstance(value, ast.Constant) and value.value in (None, "", False)
            if (lowered in _ERROR_KEYS and not empty) or _reads_as_failure(value):
                return True
        return False
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return any(_reads_as_failure(e) for e in node.elts)
    if isinstance(node, ast.JoinedStr):
        text = "".join(v.value for v in node.values if isinstance(v, ast.Constant))
        return bool(_FAILURE_TEXT.search(text))
    text = _const_str(node)
    return text is not None and bool(_FAILURE_TEXT.search(text))


def _sub_blocks(
    stmt: ast.stmt, fn: _Func, writers: frozenset[str]
) -> list[tuple[list[ast.stmt], bool]]:
    """Nested statement blocks, each with "a write in an earlier sibling block may have run"."""
    if isinstance(stmt, ast.Try | ast.TryStar):
        body_writes = _contains_write(stmt.body, fn, writers)
        after = [h.body for h in stmt.handlers] + [stmt.orelse, stmt.finalbody]
        return [(stmt.body, False)] + [(block, body_writes) for block in after]
    if isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
        return [(stmt.body, False), (stmt.orelse, _contains_write(stmt.body, fn, writers))]
    if isinstance(stmt, ast.If):
        return [(stmt.body, False), (stmt.orelse, False)]
    if isinstance(stmt, ast.With | ast.AsyncWith):
        return [(stmt.body, False)]
    if isinstance(stmt, ast.Match):
        return [(case.body, False) for case in stmt.cases]
    return []


def _header_nodes(stmt: ast.stmt) -> list[ast.AST]:
    """Expressions evaluated before a compound statement's blocks (tests, iterables, guards)."""
    nodes: list[ast.AST] = [
        c
        for c in ast.iter_child_nodes(stmt)
        if not isinstance(c, ast.stmt | ast.excepthandler | ast.match_case)
    ]
    if isinstance(stmt, ast.Match):
        nodes += [case.guard for case in stmt.cases if case.guard is not None]
    return nodes


def _check_literal_returns(fn: _Func, module: _Module) -> list[ScanFlag]:
    writers = module.writer_names
    if not any(_is_write(n, fn, writers) for n in fn.own):
        return []
    params = {a.arg for a in _all_args(fn.node.args)}
    flags: list[ScanFlag] = []

    def visit(block: list[ast.stmt], written: bool) -> None:
        for stmt in block:
            if isinstance(stmt, ast.Return):
                value = stmt.value
                if (
                    not written
                    and value is not None
                    and _is_literalish(value, params, True)
                    and not _reads_as_failure(value)
                ):
                    flags.append(
                        _flag(
                            ScanCheck.LITERAL_SUCCESS_RETURN,
                            module.file,
                            fn,
                            stmt.lineno,
                            f"returns a fixed success value {_short(value)} on a path with no "
                            "state write before it",
                        )
                    )
            elif not _is_scope(stmt):
                header_wrote = written or _contains_write(_header_nodes(stmt), fn, writers)
                for sub, earlier in _sub_blocks(stmt, fn, writers):
                    visit(sub, header_wrote or earlier)
            written = written or _contains_write([stmt], fn, writers)

    visit(fn.node.body, False)
    return flags
