"""Check `unused_parameter` (hint: ignored_argument): an agent parameter the body never reads."""

from __future__ import annotations

import ast

from harness.scanner.flags import FuncNode, ScanCheck, ScanFlag
from harness.scanner.model import _agent_params, _call_name, _const_str, _flag, _Func, _walk_body


def _is_stub(fn: FuncNode) -> bool:
    body = list(fn.body)
    if body and isinstance(body[0], ast.Expr) and _const_str(body[0].value) is not None:
        body = body[1:]  # the docstring
    return all(
        isinstance(stmt, ast.Pass | ast.Raise)
        or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))
        for stmt in body
    )


def _check_unused_parameters(fn: _Func, injected: frozenset[str], file: str) -> list[ScanFlag]:
    node = fn.node
    decorators = {_call_name(d) for d in node.decorator_list}
    if _is_stub(node) or decorators & {"abstractmethod", "overload"}:
        return []
    loads: set[str] = set()
    for inner in _walk_body(node):
        if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Load):
            loads.add(inner.id)
        # locals()/vars() read every parameter by name
        if isinstance(inner, ast.Call) and _call_name(inner.func) in {"locals", "vars"}:
            return []
    return [
        _flag(
            ScanCheck.UNUSED_PARAMETER,
            file,
            fn,
            param.lineno,
            f"parameter `{param.arg}` is never read: whatever the agent passes is ignored",
        )
        for param in _agent_params(fn, injected)
        if param.arg not in loads and not param.arg.startswith("_")
    ]
