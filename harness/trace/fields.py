"""Defect → fields: the state paths a violated clause says the tool should have written.

Read from the COMPILED predicates of the tool's contract (`Predicate.bound_paths_read`, with
comprehension-bound names resolved: `[t for t in post.x if ...][0].y` → `x.*.y`), never
from the clause text:

- an effect or invariant (phantom / partial effect, invariant break): the post-state paths
  its predicate reads;
- an effective argument `arg.X` (ignored argument): the post-state paths of every effect
  whose predicate reads `args.X`;
- a refused legal call: the post-state paths of every effect;
- a precondition, a frame clause, a reset (the tool wrote what it should not have): the write
  paths of the witness's state diff.

Paths are segment tuples; a list index or any key that varies is `*`. Only the deepest
paths are kept (a read of `x.*.y` implies reading `x`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from harness.contracts.model import Contract
from harness.contracts.predicate import compile_predicate

FieldPath = tuple[str, ...]


def normalise(path: Iterable[str]) -> FieldPath:
    """Digits (list indexes, numeric ids) become `*`."""
    return tuple("*" if segment.lstrip("-").isdigit() else segment for segment in path)


def deepest(paths: Iterable[FieldPath]) -> list[FieldPath]:
    unique = set(paths)
    return sorted(
        p for p in unique if not any(len(q) > len(p) and q[: len(p)] == p for q in unique)
    )


def _post_paths(predicate_text: str) -> set[FieldPath]:
    predicate = compile_predicate(predicate_text)
    return {normalise(segments) for root, segments in predicate.bound_paths_read if root == "post"}


def _effects_reading(contract: Contract, argument: str | None) -> set[FieldPath]:
    out: set[FieldPath] = set()
    for effect in contract.effects:
        predicate = compile_predicate(effect.predicate)
        if argument is None or argument in predicate.args_read:
            out |= _post_paths(effect.predicate)
    return out


def _diff_paths(witness: dict[str, Any] | None) -> set[FieldPath]:
    changes = (witness or {}).get("state_diff", [])
    return {normalise(str(change["path"]).split(".")) for change in changes}


def defect_fields(
    contract: Contract, clause_id: str, witness: dict[str, Any] | None
) -> list[FieldPath]:
    """The fields of the violated clause `clause_id` (see the module docstring)."""
    kind, _, name = clause_id.partition(".")
    clauses = {c.id: c for c in [*contract.effects, *contract.invariants]}
    if clause_id in clauses:
        paths = _post_paths(clauses[clause_id].predicate)
    elif kind == "arg":
        paths = _effects_reading(contract, name)
    elif clause_id == "success":
        paths = _effects_reading(contract, None)
    else:  # pre.*, frame.*, reset, observations: what the witness wrote
        paths = _diff_paths(witness)
    return deepest(p for p in paths if p)
