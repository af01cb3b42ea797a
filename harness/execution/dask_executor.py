"""The Dask executor: the pairs of a run as batches on a Dask cluster (`distributed`).

Client (`DaskExecutor.run`, in `harness run --executor dask [--scheduler ADDRESS]`): cuts
the pairs not yet in the ledger into batches (`--batch-size` each, or guided sizes that
shrink to one pair at the end: `batch_sizes`), in corpus order, and submits one task per
batch, one in flight per worker thread the cluster has (the next when one answers:
`BatchFeeder`), with a `BatchSpec`: the freeze id, the plan, the liveness corpus and the
hashes of the installed inputs (checker scope, contracts, target source, target versions)
that the freeze was verified against. Results come back per batch and the runner appends
the rows (single writer, skipping pairs already recorded). Without `--scheduler` it starts
a `LocalCluster` of `--workers` processes on 127.0.0.1.

Before submitting, the client prepares the run's set-up once, as the local executor does
(`pair_scoring.prepared_context`: baselines, liveness observations, grader verdicts and
coverage reuse of every pair, taken from the freeze's set-up cache when it holds them), and
the spec carries it (`PreparedSetup`, one task's result that every batch depends on) with
the client's hash seed. So Dask scores with coverage-guided scoring, from the same original
outcomes, and its rows equal the local executor's.

Worker (`score_batch`): the batch is scored in a *batch host*, a plain subprocess of the
Dask worker (`python -m harness.execution.batch_host`, same interpreter and environment
but the client's PYTHONHASHSEED), kept per client run and worker thread. The host
recomputes the installed hashes and refuses the spec if any differs (`FreezeMismatch`,
naming the worker, the group and the file); otherwise it loads the targets into one
`RunContext` holding the client's set-up and scores each pair in a forked child with the
local executor's timeout and crash rules (`executors.score_pairs`).
A subprocess, not a fork of the worker: Dask worker processes are daemonic (no
multiprocessing children) and multi-threaded (unsafe to fork).

Faults: a worker lost mid-batch loses that batch's outcomes only; Dask runs the task again
elsewhere (up to `distributed.scheduler.allowed-failures`). A task that still fails (or
whose batch host died: a mutant may kill its parent) is submitted again, `BATCH_TRIES`
times in all; a batch of several pairs that still fails is split into one-pair batches,
each with its own tries, and a pair that fails alone on every try is recorded as `crash`
with the reason: the other pairs of its batch scored, so the mutant killed its host (it
stays in the denominator, as DESIGN.md's `crash` does; `infra_error` would drop it).
Outcomes of a pair already recorded are dropped by the runner, so no row is written twice.

The run folder's `baseline.json` and `coverage.json` are the client's, written during its
set-up, so a published Dask run keeps its baseline.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import math
import os
import pickle
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO, Any

from harness.errors import HarnessError, Problem, UserError
from harness.execution.draw import DrawnPair
from harness.execution.executors import DEFAULT_BATCH_SIZE
from harness.execution.freeze import installed_inputs, installed_part
from harness.execution.ledger import PairScore, PairStatus
from harness.execution.pair_scoring import PairOutcome, PreparedSetup, RunJob, prepared_context
from harness.execution.plan import Plan

CONNECT_TIMEOUT = "30s"
CLOSE_TIMEOUT = 30  # seconds
BATCH_TRIES = 2
LARGE_GRAPH_WARNING = "distributed.admin.large-graph-warning-threshold"  # a dask config key


@dataclass(frozen=True)
class BatchSpec:
    """What a worker needs, besides the pairs, to score a batch exactly as the client would."""

    freeze_id: str
    post_hoc: bool
    plan: Plan
    liveness: dict[str, Any]
    hashes: dict[str, dict[str, str]]  # installed group -> key -> sha256
    target_versions: dict[str, str]
    checker: str | None = None  # a comparison checker of the plan; None: the plan's checker
    recorded_probes: dict[str, Any] = field(default_factory=dict)  # the checker's half
    # the client's set-up of the whole run; None: the host prepares its own, per batch
    prepared: PreparedSetup | None = None
    # the client's PYTHONHASHSEED, given to the batch host: the original's outcomes were
    # computed under it, and some (a set's order) differ between seeds
    hash_seed: str | None = None
    run_token: str = ""  # one per client run (`_host_key`)


@dataclass(frozen=True)
class HashMismatch:
    group: str  # checker_scope, contracts, target_source or target_versions
    key: str
    expected: str | None  # the client's (the freeze's); None: absent there
    found: str | None  # this worker's; None: absent here

    def describe(self) -> str:
        def short(value: str | None) -> str:
            return "absent" if value is None else value[:12]

        return f"{self.key} is {short(self.found)} here, {short(self.expected)} in the freeze"


class FreezeMismatch(HarnessError):
    """A worker whose installed inputs hash differently from the client's refused a batch."""

    def __init__(self, worker: str, freeze_id: str, mismatches: list[HashMismatch]):
        super().__init__(worker, freeze_id, mismatches)
        self.worker, self.freeze_id, self.mismatches = worker, freeze_id, mismatches

    def problems(self) -> list[Problem]:
        fix = (
            "install the project at the client's commit with the same packages on that "
            "worker and restart it (docs/cluster.md)"
        )
        return [
            Problem(
                f"dask worker {self.worker}",
                m.group,
                f"{m.describe()} {self.freeze_id}; the worker refused its batch",
                fix,
            )
            for m in self.mismatches[:5]
        ]


class HostLost(HarnessError):
    """The batch host ended mid-batch (killed, or out of memory)."""


class HostStartFailed(HarnessError):
    """A worker could not start its batch host: its installation is broken, not a pair."""

    def __init__(self, worker: str, reason: str):
        super().__init__(worker, reason)
        self.worker, self.reason = worker, reason


def installed_mismatches(spec: BatchSpec) -> list[HashMismatch]:
    """What this interpreter's installed inputs change against the spec, first by group."""
    hashes, versions = installed_inputs(spec.plan)
    mismatches = []
    for group in sorted(set(spec.hashes) | set(hashes)):  # checker_scope:NAME groups too
        expected, found = spec.hashes.get(group, {}), hashes.get(group, {})
        for key in sorted(set(expected) | set(found)):
            if expected.get(key) != found.get(key):
                mismatches.append(HashMismatch(group, key, expected.get(key), found.get(key)))
    for name in sorted(set(spec.target_versions) | set(versions)):
        if spec.target_versions.get(name) != versions.get(name):
            mismatches.append(
                HashMismatch(
                    "target_versions", name, spec.target_versions.get(name), versions.get(name)
                )
            )
    return mismatches


# --- the worker side ----------------------------------------------------------------------------

_HOSTS: dict[tuple[str, str | None, str, int], subprocess.Popen[bytes]] = {}


def _host_key(spec: BatchSpec) -> tuple[str, str | None, str, int]:
    # a host holds one client run's set-up: another run (even of the same freeze) may
    # score pairs it has none for, so it gets its own host
    return (spec.freeze_id, spec.checker, spec.run_token, threading.get_ident())


def send(stream: IO[bytes], message: object) -> None:
    pickle.dump(message, stream, protocol=pickle.HIGHEST_PROTOCOL)
    stream.flush()


def _host(spec: BatchSpec, worker: str) -> subprocess.Popen[bytes]:
    key = _host_key(spec)
    thread = key[-1]
    host = _HOSTS.get(key)
    if host is not None and host.poll() is None:
        return host
    for old in [k for k in _HOSTS if k[-1] == thread]:  # an earlier run's host on this thread
        _HOSTS.pop(old).kill()
    # its stderr goes to a file, not a pipe nobody reads; kept only to explain a failed start
    with tempfile.TemporaryFile() as errors:
        env = dict(os.environ)
        if spec.hash_seed is not None:
            env["PYTHONHASHSEED"] = spec.hash_seed
        host = subprocess.Popen(
            [sys.executable, "-m", "harness.execution.batch_host", str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            env=env,
        )
        assert host.stdin is not None and host.stdout is not None
        try:
            send(host.stdin, spec)
            kind, payload = pickle.load(host.stdout)
        except (EOFError, OSError, pickle.UnpicklingError) as exc:
            host.kill()
            host.wait()
            errors.seek(0)
            lines = errors.read().decode(errors="replace").strip().splitlines() or [repr(exc)]
            raise HostStartFailed(worker, lines[-1]) from exc
    if kind == "refused":
        host.kill()
        host.wait()
        raise FreezeMismatch(worker, spec.freeze_id, payload)
    _HOSTS[key] = host
    return host


def score_batch(spec: BatchSpec, pairs: list[DrawnPair]) -> list[PairOutcome]:
    """The Dask task: score `pairs` in this worker's batch host and return their outcomes."""
    from distributed import get_worker

    worker = get_worker().address
    host = _host(spec, worker)
    assert host.stdin is not None and host.stdout is not None
    outcomes: list[PairOutcome] = []
    try:
        send(host.stdin, pairs)
        while True:
            kind, payload = pickle.load(host.stdout)
            if kind == "done":
                return outcomes
            outcomes.append(payload)
    except (EOFError, OSError, pickle.UnpicklingError) as exc:
        _HOSTS.pop(_host_key(spec), None)
        try:
            code = host.wait(timeout=5)
        except subprocess.TimeoutExpired:
            host.kill()
            code = host.wait()
        raise HostLost(f"the batch host on {worker} ended mid-batch (exit code {code})") from exc


# --- the client side ----------------------------------------------------------------------------


class DaskExecutor:
    """Batches on a Dask cluster: the scheduler at `scheduler`, or a LocalCluster of
    `workers` processes."""

    def __init__(self, *, scheduler: str | None, workers: int | None, batch_size: int | None):
        if scheduler is not None and workers is not None:
            raise UserError(
                Problem(
                    "--workers",
                    "workers",
                    "a cluster's workers are chosen where they start, not by the client",
                    "drop --workers; start more `dask worker` processes instead",
                )
            )
        if workers is not None and workers < 1:
            raise UserError(
                Problem("--workers", "workers", "must be at least 1", "pass --workers 1 or more")
            )
        if batch_size is not None and batch_size < 1:
            raise UserError(
                Problem("--batch-size", "batch_size", "must be at least 1", "pass 1 or more")
            )
        self.scheduler = scheduler
        self.workers = workers if workers is not None or scheduler else (os.cpu_count() or 1)
        self.batch_size = batch_size

    def describe(self) -> dict[str, Any]:
        return {
            "executor": "dask",
            "scheduler": self.scheduler or "LocalCluster",
            "workers": self.workers,
            "batch_size": self.batch_size
            or f"guided: ceil(pairs left / (2 x worker threads)), at most {DEFAULT_BATCH_SIZE}",
        }

    def batch_sizes(self, pairs: int, workers: int) -> list[int]:
        """The sizes of a run's batches, in corpus order: `--batch-size` each, or guided:
        each batch holds ceil(pairs left / (2 × worker threads)) pairs, at most
        DEFAULT_BATCH_SIZE, so batches shrink to one pair at the end of a run. Equal batches
        left one host scoring its last batch of slow pairs (tau2's take 1-1.4 s) while the
        others had none (bench/overhead.py's timeline: 1.75 s idle of a 12 s scoring span
        in batches of 4, 4-10 s in batches of 8)."""
        if self.batch_size is not None:
            return [min(self.batch_size, pairs - i) for i in range(0, pairs, self.batch_size)]
        sizes: list[int] = []
        left = pairs
        while left > 0:
            size = max(1, min(DEFAULT_BATCH_SIZE, math.ceil(left / (2 * max(1, workers)))))
            sizes.append(size)
            left -= size
        return sizes

    @contextlib.contextmanager
    def _client(self) -> Iterator[Any]:
        from distributed import Client, LocalCluster

        if self.scheduler is None:
            cluster = LocalCluster(
                n_workers=self.workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address="127.0.0.1:0",  # any free port: its HTTP server always runs
                silence_logs=logging.ERROR,
            )
            try:
                with Client(cluster, timeout=CONNECT_TIMEOUT) as client:
                    yield client
            finally:
                cluster.close(timeout=CLOSE_TIMEOUT)
            return
        try:
            client = Client(self.scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as exc:
            raise UserError(
                Problem(
                    "--scheduler",
                    self.scheduler,
                    f"no Dask scheduler answered ({type(exc).__name__}: {exc})",
                    "start `dask scheduler` there, or give its tcp://HOST:8786 address",
                )
            ) from exc
        with client:
            yield client

    def run(
        self, job: RunJob, pairs: list[DrawnPair], on_outcome: Callable[[PairOutcome], None]
    ) -> None:
        if not pairs:
            return
        import dask
        from distributed import as_completed

        # the whole run's set-up, once, here (the freeze's set-up cache makes a rerun's
        # cheap): the hosts score from it, coverage reuse included, as the local executor
        # does, and the run folder gets its baseline.json and coverage.json
        ctx = prepared_context(job, pairs)
        spec = BatchSpec(
            freeze_id=job.freeze_id,
            post_hoc=job.post_hoc,
            plan=job.plan,
            liveness=job.corpus.liveness,
            hashes=installed_part(job.hashes),  # as verified against the freeze
            target_versions=job.versions,
            checker=job.checker,
            recorded_probes=job.corpus.recorded_probes,
            prepared=PreparedSetup.of(ctx),
            hash_seed=os.environ.get("PYTHONHASHSEED"),
            run_token=uuid.uuid4().hex,
        )
        del ctx
        with self._client() as client:

            def threads() -> int:  # asked anew: workers may join (or leave) during a run
                return sum(client.nthreads().values())

            batches, start = [], 0
            for size in self.batch_sizes(len(pairs), threads()):
                batches.append(pairs[start : start + size])
                start += size
            submitted: dict[Any, tuple[int, int]] = {}  # future -> (batch, tries so far)
            # sent with one task whose result the others depend on, not with every task: a
            # task, unlike scattered data, is computed again when the worker holding it is lost.
            # Sent once, it is the graph Dask's large-graph warning advises (12 MiB on the
            # exhaustive closed-world plan): the warning is silenced for this one task only.
            with dask.config.set({LARGE_GRAPH_WARNING: "1 PiB"}):
                shared = client.submit(_spec, spec, pure=False)

            def submit(index: int, tries: int) -> Any:
                future = client.submit(score_batch, shared, batches[index], pure=False)
                submitted[future] = (index, tries + 1)
                return future

            feeder = BatchFeeder(len(batches), threads)
            results = as_completed([submit(i, 0) for i in feeder.send(0)])
            for future in results:
                index, tries = submitted.pop(future)
                for following in feeder.send(len(submitted)):
                    results.add(submit(following, 0))
                try:
                    outcomes = future.result()
                except FreezeMismatch as exc:
                    client.cancel(list(submitted))
                    raise UserError(exc.problems()) from exc
                except HostStartFailed as exc:
                    client.cancel(list(submitted))
                    raise UserError(
                        Problem(
                            f"dask worker {exc.worker}",
                            "batch host",
                            f"could not start ({exc.reason})",
                            "install the project and its packages on that worker "
                            "(docs/cluster.md) and restart it",
                        )
                    ) from exc
                except Exception as exc:  # a lost worker or host, beyond Dask's own retries
                    if tries < BATCH_TRIES:
                        results.add(submit(index, tries))
                        continue
                    if len(batches[index]) > 1:  # find the pair that fails alone
                        for pair in batches[index]:
                            batches.append([pair])
                            results.add(submit(len(batches) - 1, 0))
                        continue
                    outcomes = _crashes(batches[index], tries, exc)
                for outcome in outcomes:
                    on_outcome(outcome)


class BatchFeeder:
    """Which of a run's batches to send next: one in flight per worker thread the cluster has
    when a batch answers. Submitted all at once (or two a thread), the batches were assigned
    to workers early and a host sat idle at the end while another had several left
    (docs/throughput.md); counted once at the start, a worker that joined later would get
    none, and a run begun before any worker joined would send one batch at a time."""

    def __init__(self, batches: int, threads: Callable[[], int]) -> None:
        self._waiting = iter(range(batches))
        self._threads = threads

    def send(self, in_flight: int) -> list[int]:
        """The batches to submit now, `in_flight` being those sent and not yet answered."""
        wanted = max(1, self._threads()) - in_flight
        return list(itertools.islice(self._waiting, max(0, wanted)))


def _spec(spec: BatchSpec) -> BatchSpec:
    return spec


def _crashes(batch: list[DrawnPair], tries: int, exc: Exception) -> list[PairOutcome]:
    started = datetime.now(UTC).isoformat(timespec="seconds")
    error = f"failed {tries} times on the cluster: {type(exc).__name__}: {exc}"
    score = PairScore(status=PairStatus.CRASH, error=error)  # frozen: one object serves all
    return [PairOutcome(p.pair_id, score, started, 0.0) for p in batch]
