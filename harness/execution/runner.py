"""`harness run`: score every drawn pair of a frozen plan into an append-only ledger.

`execute` verifies the freeze, opens the ledger and hands the pairs not yet in it to an
executor (`harness.execution.executors`: the local fork-per-pair pool, or Dask). Whatever
the executor, the pair's row fields come from `score_pair` on a `RunContext` prepared once
per process (targets, the baseline verdicts of the original tools, their liveness
observations, the grader's verdicts), and the process that called `execute` is the single
writer of the ledger: an outcome whose pair is already recorded is dropped, so a rerun
batch never writes a row twice. Rows depend on nothing but the plan, its seed and the
freeze, never on the executor, the worker count or the order in which pairs finish.

Before the first pair, `execute` looks up the freeze commit in git history
(`harness.execution.history`) and the installed package versions: an uncommitted (or
changed) freeze record and a package version other than the frozen one are warnings, written
to run.json, and refusals under `strict`.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from harness.checker.verdicts import ToolReport, Verdict
from harness.errors import Problem, UserError
from harness.execution.controls import patched_contract
from harness.execution.coverage import (
    Reuse,
    ToolCoverage,
    definition_unchanged,
    record_tool,
    reuse_for,
)
from harness.execution.draw import Corpus, DrawnPair, check_plan, load_corpus
from harness.execution.freeze import (
    Verification,
    checker_for,
    freeze_id_of,
    record_path,
    run_checker,
    verified_inputs,
)
from harness.execution.history import FreezeCommit, freeze_commit
from harness.execution.isolation import signals_held
from harness.execution.ledger import (
    LedgerRow,
    LedgerWriter,
    MissCause,
    NewViolation,
    PairStatus,
    Timing,
    read_rows,
)
from harness.execution.liveness import Observation, differences, observe
from harness.execution.miss_cause import call_changes, clause_patterns, miss_cause
from harness.execution.plan import Plan, project_root
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
    skip_by_coverage: bool = False  # reuse the original's runs a mutant cannot change (coverage)
    coverage: dict[tuple[str, str], ToolCoverage] = field(default_factory=dict)
    reuse: dict[str, Reuse] = field(default_factory=dict)  # pair id -> runs taken from the original


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
    skip_by_coverage: bool = False  # harness.execution.coverage; rows identical either way


@dataclass(frozen=True)
class PairOutcome:
    """One scored pair as it crosses from a worker to the ledger writer."""

    pair_id: str
    fields: dict[str, Any]  # LedgerRow fields from status on; see score_pair
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
    if ctx.skip_by_coverage:
        complete_coverage(
            ctx, pairs, keys, None if cache is None else cache.with_name("coverage.json")
        )


def complete_coverage(
    ctx: RunContext, pairs: list[DrawnPair], keys: list[tuple[str, str]], cache: Path | None
) -> None:
    """Coverage of every run of the original tools the pairs touch (cached in the JSON file
    `cache` when given), and each pair's `Reuse` (harness.execution.coverage)."""
    from harness.checker import ReferenceChecker

    cached: dict[str, Any] = (
        json.loads(cache.read_text()) if cache is not None and cache.exists() else {}
    )
    for name, tool in keys:
        label = f"{name}:{tool}"
        if label in cached:
            ctx.coverage[(name, tool)] = ToolCoverage.model_validate(cached[label])
            continue
        target, adapter = ctx.targets[name], ctx.targets[name].adapter
        calls = ctx.corpus.liveness.get(name, {}).get(tool) or []
        tasks = adapter.grader_tasks(tool) if isinstance(adapter, GraderAdapter) else []
        sites = list(
            {p.mutant.site: None for p in pairs if (p.mutant.target, p.tool) == (name, tool)}
        )
        coverage = record_tool(
            Path(adapter.source_root()).resolve(),
            frozenset(site.file.split("/", 1)[0] for site in sites),
            sites,
            lambda i, a=adapter, t=tool, c=calls: observe(a, t, [c[i]])[0],
            len(calls),
            adapter.grade if isinstance(adapter, GraderAdapter) else (lambda _t: None),
            tasks,
            lambda t=target, tl=tool: ctx.checker.check(t, [tl]).tool(tl),
            (
                ctx.observations.get((name, tool), []),
                [ctx.grades[(name, task)] for task in tasks],
                ctx.baselines[(name, tool)],
            ),
        )
        ctx.coverage[(name, tool)] = coverage
        cached[label] = coverage.model_dump(mode="json")
    if cache is not None:
        _write_json(cache, cached)
    # only the reference checker is known to read nothing of a tool but what it executes
    checker_reusable = isinstance(ctx.checker, ReferenceChecker)
    for pair in pairs:
        mutant, adapter = pair.mutant, ctx.targets[pair.mutant.target].adapter
        if pair.contract_patch is not None:  # a negative control: the checker's contract differs
            continue
        if not definition_unchanged(
            mutant.site, mutant.mutated_source, Path(adapter.source_root())
        ):
            continue
        tasks = adapter.grader_tasks(pair.tool) if isinstance(adapter, GraderAdapter) else []
        reuse = reuse_for(
            ctx.coverage[(mutant.target, pair.tool)], mutant.site, tasks, checker_reusable
        )
        if reuse.observations or reuse.grades or reuse.checker:
            ctx.reuse[pair.pair_id] = reuse


# --- scoring one pair (runs in the child) -----------------------------------------------------


def score_pair(ctx: RunContext, pair: DrawnPair) -> dict[str, Any]:
    """The row fields for one pair. Raises only BaseExceptions the mutant caused."""
    from harness.mutation.apply import MutantCompileError, StaleMutant, apply_in_memory

    mutant = pair.mutant
    target = ctx.targets[mutant.target]
    try:
        apply_in_memory(target.adapter, mutant)
    except MutantCompileError as exc:
        return {"status": PairStatus.COMPILE_ERROR, "error": str(exc)}
    except StaleMutant as exc:
        return {"status": PairStatus.INFRA_ERROR, "error": f"stale mutant: {exc}"}
    return _score_applied(ctx, pair, ctx.reuse.get(pair.pair_id))


def score_unexecuted(ctx: RunContext, pair: DrawnPair) -> dict[str, Any]:
    """The row fields of a pair no run of which executes its mutated function (`Reuse.
    everything`), in this process and without applying it: the mutant is checked and defined
    as `apply_in_memory` would (the same compile and stale statuses), but bound nowhere."""
    from harness.mutation.apply import MutantCompileError, StaleMutant, check_fresh, define

    mutant = pair.mutant
    adapter = ctx.targets[mutant.target].adapter
    try:
        check_fresh(adapter, mutant)
        site = mutant.site  # the file name _compile gives, which a SyntaxError's text names
        define(site, mutant.mutated_source, f"<mutant {mutant.id} of {site.file}:{site.qualname}>")
    except MutantCompileError as exc:  # the message apply_in_memory's gives
        return {"status": PairStatus.COMPILE_ERROR, "error": f"mutant {mutant.id} ({exc})"}
    except StaleMutant as exc:
        return {"status": PairStatus.INFRA_ERROR, "error": f"stale mutant: {exc}"}
    return {**_score_applied(ctx, pair, ctx.reuse[pair.pair_id]), "skipped_by_coverage": True}


def _score_applied(ctx: RunContext, pair: DrawnPair, reuse: Reuse | None) -> dict[str, Any]:
    """The row fields of a pair whose mutant is applied (or, for a `reuse` of everything,
    whose every run is the original's)."""
    mutant = pair.mutant
    target = ctx.targets[mutant.target]
    key = (mutant.target, pair.tool)
    if pair.contract_patch is not None:  # a negative control's look-alike input
        contract = target.contracts[pair.tool]
        target.contracts[pair.tool] = patched_contract(contract, pair.contract_patch)
    corpus = ctx.corpus.liveness.get(mutant.target, {}).get(pair.tool, [])
    if reuse is None:
        mutant_observations = observe(target.adapter, pair.tool, corpus)
    else:  # the leading calls that cannot reach the mutated function: the original's
        reused = ctx.observations[key][: reuse.observations]
        rest = observe(target.adapter, pair.tool, corpus[reuse.observations :])
        mutant_observations = reused + rest
    found = differences(ctx.observations[key], mutant_observations)
    grades = 0 if reuse is None else reuse.grades
    fields: dict[str, Any] = {"live": bool(found), **grader_fields(ctx, target, pair.tool, grades)}
    try:
        if reuse is not None and reuse.checker:
            report = ctx.baselines[key]
        else:
            report = ctx.checker.check(target, [pair.tool]).tool(pair.tool)
    except Exception as exc:  # the checker under test failed on this mutant
        return {
            **fields,
            "status": PairStatus.MISSED,
            "miss_cause": MissCause.CHECKER_CRASH,
            "error": f"{type(exc).__name__}: {exc}",
        }
    baseline = {c.clause_id for c in ctx.baselines[key].violations()}
    new = [c for c in report.violations() if c.clause_id not in baseline]
    fields["tool_verdict"] = report.verdict
    if new:
        classes = {c.defect_class for c in new}
        return {
            **fields,
            "status": PairStatus.DETECTED,
            "new_violations": [
                NewViolation(clause_id=c.clause_id, defect_class=c.defect_class) for c in new
            ],
            "class_matched": None
            if mutant.defect_class is None
            else mutant.defect_class in classes,
            "witness": new[0].witness,
        }
    if report.verdict is Verdict.UNTESTABLE:
        return {**fields, "status": PairStatus.UNTESTABLE}
    changes = call_changes(ctx.observations[key], mutant_observations, corpus)
    cause = miss_cause(changes, clause_patterns(target.contracts[pair.tool]))
    return {
        **fields,
        "status": PairStatus.MISSED,
        "miss_cause": cause,
        "class_matched": None if mutant.defect_class is None else False,
    }


def grader_fields(ctx: RunContext, target: Target, tool: str, reused: int = 0) -> dict[str, Any]:
    """Replay the target's own grader on every task that calls `tool` (mutant applied) and
    name the tasks whose utility verdict differs from the original's; the first `reused`
    tasks keep the original's verdict without a replay (they cannot reach the mutant)."""
    adapter = target.adapter
    if not isinstance(adapter, GraderAdapter):
        return {}
    tasks = adapter.grader_tasks(tool)
    if not tasks:
        return {"grader_caught": False}
    changed = []
    for task in tasks[reused:]:
        try:
            verdict = adapter.grade(task)
        except Exception:  # the mutant broke the replay itself: the grader sees a failure
            verdict = False
        if verdict != ctx.grades[(target.name, task)]:
            changed.append(task)
    return {"grader_caught": bool(changed), "grader_tasks": changed}


# --- the parent ---------------------------------------------------------------------------------


class RunInterrupted(Exception):
    """Ctrl-C or SIGTERM stopped the run; `in_ledger` pairs of `total` are recorded."""

    def __init__(self, folder: Path, in_ledger: int, total: int, signum: int):
        super().__init__(folder, in_ledger, total, signum)
        self.folder, self.in_ledger, self.total, self.signum = folder, in_ledger, total, signum


@dataclass
class RunResult:
    run_dir: Path
    rows: list[LedgerRow]
    skipped: int
    scored: int
    warnings: list[str] = field(default_factory=list)


def run_dir_for(root: Path, plan: Plan, run_id: str) -> Path:
    return root / "results" / plan.name / run_id


def prepare(plan_path: Path, post_hoc: bool) -> tuple[Plan, Path, str, bool, Verification]:
    """Verify the freeze; (plan, root, run id, post hoc, the verification)."""
    from harness.execution.plan import load_plan

    plan = load_plan(plan_path)
    root = project_root(plan_path)
    # the schema and the operators hold for a post-hoc run too: it waives the freeze only
    check_plan(plan, str(plan_path), {name: load_target(name) for name in plan.targets()})
    check = verified_inputs(plan_path, plan, root)
    if not check.problems:
        return plan, root, check.record.freeze_id, False, check
    if not post_hoc:
        raise UserError(check.problems)
    checker = checker_for(plan)
    current = freeze_id_of(
        check.hashes, check.versions, f"{checker.name} {checker.version}", check.packages
    )
    return plan, root, f"posthoc-{current}", True, check


def provenance_warnings(
    root: Path, plan: Plan, check: Verification, strict: bool
) -> tuple[FreezeCommit, list[str]]:
    """(where the freeze record was first committed, warnings); under `strict` a warning
    is a refusal instead."""
    path = record_path(root, plan)
    found = freeze_commit(root, path, check.record.freeze_id)
    problems = list(check.package_problems)
    line = found.warning()
    if line is not None:
        problems.insert(
            0,
            Problem(
                str(path),
                f"freeze record ({found.status})",
                line,
                "commit it as `harness freeze` printed, before the run",
            ),
        )
    if strict and problems:
        raise UserError(problems)
    return found, [problem.line() for problem in problems]


def _first_freeze_record(folder: Path, found: FreezeCommit) -> dict[str, Any] | None:
    """What the run's first invocation found: a resumed run keeps it, so a record committed
    after the first row cannot make the run look pre-registered."""
    manifest = folder / "run.json"
    if manifest.exists() and any(read_rows(folder / "ledger.jsonl")):
        first: dict[str, Any] | None = json.loads(manifest.read_text()).get("freeze_record")
        return first
    return found.model_dump(mode="json")


def _row(job: RunJob, pair: DrawnPair, outcome: PairOutcome) -> LedgerRow:
    mutant = pair.mutant
    return LedgerRow(
        pair_id=pair.pair_id,
        mutant_id=mutant.id,
        tool=pair.tool,
        arm=pair.arm,
        operator=mutant.operator,
        defect_class=mutant.defect_class,
        target=mutant.target,
        target_version=mutant.target_version,
        freeze_id=job.freeze_id,
        post_hoc=job.post_hoc,
        predicted=pair.predicted,
        timing=Timing(seconds=round(outcome.seconds, 4), started_at=outcome.started_at),
        **outcome.fields,
    )


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # absent, or torn by a kill: a fresh manifest
        return {}


def _write_json(path: Path, payload: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, indent=1, sort_keys=True, default=str) + "\n")
    tmp.replace(path)


@contextmanager
def _folder_kept_only_with_rows(folder: Path) -> Iterator[None]:
    """Create the run folder; a run that stops before its first row (an unreachable
    scheduler, a contract that does not compile, Ctrl-C during set-up) removes it again,
    so nothing half-written stays in results/."""
    created = folder  # the outermost folder this run creates (results/PLAN on a first run)
    while not created.parent.exists():
        created = created.parent
    fresh = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    try:
        yield
    except BaseException:
        if fresh and not any(read_rows(folder / "ledger.jsonl")):
            shutil.rmtree(created, ignore_errors=True)
        raise


def execute(
    plan_path: Path,
    *,
    workers: int | None = None,
    post_hoc: bool = False,
    progress: Any = None,
    executor: Executor | None = None,
    checker: str | None = None,
    strict: bool = False,
    skip_by_coverage: bool = False,
) -> RunResult:
    """Score the pairs not yet in the ledger with `executor` (default: the local pool of
    `workers` processes) under the plan's checker, or the comparison checker `checker`;
    `skip_by_coverage` reuses the original's runs a mutant cannot change (the same rows)."""
    from harness.execution.executors import LocalExecutor

    if executor is None:
        executor = LocalExecutor(workers or os.cpu_count() or 1)
    plan, root, run_id, changed, check = prepare(plan_path, post_hoc)
    chosen, freeze_id, run_id, post_hoc = run_checker(plan, checker, run_id, changed, post_hoc)
    found, warnings = provenance_warnings(root, plan, check, strict)
    corpus = load_corpus(root, plan)
    folder = run_dir_for(root, plan, run_id)
    try:
        with _folder_kept_only_with_rows(folder):
            job = RunJob(
                plan_path,
                plan,
                root,
                run_id,
                post_hoc,
                corpus,
                folder,
                freeze_id,
                checker,
                check.hashes,
                check.versions,
                skip_by_coverage,
            )
            now = datetime.now(UTC).isoformat(timespec="seconds")
            # a resumed run keeps its first start and adds this one to `resumed_at`
            earlier = _read_json(folder / "run.json")
            started_at = earlier.get("started_at") or now
            resumed_at = [*earlier.get("resumed_at", []), now] if earlier else []
            manifest = {
                "plan": plan.name,
                "run": run_id,
                "freeze_id": freeze_id,
                "post_hoc": post_hoc,
                **executor.describe(),
                "skip_by_coverage": skip_by_coverage,
                "started_at": started_at,
                "resumed_at": resumed_at,
                "ended_at": None,
                "python": platform.python_version(),
                "platform": platform.platform(),
                "checker": f"{chosen.name} {chosen.version}",
                "target_versions": check.versions,
                "package_versions": check.packages,
                "freeze_record": _first_freeze_record(folder, found),
                "warnings": warnings,
                "pairs_total": len(corpus.pairs),
                # the predictions this run is scored against, so a report needs no plan
                # file; a comparison checker's run has none (they are the plan checker's)
                "predictions": plan.predictions.model_dump(mode="json")
                if run_id == freeze_id
                else None,
                # the pool per operator before and after each screen, for every report
                "screening_rule": corpus.screening_rule,
                "pools": [p.model_dump(mode="json") for p in corpus.pools],
            }
            _write_json(folder / "run.json", manifest)
            by_id = {p.pair_id: p for p in corpus.pairs}
            scored = 0
            with LedgerWriter(folder / "ledger.jsonl") as ledger:
                todo = [p for p in corpus.pairs if p.pair_id not in ledger.done]
                skipped = len(corpus.pairs) - len(todo)
                if progress is not None:
                    progress.start(len(corpus.pairs), skipped)

                def record(outcome: PairOutcome) -> None:
                    nonlocal scored
                    if outcome.pair_id in ledger.done:  # Dask ran a batch again (lost worker)
                        return
                    with signals_held():  # a Ctrl-C lands after the row, never inside it
                        ledger.append(_row(job, by_id[outcome.pair_id], outcome))
                    scored += 1
                    if progress is not None:
                        progress.advance(outcome.fields["status"])

                executor.run(job, todo, record)
            rows = list(read_rows(folder / "ledger.jsonl"))
            manifest["ended_at"] = datetime.now(UTC).isoformat(timespec="seconds")
            manifest["totals"] = dict(sorted(Counter(r.status.value for r in rows).items()))
            _write_json(folder / "run.json", manifest)
            return RunResult(folder, rows, skipped, scored, warnings)
    except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM as `isolation.Stopped`
        in_ledger = sum(1 for _ in read_rows(folder / "ledger.jsonl"))
        signum = getattr(stop, "signum", signal.SIGINT)
        raise RunInterrupted(folder, in_ledger, len(corpus.pairs), signum) from None


if sys.platform == "win32":  # pragma: no cover - fork is required
    raise ImportError("the runner needs fork (Linux or macOS)")
