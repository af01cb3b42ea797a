"""Mutation sites: which functions a tool's call reaches, their source text, and what an
operator may know about them.

Everything here reads the installed source with `ast`; no target code runs (modules are
only looked up in `sys.modules` / imported to find their files, and the tools' modules are
already imported by the adapter).

Call resolution, from a site's body, transitively:
- `name(...)`: the module-level function `name` of the same module, or the one imported
  from another module of the target's package (`from .bank import name`); a class name
  resolves to its `__init__` when the source defines one;
- `mod.name(...)` with `mod` an imported module of the package: that module's function;
- `x.method(...)`: when the class of `x` is known statically (`self`, a parameter or a
  local annotated or constructed as a target class, an attribute or container element
  whose annotation names one), the `method` that class defines or inherits from a target
  base, plus overrides in its target subclasses; otherwise every method named `method` of
  every class of the package (sound for duck typing, at the price of unreached pairs).
Functions passed as values (callbacks, `map(f, ...)`) are not followed.

The state-write analysis (`state_writes`) is shared by the operators and by
`SiteContext.writer_names`, so "what counts as a write" has one definition. A write whose
written fields are all volatile (`SiteContext.volatile_fields`: masked by every comparison)
is not a write, and a helper whose only writes are volatile is not a writer.

Reset-path pairing (`written_fields`, `restored_fields`, `changed_statements`): which
fields a tool's call can leave behind, and which fields a reset step restores.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import sys
import typing
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from harness.contracts.model import Contract
from harness.contracts.predicate import compile_predicate
from harness.mutation.model import FunctionSite, SiteContext, sha256_text
from harness.mutation.refusals import judges, refusal_returns
from harness.targets.adapter import Adapter
from harness.targets.equality import parse_pattern

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)

# Methods that change the object they are called on (lists, dicts, sets, deques).
MUTATING_METHODS = frozenset(
    {
        "append",
        "appendleft",
        "add",
        "clear",
        "discard",
        "extend",
        "extendleft",
        "insert",
        "pop",
        "popitem",
        "popleft",
        "remove",
        "reverse",
        "setdefault",
        "sort",
        "update",
        "difference_update",
        "intersection_update",
        "symmetric_difference_update",
    }
)
# Standard-library functions that change their first argument in place.
IN_PLACE_FUNCTIONS = frozenset(
    {
        "insort",
        "insort_left",
        "insort_right",
        "heappush",
        "heappop",
        "heapify",
        "heapreplace",
        "heappushpop",
        "shuffle",
        "setattr",
        "delattr",
    }
)
# Calls whose result is a new object, so a local bound to it is not shared state.
FRESH_CALLS = frozenset(
    {
        "list",
        "dict",
        "set",
        "frozenset",
        "tuple",
        "sorted",
        "str",
        "int",
        "float",
        "bool",
        "len",
        "sum",
        "min",
        "max",
        "abs",
        "round",
        "repr",
        "format",
        "copy",
        "deepcopy",
        "range",
        "enumerate",
        "zip",
    }
)


# --- source text -------------------------------------------------------------------------


def dedent_lines(lines: list[str]) -> str:
    """Remove the first line's indentation from every line that has it. Lines inside a
    multi-line string that are indented less stay as they are (unlike textwrap.dedent,
    which would then remove nothing)."""
    if not lines:
        return ""
    first = lines[0]
    indent = first[: len(first) - len(first.lstrip())]
    out = []
    for line in lines:
        if line.startswith(indent):
            out.append(line[len(indent) :])
        elif not line.strip():
            out.append(line.lstrip(" \t"))
        else:
            out.append(line)
    return "".join(out)


def function_source(site: FunctionSite, root: Path) -> str:
    """The dedented text of the site's function (decorators included), read from the
    installed file now. `site.source_hash` is the SHA-256 of exactly this text."""
    lines = (Path(root) / site.file).read_text(encoding="utf-8").splitlines(keepends=True)
    return dedent_lines(lines[site.start_line - 1 : site.end_line])


def site_key(site: FunctionSite) -> tuple[str, str, int]:
    """A site's identity: (file, qualname, start_line)."""
    return (site.file, site.qualname, site.start_line)


# --- the package index ---------------------------------------------------------------------


@dataclass(eq=False)
class _Function:
    module: str
    qualname: str
    node: FunctionNode
    owner: str | None  # qualname of the enclosing class, for methods
    site: FunctionSite

    @property
    def name(self) -> str:
        return self.node.name


@dataclass(eq=False)
class _Class:
    module: str
    qualname: str
    node: ast.ClassDef
    methods: dict[str, _Function] = field(default_factory=dict)
    attributes: dict[str, ast.expr] = field(default_factory=dict)  # name -> annotation


@dataclass(eq=False)
class _Module:
    name: str
    file: str
    functions: dict[str, _Function] = field(default_factory=dict)  # module level, by name
    classes: dict[str, _Class] = field(default_factory=dict)  # by qualname
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    entries: list[_Function] = field(default_factory=list)  # every def, source order
    imported: set[str] = field(default_factory=set)  # dotted names of every module it may import


class _Package:
    """The modules of one target package that a call from `entry` can reach: `entry` and,
    transitively, every module of the package it imports (`import pkg.mod`,
    `from pkg.mod import name`, `from . import mod`, `from .mod import name`). Functions a
    call reaches live in modules so imported; the other modules of the package are not
    parsed at all (`inspect_evals` holds hundreds). Without `entry`: every module."""

    def __init__(self, package: str, root: Path, entry: str | None = None):
        _VIEWS.append(self)
        self.modules: dict[str, _Module] = {}
        files = dict(_package_files(package))
        todo = [entry] if entry is not None else sorted(files)
        while todo:
            name = todo.pop()
            if name in self.modules or name not in files:
                continue
            module = _index_module_cached(name, str(files[name]), str(root))
            if module is None:
                continue
            self.modules[name] = module
            todo.extend(sorted(module.imported - self.modules.keys(), reverse=True))
        self.modules = dict(sorted(self.modules.items()))  # one order, however reached
        self._ancestors: dict[int, list[_Class]] = {}
        self._subclasses: dict[int, list[_Class]] = {}
        self.methods_by_name: dict[str, list[_Function]] = {}
        for module in self.modules.values():
            for cls in module.classes.values():
                for method in cls.methods.values():
                    self.methods_by_name.setdefault(method.name, []).append(method)

    # name resolution

    def resolve_name(
        self, module: str, name: str, depth: int = 0
    ) -> _Function | _Class | str | None:
        """What `name` means at module level of `module`: a function, a class, a module of
        the package (its dotted name), or None (not the target's)."""
        index = self.modules.get(module)
        if index is None or depth > 5:
            return None
        if name in index.functions:
            return index.functions[name]
        if name in index.classes:
            return index.classes[name]
        imported = index.imports.get(name)
        if imported is None:
            return None
        source, attr = imported
        if attr is None:
            return source if source in self.modules else None
        if f"{source}.{attr}" in self.modules:
            return f"{source}.{attr}"
        return self.resolve_name(source, attr, depth + 1)

    def class_of(self, annotation: ast.expr | None, module: str) -> _Class | None:
        """The target class an annotation names (`Bank`, `"Bank"`, `Bank | None`,
        `Optional[Bank]`, `Annotated[Bank, ...]`, `mod.Bank`), else None."""
        if annotation is None:
            return None
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return None
        if isinstance(annotation, ast.Name):
            found = self.resolve_name(module, annotation.id)
            return found if isinstance(found, _Class) else None
        if isinstance(annotation, ast.Attribute) and isinstance(annotation.value, ast.Name):
            owner = self.resolve_name(module, annotation.value.id)
            if isinstance(owner, str):
                found = self.resolve_name(owner, annotation.attr)
                return found if isinstance(found, _Class) else None
            if isinstance(owner, _Class):  # a nested class
                return self.modules[owner.module].classes.get(f"{owner.qualname}.{annotation.attr}")
            return None
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            sides = [s for s in (annotation.left, annotation.right) if not _is_none(s)]
            return self.class_of(sides[0], module) if len(sides) == 1 else None
        if isinstance(annotation, ast.Subscript):
            head = _dotted(annotation.value).rpartition(".")[2]
            inner = _slice_items(annotation.slice)
            if head in {"Optional", "Annotated"} and inner:
                return self.class_of(inner[0], module)
        return None

    def bases(self, cls: _Class) -> list[_Class]:
        out = []
        for base in cls.node.bases:
            found = self.class_of(base, cls.module)
            if found is not None:
                out.append(found)
        return out

    def ancestors(self, cls: _Class) -> list[_Class]:
        """cls, then its target bases breadth first (an approximation of the MRO)."""
        if id(cls) not in self._ancestors:
            self._ancestors[id(cls)] = self._walk_bases(cls)
        return self._ancestors[id(cls)]

    def _walk_bases(self, cls: _Class) -> list[_Class]:
        seen: list[_Class] = []
        stack = [cls]
        while stack:
            current = stack.pop(0)
            if current in seen:
                continue
            seen.append(current)
            stack.extend(self.bases(current))
        return seen

    def subclasses(self, cls: _Class) -> list[_Class]:
        if id(cls) not in self._subclasses:
            self._subclasses[id(cls)] = [
                other
                for module in self.modules.values()
                for other in module.classes.values()
                if other is not cls and cls in self.ancestors(other)
            ]
        return self._subclasses[id(cls)]

    def methods_of(self, cls: _Class, name: str) -> list[_Function]:
        """The method `name` that `cls` defines or inherits, plus overrides below it."""
        found: list[_Function] = []
        for ancestor in self.ancestors(cls):
            if name in ancestor.methods:
                found.append(ancestor.methods[name])
                break
        for sub in self.subclasses(cls):
            if name in sub.methods:
                found.append(sub.methods[name])
        return found

    def attribute_annotation(self, cls: _Class, attr: str) -> tuple[ast.expr, str] | None:
        for ancestor in self.ancestors(cls):
            if attr in ancestor.attributes:
                return ancestor.attributes[attr], ancestor.module
        return None

    def function_at(self, module: str, qualname: str, line: int | None) -> _Function | None:
        index = self.modules.get(module)
        if index is None:
            return None
        matches = [f for f in index.entries if f.qualname == qualname]
        exact = [f for f in matches if line in (f.site.start_line, f.node.lineno)]
        if exact:
            return exact[0]
        return matches[-1] if matches else None


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _slice_items(node: ast.expr) -> list[ast.expr]:
    return list(node.elts) if isinstance(node, ast.Tuple) else [node]


def _package_files(package: str) -> Iterator[tuple[str, Path]]:
    module = sys.modules.get(package) or importlib.import_module(package)
    paths = getattr(module, "__path__", None)
    if paths is None:  # a single-module target
        source = inspect.getsourcefile(module)
        if source:
            yield package, Path(source).resolve()
        return
    for folder in sorted({Path(p).resolve() for p in paths}):
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            yield ".".join([package, *parts]), path


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _index_module(name: str, path: Path, root: Path) -> _Module | None:
    text = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    lines = text.splitlines(keepends=True)
    module = _Module(name=name, file=_relative(path, root))
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                module.imported.update(".".join(parts[: i + 1]) for i in range(len(parts)))
                if alias.asname:
                    module.imports[alias.asname] = (alias.name, None)
                else:
                    top = alias.name.partition(".")[0]
                    module.imports[top] = (top, None)
        elif isinstance(node, ast.ImportFrom):
            source = _absolute_import(name, is_package, node.module, node.level)
            module.imported.add(source)
            for alias in node.names:
                if alias.name != "*":
                    module.imports[alias.asname or alias.name] = (source, alias.name)
                    module.imported.add(f"{source}.{alias.name}")

    def visit(body: list[ast.stmt], owner: _Class | None) -> None:
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                qualname = f"{owner.qualname}.{stmt.name}" if owner else stmt.name
                start = min([d.lineno for d in stmt.decorator_list] + [stmt.lineno])
                end = stmt.end_lineno or stmt.lineno
                site = FunctionSite(
                    module=name,
                    file=module.file,
                    qualname=qualname,
                    start_line=start,
                    end_line=end,
                    source_hash=sha256_text(dedent_lines(lines[start - 1 : end])),
                )
                entry = _Function(name, qualname, stmt, owner.qualname if owner else None, site)
                module.entries.append(entry)
                if owner is None:
                    module.functions[stmt.name] = entry  # the last definition is the binding
                else:
                    owner.methods[stmt.name] = entry
                    for sub in ast.walk(stmt):
                        if (
                            isinstance(sub, ast.AnnAssign)
                            and isinstance(sub.target, ast.Attribute)
                            and isinstance(sub.target.value, ast.Name)
                            and sub.target.value.id == "self"
                        ):
                            owner.attributes.setdefault(sub.target.attr, sub.annotation)
            elif isinstance(stmt, ast.ClassDef):
                qualname = f"{owner.qualname}.{stmt.name}" if owner else stmt.name
                cls = _Class(name, qualname, stmt)
                module.classes[qualname] = cls
                for sub in stmt.body:
                    if isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name):
                        cls.attributes[sub.target.id] = sub.annotation
                visit(stmt.body, cls)
            elif isinstance(stmt, ast.If | ast.Try):  # `if TYPE_CHECKING:` and friends
                for block in ("body", "orelse", "finalbody"):
                    visit(getattr(stmt, block, []), owner)

    visit(tree.body, None)
    return module


def _absolute_import(module: str, is_package: bool, target: str | None, level: int) -> str:
    if level == 0:
        return target or ""
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    return ".".join([*parts, target] if target else parts)


@functools.lru_cache(maxsize=512)
def _index_module_cached(name: str, path: str, root: str) -> _Module | None:
    """Each module parsed once per process, shared by every view that reaches it."""
    return _index_module(name, Path(path), Path(root))


@functools.lru_cache(maxsize=128)
def _package(package: str, root: str, entry: str | None = None) -> _Package:
    return _Package(package, Path(root), entry)


def package_views() -> list[_Package]:
    """The package indexes built since the last `_VIEWS.clear()` (bench/site_index.py)."""
    return list(_VIEWS)


_VIEWS: list[_Package] = []


def _package_of(module: str, adapter: Adapter) -> _Package:
    """The index of what a call from `module` can reach (see `_Package`)."""
    root = str(Path(adapter.source_root()).resolve())
    return _package(module.partition(".")[0], root, module)


# --- call resolution -------------------------------------------------------------------------


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


# --- function facts: statements, locals, writes, guards -------------------------------------


def own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """`node` and its descendants, not entering nested function, class or lambda bodies."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        children = list(ast.iter_child_nodes(current))
        if current is not node and isinstance(current, SCOPE_NODES):
            continue
        stack.extend(reversed(children))


def statements_in(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of `body` at any depth, in source order (nested defs and classes are
    yielded but not entered)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, SCOPE_NODES):
            continue
        for name in ("body", "orelse", "finalbody"):
            yield from statements_in(getattr(stmt, name, []) or [])
        for handler in getattr(stmt, "handlers", []) or []:
            yield from statements_in(handler.body)
        for case in getattr(stmt, "cases", []) or []:
            yield from statements_in(case.body)


def own_statements(fn: FunctionNode) -> Iterator[ast.stmt]:
    """Every statement of the function's own scope at any depth, in source order."""
    return statements_in(fn.body)


def parameter_names(fn: FunctionNode) -> list[str]:
    args = fn.args
    names = [a.arg for a in [*args.posonlyargs, *args.args]]
    if args.vararg:
        names.append(args.vararg.arg)
    names.extend(a.arg for a in args.kwonlyargs)
    if args.kwarg:
        names.append(args.kwarg.arg)
    return names


def _bound_names(target: ast.expr) -> Iterator[ast.Name]:
    if isinstance(target, ast.Name):
        yield target
    elif isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _bound_names(element)
    elif isinstance(target, ast.Starred):
        yield from _bound_names(target.value)


def local_bindings(fn: FunctionNode) -> dict[str, list[ast.expr | None]]:
    """Names bound in the function's own scope -> the values bound (None when not a plain
    `name = value`). Parameters and global/nonlocal names are left out."""
    bindings: dict[str, list[ast.expr | None]] = {}
    declared: set[str] = set()
    for stmt in own_statements(fn):
        for node in own_nodes(stmt):
            if node is not stmt and isinstance(node, ast.stmt):
                continue  # visited as a statement of its own
            if isinstance(node, ast.Global | ast.Nonlocal):
                declared.update(node.names)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    plain = isinstance(target, ast.Name)
                    for name in _bound_names(target):
                        bindings.setdefault(name.id, []).append(node.value if plain else None)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                if node.value is not None:
                    bindings.setdefault(node.target.id, []).append(node.value)
            elif isinstance(node, ast.AugAssign | ast.For | ast.AsyncFor):
                for name in _bound_names(node.target):
                    bindings.setdefault(name.id, []).append(None)
            elif isinstance(node, ast.With | ast.AsyncWith):
                for item in node.items:
                    if item.optional_vars is not None:
                        for name in _bound_names(item.optional_vars):
                            bindings.setdefault(name.id, []).append(None)
            elif isinstance(node, ast.NamedExpr):
                bindings.setdefault(node.target.id, []).append(None)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                bindings.setdefault(node.name, []).append(None)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                for alias in node.names:
                    bound = alias.asname or alias.name.partition(".")[0]
                    bindings.setdefault(bound, []).append(None)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                bindings.setdefault(node.name, []).append(None)
    params = set(parameter_names(fn))
    return {k: v for k, v in bindings.items() if k not in params and k not in declared}


def _is_fresh_value(value: ast.expr) -> bool:
    if isinstance(
        value,
        ast.Constant
        | ast.List
        | ast.Dict
        | ast.Set
        | ast.Tuple
        | ast.ListComp
        | ast.SetComp
        | ast.DictComp
        | ast.GeneratorExp
        | ast.JoinedStr
        | ast.BinOp
        | ast.Compare
        | ast.BoolOp,
    ):
        return True
    if isinstance(value, ast.Call):
        name = _dotted(value.func).rpartition(".")[2]
        return name in FRESH_CALLS or name[:1].isupper()  # a class: a new instance
    return False


def fresh_locals(fn: FunctionNode) -> frozenset[str]:
    """Locals only ever bound to new objects (displays, constructors, copies): writes
    through them change nothing the caller can see."""
    return frozenset(
        name
        for name, values in local_bindings(fn).items()
        if all(v is not None and _is_fresh_value(v) for v in values)
    )


def root_name(expr: ast.expr) -> str | None:
    """The variable at the bottom of `a.b[c].d`, `a.get(k).append` or `*a`."""
    while True:
        if isinstance(expr, ast.Attribute | ast.Subscript | ast.Starred):
            expr = expr.value
        elif isinstance(expr, ast.Call):
            expr = expr.func
        elif isinstance(expr, ast.Name):
            return expr.id
        else:
            return None


def chain_fields(expr: ast.expr) -> frozenset[str]:
    """Attribute names and constant keys along `a.b[c]["d"].e` (not the root variable)."""
    found: set[str] = set()
    while True:
        if isinstance(expr, ast.Attribute):
            found.add(expr.attr)
            expr = expr.value
        elif isinstance(expr, ast.Subscript):
            key = expr.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str | int):
                found.add(str(key.value))
            expr = expr.value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            expr = expr.func.value  # d.get(k).x: the method name is not a field
        elif isinstance(expr, ast.Starred):
            expr = expr.value
        else:
            return frozenset(found)


def _is_state_target(target: ast.expr, fresh: frozenset[str]) -> bool:
    if isinstance(target, ast.Tuple | ast.List):
        return any(_is_state_target(t, fresh) for t in target.elts)
    if isinstance(target, ast.Starred):
        return _is_state_target(target.value, fresh)
    if isinstance(target, ast.Attribute | ast.Subscript):
        return root_name(target) not in fresh
    return False


def _target_fields(target: ast.expr) -> frozenset[str]:
    if isinstance(target, ast.Tuple | ast.List):
        return frozenset().union(*(_target_fields(t) for t in target.elts))
    if isinstance(target, ast.Attribute | ast.Subscript | ast.Starred):
        return chain_fields(target)
    return frozenset()


@dataclass(frozen=True)
class WriteCall:
    """A call that changes state: a mutating method, an in-place function or a writer."""

    call: ast.Call
    kind: Literal["method", "in_place", "writer"]
    fields: frozenset[str]


def write_call(
    call: ast.Call, fresh: frozenset[str], writer_names: frozenset[str]
) -> WriteCall | None:
    func = call.func
    if isinstance(func, ast.Attribute):
        name = func.attr
        receiver_fresh = root_name(func.value) in fresh
        if name in IN_PLACE_FUNCTIONS and call.args:
            if root_name(call.args[0]) not in fresh:
                return WriteCall(call, "in_place", chain_fields(call.args[0]))
            return None
        if name in MUTATING_METHODS and not receiver_fresh:
            return WriteCall(call, "method", chain_fields(func.value))
        if name in writer_names and not receiver_fresh:
            return WriteCall(call, "writer", frozenset())
        return None
    if isinstance(func, ast.Name):
        if func.id in IN_PLACE_FUNCTIONS and call.args:
            if root_name(call.args[0]) not in fresh:
                return WriteCall(call, "in_place", chain_fields(call.args[0]))
            return None
        if func.id in writer_names and func.id not in fresh:
            return WriteCall(call, "writer", frozenset())
    return None


@dataclass(frozen=True)
class StateWrite:
    """One statement that writes state.

    kind `assign`: an assignment, augmented assignment or `del` of an attribute or subscript
    of something not created locally; `call`: an expression statement that is a write call;
    `value`: another simple statement (`x = ...`, `return ...`) whose value contains write
    calls (`record = bank._record_transfer(...)`).
    """

    statement: ast.stmt
    kind: Literal["assign", "call", "value"]
    calls: tuple[WriteCall, ...]
    fields: frozenset[str]


def _write_calls(
    node: ast.AST, fresh: frozenset[str], writer_names: frozenset[str]
) -> list[WriteCall]:
    found = []
    for sub in own_nodes(node):
        if isinstance(sub, ast.Call):
            hit = write_call(sub, fresh, writer_names)
            if hit is not None:
                found.append(hit)
    return found


def only_volatile(write: StateWrite, volatile_fields: frozenset[str]) -> bool:
    """Whether everything `write` writes is volatile: its assigned fields (for an
    assignment) and the fields of each of its write calls are non-empty subsets of
    `volatile_fields`. A writer-helper call names no fields, so it never is (whether the
    helper itself only writes volatile state is decided by leaving it out of the writers)."""
    if not volatile_fields:
        return False
    parts = [hit.fields for hit in write.calls]
    if write.kind == "assign":
        parts.append(write.fields)
    return all(part and part <= volatile_fields for part in parts)


def state_writes(
    fn: FunctionNode, writer_names: Iterable[str] = (), volatile_fields: Iterable[str] = ()
) -> list[StateWrite]:
    """The function's state-write statements at any depth, in source order; those that
    write only `volatile_fields` (see `only_volatile`) left out."""
    writers = frozenset(writer_names)
    volatile = frozenset(volatile_fields)
    fresh = fresh_locals(fn)
    out: list[StateWrite] = []
    for stmt in own_statements(fn):
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, ast.AugAssign | ast.AnnAssign):
            targets, value = [stmt.target], stmt.value
        elif isinstance(stmt, ast.Delete):
            targets = stmt.targets
        elif isinstance(stmt, ast.Expr | ast.Return):
            value = stmt.value
        else:
            continue
        if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
            continue
        state_targets = [t for t in targets if _is_state_target(t, fresh)]
        calls = _write_calls(value, fresh, writers) if value is not None else []
        if state_targets:
            fields = frozenset().union(*(_target_fields(t) for t in state_targets))
            out.append(StateWrite(stmt, "assign", tuple(calls), fields))
        elif isinstance(stmt, ast.Expr) and calls and calls[0].call is stmt.value:
            out.append(StateWrite(stmt, "call", tuple(calls), calls[0].fields))
        elif calls:
            fields = frozenset().union(*(c.fields for c in calls))
            out.append(StateWrite(stmt, "value", tuple(calls), fields))
    return [write for write in out if not only_volatile(write, volatile)]


def is_refusal(stmt: ast.stmt, refusals: frozenset[str] = frozenset()) -> bool:
    """A `raise`, or a `return` whose value is one of `refusals` (see
    `SiteContext.refusal_returns`)."""
    if isinstance(stmt, ast.Raise):
        return True
    return (
        isinstance(stmt, ast.Return)
        and stmt.value is not None
        and ast.unparse(stmt.value) in refusals
    )


@dataclass(frozen=True, eq=False)
class Guard:
    """An `if` that decides between refusing and going on.

    `refuses_in_body`: `if COND: ... <refusal>` (its own body raises or returns a refusal);
    otherwise the *accepting* form `if COND: ... return <ok>` whose refusal branch is the
    `else` or the statement right after the `if`, a refusal (`if ok: return True, ""`
    followed by `return False, "expired"`)."""

    node: ast.If
    refuses_in_body: bool


def _guard_at(stmt: ast.stmt, after: ast.stmt | None, refusals: frozenset[str]) -> Guard | None:
    if not isinstance(stmt, ast.If):
        return None
    if any(is_refusal(s, refusals) for s in stmt.body):
        return Guard(stmt, True)
    last = stmt.body[-1]
    accepting = isinstance(last, ast.Return) and not is_refusal(last, refusals)
    if not accepting:
        return None
    branch = stmt.orelse[0] if stmt.orelse else after
    if branch is not None and not isinstance(branch, ast.If) and is_refusal(branch, refusals):
        return Guard(stmt, False)
    return None


def is_guard(stmt: ast.stmt, refusals: frozenset[str] = frozenset()) -> bool:
    """`if COND: ... <refusal> ...`: an if whose own body refuses directly (raises, or
    returns one of `refusals`)."""
    return isinstance(stmt, ast.If) and any(is_refusal(s, refusals) for s in stmt.body)


def guard_list(body: list[ast.stmt], refusals: frozenset[str] = frozenset()) -> list[Guard]:
    """The guards of `body` at any depth, both forms (see `Guard`), in source order."""
    found: list[Guard] = []

    def visit(block: list[ast.stmt]) -> None:
        for index, stmt in enumerate(block):
            after = block[index + 1] if index + 1 < len(block) else None
            guard = _guard_at(stmt, after, refusals)
            if guard is not None:
                found.append(guard)
            if isinstance(stmt, SCOPE_NODES):
                continue
            for name in ("body", "orelse", "finalbody"):
                visit(getattr(stmt, name, []) or [])
            for handler in getattr(stmt, "handlers", []) or []:
                visit(handler.body)
            for case in getattr(stmt, "cases", []) or []:
                visit(case.body)

    visit(body)
    return found


def guards(fn: FunctionNode, refusals: frozenset[str] = frozenset()) -> list[Guard]:
    """The function's guards at any depth, in source order (see `Guard`)."""
    return guard_list(fn.body, refusals)


def returns_value(fn: FunctionNode) -> bool:
    return any(
        isinstance(stmt, ast.Return) and stmt.value is not None and not _is_none(stmt.value)
        for stmt in own_statements(fn)
    )


# --- site context ------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _module_writers(
    package: _Package, module: str, volatile: frozenset[str] = frozenset()
) -> frozenset[str]:
    """Names of the module's functions and methods that write state that is not volatile,
    directly or by calling another writer of the module (to a fixpoint)."""
    entries = package.modules[module].entries
    writers = {f.name for f in entries if state_writes(f.node, (), volatile)}
    changed = True
    while changed:
        changed = False
        for entry in entries:
            if entry.name not in writers and state_writes(entry.node, writers, volatile):
                writers.add(entry.name)
                changed = True
    return frozenset(writers)


def invariant_fields(contract: Contract) -> frozenset[str]:
    """Every path segment (attribute or key name, not `*`) the invariants read."""
    fields: set[str] = set()
    for clause in contract.invariants:
        for _root, path in compile_predicate(clause.predicate).paths_read:
            fields.update(segment for segment in path if segment != "*")
    return frozenset(fields)


def volatile_fields(adapter: Adapter, contract: Contract | None) -> frozenset[str]:
    """The last attribute/key name of each volatile path pattern of the adapter and of the
    contract (`bank.last_activity` -> `last_activity`). Trailing wildcard (`*`) and argument
    (`{args.x}`) segments are skipped: `rooms.*` masks everything under `rooms`."""
    patterns = list(getattr(adapter, "volatile_paths", list)())
    if contract is not None:
        patterns.extend(contract.volatile)
    fields: set[str] = set()
    for pattern in dict.fromkeys(patterns):
        named = [s for s in parse_pattern(pattern) if s != "*" and not s.startswith("{")]
        if named:
            fields.add(named[-1])
    return frozenset(fields)


_RESET_KEYS: dict[tuple[type, str], frozenset[tuple[str, str, int]]] = {}


def _reset_keys(adapter: Adapter) -> frozenset[tuple[str, str, int]]:
    """Reset-path site keys, per adapter class and source root (adapters need not hash)."""
    key = (type(adapter), str(adapter.source_root()))
    if key not in _RESET_KEYS:
        _RESET_KEYS[key] = frozenset(site_key(s) for s in reset_sites(adapter))
    return _RESET_KEYS[key]


def site_context(
    adapter: Adapter, target_contract: Contract | None, site: FunctionSite, tool: str
) -> SiteContext:
    """What an operator may know about `site` when it is scored against `tool`."""
    tool_function = inspect.unwrap(adapter.tool_function(tool))
    package = _package_of(site.module, adapter)
    effective: frozenset[str] = frozenset()
    fields: frozenset[str] = frozenset()
    clocks: frozenset[str] = frozenset()
    if target_contract is not None:
        clocks = frozenset(
            parse_pattern(c.clock.path)[-1] for c in target_contract.observations if c.clock
        )
        effective = frozenset(
            name for name, spec in target_contract.signature.items() if spec.effective
        )
        fields = invariant_fields(target_contract)
    volatile = volatile_fields(adapter, target_contract)
    is_tool = (
        site.module == tool_function.__module__ and site.qualname == tool_function.__qualname__
    )
    function = package.function_at(site.module, site.qualname, site.start_line)
    refusals = (
        refusal_returns(function.node, judges(adapter, target_contract, is_tool))
        if function is not None
        else frozenset()
    )
    writers = (
        _module_writers(package, site.module, volatile) if site.module in package.modules else None
    )
    return SiteContext(
        tool=tool,
        is_tool_function=is_tool,
        is_reset=site_key(site) in _reset_keys(adapter),
        injected=adapter.injected_parameters(tool),
        effective_arguments=effective,
        invariant_fields=fields,
        writer_names=writers or frozenset(),
        clock_fields=clocks,
        refusal_returns=refusals,
        volatile_fields=volatile,
    )


def parse_function(source: str) -> FunctionNode:
    """The one def in a site's dedented source text."""
    tree = ast.parse(source)
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef | ast.AsyncFunctionDef):
        raise ValueError("a site's source must hold exactly one function definition")
    return tree.body[0]


# --- reset-path pairing: what a tool can leave behind, what a reset step restores -----------

_BLOCK_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})


def _header_nodes(stmt: ast.stmt) -> Iterator[ast.AST]:
    """The nodes of `stmt` outside its nested blocks (a simple statement: all of them)."""
    for name, value in ast.iter_fields(stmt):
        if name in _BLOCK_FIELDS:
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, ast.AST):
                yield from own_nodes(item)


def _flat_targets(targets: Iterable[ast.expr]) -> Iterator[ast.expr]:
    for target in targets:
        if isinstance(target, ast.Tuple | ast.List):
            yield from _flat_targets(target.elts)
        elif isinstance(target, ast.Starred):
            yield from _flat_targets([target.value])
        else:
            yield target


def _assigned_targets(stmt: ast.stmt) -> list[ast.expr]:
    if isinstance(stmt, ast.Assign | ast.Delete):
        return list(_flat_targets(stmt.targets))
    if isinstance(stmt, ast.AugAssign) or (
        isinstance(stmt, ast.AnnAssign) and stmt.value is not None
    ):
        return list(_flat_targets([stmt.target]))
    return []


def _alias_values(fn: FunctionNode) -> dict[str, list[ast.expr]]:
    """Local name -> the expressions it is bound to as a plain name: `x = e`, `x: T = e`,
    `for x in e`, `with e as x`, `(x := e)` (what a write through `x` may reach)."""
    found: dict[str, list[ast.expr]] = {}

    def bind(target: ast.expr, value: ast.expr) -> None:
        for name in _bound_names(target):
            found.setdefault(name.id, []).append(value)

    for stmt in own_statements(fn):
        for node in own_nodes(stmt):
            if node is not stmt and isinstance(node, ast.stmt):
                continue
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    bind(target, node.value)
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                bind(node.target, node.value)
            elif isinstance(node, ast.For | ast.AsyncFor):
                bind(node.target, node.iter)
            elif isinstance(node, ast.With | ast.AsyncWith):
                for item in node.items:
                    if item.optional_vars is not None:
                        bind(item.optional_vars, item.context_expr)
            elif isinstance(node, ast.NamedExpr):
                bind(node.target, node.value)
    return found


def _alias_fields(name: str, aliases: dict[str, list[ast.expr]]) -> frozenset[str]:
    """Fields along every expression the local `name` is bound to, through chains of
    locals (`item = inventory.items[sku]` -> {items})."""
    found: set[str] = set()
    seen = {name}
    queue = [name]
    while queue:
        for value in aliases.get(queue.pop(), []):
            found |= chain_fields(value)
            root = root_name(value)
            if root is not None and root not in seen:
                seen.add(root)
                queue.append(root)
    return frozenset(found)


@functools.lru_cache(maxsize=16)
def _holders(package: _Package) -> dict[int, frozenset[str]]:
    """id(class) -> names of the package's class attributes whose annotation names that
    class or one of its bases anywhere (`accounts: dict[str, Account]` holds Account)."""
    direct: dict[int, set[str]] = {}
    classes = [c for m in package.modules.values() for c in m.classes.values()]
    for owner in classes:
        for attribute, annotation in owner.attributes.items():
            for node in ast.walk(annotation):
                if isinstance(node, ast.Name | ast.Attribute | ast.Constant):
                    held = package.class_of(node, owner.module)
                    if held is not None:
                        direct.setdefault(id(held), set()).add(attribute)
    return {
        id(cls): frozenset().union(*(direct.get(id(a), set()) for a in package.ancestors(cls)))
        for cls in classes
    }


def _written_expressions(write: StateWrite, fresh: frozenset[str]) -> list[ast.expr]:
    """What `write` changes: its assigned targets and the objects its write calls change."""
    exprs = [t for t in _assigned_targets(write.statement) if _is_state_target(t, fresh)]
    for hit in write.calls:
        if hit.kind == "in_place":
            exprs.append(hit.call.args[0])
        elif isinstance(hit.call.func, ast.Attribute):
            exprs.append(hit.call.func.value)
    return exprs


def _function_writes(
    package: _Package, function: _Function, volatile: frozenset[str]
) -> frozenset[str]:
    """The fields one function's non-volatile state writes write, with the attributes that
    hold what they write (see `written_fields`)."""
    writers = (
        _module_writers(package, function.module, volatile)
        if function.module in package.modules
        else frozenset()
    )
    writes = state_writes(function.node, writers, volatile)
    if not writes:
        return frozenset()
    fresh = fresh_locals(function.node)
    aliases = _alias_values(function.node)
    resolver = _Resolver(package, function)
    holders = _holders(package)
    found: set[str] = set()
    for write in writes:
        found |= write.fields
        for expr in _written_expressions(write, fresh):
            found |= chain_fields(expr)
            root = root_name(expr)
            if root is None:
                continue
            found |= _alias_fields(root, aliases)
            cls = resolver.class_of(ast.Name(root, ast.Load()))
            if cls is not None:
                found |= holders.get(id(cls), frozenset())
    return frozenset(found)


def written_fields(adapter: Adapter, tool: str, volatile: Iterable[str] = ()) -> frozenset[str]:
    """W: every field (attribute name or constant key) a state write of the tool's call may
    write, over the tool's function and every function it reaches (`tool_sites`). A write
    `self.accounts[k].balance -= x` writes {accounts, balance}; `self.transfers.append(r)`
    writes {transfers}; `account.frozen = True` also writes what holds `account`: the fields
    of the expressions the local is bound to (`account = bank.accounts[k]` -> accounts) and
    the class attributes annotated with its class (`accounts: dict[str, Account]`). Writes
    of `volatile` fields only, and calls of helpers that write nothing else, are left out."""
    package, entry = _tool_entry(adapter, tool)
    frozen = frozenset(volatile)
    return frozenset().union(
        *(_function_writes(package, f, frozen) for f in _closure(package, entry))
    )


def changed_statements(source: str, mutated: str) -> list[ast.stmt] | None:
    """The statements of `source` (one def, any depth) that `mutated` removes or changes,
    in source order: those whose AST is not matched by one of the mutated function. A
    compound statement whose block changed is among them. None when `mutated` does not
    parse."""
    try:
        after = parse_function(mutated)
    except (SyntaxError, ValueError):
        return None
    remaining: dict[str, int] = {}
    for stmt in own_statements(after):
        key = ast.dump(stmt)
        remaining[key] = remaining.get(key, 0) + 1
    changed = []
    for stmt in own_statements(parse_function(source)):
        key = ast.dump(stmt)
        if remaining.get(key, 0):
            remaining[key] -= 1
        else:
            changed.append(stmt)
    return changed


def restored_fields(
    adapter: Adapter, site: FunctionSite, statements: Iterable[ast.stmt]
) -> frozenset[str]:
    """R: the fields that `statements` (of the site's function, e.g. `changed_statements`)
    restore. An assignment `self.F = ...` restores its target's fields ({F}); a mutating
    call `self.items.clear()` its receiver's; a call of a target function
    (`self.inventory.reset()`, `self._reset_x()`, resolved as `tool_sites` resolves calls)
    every field a state write of that function, or of anything it reaches, writes. Only the
    header of a compound statement is read (its blocks are statements of their own)."""
    package = _package_of(site.module, adapter)
    function = package.function_at(site.module, site.qualname, site.start_line)
    resolver = _Resolver(package, function) if function is not None else None
    found: set[str] = set()
    callees: dict[int, _Function] = {}
    for stmt in statements:
        for target in _assigned_targets(stmt):
            if isinstance(target, ast.Attribute | ast.Subscript):
                found |= chain_fields(target)
        for node in _header_nodes(stmt):
            if not isinstance(node, ast.Call):
                continue
            hit = write_call(node, frozenset(), frozenset())
            if hit is not None:
                found |= hit.fields
            for callee in resolver.resolve(node) if resolver is not None else []:
                for reached in _closure(package, callee):
                    callees[id(reached)] = reached
    for reached in callees.values():
        for write in state_writes(reached.node):
            found |= write.fields
    return frozenset(found)
