"""Throughput of the harness runner beside Cosmic Ray's CLI and the bare checker.

    python bench/throughput.py [--quick] [--agentdojo]

In one process tree and one sitting, on the same open-world mutants (Cosmic Ray's own
operators, `CR-core/*`, drawn by a plan in a throwaway project under a temporary folder):

1. the harness runner (`execute`) with 1 and with 2 workers;
2. Cosmic Ray's CLI (`cosmic-ray init` + `exec`, local distributor) on a copy of the target's
   package, its session restricted to exactly the harness's mutants, with the test command
   bench/cosmic_ray_command.py (the plan's frozen checker on the rewritten module; exit 1 on
   a VIOLATES the original lacked);
3. the bare checker on the ORIGINAL tool of every pair, in this process (the limit).

Prints pairs per second, harness/Cosmic Ray, harness/limit, parallel efficiency and peak
memory of the whole process tree, and fails (exit 1) when the harness and Cosmic Ray
disagree on which mutants are detected. Only ratios measured side by side in this run are
results: the machine may be shared. Writes results/bench/<date>.json and <date>.md.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import hashlib
import json
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

from common import RESULTS, bare_checker_seconds, throwaway_project, today
from mutmut_peer import run_mutmut

from harness.checker.verdicts import ToolReport
from harness.execution.draw import Corpus, DrawnPair, corpus_dir, write_corpus
from harness.execution.freeze import checker_for, freeze
from harness.execution.ledger import LedgerRow, PairStatus
from harness.execution.plan import load_plan
from harness.execution.runner import execute
from harness.mutation.model import Mutant
from harness.mutation.open_world import COSMIC_RAY_OPERATORS
from harness.mutation.sites import dedent_lines, function_source
from harness.targets.registry import load_target

COMMAND = Path(__file__).resolve().parent / "cosmic_ray_command.py"
AGENTDOJO_SUITES = ("banking", "slack", "travel", "workspace")
TARGETS = {  # issue 20's thresholds, checked on this run's ratios
    "harness_over_cosmic_ray": (">=", 30.0),
    "harness_over_mutmut": (">=", 1.0),
    "pair_over_bare_checker": ("<=", 1.2),
    "two_workers_over_one": (">=", 1.8),
    "peak_memory_mib": ("<=", 1536.0),
}

PLAN = """
schema_version: 1
name: throughput
description: bench/throughput.py (open-world mutants, Cosmic Ray's own operators)
seed: {seed}
timeout_seconds: 30
liveness_probes_per_tool: 12
arms:
{arms}
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
            self.sampled_peak = max(self.sampled_peak, _tree_rss(os.getpid()))
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


class ScoringClock:
    """A progress hook for `execute`: times the scoring phase (first fork to last row)
    apart from the parent's set-up (imports, baselines, liveness observations)."""

    def __init__(self) -> None:
        self.began = self.ended = 0.0

    def start(self, total: int, skipped: int) -> None:
        self.began = time.perf_counter()

    def advance(self, status: Any) -> None:
        self.ended = time.perf_counter()


@dataclass
class HarnessRun:
    workers: int
    pairs: int
    wall_seconds: float
    cpu_seconds: float
    scoring_seconds: float
    mean_pair_seconds: float
    detected_mutants: list[str]
    statuses: dict[str, int]

    @property
    def pairs_per_second(self) -> float:
        return self.pairs / self.wall_seconds

    @property
    def scoring_pairs_per_second(self) -> float:
        return self.pairs / self.scoring_seconds


def run_harness(
    plan_path: Path, workers: int, skip: bool = False
) -> tuple[HarnessRun, list[LedgerRow], Path]:
    shutil.rmtree(plan_path.parent.parent / "results", ignore_errors=True)  # no resume
    clock = ScoringClock()
    began, cpu = time.perf_counter(), cpu_seconds()
    result = execute(plan_path, workers=workers, progress=clock, skip_by_coverage=skip)
    wall, cpu = time.perf_counter() - began, cpu_seconds() - cpu
    rows = result.rows
    statuses: dict[str, int] = {}
    for row in rows:
        statuses[row.status.value] = statuses.get(row.status.value, 0) + 1
    run = HarnessRun(
        workers=workers,
        pairs=len(rows),
        wall_seconds=wall,
        cpu_seconds=cpu,
        scoring_seconds=clock.ended - clock.began,
        mean_pair_seconds=statistics.mean(r.timing.seconds for r in rows),
        detected_mutants=sorted({r.mutant_id for r in rows if r.status is PairStatus.DETECTED}),
        statuses=dict(sorted(statuses.items())),
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
    folder: Path, plan_path: Path, target_name: str, pairs: list[DrawnPair], baseline_file: Path
) -> CosmicRaySession:
    """One Cosmic Ray session over the harness's mutants of one target, on a copy of its
    package in `folder`."""
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
    folder: Path, targets: list[str], per_operator: int, limit: int | None, seed: int
) -> tuple[Path, Corpus]:
    """Draw the open-world plan; with `limit`, keep a seeded sample of `limit` pairs per
    target (mutants whole: every pair of a kept mutant), then freeze."""
    arms = "".join(
        ARM.format(name=f"open_world-{t}", target=t, per_operator=per_operator) for t in targets
    )
    plan_path, corpus = throwaway_project(folder, "throughput", PLAN.format(seed=seed, arms=arms))
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


# --- one sitting ----------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="24 mutants a target (under 3 min)")
    parser.add_argument("--limit", type=int, help="at most this many mutants a target (seeded)")
    parser.add_argument(
        "--agentdojo",
        action="store_true",
        help="add AgentDojo's four suites (when installed): much longer",
    )
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument(
        "--mutmut-functions",
        type=int,
        default=6,
        help="mutmut runs on this many of the harness's toy functions (seeded; about 25 "
        "mutants a function at about 1 s each)",
    )
    parser.add_argument("--keep", type=Path, help="work in this new folder and keep it")
    args = parser.parse_args()
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
        plan_path, corpus = bench_project(folder, targets, 1, limit, args.seed)
        print(
            f"{len(corpus.pairs)} pairs ({len({p.mutant.id for p in corpus.pairs})} mutants) "
            f"of {', '.join(targets)}; drawn in {time.perf_counter() - started:.1f} s"
        )
        one, rows, _ = run_harness(plan_path, 1)
        print(f"harness, 1 worker:  {one.wall_seconds:6.1f} s  {one.statuses}")
        skipping, skip_rows, _ = run_harness(plan_path, 1, skip=True)
        print(f"harness, 1 worker, --skip-by-coverage: {skipping.wall_seconds:6.1f} s")
        two, _, run_dir = run_harness(plan_path, 2)  # same run folder: the freeze id
        print(f"harness, 2 workers: {two.wall_seconds:6.1f} s")
        identical = {r.pair_id: r.comparable() for r in rows} == {
            r.pair_id: r.comparable() for r in skip_rows
        }
        # mutmut on the functions the harness mutates (a seeded few of them with a limit)
        sites = list({p.mutant.site: None for p in corpus.pairs if p.mutant.target == "toy_domain"})
        sites = random.Random(args.seed).sample(sites, min(len(sites), args.mutmut_functions))
        chosen = {(s.file, s.qualname) for s in sites}
        site_of = {p.pair_id: (p.mutant.site.file, p.mutant.site.qualname) for p in corpus.pairs}
        on_sites = [r for r in rows if site_of[r.pair_id] in chosen]
        mutmut = run_mutmut(folder, sites, 1)
        print(
            f"mutmut 3.8, 1 child: {mutmut.wall_seconds:6.1f} s, {mutmut.tested} mutants tested "
            f"of {mutmut.mutants} on {mutmut.functions} functions"
        )

        sessions = []
        for target in targets:
            pairs = [p for p in corpus.pairs if p.mutant.target == target]
            session = run_cosmic_ray(folder, plan_path, target, pairs, run_dir / "baseline.json")
            print(
                f"Cosmic Ray, {target}: {session.exec_seconds:6.1f} s exec "
                f"({session.init_seconds:.1f} s init)"
            )
            sessions.append(session)

        checker = checker_for(load_plan(plan_path))
        loaded = {t: load_target(t) for t in targets}
        cpu = cpu_seconds()
        bare = [bare_checker_seconds(checker, loaded[r.target], r.tool) for r in rows]
        bare_cpu = cpu_seconds() - cpu
    peak = memory.peak_bytes
    wall = time.perf_counter() - started
    summary = summarise(args, one, two, sessions, rows, bare, bare_cpu, peak, wall)
    summary["load_average_at_start"] = load_at_start
    harness_mutants = len({r.mutant_id for r in on_sites})
    harness_seconds = sum(r.timing.seconds for r in on_sites)
    summary["skip_by_coverage"] = {
        "pairs_per_second_1_worker": round(skipping.pairs_per_second, 2),
        # scoring phase only (first fork to last row): the runs differ in warm caches too,
        # and the wall time of the first includes the process's first imports
        "over_skipping_off": _ratio(
            skipping.scoring_pairs_per_second, one.scoring_pairs_per_second
        ),
        "scoring_pairs_per_second_1_worker": round(skipping.scoring_pairs_per_second, 2),
        "skipped_outright": sum(r.skipped_by_coverage for r in skip_rows),
        "rows_identical": identical,
    }
    summary["mutmut"] = {
        "functions": mutmut.functions,
        "mutants": mutmut.mutants,
        "tested": mutmut.tested,
        "killed": mutmut.killed,
        "wall_seconds": round(mutmut.wall_seconds, 2),
        "mutants_per_second": round(mutmut.mutants_per_second, 3),
        "mutants_per_second_own_durations": round(mutmut.tested / mutmut.mutant_seconds, 3)
        if mutmut.mutant_seconds
        else None,
        "harness_mutants_on_these_functions": harness_mutants,
        "harness_mutants_per_second": round(harness_mutants / harness_seconds, 3)
        if harness_seconds
        else None,
    }
    if harness_seconds and mutmut.mutant_seconds:
        # per mutant, each side's own per-mutant time (no set-up on either side), 1 worker
        value = _ratio(harness_mutants / harness_seconds, mutmut.tested / mutmut.mutant_seconds)
        summary["ratios"]["harness_over_mutmut"] = value
        summary["targets"]["harness_over_mutmut"] = {
            "value": value,
            "target": ">= 1",
            "met": value >= 1.0,
        }
    if not identical:
        summary["agreement"]["disagreements"].append(
            "rows differ with --skip-by-coverage (bench/skip_identity.py names the pairs)"
        )
    print(
        f"skip-by-coverage: x{summary['skip_by_coverage']['over_skipping_off']} "
        f"({summary['skip_by_coverage']['skipped_outright']} skipped outright), rows "
        + ("identical" if identical else "DIFFER")
    )
    print(f"mutmut: {summary['mutmut']}")
    print_summary(summary)
    RESULTS.mkdir(parents=True, exist_ok=True)
    # one file per kind of run, so a quick or AgentDojo run never overwrites the full toy one
    stem = (
        today()
        + ("-agentdojo" if args.agentdojo else "")
        + ("-quick" if args.quick or args.limit else "")
    )
    (RESULTS / f"{stem}.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    (RESULTS / f"{stem}.md").write_text(markdown(summary))
    print(f"wrote {RESULTS / stem}.json and .md")
    return 1 if summary["agreement"]["disagreements"] else 0


def _ratio(a: float, b: float) -> float:
    return round(a / b, 3) if b else float("inf")


def summarise(
    args: argparse.Namespace,
    one: HarnessRun,
    two: HarnessRun,
    sessions: list[CosmicRaySession],
    rows: list[LedgerRow],
    bare: list[float],
    bare_cpu: float,
    peak: int,
    wall: float,
) -> dict[str, Any]:
    cr_pairs = sum(s.pairs for s in sessions)
    cr_seconds = sum(s.exec_seconds for s in sessions)
    cr_rate = cr_pairs / cr_seconds
    limit_rate = len(bare) / sum(bare)
    harness_detected = set(one.detected_mutants)
    cr_killed = {m for s in sessions for m in s.killed_mutants}
    outcomes = {m: o for s in sessions for m, o in s.outcomes.items()}
    status = {r.mutant_id: r.status.value for r in rows}
    disagreements = [
        f"{m}: harness {status[m]}, Cosmic Ray {outcomes.get(m, 'no result')}"
        for m in sorted(harness_detected ^ cr_killed)
    ]
    disagreements += [f"Cosmic Ray test command: {f}" for s in sessions for f in s.faults]
    # Not detections, so not disagreements: a mutant whose module no longer imports on disk
    # (a syntax error, or an annotation that fails when the def runs) is a compile_error in
    # the harness, which compiles and defines only the mutated function.
    divergences = [
        f"{m}: Cosmic Ray's rewritten module fails to import ({error}); harness {status[m]}"
        for s in sessions
        for m, error in sorted(s.import_errors.items())
        if status[m] != PairStatus.COMPILE_ERROR.value
    ]
    divergences += [
        f"{m}: harness compile_error; Cosmic Ray's module imports"
        for m in sorted(status)
        if status[m] == PairStatus.COMPILE_ERROR.value
        and not any(m in s.import_errors for s in sessions)
    ]
    if set(two.detected_mutants) != harness_detected:
        disagreements.append("the harness detects different mutants with 2 workers than with 1")
    ratios = {
        "harness_over_cosmic_ray": _ratio(one.pairs_per_second, cr_rate),
        "harness_2w_over_cosmic_ray": _ratio(two.pairs_per_second, cr_rate),
        "pair_over_bare_checker": _ratio(one.mean_pair_seconds, statistics.mean(bare)),
        "wall_per_pair_over_bare_checker": _ratio(1 / one.pairs_per_second, 1 / limit_rate),
        "two_workers_over_one": _ratio(two.scoring_pairs_per_second, one.scoring_pairs_per_second),
        "two_workers_over_one_end_to_end": _ratio(two.pairs_per_second, one.pairs_per_second),
        "peak_memory_mib": round(peak / 2**20, 1),
        # The ceiling of harness/Cosmic Ray: no runner beats the checker's own probe work.
        "limit_over_cosmic_ray": _ratio(limit_rate, cr_rate),
    }
    cr_cpu = sum(s.exec_cpu_seconds for s in sessions)
    cpu_ratios = {  # the same ratios from CPU seconds of the process tree
        "harness_over_cosmic_ray": _ratio(cr_cpu / cr_pairs, one.cpu_seconds / one.pairs),
        "harness_2w_over_cosmic_ray": _ratio(cr_cpu / cr_pairs, two.cpu_seconds / two.pairs),
        "harness_per_pair_over_bare_checker": _ratio(one.cpu_seconds, bare_cpu),
        "limit_over_cosmic_ray": _ratio(cr_cpu / cr_pairs, bare_cpu / len(bare)),
    }
    targets = {}
    for name, (sense, bound) in TARGETS.items():
        if name not in ratios:  # harness_over_mutmut: added by main() after the mutmut run
            continue
        value = ratios[name]
        met = value >= bound if sense == ">=" else value <= bound
        targets[name] = {"value": value, "target": f"{sense} {bound:g}", "met": met}
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "python bench/throughput.py"
        + (" --quick" if args.quick else "")
        + (f" --limit {args.limit}" if args.limit else "")
        + (" --agentdojo" if args.agentdojo else ""),
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "targets_measured": sorted({r.target for r in rows}),
        "pairs": len(rows),
        "mutants": len({r.mutant_id for r in rows}),
        "wall_seconds": round(wall, 1),
        "harness": {
            f"{run.workers}_worker{'s' if run.workers > 1 else ''}": {
                "wall_seconds": round(run.wall_seconds, 2),
                "scoring_seconds": round(run.scoring_seconds, 2),
                "pairs_per_second": round(run.pairs_per_second, 2),
                "scoring_pairs_per_second": round(run.scoring_pairs_per_second, 2),
                "mean_pair_seconds": round(run.mean_pair_seconds, 4),
                "statuses": run.statuses,
            }
            for run in (one, two)
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
            "cosmic_ray": round(cr_cpu / cr_pairs, 4),
            "bare_checker": round(bare_cpu / len(bare), 4),
        },
        "targets": targets,
        "agreement": {
            "harness_detected": len(harness_detected),
            "cosmic_ray_killed": len(cr_killed),
            "disagreements": disagreements,
            "import_divergences": divergences,
        },
    }


def print_summary(s: dict[str, Any]) -> None:
    h1, h2 = s["harness"]["1_worker"], s["harness"]["2_workers"]
    print(f"\n{s['pairs']} pairs, {s['mutants']} mutants; whole bench {s['wall_seconds']} s")
    print(f"{'':<24} {'pairs/s':>9} {'s/pair':>8}")
    print(
        f"{'harness, 1 worker':<24} {h1['pairs_per_second']:>9.2f} {h1['mean_pair_seconds']:>8.4f}"
    )
    print(f"{'harness, 2 workers':<24} {h2['pairs_per_second']:>9.2f}")
    print(f"{'Cosmic Ray CLI':<24} {s['cosmic_ray']['pairs_per_second']:>9.3f}")
    bare = s["bare_checker"]
    print(
        f"{'bare checker (limit)':<24} {bare['pairs_per_second']:>9.2f} "
        f"{bare['mean_seconds']:>8.4f}"
    )
    for name, value in s["ratios"].items():
        target = s["targets"].get(name)
        verdict = (
            ""
            if target is None
            else f"  target {target['target']}: " + ("met" if target["met"] else "MISSED")
        )
        print(f"{name:<34} {value:>9}{verdict}")
    for name, value in s["cpu_ratios"].items():
        print(f"cpu: {name:<29} {value:>9}")
    agreement = s["agreement"]
    print(
        f"agreement: harness detected {agreement['harness_detected']}, "
        f"Cosmic Ray killed {agreement['cosmic_ray_killed']}"
    )
    for line in agreement["disagreements"]:
        print(f"DISAGREEMENT {line}")
    for line in agreement["import_divergences"]:
        print(f"DIVERGENCE (import, not a detection) {line}")


def markdown(s: dict[str, Any]) -> str:
    lines = [
        f"# Throughput, {s['date']}",
        "",
        f"`{s['command']}`: {s['pairs']} pairs ({s['mutants']} open-world mutants, Cosmic "
        f"Ray's own operators) of {', '.join(s['targets_measured'])}; {s['cpus']} CPUs, load "
        f"average {s['load_average'][0]} at the end; whole bench {s['wall_seconds']} s.",
        "",
        "| run | pairs/s |",
        "| --- | ---: |",
        f"| harness, 1 worker | {s['harness']['1_worker']['pairs_per_second']} |",
        f"| harness, 2 workers | {s['harness']['2_workers']['pairs_per_second']} |",
        f"| Cosmic Ray CLI (local distributor) | {s['cosmic_ray']['pairs_per_second']} |",
        f"| bare checker on the original tools (limit) | {s['bare_checker']['pairs_per_second']} |",
        "",
        "| ratio | value | target |",
        "| --- | ---: | --- |",
    ]
    for name, value in s["ratios"].items():
        target = s["targets"].get(name)
        mark = (
            "" if target is None else f"{target['target']} ({'met' if target['met'] else 'missed'})"
        )
        lines.append(f"| {name} | {value} | {mark} |")
    if "mutmut" in s:
        m, k = s["mutmut"], s["skip_by_coverage"]
        lines += [
            "",
            f"mutmut 3.8 (its own runner, 1 child, one pytest test per tool running the same "
            f"checker) on {m['functions']} of the same functions: {m['tested']} of its "
            f"{m['mutants']} mutants tested in {m['wall_seconds']} s "
            f"({m['mutants_per_second']}/s end to end, {m['mutants_per_second_own_durations']}/s "
            f"by its own per-mutant durations); the harness, 1 worker, "
            f"{m['harness_mutants_per_second']} mutants/s on its "
            f"{m['harness_mutants_on_these_functions']} mutants of those functions.",
            "",
            f"`--skip-by-coverage`, 1 worker: {k['pairs_per_second_1_worker']} pairs/s "
            f"(x{k['over_skipping_off']} of skipping off), {k['skipped_outright']} pairs "
            f"skipped outright, rows {'identical' if k['rows_identical'] else 'DIFFERENT'}. "
            f"Load average {s.get('load_average_at_start')} at the start.",
        ]
    lines += [
        "",
        "From CPU seconds of the process tree (less sensitive to other load): "
        + ", ".join(f"{k} {v}" for k, v in s["cpu_ratios"].items())
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
