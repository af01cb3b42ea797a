"""Applying a mutant in memory: compile the mutated function and rebind it where the
original is bound. Never writes a file; the runner forks a worker per mutant, and
`applied` undoes the rebinding for use in one process (tests, liveness probes)."""

from __future__ import annotations
import __future__

import ast
import functools
import importlib
import linecache
import operator
import sys
import types
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.mutation.model import FunctionSite, Mutant, sha256_text
from harness.mutation.sites import function_source
from harness.targets.adapter import Adapter


class StaleMutant(HarnessError):
    """The installed function's source no longer matches the mutant's site hash."""


class MutantCompileError(HarnessError):
    """The mutated text does not compile."""


_Binding = tuple[Any, str, Any]  # (namespace object, attribute name, raw value)


def _owner(module: Any, qualname: str) -> Any:
    owner = module
    for part in qualname.split(".")[:-1]:
        owner = getattr(owner, part)
    return owner


def _raw(owner: Any, name: str) -> Any:
    """The attribute as stored (a staticmethod stays a staticmethod)."""
    return vars(owner)[name] if name in vars(owner) else getattr(owner, name)


class DefinitionError(MutantCompileError):
    """The mutated text compiles, but defining its function fails (a default value, an
    annotation or a decorator raises)."""


def define(site: FunctionSite, text: str, filename: str) -> Any:
    """The function object `text` (one def) defines, compiled where the site's original
    lives: a method inside a class statement of the same name (so private names mangle
    alike), with the module's `__future__` flags and globals. Raises MutantCompileError
    when it does not compile, DefinitionError when defining it fails. Runs no target code
    beyond the definition itself (defaults, annotations, decorators)."""
    try:
        tree = ast.parse(text)
        if len(tree.body) != 1 or not isinstance(
            tree.body[0], ast.FunctionDef | ast.AsyncFunctionDef
        ):
            raise SyntaxError("the mutated text is not exactly one function definition")
        definition = tree.body[0]
        parts = site.qualname.split(".")
        if len(parts) > 1:
            holder = ast.ClassDef(parts[-2], [], [], [definition], [])
            tree = ast.Module([holder], [])
        ast.fix_missing_locations(tree)
        # the target module's own __future__ flags, not this module's: an annotation such
        # as `int + None` fails at definition time in a module without `annotations`
        with warnings.catch_warnings():  # `x is 1` from a generic operator: not the user's code
            warnings.simplefilter("ignore", SyntaxWarning)
            code = compile(tree, filename, "exec", flags=_future_flags(site), dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        raise MutantCompileError(f"{site.qualname}: {exc}") from exc
    module = importlib.import_module(site.module)
    namespace: dict[str, Any] = {}
    try:
        exec(code, module.__dict__, namespace)  # defines the function only; runs no target code
    except Exception as exc:  # default values and annotations run at definition time
        raise DefinitionError(
            f"{site.qualname} fails where it is defined: {type(exc).__name__}: {exc}"
        ) from exc
    if len(parts) == 1:
        return namespace[definition.name]
    real_class = _owner(module, site.qualname)
    value = vars(namespace[parts[-2]])[definition.name]
    function = getattr(value, "__func__", value)
    function.__qualname__ = site.qualname
    for name, cell in zip(function.__code__.co_freevars, function.__closure__ or (), strict=False):
        if name == "__class__":  # zero-argument super() must see the real class
            cell.cell_contents = real_class
    return value


def compile_mutant(mutant: Mutant) -> Any:
    """The mutated function object (see `define`), bound nowhere, its text registered where
    tracebacks and source readers look for code that has no file."""
    site = mutant.site
    filename = f"<mutant {mutant.id} of {site.file}:{site.qualname}>"
    try:
        value = define(site, mutant.mutated_source, filename)
    except MutantCompileError as exc:
        raise type(exc)(f"mutant {mutant.id} ({exc})") from exc
    # the mutated text, where tracebacks and source readers (the static-scanner checker)
    # look for code that has no file; memory only, like every other part of a mutant
    text = mutant.mutated_source
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    return value


def _future_flags(site: Any) -> int:
    """The `from __future__` compiler flags the original function was compiled with."""
    module = importlib.import_module(site.module)
    original = _raw(_owner(module, site.qualname), site.qualname.rsplit(".", 1)[-1])
    function = getattr(original, "__func__", None) or getattr(original, "fget", None) or original
    code = getattr(function, "__code__", None)
    features = (getattr(__future__, name).compiler_flag for name in __future__.all_feature_names)
    mask = functools.reduce(operator.or_, features, 0)
    return 0 if code is None else code.co_flags & mask


def _bindings(adapter: Adapter, mutant: Mutant) -> list[_Binding]:
    """Where the original is bound: its class or module, and every loaded module of the
    target's package that imported the same function object by name."""
    site = mutant.site
    module = importlib.import_module(site.module)
    owner = _owner(module, site.qualname)
    name = site.qualname.rsplit(".", 1)[-1]
    original = _raw(owner, name)
    found = [(owner, name, original)]
    if owner is module:
        index = package_functions(site.module.partition(".")[0])
        for other, attr in index.get(id(original), (None, []))[1]:
            if other is not module and vars(other).get(attr) is original:
                found.append((other, attr, original))
    return found


# package -> (loaded modules counted, function id -> (the function, its module bindings))
_FUNCTIONS: dict[str, tuple[int, dict[int, tuple[Any, list[tuple[Any, str]]]]]] = {}


def package_functions(package: str) -> dict[int, tuple[Any, list[tuple[Any, str]]]]:
    """Every plain function bound at module level in the loaded modules of a top-level
    package, by identity, with the (module, name) pairs that bind it, modules in name order;
    remembered while no module is loaded or unloaded. The runner builds it in the parent
    (`harness.execution.executors`), so a forked pair worker looks a function up instead of
    reading every module's namespace, which touched thousands of the parent's pages."""
    count = len(sys.modules)
    known = _FUNCTIONS.get(package)
    if known is not None and known[0] == count:
        return known[1]
    prefix = package + "."
    names = sorted(n for n in list(sys.modules) if n == package or n.startswith(prefix))
    index: dict[int, tuple[Any, list[tuple[Any, str]]]] = {}
    for module in (sys.modules.get(n) for n in names):
        if module is None:
            continue
        for attr, value in list(vars(module).items()):
            if isinstance(value, types.FunctionType):
                index.setdefault(id(value), (value, []))[1].append((module, attr))
    _FUNCTIONS[package] = (count, index)
    return index


def check_fresh(adapter: Adapter, mutant: Mutant) -> None:
    current = sha256_text(function_source(mutant.site, Path(adapter.source_root())))
    if current != mutant.site.source_hash:
        raise StaleMutant(
            f"mutant {mutant.id}: {mutant.site.file}:{mutant.site.qualname} changed since the "
            f"mutant was drawn (hash {current[:12]}, expected {mutant.site.source_hash[:12]}); "
            "draw the mutants again"
        )


def _apply(adapter: Adapter, mutant: Mutant) -> list[_Binding]:
    check_fresh(adapter, mutant)
    replacement = compile_mutant(mutant)
    bindings = _bindings(adapter, mutant)
    for owner, attr, _ in bindings:
        setattr(owner, attr, replacement)
    return bindings


def apply_in_memory(adapter: Adapter, mutant: Mutant) -> None:
    """Rebind the site's function to the mutated one. Raises StaleMutant when the installed
    source changed since the draw, MutantCompileError when the mutated text does not
    compile. Nothing is written to disk."""
    _apply(adapter, mutant)


@contextmanager
def applied(adapter: Adapter, mutant: Mutant) -> Iterator[None]:
    """Apply `mutant` for the duration of the block, then restore the original bindings."""
    bindings = _apply(adapter, mutant)
    try:
        yield
    finally:
        for owner, attr, original in bindings:
            setattr(owner, attr, original)
