"""The interpreter: a tree walk over the validated AST with a step budget; type-strict
equality through `harness.targets.equality`. Python's own `eval` is never used."""

from __future__ import annotations

import ast
import hashlib
import operator
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
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
