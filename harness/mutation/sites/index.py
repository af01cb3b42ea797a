"""The package index: every module, class and function of the target's package, read once
with `ast` (no target code runs), and what a call from a module can reach."""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from harness.mutation.model import FunctionSite, sha256_text
from harness.mutation.sites.source import FunctionNode, dedent_lines
from harness.targets.adapter import Adapter


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
