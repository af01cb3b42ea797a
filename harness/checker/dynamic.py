"""Dynamic verdicts: run probes on a tool and grade every clause of its contract.

Probes, each from a fresh environment:
- happy: one legal assignment (every precondition true);
- violate:<pre>: per precondition, one assignment falsifying it and no other;
- variant:<arg>: per effective argument, legal assignments differing from the happy one in
  that argument only, kept when the contract's effects for the variant do not hold on the
  happy post-state (so the intended effects differ, and a value equal to the current state
  is never a variant);
- joint_falsy: the happy assignment with every effective argument that admits a falsy
  value set to it, when two or more do;
- sequence: the happy call followed by legal calls of the tools that share an invariant;
- reset: the target's reset after the happy call and after the sequence;
- issue/validity/integrity: per observation clause, see `harness.checker.observation`;
- recorded (1.3.0): from the pre-states of recorded calls of the benchmark's reference
  solutions (the probe half of the target's corpus, up to RECORDED_STARTS per tool, in a
  seeded order), each reproduced by replaying the task's prefix on its own initial
  environment: the recorded call itself (graded as legal when every precondition holds,
  as violating when exactly one is false), the success path from that state when the
  recorded call is not legal, one violating call per precondition, and the effective
  arguments' variants around the legal call — the same rules as from a fresh state.

Rules (clause → class):
- a legal call refused (error, or the result says failure) → success: refused_legal_call;
- on a legal call that changed the state, an effect that fails: partial_effect; on one
  that signalled success and changed nothing (volatile paths aside), a failing effect:
  phantom_effect under a biconditional success signal, otherwise UNTESTABLE
  effect_absent_not_biconditional (effects about the result, or that hold trivially when
  nothing happens, cannot hide a phantom this way);
- a frame clause's scope changed outside its writes → frame_break;
- an argument's variant leaves the post-state equal to the happy one although the call
  changed state → ignored_argument;
- an invariant true before a legal call (or a step of a sequence) and false after →
  invariant_break;
- a false precondition not refused, or refused with a state change or the wrong error
  type → unenforced_precondition;
- the snapshot after reset differs from a fresh one → reset_leak;
- an artifact accepted outside its validity window on the environment's clock, or
  refused inside it → validity_break; an altered artifact accepted → integrity_break.
"""

from __future__ import annotations

import copy
import hashlib
import typing
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.checker.observation import check_observations
from harness.checker.probes import (
    AssignmentSearch,
    CompiledClause,
    CompiledContract,
    Harvest,
    argument_pools,
    falsy,
    harvest,
)
from harness.checker.verdicts import (
    ClauseVerdict,
    DefectClass,
    ProbeRecord,
    StateChange,
    ToolReport,
    UntestableReason,
    Verdict,
    Witness,
    roll_up,
)
from harness.contracts.predicate import PredicateRuntimeError
from harness.targets.adapter import Adapter, InvokeOutcome, ResetUnsupported
from harness.targets.equality import (
    JSON,
    STRICT,
    EqualityPolicy,
    bind_pattern,
    canonical_equal,
    diff,
    format_path,
    mask_state,
    parse_pattern,
)

SUCCESS_CLAUSE = "success"
RESET_CLAUSE = "reset"
VARIANTS_PER_ARGUMENT = 2
RECORDED_STARTS = 8  # recorded pre-states per tool: each probe from one replays its prefix


@dataclass
class ProbeRun:
    kind: str
    tool: str
    args: dict[str, JSON]
    pre: JSON
    post: JSON
    outcome: InvokeOutcome
    env: Any
    setup: tuple[ProbeRecord, ...] = ()

    def records(self) -> list[ProbeRecord]:
        """The setup calls that prepared the state, then this call."""
        return [*self.setup, self.record()]

    def record(self) -> ProbeRecord:
        return ProbeRecord(
            kind=self.kind,
            tool=self.tool,
            args=self.args,
            success=self.outcome.success,
            result=self.outcome.result,
            error_type=self.outcome.error_type,
            error_message=self.outcome.error_message,
        )


def _changes(
    before: JSON, after: JSON, policy: EqualityPolicy, limit: int = 20
) -> list[StateChange]:
    return [
        StateChange(path=d.dotted(), before=_plain(d.before), after=_plain(d.after))
        for d in diff(before, after, policy=policy, limit=limit)
    ]


def _plain(value: JSON) -> JSON:
    return None if repr(value) == "<missing>" else value


def copy_of(adapter: Adapter, env: Any) -> Any | None:
    """`adapter.copy_environment(env)` when the adapter offers one, else None: a recorded
    pre-state is probed many times, and with a copy its task's prefix is replayed once
    instead of once per probe. An adapter offers it where a copy is cheaper than a rebuild
    (tau2-telecom: about 1 ms against 15 ms for a task's initialization)."""
    copier = getattr(adapter, "copy_environment", None)
    return None if copier is None else copier(env)


@dataclass
class Start:
    """Where probes begin: a fresh environment, or one after legal setup calls of other tools
    (for preconditions that read state no argument choice can change)."""

    calls: tuple[tuple[str, dict[str, JSON]], ...]
    records: tuple[ProbeRecord, ...]
    state: JSON
    pools: dict[str, list[JSON]]
    search: AssignmentSearch
    task: str | None = None  # a recorded call's task: start from its initial environment
    # a recorded pre-state kept whole when the adapter copies environments
    # (`harness.targets.adapter.copy_of`): each probe starts from a copy of it instead of
    # rebuilding the task's environment and replaying the prefix
    template: Any = None


class _Ledger:
    """Per-clause observations across probes, folded into one verdict per clause."""

    def __init__(self, clause_ids: list[str]):
        self.ids = clause_ids
        self.graded: dict[str, int] = dict.fromkeys(clause_ids, 0)
        self.violation: dict[str, ClauseVerdict] = {}
        self.untestable: dict[str, tuple[UntestableReason, str]] = {}

    def conform(self, clause_id: str) -> None:
        self.graded[clause_id] += 1

    def violate(
        self, clause_id: str, defect: DefectClass, witness: Witness, label: str | None = None
    ) -> None:
        self.graded[clause_id] += 1
        self.violation.setdefault(
            clause_id,
            ClauseVerdict(
                clause_id=clause_id,
                verdict=Verdict.VIOLATES,
                defect_class=defect,
                detail=witness.detail,
                witness=witness,
                label=label,
            ),
        )

    def cannot(self, clause_id: str, reason: UntestableReason, detail: str) -> None:
        self.untestable.setdefault(clause_id, (reason, detail))

    def verdicts(self) -> list[ClauseVerdict]:
        out = []
        for clause_id in self.ids:
            graded = self.graded[clause_id]
            if clause_id in self.violation:
                out.append(self.violation[clause_id].model_copy(update={"probes_graded": graded}))
            elif graded:
                out.append(
                    ClauseVerdict(
                        clause_id=clause_id, verdict=Verdict.CONFORMS, probes_graded=graded
                    )
                )
            else:
                reason, detail = self.untestable.get(
                    clause_id, (UntestableReason.NO_LEGAL_PROBE, "no probe graded this clause")
                )
                out.append(
                    ClauseVerdict(
                        clause_id=clause_id,
                        verdict=Verdict.UNTESTABLE,
                        reason=reason,
                        detail=detail,
                    )
                )
        return out


def _reason(exc: PredicateRuntimeError) -> UntestableReason:
    try:
        return UntestableReason(exc.reason)
    except ValueError:
        return UntestableReason.PREDICATE_TYPE_ERROR


class ToolCheck:
    """All probes and verdicts for one tool of one target."""

    def __init__(
        self,
        adapter: Adapter,
        compiled: CompiledContract,
        partners: Mapping[str, CompiledContract],
        *,
        seed: int = 0,
        policy: EqualityPolicy = STRICT,
        recorded: Sequence[Any] = (),
    ):
        self.adapter = adapter
        self.recorded = list(recorded)  # harness.targets.recorded.RecordedCall of this tool
        self.c = compiled
        self.contract = compiled.contract
        self.tool = compiled.contract.tool
        self.partners = partners
        self.seed = seed
        self.policy = policy
        self.masks = [parse_pattern(p) for p in compiled.volatile]
        ids = [*self.contract.clause_ids(), SUCCESS_CLAUSE]
        if self.contract.reset is not None:
            ids.append(RESET_CLAUSE)
        self.ledger = _Ledger(ids)
        self.probes_run = 0
        self._starts: list[Start] = []
        self._recorded_starts: list[Start] = []
        self._setups_built = False
        self._harvests: dict[int, tuple[JSON, Harvest]] = {}  # by id of the state, kept alive
        self._state_lists: dict[int, list[JSON]] = {}  # harvested lists by id, kept alive
        self._state_lists_passed = False

    # --- running -------------------------------------------------------------------------

    def changes(self, before: JSON, after: JSON) -> list[StateChange]:
        return _changes(before, after, self.policy)

    def snapshot(self, env: Any) -> JSON:
        return mask_state(self.adapter.snapshot(env), self.masks)

    def run(
        self,
        kind: str,
        args: dict[str, JSON],
        start: Start | None = None,
        *,
        env: Any = None,
        tool: str | None = None,
    ) -> ProbeRun:
        """Call a tool: on `env` as it is, or on a fresh environment prepared by `start`."""
        setup: tuple[ProbeRecord, ...] = ()
        if env is None:
            if start is not None and start.template is not None:
                env = copy_of(self.adapter, start.template)
            elif start is not None and start.task is not None:
                env = self.adapter.task_environment(start.task)  # type: ignore[attr-defined]
                self._replay(env, start.calls)
            else:
                env = self.adapter.fresh()
                self._replay(env, start.calls if start is not None else ())
            if start is not None:
                setup = start.records
        pre = self.snapshot(env)
        outcome = self.adapter.invoke(env, tool or self.tool, self._passed(args))
        self.probes_run += 1
        self.forget_truths()
        return ProbeRun(kind, tool or self.tool, args, pre, self.snapshot(env), outcome, env, setup)

    def _replay(self, env: Any, calls: Sequence[tuple[str, dict[str, JSON]]]) -> None:
        for name, call_args in calls:
            self.adapter.invoke(env, name, self._passed(call_args))
            self.probes_run += 1

    def _passed(self, args: Mapping[str, JSON]) -> dict[str, JSON]:
        """The arguments as a tool gets them. A harvested list is part of a state, and the
        tool may change it, now or later (it may keep it): see `forget_truths`."""
        if not self._state_lists_passed:
            self._state_lists_passed = any(id(v) in self._state_lists for v in args.values())
        return dict(args)

    def forget_truths(self) -> None:
        """After a tool ran or a reset: once a tool was passed a list of a state, the states
        may have changed, and so may their harvests and the truths searches memoised."""
        if self._state_lists_passed:
            self._harvests.clear()
            for start in [*self._starts, *self._recorded_starts]:
                start.search.forget()

    def pools(self, compiled: CompiledContract, state: JSON, tool: str) -> dict[str, list[JSON]]:
        """`argument_pools`, harvesting each state once (until `forget_truths` forgets)."""
        if id(state) not in self._harvests:
            found = harvest(state)
            self._harvests[id(state)] = (state, found)
            self._state_lists.update(zip(map(id, found.lists), found.lists, strict=True))
        return argument_pools(
            compiled, state, self.seed, tool, self._harvests[id(state)][1], self.hints(tool)
        )

    def hints(self, tool: str) -> dict[str, Any]:
        """The tool's parameter annotations (none when they do not resolve)."""
        try:
            return typing.get_type_hints(self.adapter.tool_function(tool))
        except Exception:  # unresolvable annotations: every harvested value stays a candidate
            return {}

    def starts(self, initial: JSON) -> Iterator[Start]:
        """The fresh start, then (built once, when first needed) one start per tool of the
        target, this one included, whose legal call from a fresh environment changes state."""
        if not self._starts:
            pools = self.pools(self.c, initial, self.tool)
            self._starts.append(
                Start((), (), initial, pools, AssignmentSearch(self.c, pools, initial))
            )
        yield self._starts[0]
        if not self._setups_built:
            self._setups_built = True
            self._starts.extend(self._setup_starts(initial))
        yield from self._starts[1:]

    def _setup_starts(self, initial: JSON) -> Iterator[Start]:
        for name, partner in sorted(self.partners.items()):
            partner_pools = self.pools(partner, initial, name)
            args = AssignmentSearch(partner, partner_pools, initial).find()
            if args is None:
                continue
            run = self.run("setup", args, tool=name, env=self.adapter.fresh())
            if not self.signalled(run, partner) or canonical_equal(run.post, initial):
                continue
            pools = self.pools(self.c, run.post, self.tool)
            search = AssignmentSearch(self.c, pools, run.post)
            yield Start(((name, args),), (run.record(),), run.post, pools, search)

    def find(
        self, initial: JSON, falsify: str | None = None, prefer: Mapping[str, JSON] | None = None
    ) -> tuple[Start, dict[str, JSON]] | None:
        """The first start and assignment with every precondition true except `falsify`."""
        for start in self.starts(initial):
            args = start.search.find(falsify=falsify, prefer=prefer)
            if args is not None:
                return start, args
        return None

    def signalled(self, run: ProbeRun, compiled: CompiledContract | None = None) -> bool:
        """Whether the call said it succeeded, by the contract's success signal."""
        compiled = compiled or self.c
        if not run.outcome.success:
            return False
        if compiled.success is None:
            return True
        try:
            return compiled.success.holds({"result": run.outcome.result, "args": run.args})
        except PredicateRuntimeError:
            return False

    def bindings(self, run: ProbeRun, args: Mapping[str, JSON] | None = None) -> dict[str, JSON]:
        return {
            "pre": run.pre,
            "post": run.post,
            "args": dict(run.args if args is None else args),
            "result": run.outcome.result,
        }

    def holds(self, clause: CompiledClause, bindings: Mapping[str, JSON]) -> bool | None:
        try:
            return clause.predicate.holds(bindings, policy=self.policy)
        except PredicateRuntimeError as exc:
            self.ledger.cannot(clause.id, _reason(exc), str(exc))
            return None

    # --- the check -------------------------------------------------------------------------

    def check(self) -> ToolReport:
        initial = self.snapshot(self.adapter.fresh())
        found = self.find(initial)
        fresh = next(self.starts(initial))
        happy: ProbeRun | None = None
        start: Start | None = None
        if found is None:
            self._no_legal_probe(fresh.search)
        else:
            start, happy_args = found
            happy = self.run("happy", happy_args, start)
            self.grade_legal(happy)
            self.check_reset(happy, initial)
        for clause in self.c.preconditions:
            violating = self.find(initial, falsify=clause.id, prefer=happy and happy.args)
            if violating is None:
                reason = UntestableReason.NO_VIOLATING_PROBE
                detail = "no argument choice falsifies this precondition alone, from a fresh "
                detail += "state or after one legal call of another tool"
                if clause.id in fresh.search.errors:
                    reason = _reason(fresh.search.errors[clause.id])
                    detail = str(fresh.search.errors[clause.id])
                self.ledger.cannot(clause.id, reason, detail)
                continue
            self.grade_violating(
                self.run(f"violate:{clause.id}", violating[1], violating[0]), clause
            )
        if happy is not None and start is not None:
            self.check_arguments(happy, start)
            self.check_joint_falsy(happy, start)
            self.check_sequence(happy, start, initial)
        self.check_recorded()
        check_observations(self)
        verdicts = self.ledger.verdicts()
        return ToolReport(
            tool=self.tool, verdict=roll_up(verdicts), clauses=verdicts, probes_run=self.probes_run
        )

    def _no_legal_probe(self, search: AssignmentSearch) -> None:
        detail = "no argument choice satisfies every precondition in a fresh state"
        for clause_id, exc in search.errors.items():
            self.ledger.cannot(clause_id, _reason(exc), str(exc))
            detail = f"precondition {clause_id} cannot be evaluated: {exc}"
        for clause_id in self.ledger.ids:
            if not clause_id.startswith("pre."):
                self.ledger.cannot(clause_id, UntestableReason.NO_LEGAL_PROBE, detail)

    # --- legal calls -------------------------------------------------------------------------

    def grade_legal(self, run: ProbeRun) -> bool:
        """Grade success, effects, frame and invariants on a legal call; False if refused."""
        if not self.signalled(run):
            self.ledger.violate(
                SUCCESS_CLAUSE,
                DefectClass.REFUSED_LEGAL_CALL,
                Witness(
                    probes=run.records(),
                    state_diff=_changes(run.pre, run.post, self.policy),
                    detail=f"every precondition holds but the call was refused "
                    f"({run.outcome.error_type}: {run.outcome.error_message})",
                ),
            )
            for clause_id in self.ledger.ids:
                self.ledger.cannot(
                    clause_id, UntestableReason.LEGAL_CALL_REFUSED, "the legal probe was refused"
                )
            return False
        self.ledger.conform(SUCCESS_CLAUSE)
        self.grade_effects(run)
        self.grade_frame(run)
        self.grade_invariants(run, self.c.invariants)
        return True

    def grade_effects(self, run: ProbeRun) -> None:
        bindings = self.bindings(run)
        truths = {clause.id: self.holds(clause, bindings) for clause in self.c.effects}
        held = [cid for cid, t in truths.items() if t is True]
        failed = [cid for cid, t in truths.items() if t is False]
        for cid in held:
            self.ledger.conform(cid)
        if not failed:
            return
        changes = _changes(run.pre, run.post, self.policy)
        if changes:  # something happened, but not all the contract says
            defect = DefectClass.PARTIAL_EFFECT
            detail = "{cid} does not hold although the call changed the state"
        elif self.contract.success.biconditional:
            defect = DefectClass.PHANTOM_EFFECT
            detail = "success was signalled but the state did not change at all ({cid})"
        else:
            for cid in failed:
                self.ledger.cannot(
                    cid,
                    UntestableReason.EFFECT_ABSENT_NOT_BICONDITIONAL,
                    "no effect happened; without a biconditional success signal that is allowed",
                )
            return
        clauses = {clause.id: clause for clause in self.c.effects}
        for cid in failed:
            text = detail.format(cid=cid) + self.type_hint(clauses[cid], bindings)
            self.ledger.violate(
                cid, defect, Witness(probes=run.records(), state_diff=changes, detail=text)
            )

    def type_hint(self, clause: CompiledClause, bindings: Mapping[str, JSON]) -> str:
        """Equality stays type-strict; the witness says when the clause fails only by type
        (it would hold if an int and a float of equal value compared equal)."""
        if self.policy.numeric_tower:
            return ""
        try:
            tower = clause.predicate.holds(bindings, policy=EqualityPolicy(numeric_tower=True))
        except PredicateRuntimeError:
            return ""
        return "; equal in value, differ in type: int vs float" if tower is True else ""

    def grade_frame(self, run: ProbeRun) -> None:
        for clause in self.contract.frame:
            writes = [bind_pattern(p, run.args) for p in clause.writes]
            scopes = [bind_pattern(p, run.args) for p in clause.scope]
            outside = [
                d
                for d in diff(run.pre, run.post, masks=writes, policy=self.policy)
                if any(
                    len(s) <= len(d.path)
                    and all(seg in ("*", str(k)) for seg, k in zip(s, d.path, strict=False))
                    for s in scopes
                )
            ]
            if not outside:
                self.ledger.conform(clause.id)
                continue
            self.ledger.violate(
                clause.id,
                DefectClass.FRAME_BREAK,
                Witness(
                    probes=run.records(),
                    state_diff=[
                        StateChange(path=d.dotted(), before=_plain(d.before), after=_plain(d.after))
                        for d in outside
                    ],
                    detail="state changed outside the declared writes: "
                    + ", ".join(format_path(d.path) for d in outside[:5]),
                ),
            )

    def grade_invariants(
        self,
        run: ProbeRun,
        invariants: tuple[CompiledClause, ...],
        history: list[ProbeRun] | None = None,
    ) -> None:
        for clause in invariants:
            before = self.holds(clause, {"pre": run.pre, "post": run.pre, "args": run.args})
            if before is not True:
                continue  # broken before the call: not this call's doing
            after = self.holds(clause, self.bindings(run))
            if after is True:
                self.ledger.conform(clause.id)
            elif after is False:
                probes = [rec for r in (history or []) for rec in r.records()] + [run.record()]
                self.ledger.violate(
                    clause.id,
                    DefectClass.INVARIANT_BREAK,
                    Witness(
                        probes=probes,
                        state_diff=_changes(run.pre, run.post, self.policy),
                        detail=f"invariant held before {run.tool} and fails after it",
                    ),
                )

    # --- illegal calls -------------------------------------------------------------------------

    def grade_violating(self, run: ProbeRun, clause: CompiledClause) -> None:
        expect = self.contract.on_precondition_violation
        problems = []
        if expect.error and self.signalled(run):
            problems.append("the precondition is false but the call succeeded")
        changes = _changes(run.pre, run.post, self.policy)
        if expect.state_unchanged and changes:
            problems.append("the precondition is false but the state changed")
        if (
            expect.error_type
            and not run.outcome.success
            and run.outcome.error_type != expect.error_type
        ):
            problems.append(f"refused with {run.outcome.error_type}, not {expect.error_type}")
        if not problems:
            self.ledger.conform(clause.id)
            return
        self.ledger.violate(
            clause.id,
            DefectClass.UNENFORCED_PRECONDITION,
            Witness(probes=run.records(), state_diff=changes, detail="; ".join(problems)),
        )

    # --- effective arguments -------------------------------------------------------------------

    def check_arguments(self, happy: ProbeRun, start: Start) -> None:
        happy_changed = bool(diff(happy.pre, happy.post, policy=self.policy, limit=1))
        for arg_clause in self.contract.arguments:
            name = arg_clause.argument
            readers = [c for c in self.c.effects if name in c.predicate.args_read]
            variants = 0
            for value in start.pools[name]:
                if variants >= VARIANTS_PER_ARGUMENT:
                    break
                if canonical_equal(value, happy.args[name], policy=self.policy):
                    continue
                args = {**happy.args, name: value}
                if not start.search.is_legal(args) or not self._intended_differ(
                    happy, args, readers
                ):
                    continue
                variants += 1
                run = self.run(f"variant:{name}", args, start)
                if not self.grade_legal(run):
                    continue
                changed = happy_changed or bool(
                    diff(run.pre, run.post, policy=self.policy, limit=1)
                )
                if not changed:
                    self.ledger.cannot(
                        arg_clause.id,
                        UntestableReason.EFFECT_ABSENT_NOT_BICONDITIONAL,
                        "neither call changed the state, so there is no effect to vary",
                    )
                elif canonical_equal(happy.post, run.post, policy=self.policy):
                    self.ledger.violate(
                        arg_clause.id,
                        DefectClass.IGNORED_ARGUMENT,
                        Witness(
                            probes=[*happy.records(), run.record()],
                            state_diff=_changes(happy.pre, happy.post, self.policy),
                            detail=f"{name}={happy.args[name]!r} and {name}={value!r} leave the "
                            "same post-state although the contract's effects differ",
                        ),
                    )
                else:
                    self.ledger.conform(arg_clause.id)
            if variants == 0:
                self.ledger.cannot(
                    arg_clause.id,
                    UntestableReason.NO_VARIANT_PROBE,
                    f"no legal value of {name} whose intended effect differs from the happy call's",
                )

    def _intended_differ(
        self, happy: ProbeRun, variant_args: Mapping[str, JSON], readers: list[CompiledClause]
    ) -> bool:
        """Whether the contract requires the variant's post-state to differ from the happy one:
        some effect, read with the variant's arguments, does not hold on the happy post-state."""
        if not readers:
            return True
        bindings = self.bindings(happy, variant_args)
        for clause in readers:
            try:
                if not clause.predicate.holds(bindings, policy=self.policy):
                    return True
            except PredicateRuntimeError:
                continue
        return False

    def check_joint_falsy(self, happy: ProbeRun, start: Start) -> None:
        happy_args = happy.args
        chosen: dict[str, JSON] = {}
        for arg_clause in self.contract.arguments:
            name = arg_clause.argument
            for value in start.pools[name]:
                if falsy(value) and start.search.is_legal({**happy_args, name: value}):
                    chosen[name] = value
                    break
        if len(chosen) < 2:
            return
        args = {**happy_args, **chosen}
        if canonical_equal(args, happy_args) or not start.search.is_legal(args):
            return
        self.grade_legal(self.run("joint_falsy", args, start))

    # --- recorded pre-states (1.3.0) --------------------------------------------------------------

    def check_recorded(self) -> None:
        """Probes from the pre-state of each sampled recorded call (see the module docstring)."""
        for call in self._recorded_sample():
            start = self._recorded_start(call)
            self._recorded_starts.append(start)
            args = self._completed(call.args)
            truths = start.search.truths(args)
            false = [cid for cid, t in truths.items() if t is False]
            happy: ProbeRun | None = None
            if all(t is True for t in truths.values()):
                run = self.run("recorded", args, start)
                happy = run if self.grade_legal(run) else None
            elif len(false) == 1 and all(t is not None for t in truths.values()):
                clause = next(c for c in self.c.preconditions if c.id == false[0])
                self.grade_violating(self.run("recorded", args, start), clause)
            if happy is None:
                legal = start.search.find(prefer=args)
                if legal is not None:
                    run = self.run("recorded:happy", legal, start)
                    happy = run if self.grade_legal(run) else None
            for clause in self.c.preconditions:
                if clause.id in false and len(false) == 1:
                    continue  # the recorded call itself was this precondition's probe
                violating = start.search.find(falsify=clause.id, prefer=args)
                if violating is not None:
                    run = self.run(f"recorded:violate:{clause.id}", violating, start)
                    self.grade_violating(run, clause)
            if happy is not None:
                self.check_arguments(happy, start)

    def _recorded_sample(self) -> list[Any]:
        """Up to RECORDED_STARTS recorded calls, in an order seeded by the checker's seed."""

        def order(call: Any) -> str:
            key = f"{self.seed}:{self.tool}:{call.task}:{call.step}"
            return hashlib.sha256(key.encode()).hexdigest()

        return sorted(self.recorded, key=order)[:RECORDED_STARTS]

    def _completed(self, args: Mapping[str, JSON]) -> dict[str, JSON]:
        """A recorded call's arguments with every omitted optional argument at its default
        (the call the tool received), so the preconditions can read them."""
        out = copy.deepcopy(dict(args))  # a tool may change what it is passed: never the corpus
        for name, spec in self.contract.signature.items():
            if name not in out and spec.optional:
                out[name] = spec.default
        return out

    def _recorded_start(self, call: Any) -> Start:
        """The recorded call's pre-state: its task's initial environment after the prefix
        (with the tools as bound now), with the recorded values first in every pool."""
        env = self.adapter.task_environment(call.task)  # type: ignore[attr-defined]
        calls: list[tuple[str, dict[str, JSON]]] = []
        records: list[ProbeRecord] = []
        for step in call.prefix:
            outcome = self.adapter.invoke(env, step.tool, copy.deepcopy(step.args))
            self.probes_run += 1
            calls.append((step.tool, copy.deepcopy(step.args)))
            # results left out: the task and the prefix's arguments reproduce them
            records.append(
                ProbeRecord(
                    kind=f"prefix:{call.task}",
                    tool=step.tool,
                    args=dict(step.args),
                    success=outcome.success,
                    error_type=outcome.error_type,
                )
            )
        self.forget_truths()
        state = self.snapshot(env)
        pools = self.pools(self.c, state, self.tool)
        args = self._completed(call.args)
        pools = {
            name: [args[name], *(v for v in pool if not canonical_equal(v, args[name]))]
            if name in args
            else pool
            for name, pool in pools.items()
        }
        search = AssignmentSearch(self.c, pools, state)
        template = copy_of(self.adapter, env)  # kept untouched: every probe copies it
        return Start(tuple(calls), tuple(records), state, pools, search, call.task, template)

    # --- sequences and reset -------------------------------------------------------------------

    def check_sequence(self, happy: ProbeRun, start: Start, initial: JSON) -> None:
        """The happy call, then a legal call of each tool sharing an invariant with this one."""
        own = {c.id for c in self.c.invariants}
        partners = [
            p
            for name, p in sorted(self.partners.items())
            if name != self.tool and own & {c.id for c in p.invariants}
        ]
        if not partners:
            return
        first = self.run("sequence", happy.args, start)
        if not self.signalled(first):
            return
        history = [first]
        for partner in partners:
            state = history[-1].post
            partner_pools = self.pools(partner, state, partner.contract.tool)
            args = AssignmentSearch(partner, partner_pools, state).find()
            if args is None:
                continue
            step = self.run("sequence", args, env=first.env, tool=partner.contract.tool)
            step.setup = ()
            if not self.signalled(step, partner):
                continue
            self.grade_invariants(step, self.c.invariants, history)
            history.append(step)
        self.check_reset(history[-1], initial, history)

    def check_reset(
        self, run: ProbeRun, initial: JSON, history: list[ProbeRun] | None = None
    ) -> None:
        if self.contract.reset is None:
            return
        probes = [rec for r in (history or [run]) for rec in r.records()]
        try:
            self.adapter.reset(run.env)
        except ResetUnsupported as exc:
            self.ledger.cannot(RESET_CLAUSE, UntestableReason.NO_RESET_PATH, str(exc) or "no reset")
            return
        except Exception as exc:  # the target's reset itself failed: a leak of a kind
            self.ledger.violate(
                RESET_CLAUSE,
                DefectClass.RESET_LEAK,
                Witness(probes=probes, detail=f"reset raised {type(exc).__name__}: {exc}"),
            )
            return
        finally:
            self.forget_truths()  # the reset may change values the starts' states share
        after = self.snapshot(run.env)
        changes = _changes(initial, after, self.policy)
        if not self.contract.reset.restores_initial or not changes:
            self.ledger.conform(RESET_CLAUSE)
            return
        self.ledger.violate(
            RESET_CLAUSE,
            DefectClass.RESET_LEAK,
            Witness(
                probes=probes,
                state_diff=changes,
                detail="after reset the state differs from a fresh environment at "
                + ", ".join(c.path for c in changes[:5]),
            ),
        )
