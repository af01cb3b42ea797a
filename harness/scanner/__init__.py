"""Static scanner: AST checks over tool source that raise flags for a person to look at.

The scanner reads source text with `ast` and `tokenize` only. It never imports, compiles to
bytecode or runs the scanned code, so a module whose body would raise, write a file or open a
socket is scanned like any other. Its output is a list of `ScanFlag`s: leads for a reviewer,
never verdicts. Each flag carries the `DefectClass` the pattern most often points at.

The seven checks:

``literal_success_return`` (hint: phantom_effect)
    In a *writer* function (one that stores to an attribute or subscript, deletes one, calls a
    mutating method such as ``append``/``pop``/``update`` on non-local data, or calls a writer
    function defined in the same module), a ``return`` of a fixed success value - a non-empty
    string, ``True``, a dict/list/tuple display of constants holding at least one string or
    ``True``, or an f-string whose placeholders are only parameter names - on a path with no
    state write before it. A write counts as "before"
    when it occurs earlier in the return's own block or in any enclosing block. Values that read
    as failures ("Error: ...", ``{"success": False}``, "already frozen") are not flagged.

``commented_out_guard`` (hint: unenforced_precondition)
    A run of full-line comments inside a function that, once the ``#`` and the common indentation
    are stripped, parses as Python containing a ``raise`` or an ``assert`` - e.g.
    ``# if amount > balance: raise InsufficientFunds()``. A commented ``if ...:`` followed by a
    commented ``raise`` at the same indentation is re-indented before parsing; a run mixing prose
    and code is searched for its longest parseable window.

``parameter_only_logged`` (hint: ignored_argument)
    An agent parameter whose every read sits in an f-string that only reaches a return value, a
    raised exception or a log line, or in the arguments of ``print``/``logging.*``/``logger.*``/
    ``log.*``/``*.info()`` and friends. The argument is echoed back but never changes state or
    the decision. A read that looks something up inside the f-string (``f"{db.users[uid]}"``)
    is a real use. Unused parameters are not flagged here.

``falsy_truthiness_test`` (hint: ignored_argument)
    A truthiness test (``if p:``, ``while p``, ``not p``, ``p and ...``/``p or default``,
    ``x if p else y``, ``assert p``, ``bool(p)``) of an agent parameter annotated as a type with
    a meaningful falsy value: int, float, str, bytes, list, dict, set, tuple, frozenset (or their
    typing aliases), optionally wrapped in ``Optional``/``X | None``/``Union``. ``bool`` and
    other classes are not flagged. The test treats ``0``/``""``/``[]`` like a missing value.
    ``p or []`` (the fallback equals the falsy value) is harmless and not flagged.

``optional_bool_truthiness`` (hint: ignored_argument)
    The same truthiness tests of an agent parameter annotated ``bool | None`` (``Optional[bool]``,
    ``Union[bool, None]``), where ``None`` means "leave as it is" and ``False`` is a value of its
    own: ``if recurring:`` skips an explicit ``False`` exactly as it skips ``None``. A plain
    ``bool`` is not flagged (its truthiness is its value); ``p or False`` is not flagged.

``unused_parameter`` (hint: ignored_argument)
    An agent parameter the body never reads (no load of its name anywhere in the function,
    nested functions included). Not flagged: names starting with ``_``, ``*args``/``**kwargs``,
    a function calling ``locals()``/``vars()``, and stubs (a body of only a docstring, ``pass``,
    ``...`` or a ``raise``) and ``@abstractmethod``/``@overload`` definitions.

``verb_pair_asymmetry`` (hint: invariant_break)
    Functions in one scope (the module, or one class) named by complementary verbs - book/cancel,
    reserve/release, freeze/unfreeze, lock/unlock, open/close, add/remove, create/delete,
    grant/revoke, enable/disable, subscribe/unsubscribe, check_in/check_out, start/stop,
    attach/detach, follow/unfollow, block/unblock, archive/unarchive, deposit/withdraw - are
    paired: by the rest of the name, or by verb alone when that is unambiguous. For each pair,
    the fields one side writes (attribute names, and string keys of dict-shaped records,
    including writes made by same-module helpers it calls by name) are compared with everything
    the other side touches (reads or writes, also through one level of helpers). A field one
    side writes and the other never touches is flagged on the side that ignores it.

Injected parameters (environment objects filled by the harness, e.g. ``bank``) and
``self``/``cls`` are never treated as agent parameters.
"""

from __future__ import annotations

import ast
import inspect
import io
import itertools
import re
import tokenize
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from harness.defects import DefectClass
from harness.errors import HarnessError, Problem, UserError
from harness.targets.registry import Target

__all__ = ["ScanCheck", "ScanError", "ScanFlag", "scan_files", "scan_source", "scan_target"]


class ScanCheck(StrEnum):
    LITERAL_SUCCESS_RETURN = "literal_success_return"
    COMMENTED_OUT_GUARD = "commented_out_guard"
    PARAMETER_ONLY_LOGGED = "parameter_only_logged"
    FALSY_TRUTHINESS_TEST = "falsy_truthiness_test"
    VERB_PAIR_ASYMMETRY = "verb_pair_asymmetry"
    OPTIONAL_BOOL_TRUTHINESS = "optional_bool_truthiness"
    UNUSED_PARAMETER = "unused_parameter"


class ScanFlag(BaseModel):
    """One lead for a reviewer: where the pattern is and what it may mean."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    check: ScanCheck
    file: str
    function: str
    line: int
    class_hint: DefectClass
    message: str


class ScanError(HarnessError, ValueError):
    """The scanned source cannot be parsed or read."""


_CLASS_HINTS: dict[ScanCheck, DefectClass] = {
    ScanCheck.LITERAL_SUCCESS_RETURN: DefectClass.PHANTOM_EFFECT,
    ScanCheck.COMMENTED_OUT_GUARD: DefectClass.UNENFORCED_PRECONDITION,
    ScanCheck.PARAMETER_ONLY_LOGGED: DefectClass.IGNORED_ARGUMENT,
    ScanCheck.FALSY_TRUTHINESS_TEST: DefectClass.IGNORED_ARGUMENT,
    ScanCheck.VERB_PAIR_ASYMMETRY: DefectClass.INVARIANT_BREAK,
    ScanCheck.OPTIONAL_BOOL_TRUTHINESS: DefectClass.IGNORED_ARGUMENT,
    ScanCheck.UNUSED_PARAMETER: DefectClass.IGNORED_ARGUMENT,
}

FuncNode = ast.FunctionDef | ast.AsyncFunctionDef

# Methods that mutate the container they are called on.
_MUTATORS = frozenset(
    {"append", "appendleft", "extend", "extendleft", "insert", "pop", "popitem", "popleft"}
    | {"remove", "clear", "update", "setdefault", "add", "discard", "sort", "reverse"}
    | {"difference_update", "intersection_update", "symmetric_difference_update"}
)

# Calls whose result is a new object, so mutating it is local bookkeeping, not a state write.
_FRESH_CALLS = frozenset(
    {"list", "dict", "set", "tuple", "frozenset", "bytearray", "copy", "deepcopy"}
    | {"defaultdict", "OrderedDict", "Counter", "deque", "sorted", "reversed"}
    | {"split", "rsplit", "splitlines"}
)

_LOG_ROOTS = frozenset({"logging", "logger", "log", "_logger", "_log", "LOGGER", "LOG"})
_LOG_METHODS = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal"}
)
# Keyword arguments of print/logging calls that steer the call rather than fill the message.
_LOG_CONTROL_KEYWORDS = frozenset({"file", "sep", "end", "flush", "stacklevel", "exc_info"})
# Builtins that only reformat a value shown in a message (anything else may read state).
_PURE_FORMATTERS = frozenset({"str", "repr", "format", "len", "int", "float", "round", "abs"})
# str methods that keep a value "just text" when applied to an f-string.
_STR_METHODS = frozenset(
    {"strip", "lstrip", "rstrip", "upper", "lower", "title", "capitalize", "format", "encode"}
)

_FAILURE_TEXT = re.compile(
    r"\b(?:error|errors|fail|failed|fails|failure|invalid|cannot|unable|insufficient|denied|"
    r"forbidden|unauthori[sz]ed|rejected|refused|missing|must|already|not|no|none)\b|n't\b|"
    r"\bnot found\b|\bno such\b|\bdoes not exist\b",
    re.IGNORECASE,
)
_SUCCESS_KEYS = frozenset({"success", "ok", "succeeded", "done"})
_ERROR_KEYS = frozenset({"error", "errors", "err", "failure"})

_FALSY_BY_TYPE: dict[str, str] = {
    "int": "0",
    "float": "0.0",
    "str": "an empty string",
    "bytes": "empty bytes",
    "list": "an empty list",
    "List": "an empty list",
    "dict": "an empty dict",
    "Dict": "an empty dict",
    "set": "an empty set",
    "Set": "an empty set",
    "frozenset": "an empty set",
    "FrozenSet": "an empty set",
    "tuple": "an empty tuple",
    "Tuple": "an empty tuple",
}

_VERB_PAIRS: tuple[tuple[str, str], ...] = (
    ("book", "cancel"),
    ("reserve", "release"),
    ("freeze", "unfreeze"),
    ("lock", "unlock"),
    ("open", "close"),
    ("add", "remove"),
    ("create", "delete"),
    ("grant", "revoke"),
    ("enable", "disable"),
    ("subscribe", "unsubscribe"),
    ("check_in", "check_out"),
    ("start", "stop"),
    ("attach", "detach"),
    ("follow", "unfollow"),
    ("block", "unblock"),
    ("archive", "unarchive"),
    ("deposit", "withdraw"),
)

_GUARD_WORD = re.compile(r"\b(?:raise|assert)\b")
# Bounds the window search over long comment blocks so a scan stays fast.
_MAX_GUARD_ATTEMPTS = 400
_SNIPPET_LIMIT = 70


# --------------------------------------------------------------------------- module model


@dataclass
class _Func:
    """One function or method, with the per-function facts the checks share."""

    qualname: str
    name: str
    scope: str
    node: FuncNode
    end_line: int
    own: list[ast.AST]
    fresh: frozenset[str]
    declared_global: frozenset[str]
    aliases: dict[str, str] = field(default_factory=dict)

    @property
    def line(self) -> int:
        return self.node.lineno


@dataclass
class _Module:
    file: str
    lines: list[str]
    functions: list[_Func]
    by_name: dict[str, list[_Func]]
    writer_names: frozenset[str]


def _walk_own(roots: Iterable[ast.AST]) -> Iterator[ast.AST]:
    """Pre-order walk that does not enter nested functions or classes (they are scanned alone)."""
    stack = [n for n in reversed(list(roots)) if not _is_scope(n)]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(c for c in reversed(list(ast.iter_child_nodes(node))) if not _is_scope(c))


def _is_scope(node: ast.AST) -> bool:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)


def _walk_body(fn: FuncNode) -> Iterator[ast.AST]:
    """Every node of the body, nested functions included (closures use the outer parameters)."""
    for stmt in fn.body:
        yield from ast.walk(stmt)


def _parse(source: str, file: str) -> ast.Module:
    try:
        return ast.parse(source, filename=file)
    except SyntaxError as exc:
        raise ScanError(f"{file}:{exc.lineno or '?'}: cannot parse: {exc.msg}") from exc
    except ValueError as exc:  # null bytes on Python 3.11
        line = source.count("\n", 0, max(source.find("\0"), 0)) + 1
        raise ScanError(f"{file}:{line}: cannot parse: {exc}") from exc


def _build_module(tree: ast.Module, source: str, file: str) -> _Module:
    lines = source.splitlines()
    functions: list[_Func] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                qualname = prefix + child.name
                functions.append(_make_func(child, qualname, prefix.rstrip("."), lines))
                visit(child, qualname + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    by_name: dict[str, list[_Func]] = {}
    for fn in functions:
        by_name.setdefault(fn.name, []).append(fn)
    # Helpers that write directly; a call to one counts as a write in its caller.
    writers = frozenset(
        fn.name for fn in functions if any(_is_write(n, fn, frozenset()) for n in fn.own)
    )
    return _Module(file, lines, functions, by_name, writers)


def _make_func(node: FuncNode, qualname: str, scope: str, lines: list[str]) -> _Func:
    own = list(_walk_own(node.body))
    params = {a.arg for a in _all_args(node.args)}
    declared = frozenset(
        name for n in own if isinstance(n, ast.Global | ast.Nonlocal) for name in n.names
    )
    fn = _Func(
        qualname=qualname,
        name=node.name,
        scope=scope,
        node=node,
        end_line=_extended_end(node, lines),
        own=own,
        fresh=_fresh_locals(own, params),
        declared_global=declared,
    )
    for n in own:
        # `accounts = bank.accounts` makes later `accounts[k] = v` a write of "accounts".
        if (
            isinstance(n, ast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name)
            and isinstance(n.value, ast.Attribute | ast.Subscript)
        ):
            aliased = _field_of(n.value, fn.aliases)
            if aliased is not None:
                fn.aliases[n.targets[0].id] = aliased
    return fn


def _extended_end(node: FuncNode, lines: list[str]) -> int:
    """Last line of the function, counting trailing comments indented deeper than the def."""
    end = node.end_lineno or node.lineno
    for index in range(end, len(lines)):  # index is the 0-based position of line index+1
        text = lines[index]  # no tab expansion: col_offset counts a tab as one
        stripped = text.lstrip()
        if not stripped:
            continue
        if stripped.startswith("#") and len(text) - len(stripped) > node.col_offset:
            end = index + 1
            continue
        break
    return end


def _all_args(args: ast.arguments) -> list[ast.arg]:
    return [*args.posonlyargs, *args.args, *args.kwonlyargs]


def _agent_params(fn: _Func, injected: frozenset[str]) -> list[ast.arg]:
    return [
        a for a in _all_args(fn.node.args) if a.arg not in injected and a.arg not in {"self", "cls"}
    ]


def _is_fresh(value: ast.expr) -> bool:
    if isinstance(
        value,
        ast.List
        | ast.Dict
        | ast.Set
        | ast.Tuple
        | ast.ListComp
        | ast.DictComp
        | ast.SetComp
        | ast.GeneratorExp
        | ast.Constant
        | ast.JoinedStr,
    ):
        return True
    return isinstance(value, ast.Call) and _call_name(value.func) in _FRESH_CALLS


def _fresh_locals(own: list[ast.AST], params: set[str]) -> frozenset[str]:
    """Locals every binding of which is a new container: mutating them touches no state."""
    fresh_bindings: set[int] = set()
    neutral: set[int] = set()
    for n in own:
        if isinstance(n, ast.Assign):
            for target in n.targets:
                if isinstance(target, ast.Name) and _is_fresh(n.value):
                    fresh_bindings.add(id(target))
        elif isinstance(n, ast.AnnAssign | ast.NamedExpr):
            if n.value is not None and isinstance(n.target, ast.Name) and _is_fresh(n.value):
                fresh_bindings.add(id(n.target))
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            neutral.add(id(n.target))  # `parts += [x]` keeps a fresh list fresh
    fresh: set[str] = set()
    stale: set[str] = set(params)
    for n in own:
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and id(n) not in neutral:
            (fresh if id(n) in fresh_bindings else stale).add(n.id)
    return frozenset(fresh - stale)


def _call_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _root_name(expr: ast.expr) -> str | None:
    """The variable at the bottom of `a.b[c].d` or `d.setdefault(k, []).append`."""
    while True:
        if isinstance(expr, ast.Attribute | ast.Subscript):
            expr = expr.value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            expr = expr.func.value
        else:
            break
    return expr.id if isinstance(expr, ast.Name) else None


def _const_str(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _field_of(expr: ast.expr, aliases: dict[str, str]) -> str | None:
    """The record field or collection a store/mutation lands in: `x.a[k]` -> "a"."""
    if isinstance(expr, ast.Attribute):
        return expr.attr
    if isinstance(expr, ast.Subscript):
        key = _const_str(expr.slice)
        return key if key is not None else _field_of(expr.value, aliases)
    if isinstance(expr, ast.Name):
        return aliases.get(expr.id)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        return _field_of(expr.func.value, aliases)
    return None


def _short(node: ast.AST, limit: int = _SNIPPET_LIMIT) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _flag(check: ScanCheck, file: str, fn: _Func, line: int, message: str) -> ScanFlag:
    return ScanFlag(
        check=check,
        file=file,
        function=fn.qualname,
        line=line,
        class_hint=_CLASS_HINTS[check],
        message=message,
    )


# --------------------------------------------------------------------------- writes


def _is_state_target(target: ast.expr, fn: _Func) -> bool:
    if isinstance(target, ast.Tuple | ast.List):
        return any(_is_state_target(e, fn) for e in target.elts)
    if isinstance(target, ast.Starred):
        return _is_state_target(target.value, fn)
    if isinstance(target, ast.Attribute | ast.Subscript):
        return _root_name(target) not in fn.fresh
    if isinstance(target, ast.Name):
        return target.id in fn.declared_global
    return False


def _is_write(node: ast.AST, fn: _Func, writer_names: frozenset[str]) -> bool:
    """Does this single node store into state (not into a container the function built)?"""
    if isinstance(node, ast.Assign | ast.Delete):
        return any(_is_state_target(t, fn) for t in node.targets)
    if isinstance(node, ast.AugAssign):
        return _is_state_target(node.target, fn)
    if isinstance(node, ast.AnnAssign):
        return node.value is not None and _is_state_target(node.target, fn)
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _MUTATORS:
            return _root_name(func.value) not in fn.fresh
        name = _call_name(func)
        return name is not None and name != fn.name and name in writer_names
    return False


def _contains_write(nodes: Iterable[ast.AST], fn: _Func, writer_names: frozenset[str]) -> bool:
    return any(_is_write(n, fn, writer_names) for n in _walk_own(nodes))


# --------------------------------------------------------------------------- check 1


def _is_literalish(node: ast.expr, params: set[str], top: bool) -> bool:
    """A value fixed at write time: constants, constant displays, param-only f-strings."""
    if isinstance(node, ast.Constant):
        if not top:
            return True
        if isinstance(node.value, str | bytes):
            return bool(node.value)
        return node.value is True
    if isinstance(node, ast.JoinedStr):
        return all(_is_literal_fstring_part(v, params) for v in node.values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return not top and isinstance(node.operand, ast.Constant)
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            return False  # `**spread` reads a mapping
        parts: list[ast.expr] = [k for k in node.keys if k is not None] + node.values
    elif isinstance(node, ast.List | ast.Tuple | ast.Set):
        parts = node.elts
    else:
        return False
    if not all(_is_literalish(p, params, False) for p in parts):
        return False
    # A success claim needs words or True: `(None, -1)` and `[]` are sentinels, not claims.
    return not top or any(_is_literalish(p, params, True) for p in _leaves(node))


def _leaves(node: ast.expr) -> Iterator[ast.expr]:
    """Scalar values of a display; dict keys are names, not claims."""
    if isinstance(node, ast.Dict):
        for value in node.values:
            yield from _leaves(value)
    elif isinstance(node, ast.List | ast.Tuple | ast.Set):
        for element in node.elts:
            yield from _leaves(element)
    else:
        yield node


def _is_literal_fstring_part(part: ast.expr, params: set[str]) -> bool:
    if isinstance(part, ast.Constant):
        return True
    if isinstance(part, ast.FormattedValue):
        spec_ok = part.format_spec is None or _is_literalish(part.format_spec, params, False)
        return isinstance(part.value, ast.Name) and part.value.id in params and spec_ok
    return False


def _reads_as_failure(node: ast.expr) -> bool:
    """Error and no-op replies legitimately come before any write; only successes are leads."""
    if isinstance(node, ast.Dict):
        for key, value in zip(node.keys, node.values, strict=True):
            name = _const_str(key) if key is not None else None
            if name is None:
                continue
            lowered = name.lower()
            if lowered in _SUCCESS_KEYS:
                if isinstance(value, ast.Constant) and value.value is False:
                    return True
                continue
            empty = isinstance(value, ast.Constant) and value.value in (None, "", False)
            if (lowered in _ERROR_KEYS and not empty) or _reads_as_failure(value):
                return True
        return False
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return any(_reads_as_failure(e) for e in node.elts)
    if isinstance(node, ast.JoinedStr):
        text = "".join(v.value for v in node.values if isinstance(v, ast.Constant))
        return bool(_FAILURE_TEXT.search(text))
    text = _const_str(node)
    return text is not None and bool(_FAILURE_TEXT.search(text))


def _sub_blocks(
    stmt: ast.stmt, fn: _Func, writers: frozenset[str]
) -> list[tuple[list[ast.stmt], bool]]:
    """Nested statement blocks, each with "a write in an earlier sibling block may have run"."""
    if isinstance(stmt, ast.Try | ast.TryStar):
        body_writes = _contains_write(stmt.body, fn, writers)
        after = [h.body for h in stmt.handlers] + [stmt.orelse, stmt.finalbody]
        return [(stmt.body, False)] + [(block, body_writes) for block in after]
    if isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
        return [(stmt.body, False), (stmt.orelse, _contains_write(stmt.body, fn, writers))]
    if isinstance(stmt, ast.If):
        return [(stmt.body, False), (stmt.orelse, False)]
    if isinstance(stmt, ast.With | ast.AsyncWith):
        return [(stmt.body, False)]
    if isinstance(stmt, ast.Match):
        return [(case.body, False) for case in stmt.cases]
    return []


def _header_nodes(stmt: ast.stmt) -> list[ast.AST]:
    """Expressions evaluated before a compound statement's blocks (tests, iterables, guards)."""
    nodes: list[ast.AST] = [
        c
        for c in ast.iter_child_nodes(stmt)
        if not isinstance(c, ast.stmt | ast.excepthandler | ast.match_case)
    ]
    if isinstance(stmt, ast.Match):
        nodes += [case.guard for case in stmt.cases if case.guard is not None]
    return nodes


def _check_literal_returns(fn: _Func, module: _Module) -> list[ScanFlag]:
    writers = module.writer_names
    if not any(_is_write(n, fn, writers) for n in fn.own):
        return []
    params = {a.arg for a in _all_args(fn.node.args)}
    flags: list[ScanFlag] = []

    def visit(block: list[ast.stmt], written: bool) -> None:
        for stmt in block:
            if isinstance(stmt, ast.Return):
                value = stmt.value
                if (
                    not written
                    and value is not None
                    and _is_literalish(value, params, True)
                    and not _reads_as_failure(value)
                ):
                    flags.append(
                        _flag(
                            ScanCheck.LITERAL_SUCCESS_RETURN,
                            module.file,
                            fn,
                            stmt.lineno,
                            f"returns a fixed success value {_short(value)} on a path with no "
                            "state write before it",
                        )
                    )
            elif not _is_scope(stmt):
                header_wrote = written or _contains_write(_header_nodes(stmt), fn, writers)
                for sub, earlier in _sub_blocks(stmt, fn, writers):
                    visit(sub, header_wrote or earlier)
            written = written or _contains_write([stmt], fn, writers)

    visit(fn.node.body, False)
    return flags


# --------------------------------------------------------------------------- check 2


@dataclass(frozen=True)
class _Comment:
    line: int
    indent: int  # column of the code the comment would hold: '#' column + spaces after it
    text: str  # the commented code, stripped


def _comment_runs(source: str, module: _Module) -> dict[str, list[list[_Comment]]]:
    """Full-line comments grouped into runs of consecutive lines, keyed by innermost function."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError) as exc:
        position = exc.args[1] if len(exc.args) > 1 else None
        line = position[0] if isinstance(position, tuple) and position else "?"
        raise ScanError(f"{module.file}:{line}: cannot tokenize: {exc.args[0]}") from exc
    runs: dict[str, list[list[_Comment]]] = {}
    previous: tuple[str, int] | None = None
    for tok in tokens:
        if tok.type != tokenize.COMMENT or tok.line[: tok.start[1]].strip():
            continue  # trailing comments annotate code; they rarely hold commented-out code
        line, col = tok.start
        owner = _owner(module.functions, line)
        if owner is None:
            previous = None
            continue
        after_hash = tok.string.lstrip("#").expandtabs()
        code = after_hash.lstrip()
        comment = _Comment(line, col + len(after_hash) - len(code), code.rstrip())
        if previous == (owner.qualname, line - 1):
            runs[owner.qualname][-1].append(comment)
        else:
            runs.setdefault(owner.qualname, []).append([comment])
        previous = (owner.qualname, line)
    return runs


def _owner(functions: list[_Func], line: int) -> _Func | None:
    inside = [f for f in functions if f.node.lineno < line <= f.end_line]
    return max(inside, key=lambda f: f.node.lineno) if inside else None


def _candidate_texts(window: list[_Comment]) -> list[str]:
    base = min(c.indent for c in window)
    as_is = "\n".join(" " * (c.indent - base) + c.text for c in window)
    # `# if x:` / `# raise E` at one indentation: indent the line after each colon.
    indents: list[int] = []
    for index, comment in enumerate(window):
        indent = comment.indent - base
        if index and window[index - 1].text.endswith(":") and indent <= indents[-1]:
            indent = indents[-1] + 4
        indents.append(indent)
    reindented = "\n".join(" " * i + c.text for i, c in zip(indents, window, strict=True))
    return [as_is] if reindented == as_is else [as_is, reindented]


def _guard_statement(code: str) -> ast.stmt | None:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    for stmt in tree.body:
        if any(isinstance(n, ast.Raise | ast.Assert) for n in ast.walk(stmt)):
            return stmt
    return None


def _find_guard(run: list[_Comment]) -> tuple[int, ast.stmt] | None:
    """Longest window of the run that parses to code with a raise/assert, earliest first."""
    keyword_rows = [i for i, c in enumerate(run) if _GUARD_WORD.search(c.text)]
    if not keyword_rows:
        return None
    attempts = 0
    for length in range(len(run), 0, -1):
        for start in range(len(run) - length + 1):
            stop = start + length
            if not any(start <= row < stop for row in keyword_rows):
                continue
            attempts += 1
            if attempts > _MAX_GUARD_ATTEMPTS:
                return None
            window = run[start:stop]
            for code in _candidate_texts(window):
                stmt = _guard_statement(code)
                if stmt is not None:
                    return window[stmt.lineno - 1].line, stmt
    return None


def _check_commented_guards(fn: _Func, runs: list[list[_Comment]], file: str) -> list[ScanFlag]:
    flags: list[ScanFlag] = []
    for run in runs:
        found = _find_guard(run)
        if found is None:
            continue
        line, stmt = found
        flags.append(
            _flag(
                ScanCheck.COMMENTED_OUT_GUARD,
                file,
                fn,
                line,
                f"commented-out guard `{_short(stmt)}` is not enforced; restore it or delete it",
            )
        )
    return flags


# --------------------------------------------------------------------------- check 3


def _is_log_call(call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id == "print"
    if isinstance(func, ast.Attribute):
        if func.attr in _LOG_METHODS or func.attr == "log":
            return True
        root = _root_name(func)
        return root is not None and root in _LOG_ROOTS
    return False


def _parents(fn: FuncNode) -> dict[int, ast.AST]:
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(fn):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    return parents


class _EchoAnalysis:
    """Decides whether a read of a name only ever ends up in messages and logs."""

    _TRANSPARENT = (
        ast.BinOp,
        ast.IfExp,
        ast.Dict,
        ast.List,
        ast.Tuple,
        ast.Set,
        ast.FormattedValue,
        ast.JoinedStr,
        ast.Starred,
        ast.BoolOp,
        ast.keyword,
    )

    def __init__(self, fn: _Func) -> None:
        self.fn = fn
        self.parents = _parents(fn.node)
        self.loads: dict[str, list[ast.Name]] = {}
        for node in _walk_body(fn.node):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                self.loads.setdefault(node.id, []).append(node)

    def occurrence_is_echo(self, name: ast.Name) -> bool:
        """Inside log-call arguments, or inside an f-string whose text only reaches echoes."""
        node: ast.AST = name
        looked_up = False  # the value was used to read something, e.g. f"{db.users[user_id]}"
        while (parent := self.parents.get(id(node))) is not None and not isinstance(
            parent, ast.stmt
        ):
            if isinstance(parent, ast.keyword) and parent.arg in _LOG_CONTROL_KEYWORDS:
                return False  # `print(..., file=out)` routes the output: a real use
            if isinstance(parent, ast.Call) and node is not parent.func:
                if _is_log_call(parent):
                    return True
                looked_up = looked_up or _call_name(parent.func) not in _PURE_FORMATTERS
            elif isinstance(parent, ast.Subscript) and node is parent.slice:
                looked_up = True
            elif isinstance(parent, ast.Attribute) and parent.attr not in _STR_METHODS:
                looked_up = True  # an object argument whose fields are shown
            elif isinstance(parent, ast.JoinedStr):
                return not looked_up and self.flows_to_echo(parent, depth=0)
            node = parent
        return False

    def flows_to_echo(self, node: ast.AST, depth: int) -> bool:
        """Does this value end in a return, a raise, a log line or an expression statement?"""
        while True:
            parent = self.parents.get(id(node))
            if parent is None:
                return False
            if isinstance(parent, ast.Return | ast.Raise | ast.Expr | ast.Assert):
                return True
            if isinstance(parent, ast.Call):
                if node is parent.func:
                    return False
                # A log line, or the message of an exception being raised.
                return _is_log_call(parent) or isinstance(self.parents.get(id(parent)), ast.Raise)
            if (
                isinstance(parent, ast.Attribute)
                and parent.attr in _STR_METHODS
                and isinstance(grand := self.parents.get(id(parent)), ast.Call)
                and grand.func is parent
            ):
                node = grand
                continue
            if isinstance(parent, self._TRANSPARENT):
                if isinstance(parent, ast.IfExp) and node is parent.test:
                    return False
                node = parent
                continue
            targets = _assigned_names(parent)
            if targets is not None and depth < 3:
                # `msg = f"..."`: an echo if every later read of `msg` is one.
                uses = [u for t in targets for u in self.loads.get(t, [])]
                return all(self.flows_to_echo(u, depth + 1) for u in uses)
            return False


def _assigned_names(stmt: ast.AST) -> list[str] | None:
    """Local names a simple assignment binds, or None if it stores anywhere else."""
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, ast.AnnAssign | ast.AugAssign):
        targets = [stmt.target]
    else:
        return None
    if all(isinstance(t, ast.Name) for t in targets):
        return [t.id for t in targets if isinstance(t, ast.Name)]
    return None


def _check_logged_only(fn: _Func, injected: frozenset[str], file: str) -> list[ScanFlag]:
    params = _agent_params(fn, injected)
    if not params:
        return []
    analysis = _EchoAnalysis(fn)
    flags: list[ScanFlag] = []
    for param in params:
        loads = analysis.loads.get(param.arg, [])
        if not loads:
            continue  # unused parameters are a different lead
        if all(analysis.occurrence_is_echo(n) for n in loads):
            first = min(loads, key=lambda n: (n.lineno, n.col_offset))
            flags.append(
                _flag(
                    ScanCheck.PARAMETER_ONLY_LOGGED,
                    file,
                    fn,
                    first.lineno,
                    f"parameter `{param.arg}` is only echoed in messages/logs; it never "
                    "affects state or a decision",
                )
            )
    return flags


# --------------------------------------------------------------------------- check 4


def _falsy_example(annotation: ast.expr | None) -> str | None:
    """What falsy value the annotated type admits (None for bool, classes, unannotated)."""
    if annotation is None:
        return None
    text = _const_str(annotation)
    if text is not None:  # a string annotation: parse it, still without evaluating anything
        try:
            annotation = ast.parse(text, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(annotation, ast.Name | ast.Attribute):
        return _FALSY_BY_TYPE.get(_call_name(annotation) or "")
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _falsy_example(annotation.left) or _falsy_example(annotation.right)
    if isinstance(annotation, ast.Subscript):
        base = _call_name(annotation.value)
        inner = annotation.slice
        if base in {"Optional", "Annotated"}:
            first = inner.elts[0] if isinstance(inner, ast.Tuple) else inner
            return _falsy_example(first)
        if base == "Union":
            elts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            return next((e for e in map(_falsy_example, elts) if e), None)
        return _FALSY_BY_TYPE.get(base or "")
    return None


def _tested_names(test: ast.expr) -> Iterator[ast.Name]:
    """Bare names whose truthiness decides `test` (directly, under `not`, or in and/or)."""
    if isinstance(test, ast.Name):
        yield test
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from _tested_names(test.operand)
    elif isinstance(test, ast.BoolOp):
        for value in test.values:
            yield from _tested_names(value)


def _is_empty_literal(node: ast.expr) -> bool:
    """`0`, `""`, `[]`, `{}`, `()`, `set()` and the like (not None, which differs from 0)."""
    if isinstance(node, ast.Constant):
        return node.value is not None and not node.value
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return not node.elts
    if isinstance(node, ast.Dict):
        return not node.keys
    return (
        isinstance(node, ast.Call)
        and not node.args
        and not node.keywords
        and _call_name(node.func) in {"list", "dict", "set", "tuple", "str", "int", "float"}
    )


def _statement_keyword(stmt: ast.stmt, lines: list[str]) -> str:
    if isinstance(stmt, ast.If):
        row = lines[stmt.lineno - 1] if stmt.lineno <= len(lines) else ""
        return "elif" if row[stmt.col_offset :].startswith("elif") else "if"
    return {ast.While: "while", ast.Assert: "assert"}.get(type(stmt), "if")


def _truthiness_hits(
    fn: _Func, names: Collection[str], lines: list[str]
) -> list[tuple[ast.Name, str, str | None]]:
    """(name node, snippet shown, suggested replacement or None) per truthiness test of one
    of `names` in `fn`."""
    hits: list[tuple[ast.Name, str, str | None]] = []
    seen: set[int] = set()

    def add_test(test: ast.expr, render: str, keyword: str | None, colon: str) -> None:
        for name in _tested_names(test):
            if name.id not in names or id(name) in seen:
                continue
            seen.add(id(name))
            suggestion = None
            if keyword is not None and test is name:
                suggestion = f"{keyword} {name.id} is not None{colon}"
            elif keyword is not None and isinstance(test, ast.UnaryOp) and test.operand is name:
                suggestion = f"{keyword} {name.id} is None{colon}"
            hits.append((name, render, suggestion))

    for node in _walk_body(fn.node):
        if isinstance(node, ast.If | ast.While | ast.Assert):
            keyword = _statement_keyword(node, lines)
            colon = "" if isinstance(node, ast.Assert) else ":"
            add_test(node.test, f"{keyword} {_short(node.test)}{colon}", keyword, colon)
        elif isinstance(node, ast.IfExp):
            add_test(node.test, f"... if {_short(node.test)} else ...", None, "")
        elif isinstance(node, ast.comprehension):
            for cond in node.ifs:
                add_test(cond, f"... if {_short(cond)}", None, "")
        elif isinstance(node, ast.match_case) and node.guard is not None:
            add_test(node.guard, f"case ... if {_short(node.guard)}:", None, "")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "bool"
            and len(node.args) == 1
        ):
            add_test(node.args[0], _short(node), None, "")
    # `p or default` / `p and x` as values: every operand but the last is tested.
    for node in _walk_body(fn.node):
        if isinstance(node, ast.BoolOp):
            for value, following in itertools.pairwise(node.values):
                # `ids or []` swaps an empty value for an equal one: harmless.
                if not (isinstance(node.op, ast.Or) and _is_empty_literal(following)):
                    add_test(value, _short(node), None, "")
    return hits


def _check_falsy_tests(
    fn: _Func, injected: frozenset[str], file: str, lines: list[str]
) -> list[ScanFlag]:
    falsy = {
        a.arg: example
        for a in _agent_params(fn, injected)
        if (example := _falsy_example(a.annotation)) is not None
    }
    if not falsy:
        return []
    flags: list[ScanFlag] = []
    for name, render, suggestion in _truthiness_hits(fn, falsy, lines):
        advice = f"use `{suggestion}`" if suggestion else f"test `{name.id} is None` explicitly"
        flags.append(
            _flag(
                ScanCheck.FALSY_TRUTHINESS_TEST,
                file,
                fn,
                name.lineno,
                f"`{render}` treats {falsy[name.id]} like a missing {name.id}; {advice}",
            )
        )
    return flags


# --------------------------------------------------------------------------- check 6


def _annotation_node(annotation: ast.expr | None) -> ast.expr | None:
    text = _const_str(annotation) if annotation is not None else None
    if text is None:
        return annotation
    try:  # a string annotation: parse it, still without evaluating anything
        return ast.parse(text, mode="eval").body
    except SyntaxError:
        return None


def _union_members(annotation: ast.expr | None) -> list[ast.expr] | None:
    """The members of `X | Y`, `Optional[X]` or `Union[X, Y]`; None for anything else."""
    node = _annotation_node(annotation)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left = _union_members(node.left) or [node.left]
        right = _union_members(node.right) or [node.right]
        return [*left, *right]
    if isinstance(node, ast.Subscript):
        base = _call_name(node.value)
        inner = node.slice
        elts = list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
        if base == "Optional":
            return [*elts, ast.Constant(None)]
        if base == "Union":
            return elts
        if base == "Annotated":
            return _union_members(elts[0])
    return None


def _is_optional_bool(annotation: ast.expr | None) -> bool:
    """`bool | None` in any spelling: exactly bool and None."""
    members = _union_members(annotation)
    if members is None:
        return False
    kinds = set()
    for member in members:
        none = isinstance(member, ast.Constant) and member.value is None
        if none or _call_name(member) == "NoneType":
            kinds.add("None")
        else:
            kinds.add(_call_name(member) or "?")
    return kinds == {"bool", "None"}


def _check_optional_bool_tests(
    fn: _Func, injected: frozenset[str], file: str, lines: list[str]
) -> list[ScanFlag]:
    names = {a.arg for a in _agent_params(fn, injected) if _is_optional_bool(a.annotation)}
    if not names:
        return []
    flags: list[ScanFlag] = []
    for name, render, suggestion in _truthiness_hits(fn, names, lines):
        advice = f"use `{suggestion}`" if suggestion else f"test `{name.id} is None` explicitly"
        flags.append(
            _flag(
                ScanCheck.OPTIONAL_BOOL_TRUTHINESS,
                file,
                fn,
                name.lineno,
                f"`{render}` treats an explicit False like a missing {name.id} (bool | None: "
                f"None is 'leave as it is', False a value); {advice}",
            )
        )
    return flags


# --------------------------------------------------------------------------- check 7


def _is_stub(fn: FuncNode) -> bool:
    body = list(fn.body)
    if body and isinstance(body[0], ast.Expr) and _const_str(body[0].value) is not None:
        body = body[1:]  # the docstring
    return all(
        isinstance(stmt, ast.Pass | ast.Raise)
        or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))
        for stmt in body
    )


def _check_unused_parameters(fn: _Func, injected: frozenset[str], file: str) -> list[ScanFlag]:
    node = fn.node
    decorators = {_call_name(d) for d in node.decorator_list}
    if _is_stub(node) or decorators & {"abstractmethod", "overload"}:
        return []
    loads: set[str] = set()
    for inner in _walk_body(node):
        if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Load):
            loads.add(inner.id)
        # locals()/vars() read every parameter by name
        if isinstance(inner, ast.Call) and _call_name(inner.func) in {"locals", "vars"}:
            return []
    return [
        _flag(
            ScanCheck.UNUSED_PARAMETER,
            file,
            fn,
            param.lineno,
            f"parameter `{param.arg}` is never read: whatever the agent passes is ignored",
        )
        for param in _agent_params(fn, injected)
        if param.arg not in loads and not param.arg.startswith("_")
    ]


# --------------------------------------------------------------------------- check 5


def _split_verb(name: str) -> tuple[str, str] | None:
    bare = name.lstrip("_")
    for pair in _VERB_PAIRS:
        for verb in pair:
            if bare == verb:
                return verb, ""
            if bare.startswith(verb + "_"):
                return verb, bare[len(verb) + 1 :]
    return None


def _pairs(functions: list[_Func]) -> list[tuple[_Func, _Func]]:
    """Complementary-verb pairs within each scope (module level, or one class)."""
    by_scope_verb: dict[tuple[str, str], list[tuple[_Func, str]]] = {}
    for fn in functions:
        split = _split_verb(fn.name)
        if split is not None:
            by_scope_verb.setdefault((fn.scope, split[0]), []).append((fn, split[1]))
    pairs: list[tuple[_Func, _Func]] = []
    scopes = sorted({scope for scope, _ in by_scope_verb})
    for scope in scopes:
        for verb_a, verb_b in _VERB_PAIRS:
            side_a = by_scope_verb.get((scope, verb_a), [])
            side_b = by_scope_verb.get((scope, verb_b), [])
            pairs += _match_sides(side_a, side_b)
    return pairs


def _match_sides(
    side_a: list[tuple[_Func, str]], side_b: list[tuple[_Func, str]]
) -> list[tuple[_Func, _Func]]:
    if not side_a or not side_b:
        return []
    if len(side_a) == 1 and len(side_b) == 1:
        return [(side_a[0][0], side_b[0][0])]
    pairs = [(fa, fb) for fa, ra in side_a for fb, rb in side_b if ra == rb]
    paired = {id(f) for pair in pairs for f in pair}
    rest_a = [(f, r) for f, r in side_a if id(f) not in paired]
    rest_b = [(f, r) for f, r in side_b if id(f) not in paired]
    # A bare verb (`reserve`) pairs with any leftover function of the other verb.
    bare = [(fa, fb) for fa, ra in rest_a for fb, rb in rest_b if not ra or not rb]
    pairs += bare
    paired |= {id(f) for pair in bare for f in pair}
    rest_a = [(f, r) for f, r in rest_a if id(f) not in paired]
    rest_b = [(f, r) for f, r in rest_b if id(f) not in paired]
    if len(rest_a) == 1 and len(rest_b) == 1:
        pairs.append((rest_a[0][0], rest_b[0][0]))
    return pairs


def _direct_writes(fn: _Func) -> set[str]:
    fields: set[str] = set()

    def add_target(target: ast.expr) -> None:
        if isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                add_target(element)
        elif isinstance(target, ast.Starred):
            add_target(target.value)
        elif isinstance(target, ast.Attribute | ast.Subscript) and _is_state_target(target, fn):
            name = _field_of(target, fn.aliases)
            if name is not None:
                fields.add(name)

    for node in fn.own:
        if isinstance(node, ast.Assign | ast.Delete):
            for target in node.targets:
                add_target(target)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            add_target(node.target)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MUTATORS
            and _root_name(node.func.value) not in fn.fresh
        ):
            name = _field_of(node.func.value, fn.aliases)
            if name is not None:
                fields.add(name)
    return fields


def _direct_touches(fn: _Func) -> set[str]:
    """Every field name the body mentions: attributes, string keys, getattr/get names."""
    names: set[str] = set(fn.aliases.values())
    for node in _walk_body(fn.node):
        if isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.Subscript):
            key = _const_str(node.slice)
            if key is not None:
                names.add(key)
        elif isinstance(node, ast.Call) and node.args:
            callee = _call_name(node.func)
            if callee in {"get", "pop", "setdefault"} and isinstance(node.func, ast.Attribute):
                key = _const_str(node.args[0])
            elif callee in {"getattr", "setattr", "hasattr", "delattr"} and len(node.args) > 1:
                key = _const_str(node.args[1])
            else:
                key = None
            if key is not None:
                names.add(key)
    return names


def _callees(fn: _Func, module: _Module) -> list[_Func]:
    """Same-module functions this one calls by name (`_debit(...)`, `self._debit(...)`)."""
    found: dict[int, _Func] = {}
    for node in fn.own:
        if isinstance(node, ast.Call):
            name = _call_name(node.func)
            for callee in module.by_name.get(name or "", []):
                if callee is not fn:
                    found[id(callee)] = callee
    return list(found.values())


def _check_verb_pairs(selected: list[_Func], module: _Module) -> list[ScanFlag]:
    writes: dict[int, set[str]] = {}
    touches: dict[int, set[str]] = {}

    def facts(fn: _Func) -> tuple[set[str], set[str]]:
        if id(fn) not in writes:
            w, t = _direct_writes(fn), _direct_touches(fn) | _direct_writes(fn)
            for callee in _callees(fn, module):
                callee_writes = _direct_writes(callee)
                w |= callee_writes
                t |= _direct_touches(callee) | callee_writes
            writes[id(fn)], touches[id(fn)] = w, t
        return writes[id(fn)], touches[id(fn)]

    flags: list[ScanFlag] = []
    for fa, fb in _pairs(selected):
        writes_a, touches_a = facts(fa)
        writes_b, touches_b = facts(fb)
        for writer, writer_fields, other, other_touches in (
            (fa, writes_a, fb, touches_b),
            (fb, writes_b, fa, touches_a),
        ):
            missing = sorted(writer_fields - other_touches)
            if missing:
                listed = ", ".join(f"`{m}`" for m in missing)
                verb = "writes" if len(missing) == 1 else "write"
                flags.append(
                    _flag(
                        ScanCheck.VERB_PAIR_ASYMMETRY,
                        module.file,
                        other,
                        other.line,
                        f"{other.name} never touches {listed}, which {writer.name} {verb}",
                    )
                )
    return flags


# --------------------------------------------------------------------------- entry points


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
