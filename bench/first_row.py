"""A whole pool's first row from a fresh `harness run`, its set-up computed and then cached
(issue 31: a rerun or resume of a freeze whose set-up is cached reaches its first row in
less than a tenth of the uncached set-up time).

    python bench/first_row.py [--plan plans/closed_world_all.yaml] [--workers 2] [--rounds 2]
                              [--profile 25] [--memory]

`bench/overhead.py` times this on a 25-pair slice in a throwaway project; this starts a
repository plan as a user does, `python -m harness run PLAN --workers N`, in a detached git
worktree of HEAD under a temporary folder (its freeze verifies from history; nothing under
results/ here changes), and stops it with SIGINT once its ledger holds a first whole row.
Each round starts it twice, the run folder removed before each start: first with the
freeze's set-up cache removed too (the set-up computed), then with the cache the first
start wrote (the set-up read). The second start of a round finds the disk's cache warm from
the first; a later round's computed start finds it warm as well.

Prints, with the load average beside each start: the seconds from the start to the first
row, and the run's own `set-up:` lines (targets loaded, the freeze verified, the original
tools prepared); per round, cached over computed for the first row from a fresh process and
for the original tools' preparation alone. With `--profile N`, one more start, its set-up
cached, runs under cProfile (`python -m cProfile -o FILE -m harness run ...`) and the N
functions of the harness with the most cumulative seconds in it are given: where a cached
start's time goes, to compare before and after a change (cProfile slows what it times, so
only its own proportions count). With `--memory`, each start's processes (the run, its set-up
helpers, its pair children) are sampled every half second up to the first row, and the peak
of their summed PSS is given (`common.tree_pss_mib`: a page forked children still share is
counted once). With `--collector`, each start also gives the seconds Python's cyclic garbage
collector ran in it before its first fork (a sitecustomize on its path times each collection,
`gc.callbacks`): a cached start's first fork is its first pair's child, a computed start's
its first set-up helper (with 2 or more workers). With `--against REV`, every round starts
the plan at REV too, in its own worktree, under REV's freeze of the plan (the two in turns,
REV first in even rounds), and the cached starts' first rows are compared, HEAD over REV,
round by round. Writes results/bench/first-row-<plan>-<date>.json and .md.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import pstats
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import (
    REPO,
    add_output_options,
    head_commit,
    head_worktree,
    load,
    output_stem,
    repository_plan,
    set_up_steps,
    start_harness,
    steps_said,
    today,
)

import harness
from harness.execution.freeze import read_record
from harness.execution.plan import load_plan
from harness.execution.setup_cache import FOLDER as SETUP_CACHE_FOLDER

# the original tools' preparation, step by step, as `harness run` says each step begins
# (`harness.execution.pair_scoring`; the helpers, when a first start with 2 or more workers
# has them compute what the cache lacks: `harness.execution.setup_helpers`): key -> the
# pattern its `set-up:` line starts with
PREPARATION_STEPS = {
    "helpers": re.compile(r"set-up: helpers: \d+ targets"),
    "baselines": re.compile(r"set-up: baselines:"),
    "liveness": re.compile(r"set-up: liveness calls"),
    "grader": re.compile(r"set-up: grader verdicts"),
    "coverage": re.compile(r"set-up: coverage:"),
}


def step_seconds(stamped: list[tuple[float, str]]) -> dict[str, float | None]:
    """Each preparation step's seconds, from the time its `set-up:` line came to the time the
    next line came (None for a step the run did not say)."""
    out: dict[str, float | None] = dict.fromkeys(PREPARATION_STEPS)
    for (at, line), (then, _) in itertools.pairwise(stamped):
        for key, start in PREPARATION_STEPS.items():
            if start.match(line):
                out[key] = round(then - at, 2)
    return out


# on the path of a start under `--collector`: sums the seconds of each collection by
# generation until the process first forks (or exits), then writes them to the file named
# by BENCH_COLLECTOR_OUT; the forked child inherits the sums already written and writes none
COLLECTOR_SITECUSTOMIZE = """
import atexit, gc, json, os, time

_began, _clock, _state = time.perf_counter(), [0.0], {"written": False}
_seconds, _counts = [0.0, 0.0, 0.0], [0, 0, 0]


def _timed(phase, info):
    if _state["written"]:
        return
    if phase == "start":
        _clock[0] = time.perf_counter()
    else:
        _seconds[info["generation"]] += time.perf_counter() - _clock[0]
        _counts[info["generation"]] += 1


def _write(until):
    if _state["written"]:
        return
    _state["written"] = True
    with open(os.environ["BENCH_COLLECTOR_OUT"], "w") as out:
        json.dump({"until": until, "at_s": time.perf_counter() - _began,
                   "seconds": _seconds, "collections": _counts}, out)


gc.callbacks.append(_timed)
os.register_at_fork(before=lambda: _write("first fork"))
atexit.register(_write, "exit")
"""


def collector_spent(written: Path) -> dict[str, Any] | None:
    """What the `--collector` sitecustomize wrote for one start, rounded (None: nothing)."""
    if not written.is_file():
        return None
    found = json.loads(written.read_text())
    return {
        "until": found["until"],
        "at_s": round(found["at_s"], 2),
        "seconds": round(sum(found["seconds"]), 3),
        "by_generation_s": [round(x, 3) for x in found["seconds"]],
        "collections": found["collections"],
    }


def start_to_first_row(
    root: Path,
    plan: Path,
    name: str,
    workers: int,
    profile: Path | None = None,
    memory: bool = False,
    collector: Path | None = None,
) -> dict[str, Any]:
    """`python -m harness run PLAN --workers N` in the project `root` (`plan` relative to
    it, the harness `root` holds first on the path), stopped by SIGINT once a ledger under
    results/<name>/ holds a whole row (`common.start_harness`, under cProfile writing to
    `profile` when given): the seconds to that row, its exit code (130 when stopped; 0
    when it ended first, or ran under cProfile), its set-up lines and each preparation
    step's seconds. A run that ends without a row ends the bench. With `collector` (a
    folder holding `COLLECTOR_SITECUSTOMIZE` as sitecustomize.py), the collector's seconds
    before the start's first fork (`collector_spent`)."""
    before = load()
    env = {**os.environ, "PYTHONPATH": str(root)}
    written = None if collector is None else collector / f"spent-{os.getpid()}.json"
    if collector is not None and written is not None:
        written.unlink(missing_ok=True)
        env.update(PYTHONPATH=f"{collector}{os.pathsep}{root}", BENCH_COLLECTOR_OUT=str(written))
    started = start_harness(
        ["run", str(plan), "--workers", str(workers)],
        root,
        root / "results" / name,
        env=env,
        stop_at_first_row=True,
        profile=profile,
        sample_memory=memory,
    )
    if started.first_row_s is None:
        raise SystemExit(f"harness run {plan} gave no first row: {started.stderr[-2000:]}")
    done = [line.strip() for _, line in started.stamped if line.startswith("set-up: done")]
    return {
        "first_row_s": round(started.first_row_s, 2),
        "exit_code": started.exit_code,
        "set_up": done[-1] if done else None,
        "steps": set_up_steps(started.stderr),
        "preparation_s": step_seconds(started.stamped),
        "load_before": before,
        "load_after": load(),
        "peak_pss_mib": started.peak_pss_mib,
        "collector": None if written is None else collector_spent(written),
    }


def rounds_in(
    root: Path,
    plan: Path,
    name: str,
    freeze_id: str,
    workers: int,
    rounds: int,
    memory: bool = False,
    *,
    numbers: list[int] | None = None,
    collector: Path | None = None,
    label: str = "",
) -> list[dict[str, Any]]:
    """`rounds` pairs of starts in the project `root` (numbered `numbers`, else from 1): set-up
    computed, then cached (with `memory`, each start's process tree sampled for its peak PSS;
    with `collector`, the collector's seconds before each start's first fork)."""
    cache = root / "results" / SETUP_CACHE_FOLDER / freeze_id
    out = []
    for number in numbers or range(1, rounds + 1):
        entry: dict[str, Any] = {}
        for kind in ("computed", "cached"):
            shutil.rmtree(root / "results" / name, ignore_errors=True)
            if kind == "computed":
                shutil.rmtree(cache, ignore_errors=True)
            entry[kind] = start = start_to_first_row(
                root, plan, name, workers, memory=memory, collector=collector
            )
            peak, spent = start["peak_pss_mib"], start["collector"]
            print(
                f"  {label}round {number}, set-up {kind:<8}: first row after "
                f"{start['first_row_s']:6.2f} s ({steps_said(start['steps'])}); "
                + ("" if peak is None else f"peak PSS of its processes {peak} MiB; ")
                + (
                    ""
                    if spent is None
                    else f"collector {spent['seconds']:.2f} s before its {spent['until']} at "
                    f"{spent['at_s']:.2f} s ({spent['collections'][2]} full collections); "
                )
                + f"load {start['load_before']} -> {start['load_after']}",
                flush=True,
            )
            print(
                "    preparation by step: "
                + ", ".join(f"{k} {v} s" for k, v in start["preparation_s"].items()),
                flush=True,
            )
        computed, cached = entry["computed"], entry["cached"]
        entry["first_row_cached_over_computed"] = round(
            cached["first_row_s"] / computed["first_row_s"], 3
        )
        prepared = (cached["steps"]["set_up_done_s"], computed["steps"]["set_up_done_s"])
        entry["set_up_cached_over_computed"] = (
            round(prepared[0] / prepared[1], 3) if None not in prepared and prepared[1] else None
        )
        print(
            f"  {label}round {number}: cached over computed, first row "
            f"{entry['first_row_cached_over_computed']:.3f}, the original tools' preparation "
            f"{entry['set_up_cached_over_computed']}",
            flush=True,
        )
        out.append(entry)
    return out


def profiled_start(root: Path, plan: Path, name: str, workers: int, count: int) -> dict[str, Any]:
    """One more start in `root`, its set-up cached (the last round's; on Python 3.11 a set-up
    that records coverage cannot run under cProfile, as both are `sys.setprofile` hooks),
    under cProfile: what
    `start_to_first_row` gives, and the `count` functions of the harness it ran (`root`'s
    own, else the installed one, as the start's path finds it) with the most cumulative
    seconds, each with its calls and own seconds."""
    shutil.rmtree(root / "results" / name, ignore_errors=True)
    package = root / "harness"
    if not package.is_dir():
        package = Path(harness.__file__).resolve().parent
    with tempfile.TemporaryDirectory(prefix="first-row-profile-") as tmp:
        path = Path(tmp) / "harness.prof"
        start = start_to_first_row(root, plan, name, workers, profile=path)
        start["profile"] = harness_functions(path, package, count)
    return start


def harness_functions(path: Path, package: Path, count: int) -> list[dict[str, Any]]:
    """The `count` functions defined under the folder `package` with the most cumulative
    seconds in the cProfile file `path` (ties by name), each named by its file relative to
    the folder holding `package`."""
    found = []
    stats: dict[tuple[str, int, str], tuple[Any, ...]] = pstats.Stats(str(path)).stats
    for (file, line, function), (_, calls, own, cumulative, _) in stats.items():
        if not Path(file).is_relative_to(package):
            continue
        found.append(
            {
                "function": f"{Path(file).relative_to(package.parent)}:{line}({function})",
                "calls": calls,
                "own_s": round(own, 3),
                "cumulative_s": round(cumulative, 3),
            }
        )
    return sorted(found, key=lambda row: (-row["cumulative_s"], row["function"]))[:count]


def plan_exists_at(revision: str, relative: Path) -> bool:
    """Whether the file at `relative` (to the repository) exists at `revision`."""
    there = ["git", "-C", str(REPO), "cat-file", "-e", f"{revision}:{relative.as_posix()}"]
    return subprocess.run(there, capture_output=True).returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plan", type=Path, default=REPO / "plans" / "closed_world_all.yaml")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="one more start, its set-up cached, under cProfile: give the harness's N "
        "functions with the most cumulative seconds (0, the default: no such start)",
    )
    parser.add_argument(
        "--memory",
        action="store_true",
        help="sample each start's processes (the run, its helpers and pair children) every "
        "half second to the first row and give the peak of their summed PSS",
    )
    parser.add_argument(
        "--collector",
        action="store_true",
        help="give the seconds the cyclic garbage collector ran in each start before its "
        "first fork",
    )
    parser.add_argument(
        "--against",
        metavar="REV",
        help="start the plan at this revision too, in turns with HEAD, under its own freeze",
    )
    add_output_options(parser)
    args = parser.parse_args()
    if args.workers < 1 or args.rounds < 1:
        print("error: --workers, --rounds: must be 1 or more; fix: give 1 or more", file=sys.stderr)
        return 2
    if args.profile < 0:
        print("error: --profile: must be 0 or more; fix: give 0 or more", file=sys.stderr)
        return 2
    against = None if args.against is None else head_commit(args.against)
    if against == "":
        print(
            f"error: --against: {args.against!r} is no commit of this repository; "
            "fix: give a commit, tag or branch",
            file=sys.stderr,
        )
        return 2
    plan_path, plan, freeze_id = repository_plan(args.plan)
    relative = plan_path.relative_to(REPO)
    if against is not None and not plan_exists_at(against, relative):
        print(
            f"error: --against: {relative} does not exist at {against}; "
            "fix: give a revision where the plan is frozen",
            file=sys.stderr,
        )
        return 2
    out = output_stem(f"first-row-{plan.name}-{today()}", args)
    print(f"load average at the start: {load()} on {os.cpu_count()} CPUs", flush=True)
    head = head_commit()
    print(f"plan {plan.name}, freeze {freeze_id}, HEAD {head}, --workers {args.workers}")
    with contextlib.ExitStack() as stack:
        root = stack.enter_context(head_worktree("first-row-"))
        collector = None
        if args.collector:
            collector = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="gc-")))
            (collector / "sitecustomize.py").write_text(COLLECTOR_SITECUSTOMIZE)
        if against is None:
            rounds = rounds_in(
                root,
                relative,
                plan.name,
                freeze_id,
                args.workers,
                args.rounds,
                args.memory,
                collector=collector,
            )
            other: dict[str, Any] | None = None
        else:
            theirs = stack.enter_context(head_worktree("first-row-against-", against))
            record = read_record(theirs, load_plan(theirs / relative))
            if record is None:
                print(
                    f"error: --against: {relative} has no freeze record at {against}; "
                    "fix: give a revision where the plan is frozen",
                    file=sys.stderr,
                )
                return 2
            print(f"against {against}, its freeze {record.freeze_id}", flush=True)
            rounds, their_rounds = [], []
            for number in range(1, args.rounds + 1):
                starts = [
                    (rounds, root, freeze_id, f"HEAD {head} "),
                    (their_rounds, theirs, record.freeze_id, f"{against} "),
                ]
                for kept, where, frozen, label in starts[:: 1 if number % 2 else -1]:
                    kept += rounds_in(
                        where,
                        relative,
                        plan.name,
                        frozen,
                        args.workers,
                        1,
                        args.memory,
                        numbers=[number],
                        collector=collector,
                        label=label,
                    )
            other = {"revision": against, "freeze_id": record.freeze_id, "rounds": their_rounds}
            for number, (ours, them) in enumerate(zip(rounds, their_rounds, strict=True), 1):
                ratio = ours["cached"]["first_row_s"] / them["cached"]["first_row_s"]
                ours["cached_first_row_over_against"] = round(ratio, 3)
                print(
                    f"  round {number}: cached start's first row, HEAD over {against}: {ratio:.3f}",
                    flush=True,
                )
        profiled = (
            profiled_start(root, relative, plan.name, args.workers, args.profile)
            if args.profile
            else None
        )
    if profiled is not None:
        print(
            f"  under cProfile, set-up cached: first row after {profiled['first_row_s']:.2f} s; "
            f"load {profiled['load_before']} -> {profiled['load_after']}",
            flush=True,
        )
        for row in profiled["profile"]:
            print(
                f"    {row['cumulative_s']:8.3f} s cumulative, {row['own_s']:7.3f} s own, "
                f"{row['calls']:>8} calls  {row['function']}",
                flush=True,
            )
    report = {
        "date": today(),
        "plan": plan.name,
        "freeze_id": freeze_id,
        "head": head,
        "workers": args.workers,
        "rounds": rounds,
        "against": other,
        "profiled": profiled,
        "load_at_end": load(),
    }
    Path(f"{out}.json").write_text(json.dumps(report, indent=1) + "\n")
    lines = [
        f"# bench/first_row.py, {today()}",
        "",
        f"`{' '.join(['python bench/first_row.py', *sys.argv[1:]])}` at `{head}`: plan "
        f"{plan.name}, freeze {freeze_id}, --workers {args.workers}, {os.cpu_count()} CPUs"
        + ("." if other is None else f"; against `{against}`, freeze {other['freeze_id']}."),
        "",
        "| revision | round | set-up | first row (s) | targets loaded (s) | freeze verified (s) "
        "| original tools prepared (s) | of it: helpers, baselines, liveness, grader, coverage (s) "
        "| collector before the first fork (s; full collections) "
        "| peak PSS (MiB) | load before → after |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | --- | --- | ---: | --- |",
    ]
    sides = [(head, rounds)] + ([] if other is None else [(against, other["rounds"])])
    for revision, kept in sides:
        for number, entry in enumerate(kept, 1):
            for kind in ("computed", "cached"):
                start, steps, spent = entry[kind], entry[kind]["steps"], entry[kind]["collector"]
                lines.append(
                    f"| {revision} | {number} | {kind} | {start['first_row_s']} | "
                    f"{steps['targets_loaded_s']} | {steps['freeze_verified_s']} | "
                    f"{steps['set_up_done_s']} | "
                    f"{', '.join(str(v) for v in start['preparation_s'].values())} | "
                    + ("—" if spent is None else f"{spent['seconds']} ({spent['collections'][2]})")
                    + f" | {start['peak_pss_mib'] or '—'} | "
                    f"{start['load_before']} → {start['load_after']} |"
                )
    lines += [""] + [
        f"Round {number}: cached over computed, the first row from a fresh process "
        f"{entry['first_row_cached_over_computed']:.3f}, the original tools' preparation "
        f"{entry['set_up_cached_over_computed']}"
        + (
            f"; the cached start's first row, HEAD over {against}, "
            f"{entry['cached_first_row_over_against']:.3f}"
            if "cached_first_row_over_against" in entry
            else ""
        )
        + "."
        for number, entry in enumerate(rounds, 1)
    ]
    if profiled is not None:
        lines += [
            "",
            f"One more start, its set-up cached, under cProfile: first row after "
            f"{profiled['first_row_s']} s (load {profiled['load_before']} → "
            f"{profiled['load_after']}; cProfile slows what it times). The harness's "
            f"{len(profiled['profile'])} functions with the most cumulative seconds:",
            "",
            "| function | calls | own (s) | cumulative (s) |",
            "| --- | ---: | ---: | ---: |",
            *(
                f"| `{row['function']}` | {row['calls']} | {row['own_s']} | {row['cumulative_s']} |"
                for row in profiled["profile"]
            ),
        ]
    Path(f"{out}.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out}.json and .md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
