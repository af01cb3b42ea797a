"""Pieces the bench scripts share: a throwaway project (plan, draw, freeze) in a temporary
folder, the bare checker timed on an original tool, a clock on a run's rows, what two
ledgers of the same pairs say differently, and where results land (named so that a second
sitting on the same day never replaces the first's files unasked)."""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path
from typing import Any

from harness.checker import Checker
from harness.errors import UserError
from harness.execution.draw import Corpus, draw
from harness.execution.freeze import freeze, read_record
from harness.execution.isolation import children_of
from harness.execution.ledger import LedgerRow
from harness.execution.liveness import observe
from harness.execution.plan import Plan, load_plan
from harness.targets.adapter import GraderAdapter
from harness.targets.registry import Target

REPO = Path(__file__).resolve().parent.parent
TAU2 = ("tau2-airline", "tau2-retail", "tau2-telecom")  # the default targets of the checker benches
RESULTS = REPO / "results" / "bench"


def throwaway_project(root: Path, name: str, plan_text: str) -> tuple[Path, Corpus]:
    """Write `plan_text` as <root>/plans/<name>.yaml, draw it and freeze it (no git tag):
    the plan path and its drawn corpus. Never touches the repository."""
    (root / "plans").mkdir(parents=True, exist_ok=True)
    plan_path = root / "plans" / f"{name}.yaml"
    plan_path.write_text(plan_text)
    plan = load_plan(plan_path)
    corpus = draw(plan, root)
    freeze(plan_path, plan, root, [p.pair_id for p in corpus.pairs])
    return plan_path, corpus


def bare_checker_seconds(checker: Checker, target: Target, tool: str) -> float:
    """Wall time of one `checker.check` of the ORIGINAL `tool`, in this process."""
    began = time.perf_counter()
    checker.check(target, [tool])
    return time.perf_counter() - began


class RowClock:
    """A progress hook for `execute`: when scoring began (before the parent's set-up of the
    pairs: targets, baselines, liveness, grades, coverage), when the first row came and
    when the last did."""

    def __init__(self) -> None:
        self.began = self.first = self.ended = 0.0

    def start(self, total: int, skipped: int) -> None:
        self.began = time.perf_counter()

    def advance(self, status: Any) -> None:
        self.ended = time.perf_counter()
        self.first = self.first or self.ended


def said(rows: list[LedgerRow]) -> dict[str, dict[str, Any]]:
    """What each row says (`LedgerRow.comparable()`: all but timing and how the row was
    obtained), without the freeze id: a throwaway project's freeze is not the published one."""
    return {r.pair_id: {**r.comparable(), "freeze_id": None} for r in rows}


def ledger_differences(rows: list[LedgerRow], others: list[LedgerRow]) -> dict[str, str]:
    """Pair id -> how two ledgers of the same pairs differ on it (the fields that differ, or
    which ledger alone has it), for every pair where they do; empty when identical."""
    ours, theirs = said(rows), said(others)
    out = {}
    for pair_id in sorted(ours.keys() | theirs.keys()):
        if pair_id not in theirs:
            out[pair_id] = "only in the first ledger"
        elif pair_id not in ours:
            out[pair_id] = "only in the second ledger"
        else:
            a, b = ours[pair_id], theirs[pair_id]
            fields = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
            if fields:
                out[pair_id] = "differs in " + ", ".join(fields)
    return out


def today() -> str:
    return datetime.now(UTC).date().isoformat()


def load() -> str:
    """The load average (1, 5, 15 minutes), as the bench scripts print it beside a time."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


BARE_KINDS = ("liveness", "grader", "checker")


@dataclass
class Started:
    """What `start_harness` saw of one `python -m harness ...` process."""

    first_row_s: float | None  # until a ledger held a first whole row (None: none did)
    seconds: float  # until it exited
    exit_code: int
    stamped: list[tuple[float, str]]  # each stderr line with the seconds at which it came
    # with `sample_memory`: the largest sum of PSS over the process and its descendants
    peak_pss_mib: float | None = None

    @property
    def stderr(self) -> str:
        return "".join(line for _, line in self.stamped)


def tree_pss_mib(pid: int) -> float:
    """The proportional set size (PSS: each shared page split among the processes mapping
    it) of `pid` and every live descendant, summed, in MiB (Linux /proc; 0.0 elsewhere).
    Forked children share their parent's pages until they write them, so the sum of their
    RSS would count those pages once per process; the sum of PSS counts them once."""
    total, seen, todo = 0, set(), [pid]
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:  # ended meanwhile, or no /proc
            continue
        total += next(
            (int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:")), 0
        )
        todo += children_of(pid)
    return round(total / 1024, 1)


def start_harness(
    argv: list[str],
    cwd: Path,
    run_folders: Path,
    env: dict[str, str] | None = None,
    *,
    stop_at_first_row: bool = False,
    profile: Path | None = None,
    sample_memory: bool = False,
) -> Started:
    """Run `python -m harness ARGV` in `cwd` as a user starts it, watching for a first whole
    row in a ledger under `run_folders`, its stderr read as it comes (each line stamped);
    with `stop_at_first_row`, SIGINT is sent at that row and the run's exit code for it,
    130, is a success. With `profile`, the harness runs under `python -m cProfile -o
    PROFILE` (which ends with 0 where the harness exits). With `sample_memory`, the PSS of
    its process tree is summed every half second (`tree_pss_mib`) and the peak kept. Any
    other failure ends the bench (SystemExit with the end of its stderr)."""
    stamped: list[tuple[float, str]] = []
    profiled = [] if profile is None else ["-m", "cProfile", "-o", str(profile)]
    began = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, *profiled, "-m", "harness", *argv],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )

    def read(stream: Any) -> None:
        for raw in stream:
            stamped.append((time.perf_counter() - began, raw.decode(errors="replace")))

    reader = threading.Thread(target=read, args=(process.stderr,), daemon=True)
    reader.start()
    first, peak, sampled = None, None, 0.0
    while process.poll() is None:
        if sample_memory and time.perf_counter() - sampled >= 0.5:
            sampled = time.perf_counter()
            peak = max(peak or 0.0, tree_pss_mib(process.pid))
        if first is None:
            ledgers = list(run_folders.glob("*/ledger.jsonl"))
            if ledgers and b"\n" in ledgers[0].read_bytes():
                first = time.perf_counter() - began
                if stop_at_first_row:
                    process.send_signal(signal.SIGINT)
                    break
        time.sleep(0.01)
    code = process.wait()
    seconds = time.perf_counter() - began
    reader.join()
    started = Started(first, seconds, code, stamped, peak)
    stopped = stop_at_first_row and first is not None and code == 128 + signal.SIGINT
    if code != 0 and not stopped:
        raise SystemExit(f"harness {' '.join(argv)} failed: {started.stderr[-2000:]}")
    return started


def run_to_first_row(
    argv: list[str], cwd: Path, run_folders: Path, env: dict[str, str] | None = None
) -> tuple[float | None, float, str]:
    """`start_harness` run to its end: (seconds until a ledger under `run_folders` held a
    first whole row, None if none did; seconds until it exited; its stderr)."""
    started = start_harness(argv, cwd, run_folders, env)
    return started.first_row_s, started.seconds, started.stderr


# what `harness run` says on stderr before its first pair, with its own times: (key, the
# step in words, the line)
SET_UP_STEPS = (
    (
        "targets_loaded_s",
        "targets loaded",
        re.compile(r"^set-up: \d+ targets? loaded in ([0-9.]+) s"),
    ),
    (
        "freeze_verified_s",
        "freeze verified",
        re.compile(r"^set-up: freeze \S+ verified: .* in ([0-9.]+) s"),
    ),
    ("set_up_done_s", "original tools prepared", re.compile(r"^set-up: done in ([0-9.]+) s")),
)


def set_up_steps(stderr: str) -> dict[str, float | None]:
    """The seconds `harness run`'s own `set-up:` lines give (the last of each, None when it
    said none): loading the targets (their packages' imports included), verifying the
    freeze, and preparing the original tools (baselines, liveness, grades, coverage; read
    from the set-up cache when it holds them). Where a fresh process's time to the first row
    goes, in the run's own words."""
    found: dict[str, float | None] = dict.fromkeys(name for name, _, _ in SET_UP_STEPS)
    for line in stderr.splitlines():
        for name, _, pattern in SET_UP_STEPS:
            match = pattern.match(line)
            if match:
                found[name] = float(match.group(1))
    return found


def steps_said(steps: dict[str, float | None]) -> str:
    """`set_up_steps`'s seconds in words: "targets loaded 7.20 s, freeze verified 0.90 s,
    original tools prepared 2.50 s"."""
    words = {name: said for name, said, _ in SET_UP_STEPS}
    return ", ".join(
        f"{words[name]} {'not said' if value is None else f'{value:.2f} s'}"
        for name, value in steps.items()
    )


def bare_runs(target: Target, tool: str, calls: list[Any], checker: Any) -> dict[str, float]:
    """Seconds of each run a pair of `tool` must do, on the original, in this process: its
    liveness `calls`, its grader replays (`grade` of each task calling the tool) and the
    checker's run (`BARE_KINDS`, in that order)."""
    adapter = target.adapter
    began = time.perf_counter()
    observe(adapter, tool, calls)
    liveness = time.perf_counter() - began
    grader = 0.0  # exactly: a target without a grader replays nothing
    if isinstance(adapter, GraderAdapter):
        began = time.perf_counter()
        for task in adapter.grader_tasks(tool):
            adapter.grade(task)
        grader = time.perf_counter() - began
    began = time.perf_counter()
    checker.check(target, [tool])
    checker_s = time.perf_counter() - began
    return dict(zip(BARE_KINDS, (liveness, grader, checker_s), strict=True))


LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """`--label`, `--replace` and `--out`, for `output_stem`."""
    parser.add_argument(
        "--label",
        help="end the output files' names with -LABEL (a second sitting on the same day keeps "
        "the first one's files beside its own)",
    )
    parser.add_argument(
        "--replace", action="store_true", help="overwrite output files of the same name"
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="write the output files into this folder, not results/bench/ (a trial run, or a "
        "test, that must leave the checkout as it was)",
    )


def output_stem(
    name: str,
    args: argparse.Namespace,
    suffixes: tuple[str, ...] = (".json", ".md"),
    folder: Path | None = None,
) -> Path:
    """`FOLDER/NAME[-LABEL]`, to which the caller adds `suffixes`; FOLDER is `folder`, else
    `--out`, else results/bench/. Called before any work: if
    one of those files exists and `--replace` was not given (or the label is not a plain
    name), a one-line error and exit 2, so an hour's bench never ends by replacing an
    earlier sitting's record or by failing to write its own."""
    label = getattr(args, "label", None)
    if label is not None and not LABEL.fullmatch(label):
        print(
            f"error: --label: {label!r} is not a plain name; "
            "fix: use letters, digits, '.', '_' and '-' only",
            file=sys.stderr,
        )
        raise SystemExit(2)
    out = getattr(args, "out", None)
    if folder is None and out is not None and not out.is_dir():
        print(f"error: --out: {out} is not a folder; fix: create it first", file=sys.stderr)
        raise SystemExit(2)
    folder = folder or out or RESULTS
    stem = folder / (name + (f"-{label}" if label else ""))
    taken = [Path(f"{stem}{suffix}") for suffix in suffixes if Path(f"{stem}{suffix}").exists()]
    if taken and not getattr(args, "replace", False):
        shown = taken[0].relative_to(REPO) if taken[0].is_relative_to(REPO) else taken[0]
        print(
            f"error: {shown}: already written (an earlier sitting's?); "
            "fix: pass --label NAME to keep both, or --replace to overwrite it",
            file=sys.stderr,
        )
        raise SystemExit(2)
    return stem


def repository_plan(given: Path) -> tuple[Path, Plan, str]:
    """A `--plan` of this repository that is frozen: (its resolved path, the plan, its freeze
    id). Anything else is one line a problem on stderr and exit 2, before any work."""
    plan_path = given.resolve()
    problems: list[str] = []
    if not plan_path.is_file() or not plan_path.is_relative_to(REPO):
        problems.append(
            f"--plan: {given} is not a plan file of this repository; fix: give one under plans/"
        )
    else:
        try:
            plan = load_plan(plan_path)
        except UserError as exc:  # one line a problem, as `harness run` gives them
            problems += [problem.line() for problem in exc.problems]
        else:
            record = read_record(REPO, plan)
            if record is not None:
                return plan_path, plan, record.freeze_id
            problems.append(f"{plan_path}: no freeze record; fix: harness freeze it")
    for line in problems:
        print(f"error: {line}", file=sys.stderr)
    raise SystemExit(2)


@contextmanager
def head_worktree(prefix: str, revision: str = "HEAD") -> Iterator[Path]:
    """A detached git worktree of HEAD (or `revision`) under a temporary folder, removed
    afterwards: a repository plan run there verifies its freeze from history, and nothing
    under results/ here changes."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        root = Path(tmp) / "worktree"
        subprocess.run(
            ["git", "worktree", "add", "--quiet", "--detach", str(root), revision],
            cwd=REPO,
            check=True,
        )
        try:
            yield root
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(root)], cwd=REPO, check=False
            )


def head_commit(revision: str = "HEAD") -> str:
    """HEAD's (or `revision`'s) short commit id; "" when git knows no such revision."""
    return subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", "--short", f"{revision}^{{commit}}"],
        cwd=REPO,
        capture_output=True,
        text=True,
    ).stdout.strip()


class LineChild:
    """A Python child, `python -c CODE ARGS`, asked one line at a time: each request a line on
    its stdin, each answer a line on its stdout, its first line its meta (JSON, `meta`). It
    runs under PYTHONHASHSEED=0 in the temporary folder (so a worktree's `harness` is not
    found through the working directory), with `path`, when given, first on its PYTHONPATH
    (an extracted `harness` ahead of the editable one). `what` names it when it dies."""

    def __init__(
        self, code: str, args: list[str], path: Path | None, what: str, quiet: bool = False
    ):
        env = dict(os.environ, PYTHONHASHSEED="0")
        if path is not None:
            env["PYTHONPATH"] = os.pathsep.join([str(path), env.get("PYTHONPATH", "")])
        self.what = what
        self.process = subprocess.Popen(
            [sys.executable, "-c", code, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL if quiet else None,
            text=True,
            env=env,
            cwd=tempfile.gettempdir(),
        )
        self.meta = json.loads(self.line())

    def line(self) -> str:
        """Its next line; a child that died ends the bench, naming it and its exit code."""
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            sys.exit(f"a {self.what} died (exit {self.process.wait()})")
        return line

    def ask(self, request: str) -> str:
        assert self.process.stdin is not None
        self.process.stdin.write(request + "\n")
        self.process.stdin.flush()
        return self.line()

    def end(self) -> None:
        """Close its stdin: it says its last line, if it has one, and exits."""
        assert self.process.stdin is not None
        self.process.stdin.close()


def extract(rev: str, into: Path) -> Path:
    """The `harness` package of `rev`, unpacked under `into` (what PYTHONPATH will find)."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", rev, "harness"],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


class CollectorLog:
    """Each run of Python's cyclic garbage collector in this process while the log is open
    (`gc.callbacks`): (when it began, its seconds, its generation), `time.perf_counter`
    clock; `within(a, b)` sums those that began between a and b."""

    def __init__(self) -> None:
        self.runs: list[tuple[float, float, int]] = []
        self._began = 0.0

    def _timed(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._began = time.perf_counter()
        else:
            self.runs.append((self._began, time.perf_counter() - self._began, info["generation"]))

    def __enter__(self) -> CollectorLog:
        gc.callbacks.append(self._timed)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._timed)

    def within(self, began: float, ended: float) -> dict[str, Any]:
        """{"seconds": of the collections that began in [began, ended), "full": how many of
        them were full (generation 2)}."""
        inside = [(s, g) for at, s, g in self.runs if began <= at < ended]
        seconds = round(sum(s for s, _ in inside), 3)
        return {"seconds": seconds, "full": sum(g == 2 for _, g in inside)}
