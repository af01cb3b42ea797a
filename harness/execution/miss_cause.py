"""Why a live mutant was missed: did any clause of the tool's contract constrain what the
mutant changed? (DESIGN.md, Scoring: `no_clause` against `probe_unrevealing`.)

A change the mutant made to the post-state of a liveness call (the independent corpus) is
*covered*
  - by a predicate clause (eff / inv / pre) when the predicate reads the changed path in
    `post`: a path it reads lies on the changed path or below it, or the changed path lies
    below a path it reads (reading a container reads what is in it; `*` stands for a
    computed subscript). A predicate over `pre` alone cannot see a post-state change;
  - by a frame clause when the changed path lies under one of its `scope` patterns and
    under none of its `writes` patterns, both bound to that call's arguments — a path the
    clause lists in `writes` is one it explicitly does not constrain.
A change to the state after reset is covered when the contract expects reset to restore the
initial state. A changed outcome (success or error type) is always covered (the success
signal and the preconditions speak of it); a changed result only when a predicate reads
`result`.
A live miss whose every change is uncovered is `no_clause`; one with a covered change is
`probe_unrevealing` (a clause could have caught it, no checker probe did).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harness.contracts.model import Contract
from harness.contracts.predicate import compile_predicate
from harness.execution.ledger import MissCause
from harness.execution.liveness import CallDifference, call_arguments, compare
from harness.targets.equality import JSON, WILDCARD, Path, bind_pattern

OUTCOME = "outcome"  # success or error type changed
RESULT = "result"  # the returned value changed


@dataclass(frozen=True)
class Change:
    """One difference of the mutant from the original on one liveness call: a marker
    (`outcome`, `result`) or a state path (under `post` or `after_reset`)."""

    args: Mapping[str, JSON]
    marker: str | None = None
    path: Path = ()
    after_reset: bool = False  # a path of the state after reset, not of the post-state


@dataclass(frozen=True)
class FramePatterns:
    scope: tuple[str, ...]
    writes: tuple[str, ...]


@dataclass(frozen=True)
class ClausePatterns:
    """What a contract's clauses constrain: the state paths its predicates read, whether a
    predicate reads the result, and each frame clause's scope and writes (unbound)."""

    predicate_reads: tuple[tuple[str, ...], ...]  # paths read in `post`
    reads_result: bool
    frames: tuple[FramePatterns, ...]
    reset_restores: bool = False  # the contract expects reset to restore the initial state


def clause_patterns(contract: Contract) -> ClausePatterns:
    reads: list[tuple[str, ...]] = []
    reads_result = False
    for _, clause in contract.predicate_clauses():
        compiled = compile_predicate(clause.predicate)
        for root, path in compiled.paths_read:
            if root == "post":
                reads.append(path)
            elif root == "result":
                reads_result = True
        # a bare `result` (no attribute) is a read of the result too
        reads_result = reads_result or "result" in clause.predicate
    frames = tuple(FramePatterns(tuple(c.scope), tuple(c.writes)) for c in contract.frame)
    restores = contract.reset is not None and contract.reset.restores_initial
    return ClausePatterns(tuple(dict.fromkeys(reads)), reads_result, frames, restores)


def _segment(pattern: str, key: str | int) -> bool:
    return pattern == WILDCARD or pattern == str(key)


def _under(pattern: Sequence[str], path: Path) -> bool:
    """`path` is `pattern` or lies below it."""
    return len(pattern) <= len(path) and all(
        _segment(p, k) for p, k in zip(pattern, path, strict=False)
    )


def _on_path(pattern: Sequence[str], path: Path) -> bool:
    """One of the two lies under the other: reading a container reads what is below it,
    and a changed container changes what is read below it."""
    return all(_segment(p, k) for p, k in zip(pattern, path, strict=False))


def covered(change: Change, patterns: ClausePatterns) -> bool:
    if change.marker == OUTCOME:
        return True
    if change.marker == RESULT:
        return patterns.reads_result
    if change.after_reset:
        return patterns.reset_restores
    if any(_on_path(read, change.path) for read in patterns.predicate_reads):
        return True
    for frame in patterns.frames:
        scopes = [bind_pattern(p, change.args) for p in frame.scope]
        writes = [bind_pattern(p, change.args) for p in frame.writes]
        if any(_under(s, change.path) for s in scopes) and not any(
            _under(w, change.path) for w in writes
        ):
            return True
    return False


def call_changes(
    original: Sequence[Mapping[str, JSON]],
    mutant: Sequence[Mapping[str, JSON]],
    corpus: Sequence[Mapping[str, JSON]],
) -> list[Change]:
    """Where the mutant's liveness observations differ from the original's, call by call
    with the call's arguments (the same comparison as `liveness.differences`)."""
    return changes_of(compare(list(original), list(mutant)), corpus)


def changes_of(
    calls: Sequence[CallDifference], corpus: Sequence[Mapping[str, JSON]]
) -> list[Change]:
    """`call_changes` from the per-call comparison (`liveness.compare`) already made."""
    out: list[Change] = []
    for call, found in zip(corpus, calls, strict=True):
        args = call_arguments(dict(call))  # a recorded call's arguments, not its envelope
        if found.outcome:
            out.append(Change(args, OUTCOME))
        if found.result:
            out.append(Change(args, RESULT))
        out += [Change(args, path=d.path) for d in found.post]
        out += [Change(args, path=d.path, after_reset=True) for d in found.after_reset]
    return out


def miss_cause(changes: Sequence[Change], patterns: ClausePatterns) -> MissCause:
    """The cause of a miss (the checker ran and found nothing new) from the mutant's changes
    on the liveness corpus: none → unreached; none covered → no_clause."""
    if not changes:
        return MissCause.UNREACHED
    if any(covered(c, patterns) for c in changes):
        return MissCause.PROBE_UNREVEALING
    return MissCause.NO_CLAUSE
