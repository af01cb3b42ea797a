"""Predicates: a small, safe expression language over JSON state.

A predicate is one Python *expression* (never statements) over the roots ``pre`` (state
before the call), ``post`` (state after), ``args`` (the call's arguments) and ``result``
(its return value)::

    post.bank.accounts[args.src].balance == pre.bank.accounts[args.src].balance - args.amount
    all(r.quantity > 0 for r in post.inventory.reservations.values())
    args.price is None or post.inventory.items[args.sku].price == args.price

The text is parsed with ``ast``, checked against a whitelist once (`compile_predicate`,
which raises `PredicateError`), and evaluated by a tree-walking interpreter with a step
budget. Python's own ``eval`` is never used.

Language
--------
- Names: the roots, comprehension variables, and the functions below (only when called).
- Literals: None, True, False, ints (``abs <= 10**18``), floats, strings (<= 10 000 chars);
  tuple, list, set and dict displays.
- ``x.name`` reads key ``name`` of an object (a missing key is `MissingPath`); names that
  start with ``_`` are rejected: write ``x["_name"]``. ``x[k]`` reads a key, list index
  or character (missing is `AbsentKey`); ``x[a:b:c]`` slices with int bounds.
- Methods, only as ``x.m(...)``: objects ``keys() values() items() get(k[, default])``;
  lists ``count(v) index(v)``; strings ``startswith(s) endswith(s) lower() upper()
  strip([chars]) split([sep])``. ``x.values`` without a call reads the key ``"values"``.
  ``keys()`` is a set, ``values()`` a list, ``items()`` a list of (key, value) pairs.
- Functions: len sum min max abs any all sorted set int float str bool round sha256;
  positional arguments only (no ``key=``). ``sha256(s)`` is the hex SHA-256 digest of the
  UTF-8 bytes of string ``s`` (observation clauses compare digests recorded at issue).
- Operators: ``and or not``, unary ``- +``, ``+ - * / // %`` (no ``**``, no bit operators;
  ``-`` on sets is difference), comparisons ``== != < <= > >= in not in`` (chains
  allowed), ``is`` / ``is not`` only against None, ``a if c else b``.
- Comprehensions: list, set, dict and generator, with ``if`` filters; the target is a
  name or a tuple of names; at most 2 ``for`` clauses along any nesting chain.

Semantics
---------
- ``==``, ``!=``, ``in`` and ``count``/``index`` use the harness's canonical equality
  (`harness.targets.equality.canonical_equal`): type-strict, so ``True != 1`` and
  ``2 != 2.0`` unless the policy admits the numeric tower. Tuples compare like lists;
  sets compare by canonical membership. ``k in obj`` tests keys, ``v in list`` elements,
  ``s in str`` substrings. Iterating an object iterates its keys.
- Ordering (``<``, min, max, sorted) is defined between numbers, between strings, and
  between lists (or tuples) of those; anything else is a `PredicateTypeError`.
- Every node evaluated and every element iterated or built costs a step (default budget
  200 000). Exceeding the budget, building a string or list longer than 100 000 with
  ``+``, ``*`` or ``str()``, an int beyond ``10**100``, or ``int()``/``float()`` of a
  string longer than 10 000 raises `BudgetExceeded`.
- `Predicate.holds` treats `AbsentKey` (a clause about a record that is not there) as
  False; the other runtime errors propagate, each carrying a ``reason`` code.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import operator
import warnings
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from harness.errors import HarnessError
from harness.targets.equality import JSON, STRICT, EqualityPolicy, canonical_equal

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_ROOTS",
    "AbsentKey",
    "BudgetExceeded",
    "MissingPath",
    "Predicate",
    "PredicateError",
    "PredicateRuntimeError",
    "PredicateTypeError",
    "compile_predicate",
]

DEFAULT_ROOTS: frozenset[str] = frozenset({"pre", "post", "args", "result"})
DEFAULT_BUDGET = 200_000

MAX_INT_LITERAL = 10**18
MAX_STR_LITERAL = 10_000
MAX_SEQUENCE = 100_000  # longest string / list / tuple an operation may build
MAX_INT_RESULT = 10**100
MAX_INT_PARSE = 10_000  # longest string int() / float() will parse
MAX_COMPREHENSION_DEPTH = 2
MAX_NESTING = 60  # AST depth; keeps the recursive validator and interpreter far from the C stack

# Builtins and methods with their (min, max) positional arity; max None = unbounded.
BUILTINS: dict[str, tuple[int, int | None]] = {
    "len": (1, 1),
    "sum": (1, 2),
    "min": (1, None),
    "max": (1, None),
    "abs": (1, 1),
    "any": (1, 1),
    "all": (1, 1),
    "sorted": (1, 1),
    "set": (0, 1),
    "int": (1, 1),
    "float": (1, 1),
    "str": (1, 1),
    "bool": (1, 1),
    "round": (1, 2),
    "sha256": (1, 1),
}
METHODS: dict[str, tuple[int, int | None]] = {
    "keys": (0, 0),
    "values": (0, 0),
    "items": (0, 0),
    "get": (1, 2),
    "count": (1, 1),
    "index": (1, 1),
    "startswith": (1, 1),
    "endswith": (1, 1),
    "lower": (0, 0),
    "upper": (0, 0),
    "strip": (0, 1),
    "split": (0, 1),
}
_SIGNATURES: dict[str, str] = {
    "len": "len(x)",
    "sum": "sum(xs) or sum(xs, start)",
    "min": "min(xs) or min(a, b, ...)",
    "max": "max(xs) or max(a, b, ...)",
    "abs": "abs(x)",
    "any": "any(xs)",
    "all": "all(xs)",
    "sorted": "sorted(xs)",
    "set": "set() or set(xs)",
    "int": "int(x)",
    "float": "float(x)",
    "str": "str(x)",
    "bool": "bool(x)",
    "round": "round(x) or round(x, ndigits)",
    "sha256": "sha256(s)",
    "keys": "x.keys()",
    "values": "x.values()",
    "items": "x.items()",
    "get": "x.get(key) or x.get(key, default)",
    "count": "xs.count(v)",
    "index": "xs.index(v)",
    "startswith": "s.startswith(prefix)",
    "endswith": "s.endswith(suffix)",
    "lower": "s.lower()",
    "upper": "s.upper()",
    "strip": "s.strip() or s.strip(chars)",
    "split": "s.split() or s.split(sep)",
}
_CALL_HINTS: dict[str, str] = {
    "range": "iterate over a list or object from the state instead",
    "getattr": "write x.name or x['name']",
    "hasattr": "write 'name' in x",
    "list": "write a list comprehension [v for v in xs]",
    "dict": "write a dict comprehension {k: v for k, v in xs.items()}",
    "tuple": "write a tuple display (a, b)",
    "isinstance": "compare with None or test the value itself",
    "type": "compare with None or test the value itself",
    "enumerate": "iterate .items() of an object, or index a list directly",
    "zip": "index the lists directly",
    "reversed": "use sorted(xs) or a slice xs[::-1]",
}
_METHOD_KINDS: dict[str, str] = {
    **dict.fromkeys(("keys", "values", "items", "get"), "objects"),
    **dict.fromkeys(("count", "index"), "lists"),
    **dict.fromkeys(("startswith", "endswith", "lower", "upper", "strip", "split"), "strings"),
}
_METHOD_LIST = (
    "keys() values() items() get() on objects, count() index() on lists, "
    "startswith() endswith() lower() upper() strip() split() on strings"
)
_FUNCTION_LIST = ", ".join(BUILTINS)


# --------------------------------------------------------------------------------------
# Errors


class PredicateError(HarnessError, ValueError):
    """The text is not in the predicate language (raised by `compile_predicate`)."""


class PredicateRuntimeError(HarnessError):
    """Evaluation failed; `reason` is the code the checker reports."""

    reason: ClassVar[str] = "predicate_type_error"


class MissingPath(PredicateRuntimeError):
    """`x.name` on an object without key `name`, or a root that is not bound."""

    reason: ClassVar[str] = "no_observable_state"


class AbsentKey(PredicateRuntimeError):
    """`x[k]` where the object has no key k or the index is out of range."""

    reason: ClassVar[str] = "absent_key"


class PredicateTypeError(PredicateRuntimeError):
    """An operation on values of the wrong type (or a Python error inside one)."""

    reason: ClassVar[str] = "predicate_type_error"


class BudgetExceeded(PredicateRuntimeError):
    """Too many steps, or a value too large to build."""

    reason: ClassVar[str] = "predicate_budget_exceeded"


# --------------------------------------------------------------------------------------
# Helpers


def _src(node: ast.AST) -> str:
    """The node as one line of source, shortened for messages."""
    try:
        text = ast.unparse(node)
    except Exception:  # unparse of a malformed node must not mask the real error
        text = type(node).__name__
    text = " ".join(text.split())
    return text if len(text) <= 120 else text[:117] + "..."


def _kind(value: object) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, _PSet):
        return "set"
    if isinstance(value, _Lazy):
        return "generator"
    return type(value).__name__


def _short(value: object) -> str:
    """A bounded repr: never stringifies a whole container."""
    if isinstance(value, str):
        return repr(value[:60]) + ("..." if len(value) > 60 else "")
    if isinstance(value, dict | list | tuple | _PSet):
        return f"<{_kind(value)} of {len(value)} items>"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return "<very large int>"
    if value is None or isinstance(value, int | float):
        return repr(value)
    return f"<{_kind(value)}>"


def _is_number(value: object) -> bool:
    return isinstance(value, int | float)  # bool included, as in Python arithmetic


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _orderable(a: object, b: object) -> bool:
    if _is_number(a) and _is_number(b):
        return True
    return type(a) is type(b) and type(a) in (str, list, tuple)


class _PSet:
    """A set with type-strict membership: elements are keyed by their canonical key, so
    {1, True} has two elements. Iterates in insertion order (deterministic)."""

    __slots__ = ("items",)
    __hash__ = None  # type: ignore[assignment]  # mutable while built; nested sets use keys

    def __init__(self) -> None:
        self.items: dict[Hashable, Any] = {}

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.items.values())

    def __eq__(self, other: object) -> bool:
        # Reached through canonical_equal's scalar comparison; keys share one policy.
        return isinstance(other, _PSet) and self.items.keys() == other.items.keys()

    def __repr__(self) -> str:
        if not self.items:
            return "set()"
        return "{" + ", ".join(repr(v) for v in self.items.values()) + "}"


class _Lazy:
    """The value of a generator expression: iterable once, lazily (so any/all stop early)."""

    __slots__ = ("iterator",)

    def __init__(self, iterator: Iterator[Any]) -> None:
        self.iterator = iterator

    def __iter__(self) -> Iterator[Any]:
        return self.iterator

    def __repr__(self) -> str:
        return "<generator>"


# --------------------------------------------------------------------------------------
# Compile-time validation


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


# --------------------------------------------------------------------------------------
# Read-set analysis (args_read, paths_read)


def _const_segment(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and (type(node.value) is str or type(node.value) is int):
        return str(node.value)
    return None


class _Chain:
    """An access chain rooted at a root name; `open` is False once a method or slice has
    turned the value into something paths can no longer name."""

    __slots__ = ("inner", "open", "root", "segments")

    def __init__(self, root: str) -> None:
        self.root = root
        self.segments: tuple[str, ...] = ()
        self.open = True
        self.inner: list[ast.expr] = []  # sub-expressions (keys, arguments) to scan too

    def extend(self, segment: str) -> None:
        if self.open:
            self.segments = (*self.segments, segment)


def _chain(node: ast.expr, roots: frozenset[str]) -> _Chain | None:
    if isinstance(node, ast.Name):
        return _Chain(node.id) if node.id in roots else None
    if isinstance(node, ast.Attribute):
        chain = _chain(node.value, roots)
        if chain is not None:
            chain.extend(node.attr)
        return chain
    if isinstance(node, ast.Subscript):
        chain = _chain(node.value, roots)
        if chain is None:
            return None
        if isinstance(node.slice, ast.Slice):
            parts = (node.slice.lower, node.slice.upper, node.slice.step)
            chain.inner.extend(p for p in parts if p is not None)
            chain.open = False  # a slice is a list again, its indexes are not the state's
            return chain
        segment = _const_segment(node.slice)
        if segment is None:
            chain.inner.append(node.slice)
        chain.extend("*" if segment is None else segment)
        return chain
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in METHODS
    ):
        chain = _chain(node.func.value, roots)
        if chain is None:
            return None
        method = node.func.attr
        chain.inner.extend(node.args)
        if method == "get":  # reads one key, like a subscript
            segment = _const_segment(node.args[0]) if node.args else None
            chain.extend("*" if segment is None else segment)
            return chain
        if method in ("values", "items"):
            chain.extend("*")
        chain.open = False
        return chain
    return None


def _paths_read(tree: ast.expr, roots: frozenset[str]) -> frozenset[tuple[str, tuple[str, ...]]]:
    found: set[tuple[str, tuple[str, ...]]] = set()
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        chain = _chain(node, roots) if isinstance(node, ast.expr) else None
        if chain is not None:
            found.add((chain.root, chain.segments))
            stack.extend(chain.inner)
        else:
            stack.extend(ast.iter_child_nodes(node))
    return frozenset(found)


Path = tuple[str, tuple[str, ...]]


def _bound_paths_read(tree: ast.expr, roots: frozenset[str]) -> frozenset[Path]:
    """Like `_paths_read`, with comprehension-bound names resolved to the element path of
    what they iterate (``[l for l in post.lines if l.on][0].data_gb`` reads
    ``post.lines.*.on`` and ``post.lines.*.data_gb``), and an index into a comprehension
    read as an index into its element. ``x.items()`` binds ``(key, value)`` to
    ``x.*`` and its elements. Used by the score-at-risk trace (harness/trace)."""
    found: set[Path] = set()

    def element(node: ast.expr, env: dict[str, Path]) -> Path | None:
        """The path of one element of a comprehension's value, recording its reads."""
        if not isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp):
            return None
        inner = comprehension(node, env)
        return resolve(node.elt, inner)

    def comprehension(node: ast.AST, env: dict[str, Path]) -> dict[str, Path]:
        inner = dict(env)
        for gen in node.generators:  # type: ignore[attr-defined]
            items = (
                isinstance(gen.iter, ast.Call)
                and isinstance(gen.iter.func, ast.Attribute)
                and gen.iter.func.attr in ("items", "keys")
            )
            receiver = gen.iter.func.value if items else gen.iter  # type: ignore[attr-defined]
            source = resolve(receiver, inner)
            if source is None:
                visit(gen.iter, inner)
            for index, name in enumerate(_target_names(gen.target)):
                if source is None:
                    inner.pop(name, None)
                elif items and index == 0:
                    inner[name] = source  # a key names the element; it reads no value
                else:
                    inner[name] = (source[0], (*source[1], "*"))
            for cond in gen.ifs:
                visit(cond, inner)
        return inner

    def resolve(node: ast.expr, env: dict[str, Path]) -> Path | None:
        """The path `node` reads (recorded, with its keys and arguments visited)."""
        path = chain(node, env)
        if path is not None:
            found.add(path)
        return path

    def chain(node: ast.expr, env: dict[str, Path]) -> Path | None:
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            return (node.id, ()) if node.id in roots else None
        if isinstance(node, ast.Attribute):
            base = chain(node.value, env)
            return None if base is None else (base[0], (*base[1], node.attr))
        if isinstance(node, ast.Subscript):
            base = element(node.value, env) or chain(node.value, env)
            if base is None:
                return None
            if isinstance(node.slice, ast.Slice):
                for part in (node.slice.lower, node.slice.upper, node.slice.step):
                    if part is not None:
                        visit(part, env)
                return base
            if isinstance(node.value, ast.ListComp | ast.SetComp | ast.GeneratorExp):
                visit(node.slice, env)
                return base  # an index into a comprehension picks one of its elements
            segment = _const_segment(node.slice)
            if segment is None:
                visit(node.slice, env)
            return (base[0], (*base[1], "*" if segment is None else segment))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in METHODS
        ):
            base = chain(node.func.value, env)
            if base is None:
                return None
            for arg in node.args:
                visit(arg, env)
            method = node.func.attr
            if method == "get":
                segment = _const_segment(node.args[0]) if node.args else None
                return (base[0], (*base[1], "*" if segment is None else segment))
            if method == "values":
                return (base[0], (*base[1], "*"))
            found.add(base)
            return None  # a method's value is no longer a state path
        return None

    def visit(node: ast.AST, env: dict[str, Path]) -> None:
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            inner = comprehension(node, env)
            elts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            for elt in elts:
                visit(elt, inner)
            return
        if isinstance(node, ast.expr) and resolve(node, env) is not None:
            return
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in METHODS
            and chain(node.func.value, env) is not None
        ):
            return  # a method on a state path: its receiver and arguments are recorded
        for child in ast.iter_child_nodes(node):
            visit(child, env)

    visit(tree, {})
    return frozenset(found)


def _target_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple):
        return [e.id for e in target.elts if isinstance(e, ast.Name)]
    return []


def _args_read(tree: ast.expr, roots: frozenset[str]) -> frozenset[str]:
    if "args" not in roots:
        return frozenset()

    def is_args(node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id == "args"

    names: set[str] = set()
    method_funcs: set[int] = set()  # `args.get` in `args.get(...)` is a method, not a key
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in METHODS
        ):
            method_funcs.add(id(node.func))
            if node.func.attr == "get" and is_args(node.func.value) and node.args:
                key = node.args[0]
                if isinstance(key, ast.Constant) and type(key.value) is str:
                    names.add(key.value)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and is_args(node.value):
            if id(node) not in method_funcs:
                names.add(node.attr)
        elif isinstance(node, ast.Subscript) and is_args(node.value):
            key = node.slice
            if isinstance(key, ast.Constant) and type(key.value) is str:
                names.add(key.value)
    return frozenset(names)


def _args_by_name(tree: ast.expr, roots: frozenset[str]) -> bool:
    """Whether every use of ``args`` reads one key named by a string constant (``args.x``,
    ``args["x"]``, ``args.get("x"[, d])``): then the value depends on `args_read` alone."""
    if "args" not in roots:
        return True
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}

    def str_constant(node: ast.expr) -> bool:
        return isinstance(node, ast.Constant) and type(node.value) is str

    def reads_one_key(name: ast.Name) -> bool:
        parent = parents.get(id(name))
        if isinstance(parent, ast.Subscript):
            return parent.value is name and str_constant(parent.slice)
        if not (isinstance(parent, ast.Attribute) and parent.value is name):
            return False
        call = parents.get(id(parent))
        if isinstance(call, ast.Call) and call.func is parent and parent.attr in METHODS:
            return parent.attr == "get" and bool(call.args) and str_constant(call.args[0])
        return True

    names = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "args"]
    return all(reads_one_key(n) for n in names)


# --------------------------------------------------------------------------------------
# The interpreter

_ORDER: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_BINOP_TEXT: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
}
# Errors that Python operations raise on bad operands; they become PredicateTypeError.
_PYTHON_ERRORS = (TypeError, ValueError, ArithmeticError, AttributeError, LookupError)

Env = dict[str, Any]


class _Interpreter:
    def __init__(
        self, bindings: Mapping[str, JSON], policy: EqualityPolicy, budget: int, text: str
    ) -> None:
        self.bindings = bindings
        self.policy = policy
        self.budget = budget
        self.steps = 0
        self.text = text

    # -- budget ---------------------------------------------------------------------------

    def tick(self, n: int = 1) -> None:
        self.steps += n
        if self.steps > self.budget:
            raise BudgetExceeded(
                f"predicate exceeded its budget of {self.budget} steps: {self.text[:120]}"
            )

    def check_size(self, size: int, node: ast.AST) -> None:
        if size > MAX_SEQUENCE:
            raise BudgetExceeded(
                f"`{_src(node)}` would build {size} elements (limit {MAX_SEQUENCE})"
            )
        self.tick(size)  # building costs in proportion to its size

    def check_int(self, value: Any, node: ast.AST) -> Any:
        if _is_int(value) and not -MAX_INT_RESULT <= value <= MAX_INT_RESULT:
            raise BudgetExceeded(f"`{_src(node)}` produced an int beyond 10**100")
        return value

    def type_error(self, node: ast.AST, message: str) -> PredicateTypeError:
        return PredicateTypeError(f"`{_src(node)}`: {message}")

    # -- dispatch -------------------------------------------------------------------------

    def visit(self, node: ast.expr, env: Env) -> Any:
        self.steps += 1
        if self.steps > self.budget:
            self.tick(0)
        try:
            return _HANDLERS[type(node)](self, node, env)
        except _PYTHON_ERRORS as exc:
            raise PredicateTypeError(
                f"`{_src(node)}`: {type(exc).__name__}: {str(exc)[:200]}"
            ) from None

    # -- names and access -------------------------------------------------------------------

    def _name(self, node: ast.Name, env: Env) -> Any:
        name = node.id
        if name in env:
            return env[name]
        if name in self.bindings:
            return self.bindings[name]
        raise MissingPath(f"`{name}` is not bound here: there is no observable {name} state")

    def _constant(self, node: ast.Constant, env: Env) -> Any:
        return node.value

    def _attribute(self, node: ast.Attribute, env: Env) -> Any:
        base = self.visit(node.value, env)
        if isinstance(base, dict):
            if node.attr in base:
                return base[node.attr]
            raise MissingPath(
                f"no observable state at `{_src(node)}`: "
                f"`{_src(node.value)}` has no key {node.attr!r}"
            )
        raise self.type_error(node, f".{node.attr} needs an object, got {_kind(base)}")

    def _subscript(self, node: ast.Subscript, env: Env) -> Any:
        base = self.visit(node.value, env)
        if isinstance(node.slice, ast.Slice):
            return self._slice(node, node.slice, base, env)
        key = self.visit(node.slice, env)
        if isinstance(base, dict):
            found, value = self.lookup(base, key)
            if found:
                return value
            raise AbsentKey(f"`{_src(node)}`: key {_short(key)} is not in `{_src(node.value)}`")
        if isinstance(base, list | tuple | str):
            if not _is_int(key):
                raise self.type_error(node, f"{_kind(base)} index must be an int, got {_kind(key)}")
            if -len(base) <= key < len(base):
                return base[key]
            raise AbsentKey(f"`{_src(node)}`: index {key} is out of range (length {len(base)})")
        raise self.type_error(node, f"cannot subscript {_kind(base)}")

    def _slice(self, node: ast.Subscript, sl: ast.Slice, base: Any, env: Env) -> Any:
        bounds = []
        for part in (sl.lower, sl.upper, sl.step):
            value = None if part is None else self.visit(part, env)
            if value is not None and not _is_int(value):
                raise self.type_error(node, f"slice bounds must be ints, got {_kind(value)}")
            bounds.append(value)
        if not isinstance(base, list | tuple | str):
            raise self.type_error(node, f"cannot slice {_kind(base)}")
        result = base[slice(*bounds)]
        self.tick(len(result))
        return result

    def lookup(self, mapping: dict[Any, Any], key: Any) -> tuple[bool, Any]:
        """Type-strict key lookup: a str key hashes exactly; any other key is confirmed by
        canonical key, so True does not find the key 1."""
        if type(key) is str:
            if key in mapping:
                return True, mapping[key]
            return False, None
        try:
            if key not in mapping:  # canonical equality implies Python equality
                return False, None
        except TypeError:
            pass  # unhashable (a list): it may still equal a tuple key canonically
        wanted = self.canon(key)
        for candidate in mapping:
            self.tick()
            if self.canon(candidate) == wanted:
                return True, mapping[candidate]
        return False, None

    # -- canonical keys and equality ---------------------------------------------------

    def canon(self, value: Any) -> Hashable:
        """A hashable key with canon(a) == canon(b) exactly when a and b are canonically
        equal (tuples and lists alike; 2 and 2.0 alike only under the numeric tower)."""
        self.tick()
        kind = type(value)
        if kind is str:
            return value
        if kind is bool:
            return ("b", value)
        if kind is int:
            return ("n" if self.policy.numeric_tower else "i", value)
        if kind is float:
            return ("n" if self.policy.numeric_tower else "f", value)
        if value is None:
            return ("z",)
        if kind is list or kind is tuple:
            return ("l", tuple(self.canon(v) for v in value))
        if kind is dict:
            return ("d", frozenset((self.canon(k), self.canon(v)) for k, v in value.items()))
        if kind is _PSet:
            return ("s", frozenset(value.items))
        raise PredicateTypeError(f"{_kind(value)} values cannot be compared or put in a set")

    def jsonish(self, value: Any) -> Any:
        """The value as canonical_equal expects it: tuples become lists; one step per node."""
        self.tick()
        kind = type(value)
        if kind is list or kind is tuple:
            return [self.jsonish(v) for v in value]
        if kind is dict:
            return {k: self.jsonish(v) for k, v in value.items()}
        if value is None or kind in (str, bool, int, float, _PSet):
            return value
        raise PredicateTypeError(
            f"{_kind(value)} values cannot be compared: "
            "use a list comprehension [...] instead of a generator"
        )

    def equal(self, a: Any, b: Any) -> bool:
        return canonical_equal(self.jsonish(a), self.jsonish(b), policy=self.policy)

    def contains(self, container: Any, item: Any, node: ast.AST) -> bool:
        if isinstance(container, dict):
            return self.lookup(container, item)[0]
        if isinstance(container, list | tuple):
            needle = self.jsonish(item)
            for element in container:
                self.tick()
                if canonical_equal(needle, self.jsonish(element), policy=self.policy):
                    return True
            return False
        if isinstance(container, _PSet):
            return self.canon(item) in container.items
        if isinstance(container, str):
            if not isinstance(item, str):
                raise self.type_error(node, f"`in` a string needs a string, got {_kind(item)}")
            return item in container
        raise self.type_error(
            node, f"`in` needs an object, list, set or string, got {_kind(container)}"
        )

    def order(self, op: Callable[[Any, Any], bool], a: Any, b: Any, node: ast.AST) -> bool:
        if not _orderable(a, b):
            raise self.type_error(node, f"cannot order {_kind(a)} and {_kind(b)}")
        if isinstance(a, list | tuple):
            self.tick(min(len(a), len(b)))
        return op(a, b)

    # -- iteration ----------------------------------------------------------------------

    def iterate(self, value: Any, node: ast.AST) -> Iterator[Any]:
        if not isinstance(value, dict | list | tuple | str | _PSet | _Lazy):
            raise self.type_error(node, f"cannot iterate over {_kind(value)}")
        return self._counted(value)

    def _counted(self, source: Iterable[Any]) -> Iterator[Any]:
        for item in source:
            self.steps += 1
            if self.steps > self.budget:
                self.tick(0)
            yield item

    def make_set(self, values: Iterable[Any]) -> _PSet:
        result = _PSet()
        for value in values:
            result.items.setdefault(self.canon(value), value)
        return result

    # -- operators ------------------------------------------------------------------------

    def _boolop(self, node: ast.BoolOp, env: Env) -> Any:
        is_and = isinstance(node.op, ast.And)
        value: Any = None
        for operand in node.values:
            value = self.visit(operand, env)
            if bool(value) != is_and:  # `and` stops at a falsy operand, `or` at a truthy one
                return value
        return value

    def _unaryop(self, node: ast.UnaryOp, env: Env) -> Any:
        value = self.visit(node.operand, env)
        if isinstance(node.op, ast.Not):
            return not value
        if not _is_number(value):
            raise self.type_error(node, f"unary minus/plus needs a number, got {_kind(value)}")
        return self.check_int(-value if isinstance(node.op, ast.USub) else +value, node)

    def _binop(self, node: ast.BinOp, env: Env) -> Any:
        a = self.visit(node.left, env)
        b = self.visit(node.right, env)
        op = type(node.op)
        if op is ast.Add:
            if _is_number(a) and _is_number(b):
                return self.check_int(a + b, node)
            if type(a) is type(b) and isinstance(a, str | list | tuple):
                self.check_size(len(a) + len(b), node)
                return a + b
        elif op is ast.Mult:
            if _is_number(a) and _is_number(b):
                if _is_int(a) and _is_int(b) and a.bit_length() + b.bit_length() > 400:
                    raise BudgetExceeded(f"`{_src(node)}` would produce an int beyond 10**100")
                return self.check_int(a * b, node)
            seq, times = (a, b) if isinstance(a, str | list | tuple) else (b, a)
            if isinstance(seq, str | list | tuple) and isinstance(times, int):
                self.check_size(len(seq) * max(int(times), 0), node)  # before building it
                return seq * times
        elif op is ast.Sub:
            if _is_number(a) and _is_number(b):
                return self.check_int(a - b, node)
            if isinstance(a, _PSet) and isinstance(b, _PSet):
                result = _PSet()
                for key, value in a.items.items():
                    self.tick()
                    if key not in b.items:
                        result.items[key] = value
                return result
        elif _is_number(a) and _is_number(b):  # / // %: numbers only (no str % formatting)
            if op is ast.Div:
                return a / b
            if op is ast.FloorDiv:
                return self.check_int(a // b, node)
            return self.check_int(a % b, node)
        raise self.type_error(
            node, f"unsupported operand types for {_BINOP_TEXT[op]}: {_kind(a)} and {_kind(b)}"
        )

    def _compare(self, node: ast.Compare, env: Env) -> bool:
        left = self.visit(node.left, env)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = self.visit(comparator, env)
            if not self.compare_one(op, left, right, node):
                return False
            left = right
        return True

    def compare_one(self, op: ast.cmpop, a: Any, b: Any, node: ast.AST) -> bool:
        kind = type(op)
        if kind is ast.Eq:
            return self.equal(a, b)
        if kind is ast.NotEq:
            return not self.equal(a, b)
        if kind is ast.In:
            return self.contains(b, a, node)
        if kind is ast.NotIn:
            return not self.contains(b, a, node)
        if kind is ast.Is:  # validated: one side is the constant None
            return a is b
        if kind is ast.IsNot:
            return a is not b
        return self.order(_ORDER[kind], a, b, node)

    def _ifexp(self, node: ast.IfExp, env: Env) -> Any:
        return self.visit(node.body if self.visit(node.test, env) else node.orelse, env)

    # -- displays -------------------------------------------------------------------------

    def _tuple(self, node: ast.Tuple, env: Env) -> tuple[Any, ...]:
        return tuple(self.visit(e, env) for e in node.elts)

    def _list(self, node: ast.List, env: Env) -> list[Any]:
        return [self.visit(e, env) for e in node.elts]

    def _set(self, node: ast.Set, env: Env) -> _PSet:
        return self.make_set(self.visit(e, env) for e in node.elts)

    def _dict(self, node: ast.Dict, env: Env) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            assert key is not None  # validated: no ** unpacking
            result[self.visit(key, env)] = self.visit(value, env)
        return result

    # -- comprehensions -------------------------------------------------------------------

    def _loop(
        self, generators: list[ast.comprehension], i: int, env: Env, source: Iterator[Any]
    ) -> Iterator[None]:
        """Run for/if clause i and those after it, binding variables in `env`; yields once
        per match. `source` is clause i's iterable, already evaluated by the caller."""
        gen = generators[i]
        last = i == len(generators) - 1
        for item in source:
            self.bind(gen.target, item, env)
            if all(self.visit(cond, env) for cond in gen.ifs):
                if last:
                    yield
                else:
                    nxt = generators[i + 1]
                    yield from self._loop(
                        generators, i + 1, env, self.iterate(self.visit(nxt.iter, env), nxt.iter)
                    )

    def bind(self, target: ast.expr, item: Any, env: Env) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = item
            return
        assert isinstance(target, ast.Tuple)  # validated: a tuple of names
        if not isinstance(item, list | tuple) or len(item) != len(target.elts):
            raise self.type_error(
                target, f"cannot unpack {_kind(item)} into {len(target.elts)} names"
            )
        for elt, value in zip(target.elts, item, strict=True):
            assert isinstance(elt, ast.Name)
            env[elt.id] = value

    def _start(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp, env: Env
    ) -> tuple[Env, Iterator[None]]:
        first = node.generators[0].iter
        source = self.iterate(self.visit(first, env), first)
        local = dict(env)  # comprehension variables do not leak out
        return local, self._loop(node.generators, 0, local, source)

    def _listcomp(self, node: ast.ListComp, env: Env) -> list[Any]:
        local, matches = self._start(node, env)
        return [self.visit(node.elt, local) for _ in matches]

    def _setcomp(self, node: ast.SetComp, env: Env) -> _PSet:
        local, matches = self._start(node, env)
        return self.make_set(self.visit(node.elt, local) for _ in matches)

    def _dictcomp(self, node: ast.DictComp, env: Env) -> dict[Any, Any]:
        local, matches = self._start(node, env)
        result: dict[Any, Any] = {}
        for _ in matches:
            key = self.visit(node.key, local)
            result[key] = self.visit(node.value, local)
        return result

    def _generatorexp(self, node: ast.GeneratorExp, env: Env) -> _Lazy:
        local, matches = self._start(node, env)  # the first iterable is evaluated now
        return _Lazy(self.visit(node.elt, local) for _ in matches)

    # -- calls ----------------------------------------------------------------------------

    def _call(self, node: ast.Call, env: Env) -> Any:
        func = node.func
        if isinstance(func, ast.Name):
            args = [self.visit(a, env) for a in node.args]
            return _BUILTIN_IMPLS[func.id](self, node, args)
        assert isinstance(func, ast.Attribute)  # validated: a builtin or x.method(...)
        receiver = self.visit(func.value, env)  # Python order: receiver, then arguments
        args = [self.visit(a, env) for a in node.args]
        return self.method(node, func.attr, receiver, args)

    def method(self, node: ast.Call, name: str, receiver: Any, args: list[Any]) -> Any:
        if isinstance(receiver, dict):
            if name == "keys":
                return self.make_set(self.iterate(receiver, node))
            if name == "values":
                self.tick(len(receiver))
                return list(receiver.values())
            if name == "items":
                self.tick(len(receiver))
                return list(receiver.items())
            if name == "get":
                found, value = self.lookup(receiver, args[0])
                return value if found else (args[1] if len(args) > 1 else None)
        elif isinstance(receiver, list | tuple):
            if name in ("count", "index"):
                needle = self.jsonish(args[0])
                hits = 0
                for i, element in enumerate(self.iterate(receiver, node)):
                    if canonical_equal(needle, self.jsonish(element), policy=self.policy):
                        if name == "index":
                            return i
                        hits += 1
                if name == "index":
                    raise self.type_error(node, f"{_short(args[0])} is not in the list")
                return hits
        elif isinstance(receiver, str):
            return self.string_method(node, name, receiver, args)
        raise self.wrong_receiver(node, name, receiver)

    def wrong_receiver(self, node: ast.Call, name: str, receiver: Any) -> PredicateTypeError:
        kinds = _METHOD_KINDS[name]
        return self.type_error(node, f".{name}() works on {kinds}, not on {_kind(receiver)}")

    def string_method(self, node: ast.Call, name: str, text: str, args: list[Any]) -> Any:
        if name in ("startswith", "endswith"):
            affix = args[0]
            if not (
                isinstance(affix, str)
                or (isinstance(affix, tuple) and all(isinstance(a, str) for a in affix))
            ):
                raise self.type_error(node, f".{name}() needs a string, got {_kind(affix)}")
            return text.startswith(affix) if name == "startswith" else text.endswith(affix)
        if name in ("lower", "upper"):
            self.tick(len(text))
            return text.lower() if name == "lower" else text.upper()
        if name in ("strip", "split"):
            arg = args[0] if args else None
            if arg is not None and not isinstance(arg, str):
                raise self.type_error(node, f".{name}() needs a string or None, got {_kind(arg)}")
            if name == "strip":
                self.tick(len(text))
                return text.strip(arg)
            parts = text.split(arg)
            self.tick(len(parts))
            return parts
        raise self.wrong_receiver(node, name, text)

    # builtins: (node, evaluated args) -> value

    def b_len(self, node: ast.Call, args: list[Any]) -> int:
        value = args[0]
        if not isinstance(value, dict | list | tuple | str | _PSet):
            raise self.type_error(
                node, f"len() needs an object, list, set or string, got {_kind(value)}"
            )
        return len(value)

    def b_sum(self, node: ast.Call, args: list[Any]) -> Any:
        total = args[1] if len(args) > 1 else 0
        if not _is_number(total):
            raise self.type_error(node, f"sum() start must be a number, got {_kind(total)}")
        for value in self.iterate(args[0], node):
            if not _is_number(value):
                raise self.type_error(node, f"sum() adds numbers only, got {_kind(value)}")
            total = self.check_int(total + value, node)
        return total

    def _extreme(self, node: ast.Call, args: list[Any], op: Callable[[Any, Any], bool]) -> Any:
        values = list(self.iterate(args[0], node)) if len(args) == 1 else args
        if not values:
            name = node.func.id if isinstance(node.func, ast.Name) else "min/max"
            raise self.type_error(node, f"{name}() of an empty sequence")
        best = values[0]
        for value in values[1:]:
            if self.order(op, value, best, node):
                best = value
        return best

    def b_min(self, node: ast.Call, args: list[Any]) -> Any:
        return self._extreme(node, args, operator.lt)

    def b_max(self, node: ast.Call, args: list[Any]) -> Any:
        return self._extreme(node, args, operator.gt)

    def b_abs(self, node: ast.Call, args: list[Any]) -> Any:
        if not _is_number(args[0]):
            raise self.type_error(node, f"abs() needs a number, got {_kind(args[0])}")
        return self.check_int(abs(args[0]), node)

    def b_any(self, node: ast.Call, args: list[Any]) -> bool:
        return any(self.iterate(args[0], node))

    def b_all(self, node: ast.Call, args: list[Any]) -> bool:
        return all(self.iterate(args[0], node))

    def b_sorted(self, node: ast.Call, args: list[Any]) -> list[Any]:
        values = list(self.iterate(args[0], node))
        for value in values[1:]:
            if not _orderable(values[0], value):
                raise self.type_error(
                    node, f"cannot sort {_kind(values[0])} together with {_kind(value)}"
                )
        self.tick(len(values))
        return sorted(values)

    def b_set(self, node: ast.Call, args: list[Any]) -> _PSet:
        return self.make_set(self.iterate(args[0], node) if args else ())

    def _parse_guard(self, node: ast.Call, value: Any, name: str) -> None:
        if isinstance(value, str):
            if len(value) > MAX_INT_PARSE:
                raise BudgetExceeded(
                    f"`{_src(node)}`: {name}() of a string longer than {MAX_INT_PARSE}"
                )
        elif not _is_number(value):
            raise self.type_error(node, f"{name}() needs a number or string, got {_kind(value)}")

    def b_int(self, node: ast.Call, args: list[Any]) -> int:
        self._parse_guard(node, args[0], "int")
        return self.check_int(int(args[0]), node)

    def b_float(self, node: ast.Call, args: list[Any]) -> float:
        self._parse_guard(node, args[0], "float")
        return float(args[0])

    def b_str(self, node: ast.Call, args: list[Any]) -> str:
        value = args[0]
        if isinstance(value, str):
            return value
        self._estimate_text(value, node)  # before building a string of a whole state
        text = str(value)
        self.check_size(len(text), node)
        return text

    def _estimate_text(self, value: Any, node: ast.AST) -> None:
        estimate = 0
        stack = [value]
        while stack:
            item = stack.pop()
            self.tick()
            if isinstance(item, str):
                estimate += len(item) + 2
            elif isinstance(item, dict):
                estimate += 2 + 4 * len(item)
                stack.extend(item.keys())
                stack.extend(item.values())
            elif isinstance(item, list | tuple | _PSet):
                estimate += 2 + 2 * len(item)
                stack.extend(item)
            elif _is_int(item):
                estimate += item.bit_length() // 3 + 2
            elif item is None or isinstance(item, bool | float):
                estimate += 24
            else:
                raise self.type_error(node, f"str() of {_kind(item)} is not supported")
            if estimate > MAX_SEQUENCE:
                raise BudgetExceeded(
                    f"`{_src(node)}` would build a string longer than {MAX_SEQUENCE}"
                )

    def b_bool(self, node: ast.Call, args: list[Any]) -> bool:
        return bool(args[0])

    def b_round(self, node: ast.Call, args: list[Any]) -> Any:
        value = args[0]
        digits = args[1] if len(args) > 1 else None
        if not _is_number(value):
            raise self.type_error(node, f"round() needs a number, got {_kind(value)}")
        if digits is not None and not _is_int(digits):
            raise self.type_error(node, f"round() digits must be an int, got {_kind(digits)}")
        if digits is not None:
            # round(5, -10**18) would compute 10**(10**18). Past +-5000 digits the result no
            # longer changes for any int (< 4300 digits) or float, so clamping is exact.
            digits = max(-5000, min(5000, digits))
        return self.check_int(round(value, digits), node)

    def b_sha256(self, node: ast.Call, args: list[Any]) -> str:
        text = args[0]
        if not isinstance(text, str):
            raise self.type_error(node, f"sha256() needs a string, got {_kind(text)}")
        self.tick(len(text) // 64 + 1)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


_HANDLERS: dict[type[ast.AST], Callable[[_Interpreter, Any, Env], Any]] = {
    ast.Name: _Interpreter._name,
    ast.Constant: _Interpreter._constant,
    ast.Attribute: _Interpreter._attribute,
    ast.Subscript: _Interpreter._subscript,
    ast.BoolOp: _Interpreter._boolop,
    ast.UnaryOp: _Interpreter._unaryop,
    ast.BinOp: _Interpreter._binop,
    ast.Compare: _Interpreter._compare,
    ast.IfExp: _Interpreter._ifexp,
    ast.Tuple: _Interpreter._tuple,
    ast.List: _Interpreter._list,
    ast.Set: _Interpreter._set,
    ast.Dict: _Interpreter._dict,
    ast.ListComp: _Interpreter._listcomp,
    ast.SetComp: _Interpreter._setcomp,
    ast.DictComp: _Interpreter._dictcomp,
    ast.GeneratorExp: _Interpreter._generatorexp,
    ast.Call: _Interpreter._call,
}
_BUILTIN_IMPLS: dict[str, Callable[[_Interpreter, ast.Call, list[Any]], Any]] = {
    name: getattr(_Interpreter, "b_" + name) for name in BUILTINS
}


def _export(value: Any) -> Any:
    """Internal set values leave as frozensets (lists if their members are unhashable)."""
    if isinstance(value, _PSet):
        try:
            return frozenset(value)
        except TypeError:
            return list(value)
    return value


# --------------------------------------------------------------------------------------
# Public API


@dataclass(frozen=True)
class Predicate:
    """A compiled predicate. Build it with `compile_predicate`."""

    text: str
    roots: frozenset[str]
    args_read: frozenset[str]
    paths_read: frozenset[tuple[str, tuple[str, ...]]]
    # The validated AST; filled by compile_predicate (or validated here if omitted).
    _tree: ast.expr | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self._tree is None:
            object.__setattr__(self, "_tree", _validated_tree(self.text, self.roots))

    @functools.cached_property
    def bound_paths_read(self) -> frozenset[tuple[str, tuple[str, ...]]]:
        """`paths_read` with comprehension-bound names resolved: ``(root, segments)`` where
        ``*`` stands for any element (see `_bound_paths_read`)."""
        assert self._tree is not None
        return _bound_paths_read(self._tree, self.roots)

    @functools.cached_property
    def args_by_name(self) -> bool:
        """Whether the value depends on `args` only through the keys in `args_read`."""
        assert self._tree is not None
        return _args_by_name(self._tree, self.roots)

    @functools.cached_property
    def args_depended_on(self) -> tuple[str, ...] | None:
        """The sorted names of the arguments the value depends on; None: possibly all."""
        return tuple(sorted(self.args_read)) if self.args_by_name else None

    def evaluate(
        self,
        bindings: Mapping[str, JSON],
        *,
        policy: EqualityPolicy = STRICT,
        budget: int = DEFAULT_BUDGET,
    ) -> Any:
        """The predicate's value under `bindings` (root name -> JSON value).

        Raises MissingPath, AbsentKey, PredicateTypeError or BudgetExceeded; never any
        other exception."""
        tree = self._tree
        assert tree is not None
        interpreter = _Interpreter(bindings, policy, budget, self.text)
        try:
            value = interpreter.visit(tree, {})
            if isinstance(value, _Lazy):
                raise PredicateTypeError(
                    f"`{self.text[:120]}` is a generator: wrap it in any(), all(), sum(), "
                    "sorted() or a list comprehension"
                )
            return _export(value)
        except PredicateRuntimeError:
            raise
        except (RecursionError, MemoryError) as exc:  # data nested or sized beyond reason
            raise BudgetExceeded(f"`{self.text[:120]}`: {type(exc).__name__}") from None
        except Exception as exc:  # the contract: nothing else escapes
            raise PredicateTypeError(
                f"`{self.text[:120]}`: {type(exc).__name__}: {str(exc)[:200]}"
            ) from None

    def holds(
        self,
        bindings: Mapping[str, JSON],
        *,
        policy: EqualityPolicy = STRICT,
        budget: int = DEFAULT_BUDGET,
    ) -> bool:
        """bool(evaluate(...)), except AbsentKey -> False: a clause about a record that is
        not there does not hold. Other PredicateRuntimeErrors propagate."""
        try:
            return bool(self.evaluate(bindings, policy=policy, budget=budget))
        except AbsentKey:
            return False


def _validated_tree(text: str, roots: frozenset[str]) -> ast.expr:
    if not isinstance(text, str):
        raise PredicateError(f"a predicate is a string, got {type(text).__name__}")
    for root in roots:
        if not root.isidentifier() or root in BUILTINS or root.startswith("_"):
            raise PredicateError(f"root {root!r} is not a usable name: use a plain identifier")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. invalid escape sequences in literals
            tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        where = f", line {exc.lineno} column {exc.offset}" if exc.offset else ""
        fix = (
            "wrap a multi-line predicate in parentheses"
            if "\n" in text.strip()
            else "write a single expression such as post.x == args.y"
        )
        raise PredicateError(f"not a Python expression ({exc.msg}{where}): {fix}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise PredicateError(
            f"cannot parse the predicate ({type(exc).__name__}): write a single, shorter expression"
        ) from None
    if _nesting(tree) > MAX_NESTING:
        raise PredicateError(
            f"predicate nested more than {MAX_NESTING} levels deep: split it into several clauses"
        )
    _Validator(roots).check(tree.body, frozenset(), 0)
    return tree.body


def compile_predicate(text: str, *, roots: frozenset[str] = DEFAULT_ROOTS) -> Predicate:
    """Parse and validate `text`; raises PredicateError (one line: what is wrong and what
    to write instead)."""
    roots = frozenset(roots)
    tree = _validated_tree(text, roots)
    return Predicate(
        text=text,
        roots=roots,
        args_read=_args_read(tree, roots),
        paths_read=_paths_read(tree, roots),
        _tree=tree,
    )
