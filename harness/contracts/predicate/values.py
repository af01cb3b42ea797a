"""Helpers over evaluated values: their kind and short text for messages, number and ordering
tests, and the set and lazy-iterator values the interpreter builds."""

from __future__ import annotations

import ast
from collections.abc import Hashable, Iterator
from typing import Any


def _src(node: ast.AST) -> str:
    """The node as one line of source, shortened for messages."""
    try:
        text = ast.unparse(node)
    except Exception:  # unparse of a malformed node must not mask the real error
        text = type(node).__name__
    text = " ".join(text.split())
    return text if len(text) <= 120 else text[:117] + "..."


def _kind(value: object) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, _PSet):
        return "set"
    if isinstance(value, _Lazy):
        return "generator"
    return type(value).__name__


def _short(value: object) -> str:
    """A bounded repr: never stringifies a whole container."""
    if isinstance(value, str):
        return repr(value[:60]) + ("..." if len(value) > 60 else "")
    if isinstance(value, dict | list | tuple | _PSet):
        return f"<{_kind(value)} of {len(value)} items>"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return "<very large int>"
    if value is None or isinstance(value, int | float):
        return repr(value)
    return f"<{_kind(value)}>"


def _is_number(value: object) -> bool:
    return isinstance(value, int | float)  # bool included, as in Python arithmetic


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _orderable(a: object, b: object) -> bool:
    if _is_number(a) and _is_number(b):
        return True
    return type(a) is type(b) and type(a) in (str, list, tuple)


class _PSet:
    """A set with type-strict membership: elements are keyed by their canonical key, so
    {1, True} has two elements. Iterates in insertion order (deterministic)."""

    __slots__ = ("items",)
    __hash__ = None  # type: ignore[assignment]  # mutable while built; nested sets use keys

    def __init__(self) -> None:
        self.items: dict[Hashable, Any] = {}

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.items.values())

    def __eq__(self, other: object) -> bool:
        # Reached through canonical_equal's scalar comparison; keys share one policy.
        return isinstance(other, _PSet) and self.items.keys() == other.items.keys()

    def __repr__(self) -> str:
        if not self.items:
            return "set()"
        return "{" + ", ".join(repr(v) for v in self.items.values()) + "}"


class _Lazy:
    """The value of a generator expression: iterable once, lazily (so any/all stop early)."""

    __slots__ = ("iterator",)

    def __init__(self, iterator: Iterator[Any]) -> None:
        self.iterator = iterator

    def __iter__(self) -> Iterator[Any]:
        return self.iterator

    def __repr__(self) -> str:
        return "<generator>"
