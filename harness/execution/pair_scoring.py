"""Scoring one pair, wherever it runs: the `RunContext` prepared once per process (targets,
baseline verdicts, liveness observations, grader verdicts), `score_pair` -> `PairScore`, and
what an executor is given (`RunJob`) and reports (`PairOutcome`). Executors import this
module; the runner hands them the pairs, so no arrow points back."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from harness.checker.verdicts import ToolReport, Verdict
from harness.execution.draw import Corpus, DrawnPair
from harness.execution.freeze import (
    checker_for,
)
from harness.execution.ledger import (
    MissCause,
    NewViolation,
    PairScore,
    PairStatus,
)
from harness.execution.liveness import Observation, differences, observe
from harness.execution.miss_cause import call_changes, clause_patterns, miss_cause
from harness.execution.negative_controls import patched_contract
from harness.execution.plan import Plan
from harness.targets.adapter import GraderAdapter
from harness.targets.registry import Target, load_target


@dataclass
class RunContext:
    """Everything a child needs, prepared once in the parent and inherited by fork."""

    plan: Plan
    freeze_id: str
    post_hoc: bool
    corpus: Corpus
    targets: dict[str, Target]
    checker: Any
    baselines: dict[tuple[str, str], ToolReport] = field(default_factory=dict)
    observations: dict[tuple[str, str], list[Observation]] = field(default_factory=dict)
    grades: dict[tuple[str, str], bool] = field(default_factory=dict)  # (target, task) -> utility


@dataclass(frozen=True)
class RunJob:
    """What an executor is given besides the pairs: the verified plan and its run."""

    plan_path: Path
    plan: Plan
    root: Path
    run_id: str  # the run folder's name: the freeze id (+ .checker for a comparison checker)
    post_hoc: bool
    corpus: Corpus
    folder: Path
    freeze_id: str  # every row's: the freeze id, or posthoc-<id of the current inputs>
    checker: str | None  # a comparison checker of the plan; None: the plan's checker
    hashes: dict[str, dict[str, str]]  # the inputs as verified (freeze.current_inputs)
    versions: dict[str, str]  # target versions as verified


@dataclass(frozen=True)
class PairOutcome:
    """One scored pair as it crosses from a worker to the ledger writer."""

    pair_id: str
    score: PairScore  # what scoring decided; see score_pair
    started_at: str
    seconds: float


class Executor(Protocol):
    """Scores pairs somewhere and reports each outcome to `on_outcome`, in the calling
    thread; it may report a pair more than once (the caller keeps the first)."""

    def describe(self) -> dict[str, Any]: ...  # run.json fields: executor, workers...

    def run(
        self, job: RunJob, pairs: list[DrawnPair], on_outcome: Callable[[PairOutcome], None]
    ) -> None: ...


def new_context(
    plan: Plan,
    freeze_id: str,
    post_hoc: bool,
    liveness: dict[str, Any],
    corpus: Corpus | None,
    checker: str | None = None,
) -> RunContext:
    """A context with targets and checker loaded; `complete_context` adds what pairs need."""
    if corpus is None:  # a Dask worker gets the liveness calls, not the whole corpus
        corpus = Corpus(plan=plan.name, seed=plan.seed, pairs=[], liveness=liveness)
    targets = {t.name: t for t in map(load_target, plan.targets())}  # as mutants name them
    return RunContext(plan, freeze_id, post_hoc, corpus, targets, checker_for(plan, checker))


def complete_baselines(
    ctx: RunContext, pairs: list[DrawnPair], cache: Path | None
) -> list[tuple[str, str]]:
    """The baseline verdicts of the original tools the pairs touch (cached in the JSON file
    `cache` when given); returns those (target, tool) keys."""
    keys = list(dict.fromkeys((p.mutant.target, p.tool) for p in pairs))
    cached: dict[str, Any] = (
        json.loads(cache.read_text()) if cache is not None and cache.exists() else {}
    )
    for name, tool in keys:
        if (name, tool) in ctx.baselines:
            continue
        label = f"{name}:{tool}"
        if label in cached:
            ctx.baselines[(name, tool)] = ToolReport.model_validate(cached[label])
            continue
        report = ctx.checker.check(ctx.targets[name], [tool]).tool(tool)
        ctx.baselines[(name, tool)] = report
        cached[label] = report.model_dump(mode="json")
    if cache is not None:
        _write_json(cache, cached)
    return keys


def write_baseline(job: RunJob, pairs: list[DrawnPair]) -> None:
    """The run folder's baseline.json for an executor whose workers keep their baselines
    to themselves (Dask): computed here, once per tool, as the local executor does."""
    ctx = new_context(
        job.plan, job.freeze_id, job.post_hoc, job.corpus.liveness, job.corpus, job.checker
    )
    complete_baselines(ctx, pairs, job.folder / "baseline.json")


def complete_context(ctx: RunContext, pairs: list[DrawnPair], cache: Path | None) -> None:
    """Baselines (cached in the JSON file `cache` when given), liveness observations and
    grader verdicts of the original tools the pairs touch, each computed once per context."""
    keys = complete_baselines(ctx, pairs, cache)
    for name, tool in keys:
        calls = ctx.corpus.liveness.get(name, {}).get(tool)
        if (name, tool) not in ctx.observations and calls is not None:
            ctx.observations[(name, tool)] = observe(ctx.targets[name].adapter, tool, calls)
    for name, tool in keys:
        adapter = ctx.targets[name].adapter
        if isinstance(adapter, GraderAdapter):
            for task in adapter.grader_tasks(tool):
                if (name, task) not in ctx.grades:
                    ctx.grades[(name, task)] = adapter.grade(task)


def score_pair(ctx: RunContext, pair: DrawnPair) -> PairScore:
    """What the pair scores. Raises only BaseExceptions the mutant caused."""
    from harness.mutation.apply import MutantCompileError, StaleMutant, apply_in_memory

    mutant = pair.mutant
    target = ctx.targets[mutant.target]
    try:
        apply_in_memory(target.adapter, mutant)
    except MutantCompileError as exc:
        return PairScore(status=PairStatus.COMPILE_ERROR, error=str(exc))
    except StaleMutant as exc:
        return PairScore(status=PairStatus.INFRA_ERROR, error=f"stale mutant: {exc}")
    key = (mutant.target, pair.tool)
    if pair.contract_patch is not None:  # a negative control's look-alike input
        contract = target.contracts[pair.tool]
        target.contracts[pair.tool] = patched_contract(contract, pair.contract_patch)
    corpus = ctx.corpus.liveness.get(mutant.target, {}).get(pair.tool, [])
    mutant_observations = observe(target.adapter, pair.tool, corpus)
    found = differences(ctx.observations[key], mutant_observations)
    caught, tasks = grader_verdict(ctx, target, pair.tool)
    seen = {"live": bool(found), "grader_caught": caught, "grader_tasks": tasks}
    try:
        report = ctx.checker.check(target, [pair.tool]).tool(pair.tool)
    except Exception as exc:  # the checker under test failed on this mutant
        return PairScore(
            **seen,
            status=PairStatus.MISSED,
            miss_cause=MissCause.CHECKER_CRASH,
            error=f"{type(exc).__name__}: {exc}",
        )
    baseline = {c.clause_id for c in ctx.baselines[key].violations()}
    new = [c for c in report.violations() if c.clause_id not in baseline]
    if new:
        classes = {c.defect_class for c in new}
        return PairScore(
            **seen,
            status=PairStatus.DETECTED,
            tool_verdict=report.verdict,
            new_violations=[
                NewViolation(clause_id=c.clause_id, defect_class=c.defect_class) for c in new
            ],
            class_matched=None if mutant.defect_class is None else mutant.defect_class in classes,
            witness=new[0].witness,
        )
    if report.verdict is Verdict.UNTESTABLE:
        return PairScore(**seen, status=PairStatus.UNTESTABLE, tool_verdict=report.verdict)
    changes = call_changes(ctx.observations[key], mutant_observations, corpus)
    cause = miss_cause(changes, clause_patterns(target.contracts[pair.tool]))
    return PairScore(
        **seen,
        status=PairStatus.MISSED,
        tool_verdict=report.verdict,
        miss_cause=cause,
        class_matched=None if mutant.defect_class is None else False,
    )


def grader_verdict(ctx: RunContext, target: Target, tool: str) -> tuple[bool | None, list[str]]:
    """(grader_caught, grader_tasks): replay the target's own grader on every task that
    calls `tool` (mutant applied) and name the tasks whose utility verdict differs from the
    original's; (None, []) for a target without a grader."""
    adapter = target.adapter
    if not isinstance(adapter, GraderAdapter):
        return None, []
    tasks = adapter.grader_tasks(tool)
    if not tasks:
        return False, []
    changed = []
    for task in tasks:
        try:
            verdict = adapter.grade(task)
        except Exception:  # the mutant broke the replay itself: the grader sees a failure
            verdict = False
        if verdict != ctx.grades[(target.name, task)]:
            changed.append(task)
    return bool(changed), changed


def _write_json(path: Path, payload: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, indent=1, sort_keys=True, default=str) + "\n")
    tmp.replace(path)
