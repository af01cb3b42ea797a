"""The one canonical equality of the harness, and the path patterns that mask state.

Every comparison of states, results and predicate operands goes through `diff` /
`canonical_equal`, so that "equal" means the same thing in the checker, the runner and the
predicate language.

Equality is type-strict: ``True != 1`` always, and ``2 != 2.0`` unless the policy admits the
numeric tower. JSON values only: None, bool, int, float, str, list, dict (str keys).

Path patterns are dotted: ``bank.accounts.*.balance``. A segment is a literal key (or list
index), ``*`` (any one key), or ``{args.NAME}`` (the value of argument NAME, substituted by
`bind_pattern`). A pattern masks the whole subtree below the paths it matches. Keys that
contain a dot cannot be named by a pattern.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

JSON = Any
Path = tuple[str | int, ...]
WILDCARD = "*"
_SCALARS = (str, int, float, bool, type(None))
_json_string = json.encoder.encode_basestring_ascii  # what json.dumps(a str) returns


@dataclass(frozen=True)
class EqualityPolicy:
    """How strict canonical equality is about numbers. Bool is never equal to int."""

    numeric_tower: bool = False  # True: 2 == 2.0


STRICT = EqualityPolicy()


@dataclass(frozen=True)
class Difference:
    """One place where two JSON values differ. `before`/`after` are MISSING-safe reprs."""

    path: Path
    before: JSON
    after: JSON

    def dotted(self) -> str:
        return format_path(self.path)


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()


def format_path(path: Path) -> str:
    return ".".join(str(p) for p in path) if path else "<root>"


def parse_pattern(pattern: str) -> tuple[str, ...]:
    """Split a dotted pattern into segments; `{args.x}` segments are kept verbatim."""
    if not pattern or pattern.strip() != pattern:
        raise ValueError(f"empty or padded path pattern {pattern!r}")
    segments = tuple(pattern.split("."))
    # `{args.x}` contains a dot: re-join the pieces of a brace segment.
    joined: list[str] = []
    buf: list[str] = []
    for seg in segments:
        if buf:
            buf.append(seg)
            if seg.endswith("}"):
                joined.append(".".join(buf))
                buf = []
        elif seg.startswith("{") and not seg.endswith("}"):
            buf.append(seg)
        else:
            joined.append(seg)
    if buf or any(s == "" for s in joined):
        raise ValueError(f"malformed path pattern {pattern!r}")
    return tuple(joined)


def argument_segments(pattern: str) -> list[str]:
    """Names of the arguments a pattern substitutes (`{args.NAME}`)."""
    names = []
    for seg in parse_pattern(pattern):
        if seg.startswith("{"):
            inner = seg[1:-1]
            if not inner.startswith("args.") or "." in inner[5:]:
                raise ValueError(f"segment {seg!r} must be of the form {{args.NAME}}")
            names.append(inner[5:])
    return names


def bind_pattern(pattern: str, args: Mapping[str, JSON] | None) -> tuple[str, ...]:
    """Substitute `{args.NAME}` segments; with args None they become wildcards."""
    out = []
    for seg in parse_pattern(pattern):
        if seg.startswith("{"):
            name = seg[1:-1][len("args.") :]
            out.append(WILDCARD if args is None else str(args.get(name, "")))
        else:
            out.append(seg)
    return tuple(out)


def _segment_matches(segment: str, key: str | int) -> bool:
    return segment == WILDCARD or segment == str(key)


def _masked(path: Path, masks: Sequence[tuple[str, ...]]) -> bool:
    for mask in masks:
        if len(mask) <= len(path) and all(
            _segment_matches(s, k) for s, k in zip(mask, path, strict=False)
        ):
            return True
    return False


def pattern_matches_any(pattern: tuple[str, ...], value: JSON) -> bool:
    """Whether a bound pattern names at least one existing path in `value`."""
    if not pattern:
        return True
    head, rest = pattern[0], pattern[1:]
    if isinstance(value, dict):
        keys: Iterable[Any] = value.keys()
    elif isinstance(value, list):
        keys = range(len(value))
    else:
        return False
    for key in keys:
        if _segment_matches(head, key) and pattern_matches_any(rest, value[key]):
            return True
    return False


def pattern_may_match(pattern: tuple[str, ...], value: JSON) -> bool:
    """Like `pattern_matches_any`, but a `*` under an existing container that is empty
    counts: the path names entries that calls may create."""
    if pattern_matches_any(pattern, value):
        return True
    if WILDCARD not in pattern:
        return False
    head = pattern[: pattern.index(WILDCARD)]
    node = value
    for segment in head:
        if isinstance(node, dict) and segment in node:
            node = node[segment]
        elif isinstance(node, list) and segment.isdigit() and int(segment) < len(node):
            node = node[int(segment)]
        else:
            return False
    return isinstance(node, dict | list) and not node


def mask_state(value: JSON, masks: Sequence[tuple[str, ...]], _path: Path = ()) -> JSON:
    """A copy of `value` without the subtrees matched by `masks` (dict keys only)."""
    if not masks:
        return value
    pending = [m[len(_path) :] for m in masks if len(m) > len(_path) and _prefix(m, _path)]
    covered = any(len(m) <= len(_path) and _prefix(m, _path) for m in masks)
    return _mask(value, pending, covered)


def _prefix(mask: tuple[str, ...], path: Path) -> bool:
    return all(_segment_matches(s, k) for s, k in zip(mask, path, strict=False))


def _mask(value: JSON, pending: list[tuple[str, ...]], covered: bool) -> JSON:
    """`pending`: what is left of each mask whose segments matched the path so far;
    `covered`: a whole mask matched the path, so every dict key below is masked."""
    if isinstance(value, dict):
        if covered:
            return {}
        out = {}
        for key, child in value.items():
            name = str(key)
            below = [m[1:] for m in pending if m[0] == WILDCARD or m[0] == name]
            if any(not m for m in below):
                continue  # the path to this key is masked
            out[key] = _mask(child, below, False) if below else _copy(child)
        return out
    if isinstance(value, list):
        if not pending and not covered:
            return _copy(value)
        out_list = []
        for index, child in enumerate(value):
            name = str(index)
            below = [m[1:] for m in pending if m[0] == WILDCARD or m[0] == name]
            out_list.append(_mask(child, [m for m in below if m], covered or not all(below)))
        return out_list
    return value


def _copy(value: JSON) -> JSON:
    # Scalar children are taken as they are without a call: most of a state is leaves.
    if isinstance(value, dict):
        return {k: v if type(v) in _SCALARS else _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [v if type(v) in _SCALARS else _copy(v) for v in value]
    return value


def scalar_equal(a: JSON, b: JSON, policy: EqualityPolicy = STRICT) -> bool:
    """Type-strict equality of two non-container values."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        if policy.numeric_tower:
            return a == b
        return type(a) is type(b) and a == b
    return type(a) is type(b) and a == b


def diff(
    a: JSON,
    b: JSON,
    *,
    masks: Sequence[tuple[str, ...]] = (),
    policy: EqualityPolicy = STRICT,
    limit: int = 50,
) -> list[Difference]:
    """The differences between two JSON values, outside the masked paths (at most `limit`)."""
    if _same(a, b, policy):  # equal everywhere is equal outside the masks too
        return []
    out: list[Difference] = []
    _diff(a, b, (), masks, policy, out, limit)
    return out


def _diff(
    a: JSON,
    b: JSON,
    path: Path,
    masks: Sequence[tuple[str, ...]],
    policy: EqualityPolicy,
    out: list[Difference],
    limit: int,
) -> None:
    if len(out) >= limit or (path and _masked(path, masks)):
        return
    # Children equal everywhere hold no difference: skip them without building their paths.
    if isinstance(a, dict) and isinstance(b, dict):
        # only the children that differ are sorted: the same order, without sorting the
        # thousands of records of a table a call changed one of
        differing = []
        for key in a.keys() if a.keys() == b.keys() else a.keys() | b.keys():
            left, right = a.get(key, MISSING), b.get(key, MISSING)
            if not (left is right and type(left) is dict) and not _same(left, right, policy):
                differing.append(key)
        for key in sorted(differing, key=str):
            _diff(a.get(key, MISSING), b.get(key, MISSING), (*path, key), masks, policy, out, limit)
        return
    if isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            left = a[i] if i < len(a) else MISSING
            right = b[i] if i < len(b) else MISSING
            if not _same(left, right, policy):
                _diff(left, right, (*path, i), masks, policy, out, limit)
        return
    if a is MISSING or b is MISSING:
        if a is not b:
            out.append(Difference(path, a, b))
        return
    if isinstance(a, dict | list) or isinstance(b, dict | list):
        out.append(Difference(path, a, b))
        return
    if not scalar_equal(a, b, policy):
        out.append(Difference(path, a, b))


def canonical_key(value: JSON, policy: EqualityPolicy = STRICT) -> str:
    """A string equal for two values exactly when `canonical_equal` says they are equal
    (for JSON values): for de-duplicating in linear time."""
    if isinstance(value, bool):
        return f"b:{value}"
    if isinstance(value, int | float):
        if policy.numeric_tower and float(value) == value:
            return f"n:{float(value)!r}"
        return f"{'i' if isinstance(value, int) else 'f'}:{value!r}"
    if isinstance(value, str):
        return "s:" + _json_string(value)
    if value is None:
        return "null"
    if isinstance(value, list):
        return "[" + ",".join(canonical_key(v, policy) for v in value) + "]"
    if isinstance(value, dict):
        items = sorted((json.dumps(str(k)), canonical_key(v, policy)) for k, v in value.items())
        return "{" + ",".join(f"{k}:{v}" for k, v in items) + "}"
    return f"?{type(value).__name__}:{value!r}"


def canonical_equal(
    a: JSON,
    b: JSON,
    *,
    masks: Sequence[tuple[str, ...]] = (),
    policy: EqualityPolicy = STRICT,
) -> bool:
    """THE equality: type-strict, structural, volatile paths masked."""
    if _same(a, b, policy):
        return True
    return bool(masks) and not diff(a, b, masks=masks, policy=policy, limit=1)


def _same(a: JSON, b: JSON, policy: EqualityPolicy) -> bool:
    """Whether `_diff` finds no difference without masks; the same cases in the same order,
    minus the paths and the sorting (the hot path of every predicate comparison)."""
    kind = type(a)
    if a is b and kind in (dict, list):
        return True  # one shared subtree (tau2 snapshots share untouched records)
    if kind is type(b) and kind in _SCALARS:
        return a == b  # scalar_equal of two values of one type
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() == b.keys():
            for key, value in a.items():  # a loop, not all(...): this runs for every record
                other = b[key]
                if value is other and type(value) is dict:
                    continue  # one shared record, as the first test above finds it
                if not _same(value, other, policy):
                    return False
            return True
        return all(
            _same(a.get(key, MISSING), b.get(key, MISSING), policy) for key in a.keys() | b.keys()
        )
    if isinstance(a, list) and isinstance(b, list):
        if len(a) == len(b):
            return all(_same(x, y, policy) for x, y in zip(a, b, strict=True))
        return all(
            _same(a[i] if i < len(a) else MISSING, b[i] if i < len(b) else MISSING, policy)
            for i in range(max(len(a), len(b)))
        )
    if a is MISSING or b is MISSING:
        return a is b
    if isinstance(a, dict | list) or isinstance(b, dict | list):
        return False
    return scalar_equal(a, b, policy)
