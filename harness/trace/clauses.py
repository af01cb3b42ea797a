"""A violated clause evaluated on one call of a path: the trigger of reach, and the
independent verdict of a positive control.

Read from the contract and its compiled predicates alone (never the checker's internals):
- `pre.X`: the call ran although the precondition is false (not refused, or the state changed);
- `eff.X`, `inv.X`: the call succeeded and the predicate is false;
- `arg.X`: the call passed X and an effect whose predicate reads `args.X` is false;
- `frame.X`: the call changed a path in the clause's scope outside its writes;
- `success`: every precondition holds and the call was refused;
- `reset`: no path of a task calls reset, so it is never triggered here.
A call is refused when it raised, or when the contract's success signal is `result` and its
predicate is false on the returned value (a tool that refuses by returning `{"error": ...}`),
as the checker reads it. `None` means the clause could not be evaluated on the call (a
predicate error).
"""

from __future__ import annotations

from typing import Any

from harness.contracts.model import Contract
from harness.contracts.predicate import PredicateRuntimeError, compile_predicate
from harness.targets.equality import bind_pattern, diff, parse_pattern
from harness.trace.suites import CallRecord


def _args(contract: Contract, args: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments with the signature's defaults filled in, as the tool sees them."""
    full = {name: spec.default for name, spec in contract.signature.items() if spec.optional}
    full.update(args)
    for name, value in full.items():
        spec = contract.signature.get(name)
        # a JSON integer given for a float parameter reaches the tool as a float (the
        # runtime validates arguments against the signature), so it is compared as one
        if spec is not None and "float" in str(spec.type) and type(value) is int:
            full[name] = float(value)
    return full


def _holds(text: str, record: CallRecord, args: dict[str, Any]) -> bool:
    bindings = {
        "pre": record.pre,
        "post": record.post,
        "args": args,
        "result": record.outcome.result,
    }
    return compile_predicate(text).holds(bindings)


def _prefix(pattern: tuple[str, ...], path: tuple[Any, ...]) -> bool:
    return len(path) >= len(pattern) and all(
        p == "*" or p == str(k) for p, k in zip(pattern, path, strict=False)
    )


def clause_fails(
    contract: Contract, clause_id: str, record: CallRecord, masks: list[str]
) -> bool | None:
    """Whether the violated clause `clause_id` fails on this call (see the module docstring)."""
    args = _args(contract, record.args)
    try:
        ok = record.outcome.success
        signal = contract.success
        if ok and signal.signal == "result" and signal.predicate:
            ok = _holds(signal.predicate, record, args)
        kind, _, name = clause_id.partition(".")
        by_id = {
            c.id: c for c in [*contract.preconditions, *contract.effects, *contract.invariants]
        }
        if kind == "pre" and clause_id in by_id:
            changed = record.pre != record.post
            return not _holds(by_id[clause_id].predicate, record, args) and (ok or changed)
        if kind in ("eff", "inv") and clause_id in by_id:
            return ok and not _holds(by_id[clause_id].predicate, record, args)
        if kind == "arg":
            if name not in record.args or not ok:
                return False
            reading = [
                e for e in contract.effects if name in compile_predicate(e.predicate).args_read
            ]
            return any(not _holds(e.predicate, record, args) for e in reading)
        if kind == "frame":
            clause = next(c for c in contract.frame if c.id == clause_id)
            scope = [parse_pattern(p) for p in clause.scope]
            writes = [bind_pattern(p, args) for p in clause.writes]
            volatile = [parse_pattern(p) for p in masks]
            changes = diff(record.pre, record.post, masks=volatile, limit=1000)
            return any(
                any(_prefix(s, c.path) for s in scope)
                and not any(_prefix(w, c.path) for w in writes)
                for c in changes
            )
        if clause_id == "success":
            legal = all(_holds(p.predicate, record, args) for p in contract.preconditions)
            return legal and not ok
        return False
    except (PredicateRuntimeError, StopIteration):
        return None
