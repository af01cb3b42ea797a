"""Call resolution: from a site's body, transitively, the functions a call may reach
(the rules are in the package docstring); `tool_sites`."""

from __future__ import annotations

import ast
import inspect
import typing

from harness.mutation.model import FunctionSite
from harness.mutation.sites.facts import own_statements
from harness.mutation.sites.index import (
    _Class,
    _dotted,
    _Function,
    _Package,
    _package_of,
    _slice_items,
)
from harness.targets.adapter import Adapter


class _Resolver:
    """Static types of the names of one function, enough to resolve its calls."""

    def __init__(self, package: _Package, function: _Function):
        self.package = package
        self.function = function
        self.module = function.module
        self.types: dict[str, tuple[ast.expr, str] | _Class | None] = {}
        node = function.node
        arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        is_static = any(_dotted(d) == "staticmethod" for d in node.decorator_list)
        for position, arg in enumerate(arguments):
            if position == 0 and function.owner and not is_static:
                owner = package.modules[self.module].classes.get(function.owner)
                self.types[arg.arg] = owner
            elif arg.annotation is not None:
                self.types[arg.arg] = (arg.annotation, self.module)
        for stmt in own_statements(node):
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
            ):
                self._bind(stmt.targets[0].id, self.class_of(stmt.value))
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                self._bind(stmt.target.id, self.package.class_of(stmt.annotation, self.module))

    def _bind(self, name: str, cls: _Class | None) -> None:
        if name in self.types and self.types[name] is not cls:
            self.types[name] = None  # bound to different things: unknown
        else:
            self.types[name] = cls

    def annotation_of(self, expr: ast.expr) -> tuple[ast.expr, str] | _Class | None:
        if isinstance(expr, ast.Name):
            return self.types.get(expr.id)
        if isinstance(expr, ast.Attribute):
            owner = self.class_of(expr.value)
            return None if owner is None else self.package.attribute_annotation(owner, expr.attr)
        if isinstance(expr, ast.Subscript):
            container = self.annotation_of(expr.value)
            if isinstance(container, tuple):
                annotation, module = container
                if isinstance(annotation, ast.Subscript):
                    items = _slice_items(annotation.slice)
                    return (items[-1], module)
            return None
        if isinstance(expr, ast.Call):
            callee = self._callee(expr.func)
            if isinstance(callee, _Class):  # a constructor call
                return callee
            returned = [self.package.class_of(f.node.returns, f.module) for f in self.resolve(expr)]
            if returned and returned[0] is not None and all(c is returned[0] for c in returned):
                return returned[0]
        return None

    def class_of(self, expr: ast.expr) -> _Class | None:
        found = self.annotation_of(expr)
        if isinstance(found, tuple):
            return self.package.class_of(*found)
        return found

    def _callee(self, func: ast.expr) -> _Function | _Class | str | None:
        if isinstance(func, ast.Name):
            if func.id in self.types:  # a parameter or local shadows module names
                return None
            return self.package.resolve_name(self.module, func.id)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            owner = self._callee(func.value)
            if isinstance(owner, str):
                return self.package.resolve_name(owner, func.attr)
            if isinstance(owner, _Class):  # Class.method(...): a static or explicit call
                methods = self.package.methods_of(owner, func.attr)
                return methods[0] if methods else None
        return None

    def resolve(self, call: ast.Call) -> list[_Function]:
        """The target functions `call` may run."""
        callee = self._callee(call.func)
        if isinstance(callee, _Function):
            return [callee]
        if isinstance(callee, _Class):
            return [
                method
                for name in ("__init__", "__post_init__")
                for method in self.package.methods_of(callee, name)
            ]
        if isinstance(callee, str) or not isinstance(call.func, ast.Attribute):
            return []
        receiver = self.class_of(call.func.value)
        if receiver is not None:
            return self.package.methods_of(receiver, call.func.attr)
        return list(self.package.methods_by_name.get(call.func.attr, []))


def _closure(package: _Package, start: _Function) -> list[_Function]:
    seen: dict[int, _Function] = {id(start): start}
    queue = [start]
    while queue:
        current = queue.pop(0)
        resolver = _Resolver(package, current)
        for node in ast.walk(current.node):
            if isinstance(node, ast.Call):
                for callee in resolver.resolve(node):
                    if id(callee) not in seen:
                        seen[id(callee)] = callee
                        queue.append(callee)
    rest = sorted(
        (f for f in seen.values() if f is not start),
        key=lambda f: (f.site.file, f.site.start_line, f.qualname),
    )
    return [start, *rest]


def _tool_entry(adapter: Adapter, tool: str) -> tuple[_Package, _Function]:
    function = inspect.unwrap(adapter.tool_function(tool))
    module, qualname = function.__module__, function.__qualname__
    package = _package_of(module, adapter)
    code = getattr(function, "__code__", None)
    entry = package.function_at(module, qualname, code.co_firstlineno if code else None)
    if entry is None:
        raise LookupError(
            f"tool {tool!r}: no definition of {qualname} in the source of module {module}"
        )
    return package, entry


def tool_sites(adapter: Adapter, tool: str) -> list[FunctionSite]:
    """The tool's own function first, then every target function its call may reach,
    ordered by (file, start line)."""
    package, entry = _tool_entry(adapter, tool)
    return [f.site for f in _closure(package, entry)]


def _environment_class(adapter: Adapter) -> type | None:
    try:
        hints = typing.get_type_hints(type(adapter).fresh)
    except Exception:
        return None
    found = hints.get("return")
    return found if isinstance(found, type) else None


def reset_sites(adapter: Adapter) -> list[FunctionSite]:
    """The functions on the target's reset path: the `reset` method of the environment class
    (the return annotation of the adapter's `fresh`) and everything it calls. Empty when the
    adapter does not name its environment class or the class has no source `reset`."""
    env_class = _environment_class(adapter)
    if env_class is None:
        return []
    package = _package_of(env_class.__module__, adapter)
    module = package.modules.get(env_class.__module__)
    cls = module.classes.get(env_class.__qualname__) if module else None
    if cls is None:
        return []
    entries = package.methods_of(cls, "reset")
    if not entries:
        return []
    return [f.site for f in _closure(package, entries[0])]
