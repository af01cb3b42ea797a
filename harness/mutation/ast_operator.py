"""The operator base of every stdlib-`ast` operator (closed-world and control operators),
and the span-preserving renderer they share.

An `AstOperator` lists `candidates` (the places it can act on, in source order, at any
nesting depth) and `transform`s one of them in a fresh parse of the function. `render`
writes the change back into the original text, re-rendering (`ast.unparse`) only the
statements that changed, so the signature, name, decorators, docstring and comments of the
rest stay byte-identical and a mutant's diff shows only its change.
"""

from __future__ import annotations

import ast
import difflib
from typing import Any, ClassVar

from harness.defects import DefectClass
from harness.mutation.model import Arm, OperatorExample, SiteContext
from harness.mutation.sites import (
    FunctionNode,
    parse_function,
)

# --- rendering a changed AST back into the original text ------------------------------------


class _Fallback(Exception):
    """A change the span-preserving renderer cannot place: re-render the enclosing node."""


_HEADER_FIELDS: dict[type, tuple[str, ...]] = {
    ast.If: ("test",),
    ast.While: ("test",),
    ast.For: ("target", "iter"),
    ast.AsyncFor: ("target", "iter"),
}
_BLOCKS = ("body", "orelse", "finalbody")


class _Text:
    def __init__(self, source: str):
        self.source = source
        self.lines = source.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, lineno: int, col: int) -> int:
        """Character offset of (1-based line, UTF-8 byte column)."""
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8"))

    def line_start(self, lineno: int) -> int:
        return self.starts[lineno - 1]

    def line_end(self, lineno: int) -> int:
        return self.starts[lineno]

    def span(self, node: ast.AST) -> tuple[int, int]:
        """Character offsets of a node (a def's starts at its first decorator)."""
        return (
            self.offset(self._first_line(node), node.col_offset),
            self.offset(node.end_lineno, node.end_col_offset),
        )

    def indent(self, node: ast.stmt) -> str:
        """The whitespace before the statement on its (first) line."""
        start, _ = self.span(node)
        before = self.source[self.line_start(self._first_line(node)) : start]
        if before.strip():
            raise _Fallback  # shares its line with other code
        return before

    @staticmethod
    def _first_line(node: ast.AST) -> int:
        decorators = getattr(node, "decorator_list", [])
        return min([d.lineno for d in decorators] + [node.lineno])

    def owns_lines(self, node: ast.stmt) -> bool:
        start, end = self.span(node)
        before = self.source[self.line_start(self._first_line(node)) : start]
        after = self.source[end : self.line_end(node.end_lineno)]
        return not before.strip() and (not after.strip() or after.strip().startswith("#"))

    def is_elif(self, node: ast.stmt) -> bool:
        start, _ = self.span(node)
        return isinstance(node, ast.If) and self.source.startswith("elif", start)


def _unparse(node: ast.AST, indent: str) -> str:
    """`node` as text whose lines after the first are indented by `indent`."""
    lines = ast.unparse(node).splitlines()
    return "\n".join([lines[0], *(indent + line for line in lines[1:])])


def _block_text(stmts: list[ast.stmt], indent: str) -> str:
    return "".join(indent + line + "\n" for s in stmts for line in ast.unparse(s).splitlines())


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, ast.AST) and isinstance(b, ast.AST):
        return ast.dump(a) == ast.dump(b)
    return a == b


Edit = tuple[int, int, str]


def _diff_block(text: _Text, old: list[ast.stmt], new: list[ast.stmt], edits: list[Edit]) -> None:
    old_keys, new_keys = [ast.dump(s) for s in old], [ast.dump(s) for s in new]
    if old_keys == new_keys:
        return
    matcher = difflib.SequenceMatcher(None, old_keys, new_keys, autojunk=False)
    indent = text.indent(old[0])
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag == "replace" and i2 - i1 == j2 - j1:
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                if old_keys[i] != new_keys[j]:
                    _diff_statement(text, old[i], new[j], edits)
            continue
        if any(not text.owns_lines(s) or text.is_elif(s) for s in old[max(i1 - 1, 0) : i2 + 1]):
            raise _Fallback
        if tag == "insert":
            at = text.line_end(old[i1 - 1].end_lineno) if i1 else text.line_start(old[0].lineno)
            edits.append((at, at, _block_text(new[j1:j2], indent)))
        else:  # delete, or a replace of unequal length
            start = text.line_start(text._first_line(old[i1]))
            end = text.line_end(old[i2 - 1].end_lineno)
            stmts = new[j1:j2] if j2 > j1 or len(new) else [ast.Pass()]
            edits.append((start, end, _block_text(stmts, indent)))


def _diff_statement(text: _Text, old: ast.stmt, new: ast.stmt, edits: list[Edit]) -> None:
    """Place the change between two different statements."""
    if text.is_elif(old) and type(new) is not ast.If:
        raise _Fallback  # an elif turned into something else: re-render the whole chain
    local: list[Edit] = []
    try:
        _diff_compound(text, old, new, local)
    except _Fallback:
        if text.is_elif(old):
            raise
        start, end = text.span(old)
        local = [(start, end, _unparse(new, text.indent(old)))]
    edits.extend(local)


def _diff_compound(text: _Text, old: ast.stmt, new: ast.stmt, edits: list[Edit]) -> None:
    """Place the change of a statement of the same type: header expressions by span, then
    its blocks; anything else falls back to re-rendering the statement."""
    if type(old) is not type(new) or not hasattr(old, "body"):
        raise _Fallback
    header = _HEADER_FIELDS.get(type(old))
    fields = {name for name, _ in ast.iter_fields(old)} - {*_BLOCKS, "handlers"}
    if header is None:
        if not all(_same(getattr(old, f), getattr(new, f)) for f in fields):
            raise _Fallback
    else:
        for name in fields - set(header):
            if not _same(getattr(old, name), getattr(new, name)):
                raise _Fallback
        for name in header:
            before, after = getattr(old, name), getattr(new, name)
            if not _same(before, after):
                start, end = text.span(before)
                replacement = ast.unparse(after)
                negated = isinstance(after, ast.UnaryOp) and isinstance(after.op, ast.Not)
                if negated and _same(after.operand, before):
                    # keep the original text of a negated condition: `not (COND)`
                    replacement = f"not ({text.source[start:end]})"
                edits.append((start, end, replacement))
    for block in _BLOCKS:
        before, after = getattr(old, block, None) or [], getattr(new, block, None) or []
        if bool(before) != bool(after):
            raise _Fallback
        if before:
            _diff_block(text, before, after, edits)
    old_handlers, new_handlers = getattr(old, "handlers", []), getattr(new, "handlers", [])
    if len(old_handlers) != len(new_handlers):
        raise _Fallback
    for o, n in zip(old_handlers, new_handlers, strict=True):
        if not (_same(o.type, n.type) and o.name == n.name):
            raise _Fallback
        _diff_block(text, o.body, n.body, edits)


def render(source: str, new_fn: FunctionNode) -> str:
    """The text of `source` (one dedented def) with the changes `new_fn` makes to it."""
    old_fn = parse_function(source)
    text = _Text(source)
    edits: list[Edit] = []
    try:
        _diff_compound(text, old_fn, new_fn, edits)
        edits.sort()
        out = source
        previous_start = len(source) + 1
        for start, end, replacement in reversed(edits):
            if end > previous_start:
                raise _Fallback  # overlapping edits
            out = out[:start] + replacement + out[end:]
            previous_start = start
        if ast.dump(parse_function(out)) == ast.dump(new_fn):
            return out
    except (_Fallback, SyntaxError, ValueError):
        pass
    return ast.unparse(new_fn) + "\n"  # always right, loses comments and layout


# --- the operator base ---------------------------------------------------------------------------


def statement_slots(fn: FunctionNode) -> dict[int, tuple[list[ast.stmt], int]]:
    """id(statement) -> (the block list holding it, its index), for the function's scope."""
    slots: dict[int, tuple[list[ast.stmt], int]] = {}

    def visit(block: list[ast.stmt]) -> None:
        for index, stmt in enumerate(block):
            slots[id(stmt)] = (block, index)
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            for name in _BLOCKS:
                visit(getattr(stmt, name, None) or [])
            for handler in getattr(stmt, "handlers", None) or []:
                visit(handler.body)
            for case in getattr(stmt, "cases", None) or []:
                visit(case.body)

    visit(fn.body)
    return slots


def replace_statement(fn: FunctionNode, old: ast.stmt, new: list[ast.stmt]) -> None:
    """Put `new` (one or more statements; `pass` when empty) where `old` is."""
    block, index = statement_slots(fn)[id(old)]
    block[index : index + 1] = new or [ast.Pass()]


def body_start(fn: FunctionNode) -> int:
    """Index of the first statement after the docstring."""
    first = fn.body[0]
    is_doc = (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )
    return 1 if is_doc and len(fn.body) > 1 else 0


class AstOperator:
    """An operator as an AST transform: `candidates` in source order, one per occurrence
    (or several per candidate, see `per_candidate`), and `transform` of one of them."""

    name: ClassVar[str]
    arm: ClassVar[Arm]
    defect_class: ClassVar[DefectClass | None]
    examples: ClassVar[tuple[OperatorExample, ...]]
    per_candidate: ClassVar[int] = 1

    def candidates(self, fn: FunctionNode, context: SiteContext) -> list[Any]:
        raise NotImplementedError

    def transform(self, fn: FunctionNode, candidate: Any, variant: int, context: SiteContext):
        raise NotImplementedError

    def occurrences(self, source: str, context: SiteContext) -> int:
        return len(self.candidates(parse_function(source), context)) * self.per_candidate

    def mutate(self, source: str, context: SiteContext, occurrence: int) -> str:
        fn = parse_function(source)
        found = self.candidates(fn, context)
        if not 0 <= occurrence < len(found) * self.per_candidate:
            raise IndexError(
                f"{self.name}: occurrence {occurrence} out of range; this site offers "
                f"{len(found) * self.per_candidate}"
            )
        candidate, variant = divmod(occurrence, self.per_candidate)
        self.transform(fn, found[candidate], variant, context)
        ast.fix_missing_locations(fn)
        return render(source, fn)

    def __repr__(self) -> str:
        return f"<operator {self.name}>"
