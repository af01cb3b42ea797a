"""The interpreter: the validated AST compiled once into closures (`compile_program`), run
with a step budget; type-strict equality through `harness.targets.equality`. Python's own
`eval` is never used."""

from __future__ import annotations

import ast
import hashlib
import operator
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from harness.contracts.predicate.errors import (
    AbsentKey,
    BudgetExceeded,
    MissingPath,
    PredicateTypeError,
)
from harness.contracts.predicate.language import (
    _METHOD_KINDS,
    BUILTINS,
    MAX_INT_PARSE,
    MAX_INT_RESULT,
    MAX_SEQUENCE,
)
from harness.contracts.predicate.values import (
    _is_int,
    _is_number,
    _kind,
    _Lazy,
    _orderable,
    _PSet,
    _short,
    _src,
)
from harness.targets.equality import JSON, EqualityPolicy, canonical_equal

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
    """One evaluation: its bindings, equality policy, budget and steps so far, and the
    operations on values that the compiled closures (`compile_program`) share."""

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
            text = type(needle) is str
            for element in container:
                if text and type(element) is str:
                    # The two steps of the lines below, and their comparison: two strs are
                    # canonically equal exactly when they are equal.
                    self.steps += 2
                    if self.steps > self.budget:
                        self.tick(0)
                    if element == needle:
                        return True
                    continue
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

    def arithmetic(self, node: ast.BinOp, a: Any, b: Any) -> Any:
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

    def bound(self, node: ast.Subscript, value: Any) -> Any:
        if value is not None and not _is_int(value):
            raise self.type_error(node, f"slice bounds must be ints, got {_kind(value)}")
        return value

    def sliced(self, node: ast.Subscript, base: Any, bounds: list[Any]) -> Any:
        if not isinstance(base, list | tuple | str):
            raise self.type_error(node, f"cannot slice {_kind(base)}")
        result = base[slice(*bounds)]
        self.tick(len(result))
        return result

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


# -- the program: each node compiled once into a closure ---------------------------------
#
# `compile_program(tree)` turns the validated AST into nested closures, one per node, each
# `run(interpreter, env) -> value`. A closure does what the tree walk's visit of its node
# did, in the same order: one step counted on entry (so the budget runs out at the same
# node), its children run in Python's evaluation order, and a Python error raised by its
# own operation reported as a PredicateTypeError naming that node. It saves the walk's
# per-node dispatch (a dict lookup and a method call) and reads each node's fields once.
# One difference remains, beyond any state a benchmark holds: fewer Python frames per node,
# so data nested some hundreds deep that exhausted Python's recursion limit in the walk
# (BudgetExceeded) may now be compared to the end.

Run = Callable[[_Interpreter, Env], Any]


def compile_program(node: ast.expr) -> Run:
    """The closure that evaluates `node` (validated: only the language's node types)."""
    return _COMPILERS[type(node)](node)


def _guarded(node: ast.expr, body: Run) -> Run:
    """Count the node's step, then run `body`; a Python error becomes a PredicateTypeError."""

    def run(ip: _Interpreter, env: Env) -> Any:
        ip.steps += 1
        if ip.steps > ip.budget:
            ip.tick(0)
        try:
            return body(ip, env)
        except _PYTHON_ERRORS as exc:
            raise _python_error(node, exc) from None

    return run


def _python_error(node: ast.expr, exc: Exception) -> PredicateTypeError:
    """A Python error raised by `node`'s own operation, as the tree walk reported it."""
    return PredicateTypeError(f"`{_src(node)}`: {type(exc).__name__}: {str(exc)[:200]}")


def _name(node: ast.Name) -> Run:
    name = node.id

    def run(ip: _Interpreter, env: Env) -> Any:  # nothing here raises a Python error
        ip.steps += 1
        if ip.steps > ip.budget:
            ip.tick(0)
        if name in env:
            return env[name]
        if name in ip.bindings:
            return ip.bindings[name]
        raise MissingPath(f"`{name}` is not bound here: there is no observable {name} state")

    return run


def _constant(node: ast.Constant) -> Run:
    value = node.value

    def run(ip: _Interpreter, env: Env) -> Any:
        ip.steps += 1
        if ip.steps > ip.budget:
            ip.tick(0)
        return value

    return run


def _attribute(node: ast.Attribute) -> Run:
    base_run, attr = compile_program(node.value), node.attr

    def run(ip: _Interpreter, env: Env) -> Any:
        ip.steps += 1
        if ip.steps > ip.budget:
            ip.tick(0)
        base = base_run(ip, env)  # its own errors are its own: it cannot raise a Python one
        if isinstance(base, dict):
            if attr in base:
                return base[attr]
            raise MissingPath(
                f"no observable state at `{_src(node)}`: `{_src(node.value)}` has no key {attr!r}"
            )
        raise ip.type_error(node, f".{attr} needs an object, got {_kind(base)}")

    return run


def _subscript(node: ast.Subscript) -> Run:
    base_run = compile_program(node.value)
    if isinstance(node.slice, ast.Slice):
        parts = [
            None if part is None else compile_program(part)
            for part in (node.slice.lower, node.slice.upper, node.slice.step)
        ]

        def sliced(ip: _Interpreter, env: Env) -> Any:
            base = base_run(ip, env)
            bounds = [None if part is None else ip.bound(node, part(ip, env)) for part in parts]
            return ip.sliced(node, base, bounds)

        return _guarded(node, sliced)
    key_run = compile_program(node.slice)

    def run(ip: _Interpreter, env: Env) -> Any:
        ip.steps += 1
        if ip.steps > ip.budget:
            ip.tick(0)
        try:
            base = base_run(ip, env)
            key = key_run(ip, env)
            if isinstance(base, dict):
                found, value = ip.lookup(base, key)
                if found:
                    return value
                raise AbsentKey(f"`{_src(node)}`: key {_short(key)} is not in `{_src(node.value)}`")
            if isinstance(base, list | tuple | str):
                if not _is_int(key):
                    raise ip.type_error(
                        node, f"{_kind(base)} index must be an int, got {_kind(key)}"
                    )
                if -len(base) <= key < len(base):
                    return base[key]
                raise AbsentKey(f"`{_src(node)}`: index {key} is out of range (length {len(base)})")
            raise ip.type_error(node, f"cannot subscript {_kind(base)}")
        except _PYTHON_ERRORS as exc:
            raise _python_error(node, exc) from None

    return run


def _boolop(node: ast.BoolOp) -> Run:
    is_and = isinstance(node.op, ast.And)
    operands = [compile_program(operand) for operand in node.values]

    def run(ip: _Interpreter, env: Env) -> Any:
        ip.steps += 1
        if ip.steps > ip.budget:
            ip.tick(0)
        try:
            value: Any = None
            for operand in operands:
                value = operand(ip, env)
                if bool(value) != is_and:  # `and` stops at a falsy operand, `or` at a truthy one
                    return value
            return value
        except _PYTHON_ERRORS as exc:
            raise _python_error(node, exc) from None

    return run


def _unaryop(node: ast.UnaryOp) -> Run:
    operand = compile_program(node.operand)
    kind = type(node.op)

    def unaryop(ip: _Interpreter, env: Env) -> Any:
        value = operand(ip, env)
        if kind is ast.Not:
            return not value
        if not _is_number(value):
            raise ip.type_error(node, f"unary minus/plus needs a number, got {_kind(value)}")
        return ip.check_int(-value if kind is ast.USub else +value, node)

    return _guarded(node, unaryop)


def _binop(node: ast.BinOp) -> Run:
    left, right = compile_program(node.left), compile_program(node.right)

    def binop(ip: _Interpreter, env: Env) -> Any:
        a = left(ip, env)
        return ip.arithmetic(node, a, right(ip, env))

    return _guarded(node, binop)


def _compare(node: ast.Compare) -> Run:
    first = compile_program(node.left)
    steps = [
        (_comparison(op, node), compile_program(c))
        for op, c in zip(node.ops, node.comparators, strict=True)
    ]

    def run(ip: _Interpreter, env: Env) -> bool:
        ip.steps += 1
        if ip.steps > ip.budget:
            ip.tick(0)
        try:
            left = first(ip, env)
            for holds, comparator in steps:
                right = comparator(ip, env)
                if not holds(ip, left, right):
                    return False
                left = right
            return True
        except _PYTHON_ERRORS as exc:
            raise _python_error(node, exc) from None

    return run


def _comparison(op: ast.cmpop, node: ast.Compare) -> Callable[[_Interpreter, Any, Any], bool]:
    """One comparison operator of `node` as a function of its two operands, chosen once."""
    kind = type(op)
    if kind is ast.Eq:
        return lambda ip, a, b: ip.equal(a, b)
    if kind is ast.NotEq:
        return lambda ip, a, b: not ip.equal(a, b)
    if kind is ast.In:
        return lambda ip, a, b: ip.contains(b, a, node)
    if kind is ast.NotIn:
        return lambda ip, a, b: not ip.contains(b, a, node)
    if kind is ast.Is:  # validated: one side is the constant None
        return lambda ip, a, b: a is b
    if kind is ast.IsNot:
        return lambda ip, a, b: a is not b
    order = _ORDER[kind]
    return lambda ip, a, b: ip.order(order, a, b, node)


def _ifexp(node: ast.IfExp) -> Run:
    test, body, orelse = (compile_program(n) for n in (node.test, node.body, node.orelse))

    def ifexp(ip: _Interpreter, env: Env) -> Any:
        return (body if test(ip, env) else orelse)(ip, env)

    return _guarded(node, ifexp)


def _tuple(node: ast.Tuple) -> Run:
    elts = [compile_program(e) for e in node.elts]
    return _guarded(node, lambda ip, env: tuple(e(ip, env) for e in elts))


def _list(node: ast.List) -> Run:
    if _all_scalars(node.elts):
        values = [e.value for e in node.elts]  # type: ignore[attr-defined]
        return _scalar_display(list, values, steps=1 + len(values))
    elts = [compile_program(e) for e in node.elts]
    return _guarded(node, lambda ip, env: [e(ip, env) for e in elts])


_SCALAR_TYPES = (str, int, float, bool, type(None))


def _all_scalars(nodes: Sequence[ast.expr | None]) -> bool:
    """Whether every node is a constant str, int, float, bool or None."""
    return all(isinstance(n, ast.Constant) and type(n.value) in _SCALAR_TYPES for n in nodes)


def _scalar_display(make: Callable[[Any], Any], folded: Any, steps: int) -> Run:
    """A list or dict display of scalar constants (`_all_scalars`), its value built once
    here: each run counts at once the `steps` the display and its constants count one by
    one (the budget raises the same error whichever step passes it, and nothing reads the
    count after that) and returns a new copy of that value, as a display builds a new one.
    Contracts such as BFCL's book_flight spell out a route table of 153 entries."""

    def run(ip: _Interpreter, env: Env) -> Any:
        ip.steps += steps
        if ip.steps > ip.budget:
            ip.tick(0)
        return make(folded)

    return run


def _set(node: ast.Set) -> Run:
    elts = [compile_program(e) for e in node.elts]
    return _guarded(node, lambda ip, env: ip.make_set(e(ip, env) for e in elts))


def _dict(node: ast.Dict) -> Run:
    if _all_scalars(node.keys) and _all_scalars(node.values):
        folded: dict[Any, Any] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            folded[key.value] = value.value  # type: ignore[union-attr]  # as `display` does
        return _scalar_display(dict, folded, steps=1 + 2 * len(node.keys))
    pairs = []
    for key, value in zip(node.keys, node.values, strict=True):
        assert key is not None  # validated: no ** unpacking
        pairs.append((compile_program(key), compile_program(value)))

    def display(ip: _Interpreter, env: Env) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        for key, value in pairs:
            result[key(ip, env)] = value(ip, env)
        return result

    return _guarded(node, display)


# A comprehension's for/if clauses: (target, its iterable's program and node, its ifs)
_Clause = tuple[ast.expr, Run, ast.expr, list[Run]]


def _clauses(node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> list[_Clause]:
    return [
        (gen.target, compile_program(gen.iter), gen.iter, [compile_program(c) for c in gen.ifs])
        for gen in node.generators
    ]


def _loop(
    ip: _Interpreter, clauses: list[_Clause], i: int, env: Env, source: Iterator[Any]
) -> Iterator[None]:
    """Run for/if clause i and those after it, binding variables in `env`; yields once per
    match. `source` is clause i's iterable, already evaluated by the caller."""
    target, _, _, ifs = clauses[i]
    last = i == len(clauses) - 1
    for item in source:
        ip.bind(target, item, env)
        if all(cond(ip, env) for cond in ifs):
            if last:
                yield
            else:
                _, nxt, nxt_node, _ = clauses[i + 1]
                yield from _loop(ip, clauses, i + 1, env, ip.iterate(nxt(ip, env), nxt_node))


def _start(ip: _Interpreter, clauses: list[_Clause], env: Env) -> tuple[Env, Iterator[None]]:
    _, first, first_node, _ = clauses[0]
    source = ip.iterate(first(ip, env), first_node)
    local = dict(env)  # comprehension variables do not leak out
    return local, _loop(ip, clauses, 0, local, source)


def _listcomp(node: ast.ListComp) -> Run:
    clauses, elt = _clauses(node), compile_program(node.elt)

    def run(ip: _Interpreter, env: Env) -> list[Any]:
        ip.steps += 1
        if ip.steps > ip.budget:
            ip.tick(0)
        try:
            local, matches = _start(ip, clauses, env)
            return [elt(ip, local) for _ in matches]
        except _PYTHON_ERRORS as exc:
            raise _python_error(node, exc) from None

    return run


def _setcomp(node: ast.SetComp) -> Run:
    clauses, elt = _clauses(node), compile_program(node.elt)

    def setcomp(ip: _Interpreter, env: Env) -> _PSet:
        local, matches = _start(ip, clauses, env)
        return ip.make_set(elt(ip, local) for _ in matches)

    return _guarded(node, setcomp)


def _dictcomp(node: ast.DictComp) -> Run:
    clauses = _clauses(node)
    key_run, value_run = compile_program(node.key), compile_program(node.value)

    def dictcomp(ip: _Interpreter, env: Env) -> dict[Any, Any]:
        local, matches = _start(ip, clauses, env)
        result: dict[Any, Any] = {}
        for _ in matches:
            key = key_run(ip, local)
            result[key] = value_run(ip, local)
        return result

    return _guarded(node, dictcomp)


def _generatorexp(node: ast.GeneratorExp) -> Run:
    clauses, elt = _clauses(node), compile_program(node.elt)

    def generatorexp(ip: _Interpreter, env: Env) -> _Lazy:
        local, matches = _start(ip, clauses, env)  # the first iterable is evaluated now
        return _Lazy(elt(ip, local) for _ in matches)

    return _guarded(node, generatorexp)


def _call(node: ast.Call) -> Run:
    func = node.func
    arg_runs = [compile_program(a) for a in node.args]
    if isinstance(func, ast.Name):
        builtin = _BUILTIN_IMPLS[func.id]

        def run(ip: _Interpreter, env: Env) -> Any:
            ip.steps += 1
            if ip.steps > ip.budget:
                ip.tick(0)
            try:
                return builtin(ip, node, [a(ip, env) for a in arg_runs])
            except _PYTHON_ERRORS as exc:
                raise _python_error(node, exc) from None

        return run
    assert isinstance(func, ast.Attribute)  # validated: a builtin or x.method(...)
    receiver_run, name = compile_program(func.value), func.attr

    def call_method(ip: _Interpreter, env: Env) -> Any:
        receiver = receiver_run(ip, env)  # Python order: receiver, then arguments
        return ip.method(node, name, receiver, [a(ip, env) for a in arg_runs])

    return _guarded(node, call_method)


_COMPILERS: dict[type[ast.AST], Callable[[Any], Run]] = {
    ast.Name: _name,
    ast.Constant: _constant,
    ast.Attribute: _attribute,
    ast.Subscript: _subscript,
    ast.BoolOp: _boolop,
    ast.UnaryOp: _unaryop,
    ast.BinOp: _binop,
    ast.Compare: _compare,
    ast.IfExp: _ifexp,
    ast.Tuple: _tuple,
    ast.List: _list,
    ast.Set: _set,
    ast.Dict: _dict,
    ast.ListComp: _listcomp,
    ast.SetComp: _setcomp,
    ast.DictComp: _dictcomp,
    ast.GeneratorExp: _generatorexp,
    ast.Call: _call,
}
