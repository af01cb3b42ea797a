"""`harness run`: score every drawn pair of a frozen plan into an append-only ledger.

`execute` verifies the freeze, opens the ledger and hands the pairs not yet in it to an
executor (`harness.execution.executors`: the local fork-per-pair pool, or Dask). Whatever
the executor, the pair's row fields come from `score_pair` (`harness.execution.pair_scoring`) on a
`RunContext` prepared once
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

import gc
import json
import os
import platform
import shutil
import signal
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.errors import HarnessError, Problem, UserError
from harness.execution.draw import (
    DrawnPair,
    check_plan,
    control_pairs,
    load_corpus,
    planned_controls,
    with_control_targets,
)
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
    Timing,
    read_rows,
)
from harness.execution.pair_scoring import (  # all but _write_json re-exported: old import path
    SETUP_LOG,
    Executor,
    PairOutcome,
    RunContext,
    RunJob,
    _write_json,
    complete_baselines,
    complete_context,
    grader_verdict,
    new_context,
    score_pair,
    write_baseline,
)
from harness.execution.plan import Plan, no_file_in_the_way, project_root
from harness.execution.recorded_calls import check_corpora
from harness.execution.run_folder import (
    hold_run_folder,
    ledger_record,
    pair_ids_digest,
    read_bytes,
    read_ledger,
)
from harness.execution.setup_cache import FOLDER as SETUP_CACHE_FOLDER
from harness.targets.registry import load_target


class RunInterrupted(HarnessError):
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

    root = project_root(plan_path)
    no_file_in_the_way(root, "results")  # before the plan's compared runs are looked for
    plan = load_plan(plan_path)
    with _long_lived():
        return _loaded_and_verified(plan_path, post_hoc, root, plan)


@contextmanager
def _long_lived() -> Iterator[None]:
    """Load what lives as long as the run (the targets, their packages, the freeze's hashes)
    with the cyclic garbage collector paused, and then move it out of the collector's reach
    (`gc.freeze`; `execute` moves it back when the run ends). Each full collection while
    they load walks every object loaded so far, ever more of them: a sizable part of a
    start from a cached set-up to its first pair (`bench/first_row.py --collector` gives
    their seconds). The cycles the loading leaves as garbage stay until
    the run ends: a few thousand objects, against the hundreds of thousands loaded. This is
    what the `gc.freeze` documentation advises for a process that forks, as this one does
    (`executors.score_pairs`). A loading that fails leaves nothing frozen."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        gc.freeze()
    finally:
        if enabled:
            gc.enable()


def _loaded_and_verified(
    plan_path: Path, post_hoc: bool, root: Path, plan: Plan
) -> tuple[Plan, Path, str, bool, Verification]:
    began = time.monotonic()
    # the schema and the operators hold for a post-hoc run too: it waives the freeze only
    targets = {name: load_target(name) for name in plan.targets()}
    check_plan(plan, str(plan_path), targets)
    # ... and each named control reads, each corpus is there
    planned_controls(plan, root)
    check_corpora(plan, root, targets.values())
    count, loaded = len(plan.targets()), time.monotonic()
    SETUP_LOG.info(
        "%d target%s loaded in %.1f s; verifying the freeze (every file it hashes read again)",
        count,
        "" if count == 1 else "s",
        loaded - began,
    )
    check = verified_inputs(plan_path, plan, root)
    # a file several targets share is hashed, and counted, once for each of them
    hashes = sum(len(group) for group in check.hashes.values())
    if not check.problems:
        SETUP_LOG.info(
            "freeze %s verified: %s hashes in %.1f s",
            check.record.freeze_id,
            f"{hashes:,}",
            time.monotonic() - loaded,
        )
        return plan, root, check.record.freeze_id, False, check
    if not post_hoc:
        raise UserError(check.problems)
    # what the freeze would have vouched for, a draw's checks: each control against the plan
    # and its target (after the freeze: an edit to a frozen control is the freeze's to name)
    with_controls = with_control_targets(plan, root, dict(targets))
    control_pairs(plan, root, with_controls)
    check_corpora(plan, root, with_controls.values())
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
    manifest = _read_json(folder / "run.json")
    if manifest and any(read_rows(folder / "ledger.jsonl")):
        first: dict[str, Any] | None = manifest.get("freeze_record")
        return first
    return found.model_dump(mode="json")


def _row(job: RunJob, pair: DrawnPair, outcome: PairOutcome) -> LedgerRow:
    mutant, score = pair.mutant, outcome.score
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
        status=score.status,
        class_matched=score.class_matched,
        new_violations=score.new_violations,
        tool_verdict=score.tool_verdict,
        live=score.live,
        miss_cause=score.miss_cause,
        witness=score.witness,
        grader_caught=score.grader_caught,
        grader_tasks=score.grader_tasks,
        error=score.error,
        skipped_by_coverage=score.skipped_by_coverage,
        reused_runs=score.reused_runs,
        kill_vector=score.kill_vector,
        graded_clauses=score.graded_clauses,
    )


def _read_json(path: Path) -> dict[str, Any]:
    try:
        found = json.loads(read_bytes(path) or b"{}")
    except ValueError:  # torn by a kill: a fresh manifest
        return {}
    return found if isinstance(found, dict) else {}


@contextmanager
def _folder_kept_only_with_rows(folder: Path) -> Iterator[None]:
    """Create the run folder; a run that stops before its first row (an unreachable
    scheduler, a contract that does not compile, Ctrl-C during set-up) removes it again,
    so nothing half-written stays in results/. The run holds the folder's lock throughout
    (`run_folder.hold_run_folder`): a second run of it is refused before it touches a file."""
    created = folder  # the outermost folder this run creates (results/PLAN on a first run)
    while not created.parent.exists():
        created = created.parent
    fresh = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    with hold_run_folder(folder):
        try:
            yield
        except BaseException:
            if fresh and not read_ledger(folder / "ledger.jsonl").rows:
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
    skip_by_coverage: bool = True,
) -> RunResult:
    """Score the pairs not yet in the ledger with `executor` (default: the local pool of
    `workers` processes) under the plan's checker, or the comparison checker `checker`;
    `skip_by_coverage` takes from the original the runs a mutant cannot change
    (`harness.execution.coverage`; the rows are the same either way)."""
    from harness.execution.executors import LocalExecutor

    if executor is None:
        executor = LocalExecutor((os.cpu_count() or 1) if workers is None else workers)
    plan, root, run_id, changed, check = prepare(plan_path, post_hoc)
    try:
        chosen, freeze_id, run_id, post_hoc = run_checker(plan, checker, run_id, changed, post_hoc)
        found, warnings = provenance_warnings(root, plan, check, strict)
        corpus = load_corpus(root, plan)
        no_file_in_the_way(root, "results", plan.name, run_id)
        no_file_in_the_way(root, "results", SETUP_CACHE_FOLDER, freeze_id)
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
                # one entry per start (the first, then each resume): what its set-up took from
                # the freeze's set-up cache, from this folder, or computed, and in how long
                setup: list[dict[str, Any]] = list(earlier.get("setup", []))
                manifest = {
                    "plan": plan.name,
                    "run": run_id,
                    "freeze_id": freeze_id,
                    "post_hoc": post_hoc,
                    **executor.describe(),
                    "skip_by_coverage": skip_by_coverage,  # both executors take runs by coverage
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
                    "setup": setup,
                    "pairs_total": len(corpus.pairs),
                    "memory_limit_mb": plan.memory_limit_mb,  # a worker past it: a crash
                    # what a whole ledger holds: the drawn pair ids (and, once ended, its digest)
                    "pair_ids_sha256": pair_ids_digest(p.pair_id for p in corpus.pairs),
                    "ledger": None,
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

                def prepared(summary: dict[str, Any]) -> None:  # kept if the run is stopped
                    setup.append({"started_at": now, **summary})
                    _write_json(folder / "run.json", manifest)

                job = replace(job, on_prepared=prepared)
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
                            progress.advance(outcome.score.status)

                    executor.run(job, todo, record)
                read = read_ledger(folder / "ledger.jsonl")
                rows = read.rows
                manifest["ended_at"] = datetime.now(UTC).isoformat(timespec="seconds")
                manifest["ledger"] = ledger_record(read)
                manifest["totals"] = dict(sorted(Counter(r.status.value for r in rows).items()))
                _write_json(folder / "run.json", manifest)
                return RunResult(folder, rows, skipped, scored, warnings)
        except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM as `isolation.Stopped`
            in_ledger = sum(1 for _ in read_rows(folder / "ledger.jsonl"))
            signum = getattr(stop, "signum", signal.SIGINT)
            raise RunInterrupted(folder, in_ledger, len(corpus.pairs), signum) from None
    finally:
        gc.unfreeze()  # what `prepare` froze, and the executor's freezes


if sys.platform == "win32":  # pragma: no cover - fork is required
    raise ImportError("the runner needs fork (Linux or macOS)")


__all__ = [
    "Executor",
    "PairOutcome",
    "RunContext",
    "RunInterrupted",
    "RunJob",
    "RunResult",
    "complete_baselines",
    "complete_context",
    "execute",
    "grader_verdict",
    "new_context",
    "prepare",
    "run_dir_for",
    "score_pair",
    "write_baseline",
]
