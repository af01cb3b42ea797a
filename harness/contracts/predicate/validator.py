"""Compile-time validation: the whitelist check every predicate passes once, before it is
ever evaluated (`PredicateError` names what is not allowed and what to write)."""

from __future__ import annotations

import ast
from typing import ClassVar

from harness.contracts.predicate.errors import PredicateError
from harness.contracts.predicate.language import (
    _CALL_HINTS,
    _FUNCTION_LIST,
    _METHOD_LIST,
    _SIGNATURES,
    BUILTINS,
    MAX_COMPREHENSION_DEPTH,
    MAX_INT_LITERAL,
    MAX_NESTING,
    MAX_STR_LITERAL,
    METHODS,
)
from harness.contracts.predicate.values import _short, _src


class _Validator:
    """Rejects everything outside the language, with a one-line fix-it message."""

    def __init__(self, roots: frozenset[str]) -> None:
        self.roots = roots
        ordered = [r for r in ("pre", "post", "args", "result") if r in roots]
        ordered += sorted(roots - set(ordered))
        self.roots_text = ", ".join(ordered)

    def check(self, node: ast.AST, scope: frozenset[str], depth: int) -> None:
        handler = getattr(self, "visit_" + type(node).__name__, None)
        if handler is None:
            raise PredicateError(
                f"{type(node).__name__} `{_src(node)}` is not allowed in predicates: "
                "see the language reference in harness/contracts/predicate.py"
            )
        handler(node, scope, depth)

    # -- leaves ------------------------------------------------------------------------

    def visit_Constant(self, node: ast.Constant, scope: frozenset[str], depth: int) -> None:
        value = node.value
        if value is None or isinstance(value, bool | float):
            return
        if type(value) is int:
            if abs(value) > MAX_INT_LITERAL:
                raise PredicateError(
                    f"integer literal {_short(value)} is larger than 10**18: use a smaller constant"
                )
            return
        if type(value) is str:
            if len(value) > MAX_STR_LITERAL:
                raise PredicateError(
                    f"string literal of {len(value)} characters is longer than "
                    f"{MAX_STR_LITERAL}: shorten it"
                )
            return
        raise PredicateError(
            f"{type(value).__name__} literal `{_src(node)}` is not allowed: "
            "use None, True, False, numbers or strings"
        )

    def visit_Name(self, node: ast.Name, scope: frozenset[str], depth: int) -> None:
        name = node.id
        if name in self.roots or name in scope:
            return
        if name in BUILTINS:
            raise PredicateError(
                f"{name!r} can only be called, as in {_SIGNATURES[name]}: "
                "functions are not values in predicates"
            )
        raise PredicateError(
            f"name {name!r} is not defined: predicates may read {self.roots_text} "
            "and comprehension variables"
        )

    # -- access --------------------------------------------------------------------------

    def visit_Attribute(self, node: ast.Attribute, scope: frozenset[str], depth: int) -> None:
        self._attr_name(node.attr)
        self.check(node.value, scope, depth)

    def _attr_name(self, attr: str) -> None:
        if attr.startswith("_"):
            raise PredicateError(
                f"attribute {attr!r} is not allowed (names starting with '_' are private): "
                f"to read a JSON key of that name write x[{attr!r}]"
            )

    def visit_Subscript(self, node: ast.Subscript, scope: frozenset[str], depth: int) -> None:
        self.check(node.value, scope, depth)
        if isinstance(node.slice, ast.Slice):
            for part in (node.slice.lower, node.slice.upper, node.slice.step):
                if part is not None:
                    self.check(part, scope, depth)
        else:
            self.check(node.slice, scope, depth)

    def visit_Call(self, node: ast.Call, scope: frozenset[str], depth: int) -> None:
        func = node.func
        for kw in node.keywords:
            if kw.arg is None:
                raise PredicateError(
                    "**mapping arguments are not allowed: pass arguments positionally"
                )
            raise PredicateError(
                f"keyword argument {kw.arg}= is not allowed: pass arguments positionally "
                "(sorted() has no key=; sort a list of tuples instead)"
            )
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                self.visit_Starred(arg, scope, depth)
        if isinstance(func, ast.Name):
            name = func.id
            if name not in BUILTINS:
                hint = _CALL_HINTS.get(name)
                prefix = f"{hint}; " if hint else ""
                raise PredicateError(
                    f"call of {name!r} is not allowed: {prefix}the callable functions are "
                    f"{_FUNCTION_LIST}"
                )
            self._arity(name, BUILTINS[name], len(node.args))
        elif isinstance(func, ast.Attribute):
            self.check(func.value, scope, depth)  # left to right: the receiver's faults first
            self._attr_name(func.attr)
            if func.attr not in METHODS:
                raise PredicateError(
                    f"method .{func.attr}() is not allowed: the allowed methods are {_METHOD_LIST}"
                )
            self._arity(func.attr, METHODS[func.attr], len(node.args))
        else:
            self.check(func, scope, depth)  # a lambda etc. gets its own, sharper message
            raise PredicateError(
                f"`{_src(func)}` cannot be called: only the functions {_FUNCTION_LIST} "
                "and the whitelisted methods x.m(...) can be called"
            )
        for arg in node.args:
            self.check(arg, scope, depth)

    def _arity(self, name: str, arity: tuple[int, int | None], got: int) -> None:
        low, high = arity
        if got < low or (high is not None and got > high):
            raise PredicateError(
                f"{name}() does not take {got} argument(s): write {_SIGNATURES[name]}"
            )

    # -- operators ------------------------------------------------------------------------

    def visit_BoolOp(self, node: ast.BoolOp, scope: frozenset[str], depth: int) -> None:
        for value in node.values:
            self.check(value, scope, depth)

    def visit_UnaryOp(self, node: ast.UnaryOp, scope: frozenset[str], depth: int) -> None:
        if isinstance(node.op, ast.Invert):
            raise PredicateError("operator ~ is not allowed: use `not x` for negation")
        self.check(node.operand, scope, depth)

    _BIT_OPS: ClassVar[dict[type[ast.operator], str]] = {
        ast.BitOr: "|",
        ast.BitAnd: "&",
        ast.BitXor: "^",
        ast.LShift: "<<",
        ast.RShift: ">>",
        ast.MatMult: "@",
    }

    def visit_BinOp(self, node: ast.BinOp, scope: frozenset[str], depth: int) -> None:
        if isinstance(node.op, ast.Pow):
            raise PredicateError(
                "** is not allowed: multiply explicitly (x * x) or write the constant"
            )
        symbol = self._BIT_OPS.get(type(node.op))
        if symbol is not None:
            raise PredicateError(
                f"operator {symbol} is not allowed: use and / or / not for logic, "
                "and - for set difference"
            )
        self.check(node.left, scope, depth)
        self.check(node.right, scope, depth)

    def visit_Compare(self, node: ast.Compare, scope: frozenset[str], depth: int) -> None:
        operands = [node.left, *node.comparators]
        for i, op in enumerate(node.ops):
            if isinstance(op, ast.Is | ast.IsNot) and not (
                _is_none(operands[i]) or _is_none(operands[i + 1])
            ):
                raise PredicateError(
                    "`is` is only allowed with None (x is None, x is not None): "
                    "use == to compare values"
                )
        for operand in operands:
            self.check(operand, scope, depth)

    def visit_IfExp(self, node: ast.IfExp, scope: frozenset[str], depth: int) -> None:
        self.check(node.test, scope, depth)
        self.check(node.body, scope, depth)
        self.check(node.orelse, scope, depth)

    # -- displays -------------------------------------------------------------------------

    def _elements(self, elts: list[ast.expr], scope: frozenset[str], depth: int) -> None:
        for elt in elts:
            self.check(elt, scope, depth)

    def visit_Tuple(self, node: ast.Tuple, scope: frozenset[str], depth: int) -> None:
        self._elements(node.elts, scope, depth)

    def visit_List(self, node: ast.List, scope: frozenset[str], depth: int) -> None:
        self._elements(node.elts, scope, depth)

    def visit_Set(self, node: ast.Set, scope: frozenset[str], depth: int) -> None:
        self._elements(node.elts, scope, depth)

    def visit_Dict(self, node: ast.Dict, scope: frozenset[str], depth: int) -> None:
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                raise PredicateError(
                    "** unpacking in a dict display is not allowed: "
                    "build the dict with a comprehension"
                )
            self.check(key, scope, depth)
            self.check(value, scope, depth)

    # -- comprehensions ---------------------------------------------------------------------

    def _comprehension(
        self,
        node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
        elts: list[ast.expr],
        scope: frozenset[str],
        depth: int,
    ) -> None:
        # Everything inside (element, iterables, filters) is nested under all of the
        # comprehension's `for` clauses: a comprehension in an iterable still multiplies.
        total = depth + len(node.generators)
        if total > MAX_COMPREHENSION_DEPTH:
            raise PredicateError(
                f"comprehensions nested more than {MAX_COMPREHENSION_DEPTH} deep "
                f"({total} for clauses in one chain): split the predicate into several "
                "clauses, or iterate .items() once instead of nesting"
            )
        inner = scope
        for gen in node.generators:
            if gen.is_async:
                raise PredicateError("async comprehensions are not allowed: use a plain for")
            self.check(gen.iter, inner, total)  # the first iterable sees only the outer scope
            inner = inner | self._targets(gen.target)
            for cond in gen.ifs:
                self.check(cond, inner, total)
        for elt in elts:
            self.check(elt, inner, total)

    def _targets(self, target: ast.expr) -> frozenset[str]:
        if isinstance(target, ast.Name):
            names = [target]
        elif isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
            names = [e for e in target.elts if isinstance(e, ast.Name)]
        else:
            raise PredicateError(
                f"comprehension target `{_src(target)}` is not allowed: use a name or a "
                "tuple of names (for k, v in x.items())"
            )
        for name in names:
            if name.id in self.roots or name.id in BUILTINS:
                what = "the root" if name.id in self.roots else "the function"
                raise PredicateError(
                    f"comprehension variable {name.id!r} shadows {what} {name.id!r}: "
                    "choose another name"
                )
        return frozenset(n.id for n in names)

    def visit_ListComp(self, node: ast.ListComp, scope: frozenset[str], depth: int) -> None:
        self._comprehension(node, [node.elt], scope, depth)

    def visit_SetComp(self, node: ast.SetComp, scope: frozenset[str], depth: int) -> None:
        self._comprehension(node, [node.elt], scope, depth)

    def visit_GeneratorExp(self, node: ast.GeneratorExp, scope: frozenset[str], depth: int) -> None:
        self._comprehension(node, [node.elt], scope, depth)

    def visit_DictComp(self, node: ast.DictComp, scope: frozenset[str], depth: int) -> None:
        self._comprehension(node, [node.key, node.value], scope, depth)

    # -- rejected with a specific message ---------------------------------------------------

    def visit_Lambda(self, node: ast.AST, scope: frozenset[str], depth: int) -> None:
        raise PredicateError("lambda is not allowed: write the expression inline")

    def visit_NamedExpr(self, node: ast.AST, scope: frozenset[str], depth: int) -> None:
        raise PredicateError(
            "assignment expressions (:=) are not allowed: repeat the expression instead"
        )

    def visit_Starred(self, node: ast.AST, scope: frozenset[str], depth: int) -> None:
        raise PredicateError(
            "* unpacking is not allowed: pass the list itself, or build it with a comprehension"
        )

    def visit_JoinedStr(self, node: ast.AST, scope: frozenset[str], depth: int) -> None:
        raise PredicateError("f-strings are not allowed: compare the parts, or use str(x) + '...'")

    visit_FormattedValue = visit_JoinedStr

    def visit_Await(self, node: ast.AST, scope: frozenset[str], depth: int) -> None:
        raise PredicateError(
            f"{type(node).__name__.lower()} is not allowed: predicates are plain expressions"
        )

    visit_Yield = visit_Await
    visit_YieldFrom = visit_Await


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _nesting(tree: ast.AST) -> int:
    """Depth of the tree, computed without recursion (stops early past the limit)."""
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_NESTING:
            break
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest
