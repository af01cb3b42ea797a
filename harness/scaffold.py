"""Scaffolds: `harness new-adapter NAME` (a benchmark package wired to the Adapter protocol)
and `harness new-contract TOOL --target T` (a contract drafted from the tool's signature and
docstring). Drafted clauses are placeholders: predicate `True`, id ending `_draft`, never
counted until a person writes the predicate and drops the suffix (harness.contracts.model).
"""

from __future__ import annotations

import ast
import inspect
import keyword
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.contracts.model import DRAFT_PREDICATE, DRAFT_SUFFIX
from harness.contracts.validator import _annotation_type, parameter_annotations
from harness.errors import Problem, UserError
from harness.targets.adapter import Adapter

# --- new-contract ------------------------------------------------------------------------------

# A docstring line that reads as a condition on the call rather than as an effect.
_PRECONDITION_WORDS = re.compile(r"\b(raises?|must|only if|unless|error|fails?)\b", re.I)
_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Returns|Return|Raises|Yields|Examples|Example):\s*$"
)
_FIELD = re.compile(r"^:(param|type|raises|returns|rtype)\b")
_SECTIONS = {
    **dict.fromkeys(["Args", "Arguments", "Parameters", "param", "type"], "args"),
    **dict.fromkeys(["Returns", "Return", "Yields", "returns", "rtype"], "returns"),
    **dict.fromkeys(["Raises", "raises"], "raises"),
    **dict.fromkeys(["Examples", "Example"], "examples"),
}


@dataclass(frozen=True)
class DocLine:
    """One docstring sentence line, verbatim, where it stands in the file."""

    text: str
    line: int
    section: str  # "" (the description), "args", "returns", "raises", "examples"


# words a clause id can do without
_FILLER = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "be",
        "by",
        "for",
        "from",
        "if",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "raise",
        "raises",
        "return",
        "returns",
        "the",
        "to",
        "with",
        "keyerror",
        "valueerror",
    }
)


def _slug(text: str, taken: set[str]) -> str:
    words = [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _FILLER]
    words = words[:4] or ["clause"]
    base = "_".join(words)
    slug, n = base, 2
    while slug in taken:
        slug, n = f"{base}_{n}", n + 1
    taken.add(slug)
    return slug


def docstring_lines(function: Any) -> tuple[Path, list[DocLine], int, int]:
    """(file, the docstring's non-empty lines with their file line numbers, first line of
    the definition with decorators, last line)."""
    file = Path(inspect.getsourcefile(function) or "")
    lines = file.read_text(encoding="utf-8").splitlines()
    tree = ast.parse("\n".join(lines))
    name = function.__name__
    first = function.__code__.co_firstlineno
    nodes = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        and n.name == name
        and first in (n.lineno, *(d.lineno for d in n.decorator_list))
    ]
    if not nodes:
        raise UserError(Problem(str(file), name, "no definition found", "check the tool name"))
    node = nodes[0]
    start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    end = node.end_lineno or node.lineno
    found: list[DocLine] = []
    doc = ast.get_docstring(node, clean=True)
    if doc:
        body = node.body[0]
        cursor = body.lineno - 1
        section = ""
        for text in (t.strip() for t in doc.splitlines()):
            if not text:
                continue
            heading = _SECTION.match(text)
            for index in range(cursor, (body.end_lineno or body.lineno)):
                if text in lines[index]:
                    break
            else:
                continue  # e.g. an escaped line the source does not hold verbatim
            cursor = index + 1
            if heading:
                section = _SECTIONS[heading.group(1)]
                continue
            field = _FIELD.match(text)  # reST fields: `:param x: ...`, `:raises E: ...`
            found.append(DocLine(text, index + 1, _SECTIONS[field.group(1)] if field else section))
    return file, found, start, end


def draft_contract(adapter: Adapter, tool: str) -> dict[str, Any]:
    """The contract of `tool` as far as its signature and docstring say, every clause a
    draft: `pre.*_draft` from lines that read as conditions (raises, must, unless...),
    `eff.*_draft` from the other description lines and the Returns section."""
    if tool not in adapter.tool_names():
        raise UserError(
            Problem(
                adapter.name,
                f"tool {tool}",
                "is not a tool of this target",
                f"use one of: {', '.join(sorted(adapter.tool_names()))}",
            )
        )
    function = inspect.unwrap(adapter.tool_function(tool))
    file, doc, start, end = docstring_lines(function)
    root = Path(adapter.source_root()).resolve()
    relative = file.resolve().relative_to(root).as_posix()
    injected = adapter.injected_parameters(tool)
    signature: dict[str, Any] = {}
    annotations = parameter_annotations(function)
    for name, param in inspect.signature(function).parameters.items():
        if name in injected or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        spec: dict[str, Any] = {"type": _annotation_type(annotations[name]) or "str"}
        if param.default is not inspect.Parameter.empty:
            spec["optional"] = True
            if param.default is not None:
                spec["default"] = param.default
        signature[name] = spec
    taken: set[str] = set()
    preconditions, effects = [], []
    for line in doc:
        if line.section in ("args", "examples"):
            continue  # argument descriptions become `arg.*` clauses, which a person writes
        clause = {
            "text": line.text,
            "predicate": DRAFT_PREDICATE,
            "provenance": {
                "surface": "docstring",
                "quote": line.text,
                "file": relative,
                "line": line.line,
            },
        }
        is_pre = line.section == "raises" or (
            line.section == "" and _PRECONDITION_WORDS.search(line.text)
        )
        prefix = "pre." if is_pre else "eff."
        clause = {"id": f"{prefix}{_slug(line.text, taken)}{DRAFT_SUFFIX}", **clause}
        (preconditions if is_pre else effects).append(clause)
    return {
        "tool": tool,
        "target": adapter.name,
        "source": {
            "file": relative,
            "function": function.__name__,
            "start_line": start,
            "end_line": end,
        },
        "signature": signature,
        "preconditions": preconditions,
        "effects": effects,
        "success": {"signal": "no_error", "inferred": True},
    }


CONTRACT_HEADER = """\
# Drafted by `harness new-contract` from the tool's signature and docstring.
# Every clause ending in _draft is a placeholder (predicate True): no count includes it and
# `harness contracts validate` lists it. For each: write the predicate over pre, post, args
# and result, then drop the _draft suffix. Mark effective arguments (effective: true plus an
# arg.NAME clause), add frame clauses, and set success.biconditional where the docs say so.
# WARNING: success.biconditional is false in this draft, which turns phantom-effect detection
# off (an absent effect is then allowed); `harness contracts validate` warns until you decide.
"""


def render_contract(contract: dict[str, Any]) -> str:
    return CONTRACT_HEADER + yaml.safe_dump(
        contract, sort_keys=False, allow_unicode=True, width=100
    )


def write_new(path: Path, text: str, what: str) -> None:
    """Write a file that must not exist yet (a scaffold never overwrites)."""
    if path.exists():
        raise UserError(
            Problem(
                str(path),
                what,
                "already exists; a scaffold never overwrites",
                "move it away or choose another name",
            )
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# --- new-adapter -------------------------------------------------------------------------------


def check_package_name(name: str) -> None:
    if not name.isidentifier() or keyword.iskeyword(name) or not name.islower():
        raise UserError(
            Problem(
                name,
                "NAME",
                "not a lower-case Python package name",
                "use letters, digits and underscores, e.g. my_bench",
            )
        )


def class_name(package: str) -> str:
    return "".join(part.capitalize() for part in package.split("_")) + "Adapter"


def adapter_files(package: str) -> dict[str, str]:
    """Relative path -> text of a working benchmark skeleton: one environment, one tool."""
    cls = class_name(package)
    return {
        "__init__.py": f'"""{package}: a benchmark checked by contract-harness."""\n\n'
        '__version__ = "0.1.0"\n',
        "tools.py": TOOLS_TEMPLATE,
        "adapter.py": ADAPTER_TEMPLATE.format(package=package, cls=cls),
        "contracts/README.md": "One YAML contract per tool. Draft one with\n"
        f"`harness new-contract TOOL --target {package}.adapter:{cls}`.\n",
        "README.md": README_TEMPLATE.format(package=package, cls=cls),
    }


def new_adapter(package: str, parent: Path) -> list[Path]:
    check_package_name(package)
    if parent.exists() and not parent.is_dir():
        raise UserError(
            Problem(str(parent), "--dir", "is a file, not a folder", "name a folder (or a new one)")
        )
    folder = parent / package
    if folder.exists():
        raise UserError(
            Problem(
                str(folder),
                "NAME",
                "already exists; a scaffold never overwrites",
                "choose another name or --dir",
            )
        )
    written = []
    for relative, text in adapter_files(package).items():
        path = folder / relative
        write_new(path, text, "file")
        written.append(path)
    return written


TOOLS_TEMPLATE = '''\
"""The benchmark's tools: plain functions over an environment. Replace with your own (or
make the adapter import your benchmark's)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Environment:
    notes: dict[str, str] = field(default_factory=dict)


def add_note(env: Environment, key: str, text: str) -> str:
    """Store a note under a key.

    Raises ValueError if the key is already used.
    The note is stored under the key.
    """
    if key in env.notes:
        raise ValueError(f"note {key} exists")
    env.notes[key] = text
    return f"stored {key}"


TOOLS = {"add_note": add_note}
'''

ADAPTER_TEMPLATE = '''\
"""The adapter between contract-harness and {package} (see the harness's docs/adapters.md)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.targets.adapter import InvokeOutcome, ResetUnsupported

import {package}
from {package} import tools

PACKAGE_DIR = Path({package}.__file__).resolve().parent


class {cls}:
    name = "{package}"

    def version(self) -> str:
        return {package}.__version__

    def tool_names(self) -> list[str]:
        return sorted(tools.TOOLS)

    def fresh(self) -> tools.Environment:
        return tools.Environment()

    def snapshot(self, env: tools.Environment) -> Any:
        return dataclasses.asdict(env)

    def invoke(self, env: tools.Environment, tool: str, args: dict[str, Any]) -> InvokeOutcome:
        try:
            result = self.tool_function(tool)(env, **args)
        except Exception as exc:  # a tool's error is an outcome, never a crash
            return InvokeOutcome(False, None, type(exc).__name__, str(exc))
        return InvokeOutcome(True, result)

    def reset(self, env: tools.Environment) -> None:
        raise ResetUnsupported("{package} has no reset path")

    def tool_function(self, tool: str) -> Callable[..., Any]:
        # looked up at call time: a mutant rebinds the module attribute
        return getattr(tools, tool)

    def injected_parameters(self, tool: str) -> frozenset[str]:
        return frozenset({{"env"}})

    def source_root(self) -> Path:
        return PACKAGE_DIR.parent

    def contracts_dir(self) -> Path:
        return PACKAGE_DIR / "contracts"

    def volatile_paths(self) -> list[str]:
        return []
'''

README_TEMPLATE = """\
# {package}

A benchmark wired into contract-harness by `{package}.adapter:{cls}`.

1. Make the folder holding `{package}/` importable (`pip install -e .` of your project, or
   `PYTHONPATH=.`), then `harness check {package}.adapter:{cls}` lists the tools.
2. Draft a contract per tool: `harness new-contract add_note --target {package}.adapter:{cls}`;
   write each `_draft` clause's predicate and drop the suffix;
   `harness contracts validate {package}.adapter:{cls}` until it prints no draft.
3. Register the name for plans: in your pyproject.toml
   `[project.entry-points."contract_harness.targets"]` `{package} = "{package}.adapter:{cls}"`,
   or write `target: {package}.adapter:{cls}` in the plan's arms.
"""
