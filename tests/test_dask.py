"""`harness run --executor dask` on loopback clusters: the same rows as the local executor, a
worker killed mid-run, a worker whose checker differs, and the option errors."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import test_runner
from test_runner import (
    FAULTS,
    comparable,
    drawn_and_frozen,
    fault_corpus,
    fault_rows,
    harness,
    ledger,
    project,
)

from harness.cli import main

distributed = pytest.importorskip("distributed")

TIMEOUT = 60  # seconds for any cluster start, connection or wait


@pytest.fixture(scope="module", autouse=True)
def _hash_seed_restored() -> Iterator[None]:
    """Starting a LocalCluster sets PYTHONHASHSEED in this process's environment (distributed's
    nanny: 6640); put it back when the module is done, so that later tests of the same worker
    (whose `harness run` children would inherit it) see the environment they started with."""
    before = os.environ.get("PYTHONHASHSEED")
    yield
    if before is None:
        os.environ.pop("PYTHONHASHSEED", None)
    else:
        os.environ["PYTHONHASHSEED"] = before


# Installed (as sitecustomize, on PYTHONPATH) in the cluster's workers, and so in their batch
# hosts, and in any process a test starts with WARM_SPY_LOG set: it logs each `warm_for` the
# executor makes just before forking a pair's child, with the context's state after it, so a
# test sees from outside how a process warmed its targets.
WARM_SPY = """
import os

if os.environ.get("WARM_SPY_LOG"):
    import json

    from harness.execution import executors

    _warm_for = executors.warm_for

    def warm_for(ctx, pair):
        ran = _warm_for(ctx, pair)
        entry = {
            "pid": os.getpid(),
            "plan": ctx.plan.name,
            "pair": pair.pair_id,
            "target": pair.mutant.target,
            "ran": ran,
            "cold": ctx.cold,
            "warm": (pair.mutant.target, pair.tool) in ctx.warmed,
        }
        with open(os.environ["WARM_SPY_LOG"], "a") as log:
            log.write(json.dumps(entry) + "\\n")
        return ran

    executors.warm_for = warm_for
"""


def _with_spy(host_log: Path) -> str:
    """PYTHONPATH with the folder of WARM_SPY's sitecustomize first."""
    paths = [str(host_log.parent), os.environ.get("PYTHONPATH", "")]
    return os.pathsep.join(p for p in paths if p)


@pytest.fixture(scope="module")
def host_log(tmp_path_factory) -> Path:
    """Where the cluster's batch hosts log their warm-ups (WARM_SPY)."""
    return tmp_path_factory.mktemp("spy") / "hosts.log"


@pytest.fixture(scope="module")
def cluster(host_log: Path) -> Iterator[tuple[str, distributed.Client]]:
    """Two single-threaded worker processes on 127.0.0.1, shared by the tests of this module,
    started with the warm-up spy on their PYTHONPATH (`host_log`)."""
    (host_log.parent / "sitecustomize.py").write_text(WARM_SPY)
    with pytest.MonkeyPatch.context() as started:  # only the workers' environment
        started.setenv("PYTHONPATH", _with_spy(host_log))
        started.setenv("WARM_SPY_LOG", str(host_log))
        local = distributed.LocalCluster(
            n_workers=2,
            processes=True,
            threads_per_worker=1,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            silence_logs=logging.ERROR,
        )
    try:
        with distributed.Client(local, timeout=TIMEOUT) as client:
            client.wait_for_workers(2, timeout=TIMEOUT)
            yield local.scheduler_address, client
    finally:
        local.close(timeout=TIMEOUT)


@pytest.fixture(scope="module")
def frozen(tmp_path_factory) -> tuple[Path, list[dict], dict, dict]:
    """A drawn and frozen project of 8 pairs, its ledger, its baseline.json and how each row
    was obtained (`obtained`) from the local executor."""
    root = project(tmp_path_factory.mktemp("frozen"), per_operator=2)
    drawn_and_frozen(root)
    scored = tmp_path_factory.mktemp("local") / "small"
    shutil.copytree(root, scored)
    done = harness("run", "plans/small.yaml", "--workers", "2", cwd=scored)
    assert done.returncode == 0, done.stderr
    (baseline,) = (scored / "results" / "small").glob("*/baseline.json")
    return root, comparable(ledger(scored)), json.loads(baseline.read_text()), obtained(scored)


def obtained(root: Path, name: str = "small") -> dict[str, tuple[bool, int]]:
    """Per pair, how its row was obtained: wholly from the original, and runs reused."""
    return {r.pair_id: (r.skipped_by_coverage, r.reused_runs) for r in ledger(root, name)}


def copy_of(frozen_root: Path, tmp_path: Path) -> Path:
    root = tmp_path / "small"
    shutil.copytree(frozen_root, root)
    return root


def run_dask(
    root: Path, address: str, *extra: str, plan: str = "small"
) -> subprocess.CompletedProcess[str]:
    return harness(
        "run", f"plans/{plan}.yaml", "--executor", "dask", "--scheduler", address, *extra, cwd=root
    )


# below the set-up a client sends for `frozen`'s 8 pairs (74 kiB), above any batch (8 kiB at most)
GRAPH_WARNING = "32kB"


def test_dask_ledger_equals_the_local_ledger_row_for_row(tmp_path, cluster, frozen, monkeypatch):
    address, _ = cluster
    root = copy_of(frozen[0], tmp_path)
    # Dask's large-graph warning lowered below this run's set-up: the set-up is sent once, by
    # design, and the client says nothing of it (it printed the warning before)
    monkeypatch.setenv("DASK_DISTRIBUTED__ADMIN__LARGE_GRAPH_WARNING_THRESHOLD", GRAPH_WARNING)
    done = run_dask(root, address, "--batch-size", "3")
    assert done.returncode == 0, done.stderr
    assert "Sending large graph" not in done.stderr, done.stderr
    rows = ledger(root)
    assert len(rows) == len({r.pair_id for r in rows}) == 8
    assert comparable(rows) == frozen[1]
    assert {r.status.value for r in rows} <= {"detected", "missed"}
    assert obtained(root) == frozen[3]  # the same runs taken from the original (issue 31)
    again = run_dask(root, address)  # resume: everything is already in the ledger
    assert "0 pairs scored now, 8 already" in " ".join(again.stdout.split())
    assert comparable(ledger(root)) == frozen[1]


TOY_EXHAUSTIVE = """
schema_version: 1
name: every
description: every candidate of three tools (test_coverage's), for coverage reuse on Dask
seed: 7
timeout_seconds: 30
liveness_probes_per_tool: 4
arms:
  - name: toy
    kind: closed_world
    target: toy_domain
    tools: [deposit, issue_voucher]
    operators: [M-PRECOND, M-IGNARG]
    draw: all
  - name: toy-open
    kind: open_world
    target: toy_domain
    tools: [deposit]
    operators: ["CR-core/ReplaceComparisonOperator_Lt_LtE", "CR-core/NumberReplacer"]
    draw: all
  - name: banking
    kind: open_world
    target: agentdojo-banking
    tools: [update_scheduled_transaction]
    operators: ["CR-core/ReplaceComparisonOperator_Eq_NotEq", "MM-*"]
    draw: all
"""


def _forks(log: Path, plan: str | None = None) -> dict[int, list[dict]]:
    """The spy's entries (of `plan`'s runs, when given) by process, in order."""
    by_process: dict[int, list[dict]] = {}
    for line in log.read_text().splitlines() if log.exists() else []:
        entry = json.loads(line)
        if plan is None or entry["plan"] == plan:
            by_process.setdefault(entry["pid"], []).append(entry)
    return by_process


def test_dask_takes_the_same_runs_from_the_original_as_local_and_warms_its_hosts(
    tmp_path, cluster, host_log, monkeypatch
):
    """Issue 31, item 3: coverage-guided scoring on Dask, with rows and reuse as local's. And
    a batch host holds the client's set-up, read rather than computed, so nothing is warm in
    it: as a local rerun from the set-up cache does (test_setup_cache), it warms each target
    once, before forking the child of that target's first pair, and forks every child warm;
    the local run that computed its set-up in its own process (one worker: no helper
    process computes it, `setup_helpers`) never warms."""
    address, _ = cluster
    root = tmp_path / "every"
    (root / "plans").mkdir(parents=True)
    (root / "plans" / "every.yaml").write_text(TOY_EXHAUSTIVE)
    for command in ("draw", "freeze"):
        assert harness(command, "plans/every.yaml", cwd=root).returncode == 0
    local = tmp_path / "local"
    shutil.copytree(root, local)

    monkeypatch.setenv("PYTHONPATH", _with_spy(host_log))
    monkeypatch.setenv("WARM_SPY_LOG", str(tmp_path / "local.log"))
    assert harness("run", "plans/every.yaml", "--workers", "1", cwd=local).returncode == 0
    monkeypatch.undo()
    children = {r.pair_id for r in ledger(local, "every") if not r.skipped_by_coverage}
    (entries,) = _forks(tmp_path / "local.log").values()
    assert len(children) > 10 and {e["pair"] for e in entries} == children
    assert not any(e["cold"] or e["ran"] for e in entries)

    done = run_dask(root, address, "--batch-size", "4", plan="every")
    assert done.returncode == 0, done.stderr
    assert comparable(ledger(root, "every")) == comparable(ledger(local, "every"))
    how = obtained(root, "every")
    assert how == obtained(local, "every")
    assert sum(reused for _, reused in how.values()) > 0
    hosts = _forks(host_log, plan="every")
    assert hosts
    for entries in hosts.values():
        assert all(e["cold"] and e["warm"] for e in entries)
        firsts = {e["target"]: e["pair"] for e in reversed(entries)}
        assert [e["pair"] for e in entries if e["ran"]] == sorted(
            firsts.values(), key=[e["pair"] for e in entries].index
        )
    forked = [e["pair"] for entries in hosts.values() for e in entries]
    assert sorted(forked) == sorted(children)  # each child once, none in the client


def test_a_published_dask_run_keeps_its_baseline(tmp_path, cluster, frozen):
    address, _ = cluster
    root = copy_of(frozen[0], tmp_path)
    test_runner.committed(root)  # publish needs the freeze committed before the run
    done = run_dask(root, address, "--batch-size", "4")
    assert done.returncode == 0, done.stderr
    (run_dir,) = (root / "results" / "small").iterdir()
    assert json.loads((run_dir / "baseline.json").read_text()) == frozen[2]
    published = harness("publish", str(run_dir.relative_to(root)), cwd=root)
    assert published.returncode == 0, published.stderr
    reference = root / "results" / "reference" / "small" / run_dir.name
    assert json.loads((reference / "baseline.json").read_text()) == frozen[2]


def descendants(pid: int) -> set[int]:
    """Live processes below `pid` (children, grandchildren...)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            if fields[0] != "Z":
                parents[int(entry.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def test_a_killed_worker_takes_its_batch_host_and_spinning_pair_along(
    tmp_path, cluster, monkeypatch
):
    address, client = cluster
    monkeypatch.setattr(test_runner, "FAULTS", {"transfer": FAULTS["transfer"]})
    root = project(tmp_path, timeout=4)
    fault_corpus(root)
    assert harness("freeze", "plans/small.yaml", cwd=root).returncode == 0
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness",
            "run",
            "plans/small.yaml",
            "--executor",
            "dask",
            "--scheduler",
            address,
        ],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        pids = client.run(os.getpid)
        deadline, hosts = time.monotonic() + 120, {}
        while time.monotonic() < deadline and not any(descendants(h) for h in hosts):
            hosts = {  # batch host -> its worker
                child: worker
                for worker, pid in pids.items()
                for child in descendants(pid)
                if b"harness.execution.batch_host" in Path(f"/proc/{child}/cmdline").read_bytes()
            }
            time.sleep(0.05)
        host = next(h for h in hosts if descendants(h))  # its pair child spins
        orphans = {host} | descendants(host)
        os.kill(pids[hosts[host]], signal.SIGKILL)
        # well inside the 4 s timeout and its backstop: the parent-death signal did it
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and any(alive(p) for p in orphans):
            time.sleep(0.05)
        assert not [p for p in orphans if alive(p)], "outlived their worker"
        assert run.wait(timeout=120) == 0
    finally:
        run.kill()
    client.wait_for_workers(2, timeout=TIMEOUT)
    (row,) = ledger(root)
    assert row.status.value == "timeout"


def test_timeouts_and_crashes_on_a_worker_follow_the_local_rules(tmp_path):
    root = project(tmp_path, timeout=3)
    fault_corpus(root)
    assert harness("freeze", "plans/small.yaml", cwd=root).returncode == 0
    # no --scheduler: the run starts (and stops) its own LocalCluster
    options = ["--executor", "dask", "--workers", "2", "--batch-size", "4"]
    done = harness("run", "plans/small.yaml", *options, cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    fault_rows(root)


def test_a_worker_killed_mid_run_loses_and_duplicates_no_row(tmp_path, cluster, frozen):
    address, client = cluster
    root = copy_of(frozen[0], tmp_path)
    # two batches of 4, one per worker: whichever worker is seen busy is mid-batch
    options = ["--executor", "dask", "--scheduler", address, "--batch-size", "4"]
    run = subprocess.Popen(
        [sys.executable, "-m", "harness", "run", "plans/small.yaml", *options],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        victim, deadline = None, time.monotonic() + 120
        while victim is None and time.monotonic() < deadline and run.poll() is None:
            busy = [w for w, keys in client.processing().items() if keys]
            victim = busy[0] if busy else None
            time.sleep(0.02)
        assert victim is not None, "no worker took a batch"
        pid = client.run(os.getpid, workers=[victim])[victim]
        os.kill(pid, signal.SIGKILL)
        out, err = run.communicate(timeout=240)
    finally:
        run.kill()
    assert run.returncode == 0, out + err
    rows = ledger(root)
    assert len(rows) == len({r.pair_id for r in rows}) == 8
    assert comparable(rows) == frozen[1]
    client.wait_for_workers(2, timeout=TIMEOUT)  # the nanny restarted the killed worker
    assert pid not in client.run(os.getpid).values()
    # the scheduler took a running batch back from the lost worker and ran it again
    rescheduled = client.run_on_scheduler(
        lambda dask_scheduler: [
            (key, start, finish)
            for key, start, finish, *_ in dask_scheduler.transition_log
            if str(key).startswith("score_batch") and start == "processing"
        ]
    )
    assert any(finish == "released" for _, _, finish in rescheduled), rescheduled


def test_a_pair_that_kills_its_batch_host_alone_is_a_crash(tmp_path, cluster, monkeypatch):
    address, _ = cluster
    killer = """
        def deposit(bank, account_id, amount):
            import os, signal
            os.kill(os.getppid(), signal.SIGKILL)
    """
    faults = {"deposit": ("crash", killer), "update_item": FAULTS["update_item"]}
    monkeypatch.setattr(test_runner, "FAULTS", faults)
    root = project(tmp_path, timeout=5)
    fault_corpus(root)
    assert harness("freeze", "plans/small.yaml", cwd=root).returncode == 0
    # both pairs in one batch: tried twice, then split; only the killer fails alone
    done = run_dask(root, address, "--batch-size", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {r.tool: r for r in ledger(root)}
    assert {tool: r.status.value for tool, r in rows.items()} == {
        "deposit": "crash",
        "update_item": "crash",
    }
    assert rows["deposit"].error.startswith("failed 2 times on the cluster: HostLost")


def test_a_worker_with_a_modified_checker_refuses_and_is_named(tmp_path, frozen):
    root = copy_of(frozen[0], tmp_path)
    copy = tmp_path / "installed"
    package = Path(sys.modules["harness"].__file__).parent
    shutil.copytree(package, copy / "harness", ignore=shutil.ignore_patterns("__pycache__"))
    dynamic = copy / "harness" / "checker" / "dynamic.py"
    dynamic.write_text(dynamic.read_text() + "# one changed line\n")
    scheduler = distributed.LocalCluster(
        n_workers=0, host="127.0.0.1", dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR
    )
    worker = None
    try:
        options = ["--nworkers", "1", "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard"]
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_worker",
                scheduler.scheduler_address,
                *options,
            ],
            env={**os.environ, "PYTHONPATH": str(copy)},
            cwd=tmp_path,  # not the checkout: `python -m` puts the cwd first on sys.path
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        with distributed.Client(scheduler, timeout=TIMEOUT) as client:
            client.wait_for_workers(1, timeout=TIMEOUT)
            (address,) = client.scheduler_info()["workers"]
        refused = run_dask(root, scheduler.scheduler_address)
    finally:
        if worker is not None:
            worker.terminate()
            worker.wait(timeout=TIMEOUT)
        scheduler.close(timeout=TIMEOUT)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "Traceback" not in refused.stderr
    said = " ".join(refused.stderr.split())
    assert f"error: dask worker {address}: checker_scope: harness/checker/dynamic.py is " in said
    assert "in the freeze" in said and "refused its batch" in said
    assert not (root / "results").exists()  # refused before any row: nothing left behind


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--executor", "ray"], "--executor: executor: unknown executor 'ray'; fix: use local"),
        (["--scheduler", "tcp://127.0.0.1:8786"], "--scheduler: scheduler: only the dask"),
        (["--batch-size", "4"], "--batch-size: batch_size: only the dask executor takes it"),
        (
            ["--executor", "dask", "--scheduler", "tcp://127.0.0.1:8786", "--workers", "2"],
            "--workers: workers: a cluster's workers are chosen where they start",
        ),
        (["--executor", "dask", "--batch-size", "0"], "--batch-size: batch_size: must be"),
    ],
)
def test_executor_options_are_one_line_errors(tmp_path, capsys, args, message):
    assert main(["run", str(tmp_path / "plans" / "none.yaml"), *args]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert err.startswith(f"error: {message}") and err.count("error:") == 1


def test_dask_missing_names_the_extra_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # what an install without it sees
    assert main(["run", str(tmp_path / "none.yaml"), "--executor", "dask"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert err == (
        "error: --executor: dask: the distributed package is not installed; "
        "fix: pip install 'contract-harness[dask]'"
    )


def test_a_batch_host_that_cannot_start_says_why(tmp_path, monkeypatch):
    from harness.execution.dask_executor import BatchSpec, HostStartFailed, _host
    from harness.execution.plan import load_plan

    broken = tmp_path / "python"  # what a worker without the project would run
    broken.write_text("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'harness'\" >&2\n")
    broken.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(broken))
    plan = load_plan(project(tmp_path, per_operator=1) / "plans" / "small.yaml")
    spec = BatchSpec("f00", False, plan, {}, {}, {})
    with pytest.raises(HostStartFailed) as failed:
        _host(spec, "tcp://10.0.0.7:39113")
    assert failed.value.worker == "tcp://10.0.0.7:39113"
    assert failed.value.reason == "ModuleNotFoundError: No module named 'harness'"


def test_the_default_batches_are_guided_down_to_one_pair_at_the_end() -> None:
    from harness.execution.dask_executor import DaskExecutor

    auto = DaskExecutor(scheduler=None, workers=2, batch_size=None)
    # ceil(left / 4) for 2 threads: 25 -> 7, 18 -> 5, 13 -> 4, 9 -> 3, 6 -> 2, then ones
    assert auto.batch_sizes(25, 2) == [7, 5, 4, 3, 2, 1, 1, 1, 1]
    assert auto.batch_sizes(3, 2) == [1, 1, 1]
    assert auto.batch_sizes(0, 2) == []
    big = auto.batch_sizes(9620, 2)
    assert sum(big) == 9620 and max(big) == 8  # never more than DEFAULT_BATCH_SIZE
    assert big == sorted(big, reverse=True) and big[-4:] == [1, 1, 1, 1]
    assert auto.batch_sizes(40, 4) == [5, 5, 4, 4, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1]
    fixed = DaskExecutor(scheduler=None, workers=2, batch_size=8)
    assert fixed.batch_sizes(25, 2) == [8, 8, 8, 1]
    assert auto.describe()["batch_size"].startswith("guided")


def test_a_batch_is_sent_per_worker_thread_the_cluster_has_when_one_answers() -> None:
    from harness.execution.dask_executor import BatchFeeder

    cluster = [0]  # worker threads now: none yet when the run starts
    feeder = BatchFeeder(7, lambda: cluster[0])
    assert feeder.send(0) == [0]  # one batch, so that the first worker to join has work
    cluster[0] = 2  # two workers joined
    assert feeder.send(1) == [1]  # batch 0 still out: one more fills both threads
    assert feeder.send(1) == [2]  # one of the two answered
    cluster[0] = 4
    assert feeder.send(1) == [3, 4, 5]
    cluster[0] = 1  # three left: nothing sent until the one thread is free
    assert feeder.send(3) == [] and feeder.send(1) == []
    assert feeder.send(0) == [6]
    assert feeder.send(0) == []  # all seven sent
