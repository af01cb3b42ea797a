"""Throughput of the harness runner beside Cosmic Ray's CLI, mutmut 3.8 and the bare checker.

    python bench/throughput.py [--quick] [--limit N] [--agentdojo] [--recorded]

In one process tree and one sitting, on the same open-world mutants (Cosmic Ray's own
operators, `CR-core/*`, drawn by a plan in a throwaway project under a temporary folder):

1. the harness runner (`execute`), coverage-guided scoring on (its default), with 1 and
   with 2 workers, and once more with `skip_by_coverage=False` (1 worker): the two 1-worker
   ledgers (and the 2-worker one) must be identical row for row (`LedgerRow.comparable()`),
   else exit 1; `coverage_speed_up` is pairs/s on over pairs/s off;
2. Cosmic Ray's CLI (`cosmic-ray init` + `exec`, local distributor) on a copy of the target's
   package, its session restricted to exactly the harness's mutants, with the test command
   bench/cosmic_ray_command.py (the plan's frozen checker on the rewritten module; exit 1 on
   a VIOLATES the original lacked);
3. the bare checker on the ORIGINAL tool of every pair, in this process (the limit);
4. last, mutmut 3.8's own runner (bench/mutmut_peer.py) with 1 and with 2 children on a
   fresh copy of the toy domain each, restricted to exactly the functions of the harness's
   toy pairs: its own mutants of them (not the harness's; both counts are reported), one
   pytest test per toy tool running the same checker. Mutants tested per second over the
   whole `mutmut run` against the harness's pairs per second with the same worker count on
   the toy pairs of this sitting (the runs of 1. when the toy domain is the only target,
   else toy-only harness runs of the same draw, since a mixed run's wall time is mostly the
   other targets' set-up).

With `--recorded`, the plan has the recorded calls of the repository's 1.3.0 plans
(`recorded_calls:`, corpora/ copied into the throwaway project), and every peer runs the
checker with the same probe half: Cosmic Ray's command, the bare checker and mutmut's tests.

Prints pairs per second, harness/Cosmic Ray, harness/mutmut, pair time/bare checker per
target family (AgentDojo's is the target's value when measured, the toy domain's
otherwise), parallel efficiency, the coverage speed-up with the runs it reused
(`reused_runs`) and the pairs it scored without a worker (`skipped_by_coverage`), and peak
memory of the whole process tree up to the end of 3. (mutmut's forks are sampled apart:
`peak_memory_mib_with_mutmut`); fails (exit 1) when the harness and Cosmic Ray disagree on
which mutants are detected or when the ledgers differ. Only ratios measured side by side in
this run are results: the machine may be shared. Writes
results/bench/<date>[-agentdojo][-limitN | -quick].json and .md.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import hashlib
import importlib.metadata
import json
import operator
import os
import random
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from common import (
    REPO,
    RESULTS,
    RowClock,
    add_output_options,
    bare_checker_seconds,
    ledger_differences,
    output_stem,
    throwaway_project,
    today,
)
from mutmut_peer import MutmutSession, run_mutmut, toy_baseline

from harness.checker import ReferenceChecker
from harness.checker.verdicts import ToolReport
from harness.execution.draw import Corpus, DrawnPair, corpus_dir, write_corpus
from harness.execution.freeze import checker_for, freeze
from harness.execution.ledger import LedgerRow, PairStatus
from harness.execution.plan import load_plan
from harness.execution.recorded_calls import attach_probes
from harness.execution.runner import execute
from harness.mutation.model import Mutant
from harness.mutation.open_world import COSMIC_RAY_OPERATORS
from harness.mutation.sites import dedent_lines, function_source
from harness.targets.registry import load_target

COMMAND = Path(__file__).resolve().parent / "cosmic_ray_command.py"
AGENTDOJO_SUITES = ("banking", "slack", "travel", "workspace")
TARGETS = {  # issue 20's thresholds, and issue 31's for mutmut, checked on this run's ratios
    "harness_over_cosmic_ray": (">=", 30.0),  # 1 worker
    "pair_over_bare_checker": ("<=", 1.2),  # AgentDojo's pairs when measured, else the toy's
    "two_workers_over_one": (">=", 1.8),
    "peak_memory_mib": ("<=", 1536.0),
    "harness_over_mutmut": (">=", 3.0),  # 1 worker against 1 child (issue 20 asked > 1)
}
MET = {">=": operator.ge, "<=": operator.le, ">": operator.gt}

PLAN = """
schema_version: 1
name: throughput
description: bench/throughput.py (open-world mutants, Cosmic Ray's own operators)
seed: {seed}
timeout_seconds: 30
liveness_probes_per_tool: 12
{recorded}arms:
{arms}
"""
# `--recorded`: the checker as the repository's 1.3.0 plans run it, with the probe half of
# the recorded-call corpora (copied into the throwaway project) and the liveness half
RECORDED = """recorded_calls:
  corpora: corpora
  split_seed: 20261203
  liveness_per_tool: 12
"""
ARM = """  - name: {name}
    kind: open_world
    target: {target}
    tools: all
    operators: ["CR-core/*"]
    draw_per_operator: {per_operator}
"""


# --- memory of the whole process tree -------------------------------------------------------


class TreeMemory:
    """Peak resident memory of this process and all its descendants, sampled from /proc
    (shared copy-on-write pages of forked workers count once per process: an upper bound),
    and never below getrusage's peaks of this process plus its largest reaped child."""

    def __init__(self, interval: float = 0.25):
        self.interval = interval
        self.sampled_peak = 0
        self.phase = ""  # what runs now: the sampled peak of each phase is kept apart
        self.phase_peaks: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            rss, phase = _tree_rss(os.getpid()), self.phase
            self.sampled_peak = max(self.sampled_peak, rss)
            if phase:
                self.phase_peaks[phase] = max(self.phase_peaks.get(phase, 0), rss)
            self._stop.wait(self.interval)

    @property
    def peak_bytes(self) -> int:
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
        return max(self.sampled_peak, own + child)


def _tree_rss(root: int) -> int:
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/statm") as statm:
                pages = int(statm.read().split()[1])
            with open(f"/proc/{entry.name}/stat") as stat:
                ppid = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # the process ended while we looked
        pid = int(entry.name)
        rss[pid] = pages * os.sysconf("SC_PAGE_SIZE")
        children.setdefault(ppid, []).append(pid)
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo += children.get(pid, [])
    return total


def cpu_seconds() -> float:
    """CPU time of this process and of every descendant reaped so far (user + system): less
    sensitive than wall time to other load on a shared machine."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime


# --- the harness runner ---------------------------------------------------------------------


@dataclass
class HarnessRun:
    workers: int
    skip_by_coverage: bool
    pairs: int
    wall_seconds: float
    cpu_seconds: float
    setup_seconds: float  # from the start of scoring to the first row
    scoring_seconds: float  # from the first row to the last
    mean_pair_seconds: float
    detected_mutants: list[str]
    statuses: dict[str, int]
    reused_runs: int  # runs taken from the original's (coverage-guided scoring)
    skipped_by_coverage: int  # pairs scored from the original's runs without a worker

    @property
    def pairs_per_second(self) -> float:
        return self.pairs / self.wall_seconds

    @property
    def scoring_pairs_per_second(self) -> float:
        """Rows after the first, over the time from the first row to the last."""
        return (self.pairs - 1) / self.scoring_seconds


def run_harness(
    plan_path: Path, workers: int, skip_by_coverage: bool = True
) -> tuple[HarnessRun, list[LedgerRow], Path]:
    shutil.rmtree(plan_path.parent.parent / "results", ignore_errors=True)  # no resume
    clock = RowClock()
    began, cpu = time.perf_counter(), cpu_seconds()
    result = execute(plan_path, workers=workers, progress=clock, skip_by_coverage=skip_by_coverage)
    wall, cpu = time.perf_counter() - began, cpu_seconds() - cpu
    rows = result.rows
    statuses: dict[str, int] = {}
    for row in rows:
        statuses[row.status.value] = statuses.get(row.status.value, 0) + 1
    run = HarnessRun(
        workers=workers,
        skip_by_coverage=skip_by_coverage,
        pairs=len(rows),
        wall_seconds=wall,
        cpu_seconds=cpu,
        setup_seconds=clock.first - clock.began,
        scoring_seconds=clock.ended - clock.first,
        mean_pair_seconds=statistics.mean(r.timing.seconds for r in rows),
        detected_mutants=sorted({r.mutant_id for r in rows if r.status is PairStatus.DETECTED}),
        statuses=dict(sorted(statuses.items())),
        reused_runs=sum(r.reused_runs for r in rows),
        skipped_by_coverage=sum(r.skipped_by_coverage for r in rows),
    )
    return run, rows, result.run_dir


# --- Cosmic Ray's CLI -----------------------------------------------------------------------


@dataclass
class CosmicRaySession:
    target: str
    mutants: int
    pairs: int
    init_seconds: float
    exec_seconds: float
    exec_cpu_seconds: float
    killed_mutants: list[str]
    outcomes: dict[str, str] = field(default_factory=dict)  # mutant id -> outcome
    command_seconds: list[float] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)
    import_errors: dict[str, str] = field(default_factory=dict)  # mutant id -> error


def module_start(mutant: Mutant, copy: Path) -> tuple[int, int]:
    """Where Cosmic Ray's per-module enumeration starts the harness mutant: the harness counts
    occurrences in the dedented text of one function, Cosmic Ray in the whole module, so the
    function-relative start (line, column) is shifted by the site's first line and
    indentation. (Ends are not compared: an end at a line's start is not shifted.)"""
    source = function_source(mutant.site, copy)
    operator = COSMIC_RAY_OPERATORS[mutant.operator]
    (line, column), _ = operator.positions(source)[mutant.occurrence]
    first = (copy / mutant.site.file).read_text().splitlines()[mutant.site.start_line - 1]
    indent = len(first) - len(first.lstrip())
    return line + mutant.site.start_line - 1, column + indent


def cosmic_ray_cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> float:
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "cosmic_ray.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"cosmic-ray {args[0]} failed ({done.returncode}): {done.stderr[-2000:]}")
    return time.perf_counter() - began


def run_cosmic_ray(
    folder: Path,
    plan_path: Path,
    target_name: str,
    pairs: list[DrawnPair],
    baseline_file: Path,
    probes: dict[str, Any],
) -> CosmicRaySession:
    """One Cosmic Ray session over the harness's mutants of one target, on a copy of its
    package in `folder`; `probes`: the target's recorded probe half (empty without one)."""
    from cosmic_ray.mutating import mutate_code
    from cosmic_ray.plugins import get_operator
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome

    target = load_target(target_name)
    source_root = Path(target.adapter.source_root())
    package = pairs[0].mutant.site.module.partition(".")[0]
    session_dir = folder / f"cosmic-ray-{target_name}"
    copy = session_dir / "src"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(source_root / package, copy / package, ignore=ignore)

    tools: dict[str, list[str]] = {}
    mutants: dict[str, Mutant] = {}
    for pair in pairs:
        mutants[pair.mutant.id] = pair.mutant
        tools.setdefault(pair.mutant.id, []).append(pair.tool)
    files = sorted({m.site.file for m in mutants.values()})
    # one position may carry several mutants of one operator (NumberReplacer's +1 and -1),
    # so a work item is matched by its position and then by the text it produces
    wanted: dict[tuple[Any, ...], list[Mutant]] = {}
    for m in mutants.values():
        key = (m.site.file, m.operator.removeprefix("CR-"), module_start(m, copy))
        wanted.setdefault(key, []).append(m)

    log = session_dir / "command.jsonl"
    spec_path = session_dir / "spec.json"
    config = session_dir / "cosmic-ray.toml"
    session = session_dir / "session.sqlite"
    command = " ".join(shlex.quote(str(p)) for p in (sys.executable, COMMAND, spec_path))
    config.write_text(
        "[cosmic-ray]\n"
        f"module-path = {json.dumps([str(copy / f) for f in files])}\n"
        f"timeout = {load_plan(plan_path).timeout_seconds}\n"
        "excluded-modules = []\n"
        f"test-command = {json.dumps(command)}\n"
        "\n[cosmic-ray.distributor]\nname = 'local'\n"
    )
    init_seconds = cosmic_ray_cli("init", str(config), str(session), cwd=copy)

    # Keep exactly the harness's mutants; check each rewrites the function as the harness does.
    by_hash: dict[str, dict[str, Any]] = {}
    kept = []
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item in db.work_items:
            (spec,) = item.mutations
            file = str(Path(spec.module_path).relative_to(copy))
            key = (file, spec.operator_name, tuple(spec.start_pos))
            candidates = wanted.get(key)
            if not candidates:
                continue
            module_text = (copy / file).read_text()
            mutated = mutate_code(module_text, get_operator(spec.operator_name)(), spec.occurrence)
            same = [
                m
                for m in candidates
                if mutated is not None and same_module(m, module_text, mutated)
            ]
            if not same:
                continue  # another variant at this position, not one the harness drew
            mutant = same[0]
            candidates.remove(mutant)
            digest = hashlib.sha256(mutated.encode()).hexdigest()
            by_hash[digest] = {"mutant_id": mutant.id, "tools": tools[mutant.id]}
            kept.append((item, mutant.id))
        missing = ", ".join(m.id for left in wanted.values() for m in left)
        if missing:
            raise SystemExit(
                f"no Cosmic Ray work item rewrites these mutants as the harness does: {missing}"
            )
        db.clear()
        db.add_work_items([item for item, _ in kept])
    job_mutant = {item.job_id: mutant_id for item, mutant_id in kept}

    baselines = json.loads(baseline_file.read_text())
    spec_path.write_text(
        json.dumps(
            {
                "copy_root": str(copy),
                "target": target_name,
                "plan": str(plan_path),
                "log": str(log),
                "pristine": {f: hashlib.sha256((copy / f).read_bytes()).hexdigest() for f in files},
                "mutants": by_hash,
                "recorded_probes": probes,
                "baseline_violations": {
                    tool: sorted(
                        c.clause_id
                        for c in ToolReport.model_validate(
                            baselines[f"{target_name}:{tool}"]
                        ).violations()
                    )
                    for tool in sorted({p.tool for p in pairs})
                },
            },
            indent=1,
        )
    )
    search = [str(copy), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(search)}  # the copy shadows the target
    cpu = cpu_seconds()
    exec_seconds = cosmic_ray_cli("exec", str(config), str(session), cwd=copy, env=env)
    exec_cpu = cpu_seconds() - cpu

    outcomes: dict[str, str] = {}
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            outcome = result.test_outcome
            outcomes[job_mutant[item.job_id]] = (
                outcome.value if outcome is not None else result.worker_outcome.value
            )
    records = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    faults = [r["error"] for r in records if "error" in r]
    import_errors = {r["mutant_id"]: r["import_error"] for r in records if "import_error" in r}
    faults += [f"{m}: no Cosmic Ray result" for m in mutants if m not in outcomes]
    return CosmicRaySession(
        target=target_name,
        mutants=len(mutants),
        pairs=len(pairs),
        init_seconds=init_seconds,
        exec_seconds=exec_seconds,
        exec_cpu_seconds=exec_cpu,
        killed_mutants=sorted(m for m, o in outcomes.items() if o == TestOutcome.KILLED.value),
        outcomes=outcomes,
        command_seconds=[r["seconds"] for r in records],
        faults=faults,
        import_errors=import_errors,
    )


def same_module(mutant: Mutant, original: str, mutated: str) -> bool:
    """Whether Cosmic Ray's mutated module is the original with the harness's mutated
    function in place of the site, compared as syntax trees: Cosmic Ray may also drop a
    blank line next to what it removes (RemoveDecorator does). Lines the mutant left alone
    are taken from the module as they are; changed ones are indented like the site."""
    lines = original.splitlines(keepends=True)
    site = lines[mutant.site.start_line - 1 : mutant.site.end_line]
    indent = site[0][: len(site[0]) - len(site[0].lstrip())]
    dedented = dedent_lines(site).splitlines(keepends=True)
    changed = mutant.mutated_source.splitlines(keepends=True)
    function: list[str] = []
    matcher = difflib.SequenceMatcher(a=dedented, b=changed, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            function += site[i1:i2]
        else:
            function += [indent + line if line.strip() else line for line in changed[j1:j2]]
    ours = "".join(lines[: mutant.site.start_line - 1] + function + lines[mutant.site.end_line :])
    try:
        return ast.dump(ast.parse(ours)) == ast.dump(ast.parse(mutated))
    except SyntaxError:  # a mutant that does not compile: compare the text instead
        return ours == mutated


# --- the plan -------------------------------------------------------------------------------


def agentdojo_installed() -> bool:
    try:
        import agentdojo  # noqa: F401
    except ImportError:
        return False
    return True


def bench_project(
    folder: Path,
    targets: list[str],
    per_operator: int,
    limit: int | None,
    seed: int,
    recorded: bool = False,
) -> tuple[Path, Corpus]:
    """Draw the open-world plan; with `limit`, keep a seeded sample of `limit` pairs per
    target (mutants whole: every pair of a kept mutant), then freeze. With `recorded`, the
    plan has the repository's recorded calls (`RECORDED`; corpora/ copied into `folder`)."""
    arms = "".join(
        ARM.format(name=f"open_world-{t}", target=t, per_operator=per_operator) for t in targets
    )
    if recorded:
        shutil.copytree(REPO / "corpora", folder / "corpora")
    text = PLAN.format(seed=seed, arms=arms, recorded=RECORDED if recorded else "")
    plan_path, corpus = throwaway_project(folder, "throughput", text)
    if limit is None:
        return plan_path, corpus
    rng = random.Random(seed)
    kept: list[DrawnPair] = []
    for target in targets:
        ids = sorted({p.mutant.id for p in corpus.pairs if p.mutant.target == target})
        chosen = set(rng.sample(ids, min(limit, len(ids))))
        kept += [p for p in corpus.pairs if p.mutant.id in chosen]
    corpus = corpus.model_copy(update={"pairs": kept})
    plan = load_plan(plan_path)
    write_corpus(corpus_dir(folder, plan), plan, [], corpus)
    freeze(plan_path, plan, folder, [p.pair_id for p in kept])
    return plan_path, corpus


# --- the peers on the toy pairs -------------------------------------------------------------


def toy_harness_runs(
    folder: Path,
    targets: list[str],
    corpus: Corpus,
    runs: tuple[HarnessRun, HarnessRun],
    limit: int | None,
    seed: int,
    recorded: bool,
) -> tuple[HarnessRun, HarnessRun, str]:
    """The harness's 1- and 2-worker runs on the toy pairs of this sitting, which mutmut is
    compared with: the runs above when the toy domain is the only target; else toy-only runs
    of the same draw (same seed, arm and limit; its pairs are checked to be the same), since
    a mixed run's wall time is mostly the other targets' set-up."""
    if targets == ["toy_domain"]:
        return *runs, "the harness runs above (the toy domain is the only target)"
    plan_path, toy = bench_project(
        folder / "toy-only", ["toy_domain"], 1, limit, seed, recorded=recorded
    )
    wanted = sorted(p.pair_id for p in corpus.pairs if p.mutant.target == "toy_domain")
    if sorted(p.pair_id for p in toy.pairs) != wanted:
        raise SystemExit(
            "the toy-only draw does not give the toy pairs of the mixed draw: "
            f"{len(toy.pairs)} pairs against {len(wanted)}"
        )
    one, _, _ = run_harness(plan_path, 1)
    two, _, _ = run_harness(plan_path, 2)
    return one, two, "toy-only harness runs of the same draw"


def mutmut_runs(
    folder: Path, corpus: Corpus, plan_path: Path, run_dir: Path
) -> tuple[list[MutmutSession], int]:
    """mutmut with 1 and with 2 children on exactly the functions of the toy pairs, and how
    many functions that is. Its tests' baseline (every toy tool, in this process) must agree
    with the run's baseline on the tools the run has."""
    plan = load_plan(plan_path)
    if plan.checker != ReferenceChecker.name:
        raise SystemExit(f"mutmut's tests run the reference checker; the plan's is {plan.checker}")
    sites = list(
        {
            (p.mutant.site.module, p.mutant.site.qualname): p.mutant.site
            for p in corpus.pairs
            if p.mutant.target == "toy_domain"
        }.values()
    )
    probes = corpus.recorded_probes.get("toy_domain", {})
    baseline = toy_baseline(plan.checker_seed, probes)
    recorded = json.loads((run_dir / "baseline.json").read_text())
    for key, report in recorded.items():
        target, _, tool = key.partition(":")
        if target != "toy_domain":
            continue
        violations = sorted(c.clause_id for c in ToolReport.model_validate(report).violations())
        if violations != baseline.get(tool):
            raise SystemExit(
                f"mutmut's baseline of {tool} ({baseline.get(tool)}) is not the run's "
                f"({violations})"
            )
    sessions = []
    for children in (1, 2):
        session = run_mutmut(folder, sites, children, plan.checker_seed, baseline, probes)
        print(
            f"mutmut, {children} child{'ren' if children > 1 else ''}: "
            f"{session.wall_seconds:6.1f} s, {session.tested} of its {session.mutants} mutants "
            f"of {len(sites)} functions tested  {session.statuses}"
        )
        sessions.append(session)
    return sessions, len(sites)


# --- one sitting ----------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="24 mutants a target (a few minutes: mutmut)"
    )
    parser.add_argument("--limit", type=int, help="at most this many mutants a target (seeded)")
    parser.add_argument(
        "--agentdojo",
        action="store_true",
        help="add AgentDojo's four suites (when installed): much longer",
    )
    parser.add_argument(
        "--recorded",
        action="store_true",
        help="the checker with the recorded-call corpora, as the 1.3.0 plans run it",
    )
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--keep", type=Path, help="work in this new folder and keep it")
    add_output_options(parser)
    args = parser.parse_args()
    # one file per kind of run, so a quick or AgentDojo run never overwrites the full toy one
    stem = output_stem(
        today()
        + ("-agentdojo" if args.agentdojo else "")
        + ("-recorded" if args.recorded else "")
        + (f"-limit{args.limit}" if args.limit else "-quick" if args.quick else ""),
        args,
    )
    started = time.perf_counter()
    load_at_start = [round(x, 2) for x in os.getloadavg()]
    print(f"load average at the start: {load_at_start} on {os.cpu_count()} CPUs")
    targets = ["toy_domain"]
    if args.agentdojo and agentdojo_installed():
        targets += [f"agentdojo-{s}" for s in AGENTDOJO_SUITES]
    elif args.agentdojo:
        print("agentdojo is not installed: measuring the toy domain only")
    limit = args.limit or (24 if args.quick else None)

    with TreeMemory() as memory, tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        folder = Path(tmp) if args.keep is None else args.keep.resolve()
        plan_path, corpus = bench_project(
            folder, targets, 1, limit, args.seed, recorded=args.recorded
        )
        print(
            f"{len(corpus.pairs)} pairs ({len({p.mutant.id for p in corpus.pairs})} mutants) "
            f"of {', '.join(targets)}; drawn in {time.perf_counter() - started:.1f} s"
        )
        memory.phase = "harness"
        one, rows, _ = run_harness(plan_path, 1)
        print(
            f"harness, 1 worker:  {one.wall_seconds:6.1f} s  {one.statuses}, "
            f"{one.reused_runs} runs reused, {one.skipped_by_coverage} pairs skipped"
        )
        off, off_rows, _ = run_harness(plan_path, 1, skip_by_coverage=False)
        print(f"harness, 1 worker, coverage-guided scoring off: {off.wall_seconds:6.1f} s")
        two, two_rows, run_dir = run_harness(plan_path, 2)  # same run folder: the freeze id
        print(f"harness, 2 workers: {two.wall_seconds:6.1f} s")
        ledgers = [
            f"{label}: {pair_id} {how}"
            for label, others in (
                ("coverage on / off, 1 worker", off_rows),
                ("1 worker / 2 workers, coverage on", two_rows),
            )
            for pair_id, how in ledger_differences(rows, others).items()
        ]
        for line in ledgers:
            print(f"LEDGER MISMATCH {line}")
        toy_one, toy_two, toy_source = toy_harness_runs(
            folder, targets, corpus, (one, two), limit, args.seed, args.recorded
        )

        memory.phase = "cosmic_ray"
        sessions = []
        for target in targets:
            pairs = [p for p in corpus.pairs if p.mutant.target == target]
            probes = corpus.recorded_probes.get(target, {})
            session = run_cosmic_ray(
                folder, plan_path, target, pairs, run_dir / "baseline.json", probes
            )
            print(
                f"Cosmic Ray, {target}: {session.exec_seconds:6.1f} s exec "
                f"({session.init_seconds:.1f} s init)"
            )
            sessions.append(session)

        memory.phase = "bare_checker"
        checker = checker_for(load_plan(plan_path))
        loaded = {t: load_target(t) for t in targets}
        attach_probes(loaded, corpus.recorded_probes)
        cpu = cpu_seconds()
        bare = [bare_checker_seconds(checker, loaded[r.target], r.tool) for r in rows]
        bare_cpu = cpu_seconds() - cpu
        # the peak of everything but mutmut (the target's measure, as before mutmut joined)
        peak = memory.peak_bytes

        memory.phase = "mutmut"
        mutmut, functions = mutmut_runs(folder, corpus, plan_path, run_dir)
        memory.phase = ""
    wall = time.perf_counter() - started
    summary = summarise(
        args,
        Measured(
            one=one,
            off=off,
            two=two,
            toy_one=toy_one,
            toy_two=toy_two,
            toy_source=toy_source,
            mutmut=mutmut,
            mutmut_functions=functions,
            sessions=sessions,
            rows=rows,
            bare=bare,
            bare_cpu=bare_cpu,
            peak=peak,
            whole_peak=memory.peak_bytes,
            phase_peaks=dict(memory.phase_peaks),
            ledger_differences=ledgers,
            wall=wall,
            load_at_start=load_at_start,
        ),
    )
    print_summary(summary)
    RESULTS.mkdir(parents=True, exist_ok=True)
    Path(f"{stem}.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    Path(f"{stem}.md").write_text(markdown(summary))
    print(f"wrote {stem}.json and .md")
    if ledgers:
        print(
            f"FAILED: the harness's ledgers differ ({len(ledgers)} LEDGER MISMATCH lines above): "
            "coverage-guided scoring or the worker count changed what a row says",
            file=sys.stderr,
        )
    return 1 if summary["agreement"]["disagreements"] or ledgers else 0


@dataclass
class Measured:
    """Everything one sitting measured, for `summarise`."""

    one: HarnessRun  # 1 worker, coverage-guided scoring on
    off: HarnessRun  # 1 worker, off
    two: HarnessRun  # 2 workers, on
    toy_one: HarnessRun  # the toy pairs, 1 worker (mutmut's comparison)
    toy_two: HarnessRun
    toy_source: str
    mutmut: list[MutmutSession]  # 1 child, 2 children
    mutmut_functions: int
    sessions: list[CosmicRaySession]
    rows: list[LedgerRow]  # of `one`
    bare: list[float]  # the bare checker on the original tool of each row
    bare_cpu: float
    peak: int  # before mutmut ran
    whole_peak: int
    phase_peaks: dict[str, int]
    ledger_differences: list[str]
    wall: float
    load_at_start: list[float]


def _ratio(a: float, b: float) -> float:
    return round(a / b, 3) if b else float("inf")


def _per(total: float, count: int) -> float:
    return total / count if count else float("inf")


def family(target: str) -> str:
    """The target family a pair_over_bare_checker ratio is computed for."""
    return "agentdojo" if target.startswith("agentdojo-") else target.removesuffix("_domain")


def summarise(args: argparse.Namespace, m: Measured) -> dict[str, Any]:
    one, two, off, rows, bare, sessions = m.one, m.two, m.off, m.rows, m.bare, m.sessions
    cr_pairs = sum(s.pairs for s in sessions)
    cr_seconds = sum(s.exec_seconds for s in sessions)
    cr_rate = cr_pairs / cr_seconds
    limit_rate = len(bare) / sum(bare)
    harness_detected = set(one.detected_mutants)
    cr_killed = {mutant for s in sessions for mutant in s.killed_mutants}
    outcomes = {mutant: o for s in sessions for mutant, o in s.outcomes.items()}
    status = {r.mutant_id: r.status.value for r in rows}
    disagreements = [
        f"{mutant}: harness {status[mutant]}, Cosmic Ray {outcomes.get(mutant, 'no result')}"
        for mutant in sorted(harness_detected ^ cr_killed)
    ]
    disagreements += [f"Cosmic Ray test command: {f}" for s in sessions for f in s.faults]
    # Not detections, so not disagreements: a mutant whose module no longer imports on disk
    # (a syntax error, or an annotation that fails when the def runs) is a compile_error in
    # the harness, which compiles and defines only the mutated function.
    divergences = [
        f"{mutant}: Cosmic Ray's rewritten module fails to import ({error}); "
        f"harness {status[mutant]}"
        for s in sessions
        for mutant, error in sorted(s.import_errors.items())
        if status[mutant] != PairStatus.COMPILE_ERROR.value
    ]
    divergences += [
        f"{mutant}: harness compile_error; Cosmic Ray's module imports"
        for mutant in sorted(status)
        if status[mutant] == PairStatus.COMPILE_ERROR.value
        and not any(mutant in s.import_errors for s in sessions)
    ]
    if set(two.detected_mutants) != harness_detected:
        disagreements.append("the harness detects different mutants with 2 workers than with 1")

    # pair time over the bare checker, per target family (same rows, same order)
    by_family: dict[str, tuple[list[float], list[float]]] = {}
    for row, seconds in zip(rows, bare, strict=True):
        pair, limit = by_family.setdefault(family(row.target), ([], []))
        pair.append(row.timing.seconds)
        limit.append(seconds)
    per_family = {
        name: _ratio(statistics.mean(pair), statistics.mean(limit))
        for name, (pair, limit) in sorted(by_family.items())
    }
    headline = "agentdojo" if "agentdojo" in per_family else "toy"
    m1, m2 = m.mutmut
    ratios = {
        "harness_over_cosmic_ray": _ratio(one.pairs_per_second, cr_rate),
        "harness_2w_over_cosmic_ray": _ratio(two.pairs_per_second, cr_rate),
        "harness_over_mutmut": _ratio(m.toy_one.pairs_per_second, m1.mutants_per_second),
        "harness_2w_over_mutmut": _ratio(m.toy_two.pairs_per_second, m2.mutants_per_second),
        # without either side's set-up: the harness's scoring phase (first row to last)
        # against the rate mutmut prints for its mutation phase (after generation, stats,
        # the clean and the forced-fail runs)
        "harness_over_mutmut_steady": _ratio(m.toy_one.scoring_pairs_per_second, m1.own_rate)
        if m1.own_rate
        else None,
        "harness_2w_over_mutmut_steady": _ratio(m.toy_two.scoring_pairs_per_second, m2.own_rate)
        if m2.own_rate
        else None,
        "pair_over_bare_checker": per_family[headline],
        **{f"pair_over_bare_checker_{name}": value for name, value in per_family.items()},
        "wall_per_pair_over_bare_checker": _ratio(1 / one.pairs_per_second, 1 / limit_rate),
        "two_workers_over_one": _ratio(two.scoring_pairs_per_second, one.scoring_pairs_per_second),
        "two_workers_over_one_end_to_end": _ratio(two.pairs_per_second, one.pairs_per_second),
        "coverage_speed_up": _ratio(one.pairs_per_second, off.pairs_per_second),
        "coverage_speed_up_scoring": _ratio(
            one.scoring_pairs_per_second, off.scoring_pairs_per_second
        ),
        # the harness runs, Cosmic Ray and the bare checker (mutmut's forks run last, apart)
        "peak_memory_mib": round(m.peak / 2**20, 1),
        "peak_memory_mib_with_mutmut": round(m.whole_peak / 2**20, 1),
        # The ceiling of harness/Cosmic Ray: no runner beats the checker's own probe work.
        "limit_over_cosmic_ray": _ratio(limit_rate, cr_rate),
    }
    cr_cpu = sum(s.exec_cpu_seconds for s in sessions)
    cpu_ratios = {  # the same ratios from CPU seconds of the process tree
        "harness_over_cosmic_ray": _ratio(cr_cpu / cr_pairs, one.cpu_seconds / one.pairs),
        "harness_2w_over_cosmic_ray": _ratio(cr_cpu / cr_pairs, two.cpu_seconds / two.pairs),
        "harness_over_mutmut": _ratio(
            _per(m1.cpu_seconds, m1.tested), m.toy_one.cpu_seconds / m.toy_one.pairs
        ),
        "harness_2w_over_mutmut": _ratio(
            _per(m2.cpu_seconds, m2.tested), m.toy_two.cpu_seconds / m.toy_two.pairs
        ),
        "harness_per_pair_over_bare_checker": _ratio(one.cpu_seconds, m.bare_cpu),
        "coverage_speed_up": _ratio(off.cpu_seconds, one.cpu_seconds),
        "limit_over_cosmic_ray": _ratio(cr_cpu / cr_pairs, m.bare_cpu / len(bare)),
    }
    targets = {}
    for name, (sense, bound) in TARGETS.items():
        value = ratios[name]
        targets[name] = {
            "value": value,
            "target": f"{sense} {bound:g}",
            "met": bool(MET[sense](value, bound)),
        }
    targets["pair_over_bare_checker"]["family"] = headline
    toy_mutants = len({r.mutant_id for r in rows if r.target == "toy_domain"})
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "python bench/throughput.py"
        + (" --quick" if args.quick else "")
        + (f" --limit {args.limit}" if args.limit else "")
        + (" --agentdojo" if args.agentdojo else "")
        + (" --recorded" if args.recorded else ""),
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "load_average_at_start": m.load_at_start,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "targets_measured": sorted({r.target for r in rows}),
        "pairs": len(rows),
        "mutants": len({r.mutant_id for r in rows}),
        "wall_seconds": round(m.wall, 1),
        "harness": {
            name: _harness_entry(run)
            for name, run in (
                ("1_worker", one),
                ("2_workers", two),
                ("1_worker_coverage_off", off),
            )
        },
        "harness_toy": {
            "source": m.toy_source,
            "separate_runs": m.toy_one is not one,
            "pairs": m.toy_one.pairs,
            "mutants": toy_mutants,
            "1_worker": _harness_entry(m.toy_one),
            "2_workers": _harness_entry(m.toy_two),
        },
        "coverage": {
            "reused_runs": one.reused_runs,
            "skipped_by_coverage": one.skipped_by_coverage,
            "reused_runs_2_workers": two.reused_runs,
            "skipped_by_coverage_2_workers": two.skipped_by_coverage,
            "ledgers_identical": not m.ledger_differences,
        },
        "mutmut": {
            "version": importlib.metadata.version("mutmut"),
            "functions": m.mutmut_functions,
            "functions_without_mutants": m1.without_mutants,
            **{
                f"{s.children}_child{'ren' if s.children > 1 else ''}": {
                    "mutants": s.mutants,
                    "tested": s.tested,
                    "killed": s.killed,
                    "statuses": s.statuses,
                    "wall_seconds": round(s.wall_seconds, 2),
                    "cpu_seconds": round(s.cpu_seconds, 2),
                    "mutants_per_second": round(s.mutants_per_second, 3),
                    "mean_mutant_seconds": round(s.mutant_seconds / s.tested, 4)
                    if s.tested
                    else None,
                    "own_mutations_per_second": s.own_rate,
                }
                for s in m.mutmut
            },
        },
        "cosmic_ray": {
            "pairs": cr_pairs,
            "exec_seconds": round(cr_seconds, 2),
            "init_seconds": round(sum(s.init_seconds for s in sessions), 2),
            "pairs_per_second": round(cr_rate, 3),
            "mean_test_command_seconds": round(
                statistics.mean(x for s in sessions for x in s.command_seconds), 4
            )
            if any(s.command_seconds for s in sessions)
            else None,
        },
        "bare_checker": {
            "pairs_per_second": round(limit_rate, 2),
            "mean_seconds": round(statistics.mean(bare), 4),
        },
        "ratios": ratios,
        "cpu_ratios": cpu_ratios,
        "cpu_seconds_per_pair": {
            "harness_1_worker": round(one.cpu_seconds / one.pairs, 4),
            "harness_2_workers": round(two.cpu_seconds / two.pairs, 4),
            "harness_1_worker_coverage_off": round(off.cpu_seconds / off.pairs, 4),
            "cosmic_ray": round(cr_cpu / cr_pairs, 4),
            "mutmut_1_child_per_mutant": round(_per(m1.cpu_seconds, m1.tested), 4),
            "mutmut_2_children_per_mutant": round(_per(m2.cpu_seconds, m2.tested), 4),
            "bare_checker": round(m.bare_cpu / len(bare), 4),
        },
        # sampled from /proc while each phase ran (the whole tree: an upper bound)
        "peak_memory_mib_by_phase": {
            name: round(peak / 2**20, 1) for name, peak in m.phase_peaks.items()
        },
        "targets": targets,
        "agreement": {
            "harness_detected": len(harness_detected),
            "cosmic_ray_killed": len(cr_killed),
            "disagreements": disagreements,
            "import_divergences": divergences,
            "ledger_differences": m.ledger_differences,
        },
    }


def _harness_entry(run: HarnessRun) -> dict[str, Any]:
    return {
        "wall_seconds": round(run.wall_seconds, 2),
        "setup_seconds": round(run.setup_seconds, 2),
        "scoring_seconds": round(run.scoring_seconds, 2),
        "pairs_per_second": round(run.pairs_per_second, 2),
        "scoring_pairs_per_second": round(run.scoring_pairs_per_second, 2),
        "mean_pair_seconds": round(run.mean_pair_seconds, 4),
        "statuses": run.statuses,
        "skip_by_coverage": run.skip_by_coverage,
        "reused_runs": run.reused_runs,
        "skipped_by_coverage": run.skipped_by_coverage,
    }


def _verdict(target: dict[str, Any] | None, missed: str = "MISSED") -> str:
    if target is None:
        return ""
    return f"{target['target']} ({'met' if target['met'] else missed})"


def print_summary(s: dict[str, Any]) -> None:
    h, toy, mm = s["harness"], s["harness_toy"], s["mutmut"]
    print(f"\n{s['pairs']} pairs, {s['mutants']} mutants; whole bench {s['wall_seconds']} s")
    print(
        f"load average {s['load_average_at_start']} at the start, {s['load_average']} at the "
        f"end, on {s['cpus']} CPUs"
    )
    print(f"{'':<40} {'pairs/s':>9} {'s/pair':>8} {'set-up s':>9} {'scoring pairs/s':>16}")
    rows = [
        ("harness, 1 worker", h["1_worker"]),
        ("harness, 2 workers", h["2_workers"]),
        ("harness, 1 worker, coverage off", h["1_worker_coverage_off"]),
    ]
    if toy["separate_runs"]:
        rows += [("harness, toy pairs, 1 worker", toy["1_worker"])]
        rows += [("harness, toy pairs, 2 workers", toy["2_workers"])]
    for label, run in rows:
        print(
            f"{label:<40} {run['pairs_per_second']:>9.2f} {run['mean_pair_seconds']:>8.4f} "
            f"{run['setup_seconds']:>9.2f} {run['scoring_pairs_per_second']:>16.2f}"
        )
    print(f"{'Cosmic Ray CLI':<40} {s['cosmic_ray']['pairs_per_second']:>9.3f}")
    for key, label in (("1_child", "mutmut, 1 child"), ("2_children", "mutmut, 2 children")):
        run = mm[key]
        print(
            f"{label + ' (mutants/s)':<40} {run['mutants_per_second']:>9.3f} "
            f"{run['mean_mutant_seconds'] or 0:>8.4f}  {run['tested']} of its {run['mutants']} "
            f"mutants tested, {run['statuses']}"
        )
    bare = s["bare_checker"]
    print(
        f"{'bare checker (limit)':<40} {bare['pairs_per_second']:>9.2f} "
        f"{bare['mean_seconds']:>8.4f}"
    )
    print(
        f"mutmut on the {mm['functions']} functions of {toy['pairs']} harness toy pairs "
        f"({toy['mutants']} mutants); harness side: {toy['source']}"
        + (
            f"; functions mutmut does not mutate: {', '.join(mm['functions_without_mutants'])}"
            if mm["functions_without_mutants"]
            else ""
        )
    )
    coverage = s["coverage"]
    print(
        f"coverage-guided scoring: {coverage['reused_runs']} runs reused, "
        f"{coverage['skipped_by_coverage']} pairs scored without a worker (1 worker); ledgers "
        + ("identical" if coverage["ledgers_identical"] else "DIFFERENT")
    )
    for name, value in s["ratios"].items():
        target = s["targets"].get(name)
        verdict = "" if target is None else "  target " + _verdict(target)
        print(f"{name:<36} {value:>9}{verdict}")
    for name, value in s["cpu_ratios"].items():
        print(f"cpu: {name:<31} {value:>9}")
    agreement = s["agreement"]
    print(
        f"agreement: harness detected {agreement['harness_detected']}, "
        f"Cosmic Ray killed {agreement['cosmic_ray_killed']}"
    )
    for line in agreement["disagreements"]:
        print(f"DISAGREEMENT {line}")
    for line in agreement["import_divergences"]:
        print(f"DIVERGENCE (import, not a detection) {line}")
    for line in agreement["ledger_differences"]:
        print(f"LEDGER MISMATCH {line}")


def markdown(s: dict[str, Any]) -> str:
    h, toy, mm, coverage = s["harness"], s["harness_toy"], s["mutmut"], s["coverage"]
    lines = [
        f"# Throughput, {s['date']}",
        "",
        f"`{s['command']}`: {s['pairs']} pairs ({s['mutants']} open-world mutants, Cosmic "
        f"Ray's own operators) of {', '.join(s['targets_measured'])}; {s['cpus']} CPUs, load "
        f"average {s['load_average_at_start'][0]} at the start and {s['load_average'][0]} at "
        f"the end; whole bench {s['wall_seconds']} s.",
        "",
        "| run | pairs/s | set-up before the first row, s | pairs/s after it | reused runs "
        "| pairs scored without a worker |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    runs = [
        ("harness, 1 worker", h["1_worker"]),
        ("harness, 2 workers", h["2_workers"]),
        ("harness, 1 worker, coverage-guided scoring off", h["1_worker_coverage_off"]),
    ]
    if toy["separate_runs"]:
        runs += [("harness, toy pairs only, 1 worker", toy["1_worker"])]
        runs += [("harness, toy pairs only, 2 workers", toy["2_workers"])]
    lines += [
        f"| {label} | {run['pairs_per_second']} | {run['setup_seconds']} | "
        f"{run['scoring_pairs_per_second']} | {run['reused_runs']} | "
        f"{run['skipped_by_coverage']} |"
        for label, run in runs
    ]
    lines += [
        f"| Cosmic Ray CLI (local distributor) | {s['cosmic_ray']['pairs_per_second']} | | | | |",
        f"| mutmut {mm['version']}, 1 child (its mutants/s) | "
        f"{mm['1_child']['mutants_per_second']} | | | | |",
        f"| mutmut {mm['version']}, 2 children (its mutants/s) | "
        f"{mm['2_children']['mutants_per_second']} | | | | |",
        f"| bare checker on the original tools (limit) | {s['bare_checker']['pairs_per_second']} "
        "| | | | |",
        "",
        "| ratio | value | target |",
        "| --- | ---: | --- |",
    ]
    for name, value in s["ratios"].items():
        mark = _verdict(s["targets"].get(name), "missed")
        if name == "pair_over_bare_checker":
            mark += f", on the {s['targets'][name]['family']} pairs"
        lines.append(f"| {name} | {value} | {mark} |")
    met = [name for name, t in s["targets"].items() if t["met"]]
    missed = [name for name, t in s["targets"].items() if not t["met"]]
    lines += [
        "",
        f"Targets met: {', '.join(met) or 'none'}; missed: {', '.join(missed) or 'none'}.",
        "",
        "From CPU seconds of the process tree (less sensitive to other load): "
        + ", ".join(f"{k} {v}" for k, v in s["cpu_ratios"].items())
        + ".",
        "",
        f"mutmut {mm['version']} (its own runner; one pytest test per toy tool running the same "
        f"checker) on the {mm['functions']} functions of the harness's {toy['pairs']} toy pairs "
        f"({toy['mutants']} mutants): its own mutants of them, "
        + "; ".join(
            f"{key.replace('_', ' ')}: {run['tested']} of {run['mutants']} tested "
            f"({run['killed']} killed) in {run['wall_seconds']} s of `mutmut run`, "
            f"{run['mutants_per_second']}/s (its mutation phase alone: "
            f"{run['own_mutations_per_second']}/s)"
            for key, run in ((k, mm[k]) for k in ("1_child", "2_children"))
        )
        + f". The harness side: {toy['source']}, {toy['1_worker']['pairs_per_second']} pairs/s "
        f"with 1 worker and {toy['2_workers']['pairs_per_second']} with 2"
        + (
            f". Functions mutmut does not mutate: {', '.join(mm['functions_without_mutants'])}."
            if mm["functions_without_mutants"]
            else "."
        ),
        "",
        f"Coverage-guided scoring (on in every harness run but one): {coverage['reused_runs']} "
        f"runs reused and {coverage['skipped_by_coverage']} pairs scored without a worker "
        f"(1 worker); the ledgers with it on and off, and with 2 workers, are "
        + (
            "identical (`LedgerRow.comparable()`)."
            if coverage["ledgers_identical"]
            else "DIFFERENT: " + "; ".join(s["agreement"]["ledger_differences"])
        ),
        "",
        "Peak memory of the whole process tree by phase (sampled, MiB): "
        + ", ".join(f"{k} {v}" for k, v in s["peak_memory_mib_by_phase"].items())
        + ".",
    ]
    agreement = s["agreement"]
    lines += [
        "",
        f"Agreement: the harness detected {agreement['harness_detected']} mutants, Cosmic Ray "
        f"killed {agreement['cosmic_ray_killed']}; "
        + (
            "the same set."
            if not agreement["disagreements"]
            else "DISAGREEMENTS: " + "; ".join(agreement["disagreements"])
        ),
        "",
    ]
    if agreement["import_divergences"]:
        lines += [
            "Mutants whose rewritten module fails to import under Cosmic Ray but not as the "
            "harness applies them (no detection either side):",
            "",
            *[f"- {line}" for line in agreement["import_divergences"]],
            "",
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
