"""`harness contracts validate`: every check a contract must pass before a checker reads it.

Checks: the schema; clause ids unique and prefixed; every predicate compiles with no free
names (preconditions read only pre and args); each provenance quote occurs verbatim at the
cited line of the *installed* target source; a `tool_return` quote sits on a return or raise
statement, not a comment or a log call; frame and volatile paths match something in a
fresh snapshot; the signature matches the tool's real one; the source span is the tool's
function; a biconditional success signal carries its justification; an observation clause
names tools of the target and a clock path a fresh snapshot has.
"""

from __future__ import annotations

import ast
import inspect
import io
import tokenize
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from harness.contracts.loader import contract_files, load_contract
from harness.contracts.model import (
    DRAFT_SUFFIX,
    OBSERVATION_ROOTS,
    Contract,
    Provenance,
    Surface,
)
from harness.contracts.predicate import PredicateError, compile_predicate
from harness.errors import Problem, UserError
from harness.targets.adapter import Adapter
from harness.targets.equality import (
    bind_pattern,
    canonical_equal,
    parse_pattern,
    pattern_matches_any,
    pattern_may_match,
)
from harness.targets.registry import BUILTIN_TARGETS, resolve_adapter

PRE_ROOTS = frozenset({"pre", "args"})
SUCCESS_ROOTS = frozenset({"result", "args"})
CLAUSE_FIELDS = ("preconditions", "effects", "frame", "arguments", "invariants", "observations")


@lru_cache(maxsize=64)
def _source(path: Path) -> tuple[list[str], ast.Module | None, frozenset[tuple[int, int, int]]]:
    """Lines, AST and comment spans (line, start col, end col) of a source file."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    try:
        tree: ast.Module | None = ast.parse(text)
    except SyntaxError:
        tree = None
    comments = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                comments.add((tok.start[0], tok.start[1], tok.end[1]))
    except (tokenize.TokenError, SyntaxError):
        pass
    return lines, tree, frozenset(comments)


def _spans_lines(lines: list[str], line: int, quote: str) -> bool:
    """Whether `quote` starts on `line` and runs on over the following lines, with every run
    of whitespace (line breaks and indentation included) matching any run of whitespace."""
    words = quote.split()
    if len(words) < 2:
        return False
    following = " ".join(lines[line - 1 : line - 1 + quote.count("\n") + len(words)]).split()
    text, first = " ".join(following), " ".join(lines[line - 1].split())
    start = text.find(" ".join(words))
    return 0 <= start < len(first) and start + len(" ".join(words)) > len(first)


class ContractValidator:
    """Validates contracts of one adapter; collects every problem instead of stopping."""

    def __init__(self, adapter: Adapter):
        self.adapter = adapter
        self._fresh: Any = None

    def fresh_snapshot(self) -> Any:
        if self._fresh is None:
            self._fresh = self.adapter.snapshot(self.adapter.fresh())
        return self._fresh

    def validate(self, path: Path, contract: Contract) -> list[Problem]:
        file = str(path)
        problems: list[Problem] = []
        if contract.tool not in self.adapter.tool_names():
            return [
                Problem(
                    file,
                    "tool",
                    f"{contract.tool!r} is not a tool of {self.adapter.name}",
                    f"use one of: {', '.join(self.adapter.tool_names())}",
                )
            ]
        problems += self._predicates(file, contract)
        problems += self._provenance(file, contract)
        problems += self._paths(file, contract)
        problems += self._signature(file, contract)
        problems += self._source_span(file, contract)
        problems += self._observations(file, contract)
        return problems

    def _observations(self, file: str, contract: Contract) -> list[Problem]:
        problems = []
        tools = self.adapter.tool_names()
        for clause in contract.observations:
            try:
                predicate = compile_predicate(clause.predicate, roots=OBSERVATION_ROOTS)
            except PredicateError as exc:
                problems.append(
                    Problem(
                        file,
                        f"{clause.id}.predicate",
                        str(exc),
                        "an observation predicate may read only pre, args, issued and now",
                    )
                )
            else:
                for name in sorted(predicate.args_read - set(contract.signature)):
                    problems.append(
                        Problem(
                            file,
                            f"{clause.id}.predicate",
                            f"reads args.{name}, which is not in the signature",
                            "add it to `signature` or correct the name",
                        )
                    )
            named = [("issued_by", clause.issued_by)]
            if clause.clock is not None:
                named.append(("clock.advance_tool", clause.clock.advance_tool))
                if not pattern_matches_any(parse_pattern(clause.clock.path), self.fresh_snapshot()):
                    problems.append(
                        Problem(
                            file,
                            f"{clause.id}.clock.path",
                            f"path {clause.clock.path!r} matches nothing in a fresh snapshot",
                            "name the state path of the clock, e.g. storage.now",
                        )
                    )
            for where, tool in named:
                if tool not in tools:
                    problems.append(
                        Problem(
                            file,
                            f"{clause.id}.{where}",
                            f"{tool!r} is not a tool of {self.adapter.name}",
                            f"use one of: {', '.join(tools)}",
                        )
                    )
        return problems

    # --- predicates ------------------------------------------------------------------------

    def _predicates(self, file: str, contract: Contract) -> list[Problem]:
        problems = []
        volatile = [parse_pattern(p) for p in [*self.adapter.volatile_paths(), *contract.volatile]]
        for field, clause in contract.predicate_clauses():
            roots = PRE_ROOTS if field == "preconditions" else None
            try:
                predicate = (
                    compile_predicate(clause.predicate, roots=roots)
                    if roots
                    else compile_predicate(clause.predicate)
                )
            except PredicateError as exc:
                fix = "rewrite the predicate with the allowed syntax"
                if roots:
                    fix = "a precondition may read only `pre` and `args`"
                problems.append(Problem(file, f"{clause.id}.predicate", str(exc), fix))
                continue
            unknown = sorted(predicate.args_read - set(contract.signature))
            if unknown:
                problems.append(
                    Problem(
                        file,
                        f"{clause.id}.predicate",
                        f"reads args.{unknown[0]}, which is not in the signature",
                        "add it to `signature` or correct the name",
                    )
                )
            for root, path in sorted(predicate.paths_read):
                if root in ("pre", "post") and not pattern_may_match(path, self.fresh_snapshot()):
                    problems.append(
                        Problem(
                            file,
                            f"{clause.id}.predicate",
                            f"reads {root}.{'.'.join(path)}, which a fresh snapshot lacks",
                            "name a path that exists (see `harness check --json`)",
                        )
                    )
                if root in ("pre", "post") and any(_covers(v, path) for v in volatile):
                    problems.append(
                        Problem(
                            file,
                            f"{clause.id}.predicate",
                            f"reads volatile path {'.'.join(path)}, which every comparison masks",
                            "read a path that is not volatile",
                        )
                    )
        if contract.success.predicate:
            try:
                compile_predicate(contract.success.predicate, roots=SUCCESS_ROOTS)
            except PredicateError as exc:
                problems.append(
                    Problem(
                        file,
                        "success.predicate",
                        str(exc),
                        "a success predicate may read only `result` and `args`",
                    )
                )
        return problems

    # --- provenance --------------------------------------------------------------------------

    def _cited(self, contract: Contract) -> Iterable[tuple[str, Provenance]]:
        for field in CLAUSE_FIELDS:
            for clause in getattr(contract, field):
                if clause.provenance is not None:
                    yield clause.id, clause.provenance
        if contract.success.provenance is not None:
            yield "success", contract.success.provenance
        if contract.reset is not None and contract.reset.provenance is not None:
            yield "reset", contract.reset.provenance

    def _provenance(self, file: str, contract: Contract) -> list[Problem]:
        problems = []
        root = self.adapter.source_root()
        for where, prov in self._cited(contract):
            where = f"{where}.provenance"
            problem = self._quote(file, where, root, prov)
            if problem:
                problems.append(problem)
        return problems

    def _quote(self, file: str, where: str, root: Path, prov: Provenance) -> Problem | None:
        source = root / prov.file
        if not source.is_file():
            return Problem(
                file,
                where,
                f"cited file {prov.file} is not in the installed target",
                f"cite a path relative to {root}",
            )
        lines, tree, comments = _source(source)
        if prov.line > len(lines):
            return Problem(
                file,
                where,
                f"{prov.file} has {len(lines)} lines, not {prov.line}",
                "cite the line the quote is on",
            )
        text = lines[prov.line - 1]
        column = text.find(prov.quote)
        if column < 0 and _spans_lines(lines, prov.line, prov.quote):
            column = 0 if prov.surface is not Surface.TOOL_RETURN else column
        if column < 0:
            elsewhere = [i + 1 for i, line in enumerate(lines) if prov.quote in line]
            fix = (
                f"cite line {elsewhere[0]}"
                if elsewhere
                else "copy the quote verbatim from the source"
            )
            return Problem(
                file, where, f"quote {prov.quote!r} is not on {prov.file}:{prov.line}", fix
            )
        if prov.surface is Surface.TOOL_RETURN:
            in_comment = any(
                line == prov.line and start <= column < end for line, start, end in comments
            )
            statement = _statement_at(tree, prov.line) if tree is not None else None
            if in_comment or not isinstance(statement, ast.Return | ast.Raise):
                kind = (
                    "a comment"
                    if in_comment
                    else (type(statement).__name__ if statement is not None else "no statement")
                )
                return Problem(
                    file,
                    where,
                    f"a tool_return quote must sit on a return or raise "
                    f"line; {prov.file}:{prov.line} is {kind}",
                    "cite the return/raise line, or use surface: docstring",
                )
        return None

    # --- paths -----------------------------------------------------------------------------

    def _paths(self, file: str, contract: Contract) -> list[Problem]:
        problems = []
        fresh = self.fresh_snapshot()
        checks = [("volatile", p) for p in contract.volatile]
        for clause in contract.frame:
            checks += [(f"{clause.id}.scope", p) for p in clause.scope]
            checks += [(f"{clause.id}.writes", p) for p in clause.writes]
        for where, pattern in checks:
            try:
                bound = bind_pattern(pattern, None)
            except ValueError as exc:
                problems.append(
                    Problem(file, where, str(exc), "write a dotted path like bank.accounts")
                )
                continue
            if not pattern_matches_any(bound, fresh):
                problems.append(
                    Problem(
                        file,
                        where,
                        f"path {pattern!r} matches nothing in a fresh snapshot",
                        "name a path that exists (see `harness check --json` for the state)",
                    )
                )
        return problems

    # --- signature and source ------------------------------------------------------------------

    def _signature(self, file: str, contract: Contract) -> list[Problem]:
        function = self.adapter.tool_function(contract.tool)
        injected = self.adapter.injected_parameters(contract.tool)
        real = {
            name: p
            for name, p in inspect.signature(function).parameters.items()
            if name not in injected
        }
        problems = []
        for name in sorted(set(real) - set(contract.signature)):
            problems.append(
                Problem(
                    file, "signature", f"the tool has argument {name!r}", f"add signature.{name}"
                )
            )
        for name in sorted(set(contract.signature) - set(real)):
            problems.append(
                Problem(
                    file,
                    f"signature.{name}",
                    "the tool has no such argument",
                    f"remove it; the tool takes {', '.join(real) or 'none'}",
                )
            )
        annotations = parameter_annotations(function)
        for name in sorted(set(real) & set(contract.signature)):
            spec, param = contract.signature[name], real[name]
            has_default = param.default is not inspect.Parameter.empty
            if spec.optional != has_default:
                problems.append(
                    Problem(
                        file,
                        f"signature.{name}.optional",
                        f"the tool's {name} {'has' if has_default else 'has no'} default",
                        f"write optional: {str(has_default).lower()}",
                    )
                )
            elif has_default and not canonical_equal(spec.default, param.default):
                problems.append(
                    Problem(
                        file,
                        f"signature.{name}.default",
                        f"the tool's default is {param.default!r}",
                        f"write default: {param.default!r}",
                    )
                )
            expected = _annotation_type(annotations[name])
            if expected is not None and expected != spec.type:
                problems.append(
                    Problem(
                        file,
                        f"signature.{name}.type",
                        f"the tool annotates {name} as {expected}",
                        f"write type: {expected}",
                    )
                )
        return problems

    def _source_span(self, file: str, contract: Contract) -> list[Problem]:
        span = contract.source
        path = self.adapter.source_root() / span.file
        if not path.is_file():
            return [
                Problem(
                    file,
                    "source.file",
                    f"{span.file} is not in the installed target",
                    f"give a path relative to {self.adapter.source_root()}",
                )
            ]
        _, tree, _ = _source(path)
        found = [
            node
            for node in ast.walk(tree)
            if tree is not None
            and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.name == span.function
        ]
        if not found:
            return [
                Problem(
                    file,
                    "source.function",
                    f"{span.file} defines no {span.function}",
                    "name the tool's function",
                )
            ]
        starts = [(_first_line(n), n.end_lineno or n.lineno) for n in found]
        if (span.start_line, span.end_line) not in starts:
            start, end = starts[0]
            return [
                Problem(
                    file,
                    "source",
                    f"{span.function} spans lines {start}-{end} of {span.file}",
                    f"write start_line: {start}, end_line: {end}",
                )
            ]
        return []


def _covers(pattern: tuple[str, ...], path: tuple[str, ...]) -> bool:
    """Whether `pattern` names `path` or a prefix of it ("*" matches any key on either side)."""
    return len(pattern) <= len(path) and all(
        p == k or "*" in (p, k) for p, k in zip(pattern, path, strict=False)
    )


def _first_line(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


def _statement_at(tree: ast.Module, line: int) -> ast.stmt | None:
    """The innermost statement whose lines include `line`."""
    containing = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno)
    ]
    if not containing:
        return None
    return max(containing, key=lambda n: (n.lineno, -(n.end_lineno or n.lineno)))


_SIMPLE = {str: "str", int: "int", float: "float", bool: "bool", list: "list", dict: "dict"}


def parameter_annotations(function: Any) -> dict[str, Any]:
    """Each parameter's annotation, string annotations (`from __future__ import
    annotations`) resolved in the function's module; one that does not resolve stays as
    written (and `_annotation_type` then says nothing about it)."""
    import typing

    raw = {n: p.annotation for n, p in inspect.signature(function).parameters.items()}
    try:
        hints = typing.get_type_hints(inspect.unwrap(function))
    except Exception:  # a forward reference that names nothing importable
        hints = {}
    return {name: hints.get(name, annotation) for name, annotation in raw.items()}


def _annotation_type(annotation: Any) -> str | None:
    """The contract type for a simple annotation (int, str | None, list[str]), else None."""
    import types
    import typing

    if annotation in _SIMPLE:
        return _SIMPLE[annotation]
    origin = typing.get_origin(annotation)
    if origin in (list, dict):
        return _SIMPLE[origin]
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) == 1 and len(typing.get_args(annotation)) == 2:
            inner = _annotation_type(members[0])
            return f"{inner}|None" if inner else None
    return None


def draft_problems(path: Path, contract: Contract) -> list[Problem]:
    """One line per draft clause: it is valid, but no count includes it yet."""
    return [
        Problem(
            str(path),
            clause_id,
            "draft clause, excluded from every count",
            f"write its predicate, then drop the {DRAFT_SUFFIX!r} suffix from the id",
        )
        for clause_id in contract.draft_ids()
    ]


def success_warnings(path: Path, contract: Contract) -> list[Problem]:
    """A success signal that is not biconditional turns phantom-effect detection off for the
    tool's effects (an absent effect then is allowed): say so, since nothing else will."""
    if contract.success.biconditional or not contract.effects:
        return []
    return [
        Problem(
            str(path),
            "success.biconditional",
            "the success signal is not biconditional, so no effect clause can reveal a "
            "phantom effect (success signalled, effect absent: UNTESTABLE "
            "effect_absent_not_biconditional)",
            "set `biconditional: true` with a justification where the docs say success is "
            "reported only when the effects happen, or keep it false on purpose",
        )
    ]


def validate_inputs(
    inputs: list[str], warnings: list[Problem] | None = None
) -> tuple[int, list[Problem], list[Problem]]:
    """Validate target names (registered or `package.module:Class`) or contract paths;
    (files checked, problems, drafts). `warnings` collects non-blocking notes
    (`success_warnings`)."""
    paths: list[Path] = []
    adapters: dict[str, Adapter] = {}
    for item in inputs:
        if item in BUILTIN_TARGETS or (":" in item and not Path(item).exists()):
            adapter = resolve_adapter(item)
            adapters[adapter.name] = adapter  # its contracts name it by adapter.name
            paths.append(adapter.contracts_dir())
        else:
            paths.append(Path(item))
    files = contract_files(paths)
    if not files:
        raise UserError(
            Problem(
                " ".join(inputs),
                "path",
                "no contract files (*.yaml) found",
                "give a target name or a folder of contracts",
            )
        )
    problems: list[Problem] = []
    drafts: list[Problem] = []
    validators: dict[str, ContractValidator] = {}
    for path in files:
        try:
            contract = load_contract(path)
        except UserError as exc:
            problems += exc.problems
            continue
        if contract.target not in validators:
            try:
                adapter = adapters.get(contract.target) or resolve_adapter(contract.target)
                validators[contract.target] = ContractValidator(adapter)
            except UserError as exc:
                fix = "or give its adapter (package.module:Class) to validate as well"
                problems += [
                    Problem(str(path), "target", p.message, f"{p.fix}; {fix}") for p in exc.problems
                ]
                continue
        problems += validators[contract.target].validate(path, contract)
        drafts += draft_problems(path, contract)
        if warnings is not None:
            warnings += success_warnings(path, contract)
    return len(files), problems, drafts
