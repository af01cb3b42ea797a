"""A run stopped from outside: its parent killed (no process of the run may be left), a
parent that cannot act (the children's own backstop), Ctrl-C and SIGTERM (one line, the
ledger count and the command that resumes)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import test_runner
from test_runner import FAULTS, fault_corpus, harness, ledger, project

from harness.execution.isolation import backstop_seconds

SPIN = FAULTS["transfer"]  # `while True: pass`: the mutant spins until something kills it
QUICK = FAULTS["get_balance"]  # a compile error: scored at once


def stat_fields(pid: int | str) -> list[str] | None:
    """/proc/PID/stat's fields after the command name (state first), or None when the
    process is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2 :].split()


def session_members(sid: int) -> list[int]:
    """The pids of live processes in session `sid` (zombies count as gone)."""
    members = []
    for entry in Path("/proc").iterdir():
        fields = stat_fields(entry.name) if entry.name.isdigit() else None
        if fields is not None and int(fields[3]) == sid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def wait_until(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if condition():
                return True
        except (OSError, ValueError):  # the run folder or its ledger line not there yet
            pass
        time.sleep(0.05)
    return condition()


def start_run(
    root: Path, *extra: str, plan: str = "small", workers: int = 1
) -> subprocess.Popen[str]:
    command = ["run", f"plans/{plan}.yaml", "--workers", str(workers), *extra]
    return subprocess.Popen(
        [sys.executable, "-m", "harness", *command],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own session: every process of the run is findable
        # a terminal's Ctrl-C must reach the run even when these tests were started in the
        # background, where SIGINT is ignored and the ignoring is inherited across exec
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def frozen_faults(tmp_path: Path, monkeypatch, faults: dict, timeout: float) -> Path:
    monkeypatch.setattr(test_runner, "FAULTS", faults)
    root = project(tmp_path, timeout=timeout)
    fault_corpus(root)
    done = harness("freeze", "plans/small.yaml", cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def spinning(run: subprocess.Popen[str]) -> bool:
    """A pair child of the run is alive (set-up is done, the mutant spins)."""
    return len(session_members(run.pid)) >= 2


def mutant_spinning(run: subprocess.Popen[str], cpu_seconds: float = 0.3) -> bool:
    """A pair child of the run has spent `cpu_seconds` of CPU: past waiting for its pair (a
    child waits for it on a pipe, with no CPU and before its backstop is set), the mutant
    spinning. `spinning` alone also holds for a child just forked, and stopping the parent
    before it sent the pair left that child waiting for good."""
    tick = os.sysconf("SC_CLK_TCK")
    for pid in session_members(run.pid):
        fields = stat_fields(pid) if pid != run.pid else None
        if fields is not None and (int(fields[11]) + int(fields[12])) / tick >= cpu_seconds:
            return True  # utime + stime
    return False


@pytest.fixture
def cleanup():
    sessions: list[int] = []
    yield sessions
    for sid in sessions:  # whatever a failed test left behind
        for pid in session_members(sid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_killing_the_parent_leaves_no_process_of_the_run(tmp_path, monkeypatch, cleanup):
    timeout = 2.0
    root = frozen_faults(tmp_path, monkeypatch, {"transfer": SPIN}, timeout)
    run = start_run(root)
    cleanup.append(run.pid)
    assert wait_until(lambda: spinning(run), 60), run.stderr.read() if run.poll() else ""
    os.kill(run.pid, signal.SIGKILL)  # the parent only, as the OOM killer or `kill -9` does
    run.wait()
    # within the pair's timeout: the parent-death signal, not the (later) backstop
    assert wait_until(lambda: not session_members(run.pid), timeout), session_members(run.pid)


def test_a_child_ends_itself_when_its_parent_cannot(tmp_path, monkeypatch, cleanup):
    timeout = 1.0
    root = frozen_faults(tmp_path, monkeypatch, {"transfer": SPIN}, timeout)
    run = start_run(root)
    cleanup.append(run.pid)
    assert wait_until(lambda: mutant_spinning(run), 60)
    os.kill(run.pid, signal.SIGSTOP)  # alive, so no parent-death signal, but cannot kill
    try:
        assert wait_until(
            lambda: session_members(run.pid) == [run.pid], backstop_seconds(timeout) + 2
        )
    finally:
        os.kill(run.pid, signal.SIGCONT)
    out, err = run.communicate(timeout=60)
    assert run.returncode == 0, out + err
    (row,) = ledger(root)
    assert row.status.value == "timeout", (
        row.error
    )  # the row a parent's own kill would have written
    assert row.error == f"killed after {timeout:g} s"


@pytest.mark.parametrize(
    ("sending", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"]
)
def test_ctrl_c_and_sigterm_stop_with_one_line(tmp_path, monkeypatch, cleanup, sending, code):
    # 10 s: the signal must land while the mutant still spins, on a loaded machine too (the
    # resume at the end waits the timeout out once)
    root = frozen_faults(tmp_path, monkeypatch, {"get_balance": QUICK, "transfer": SPIN}, 10)
    run = start_run(root)
    cleanup.append(run.pid)
    assert wait_until(lambda: spinning(run) and len(ledger(root)) == 1, 60)
    if sending == signal.SIGINT:
        os.killpg(run.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole group
    else:
        os.kill(run.pid, signal.SIGTERM)
    out, err = run.communicate(timeout=30)
    assert run.returncode == code, out + err
    assert "Traceback" not in err
    (run_dir,) = (root / "results" / "small").iterdir()
    last = err.strip().splitlines()[-1]
    said = " ".join(err.split())
    assert last.startswith("interrupted: 1 of 2 pairs are in the ledger"), err
    assert str(run_dir) in said.replace(" ", "") or run_dir.name in said
    assert "resume with `harness run plans/small.yaml`" in said
    assert wait_until(lambda: not session_members(run.pid), 5)  # the spinning child too
    (row,) = ledger(root)
    assert row.status.value == "compile_error"  # the interrupted pair left no row
    # stderr is a pipe here, not a terminal: the progress is plain lines, not a bar
    assert "scoring 2 of 2 pairs; the original tools are prepared first" in said, err
    assert "set-up: 1 target loaded in " in said, err
    assert f"set-up: freeze {run_dir.name} verified: " in said, err
    # the set-up of the stopped start is in run.json, kept though the run never ended
    (first,) = json.loads((run_dir / "run.json").read_text())["setup"]
    assert first["computed"] == {"baseline": 2, "coverage": 2, "observations": 2, "reuse": 2}, first
    assert first["stored"] == first["computed"] and not first["from_cache"], first
    resumed = harness("run", "plans/small.yaml", cwd=root, timeout=120)
    again = json.loads((run_dir / "run.json").read_text())["setup"]
    assert again[0] == first and len(again) == 2, again
    # the resume prepares only the pair left (its tool): from the run folder's baseline.json
    # and coverage.json and the freeze's set-up cache (its pair's reuse among those stored
    # by the first start for its tool), nothing computed
    assert again[1]["computed"] == {} and again[1]["refused"] == {}, again[1]
    assert again[1]["from_run_folder"] == {"baseline": 1, "coverage": 1}, again[1]
    assert again[1]["from_cache"] == {"observations": 1, "reuse": 1}, again[1]
    assert "1 pairs scored now, 1 already in the ledger" in " ".join(resumed.stdout.split())
    told = " ".join(resumed.stderr.split())
    assert "scoring 1 of 2 pairs, 1 already in the ledger;" in told, resumed.stderr
    assert "scoring: 2 of 2 pairs, - pairs/s, ETA -:--:--, timeout=1" in told, resumed.stderr
    assert "set-up: baselines: the checker on each original tool (1 tool of 1 target)" in told
    assert re.search(
        r"set-up: done in \d+\.\d s; observations 1, reuse 1 from the set-up cache; "
        r"baseline 1, coverage 1 from the run folder",
        told,
    ), resumed.stderr
