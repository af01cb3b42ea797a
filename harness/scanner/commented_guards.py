"""Check `commented_out_guard` (hint: unenforced_precondition): a run of comments that parses
as a `raise` or an `assert`."""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass

from harness.scanner.flags import _GUARD_WORD, _MAX_GUARD_ATTEMPTS, ScanCheck, ScanError, ScanFlag
from harness.scanner.model import _flag, _Func, _Module, _short


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
