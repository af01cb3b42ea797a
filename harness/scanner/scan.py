"""The scanner's entry points: every check over one source text, files, a target's tools."""

from __future__ import annotations

import inspect
import tokenize
from collections.abc import Collection, Sequence
from pathlib import Path

from harness.errors import Problem, UserError
from harness.scanner.commented_guards import _check_commented_guards, _comment_runs
from harness.scanner.falsy_tests import _check_falsy_tests
from harness.scanner.flags import ScanError, ScanFlag
from harness.scanner.literal_returns import _check_literal_returns
from harness.scanner.logged_only import _check_logged_only
from harness.scanner.model import _build_module, _Func, _parse
from harness.scanner.optional_bool import _check_optional_bool_tests
from harness.scanner.unused_parameters import _check_unused_parameters
from harness.scanner.verb_pairs import _check_verb_pairs
from harness.targets.registry import Target


def _is_selected(fn: _Func, functions: Collection[str] | None) -> bool:
    return functions is None or fn.qualname in functions or fn.name in functions


def scan_source(
    source: str,
    *,
    file: str,
    functions: Collection[str] | None = None,
    injected: Collection[str] = (),
) -> list[ScanFlag]:
    """Scan one module's text.

    `functions`: limit per-function checks to these names (None = every function); a name
    matches a function's qualified name (``Bank.debit``) or its plain name (``debit``).
    `injected`: parameter names that are environment objects filled by the harness (e.g.
    ``bank``), never agent arguments: excluded from the parameter checks. The verb-pair check
    looks at all function pairs in the module (restricted to `functions` when given).
    Flags are sorted by (file, line, check), then function and message.
    """
    tree = _parse(source, file)
    module = _build_module(tree, source, file)
    selected = [fn for fn in module.functions if _is_selected(fn, functions)]
    injected_names = frozenset(injected)
    runs = _comment_runs(source, module)
    flags: list[ScanFlag] = []
    for fn in selected:
        flags += _check_literal_returns(fn, module)
        flags += _check_commented_guards(fn, runs.get(fn.qualname, []), file)
        flags += _check_logged_only(fn, injected_names, file)
        flags += _check_falsy_tests(fn, injected_names, file, module.lines)
        flags += _check_optional_bool_tests(fn, injected_names, file, module.lines)
        flags += _check_unused_parameters(fn, injected_names, file)
    flags += _check_verb_pairs(selected, module)
    unique = {(f.line, f.check, f.function, f.message): f for f in flags}
    return sorted(unique.values(), key=lambda f: (f.file, f.line, f.check, f.function, f.message))


def scan_files(
    files: Sequence[tuple[Path, str]],
    *,
    functions: Collection[str] | None = None,
    injected: Collection[str] = (),
) -> list[ScanFlag]:
    """Scan (absolute path, display name) pairs; flags name files by their display name."""
    flags: list[ScanFlag] = []
    for path, display in files:
        try:
            # tokenize.open honours a PEP 263 coding cookie, as the interpreter would.
            with tokenize.open(path) as handle:
                source = handle.read()
        except (OSError, SyntaxError, UnicodeDecodeError) as exc:
            raise ScanError(f"{display}:1: cannot read: {exc}") from exc
        flags += scan_source(source, file=display, functions=functions, injected=injected)
    return sorted(flags, key=lambda f: (f.file, f.line, f.check, f.function, f.message))


def scan_target(target: Target, tools: Collection[str] | None = None) -> list[ScanFlag]:
    """Flags for the modules that define a target's tools (whole modules, so the helpers and
    model methods the tools call are read too; only the named tools' functions with `tools`)."""
    names = sorted(target.adapter.tool_names()) if tools is None else sorted(tools)
    root = target.adapter.source_root()
    files: dict[Path, str] = {}
    injected: set[str] = set()
    for name in names:
        if name not in target.adapter.tool_names():
            raise UserError(
                Problem(
                    target.name,
                    f"tool {name}",
                    "is not a tool of this target",
                    f"use one of: {', '.join(sorted(target.adapter.tool_names()))}",
                )
            )
        path = Path(inspect.getsourcefile(target.adapter.tool_function(name)) or "").resolve()
        display = (
            str(path.relative_to(root.resolve()))
            if path.is_relative_to(root.resolve())
            else str(path)
        )
        files[path] = display
        injected |= target.adapter.injected_parameters(name)
    functions = None if tools is None else set(names)
    try:
        return scan_files(sorted(files.items()), functions=functions, injected=injected)
    except ScanError as exc:
        raise UserError(
            Problem(str(exc).split(":")[0], "source", str(exc), "fix the syntax")
        ) from exc
