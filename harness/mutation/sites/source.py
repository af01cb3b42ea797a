"""Site vocabulary and source text: the node kinds, the mutating methods, a site's dedented
source and its parse."""

from __future__ import annotations

import ast
from pathlib import Path

from harness.mutation.model import FunctionSite

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
