"""Observation probes: grade a tool's `obs.*` clauses (see `ObservationClause`).

Every probe starts from a fresh environment, makes a legal call of the issuing tool and
takes the artifact from its result, then calls this tool:
- validity: the clock is advanced (with the clause's clock tool) to just before and to
  exactly the first tick at which the predicate changes its truth, found by bisection over
  the predicate (the boundary is where `<` vs `<=` defects live);
- integrity: the untouched artifact, then each production-path mutation of it
  (`harness.checker.production_paths`) that changes its bytes.

Rule: the call must be accepted (success signalled) exactly when the predicate holds on
the probe's pre-state; accepted when it is false, refused when it is true with every
precondition true, or refused with a state change → VIOLATES with the axis's class
(validity_break, integrity_break) and the clause's label.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Protocol

from harness.checker.probes import (
    AssignmentSearch,
    CompiledObservation,
    argument_pools,
)
from harness.checker.production_paths import PRODUCTION_PATHS
from harness.checker.verdicts import DefectClass, ProbeRecord, UntestableReason, Witness
from harness.contracts.predicate import PredicateRuntimeError
from harness.targets.equality import JSON, canonical_equal, parse_pattern

if TYPE_CHECKING:
    from collections.abc import Mapping

    from harness.checker.probes import CompiledContract
    from harness.targets.adapter import Adapter, InvokeOutcome
    from harness.targets.equality import EqualityPolicy


class ProbeRun(Protocol):
    """What this module reads of a probe run (`harness.checker.dynamic.ProbeRun`)."""

    pre: JSON
    post: JSON
    outcome: InvokeOutcome
    setup: tuple[ProbeRecord, ...]

    def records(self) -> list[ProbeRecord]: ...

    def record(self) -> ProbeRecord: ...


class ToolCheck(Protocol):
    """What this module uses of one tool's check (`harness.checker.dynamic.ToolCheck`): a
    protocol, so that this module, which `dynamic` imports, imports nothing of `dynamic`."""

    adapter: Adapter
    c: CompiledContract
    tool: str
    partners: Mapping[str, CompiledContract]
    seed: int
    policy: EqualityPolicy
    ledger: Any  # dynamic's clause ledger: record(...) per graded clause
    probes_run: int

    def run(
        self,
        kind: str,
        args: dict[str, JSON],
        start: Any = None,
        *,
        env: Any = None,
        tool: str | None = None,
    ) -> ProbeRun: ...

    def signalled(self, run: ProbeRun, compiled: CompiledContract | None = None) -> bool: ...

    def changes(self, before: JSON, after: JSON) -> list[Any]: ...

    def snapshot(self, env: Any) -> JSON: ...


# Furthest the clock is moved looking for a validity boundary (seconds, or ticks).
MAX_ADVANCE = 10**7

AXIS_CLASS = {
    "validity": DefectClass.VALIDITY_BREAK,
    "integrity": DefectClass.INTEGRITY_BREAK,
}


def read_path(state: JSON, path: str) -> Any:
    node: Any = state
    for segment in parse_pattern(path):
        if not isinstance(node, dict) or segment not in node:
            return None
        node = node[segment]
    return node


def with_path(state: JSON, path: str, value: JSON) -> JSON:
    """A copy of `state` with the value at `path` replaced."""
    out = copy.deepcopy(state)
    node: Any = out
    *parents, last = parse_pattern(path)
    for segment in parents:
        node = node[segment]
    node[last] = value
    return out


class _Issue:
    """The issuing call: its arguments, result, artifact and the state after it."""

    def __init__(self, tool: str, args: dict[str, JSON], run: ProbeRun, artifact: JSON):
        self.tool = tool
        self.args = args
        self.result = run.outcome.result
        self.record = run.record()
        self.state = run.post
        self.artifact = artifact


class ObservationCheck:
    """The probes of one observation clause of the tool `check` checks."""

    def __init__(self, check: ToolCheck, observation: CompiledObservation):
        self.check = check
        self.obs = observation
        self.clause = observation.clause
        self.defect = AXIS_CLASS[self.clause.axis]

    def cannot(self, reason: UntestableReason, detail: str) -> None:
        self.check.ledger.cannot(self.obs.id, reason, detail)

    # --- set-up -------------------------------------------------------------------------------

    def issue(self, env: Any) -> _Issue | None:
        """A legal call of the issuing tool on `env`; None (and the reason noted) if none."""
        name = self.clause.issued_by
        issuer = self.check.partners.get(name)
        if issuer is None:
            self.cannot(UntestableReason.NO_CONTRACT, f"the issuing tool {name} has no contract")
            return None
        state = self.check.snapshot(env)
        pools = argument_pools(issuer, state, self.check.seed, name)
        args = AssignmentSearch(issuer, pools, state).find()
        if args is None:
            self.cannot(UntestableReason.NO_LEGAL_PROBE, f"no legal call of {name} issues one")
            return None
        run = self.check.run(f"issue:{self.obs.id}", args, env=env, tool=name)
        if not self.check.signalled(run, issuer):
            self.cannot(UntestableReason.NO_LEGAL_PROBE, f"the legal call of {name} was refused")
            return None
        artifact: JSON = None
        if self.clause.artifact_from is not None:
            result = run.outcome.result
            if not isinstance(result, dict) or self.clause.artifact_from not in result:
                self.cannot(
                    UntestableReason.NO_OBSERVABLE_STATE,
                    f"{name}'s result has no {self.clause.artifact_from!r}",
                )
                return None
            artifact = result[self.clause.artifact_from]
        return _Issue(name, args, run, artifact)

    def call_args(self, issue: _Issue) -> dict[str, JSON] | None:
        """This tool's arguments after the issue: a legal assignment holding the artifact if
        there is one, else (a call window closed by the issue) each pool's first value."""
        check = self.check
        pools = argument_pools(check.c, issue.state, check.seed, check.tool)
        prefer = {} if self.clause.artifact is None else {self.clause.artifact: issue.artifact}
        found = AssignmentSearch(check.c, pools, issue.state).find(prefer=prefer)
        if found is not None and all(canonical_equal(found[k], v) for k, v in prefer.items()):
            return found
        if any(not pool for pool in pools.values()):
            return None
        return {name: pool[0] for name, pool in pools.items()} | prefer

    def replay(self, issue: _Issue, advance: int = 0) -> tuple[Any, tuple[ProbeRecord, ...]] | None:
        """A fresh environment with the issuing call made again and the clock advanced;
        None when issuing again gives another result (the probes assume a deterministic
        issuer, so that the predicate and the call see the same artifact)."""
        check = self.check
        env = check.adapter.fresh()
        again = check.adapter.invoke(env, issue.tool, dict(issue.args))
        check.probes_run += 1
        if not again.success or not canonical_equal(again.result, issue.result):
            self.cannot(
                UntestableReason.NO_LEGAL_PROBE,
                f"{issue.tool} issued another result when called again from a fresh state",
            )
            return None
        records = [issue.record]
        if advance > 0:
            clock = self.clause.clock
            assert clock is not None
            args = {clock.advance_argument: advance}
            outcome = check.adapter.invoke(env, clock.advance_tool, dict(args))
            check.probes_run += 1
            records.append(
                ProbeRecord(
                    kind="setup",
                    tool=clock.advance_tool,
                    args=args,
                    success=outcome.success,
                    result=outcome.result,
                    error_type=outcome.error_type,
                    error_message=outcome.error_message,
                )
            )
        return env, tuple(records)

    # --- grading ------------------------------------------------------------------------------

    def expected(self, pre: JSON, args: dict[str, JSON], issue: _Issue) -> bool | None:
        now = read_path(pre, self.clause.clock.path) if self.clause.clock else None
        bindings = {"pre": pre, "args": args, "issued": issue.result, "now": now}
        try:
            return self.obs.predicate.holds(bindings, policy=self.check.policy)
        except PredicateRuntimeError as exc:
            reason = getattr(exc, "reason", UntestableReason.PREDICATE_TYPE_ERROR.value)
            try:
                code = UntestableReason(reason)
            except ValueError:
                code = UntestableReason.PREDICATE_TYPE_ERROR
            self.cannot(code, str(exc))
            return None

    def probe(self, kind: str, issue: _Issue, args: dict[str, JSON], advance: int = 0) -> None:
        check = self.check
        replayed = self.replay(issue, advance)
        if replayed is None:
            return
        env, records = replayed
        run = check.run(kind, args, env=env)
        run.setup = records
        want = self.expected(run.pre, args, issue)
        if want is None:
            return
        accepted = check.signalled(run)
        changes = check.changes(run.pre, run.post)
        problem = None
        if not want and accepted:
            problem = f"accepted although `{self.clause.predicate}` is false"
        elif not want and changes:
            problem = f"refused, but the state changed although `{self.clause.predicate}` is false"
        elif want and not accepted:
            legal = AssignmentSearch(check.c, {}, run.pre).is_legal(args)
            if not legal:
                return  # refused for another precondition: this probe says nothing
            problem = (
                f"refused although `{self.clause.predicate}` holds and every precondition is "
                f"true ({run.outcome.error_type}: {run.outcome.error_message})"
            )
        if problem is None:
            check.ledger.conform(self.obs.id)
            return
        check.ledger.violate(
            self.obs.id,
            self.defect,
            Witness(
                probes=run.records(),
                state_diff=changes,
                detail=f"{self.clause.label} ({kind}): {problem}",
            ),
            label=self.clause.label,
        )

    # --- the two axes -------------------------------------------------------------------------

    def run(self) -> None:
        issue = self.issue(self.check.adapter.fresh())
        if issue is None:
            return
        args = self.call_args(issue)
        if args is None:
            self.cannot(UntestableReason.NO_LEGAL_PROBE, "no arguments to call the tool with")
            return
        if self.clause.axis == "validity":
            self.validity(issue, args)
        else:
            self.integrity(issue, args)

    def validity(self, issue: _Issue, args: dict[str, JSON]) -> None:
        clock = self.clause.clock
        assert clock is not None
        now = read_path(issue.state, clock.path)
        if not isinstance(now, int) or isinstance(now, bool):
            self.cannot(UntestableReason.NO_OBSERVABLE_STATE, f"{clock.path} is not an int clock")
            return

        def truth(advance: int) -> bool | None:
            state = with_path(issue.state, clock.path, now + advance)
            return self.expected(state, args, issue)

        start = truth(0)
        far = truth(MAX_ADVANCE)
        if start is None or far is None:
            return
        if start == far:
            self.cannot(
                UntestableReason.NO_VIOLATING_PROBE,
                f"the predicate does not change within {MAX_ADVANCE} ticks of the issue",
            )
            return
        low, high = 0, MAX_ADVANCE  # truth(low) == start != truth(high)
        while high - low > 1:
            middle = (low + high) // 2
            value = truth(middle)
            if value is None:
                return
            if value == start:
                low = middle
            else:
                high = middle
        self.probe(f"validity:{self.obs.id}:+{low}", issue, args, low)
        self.probe(f"validity:{self.obs.id}:+{high}", issue, args, high)

    def integrity(self, issue: _Issue, args: dict[str, JSON]) -> None:
        name = self.clause.artifact
        assert name is not None
        self.probe(f"integrity:{self.obs.id}:intact", issue, args)
        if not isinstance(issue.artifact, str):
            self.cannot(UntestableReason.PREDICATE_TYPE_ERROR, f"{name} is not a string artifact")
            return
        for path, mutate in PRODUCTION_PATHS.items():
            altered = mutate(issue.artifact)
            if altered == issue.artifact:
                continue  # a no-op on this artifact tests nothing
            self.probe(f"integrity:{self.obs.id}:{path}", issue, {**args, name: altered})


def check_observations(check: ToolCheck) -> None:
    for observation in check.c.observations:
        ObservationCheck(check, observation).run()
