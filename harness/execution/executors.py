"""Executors: where the pairs of a run are scored (`harness run --executor NAME`).

Both implement `runner.Executor`: `run(job, pairs, on_outcome)` scores the pairs and hands
each `PairOutcome` to `on_outcome` in the calling thread, where the runner appends the row
to the ledger (the single writer).

- `local` (default): this process prepares one `RunContext` and forks one child per pair,
  up to `workers` at a time (`score_pairs`); a pair none of whose runs can reach its
  mutated function (`harness.execution.coverage`) is scored here, without a child. Before
  the first fork the prepared objects are moved out of the garbage collector's reach
  (`gc.freeze`): a collection in a child would otherwise touch, and so copy, every page of
  the parent's heap. After a set-up read from the freeze's cache, each target is warmed
  here just before the first child that scores one of its pairs is forked, once no pair is
  being scored (`pair_scoring.warm_for`), and what that left is frozen too. One child is
  forked ahead of need (the *spare*): it isolates itself and waits for its pair on a pipe,
  so the fork (30 ms from a 600 MiB parent) runs while the previous pair is scored instead
  of before the next. The child applies the mutant in memory, runs the frozen checker and
  the liveness corpus, and sends back the row's fields; it never writes. A child past the
  plan's timeout is killed (`timeout`); a child that dies without answering, or whose
  mutant raises SystemExit or another BaseException, is a `crash` (unless it died past the
  timeout: its own backstop ended it, a `timeout`). No child
  outlives this process (`isolation`: parent-death signal, own wall and CPU limits).
  Forking every pair from a state that depends on the pairs before it alone makes rows
  independent of the worker count and of the order in which pairs finish.
- `dask` (`harness.execution.dask_executor`): batches of pairs on a Dask cluster, each
  scored by `score_pairs` in an isolated process on the worker, from the context this
  process prepared once for the whole run (`PreparedSetup`: coverage reuse included).
"""

from __future__ import annotations

import gc
import importlib.util
import multiprocessing
import os
import resource
import shutil
import sys
import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from multiprocessing.connection import Connection, wait
from typing import Any

from harness.errors import Problem, UserError
from harness.execution.draw import DrawnPair
from harness.execution.isolation import (
    become_subreaper,
    confine_writes,
    die_with_parent,
    end_descendants,
    ignore_stop_signals,
    libc,
    limit_self,
    scratch_folder,
    signals_held,
    sweep_scratch_folders,
)
from harness.execution.ledger import PairScore, PairStatus
from harness.execution.pair_scoring import (
    Executor,
    PairOutcome,
    RunContext,
    RunJob,
    owes_warm_up,
    prepared_context,
    score_pair,
    score_unexecuted,
    warm_for,
)

_FORK = multiprocessing.get_context("fork")
EXECUTORS = ("local", "dask")
DASK_MISSING = "pip install 'contract-harness[dask]'"
DEFAULT_BATCH_SIZE = 8  # most pairs per Dask task: few enough that a lost worker costs little


def _child(
    ctx: RunContext, jobs: Connection, conn: Connection, parent: int, parents_ends: list[Connection]
) -> None:
    """A pair child: forked ahead of its pair (the spare), it isolates itself, then scores
    the pair `jobs` brings; a spare the run no longer needs reads end-of-file and exits.
    `parents_ends` are the parent's ends of its pipes, which the fork copied: closed here,
    or `jobs` would never reach end-of-file."""
    for end in parents_ends:
        end.close()
    die_with_parent(parent)
    ignore_stop_signals()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # a mutant's prints must not garble the parent's progress bar
        os.dup2(devnull, fd)
    become_subreaper()  # what the mutant starts stays below this process (isolation.py)
    confine_writes()  # nothing but its scratch folder is writable (isolation.py)
    # the parent kills a worker past memory_limit_mb (a crash); this backstop, 4 times
    # farther, keeps a mutant from exhausting the machine before the parent looks
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    backstop = ctx.plan.memory_limit_mb * 4 << 20
    if hard != resource.RLIM_INFINITY:
        backstop = min(backstop, hard)
    resource.setrlimit(resource.RLIMIT_AS, (backstop, hard))
    try:
        pair: DrawnPair = jobs.recv()
    except (EOFError, OSError):  # not needed after all
        os._exit(0)
    jobs.close()
    # counted from here, after the parent started the pair's clock: the backstop always
    # falls after the parent's timeout
    limit_self(ctx.plan.timeout_seconds)
    try:
        message: tuple[str, Any] = ("ok", score_pair(ctx, pair))
    except BaseException as exc:  # SystemExit, KeyboardInterrupt...: the mutant killed us
        message = ("crash", f"{type(exc).__name__}: {exc}")
    try:
        end_descendants()  # every process the pair started ends with the pair
        conn.send(message)
    finally:
        conn.close()
        os._exit(0)  # skip atexit and finalizers a mutant may have poisoned


def mapped_mib(pid: int) -> int | None:
    """The process's address space (VmSize) in MiB; None when it is gone or unknown."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        return None
    return None


def _died(exitcode: int | None, seconds: float, ctx: RunContext) -> PairScore:
    """A child that ended without answering: past the timeout its own backstop ended it
    (this process was too slow to), which is the timeout this process would have given."""
    timeout = ctx.plan.timeout_seconds
    if seconds >= timeout:
        return PairScore(status=PairStatus.TIMEOUT, error=f"killed after {timeout:g} s")
    return PairScore(status=PairStatus.CRASH, error=f"worker died with exit code {exitcode}")


def score_pairs(
    ctx: RunContext,
    pairs: list[DrawnPair],
    workers: int,
    on_outcome: Callable[[PairOutcome], None],
) -> None:
    """Score each pair in a child forked from the prepared `ctx`, at most `workers` at a
    time; a pair that `ctx.reuse` takes wholly from the original is scored here without one.

    The fork is kept off each pair's path: one child, the spare, is forked ahead and waits
    for its pair, and a new spare is forked as soon as one is handed a pair, while that pair
    is scored. A child that answered is reaped later, not waited for: the end of a process
    forked from a large parent (unmapping its share of the parent's pages) takes as long as
    the fork itself, and the next pair's child starts meanwhile. Its scratch folder and any
    orphan it left are cleared once it is gone. Every child is forked from a state that
    depends on the pairs before its own alone (`ctx`'s outcomes are not changed while pairs
    are scored; a cold context warms a pair's target before forking its child, once no pair
    is being scored, `warm_for`),
    so a spare forked early scores its pair as one forked late would; a spare is forked only
    when the next pair needs a child, so each child is forked after every pair before its
    own that was scored here."""
    todo = deque(pairs)
    running: dict[Connection, tuple[Any, DrawnPair, float, str]] = {}
    ending: list[Any] = []  # children that answered and are exiting
    spare: tuple[Any, Connection, Connection] | None = None  # process, its jobs, its answer

    def fork(pair: DrawnPair) -> tuple[Any, Connection, Connection]:
        """A child for `pair`, forked once its tool is warm (`warm_for`)."""
        if warm_for(ctx, pair):
            gc.freeze()  # what the warm-up left, out of the collector's reach as the rest
        jobs_in, jobs = _FORK.Pipe(duplex=False)
        answer, send = _FORK.Pipe(duplex=False)
        process = _FORK.Process(
            target=_child, args=(ctx, jobs_in, send, os.getpid(), [jobs, answer]), daemon=True
        )
        with signals_held():  # a stop raised in an at-fork callback would be lost
            process.start()
        jobs_in.close()
        send.close()
        return process, jobs, answer

    def keep() -> set[int]:
        alive = {p.pid for p, *_ in running.values()} | {p.pid for p in ending}
        return alive | (set() if spare is None else {spare[0].pid})

    def reap(process: Any) -> None:
        process.join()
        shutil.rmtree(scratch_folder(process.pid), ignore_errors=True)

    def reap_ended() -> None:
        if any(p.exitcode is not None for p in ending):
            for process in [p for p in ending if p.exitcode is not None]:
                ending.remove(process)
                reap(process)
            end_descendants(keep())  # orphans of a pair child were adopted here: end them

    def finish(conn: Connection, score: PairScore, answered: bool = False) -> None:
        process, pair, began, started = running.pop(conn)
        conn.close()
        if answered:  # it exits on its own at once
            ending.append(process)
        else:
            reap(process)
            end_descendants(keep())
        on_outcome(PairOutcome(pair.pair_id, score, started, time.monotonic() - began))

    def in_parent(pair: DrawnPair) -> bool:
        """True for a pair scored here, without a child (`score_unexecuted`)."""
        reuse = ctx.reuse.get(pair.pair_id)
        return reuse is not None and reuse.everything

    def ready(pair: DrawnPair) -> bool:
        """False while `pair` needs its target warmed and pairs are being scored: a warm-up
        runs the target here for up to seconds, and this loop must keep watching its
        children (their answers, timeouts, memory), so it waits for them."""
        return not running or not owes_warm_up(ctx, pair)

    def hand(pair: DrawnPair) -> None:
        """Give `pair` to the spare (forking one if there is none, or another if it died)."""
        nonlocal spare
        for _ in range(2):
            process, jobs, answer = spare if spare is not None else fork(pair)
            spare = None
            # the pair's clock starts before the child's own backstop is set
            began, started = time.monotonic(), datetime.now(UTC).isoformat(timespec="seconds")
            try:
                jobs.send(pair)
            except OSError:  # the spare is gone (killed from outside): fork another
                jobs.close()
                answer.close()
                process.kill()
                reap(process)
                continue
            jobs.close()
            running[answer] = (process, pair, began, started)
            return
        raise RuntimeError("two pair children in a row died before their pair reached them")

    from harness.mutation.apply import package_functions

    for package in sorted({p.mutant.site.module.partition(".")[0] for p in pairs}):
        package_functions(package)  # computed once here instead of in every child
    if sys.platform.startswith("linux"):
        libc()  # loaded once here instead of in every child
    gc.freeze()
    become_subreaper()
    sweep_scratch_folders()  # left by a runner that was killed with -9
    try:
        while todo or running:
            while todo and len(running) < workers:
                if in_parent(todo[0]):
                    pair = todo.popleft()
                    began = time.monotonic()
                    started = datetime.now(UTC).isoformat(timespec="seconds")
                    score = score_unexecuted(ctx, pair)
                    on_outcome(PairOutcome(pair.pair_id, score, started, time.monotonic() - began))
                    continue
                if not ready(todo[0]):
                    break
                hand(todo.popleft())
            if todo and spare is None and not in_parent(todo[0]) and ready(todo[0]):
                # forked while the pairs just handed out are scored, and only for the very
                # next pair: a pair scored here first (which defines its mutant here) would
                # otherwise reach a child forked before it or after it depending on workers
                spare = fork(todo[0])
            for conn in wait(list(running), timeout=0.05):
                try:
                    kind, payload = conn.recv()
                except (EOFError, OSError):
                    process, _, began, _ = running[conn]
                    process.join()
                    finish(conn, _died(process.exitcode, time.monotonic() - began, ctx))
                else:
                    score = (
                        payload
                        if kind == "ok"
                        else PairScore(status=PairStatus.CRASH, error=payload)
                    )
                    finish(conn, score, answered=True)
            reap_ended()
            now = time.monotonic()
            for conn, (process, _, began, _) in list(running.items()):
                mapped = mapped_mib(process.pid)
                if mapped is not None and mapped > ctx.plan.memory_limit_mb:
                    process.kill()
                    finish(
                        conn,
                        PairScore(
                            status=PairStatus.CRASH,
                            error=f"killed: its address space reached {mapped} MiB, over the "
                            f"plan's memory_limit_mb of {ctx.plan.memory_limit_mb}",
                        ),
                    )
                elif now - began > ctx.plan.timeout_seconds:
                    process.kill()
                    finish(
                        conn,
                        PairScore(
                            status=PairStatus.TIMEOUT,
                            error=f"killed after {ctx.plan.timeout_seconds:g} s",
                        ),
                    )
    finally:
        children = [p for p, *_ in running.values()] + ([] if spare is None else [spare[0]])
        for process in children:
            process.kill()
        for process in children + ending:
            reap(process)
        end_descendants()
        gc.unfreeze()


class LocalExecutor:
    """This machine: one forked child per pair, `workers` at a time."""

    def __init__(self, workers: int):
        if workers < 1:
            raise UserError(
                Problem("--workers", "workers", "must be at least 1", "pass --workers 1 or more")
            )
        self.workers = workers

    def describe(self) -> dict[str, Any]:
        return {"executor": "local", "workers": self.workers}

    def run(
        self, job: RunJob, pairs: list[DrawnPair], on_outcome: Callable[[PairOutcome], None]
    ) -> None:
        if not pairs:  # a finished run resumed: nothing to prepare
            return
        ctx = prepared_context(job, pairs, helpers=self.workers)
        score_pairs(ctx, pairs, self.workers, on_outcome)


def executor_for(
    name: str, *, workers: int | None, scheduler: str | None, batch_size: int | None
) -> Executor:
    """The executor the `run` options name; bad combinations are one-line errors."""
    if name not in EXECUTORS:
        raise UserError(
            Problem("--executor", "executor", f"unknown executor {name!r}", "use local or dask")
        )
    if name == "local":
        for option, value in (("--scheduler", scheduler), ("--batch-size", batch_size)):
            if value is not None:
                raise UserError(
                    Problem(
                        option,
                        option.removeprefix("--").replace("-", "_"),
                        "only the dask executor takes it",
                        f"add --executor dask, or drop {option}",
                    )
                )
        return LocalExecutor((os.cpu_count() or 1) if workers is None else workers)  # 0: refused
    if importlib.util.find_spec("distributed") is None:
        raise UserError(
            Problem(
                "--executor",
                "dask",
                "the distributed package is not installed",
                DASK_MISSING,
            )
        )
    from harness.execution.dask_executor import DaskExecutor

    return DaskExecutor(
        scheduler=scheduler,
        workers=workers,
        batch_size=batch_size,
    )
