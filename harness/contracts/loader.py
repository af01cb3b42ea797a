"""Reading contract YAML into `Contract` models, with errors that name file, field and fix."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from harness.contracts.model import Contract
from harness.errors import HarnessError, Problem, UserError

M = TypeVar("M", bound=BaseModel)


class KeyWrittenTwice(yaml.constructor.ConstructorError, HarnessError):
    """A mapping that names one key twice (PyYAML keeps the last silently); `_parse` turns
    it into a UserError naming the line."""


class NotBuilt(yaml.constructor.ConstructorError, HarnessError):
    """A tagged value the loader cannot or will not build (`!!int abc`, `!!set`)."""

    def __init__(self, *args: Any, fix: str) -> None:
        super().__init__(*args)
        self.fix = fix


# Tags with no order (a set) or no mapping the models read: a set's order follows the hash
# seed, so a list written as one would draw differently from one process to the next.
_REFUSED_TAGS = {
    "tag:yaml.org,2002:set": "write a list",
    "tag:yaml.org,2002:omap": "write a mapping",
    "tag:yaml.org,2002:pairs": "write a mapping",
}


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_composed(loader: yaml.SafeLoader, document: yaml.Node) -> None:
    """Refuse, on the composed document and before anything is built (building a mapping
    that merges another, `<<: *anchor`, rewrites the other's keys in place):
    - a mapping that writes a key twice: `seed: 1` then `seed: 2` would run seed 2 without
      a word (merged keys may be overridden, as YAML allows; only keys written count);
    - a tag the harness does not read (`_REFUSED_TAGS`), wherever it stands, a merge too;
    - an alias inside the collection it names (`&a [*a]`): a value with no end."""
    on_path: set[int] = set()
    done: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(document, False)]
    while stack:  # depth first, document order, each node once (an alias is its anchor's)
        node, leaving = stack.pop()
        if leaving:
            on_path.discard(id(node))
            done.add(id(node))
            continue
        if id(node) in on_path:
            problem = "the collection here holds an alias of itself: a value with no end"
            raise NotBuilt(None, None, problem, node.start_mark, fix="write the value out")
        if id(node) in done:
            continue
        _refuse_tag(node)
        if isinstance(node, yaml.MappingNode):
            _keys_once(loader, node)
        on_path.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(_children(node)))


def _refuse_tag(node: yaml.Node) -> None:
    if node.tag in _REFUSED_TAGS:
        tag = node.tag.removeprefix("tag:yaml.org,2002:")
        problem = f"!!{tag} is no form the harness reads"
        raise NotBuilt(None, None, problem, node.start_mark, fix=_REFUSED_TAGS[node.tag])


def _keys_once(loader: yaml.SafeLoader, node: yaml.MappingNode) -> None:
    lines: dict[Any, int] = {}
    for key_node, _ in node.value:
        _refuse_tag(key_node)  # before it is built
        if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(key_node, yaml.ScalarNode):
            continue  # a merge, or a complex key (refused where the model reads it)
        key = loader.construct_object(key_node, deep=True)
        if key in lines:
            message = f"key {key!r} written twice (first on line {lines[key]})"
            raise KeyWrittenTwice(None, None, message, key_node.start_mark)
        lines[key] = key_node.start_mark.line + 1


class _RefusingKeysTwice:
    def construct_document(self, node: yaml.Node) -> Any:
        _check_composed(self, node)  # type: ignore[arg-type]
        return super().construct_document(node)  # type: ignore[misc]

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        """PyYAML's constructors raise ValueError, KeyError, IndexError, ... for a value
        they cannot build as its tag, written (`!!int abc`, `!!bool x`, `!!int`) or implied
        (`0b_`, an unquoted `2024-02-30`): one ConstructorError with the node's line
        instead, as for any other malformed YAML."""
        try:
            return super().construct_object(node, deep=deep)  # type: ignore[misc]
        except yaml.YAMLError:
            raise
        except (ValueError, TypeError, OverflowError, LookupError, AttributeError) as exc:
            tag = node.tag.removeprefix("tag:yaml.org,2002:")
            if isinstance(node, yaml.ScalarNode):
                value = node.value if len(node.value) <= 40 else node.value[:37] + "..."
                problem = f"{value!r} cannot be read as !!{tag}"
            else:
                problem = f"a {node.id} cannot be read as !!{tag}"
            if isinstance(exc, (ValueError, OverflowError)):  # PyYAML's others say nothing
                reason = str(exc).splitlines()[0] if str(exc) else ""
                problem += f" ({reason[:77]}...)" if len(reason) > 80 else f" ({reason})"
            fix = "write the value in that form, or make it a string: quote it, with no tag"
            raise NotBuilt(None, None, problem, node.start_mark, fix=fix) from exc


# libyaml's parser when PyYAML was built with it: the same documents, ten times faster.
_BASE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _FastLoader(_RefusingKeysTwice, _BASE_LOADER):  # type: ignore[valid-type,misc]
    pass


class _PureLoader(_RefusingKeysTwice, yaml.SafeLoader):
    pass


_FAST_LOADER: type[yaml.SafeLoader] = _FastLoader
DEEP_FIX = "flatten the YAML"
# Parsed documents by their text: a run reads the same contracts and plan several times.
_PARSED: dict[str, Any] = {}
_PARSED_ENTRIES = 512

_FIXES = {
    "missing": "add the field",
    "extra_forbidden": "remove the field or correct its spelling",
    "literal_error": "use one of the allowed values",
    "string_type": "write a string",
    "int_type": "write a whole number",
    "int_parsing": "write a whole number",
    "bool_type": "write true or false",
    "bool_parsing": "write true or false",
    "list_type": "write a list",
    "dict_type": "write a mapping",
    "model_type": "write a mapping",
    "enum": "use one of the allowed values",
    "greater_than_equal": "use a larger number",
    "less_than_equal": "use a smaller number",
    "float_type": "write a number",
    "float_parsing": "write a number",
    "too_short": "add at least one entry",
    "string_too_short": "write a non-empty string",
}


def _where(loc: tuple[Any, ...], data: Any) -> str:
    """A dotted field path; list positions become the clause id when there is one."""
    parts: list[str] = []
    node = data
    for key in loc:
        if isinstance(key, int) and isinstance(node, list) and key < len(node):
            node = node[key]
            ident = (node.get("id") or node.get("name")) if isinstance(node, dict) else None
            # an id of another form (`id: !!int 12`) would read as a position
            parts.append(f"[{ident}]" if ident and isinstance(ident, str) else f"[{key}]")
            continue
        parts.append(str(key))
        node = node.get(key) if isinstance(node, dict) else None
    return ".".join(parts).replace(".[", "[") or "<top>"


def problems_from_validation(
    file: str, error: ValidationError, data: Any, kind: str | None = None
) -> list[Problem]:
    """One problem per pydantic error; `kind` (contract or plan) names the schema command
    (None: a file with no schema command, e.g. a negative control or a repair spec)."""
    problems = []
    command = {"contract": "contracts"}.get(kind or "", kind)  # `harness contracts schema`
    where_forms = f"`harness {command} schema`" if kind else "the docs"
    for err in error.errors():
        message = err["msg"].removeprefix("Value error, ")
        fix = _FIXES.get(err["type"])
        if fix is None:
            fix = f"see {where_forms} for the field's form"
        elif err["type"].endswith(("_type", "_parsing")):  # a wrong form: say where forms are
            fix = f"{fix} ({where_forms} show{'s' * bool(kind)} the field's form)"
        if err["type"] == "value_error":
            fix = f"correct the {kind or 'file'} as the message says"
        where = _where(tuple(err["loc"]), data)
        field, sep, rest = message.partition(": ")
        if where == "<top>" and sep and " " not in field:
            where, message = field, rest  # model-level rules name their field first
        problems.append(Problem(file, where, message, fix))
    return problems


# Plans, contracts and controls are hand-written: the largest in the repository is under
# 20 kB. A file past this is a mistake (or an attack) that would parse for minutes.
MAX_INPUT_BYTES = 1 << 20


def read_text(path: Path) -> str:
    """A file's UTF-8 text; unreadable or non-UTF-8 bytes, or a file larger than
    `MAX_INPUT_BYTES`, are a UserError naming the file."""
    try:
        size = path.stat().st_size
        if size > MAX_INPUT_BYTES:
            raise UserError(
                Problem(
                    str(path),
                    "file",
                    f"is {size:,} bytes, larger than the {MAX_INPUT_BYTES:,} a plan, contract "
                    "or control may be",
                    "split it, or remove what was generated into it",
                )
            )
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(
            Problem(str(path), "file", f"cannot read: {exc.strerror}", "check the path")
        ) from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UserError(
            Problem(
                str(path),
                f"line {line}",
                f"byte 0x{data[exc.start]:02x} is not UTF-8 text",
                "save the file as UTF-8",
            )
        ) from exc


def read_yaml(path: Path) -> Any:
    """Parse a YAML file; malformed YAML is a UserError naming the line."""
    text = read_text(path)
    if text not in _PARSED:
        if len(_PARSED) >= _PARSED_ENTRIES:
            del _PARSED[next(iter(_PARSED))]
        _PARSED[text] = _parse(path, text)
    try:
        return copy.deepcopy(_PARSED[text])  # callers may change what they get
    except RecursionError as exc:
        raise UserError(Problem(str(path), "file", "nested too deeply to read", DEEP_FIX)) from exc


# libyaml's composer recurses on the C stack, unchecked: YAML nested some 20,000 deep kills
# the process. Nesting past the ~1,400 levels indentation can give in `MAX_INPUT_BYTES`
# needs these characters; a text with more of them than the bound has its depth measured
# first by libyaml's parser, whose stack is its own (no recursion), and is refused past
# `_MAX_DEPTH`, where building it would exhaust Python's recursion anyway. The largest
# shipped YAML has 737.
_NESTING_MARKS, _FAST_NESTING_BOUND, _MAX_DEPTH = "[{-?", 2_000, 1_000


def _deeper_than(text: str, limit: int) -> bool:
    """Whether the YAML nests more than `limit` collections deep (False when it does not
    parse: the loaders report that, with their line)."""
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_BASE_LOADER):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > limit:
                    return True
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        return False
    return False


def _parse(path: Path, text: str) -> Any:
    marks = sum(text.count(mark) for mark in _NESTING_MARKS)
    if marks > _FAST_NESTING_BOUND and _deeper_than(text, _MAX_DEPTH):
        raise UserError(Problem(str(path), "file", "nested too deeply to read", DEEP_FIX))
    try:
        return yaml.load(text, Loader=_FAST_LOADER)  # a safe loader either way
    except (yaml.YAMLError, RecursionError):
        pass  # reported below, with the pure-Python parser's own message and line
    try:
        return yaml.load(text, Loader=_PureLoader)
    except RecursionError as exc:
        raise UserError(Problem(str(path), "file", "nested too deeply to read", DEEP_FIX)) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "file"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        if isinstance(exc, NotBuilt):
            said = f"malformed YAML ({problem})"
            raise UserError(Problem(str(path), where, said, exc.fix)) from exc
        if isinstance(exc, KeyWrittenTwice):
            raise UserError(
                Problem(str(path), where, problem, "keep one of the two, delete the other")
            ) from exc
        raise UserError(
            Problem(str(path), where, f"malformed YAML ({problem})", "fix the YAML syntax there")
        ) from exc


def load_model(path: Path, model: type[M], first_field: str) -> M:
    """Read a YAML mapping into `model`; every problem names the file and field."""
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise UserError(
            Problem(
                str(path),
                "<top>",
                f"a {model.__name__.lower()} must be a YAML mapping",
                f"begin with `{first_field}: ...`",
            )
        )
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        kind = {"Plan": "plan", "Contract": "contract"}.get(model.__name__)
        raise UserError(problems_from_validation(str(path), exc, data, kind)) from exc


def load_contract(path: Path) -> Contract:
    return load_model(path, Contract, "tool")


def contract_files(paths: Iterable[Path]) -> list[Path]:
    """Expand folders to their *.yaml / *.yml files (recursively), sorted; keep files."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.suffix in {".yaml", ".yml"}))
        elif path.exists():
            found.append(path)
        else:
            raise UserError(Problem(str(path), "path", "no such file or folder", "check the path"))
    return found
