"""Screening at enumeration: candidates that cannot say anything about a checker stay in
the pool snapshot with a status, and are never drawn.

Rule `compile-define-bytecode-v1`, per candidate mutant, in this order:
1. `compile_error`: the mutated text does not compile with its module's `__future__` flags;
2. `definition_error`: defining its function fails (a default value, an annotation or a
   decorator raises), exactly as `harness.mutation.apply` defines it in a worker;
3. `equivalent`: the function it defines is the original's, byte for byte: same bytecode,
   constants (nested code included), names, flags, defaults, decorator expressions (the
   compiler folded the change away: `x * 1`, a dead branch). Not applied to the controls
   arm, whose rewrites are meant to preserve behaviour;
4. `duplicate`: it defines the same function as an earlier candidate (enumeration order) of
   the same operator at the same site.
Everything else is `kept`. A defined object without code to compare (a decorator that
returns something else) is never `equivalent`, and a duplicate only by equal text.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from types import CodeType
from typing import Any

from harness.mutation.apply import DefinitionError, MutantCompileError, define
from harness.mutation.model import Arm, Mutant
from harness.mutation.sites import function_source

SCREENING_RULE = "compile-define-bytecode-v1"


class ScreenStatus(StrEnum):
    KEPT = "kept"
    COMPILE_ERROR = "compile_error"
    DEFINITION_ERROR = "definition_error"
    EQUIVALENT = "equivalent"
    DUPLICATE = "duplicate"


SCREENS = (
    ScreenStatus.COMPILE_ERROR,
    ScreenStatus.DEFINITION_ERROR,
    ScreenStatus.EQUIVALENT,
    ScreenStatus.DUPLICATE,
)


def _const_key(value: Any) -> Any:
    if isinstance(value, CodeType):
        return ("code", code_key(value))
    if isinstance(value, tuple | frozenset):
        return (type(value).__name__, tuple(_const_key(v) for v in value))
    return (type(value).__name__, repr(value))


def code_key(code: CodeType) -> tuple:
    """A code object without its positions: what it does, not where its lines are."""
    return (
        code.co_code,
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        code.co_flags,
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        getattr(code, "co_exceptiontable", b""),
        tuple(_const_key(c) for c in code.co_consts),
    )


def _decorators(text: str) -> str:
    fn = ast.parse(text).body[0]
    return ast.dump(ast.Module(list(getattr(fn, "decorator_list", [])), []))


def fingerprint(value: Any, text: str) -> tuple | None:
    """What a defined function does, for comparison; None when it has no code to read."""
    raw = getattr(value, "__func__", None) or getattr(value, "fget", None) or value
    function = inspect.unwrap(raw) if callable(raw) else raw
    code = getattr(function, "__code__", None)
    if not isinstance(code, CodeType):
        return None
    return (
        type(value).__name__,
        code_key(code),
        repr(getattr(function, "__defaults__", None)),
        repr(getattr(function, "__kwdefaults__", None)),
        repr(sorted((getattr(function, "__annotations__", None) or {}).items())),
        _decorators(text),
    )


@dataclass
class Screener:
    """Screens the candidates of one enumeration; remembers each site's original and each
    (site, operator)'s fingerprints seen so far."""

    root: Path
    _originals: dict[tuple[str, str, int], tuple | None] = field(default_factory=dict)
    _seen: dict[tuple[tuple[str, str, int], str], set[Any]] = field(default_factory=dict)
    _status: dict[str, ScreenStatus] = field(default_factory=dict)

    def _original(self, mutant: Mutant) -> tuple | None:
        site = mutant.site
        key = (site.file, site.qualname, site.start_line)
        if key not in self._originals:
            text = function_source(site, self.root)
            try:
                value = define(site, text, f"<original of {site.file}:{site.qualname}>")
                self._originals[key] = fingerprint(value, text)
            except MutantCompileError:
                self._originals[key] = None
        return self._originals[key]

    def status(self, mutant: Mutant) -> ScreenStatus:
        """The mutant's screening status (the first call decides; later calls repeat it)."""
        if mutant.id not in self._status:
            self._status[mutant.id] = self._screen(mutant)
        return self._status[mutant.id]

    def _screen(self, mutant: Mutant) -> ScreenStatus:
        site = mutant.site
        filename = f"<screen {mutant.id} of {site.file}:{site.qualname}>"
        try:
            value = define(site, mutant.mutated_source, filename)
        except DefinitionError:
            return ScreenStatus.DEFINITION_ERROR
        except MutantCompileError:
            return ScreenStatus.COMPILE_ERROR
        found = fingerprint(value, mutant.mutated_source)
        if found is not None and mutant.arm is not Arm.CONTROLS and found == self._original(mutant):
            return ScreenStatus.EQUIVALENT
        key = ((site.file, site.qualname, site.start_line), mutant.operator)
        seen = self._seen.setdefault(key, set())
        identity = found if found is not None else ("text", mutant.mutated_source)
        if identity in seen:
            return ScreenStatus.DUPLICATE
        seen.add(identity)
        return ScreenStatus.KEPT
