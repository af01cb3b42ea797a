"""State coverage: the state paths a tool writes, and which of them its effects constrain.

A written path is a difference between the pre- and post-snapshot of a probe the contract's
success signal calls a success (volatile paths masked). Paths are generalised to patterns:
a list index, and a key of a collection (a dict of two or more lists, or of two or more
records with the same fields: accounts by id, inboxes by user), become `*`.

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

from harness.checker.probes import CompiledContract
from harness.contracts.predicate import PredicateRuntimeError
from harness.quality.corpus import ProbeOutcome
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
    """Two or more entries that are all lists, or all records with the same fields: keys
    are ids (accounts by id, inboxes by user), not field names."""
    if not isinstance(node, dict) or len(node) < 2:
        return False
    values = list(node.values())
    if all(isinstance(v, list) for v in values):
        return True
    if not all(isinstance(v, dict) for v in values):
        return False
    return all(set(v) == set(values[0]) for v in values[1:])


def pattern_of(path: tuple[Any, ...], pre: JSON, post: JSON) -> str:
    """The generalised dotted pattern of a concrete path (module docstring)."""
    out: list[str] = []
    nodes = [pre, post]
    for segment in path:
        if isinstance(segment, int) or any(_is_collection(n) for n in nodes):
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
            pattern = pattern_of(d.path, pre, post)
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
