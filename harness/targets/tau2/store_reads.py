"""The port's store reads made cheaper, in this process, without changing what they return.

The port's tool classes are `inspect_ai` `StoreModel`s: every read of one of their fields
goes through `StoreModel.__getattribute__`, which looks the store up. Telecom's grader
replays sync the device with the line after every call (`Environment.sync_tools`), and
those syncs read the databases field by field: the bare work of the exhaustive open
world's telecom tools made 6.5 million such reads (`python bench/bare_work.py --target
tau2-telecom`, its profile). Two things each read did are replaced here, in memory:

1. **One pydantic adapter per field type** (`adapters_reused`). A read of a field that does
   not hold a scalar (`db`, a telecom device, ...) goes through `_coerce_value`, which
   built a new `pydantic.TypeAdapter` of the field's type, validated the stored value with
   it, and dropped it (208,067 adapters of four field types in that bare work).
   `inspect_ai.util._store_model`'s global `TypeAdapter` becomes one that hands out one
   adapter per type, made by pydantic on the type's first read and kept for the process,
   as pydantic's performance tips advise ("TypeAdapter instantiated once": each
   instantiation constructs a new validator and serializer,
   https://docs.pydantic.dev/latest/concepts/performance/). The validation is the
   adapter's own, so a read returns what it returned before:

   - The field types are classes the port defines (`TelecomDB`, `FlightDB`, ...), resolved
     when their models were built; an adapter of one does not depend on where it is made.
     (A string or forward reference could: `TypeAdapter` resolves those in its caller's
     namespace. `tests/test_tau2.py` checks that no field of the port's tool classes has
     one.)
   - A type that cannot be a dict key, or an adapter that cannot be made, is built each
     time, exactly as before: the error reaches `_coerce_value`, which returns the raw
     value.
   - A type equal to one seen before (`dict[str, X]` written twice) shares its adapter: a
     TypeAdapter holds nothing of the values it validated.

2. **Each read's own reads done directly** (`reads_made_direct`). A field read goes through
   `StoreModel.__getattribute__`, and so does every read it makes of the instance's own
   attributes on the way (`_ns_name`, `store`, `instance`, `_get_and_coerce_field`, ...):
   about ten Python-level calls of the method per field read, 3.8 million in that bare
   work for 382,054 reads from outside. And each asked `self.__class__.model_fields`,
   pydantic's deprecated-access descriptor, which calls a classmethod that returns
   `getattr(cls, "__pydantic_fields__", {})` (3.1 million calls before the twenty-fourth
   refreeze, which replaced it in `__getattribute__` alone).

   Four of `StoreModel`'s methods (`METHOD_SOURCES`'s keys) are replaced by inspect-ai's
   own, compiled here from their installed source with three kinds of change and nothing
   else (`_Direct`, an `ast.NodeTransformer`):

   - `self.__class__.model_fields` becomes `getattr(object.__getattribute__(self,
     "__class__"), "__pydantic_fields__", {})`, what the descriptor returns;
   - `self.X`, read, becomes `object.__getattribute__(self, "X")` for the eight names of
     `READ_DIRECTLY`: where `StoreModel.__getattribute__` sends each of them anyway. A
     dunder goes there first; `store` and `instance` are fields it hands to `super()`;
     the four methods' names begin with an underscore, which no pydantic field name can,
     so it hands them to `super()` too; and no class between `StoreModel` and `object`
     defines `__getattribute__` (checked before replacing). Each of the eight is there
     once a model is built (the methods on the class, `store` and `instance` in its
     `__dict__`), so pydantic's `__getattr__`, where a failed read would go next, is not
     passed by. The lookup is still the instance's class's, so a subclass's own method of
     that name is the one called;
   - `super()` becomes `super(StoreModel, self)` (the function is not compiled in the
     class).

   The code keeps its file name and line numbers, so a traceback or a profile shows
   inspect-ai's source line. This replaces `inspect_ai`'s own methods, so it is done only
   where all four are the code it was written against: compared, by the SHA-256 of their
   source, with inspect-ai 0.3.285's, and pydantic's `model_fields` with pydantic
   2.13.4's (the versions `pyproject.toml` pins); any other version leaves all four alone
   (`tests/test_tau2.py` fails then, so that an upgrade is a decision: check the new code
   and update the digests). The same test checks that every `StoreModel` subclass the
   port defines finds `model_fields` on `BaseModel` and defines no `__getattribute__` of
   its own (which the direct reads would pass by).

No file changes: `inspect_ai` and pydantic stay as installed, and only this process's
module global and class attributes are replaced (once; a second call finds them replaced).
A mutant of the port's tools touches neither. `tests/test_tau2.py` compares grades, results
and snapshots with and without, in fresh processes; docs/adapters.md lists what adapters
change in their benchmark's process.
"""

from __future__ import annotations
import __future__

import ast
import functools
import hashlib
import inspect
import operator
import textwrap
import types
from typing import Any

# The first 16 hex digits of the SHA-256 of `inspect.getsource` of inspect-ai 0.3.285's
# `StoreModel` methods `reads_made_direct` replaces, and of pydantic 2.13.4's
# `BaseModel.model_fields` (its classmethod's function): the code it was written against.
METHOD_SOURCES = {
    "__getattribute__": "7233ed1a467a617f",
    "_ns_name": "615c53f748491596",
    "_get_and_coerce_field": "a9432b40ed72b5ee",
    "_coerce_value": "b60f8dba207b3cce",
}
MODEL_FIELDS_SOURCE = "7cdde549b5e66209"
# The attributes of `self` each replaced method reads directly (module docstring, 2).
READ_DIRECTLY = frozenset(
    {
        "__class__",
        "__dict__",
        "store",
        "instance",
        "_ns_name",
        "_get_and_coerce_field",
        "_coerce_value",
        "_is_scalar",
    }
)


class _ReusedAdapters:
    """Called as `TypeAdapter(field_type)`: the one adapter of `field_type` in this process."""

    def __init__(self, make: Any):
        self.make = make  # pydantic.TypeAdapter
        self.adapters: dict[Any, Any] = {}

    def __call__(self, field_type: Any) -> Any:
        try:
            return self.adapters[field_type]
        except KeyError:
            pass
        except TypeError:  # unhashable: not kept, built as before
            return self.make(field_type)
        adapter = self.make(field_type)  # an error reaches the caller, nothing is kept
        return self.adapters.setdefault(field_type, adapter)


def adapters_reused() -> None:
    """Make `StoreModel`'s reads reuse one adapter per field type (module docstring, 1)."""
    import inspect_ai.util._store_model as store_model

    if not isinstance(store_model.TypeAdapter, _ReusedAdapters):
        store_model.TypeAdapter = _ReusedAdapters(store_model.TypeAdapter)


def source_digest(function: Any) -> str:
    """The first 16 hex digits of the SHA-256 of `function`'s source."""
    return hashlib.sha256(inspect.getsource(function).encode()).hexdigest()[:16]


def _is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


class _Direct(ast.NodeTransformer):
    """The three changes of the module docstring's item 2; `made` counts each kind."""

    def __init__(self) -> None:
        self.made: dict[str, int] = {"fields": 0, "direct": 0, "super": 0}

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if (
            node.attr == "model_fields"
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "__class__"
            and _is_self(node.value.value)
        ):
            self.made["fields"] += 1
            return _expression(
                "getattr(object.__getattribute__(self, '__class__'), '__pydantic_fields__', {})",
                node,
            )
        self.generic_visit(node)
        if _is_self(node.value) and node.attr in READ_DIRECTLY and isinstance(node.ctx, ast.Load):
            self.made["direct"] += 1
            return _expression(f"object.__getattribute__(self, {node.attr!r})", node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "super" and not node.args:
            self.made["super"] += 1
            return _expression("super(StoreModel, self)", node)
        return node


def _expression(text: str, where: ast.AST) -> ast.expr:
    """`text` parsed, placed on `where`'s line."""
    expression = ast.parse(text, mode="eval").body
    for node in ast.walk(expression):
        ast.copy_location(node, where)
    return expression


def direct_source(function: Any) -> tuple[ast.Module, dict[str, int]]:
    """`function`'s source with the three changes made, on its own lines, and how many of
    each kind were made."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    ast.increment_lineno(tree, function.__code__.co_firstlineno - 1)
    changes = _Direct()
    return changes.visit(tree), changes.made


# The compiler flags of every `__future__` feature: a compiled method keeps its own module's.
_FUTURE_FLAGS = functools.reduce(
    operator.or_,
    (getattr(__future__, name).compiler_flag for name in __future__.all_feature_names),
)


def _compiled(function: Any) -> Any:
    """`function` with the three changes made, compiled with its own file name, its own
    module's `__future__` features (none inherited from this one) and its module's globals
    (where `StoreModel` and the `TypeAdapter` of item 1 are looked up), under its own
    qualified name, docstring, defaults and annotations."""
    tree, _ = direct_source(function)
    features = function.__code__.co_flags & _FUTURE_FLAGS
    code = compile(tree, function.__code__.co_filename, "exec", features, dont_inherit=True)
    scratch = dict(function.__globals__)  # its annotations are evaluated where it was defined
    exec(code, scratch)  # defines it only
    direct = types.FunctionType(
        scratch[function.__name__].__code__,
        function.__globals__,
        function.__name__,
        function.__defaults__,
    )
    direct.__qualname__ = function.__qualname__
    direct.__doc__ = function.__doc__
    direct.__kwdefaults__ = function.__kwdefaults__
    direct.__annotations__ = dict(function.__annotations__)
    direct.direct_reads = True  # type: ignore[attr-defined]
    direct.replaced = function  # type: ignore[attr-defined]
    return direct


def _originals(store_model: type) -> dict[str, Any]:
    """`store_model`'s methods of `METHOD_SOURCES`, as inspect-ai defines them."""
    methods = {name: store_model.__dict__[name] for name in METHOD_SOURCES}
    return {name: getattr(method, "replaced", method) for name, method in methods.items()}


def reads_made_direct() -> bool:
    """Make `StoreModel`'s reads read its own attributes directly (module docstring, 2), if
    its methods and pydantic's `model_fields` are the code this was written against.
    Whether they are (now or by an earlier call)."""
    from inspect_ai.util._store_model import StoreModel
    from pydantic import BaseModel

    if getattr(StoreModel.__dict__["__getattribute__"], "direct_reads", False):
        return True
    originals = _originals(StoreModel)
    if (
        any(source_digest(originals[name]) != digest for name, digest in METHOD_SOURCES.items())
        or source_digest(BaseModel.__dict__["model_fields"].fget.__func__) != MODEL_FIELDS_SOURCE
        or any("__getattribute__" in vars(cls) for cls in StoreModel.__mro__[1:-1])
    ):
        return False
    for name, function in originals.items():
        setattr(StoreModel, name, _compiled(function))
    return True
