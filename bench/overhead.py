"""The harness's overhead against the work a pair must do, set-up cached and not, and Dask
against local at the same worker count (issue 31).

    python bench/overhead.py [--limit N] [--targets toy_domain,agentdojo-banking]
                             [--workers N] [--no-dask] [--profile N] [--[no-]recorded]
                             [--keep DIR]

In one sitting, on open-world mutants (Cosmic Ray's operators, `bench/throughput.py`'s plan,
`--limit` mutants a target, seeded) in a throwaway project; by default with the recorded
calls (`recorded_calls:` and a copy of corpora/), as the repository's 1.3.0 plans run the
checker (`--no-recorded`: the fresh-environment probes only, as 1.2.0's plans did):

1. **Bare work** of each pair: its liveness calls, its grader replays (`grade` of each task
   that calls the tool) and the checker's run, all on the ORIGINAL tool, in this warm
   process (one untimed pass first, then the best of two), before the runs and again after
   them. A pair's **overhead** is its wall time in the ledger (1 worker) over its bare work;
   per target family, the sum of pair times over the sum of bare work, against the bare work
   measured before the runs and (in brackets) after them, with the *drift* (after / before):
   a drift far from 1 means the machine (a neighbour's load, on a shared one) or this
   process (what the runs' set-up left cached) changed while the pairs ran, and then neither
   ratio alone is to be believed. `pair_over_checker_run` is the old ratio
   (`throughput.py`'s `pair_over_bare_checker`), renamed for what it measures: pair time
   over the checker's run alone. Both with coverage-guided scoring on and off, each with its
   set-up computed (a cached set-up warms each target as its first pair's child is forked,
   and a pair answering meanwhile shows that warm-up in its time), whose rows must be
   identical (else exit 1).
2. **Set-up to first row**, uncached (results/ removed, the set-up cache with it) and
   cached (only the run folder removed: `results/.setup-cache` kept), and the rows of the
   two (identical, else exit 1). Beside each run's set-up, the seconds this process's cyclic
   garbage collector ran in it (`common.CollectorLog`): in a warm process a full collection
   walks all that the earlier runs left, and whether one falls before the first row is
   chance (the 2026-12-07 sittings' 0.027 against 0.112).
2b. **Stopped and resumed**: a fresh `python -m harness run --workers N`, sent SIGTERM once
   its ledger holds half the pairs, then run again to its end: its rows against the
   uninterrupted run's (identical, else exit 1), and no pair lost or recorded twice.
3. **Dask against local** at `--workers` (default 2): the local executor, a LocalCluster,
   and a real `dask scheduler` + `dask worker --nworkers N` on 127.0.0.1, all with the set-up
   cached and coverage on, in batches of the size the executor chooses for `harness run`
   (`--batch-size` to set one; the files up to 2026-12-05's second sitting were measured with
   8, which leaves a worker idle at the end of a small run); wall time and the time from the
   first row to the last; rows identical to local's (else exit 1).
3b. **Where each scoring process's time goes**, local and on each batch host (`timeline`: a
   spy in this process and, as sitecustomize, in the cluster's): batches, warm-ups, waits
   between batches, time before a batch's first outcome and after its last, idle at the
   end; and the *scoring span*, the first batch's start to the last one's end over all
   processes, Dask's over local's. That is the fair ratio: a Dask client gets a batch's
   rows when the batch ends, so its first row comes a whole batch after scoring began and
   "first row to last" leaves that batch out (as this bench's Dask ratios before 2026-12-05's
   second sitting did).
4. With `--profile N`: N pairs scored each in a forked child under cProfile (coverage off,
   the runs a pair must do): the child's time split among applying the mutant, liveness,
   grader, checker and deciding the row, beside the pair's ledger time (the rest: fork,
   the child's isolation, IPC, join, ledger).

The load average is printed beside every time. Writes
results/bench/overhead-<date>[-no-recorded]-limit<N>[-LABEL].json and .md. Runs under
PYTHONHASHSEED=0 unless a seed is set, as `harness` does.
"""

from __future__ import annotations

import argparse
import cProfile
import itertools
import json
import os
import pstats
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import (
    CollectorLog,
    RowClock,
    add_output_options,
    bare_runs,
    ledger_differences,
    load,
    output_stem,
    run_to_first_row,
    set_up_steps,
    steps_said,
    today,
)
from throughput import bench_project

from harness.cli import fixed_hash_seed
from harness.execution.draw import Corpus, DrawnPair
from harness.execution.freeze import checker_for
from harness.execution.ledger import LedgerRow, read_rows
from harness.execution.plan import load_plan
from harness.execution.recorded_calls import attach_probes
from harness.execution.runner import execute
from harness.targets.registry import Target, load_target

WAIT = 120  # seconds for a scheduler or its workers to come up
LINES: list[str] = []  # what this sitting printed, for the .md


def say(*parts: Any, flush: bool = True) -> None:
    line = " ".join(str(p) for p in parts)
    LINES.append(line)
    print(line, flush=flush)


def family(target: str) -> str:
    return "toy_domain" if target == "toy_domain" else target.split("-")[0]


# --- 1. bare work -------------------------------------------------------------------------


def _tool_work(target: Target, tool: str, calls: list[Any], checker: Any) -> tuple[float, float]:
    """(seconds of the tool's liveness calls + grader replays + checker run, seconds of the
    checker run alone), on the original (`common.bare_runs`)."""
    runs = bare_runs(target, tool, calls, checker)
    return sum(runs.values()), runs["checker"]


def bare_work(
    plan_path: Path, corpus: Corpus, *, warm_up: bool = True
) -> dict[tuple[str, str], tuple[float, float]]:
    """(target, tool) -> (bare work, checker run) in seconds: the best of two timed passes
    after one untimed one (`warm_up`; a second measurement in the same process skips it),
    in this process. The liveness calls are the drawn corpus's (its recorded liveness half
    among them) and the checker has the recorded probe half, as a pair's child has them."""
    plan = load_plan(plan_path)
    checker = checker_for(plan)
    targets = {name: load_target(name) for name in plan.targets()}
    attach_probes(targets, corpus.recorded_probes)
    keys = sorted({(p.mutant.target, p.tool) for p in corpus.pairs})
    best: dict[tuple[str, str], tuple[float, float]] = {}
    for attempt in range(0 if warm_up else 1, 3):
        for name, tool in keys:
            calls = corpus.liveness.get(name, {}).get(tool, [])
            work, check = _tool_work(targets[name], tool, calls, checker)
            if attempt == 0:
                continue  # warm-up: imports, caches, first touches
            old = best.get((name, tool), (float("inf"), float("inf")))
            best[(name, tool)] = (min(old[0], work), min(old[1], check))
    return best


def wall_overhead(entry: dict[str, Any], bare: dict[tuple[str, str], tuple[float, float]]) -> float:
    """A 1-worker run's wall time from its first row to its last over the bare work of the
    pairs after the first: the overhead no per-pair clock can hide (a child's exit, say,
    overlapping the next pair)."""
    later = entry["rows"][1:]
    return entry["first_to_last_row_s"] / sum(bare[(r.target, r.tool)][0] for r in later)


def overheads(
    rows: list[LedgerRow],
    bare: dict[tuple[str, str], tuple[float, float]],
    after: dict[tuple[str, str], tuple[float, float]],
) -> dict[str, dict[str, float]]:
    """Per target family: pairs, pair seconds, bare-work seconds and checker seconds summed,
    overhead = pair / bare work, and pair / checker run; and the same overhead against the
    bare work measured again `after` the runs, with the drift (after / before): the two
    sides of the ratio are timed minutes apart, and a drift far from 1 says the machine (a
    neighbour's load on a shared one) or this process (still warming) changed in between,
    so neither ratio alone is to be believed."""
    out: dict[str, dict[str, float]] = {}
    for row in rows:
        work, check = bare[(row.target, row.tool)]
        entry = out.setdefault(
            family(row.target),
            {"pairs": 0, "pair_s": 0.0, "bare_work_s": 0.0, "checker_s": 0.0, "after_s": 0.0},
        )
        entry["pairs"] += 1
        entry["pair_s"] += row.timing.seconds
        entry["bare_work_s"] += work
        entry["checker_s"] += check
        entry["after_s"] += after[(row.target, row.tool)][0]
    for entry in out.values():
        entry["overhead_vs_bare_work"] = round(entry["pair_s"] / entry["bare_work_s"], 2)
        entry["overhead_vs_bare_work_after"] = round(entry["pair_s"] / entry["after_s"], 2)
        entry["bare_work_drift"] = round(entry["after_s"] / entry["bare_work_s"], 2)
        entry["pair_over_checker_run"] = round(entry["pair_s"] / entry["checker_s"], 2)
        entry["bare_work_pairs_per_s"] = round(entry["pairs"] / entry["bare_work_s"], 1)
        for key in ("pair_s", "bare_work_s", "checker_s"):
            entry[key] = round(entry[key], 2)
        entry["bare_work_after_s"] = round(entry.pop("after_s"), 2)
    return dict(sorted(out.items()))


# --- runs ---------------------------------------------------------------------------------


def run(plan_path: Path, *, fresh: bool, **options: Any) -> dict[str, Any]:
    """One `execute` into a removed run folder; `fresh` removes the set-up cache too."""
    results = plan_path.parent.parent / "results"
    if fresh:
        shutil.rmtree(results, ignore_errors=True)
    else:
        shutil.rmtree(results / load_plan(plan_path).name, ignore_errors=True)
    before, clock = load(), RowClock()
    began = time.perf_counter()
    with CollectorLog() as collector:
        result = execute(plan_path, progress=clock, **options)
    seconds = time.perf_counter() - began
    first_pair = result.rows[0].timing.seconds  # the ledger's first row is the first done
    return {
        "seconds": round(seconds, 2),
        "set_up_to_first_row_s": round(clock.first - clock.began, 2),
        # without the first pair's own time: what the parent did before its first fork
        "set_up_only_s": round(clock.first - clock.began - first_pair, 2),
        # of the set-up to the first row: this process's garbage collector
        "collector_to_first_row": collector.within(clock.began, clock.first),
        "first_to_last_row_s": round(clock.ended - clock.first, 2),
        "pairs": len(result.rows),
        "reused_runs": sum(r.reused_runs for r in result.rows),
        "skipped_by_coverage": sum(r.skipped_by_coverage for r in result.rows),
        "load_before": before,
        "load_after": load(),
        "rows": result.rows,
    }


def public(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k != "rows"}


def show(label: str, entry: dict[str, Any]) -> None:
    say(
        f"  {label:<34} {entry['seconds']:7.2f} s, set-up to first row "
        f"{entry['set_up_to_first_row_s']:6.2f} s ({entry['set_up_only_s']:5.2f} s before the "
        f"first pair; the collector {entry['collector_to_first_row']['seconds']:.2f} s of it, "
        f"{entry['collector_to_first_row']['full']} full), first to last "
        f"{entry['first_to_last_row_s']:6.2f} s; "
        f"load {entry['load_before']} -> {entry['load_after']}",
        flush=True,
    )


def same(label: str, rows: list[LedgerRow], others: list[LedgerRow], failures: list[str]) -> bool:
    bad = ledger_differences(rows, others)
    say(f"  rows {label}: " + ("IDENTICAL" if not bad else f"DIFFER in {len(bad)}"), flush=True)
    if bad:
        failures.append(f"{label}: {list(bad.items())[:3]}")
    return not bad


# --- 2. a fresh `harness run` to its first row ---------------------------------------------


def first_row_in_fresh_process(plan_path: Path, *, fresh: bool) -> dict[str, Any]:
    """`python -m harness run PLAN --workers 1` as a user starts it (imports and targets
    included): seconds until its ledger holds a first whole row, then until it exits, and
    the seconds its `set-up:` lines give (`common.set_up_steps`)."""
    root = plan_path.parent.parent
    name = load_plan(plan_path).name
    shutil.rmtree(root / "results" if fresh else root / "results" / name, ignore_errors=True)
    before = load()
    first, ended, errors = run_to_first_row(
        ["run", str(plan_path), "--workers", "1"], root, root / "results" / name
    )
    return {
        "first_row_s": round(first if first is not None else ended, 2),
        "seconds": round(ended, 2),
        "load_before": before,
        "load_after": load(),
        "steps": set_up_steps(errors),
    }


# --- 2b. a run stopped and resumed ----------------------------------------------------------


def stopped_and_resumed(plan_path: Path, workers: int, pairs: int) -> dict[str, Any]:
    """`python -m harness run PLAN` as a user starts it, stopped by SIGTERM once its ledger
    holds half the pairs, then run again to the end (set-up cached): how many rows the stop
    left, whether any pair is in the ledger twice, and the rows, for comparison with an
    uninterrupted run. Its first two sittings found the signal lost: it landed while the
    runner forked a pair, CPython ignored the `Stopped` raised in logging's at-fork
    callback, and the run went on to its end (exit 0, every row kept); `harness.cli.
    StopLatch` raises it again after the next row (tests/test_stop_latch.py)."""
    root = plan_path.parent.parent
    name = load_plan(plan_path).name
    shutil.rmtree(root / "results" / name, ignore_errors=True)
    command = [sys.executable, "-m", "harness", "run", str(plan_path), "--workers", str(workers)]
    before = load()
    process = subprocess.Popen(command, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ledger = None
    stopped_at = 0
    while process.poll() is None:
        ledgers = list((root / "results" / name).glob("*/ledger.jsonl"))
        if ledgers:
            ledger = ledgers[0]
            stopped_at = ledger.read_bytes().count(b"\n")
            if stopped_at >= pairs // 2:
                os.kill(process.pid, signal.SIGTERM)  # not reaped yet: poll() said running
                break
        time.sleep(0.01)
    _, errors = process.communicate()
    stop_code = process.returncode
    if ledger is None:
        raise SystemExit(f"harness run wrote no ledger: {errors.decode()[-2000:]}")
    after_stop = len(list(read_rows(ledger)))
    resumed = subprocess.run(command, cwd=root, capture_output=True)
    if resumed.returncode != 0:
        raise SystemExit(f"the resumed harness run failed: {resumed.stderr.decode()[-2000:]}")
    rows = list(read_rows(ledger))
    ids = [r.pair_id for r in rows]
    return {
        "signal_sent_at_rows": stopped_at,
        "stop_exit_code": stop_code,
        "rows_after_stop": after_stop,
        "rows_after_resume": len(rows),
        "duplicate_pairs": len(ids) - len(set(ids)),
        "load_before": before,
        "load_after": load(),
        "rows": rows,
    }


# --- 3. a real scheduler over loopback ------------------------------------------------------


class LoopbackCluster:
    """`dask scheduler` and `dask worker --nworkers N --nthreads 1` on 127.0.0.1, as
    subprocesses of this one (ended by their handles on exit)."""

    def __init__(self, folder: Path, workers: int):
        self.folder, self.workers = folder, workers
        self.processes: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> str:
        from distributed import Client

        file = self.folder / "scheduler.json"
        self.log = open(self.folder / "cluster.log", "ab")  # closed in __exit__
        log = self.log
        python = sys.executable
        scheduler = ["--host", "127.0.0.1", "--port", "0", "--no-dashboard"]
        scheduler += ["--scheduler-file", str(file)]
        self.processes.append(
            subprocess.Popen(
                [python, "-m", "distributed.cli.dask_scheduler", *scheduler],
                stdout=log,
                stderr=log,
            )
        )
        deadline = time.monotonic() + WAIT
        while not file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        worker = ["--scheduler-file", str(file), "--nworkers", str(self.workers)]
        worker += ["--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"]
        self.processes.append(
            subprocess.Popen(
                [python, "-m", "distributed.cli.dask_worker", *worker],
                stdout=log,
                stderr=log,
            )
        )
        with Client(scheduler_file=str(file), timeout=WAIT) as client:
            client.wait_for_workers(self.workers, timeout=WAIT)
            return str(client.scheduler.address)

    def __exit__(self, *_: object) -> None:
        for process in reversed(self.processes):
            process.terminate()
        for process in reversed(self.processes):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.log.close()


# --- 3b. where a batch host's time goes ----------------------------------------------------

# Installed in this process and, as sitecustomize on PYTHONPATH, in every process started
# while `timeline` is active (a cluster's workers, and so their batch hosts): it logs each
# `score_pairs` call (a batch on a host; the whole run locally) with the time of each
# outcome, and each warm-up (`warm_for` that ran), on the system-wide monotonic clock.
TIMELINE_SPY = """
import os

if os.environ.get("TIMELINE_LOG"):
    import json
    import time

    from harness.execution import executors

    _score_pairs, _warm_for = executors.score_pairs, executors.warm_for

    def _write(entry):
        with open(os.environ["TIMELINE_LOG"], "a") as log:
            log.write(json.dumps(entry) + "\\n")

    def warm_for(ctx, pair):
        began = time.monotonic()
        ran = _warm_for(ctx, pair)
        if ran:
            _write({"pid": os.getpid(), "kind": "warm", "began": began,
                    "ended": time.monotonic(), "target": pair.mutant.target})
        return ran

    def score_pairs(ctx, pairs, workers, on_outcome):
        began, outcomes = time.monotonic(), []

        def seen(outcome):
            outcomes.append([time.monotonic(), outcome.seconds])
            on_outcome(outcome)

        try:
            _score_pairs(ctx, pairs, workers, seen)
        finally:
            _write({"pid": os.getpid(), "kind": "batch", "began": began,
                    "ended": time.monotonic(), "outcomes": outcomes})

    executors.score_pairs, executors.warm_for = score_pairs, warm_for
"""


class timeline:  # a context manager read as a clause: `with timeline(log):`
    """The spy active here and in the processes started meanwhile, logging to `log`."""

    def __init__(self, log: Path):
        self.log = log

    def __enter__(self) -> Path:
        import harness.execution.executors as executors

        folder = self.log.parent / "timeline-spy"
        folder.mkdir(exist_ok=True)
        (folder / "sitecustomize.py").write_text(TIMELINE_SPY)
        self.saved = {k: os.environ.get(k) for k in ("PYTHONPATH", "TIMELINE_LOG")}
        self.originals = (executors.score_pairs, executors.warm_for)
        paths = [str(folder), os.environ.get("PYTHONPATH", "")]
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
        os.environ["TIMELINE_LOG"] = str(self.log)
        exec(TIMELINE_SPY, {})  # here too: the local executor and the client run in-process
        return self.log

    def __exit__(self, *_: object) -> None:
        import harness.execution.executors as executors

        executors.score_pairs, executors.warm_for = self.originals
        for key, value in self.saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def host_time(log: Path) -> dict[str, Any]:
    """Per scoring process (the local runner, or each batch host), from the spy's log: its
    batches, the time from its first batch's start to its last one's end, warm-ups, the
    waits between its batches, what each batch spent before its first outcome beyond that
    pair's own time (fork, warm-up) and after its last outcome (ending its children), and
    how long it sat idle after its last batch while another process still scored."""
    entries = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    batches = [e for e in entries if e["kind"] == "batch" and e["outcomes"]]
    if not batches:
        return {}
    last_row = max(t for b in batches for t, _ in b["outcomes"])
    first_row = min(t for b in batches for t, _ in b["outcomes"])
    out: dict[str, Any] = {
        "first_to_last_row_s": round(last_row - first_row, 2),
        # from the first batch's start to the last one's end, over every process: the
        # scoring's own time (a Dask client sees a batch's rows only when it ends, so its
        # first row comes a whole batch after the scoring began)
        "scoring_span_s": round(
            max(b["ended"] for b in batches) - min(b["began"] for b in batches), 2
        ),
        "processes": [],
    }
    for pid in sorted(
        {b["pid"] for b in batches}, key=lambda p: min(b["began"] for b in batches if b["pid"] == p)
    ):
        mine = sorted((b for b in batches if b["pid"] == pid), key=lambda b: b["began"])
        warms = [e for e in entries if e["kind"] == "warm" and e["pid"] == pid]
        heads = [b["outcomes"][0][0] - b["began"] - b["outcomes"][0][1] for b in mine]
        out["processes"].append(
            {
                "batches": len(mine),
                "pairs": sum(len(b["outcomes"]) for b in mine),
                "span_s": round(mine[-1]["ended"] - mine[0]["began"], 2),
                "warm_ups": len(warms),
                "warm_up_s": round(sum(e["ended"] - e["began"] for e in warms), 2),
                "between_batches_s": round(
                    sum(b["began"] - a["ended"] for a, b in itertools.pairwise(mine)), 2
                ),
                "before_first_outcome_s": round(sum(max(0.0, h) for h in heads), 2),
                "after_last_outcome_s": round(
                    sum(b["ended"] - b["outcomes"][-1][0] for b in mine), 2
                ),
                "idle_after_its_last_batch_s": round(max(0.0, last_row - mine[-1]["ended"]), 2),
            }
        )
    return out


def show_host_time(label: str, found: dict[str, Any]) -> None:
    if not found:
        say(f"  {label}: no batch logged")
        return
    say(
        f"  {label}: scoring span {found['scoring_span_s']:.2f} s (first batch's start to the "
        f"last one's end), first to last outcome {found['first_to_last_row_s']:.2f} s"
    )
    for index, p in enumerate(found["processes"], 1):
        say(
            f"    process {index}: {p['batches']} batches, {p['pairs']} pairs, span "
            f"{p['span_s']:.2f} s; {p['warm_ups']} warm-ups {p['warm_up_s']:.2f} s; between "
            f"batches {p['between_batches_s']:.2f} s; before first outcome (beyond the pair) "
            f"{p['before_first_outcome_s']:.2f} s, after last {p['after_last_outcome_s']:.2f} s;"
            f" idle at the end {p['idle_after_its_last_batch_s']:.2f} s"
        )


# --- 4. where a pair's time goes ------------------------------------------------------------

PHASES = {  # (file the function is defined in, its name) -> phase of a pair's child
    ("harness/mutation/apply.py", "apply_in_memory"): "apply the mutant",
    ("harness/execution/liveness.py", "observe"): "liveness calls",
    ("harness/execution/pair_scoring.py", "grader_verdict"): "grader replays",
    ("harness/checker/__init__.py", "check"): "checker run",
    ("harness/execution/pair_scoring.py", "_decide"): "decide the row",
}


def profile_pairs(plan_path: Path, pairs: list[DrawnPair], folder: Path) -> dict[str, Any]:
    """Each pair scored in a forked child under cProfile (coverage off: every run), the
    children's stats merged: seconds per phase (cumulative time of its function), the
    child's whole `score_pair`, and the top functions by own time."""
    from harness.execution.draw import load_corpus
    from harness.execution.pair_scoring import complete_context, new_context, score_pair

    plan = load_plan(plan_path)
    corpus = load_corpus(plan_path.parent.parent, plan)
    ctx = new_context(plan, "profile", True, corpus.liveness, corpus)
    complete_context(ctx, pairs, None)
    files = []
    child_seconds = []
    for index, pair in enumerate(pairs):
        out = folder / f"pair-{index}.prof"
        timing = folder / f"pair-{index}.json"
        pid = os.fork()
        if pid == 0:  # the child: as the runner's, without its isolation
            code = 0
            try:
                profiler = cProfile.Profile()
                began = time.perf_counter()
                profiler.runcall(score_pair, ctx, pair)
                timing.write_text(json.dumps(time.perf_counter() - began))
                profiler.dump_stats(out)
            except BaseException:
                code = 1
            os._exit(code)
        os.waitpid(pid, 0)
        if out.exists():
            files.append(str(out))
            child_seconds.append(json.loads(timing.read_text()))
    stats = pstats.Stats(*files)
    phases: dict[str, float] = {}
    for (file, _, name), (_, _, _, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        phase = next((v for (f, n), v in PHASES.items() if n == name and file.endswith(f)), None)
        if phase is not None:  # each called once per pair, never inside another phase
            phases[phase] = phases.get(phase, 0.0) + cumulative
    own = sorted(
        (
            (tt, f"{Path(f).name}:{line}:{name}")
            for (f, line, name), (_, _, tt, _, _) in stats.stats.items()
        ),  # type: ignore[attr-defined]
        reverse=True,
    )[:15]
    return {
        "pairs": len(files),
        "score_pair_s": round(sum(child_seconds), 3),
        "phases_s": {k: round(v, 3) for k, v in sorted(phases.items())},
        "top_own_time": [(round(t, 3), name) for t, name in own],
    }


AHEAD_STEPS = (  # what `executors._child` calls before its pair reaches it, in order
    "die_with_parent",
    "ignore_stop_signals",
    "become_subreaper",
    "confine_writes",
)
PAIR_STEPS = ("limit_self", "score_pair", "end_descendants")  # then, on the pair's path
CHILD_STEPS = AHEAD_STEPS + PAIR_STEPS


def executor_phases(plan_path: Path) -> dict[str, Any]:
    """One 1-worker run (coverage off, set-up cached) with a timer around each step of the
    pair child (`CHILD_STEPS`, reported through a pipe the children inherit: their file
    system is read-only) and around the parent's start of each child (the fork): mean
    milliseconds a pair, beside the pair's ledger time. The fork and the child's steps
    before its pair reaches it (`AHEAD_STEPS`) run ahead, beside the previous pair; the
    rest of the ledger time is what `PAIR_STEPS` leave unaccounted."""
    import multiprocessing.process

    import harness.execution.executors as executors

    read, write = os.pipe()
    parent = os.getpid()
    in_parent: dict[str, list[float]] = {}

    def timed(name: str, function: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                seconds = time.perf_counter() - began
                if os.getpid() == parent:
                    in_parent.setdefault(name, []).append(seconds)
                else:
                    os.write(write, (json.dumps([name, seconds]) + "\n").encode())

        return wrapper

    saved = {name: getattr(executors, name) for name in CHILD_STEPS}
    start = multiprocessing.process.BaseProcess.start
    for name in CHILD_STEPS:
        setattr(executors, name, timed(name, saved[name]))
    multiprocessing.process.BaseProcess.start = timed("fork (Process.start)", start)  # type: ignore[method-assign]
    try:
        done = run(plan_path, fresh=False, workers=1, skip_by_coverage=False)
    finally:
        for name, function in saved.items():
            setattr(executors, name, function)
        multiprocessing.process.BaseProcess.start = start  # type: ignore[method-assign]
        os.close(write)
    in_child: dict[str, list[float]] = {}
    with os.fdopen(read, "rb") as lines:
        for line in lines:
            name, seconds = json.loads(line)
            in_child.setdefault(name, []).append(seconds)
    pairs = done["pairs"]
    mean = {f"child {k}": 1000 * sum(v) / pairs for k, v in in_child.items()}
    mean |= {f"parent {k}": 1000 * sum(v) / pairs for k, v in in_parent.items()}
    ledger_ms = 1000 * sum(r.timing.seconds for r in done["rows"]) / pairs
    accounted = sum(v for k, v in mean.items() if k.removeprefix("child ") in PAIR_STEPS)
    return {
        "pairs": pairs,
        "ledger_ms_a_pair": round(ledger_ms, 2),
        "ms_a_pair": {k: round(v, 2) for k, v in sorted(mean.items())},
        "rest_ms_a_pair": round(ledger_ms - accounted, 2),  # child start-up, IPC, join, wait
        "load": [done["load_before"], done["load_after"]],
    }


# --- the sitting ----------------------------------------------------------------------------


def main() -> int:
    fixed_hash_seed()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=12, help="mutants a target (seeded)")
    parser.add_argument("--targets", default="toy_domain,agentdojo-banking")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-dask", action="store_true")
    parser.add_argument(
        "--batch-size",
        type=int,
        help="Dask's pairs a batch (default: the executor's own choice, as `harness run "
        "--executor dask` makes it; this bench's files up to 2026-12-05's second used 8)",
    )
    parser.add_argument("--profile", type=int, default=0, help="profile this many pairs")
    parser.add_argument(
        "--recorded",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the checker with the recorded-call corpora, as the 1.3.0 plans run it (default)",
    )
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--keep", type=Path, help="work in this new folder and keep it")
    add_output_options(parser)
    args = parser.parse_args()
    suffix = "" if args.recorded else "-no-recorded"
    out = output_stem(f"overhead-{today()}{suffix}-limit{args.limit}", args)
    targets = args.targets.split(",")
    say(f"load average at the start: {load()} on {os.cpu_count()} CPUs", flush=True)
    failures: list[str] = []
    report: dict[str, Any] = {"date": today(), "targets": targets, "limit": args.limit}
    with tempfile.TemporaryDirectory(prefix="overhead-") as tmp:
        folder = Path(tmp) if args.keep is None else args.keep.resolve()
        plan_path, corpus = bench_project(
            folder / "project", targets, 1, args.limit, args.seed, recorded=args.recorded
        )
        recorded = "with" if args.recorded else "without"
        say(
            f"{len(corpus.pairs)} pairs of {', '.join(targets)}; checker "
            f"{checker_for(load_plan(plan_path)).version} {recorded} the recorded calls",
            flush=True,
        )
        report["pairs"] = len(corpus.pairs)
        report["recorded_calls"] = args.recorded

        say("1. pairs against their bare work (1 worker):", flush=True)
        before = load()
        bare = bare_work(plan_path, corpus)
        report["bare_work_load"] = [before, load()]
        on = run(plan_path, fresh=True, workers=1)
        show("coverage on, set-up uncached", on)
        # uncached as the run with coverage on: after a cached set-up the parent warms each
        # target as its first pair's child is forked, and a pair answering meanwhile would
        # show that warm-up in its time (pair_scoring.warm_for)
        off = run(plan_path, fresh=True, workers=1, skip_by_coverage=False)
        show("coverage off, set-up uncached", off)
        same("coverage on / off", on["rows"], off["rows"], failures)
        before = load()
        after = bare_work(plan_path, corpus, warm_up=False)
        report["bare_work_after_load"] = [before, load()]
        report["overhead"] = {
            "coverage_on": overheads(on["rows"], bare, after),
            "coverage_off": overheads(off["rows"], bare, after),
        }
        for label, entry in (("coverage_on", on), ("coverage_off", off)):
            ratio = round(wall_overhead(entry, bare), 2)
            report["overhead"][f"{label}_all_families_by_wall_time"] = ratio
            say(f"  {label:<13} all families: wall time after the first row / bare work {ratio}")
        drifts = {
            name: entry["bare_work_drift"]
            for name, entry in report["overhead"]["coverage_on"].items()
        }
        if any(abs(drift - 1) > 0.1 for drift in drifts.values()):
            say(
                f"  the bare work drifted by more than 10 % while the pairs ran ({drifts}): the "
                "machine, or what this process had cached, changed in between; read both ratios",
                flush=True,
            )
        for label, by_family in report["overhead"].items():
            if not isinstance(by_family, dict):
                continue
            for name, entry in by_family.items():
                say(
                    f"  {label:<13} {name:<11} {entry['pairs']:4} pairs: overhead vs bare work "
                    f"{entry['overhead_vs_bare_work']:5.2f} "
                    f"({entry['overhead_vs_bare_work_after']:.2f} against the bare work after "
                    f"the runs, drift {entry['bare_work_drift']:.2f})"
                    f", pair / checker run {entry['pair_over_checker_run']:5.2f} (bare work "
                    f"{entry['bare_work_pairs_per_s']} pairs/s)",
                    flush=True,
                )

        say("2. set-up to the first row, uncached and cached (1 worker):", flush=True)
        uncached = run(plan_path, fresh=True, workers=1)
        show("uncached", uncached)
        cached = run(plan_path, fresh=False, workers=1)
        show("cached", cached)
        same("uncached / cached", uncached["rows"], cached["rows"], failures)
        ratio = cached["set_up_to_first_row_s"] / uncached["set_up_to_first_row_s"]
        say(f"  cached / uncached set-up to first row (warm process): {ratio:.3f}", flush=True)
        alone = cached["set_up_only_s"] / max(uncached["set_up_only_s"], 1e-9)
        say(f"  cached / uncached set-up before the first pair: {alone:.3f}", flush=True)
        cold = first_row_in_fresh_process(plan_path, fresh=True)
        warm = first_row_in_fresh_process(plan_path, fresh=False)
        cold_ratio = warm["first_row_s"] / cold["first_row_s"]
        for label, entry in (("uncached", cold), ("cached", warm)):
            say(
                f"  fresh `harness run`, {label:<8}: first row after {entry['first_row_s']:6.2f} s"
                f", done after {entry['seconds']:6.2f} s; load {entry['load_before']}",
                flush=True,
            )
            say(f"    of it, by its own set-up lines: {steps_said(entry['steps'])}", flush=True)
        say(f"  cached / uncached first row (fresh process): {cold_ratio:.3f}", flush=True)
        report["set_up"] = {
            "uncached": public(uncached),
            "cached": public(cached),
            "cached_over_uncached": round(ratio, 3),
            "cached_over_uncached_before_first_pair": round(alone, 3),
            "fresh_process": {
                "uncached": cold,
                "cached": warm,
                "cached_over_uncached": round(cold_ratio, 3),
            },
            "runs": {"1": public(on), "1_off": public(off)},
        }

        say(
            f"2b. a fresh `harness run --workers {args.workers}` stopped by SIGTERM at half its "
            "pairs, then resumed (set-up cached):",
            flush=True,
        )
        resumed = stopped_and_resumed(plan_path, args.workers, len(corpus.pairs))
        say(
            f"  SIGTERM at {resumed['signal_sent_at_rows']} rows, exit code "
            f"{resumed['stop_exit_code']}, {resumed['rows_after_stop']} whole rows kept; after "
            f"the resume {resumed['rows_after_resume']} rows of {len(corpus.pairs)} pairs, "
            f"{resumed['duplicate_pairs']} pairs twice; load {resumed['load_before']} -> "
            f"{resumed['load_after']}",
            flush=True,
        )
        if resumed["rows_after_stop"] >= len(corpus.pairs):
            say("  the signal did not stop the run: no resume was tested")
            failures.append("SIGTERM did not stop `harness run`")
        same("uninterrupted / stopped and resumed", cached["rows"], resumed["rows"], failures)
        if resumed["duplicate_pairs"] or resumed["rows_after_resume"] != len(corpus.pairs):
            failures.append("the resumed ledger lost or repeated a pair")
        report["resume"] = public(resumed)

        if not args.no_dask:
            from harness.execution.dask_executor import DaskExecutor

            sizes = DaskExecutor(
                scheduler=None, workers=args.workers, batch_size=args.batch_size
            ).batch_sizes(len(corpus.pairs), args.workers)
            say(
                f"3. Dask against local, {args.workers} workers, set-up cached, batches of "
                f"{sizes} pairs ({'--batch-size' if args.batch_size else 'the executor default'}):",
                flush=True,
            )
            logs = {k: folder / f"timeline-{k}.jsonl" for k in ("local", "cluster", "loopback")}
            with timeline(logs["local"]):
                local = run(plan_path, fresh=False, workers=args.workers)
            show("local", local)
            with timeline(logs["cluster"]):
                dask_local = run(
                    plan_path,
                    fresh=False,
                    executor=DaskExecutor(
                        scheduler=None, workers=args.workers, batch_size=args.batch_size
                    ),
                )
            show("dask LocalCluster", dask_local)
            same("local / dask LocalCluster", local["rows"], dask_local["rows"], failures)
            with timeline(logs["loopback"]), LoopbackCluster(folder, args.workers) as address:
                dask_real = run(
                    plan_path,
                    fresh=False,
                    executor=DaskExecutor(
                        scheduler=address, workers=None, batch_size=args.batch_size
                    ),
                )
            show("dask scheduler over loopback", dask_real)
            same("local / dask scheduler", local["rows"], dask_real["rows"], failures)
            say("  where each scoring process's time went (the spy's log, monotonic clock):")
            hosts = {k: host_time(log) for k, log in logs.items()}
            for key, label in (
                ("local", "local"),
                ("cluster", "dask LocalCluster"),
                ("loopback", "dask scheduler over loopback"),
            ):
                show_host_time(label, hosts[key])
            spans = {k: h.get("scoring_span_s") for k, h in hosts.items()}
            if all(spans.values()):
                for key in ("cluster", "loopback"):
                    report.setdefault("dask_spans", {})[f"{key}_over_local"] = round(
                        spans[key] / spans["local"], 2
                    )
                ratios = report["dask_spans"]
                say(
                    "  scoring span over local's (the fair comparison: the client's first row "
                    f"waits for a whole batch): LocalCluster {ratios['cluster_over_local']}, "
                    f"loopback scheduler {ratios['loopback_over_local']}"
                )
            report["dask"] = {
                "workers": args.workers,
                # "batch_size" in the files up to 2026-12-05 (a list in its -merged-*, -final)
                "batch_sizes": sizes,
                "local": public(local),
                "local_cluster": public(dask_local),
                "loopback_scheduler": public(dask_real),
                "where_the_time_went": hosts,
                "local_cluster_over_local": round(dask_local["seconds"] / local["seconds"], 2),
                "loopback_over_local": round(dask_real["seconds"] / local["seconds"], 2),
                "scoring_local_cluster_over_local": round(
                    dask_local["first_to_last_row_s"] / local["first_to_last_row_s"], 2
                ),
                "scoring_loopback_over_local": round(
                    dask_real["first_to_last_row_s"] / local["first_to_last_row_s"], 2
                ),
            }
            for key in (
                "local_cluster_over_local",
                "loopback_over_local",
                "scoring_local_cluster_over_local",
                "scoring_loopback_over_local",
            ):
                say(f"  {key}: {report['dask'][key]}", flush=True)

        if args.profile:
            say(f"4. where a pair's time goes ({args.profile} pairs, coverage off):", flush=True)
            chosen = corpus.pairs[:: max(1, len(corpus.pairs) // args.profile)][: args.profile]
            before = load()
            profile = profile_pairs(plan_path, chosen, folder)
            ledger_seconds = {r.pair_id: r.timing.seconds for r in off["rows"]}
            profile["ledger_pair_s"] = round(sum(ledger_seconds[p.pair_id] for p in chosen), 3)
            profile["load"] = [before, load()]
            report["profile"] = profile
            say(
                f"  ledger time of these pairs {profile['ledger_pair_s']} s; score_pair in the "
                f"child {profile['score_pair_s']} s (under cProfile); load {before}",
                flush=True,
            )
            for phase, seconds in profile["phases_s"].items():
                say(f"    {phase:<16} {seconds:7.3f} s", flush=True)
            steps = executor_phases(plan_path)
            report["executor_phases"] = steps
            say(
                f"  a pair in the local executor (1 worker, coverage off, {steps['pairs']} pairs):"
                f" {steps['ledger_ms_a_pair']} ms in the ledger; load {steps['load'][0]}",
                flush=True,
            )
            for ahead in (True, False):
                say("   in the parent, or ahead of the pair:" if ahead else "   on its path:")
                for step, ms in steps["ms_a_pair"].items():
                    if (step.removeprefix("child ") in PAIR_STEPS) != ahead:
                        say(f"    {step:<34} {ms:7.2f} ms", flush=True)
            say(f"    {'rest (IPC, waits)':<34} {steps['rest_ms_a_pair']:7.2f} ms")

    report["failures"] = failures
    Path(f"{out}.json").write_text(json.dumps(report, indent=1, default=str) + "\n")
    command = "python bench/overhead.py " + " ".join(sys.argv[1:])
    Path(f"{out}.md").write_text(
        f"# bench/overhead.py, {today()}\n\n`{command.strip()}`\n\n```\n"
        + "\n".join(LINES)
        + "\n```\n"
    )
    say(f"wrote {out}.json and .md", flush=True)
    if failures:
        say("FAILED: " + "; ".join(failures), flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
