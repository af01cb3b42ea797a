"""Why an operator has nothing to draw in an arm: one line a person can act on.

Checked in order: every candidate screened out (with the screens that removed them); then
what the operator needs and the arm lacks, read from the contracts and the adapter (no
invariant clauses, no clock path, no effective argument, no reset path); then what the
operator looks for in the reached functions and did not find.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from harness.targets.registry import Target

# What the operator looks for in the functions the arm's tools reach.
_LOOKS_FOR = {
    "M-PHANTOM": "no state write in the tool functions or in a helper that returns a value",
    "M-PRECOND": "no refusal sites (an `if` that raises or returns a refusal) in the reached "
    "functions",
    "M-IGNARG": "no effective argument is read after the guards that read it",
    "M-PARTIAL": "no reached function makes two or more state writes",
    "M-INVAR": "no state write of the reached functions writes a field the invariants read",
    "M-RESET": "no reset step on the reset path",
    "M-VALIDITY": "no comparison of the clock path or of a `now` / `time()` value in a guard, "
    "a returned boolean or a local they read, in the reached functions",
    "M-INTEGRITY": "no digest or signature comparison (compare_digest, == / != of an hmac / "
    "hashlib / signing value with an argument or state value) in the reached functions",
}


def empty_reason(
    operator: str, target: Target, tools: Iterable[str], screened: Mapping[str, int]
) -> str:
    removed = {status: n for status, n in screened.items() if n}
    if removed:
        parts = ", ".join(f"{n} {status}" for status, n in sorted(removed.items()))
        return f"every candidate was screened out ({parts})"
    contracts = [target.contracts[t] for t in tools if t in target.contracts]
    if operator == "M-INVAR" and not any(c.invariants for c in contracts):
        return "no invariant clauses in the contracts of the arm's tools"
    if operator == "M-IGNARG" and not any(
        spec.effective for c in contracts for spec in c.signature.values()
    ):
        return "no effective argument declared in the contracts of the arm's tools"
    if operator == "M-RESET":
        from harness.mutation.sites import reset_sites

        if not reset_sites(target.adapter):
            return "no reset path (the adapter's environment class has no source `reset`)"
    if operator == "M-VALIDITY" and not any(o.clock for c in contracts for o in c.observations):
        return (
            "no clock path (no validity observation clause in the arm's contracts) and "
            + _LOOKS_FOR[operator].removeprefix("no ")
        )
    return _LOOKS_FOR.get(
        operator, "the operator offers no change at any site the arm's tools reach"
    )
