"""Check `parameter_only_logged` (hint: ignored_argument): an agent parameter whose every read
only echoes it (an f-string returned, raised or logged)."""

from __future__ import annotations

import ast

from harness.scanner.flags import (
    _LOG_CONTROL_KEYWORDS,
    _LOG_METHODS,
    _LOG_ROOTS,
    _PURE_FORMATTERS,
    _STR_METHODS,
    FuncNode,
    ScanCheck,
    ScanFlag,
)
from harness.scanner.model import _agent_params, _call_name, _flag, _Func, _root_name, _walk_body


def _is_log_call(call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id == "print"
    if isinstance(func, ast.Attribute):
        if func.attr in _LOG_METHODS or func.attr == "log":
            return True
        root = _root_name(func)
        return root is not None and root in _LOG_ROOTS
    return False


def _parents(fn: FuncNode) -> dict[int, ast.AST]:
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(fn):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    return parents


class _EchoAnalysis:
    """Decides whether a read of a name only ever ends up in messages and logs."""

    _TRANSPARENT = (
        ast.BinOp,
        ast.IfExp,
        ast.Dict,
        ast.List,
        ast.Tuple,
        ast.Set,
        ast.FormattedValue,
        ast.JoinedStr,
        ast.Starred,
        ast.BoolOp,
        ast.keyword,
    )

    def __init__(self, fn: _Func) -> None:
        self.fn = fn
        self.parents = _parents(fn.node)
        self.loads: dict[str, list[ast.Name]] = {}
        for node in _walk_body(fn.node):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                self.loads.setdefault(node.id, []).append(node)

    def occurrence_is_echo(self, name: ast.Name) -> bool:
        """Inside log-call arguments, or inside an f-string whose text only reaches echoes."""
        node: ast.AST = name
        looked_up = False  # the value was used to read something, e.g. f"{db.users[user_id]}"
        while (parent := self.parents.get(id(node))) is not None and not isinstance(
            parent, ast.stmt
        ):
            if isinstance(parent, ast.keyword) and parent.arg in _LOG_CONTROL_KEYWORDS:
                return False  # `print(..., file=out)` routes the output: a real use
            if isinstance(parent, ast.Call) and node is not parent.func:
                if _is_log_call(parent):
                    return True
                looked_up = looked_up or _call_name(parent.func) not in _PURE_FORMATTERS
            elif isinstance(parent, ast.Subscript) and node is parent.slice:
                looked_up = True
            elif isinstance(parent, ast.Attribute) and parent.attr not in _STR_METHODS:
                looked_up = True  # an object argument whose fields are shown
            elif isinstance(parent, ast.JoinedStr):
                return not looked_up and self.flows_to_echo(parent, depth=0)
            node = parent
        return False

    def flows_to_echo(self, node: ast.AST, depth: int) -> bool:
        """Does this value end in a return, a raise, a log line or an expression statement?"""
        while True:
            parent = self.parents.get(id(node))
            if parent is None:
                return False
            if isinstance(parent, ast.Return | ast.Raise | ast.Expr | ast.Assert):
                return True
            if isinstance(parent, ast.Call):
                if node is parent.func:
                    return False
                # A log line, or the message of an exception being raised.
                return _is_log_call(parent) or isinstance(self.parents.get(id(parent)), ast.Raise)
            if (
                isinstance(parent, ast.Attribute)
                and parent.attr in _STR_METHODS
                and isinstance(grand := self.parents.get(id(parent)), ast.Call)
                and grand.func is parent
            ):
                node = grand
                continue
            if isinstance(parent, self._TRANSPARENT):
                if isinstance(parent, ast.IfExp) and node is parent.test:
                    return False
                node = parent
                continue
            targets = _assigned_names(parent)
            if targets is not None and depth < 3:
                # `msg = f"..."`: an echo if every later read of `msg` is one.
                uses = [u for t in targets for u in self.loads.get(t, [])]
                return all(self.flows_to_echo(u, depth + 1) for u in uses)
            return False


def _assigned_names(stmt: ast.AST) -> list[str] | None:
    """Local names a simple assignment binds, or None if it stores anywhere else."""
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, ast.AnnAssign | ast.AugAssign):
        targets = [stmt.target]
    else:
        return None
    if all(isinstance(t, ast.Name) for t in targets):
        return [t.id for t in targets if isinstance(t, ast.Name)]
    return None


def _check_logged_only(fn: _Func, injected: frozenset[str], file: str) -> list[ScanFlag]:
    params = _agent_params(fn, injected)
    if not params:
        return []
    analysis = _EchoAnalysis(fn)
    flags: list[ScanFlag] = []
    for param in params:
        loads = analysis.loads.get(param.arg, [])
        if not loads:
            continue  # unused parameters are a different lead
        if all(analysis.occurrence_is_echo(n) for n in loads):
            first = min(loads, key=lambda n: (n.lineno, n.col_offset))
            flags.append(
                _flag(
                    ScanCheck.PARAMETER_ONLY_LOGGED,
                    file,
                    fn,
                    first.lineno,
                    f"parameter `{param.arg}` is only echoed in messages/logs; it never "
                    "affects state or a decision",
                )
            )
    return flags
