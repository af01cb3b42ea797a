"""State coverage: the state paths a tool writes, and which of them its effects constrain.

A written path is a difference between the pre- and post-snapshot of a probe the contract's
success signal calls a success (volatile paths masked). Paths are generalised to patterns:
a list index, a key of a collection (a dict of two or more records with the same fields,
or all with an `id`/`*_id` field: accounts, payment methods), a key whose record carries it
as its id, and a key some argument names (anywhere in the arguments: the user whose inbox
is written, the payment method used) become `*`.

A written path is **constrained** when reverting that one write on the probe's post-state
(the value put back as it was before, or removed when it was new) makes some `eff.*`
clause that held on the probe false: the defect "this write is skipped" would then break a
clause. An effect that cannot be evaluated on the reverted state does not count (the
checker grades such a clause UNTESTABLE, not VIOLATES). A path that no effect constrains
this way is the forecast of a `no_clause` miss. Frame clauses never catch a skipped write;
a path inside some frame clause's `writes` is listed as declared, apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.analysis.quality.corpus import ProbeOutcome
from harness.checker.probes import CompiledContract
from harness.contracts.predicate import PredicateRuntimeError
from harness.targets.equality import (
    JSON,
    MISSING,
    bind_pattern,
    diff,
    mask_state,
    parse_pattern,
)

DIFF_LIMIT = 200


def signalled(compiled: CompiledContract, outcome: ProbeOutcome) -> bool:
    """Whether the call said it succeeded, by the contract's success signal (as the checker)."""
    if not outcome.outcome.success:
        return False
    if compiled.success is None:
        return True
    try:
        return compiled.success.holds(
            {"result": outcome.outcome.result, "args": outcome.probe.args}
        )
    except PredicateRuntimeError:
        return False


def _is_collection(node: Any) -> bool:
    """Two or more records with the same fields, or all carrying an id field (`id`,
    `*_id`): keys are ids (accounts, payment methods of several kinds), not field names."""
    if not isinstance(node, dict) or len(node) < 2:
        return False
    values = list(node.values())
    if not all(isinstance(v, dict) for v in values):
        return False
    if all(set(v) == set(values[0]) for v in values[1:]):
        return True
    common = set.intersection(*(set(v) for v in values))
    return any(k == "id" or k.endswith("_id") for k in common)


def _own_id(record: Any, key: Any) -> bool:
    """Whether a record carries its own key as an id field (`{"id": key, ...}`)."""
    return isinstance(record, dict) and any(
        (k == "id" or k.endswith("_id")) and v == key for k, v in record.items()
    )


def _strings(value: Any) -> set[str]:
    """Every string anywhere in a JSON value (an argument naming a key: a user, a payment id)."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return {s for v in value.values() for s in _strings(v)}
    if isinstance(value, list):
        return {s for v in value for s in _strings(v)}
    return set()


def pattern_of(
    path: tuple[Any, ...], pre: JSON, post: JSON, args: Mapping[str, JSON] | None = None
) -> str:
    """The generalised dotted pattern of a concrete path (module docstring)."""
    named = _strings(dict(args or {}))
    out: list[str] = []
    nodes = [pre, post]
    for segment in path:
        if (
            isinstance(segment, int)
            or segment in named
            or any(_is_collection(n) for n in nodes)
            or any(_own_id(_child(n, segment), segment) for n in nodes)
        ):
            out.append("*")
        else:
            out.append(str(segment))
        nodes = [_child(n, segment) for n in nodes]
    return ".".join(out)


def _child(node: Any, key: Any) -> Any:
    if isinstance(node, dict):
        return node.get(key)
    if isinstance(node, list) and isinstance(key, int) and key < len(node):
        return node[key]
    return None


def replaced(state: JSON, path: tuple[Any, ...], value: Any) -> JSON:
    """A copy of `state` with `path` set to `value` (removed when `value` is MISSING),
    copying only the containers on the path."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(state, dict):
        out = dict(state)
        if rest:
            out[head] = replaced(state[head], rest, value)
        elif value is MISSING:
            out.pop(head, None)
        else:
            out[head] = value
        return out
    if isinstance(state, list):
        items = list(state)
        if rest:
            items[head] = replaced(state[head], rest, value)
        elif value is MISSING:
            del items[head]
        elif head >= len(items):
            items.append(value)
        else:
            items[head] = value
        return items
    return state


def _matches(pattern: tuple[str, ...], path: Sequence[Any]) -> bool:
    return len(pattern) <= len(path) and all(
        seg in ("*", str(k)) for seg, k in zip(pattern, path, strict=False)
    )


@dataclass
class WrittenPath:
    pattern: str
    constrained_by: set[str] = field(default_factory=set)
    frame_declared: bool = False
    seen: int = 0


def written_paths(
    compiled: CompiledContract, outcomes: Sequence[ProbeOutcome]
) -> dict[str, WrittenPath]:
    """Every written pattern over the signalled probes, with the effects that constrain it."""
    masks = [parse_pattern(p) for p in compiled.volatile]
    found: dict[str, WrittenPath] = {}
    for run in outcomes:
        if not signalled(compiled, run):
            continue
        pre, post = mask_state(run.pre, masks), mask_state(run.post, masks)
        bindings: dict[str, JSON] = {
            "pre": pre,
            "post": post,
            "args": run.probe.args,
            "result": run.outcome.result,
        }
        held = [c for c in compiled.effects if _holds(c.predicate, bindings) is True]
        frames = [
            bind_pattern(p, run.probe.args) for c in compiled.contract.frame for p in c.writes
        ]
        for d in diff(pre, post, limit=DIFF_LIMIT):
            pattern = pattern_of(d.path, pre, post, run.probe.args)
            entry = found.setdefault(pattern, WrittenPath(pattern))
            entry.seen += 1
            entry.frame_declared |= any(_matches(f, d.path) for f in frames)
            reverted = {**bindings, "post": replaced(post, d.path, d.before)}
            for clause in held:
                if _holds(clause.predicate, reverted) is False:
                    entry.constrained_by.add(clause.id)
    return found


def _holds(predicate: Any, bindings: Mapping[str, JSON]) -> bool | None:
    try:
        return bool(predicate.holds(bindings))
    except PredicateRuntimeError:
        return None
