"""`harness run`: score every drawn pair of a frozen plan into an append-only ledger.

The parent process imports the targets once, computes the baseline verdicts of the
original tools and their liveness observations, then forks one child per pair (up to
`workers` at a time). The child applies the mutant in memory, runs the frozen checker and
the liveness corpus, and sends back the row's fields; it never writes. The parent is the
single writer of the ledger. A child past the timeout is killed (`timeout`); a child that
dies without answering, or whose mutant raises SystemExit or another BaseException, is a
`crash`. Forking from the same parent state for every pair makes rows independent of the
worker count and of the order in which pairs finish.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import platform
import sys
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from harness.checker.verdicts import ToolReport, Verdict
from harness.contracts.predicate import compile_predicate
from harness.errors import Problem, UserError
from harness.execution.controls import patched_contract
from harness.execution.draw import Corpus, DrawnPair, load_corpus
from harness.execution.freeze import (
    checker_for,
    current_inputs,
    freeze_id_of,
    run_checker,
    verify,
)
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
from harness.execution.plan import Plan, project_root
from harness.targets.adapter import GraderAdapter
from harness.targets.registry import Target, load_target

_FORK = multiprocessing.get_context("fork")


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


# --- scoring one pair (runs in the child) -----------------------------------------------------


def clause_patterns(target: Target, tool: str) -> list[tuple[str, ...]]:
    """The state paths the tool's contract reads: predicate paths and frame scopes."""
    contract = target.contracts[tool]
    patterns: list[tuple[str, ...]] = []
    for _, clause in contract.predicate_clauses():
        for root, path in compile_predicate(clause.predicate).paths_read:
            if root in ("pre", "post"):
                patterns.append(path)
    for clause in contract.frame:
        patterns += [tuple(p.split(".")) for p in clause.scope]
    return patterns


def _read_by_clause(difference: str, patterns: list[tuple[str, ...]], reads_result: bool) -> bool:
    if difference in ("outcome", "result"):
        return reads_result or difference == "outcome"
    path = difference.split(".")[1:]  # drop post / after_reset
    return any(
        all(p == k or "*" in (p, k) for p, k in zip(pattern, path, strict=False))
        for pattern in patterns
    )


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
    key = (mutant.target, pair.tool)
    if pair.contract_patch is not None:  # a negative control's look-alike input
        contract = target.contracts[pair.tool]
        target.contracts[pair.tool] = patched_contract(contract, pair.contract_patch)
    corpus = ctx.corpus.liveness.get(mutant.target, {}).get(pair.tool, [])
    found = differences(ctx.observations[key], observe(target.adapter, pair.tool, corpus))
    fields: dict[str, Any] = {"live": bool(found), **grader_fields(ctx, target, pair.tool)}
    try:
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
    if not found:
        cause = MissCause.UNREACHED
    else:
        contract = target.contracts[pair.tool]
        reads_result = any(
            "result" in {root for root, _ in compile_predicate(c.predicate).paths_read}
            or "result" in c.predicate
            for _, c in contract.predicate_clauses()
        )
        patterns = clause_patterns(target, pair.tool)
        read = any(_read_by_clause(d, patterns, reads_result) for d in found)
        cause = MissCause.PROBE_UNREVEALING if read else MissCause.NO_CLAUSE
    return {
        **fields,
        "status": PairStatus.MISSED,
        "miss_cause": cause,
        "class_matched": None if mutant.defect_class is None else False,
    }


def grader_fields(ctx: RunContext, target: Target, tool: str) -> dict[str, Any]:
    """Replay the target's own grader on every task that calls `tool` (mutant applied) and
    name the tasks whose utility verdict differs from the original's."""
    adapter = target.adapter
    if not isinstance(adapter, GraderAdapter):
        return {}
    tasks = adapter.grader_tasks(tool)
    if not tasks:
        return {"grader_caught": False}
    changed = []
    for task in tasks:
        try:
            verdict = adapter.grade(task)
        except Exception:  # the mutant broke the replay itself: the grader sees a failure
            verdict = False
        if verdict != ctx.grades[(target.name, task)]:
            changed.append(task)
    return {"grader_caught": bool(changed), "grader_tasks": changed}


def _child(ctx: RunContext, pair: DrawnPair, conn: Connection) -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # a mutant's prints must not garble the parent's progress bar
        os.dup2(devnull, fd)
    try:
        message: tuple[str, Any] = ("ok", score_pair(ctx, pair))
    except BaseException as exc:  # SystemExit, KeyboardInterrupt...: the mutant killed us
        message = ("crash", f"{type(exc).__name__}: {exc}")
    try:
        conn.send(message)
    finally:
        conn.close()
        os._exit(0)  # skip atexit and finalizers a mutant may have poisoned


# --- the parent ---------------------------------------------------------------------------------


@dataclass
class RunResult:
    run_dir: Path
    rows: list[LedgerRow]
    skipped: int
    scored: int


def run_dir_for(root: Path, plan: Plan, run_id: str) -> Path:
    return root / "results" / plan.name / run_id


def prepare(plan_path: Path, post_hoc: bool) -> tuple[Plan, Path, str, bool]:
    """Verify the freeze; (plan, root, run id, post hoc)."""
    from harness.execution.plan import load_plan

    plan = load_plan(plan_path)
    root = project_root(plan_path)
    record, problems = verify(plan_path, plan, root)
    if not problems:
        return plan, root, record.freeze_id, False
    if not post_hoc:
        raise UserError(problems)
    hashes, versions = current_inputs(plan_path, plan, root)
    checker = checker_for(plan)
    current = freeze_id_of(hashes, versions, f"{checker.name} {checker.version}")
    return plan, root, f"posthoc-{current}", True


def _row(
    ctx: RunContext, pair: DrawnPair, fields: dict[str, Any], started: str, seconds: float
) -> LedgerRow:
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
        freeze_id=ctx.freeze_id,
        post_hoc=ctx.post_hoc,
        predicted=pair.predicted,
        timing=Timing(seconds=round(seconds, 4), started_at=started),
        **fields,
    )


def _write_json(path: Path, payload: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, indent=1, sort_keys=True, default=str) + "\n")
    tmp.replace(path)


def execute(
    plan_path: Path,
    *,
    workers: int | None = None,
    post_hoc: bool = False,
    progress: Any = None,
    checker: str | None = None,
) -> RunResult:
    plan, root, run_id, changed = prepare(plan_path, post_hoc)
    chosen, freeze_id, run_id, post_hoc = run_checker(plan, checker, run_id, changed, post_hoc)
    corpus = load_corpus(root, plan)
    workers = workers or os.cpu_count() or 1
    if workers < 1:
        raise UserError(
            Problem("--workers", "workers", "must be at least 1", "pass --workers 1 or more")
        )
    folder = run_dir_for(root, plan, run_id)
    folder.mkdir(parents=True, exist_ok=True)
    targets = {t.name: t for t in map(load_target, plan.targets())}  # as mutants name them
    ctx = RunContext(plan, freeze_id, post_hoc, corpus, targets, chosen)
    _baselines(ctx, folder)
    for name, tools in corpus.liveness.items():
        for tool, calls in tools.items():
            ctx.observations[(name, tool)] = observe(targets[name].adapter, tool, calls)
    for pair in corpus.pairs:
        adapter = targets[pair.mutant.target].adapter
        if isinstance(adapter, GraderAdapter):
            for task in adapter.grader_tasks(pair.tool):
                key = (pair.mutant.target, task)
                if key not in ctx.grades:
                    ctx.grades[key] = adapter.grade(task)

    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    manifest = {
        "plan": plan.name,
        "run": run_id,
        "freeze_id": ctx.freeze_id,
        "post_hoc": post_hoc,
        "workers": workers,
        "started_at": started_at,
        "ended_at": None,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "checker": f"{ctx.checker.name} {ctx.checker.version}",
        "target_versions": {n: t.adapter.version() for n, t in targets.items()},
        "pairs_total": len(corpus.pairs),
    }
    _write_json(folder / "run.json", manifest)
    with LedgerWriter(folder / "ledger.jsonl") as ledger:
        todo = deque(p for p in corpus.pairs if p.pair_id not in ledger.done)
        skipped = len(corpus.pairs) - len(todo)
        if progress is not None:
            progress.start(len(corpus.pairs), skipped)
        scored = _schedule(ctx, todo, ledger, workers, progress)
    rows = list(read_rows(folder / "ledger.jsonl"))
    manifest["ended_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    manifest["totals"] = dict(sorted(Counter(r.status.value for r in rows).items()))
    _write_json(folder / "run.json", manifest)
    return RunResult(folder, rows, skipped, scored)


def _baselines(ctx: RunContext, folder: Path) -> None:
    """The checker on the original tools, once per tool and freeze (cached in the run dir)."""
    cache = folder / "baseline.json"
    cached: dict[str, Any] = json.loads(cache.read_text()) if cache.exists() else {}
    for pair in ctx.corpus.pairs:
        key = (pair.mutant.target, pair.tool)
        if key in ctx.baselines:
            continue
        name = f"{key[0]}:{key[1]}"
        if name in cached:
            ctx.baselines[key] = ToolReport.model_validate(cached[name])
            continue
        report = ctx.checker.check(ctx.targets[key[0]], [key[1]]).tool(key[1])
        ctx.baselines[key] = report
        cached[name] = report.model_dump(mode="json")
    _write_json(cache, cached)


def _schedule(
    ctx: RunContext, todo: deque[DrawnPair], ledger: LedgerWriter, workers: int, progress: Any
) -> int:
    running: dict[Connection, tuple[Any, DrawnPair, float, str]] = {}
    scored = 0

    def finish(conn: Connection, fields: dict[str, Any]) -> None:
        nonlocal scored
        process, pair, began, started = running.pop(conn)
        process.join()
        conn.close()
        ledger.append(_row(ctx, pair, fields, started, time.monotonic() - began))
        scored += 1
        if progress is not None:
            progress.advance(fields["status"])

    try:
        while todo or running:
            while todo and len(running) < workers:
                pair = todo.popleft()
                receive, send = _FORK.Pipe(duplex=False)
                process = _FORK.Process(target=_child, args=(ctx, pair, send), daemon=True)
                process.start()
                send.close()
                running[receive] = (
                    process,
                    pair,
                    time.monotonic(),
                    datetime.now(UTC).isoformat(timespec="seconds"),
                )
            for conn in wait(list(running), timeout=0.05):
                try:
                    kind, payload = conn.recv()
                except (EOFError, OSError):
                    process = running[conn][0]
                    process.join()
                    fields = {
                        "status": PairStatus.CRASH,
                        "error": f"worker died with exit code {process.exitcode}",
                    }
                else:
                    fields = (
                        payload if kind == "ok" else {"status": PairStatus.CRASH, "error": payload}
                    )
                finish(conn, fields)
            now = time.monotonic()
            for conn, (process, _, began, _) in list(running.items()):
                if now - began > ctx.plan.timeout_seconds:
                    process.kill()
                    finish(
                        conn,
                        {
                            "status": PairStatus.TIMEOUT,
                            "error": f"killed after {ctx.plan.timeout_seconds:g} s",
                        },
                    )
    finally:
        for process, *_ in running.values():
            process.kill()
    return scored


if sys.platform == "win32":  # pragma: no cover - fork is required
    raise ImportError("the runner needs fork (Linux or macOS)")
