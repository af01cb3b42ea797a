"""Field → evaluator: the read sites of a benchmark's own evaluation code, found statically.

An evaluator is a Python function (AgentDojo: a user task's `utility` and
`utility_from_traces`; the toy domain: `toy_domain.tasks`) whose parameters name the pre-
and post-state and the agent's transcript. Its syntax tree is walked with the names bound
to what they hold, and every read is one `ReadSite`:

- `state`: a state path, from direct attribute access (`post.bank.transfers`), keys and
  indexes (a non-constant one, or an index into a list, is `*`), loops and comprehensions
  (`for t in post.x` binds `t` to `x.*`), local assignments, lambdas passed beside a
  collection, a dotted string constant naming a path of the live state
  (`get_path(post, "bank.transfers")`), and helpers called by bare name (or as methods of
  the task or of a state object) within `MAX_HOPS` hops, their return value included;
- `transcript`: the agent's output or the tools' returned text;
- `whole_state`: the whole state compared or handed to a function (a state hash or diff);
- `unresolved`: a read the extractor cannot name: computed attribute access (`getattr`
  with a non-constant name), a helper deeper than `MAX_HOPS` or outside Python source, a
  state object handed to an external function, a whole-object comparison. Such a site
  forces its task in as exposed with basis `unresolved`: the fallback only widens.

The live state (an environment object) is used only to look types up (is `x` a record or a
value, is `m` a method with source), never to run evaluator code.
"""

from __future__ import annotations

import ast
import builtins
import datetime
import enum
import inspect
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

MAX_HOPS = 3  # helpers by bare name resolved this many calls deep; one deeper is unresolved

# Pure builtins: their arguments are read, nothing else. Those in PASS_THROUGH return a
# value that names the same state as their first argument (a copy, a view, an element).
PURE_BUILTINS = frozenset(
    {
        "len", "any", "all", "sorted", "list", "set", "frozenset", "tuple", "sum", "min",
        "max", "str", "int", "float", "bool", "abs", "round", "enumerate", "zip",
        "isinstance", "reversed", "filter", "map", "print", "dict", "next", "iter", "repr",
        "hash", "type", "range", "format",
    }
)  # fmt: skip
PASS_THROUGH = frozenset(
    {"sorted", "list", "set", "frozenset", "tuple", "reversed", "filter", "enumerate", "zip"}
)  # enumerate, zip: a tuple target binds each name to an element (the index too)
ELEMENT_OF = frozenset({"next", "min", "max"})
LEAF_TYPES = (str, int, float, bool, type(None), datetime.date, datetime.time, enum.Enum)


class SiteKind(StrEnum):
    STATE = "state"
    TRANSCRIPT = "transcript"
    WHOLE_STATE = "whole_state"
    UNRESOLVED = "unresolved"


@dataclass(frozen=True, order=True)
class ReadSite:
    kind: SiteKind
    path: tuple[str, ...] | None  # state path segments (`*`: any element); None otherwise
    where: str  # qualname:line of the read
    note: str = ""  # for unresolved and whole_state sites: what forced it

    def dotted(self) -> str:
        return ".".join(self.path) if self.path is not None else ""


@dataclass(frozen=True)
class Evaluator:
    """One evaluation function and the meaning of its parameters."""

    function: Callable[..., Any]
    state_params: frozenset[str]
    transcript_params: frozenset[str]
    owner: type | None = None  # the class whose methods `self.name(...)` resolves to
    # parameters bound to a state path below the root (tau2: `self` of an assertion method
    # is the role's tool instance, `("agent",)`); the others in state_params are the root
    roots: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # the benchmark's own functions that call this one (tau2's scorer calling an assertion
    # method by name): each counts as one hop towards MAX_HOPS
    callers: tuple[Callable[..., Any], ...] = ()


# --- values the walk binds names to -----------------------------------------------------


@dataclass(frozen=True)
class _State:
    path: tuple[str, ...]


@dataclass(frozen=True)
class _Coll:
    """A list built from state (a comprehension): its elements are `element`."""

    element: tuple[str, ...]


@dataclass(frozen=True)
class _Transcript:
    pass


@dataclass(frozen=True)
class _Func:
    """A lambda, with the names bound where it was written."""

    node: ast.Lambda
    env: dict[str, Any] = field(hash=False, compare=False)


_TRANSCRIPT = _Transcript()
_MISSING = object()
_OPAQUE = object()  # a bound `self` that is not state


def _element(path: tuple[str, ...]) -> tuple[str, ...]:
    return (*path, "*")


def _source_tree(function: Callable[..., Any]) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    try:
        text = textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError):
        return None
    tree = ast.parse(text)
    node = tree.body[0] if tree.body else None
    return node if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else None


def _python_function(value: Any) -> Callable[..., Any] | None:
    """`value` as a function with Python source (bound methods unwrapped), else None."""
    function = getattr(value, "__func__", value)
    if inspect.isfunction(function) and not function.__module__.startswith("builtins"):
        return function
    return None


class _Walk:
    """One walk over an evaluator and the helpers it reaches; collects the read sites."""

    def __init__(self, live: Any) -> None:
        self.live = live
        self.sites: set[ReadSite] = set()
        self.stack: list[Callable[..., Any]] = []

    # --- recording ---------------------------------------------------------------------

    def where(self, node: ast.AST) -> str:
        function = self.stack[-1]
        start = getattr(function, "__code__", None)
        line = (start.co_firstlineno - 1 if start else 0) + getattr(node, "lineno", 0)
        return f"{function.__qualname__}:{line}"

    def read(self, path: tuple[str, ...], node: ast.AST) -> None:
        if not path:
            self.sites.add(
                ReadSite(SiteKind.WHOLE_STATE, (), self.where(node), "the whole state is read")
            )
        else:
            self.sites.add(ReadSite(SiteKind.STATE, path, self.where(node)))

    def unresolved(self, node: ast.AST, note: str, path: tuple[str, ...] | None = None) -> None:
        self.sites.add(ReadSite(SiteKind.UNRESOLVED, path, self.where(node), note))

    def use(self, value: Any, node: ast.AST) -> None:
        """`value` is read as a whole (compared, printed, handed to a builtin)."""
        if isinstance(value, _State):
            self.read(value.path, node)
        elif isinstance(value, _Coll):
            self.read(value.element, node)
        elif isinstance(value, _Transcript):
            self.sites.add(ReadSite(SiteKind.TRANSCRIPT, None, self.where(node)))

    # --- the live state, for types ----------------------------------------------------------

    def live_at(self, path: tuple[str, ...]) -> Any:
        value = self.live
        for segment in path:
            if value is _MISSING:
                return _MISSING
            if segment == "*":
                items = list(value.values()) if isinstance(value, dict) else value
                value = items[0] if isinstance(items, list | tuple) and len(items) > 0 else _MISSING
            elif isinstance(value, dict):
                value = value.get(segment, _MISSING)
            elif isinstance(value, list | tuple) and segment.lstrip("-").isdigit():
                index = int(segment)
                value = value[index] if -len(value) <= index < len(value) else _MISSING
            else:
                value = getattr(value, segment, _MISSING)
        return value

    def is_record(self, path: tuple[str, ...]) -> bool:
        """Whether the state at `path` is an object or collection (not a leaf value); a path
        the live state cannot show (an element of an empty list) may be either, so it counts
        as a record: the caller then reports the read unresolved rather than guess."""
        value = self.live_at(path)
        return value is _MISSING or not isinstance(value, LEAF_TYPES)

    def dotted_path(self, text: str) -> tuple[str, ...] | None:
        if not text or not all(part.isidentifier() for part in text.split(".")):
            return None
        path = tuple(text.split("."))
        return path if self.live_at(path) is not _MISSING else None

    # --- functions ------------------------------------------------------------------------

    def function(
        self, function: Callable[..., Any], bindings: dict[str, Any], owner: type | None
    ) -> Any:
        """Walk `function` with its parameters bound; the value its returns name."""
        tree = _source_tree(function)
        if tree is None:
            return None
        self.stack.append(function)
        try:
            env = dict(bindings)
            env["__owner__"] = owner
            returns: list[Any] = []
            self.body(tree.body, env, returns)
        finally:
            self.stack.pop()
        named = {r for r in returns if isinstance(r, _State | _Coll)}
        return next(iter(named)) if len(named) == 1 else None

    def call_helper(
        self,
        function: Callable[..., Any],
        args: list[Any],
        kwargs: dict[str, Any],
        node: ast.Call,
        name: str,
        receiver: Any = None,
        owner: type | None = None,
    ) -> Any:
        carries = [v for v in [*args, *kwargs.values(), receiver] if _carries_state(v)]
        receiver = None if receiver is _OPAQUE else receiver
        if not carries:
            return None  # no state handed in: nothing of the state to read there
        if len(self.stack) > MAX_HOPS:
            self.unresolved(
                node,
                f"helper {name} is {len(self.stack)} calls deep (limit {MAX_HOPS})",
                _first_path(carries),
            )
            return None
        if function in self.stack:
            return None  # recursion: the sites of this function are being collected already
        try:
            signature = inspect.signature(function)
            bound_args = [receiver, *args] if receiver is not None or owner is not None else args
            bound = signature.bind_partial(*bound_args, **kwargs)
        except (TypeError, ValueError):
            self.unresolved(node, f"cannot bind the arguments of helper {name}")
            return None
        bindings = {k: v for k, v in bound.arguments.items() if v is not None}
        return self.function(function, bindings, owner)

    # --- statements -----------------------------------------------------------------------

    def body(self, statements: Iterable[ast.stmt], env: dict[str, Any], returns: list[Any]) -> None:
        for statement in statements:
            self.statement(statement, env, returns)

    def statement(self, node: ast.stmt, env: dict[str, Any], returns: list[Any]) -> None:
        if isinstance(node, ast.Assign):
            value = self.value(node.value, env)
            for target in node.targets:
                self.bind(target, value, env)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            value = self.value(node.value, env) if node.value is not None else None
            if isinstance(node, ast.AugAssign):
                self.use(value, node)
                value = None
            self.bind(node.target, value, env)
        elif isinstance(node, ast.For | ast.AsyncFor):
            source = self.value(node.iter, env)
            self.use(_container(source), node.iter)
            self.bind(node.target, _element_of(source), env)
            self.body(node.body, env, returns)
            self.body(node.orelse, env, returns)
        elif isinstance(node, ast.Return):
            if node.value is not None:
                value = self.value(node.value, env)
                if isinstance(value, _State | _Coll):
                    returns.append(value)
                else:
                    self.use(value, node)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            self.unresolved(node, f"nested definition {node.name} is not followed")
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    self.statement(child, env, returns)
                elif isinstance(child, ast.expr):
                    self.use(self.value(child, env), child)
                else:
                    for grandchild in ast.iter_child_nodes(child):  # handlers, with-items
                        if isinstance(grandchild, ast.stmt):
                            self.statement(grandchild, env, returns)
                        elif isinstance(grandchild, ast.expr):
                            self.use(self.value(grandchild, env), grandchild)

    def bind(self, target: ast.expr, value: Any, env: dict[str, Any]) -> None:
        if isinstance(target, ast.Name):
            if value is None:
                env.pop(target.id, None)
            else:
                env[target.id] = value
        elif isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                self.bind(element, value if isinstance(value, _State | _Coll) else None, env)
        else:  # an attribute or subscript target: its base and keys are read
            self.use(self.value(target, env), target)

    # --- expressions -------------------------------------------------------------------------

    def value(self, node: ast.expr, env: dict[str, Any]) -> Any:
        """What `node` holds (a state path, a transcript, a lambda, or None), recording every
        read it makes except the value itself (its user decides whether it is read)."""
        if isinstance(node, ast.Name):
            return env.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.value(node.value, env)
            if isinstance(base, _State):
                return _State((*base.path, node.attr))
            if isinstance(base, _Coll):
                return _State((*base.element, node.attr))
            return base if isinstance(base, _Transcript) else None
        if isinstance(node, ast.Subscript):
            return self.subscript(node, env)
        if isinstance(node, ast.Call):
            return self.call(node, env)
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            return self.comprehension(node, env)
        if isinstance(node, ast.Lambda):
            return _Func(node, dict(env))
        if isinstance(node, ast.Compare):
            self.compare(node, env)
            return None
        if isinstance(node, ast.IfExp):
            self.use(self.value(node.test, env), node.test)
            options = {self.value(node.body, env), self.value(node.orelse, env)} - {None}
            return next(iter(options)) if len(options) == 1 else self._use_all(options, node)
        if isinstance(node, ast.NamedExpr):
            value = self.value(node.value, env)
            self.bind(node.target, value, env)
            return value
        for child in ast.iter_child_nodes(node):  # operators, literals, f-strings
            if isinstance(child, ast.expr):
                self.use(self.value(child, env), child)
        return None

    def _use_all(self, values: set[Any], node: ast.AST) -> None:
        for value in values:
            self.use(value, node)

    def subscript(self, node: ast.Subscript, env: dict[str, Any]) -> Any:
        base = self.value(node.value, env)
        key = node.slice
        if isinstance(key, ast.Slice):
            for part in (key.lower, key.upper, key.step):
                if part is not None:
                    self.use(self.value(part, env), part)
            return base
        constant = key.value if isinstance(key, ast.Constant) else None
        if not isinstance(key, ast.Constant):
            self.use(self.value(key, env), key)  # a key that is itself a state path is read
        if isinstance(base, _Coll):
            return _State(base.element)
        if isinstance(base, _State):
            if isinstance(constant, str):
                return _State((*base.path, constant))
            return _State(_element(base.path))  # an index, or a key computed at run time
        return base if isinstance(base, _Transcript) else None

    def comprehension(
        self,
        node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
        env: dict[str, Any],
    ) -> Any:
        inner = dict(env)
        for generator in node.generators:
            source = self.value(generator.iter, inner)
            self.use(_container(source), generator.iter)
            self.bind(generator.target, _element_of(source), inner)
            for condition in generator.ifs:
                self.use(self.value(condition, inner), condition)
        if isinstance(node, ast.DictComp):
            self.use(self.value(node.key, inner), node.key)
            self.use(self.value(node.value, inner), node.value)
            return None
        element = self.value(node.elt, inner)
        if isinstance(element, _State):
            return _Coll(element.path)
        if isinstance(element, _Transcript):
            return element
        self.use(element, node.elt)
        return None

    def compare(self, node: ast.Compare, env: dict[str, Any]) -> None:
        operands = [self.value(o, env) for o in [node.left, *node.comparators]]
        equality = any(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops)
        states = [v for v in operands if isinstance(v, _State)]
        for operand, value in zip([node.left, *node.comparators], operands, strict=True):
            if isinstance(value, _State) and value.path == ():
                self.sites.add(
                    ReadSite(
                        SiteKind.WHOLE_STATE, (), self.where(node), "the whole state is compared"
                    )
                )
            elif (
                equality
                and isinstance(value, _State)
                and len(states) > 1
                and self.is_record(value.path)
            ):
                self.unresolved(
                    operand,
                    f"whole-object comparison of {'.'.join(value.path)}",
                    value.path,
                )
            else:
                self.use(value, operand)

    # --- calls ------------------------------------------------------------------------------

    def arguments(self, node: ast.Call, env: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        args = [self.value(a.value if isinstance(a, ast.Starred) else a, env) for a in node.args]
        kwargs = {k.arg or "**": self.value(k.value, env) for k in node.keywords}
        return args, kwargs

    def call(self, node: ast.Call, env: dict[str, Any]) -> Any:
        func = node.func
        if isinstance(func, ast.Attribute):
            receiver = self.value(func.value, env)
            holder = self.self_object(func.value, env)
            if holder is not _MISSING:
                return self.self_call(node, holder, func.attr, env)
            if isinstance(receiver, _State | _Coll):
                return self.state_method(node, receiver, func.attr, env)
            if isinstance(receiver, _Transcript):
                args, kwargs = self.arguments(node, env)
                self._use_args(args, kwargs, node)
                self.use(receiver, node)
                return None
            args, kwargs = self.arguments(node, env)
            return self.external(node, ast.unparse(func), args, kwargs)
        if isinstance(func, ast.Name):
            return self.name_call(node, func.id, env)
        self.use(self.value(func, env), func)
        args, kwargs = self.arguments(node, env)
        return self.external(node, ast.unparse(func), args, kwargs)

    def _use_args(self, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> None:
        for value in [*args, *kwargs.values()]:
            if isinstance(value, _Func):
                self.lambda_over(value, args, node)
            else:
                self.use(value, node)

    def lambda_over(self, func: _Func, args: list[Any], node: ast.AST) -> Any:
        """A lambda handed to a call beside a collection: its parameters are the elements."""
        collection = next((a for a in args if isinstance(a, _State | _Coll)), None)
        inner = dict(func.env)
        for parameter in func.node.args.args:
            inner[parameter.arg] = _element_of(collection) if collection is not None else None
        value = self.value(func.node.body, inner)
        self.use(value, func.node.body)
        return value

    def name_call(self, node: ast.Call, name: str, env: dict[str, Any]) -> Any:
        args, kwargs = self.arguments(node, env)
        bound = env.get(name)
        if isinstance(bound, _Func):
            inner = dict(bound.env)
            for parameter, value in zip(bound.node.args.args, args, strict=False):
                inner[parameter.arg] = value
            value = self.value(bound.node.body, inner)
            self.use(value, bound.node.body)
            return None
        if name in env:  # a callable parameter whose lambda was walked where it was written
            self._use_args(args, kwargs, node)
            return None
        if name == "getattr" and args:
            if len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
                base = args[0]
                if isinstance(base, _State):
                    return _State((*base.path, str(node.args[1].value)))
            if _carries_state(args[0]):
                self.unresolved(node, "computed attribute access (getattr)", _first_path(args))
            return None
        function = self.stack[-1].__globals__.get(name, _MISSING)
        if function is _MISSING and name in PURE_BUILTINS and hasattr(builtins, name):
            return self.builtin(node, name, args, kwargs)
        path = self.string_path(node, args)
        if path is not None:
            return path
        helper = _python_function(function)
        if helper is not None:  # lambdas handed to it are walked where it calls them
            return self.call_helper(helper, args, kwargs, node, name)
        return self.external(node, name, args, kwargs)

    def string_path(self, node: ast.Call, args: list[Any]) -> _State | None:
        """`f(post, "a.b")`: a dotted string constant naming a path of the live state."""
        root = next((a for a in args if isinstance(a, _State)), None)
        if root is None:
            return None
        for argument in node.args:
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                path = self.dotted_path(".".join([*root.path, argument.value]))
                if path is not None:
                    return _State(path)
        return None

    def builtin(self, node: ast.Call, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        for value in kwargs.values():
            if isinstance(value, _Func):
                self.lambda_over(value, args, node)
            else:
                self.use(value, node)
        first = args[0] if args else None
        for value in args:
            if isinstance(value, _Func):
                self.lambda_over(value, args, node)
            elif not (name in PASS_THROUGH | ELEMENT_OF and value is first):
                self.use(value, node)
        if name in PASS_THROUGH and isinstance(first, _State | _Coll):
            self.use(_container(first), node)
            return first
        if name in ELEMENT_OF and isinstance(first, _State | _Coll):
            self.use(first, node)
            return _element_of(first)
        return None

    def self_object(self, node: ast.expr, env: dict[str, Any]) -> Any:
        """The live object `self.a.b` names (the task, or a task it combines), else _MISSING."""
        names: list[str] = []
        while isinstance(node, ast.Attribute):
            names.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id in env:
            return _MISSING
        if node.id == "self":
            value = env.get("__owner__")
        else:  # a task object the evaluator closes over (AgentDojo's combined tasks)
            cells = self.stack[-1].__closure__ or ()
            free = dict(zip(self.stack[-1].__code__.co_freevars, cells, strict=False))
            if node.id not in free:
                return _MISSING
            value = free[node.id].cell_contents
        for name in reversed(names):
            value = getattr(value, name, _MISSING)
        return _MISSING if value is None else value

    def self_call(self, node: ast.Call, holder: Any, name: str, env: dict[str, Any]) -> Any:
        """`self.name(...)` or `self.part.name(...)`: a method of the task, with source."""
        args, kwargs = self.arguments(node, env)
        method = _python_function(getattr(holder, name, None))
        if method is None:
            return self.external(node, f"self.{name}", args, kwargs)
        return self.call_helper(
            method,
            args,
            kwargs,
            node,
            f"{type(holder).__name__}.{name}",
            receiver=_OPAQUE,
            owner=holder,
        )

    def state_method(self, node: ast.Call, receiver: Any, name: str, env: dict[str, Any]) -> Any:
        args, kwargs = self.arguments(node, env)
        path = receiver.path if isinstance(receiver, _State) else receiver.element
        if path == ():  # serialising or hashing the whole state (`post.to_json()`)
            self._use_args(args, kwargs, node)
            self.sites.add(
                ReadSite(
                    SiteKind.WHOLE_STATE, (), self.where(node), f"the whole state via {name}()"
                )
            )
            return None
        if isinstance(receiver, _State):
            live = self.live_at(path)
            method = (
                _python_function(getattr(type(live), name, None)) if live is not _MISSING else None
            )
            if method is not None:  # a model method with source: a helper with `self` bound
                return self.call_helper(
                    method, args, kwargs, node, f"{type(live).__name__}.{name}", receiver=receiver
                )
        self._use_args(args, kwargs, node)
        if name == "values":
            return _State(_element(path))
        if name == "items":
            return _State(path)  # iterating yields (key, element); both bound to the element
        if name == "get" and node.args:
            key = node.args[0]
            segment = key.value if isinstance(key, ast.Constant) else "*"
            return _State((*path, str(segment)))
        if name == "copy":
            return receiver
        self.use(receiver, node)  # a value method (str.lower, list.count, dict.keys): a read
        return None

    def external(self, node: ast.Call, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """A function with no Python source here (a class, a library, a builtin method)."""
        for value in [*args, *kwargs.values()]:
            if isinstance(value, _Func):
                self.lambda_over(value, args, node)
            elif isinstance(value, _State) and value.path == ():
                self.sites.add(
                    ReadSite(
                        SiteKind.WHOLE_STATE,
                        (),
                        self.where(node),
                        f"the whole state is handed to {name}",
                    )
                )
            elif isinstance(value, _State | _Coll) and self.is_record(_path_of(value)):
                self.unresolved(node, f"state object handed to {name}", _path_of(value))
            else:
                self.use(value, node)
        return None


def _carries_state(value: Any) -> bool:
    return isinstance(value, _State | _Coll | _Func)


def _path_of(value: _State | _Coll) -> tuple[str, ...]:
    return value.path if isinstance(value, _State) else value.element


def _first_path(values: Iterable[Any]) -> tuple[str, ...] | None:
    for value in values:
        if isinstance(value, _State | _Coll):
            return _path_of(value)
    return None


def _container(value: Any) -> Any:
    """What iterating `value` reads as a whole: the collection itself."""
    if isinstance(value, _Coll):
        return _State(value.element[:-1]) if value.element[-1:] == ("*",) else None
    return value


def _element_of(value: Any) -> Any:
    if isinstance(value, _State):
        return _State(_element(value.path))
    if isinstance(value, _Coll):
        return _State(value.element)
    return value if isinstance(value, _Transcript) else None


def read_sites(evaluators: Iterable[Evaluator], live: Any) -> list[ReadSite]:
    """Every read site of the evaluators (and the helpers they reach), sorted."""
    walk = _Walk(live)
    for evaluator in evaluators:
        function = _python_function(evaluator.function)
        if function is None:
            continue
        bindings: dict[str, Any] = {}
        roots = dict(evaluator.roots)
        for name in inspect.signature(function).parameters:
            if name in roots:
                bindings[name] = _State(roots[name])
            elif name in evaluator.state_params:
                bindings[name] = _State(())
            elif name in evaluator.transcript_params:
                bindings[name] = _TRANSCRIPT
        walk.stack.extend(evaluator.callers)
        try:
            walk.function(function, bindings, evaluator.owner)
        finally:
            del walk.stack[: len(evaluator.callers)]
    return sorted(walk.sites, key=lambda s: (s.kind, s.path or (), s.where, s.note))
