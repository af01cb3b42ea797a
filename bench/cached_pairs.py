"""What a pair costs after a cached set-up against after a computed one, target by target.

    python bench/cached_pairs.py [--targets tau2-retail,toy_domain] [--limit 5]
        [--profile tau2-retail]

A cached set-up (`results/.setup-cache`) saves the parent's set-up before the first row; the
rows are the same. This bench asks whether the pairs after it cost what they cost after a
computed set-up. One project of `--limit` mutants a target (seeded, as bench/overhead.py),
scored with 1 worker three times in this process: set-up computed (results/ removed), then
twice read from the cache (only the run folder removed). Per target, the sum of its pairs'
ledger seconds in each run, with the rows checked identical (else exit 1).

`--profile TARGET` then scores the pairs twice more, each run in a new process, set-up
computed and then cached, with each child that scores a pair of TARGET under cProfile, and
prints the functions with the most own time in each, beside the calls of `equality._same`
(a snapshot's untouched records shared with the original's compare by identity, `a is b`).
Those children write their stats outside results/: the profiled runs lift their write
confinement (`isolation.confine_writes`), which no row depends on.
Writes results/bench/cached-pairs-DATE[-LABEL].{md,json}.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from common import RESULTS, add_output_options, ledger_differences, load, output_stem, today
from overhead import run
from throughput import bench_project

import harness.execution.executors as executors
from harness.cli import fixed_hash_seed

LINES: list[str] = []


def say(text: str) -> None:
    print(text, flush=True)
    LINES.append(text)


def profiled_children(target: str, folder: Path) -> None:
    """Each child that scores a pair of `target` profiles it into `folder`."""
    original = executors.score_pair

    def score_pair(ctx: Any, pair: Any) -> Any:
        if pair.mutant.target != target:
            return original(ctx, pair)
        profile = cProfile.Profile()
        try:
            return profile.runcall(original, ctx, pair)
        finally:
            profile.dump_stats(folder / f"{os.getpid()}.prof")

    executors.score_pair = score_pair
    executors.confine_writes = lambda: None


def top(folder: Path, count: int) -> dict[str, Any]:
    files = sorted(str(f) for f in folder.glob("*.prof"))
    stats = pstats.Stats(*files, stream=io.StringIO())
    rows = stats.stats  # type: ignore[attr-defined]
    own = sorted(((v[2], v[1], f"{Path(k[0]).name}:{k[1]}:{k[2]}") for k, v in rows.items()))
    same = [v for k, v in rows.items() if k[0].endswith("equality.py") and k[2] == "_same"]
    return {
        "children": len(files),
        "seconds": round(stats.total_tt, 3),  # type: ignore[attr-defined]
        "same_calls": same[0][1] if same else 0,
        "top_own_time": [(round(t, 3), calls, name) for t, calls, name in own[::-1][:count]],
    }


def profile_run(label: str, plan_path: Path, target: str, folder: Path) -> None:
    """One run of `plan_path` (set-up computed, or read from the cache) whose children
    profile `target`'s pairs into `folder`."""
    profiled_children(target, folder)
    run(plan_path, fresh=label == "computed", workers=1)


def main() -> int:
    fixed_hash_seed()
    if sys.argv[1:2] == ["--profile-run"]:
        label, plan, target, folder = sys.argv[2:6]
        profile_run(label, Path(plan), target, Path(folder))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="tau2-retail,toy_domain")
    parser.add_argument("--limit", type=int, default=5, help="mutants a target (seeded)")
    parser.add_argument("--profile", help="profile the children of this target's pairs")
    parser.add_argument("--seed", type=int, default=20261130)
    add_output_options(parser)
    args = parser.parse_args()
    stem = output_stem(f"cached-pairs-{today()}", args)
    targets = args.targets.split(",")
    say(f"load average at the start: {load()} on {os.cpu_count()} CPUs")
    report: dict[str, Any] = {"date": today(), "targets": targets, "limit": args.limit}
    failed = False
    with tempfile.TemporaryDirectory(prefix="cached-pairs-") as tmp:
        plan_path, corpus = bench_project(
            Path(tmp) / "project", targets, 1, args.limit, args.seed, recorded=True
        )
        say(f"{len(corpus.pairs)} pairs of {', '.join(targets)}; 1 worker")
        runs: dict[str, dict[str, Any]] = {}
        for label, fresh in (("computed", True), ("cached", False), ("cached again", False)):
            entry = runs[label] = run(plan_path, fresh=fresh, workers=1)
            say(
                f"  set-up {label:<13} {entry['seconds']:7.2f} s, first row after "
                f"{entry['set_up_to_first_row_s']:6.2f} s, first to last "
                f"{entry['first_to_last_row_s']:6.2f} s; load {entry['load_before']} -> "
                f"{entry['load_after']}"
            )
            if label != "computed":
                differ = ledger_differences(runs["computed"]["rows"], entry["rows"])
                say(f"  rows computed / {label}: {'DIFFER' if differ else 'IDENTICAL'}")
                failed = failed or bool(differ)
        sums: dict[str, dict[str, float]] = defaultdict(dict)
        for label, entry in runs.items():
            for row in entry["rows"]:
                sums[row.target][label] = sums[row.target].get(label, 0.0) + row.timing.seconds
        say("pair seconds by target (the sum of its rows' ledger times):")
        say(f"  {'target':<22} {'computed':>9} {'cached':>9} {'again':>9} {'cached/computed':>16}")
        for name, by in sorted(sums.items()):
            ratio = by["cached"] / by["computed"] if by["computed"] else float("nan")
            say(
                f"  {name:<22} {by['computed']:9.2f} {by['cached']:9.2f} "
                f"{by['cached again']:9.2f} {ratio:16.2f}"
            )
        report["pair_seconds"] = {
            name: {label: round(v, 3) for label, v in by.items()} for name, by in sums.items()
        }
        report["runs"] = {
            label: {k: v for k, v in entry.items() if k != "rows"} for label, entry in runs.items()
        }
        for label in ("computed", "cached") if args.profile else ():
            # each in a new process: what one profiled run leaves in this one (the
            # profiler's hooks) would spoil the next
            folder = Path(tmp) / "profiles" / label
            folder.mkdir(parents=True)
            child = [sys.executable, __file__, "--profile-run", label, str(plan_path)]
            subprocess.run([*child, args.profile, str(folder)], check=True)
            found = report.setdefault("profile", {})[label] = top(folder, 8)
            say(
                f"{args.profile}'s children after a {label} set-up, under cProfile: "
                f"{found['children']} pairs, {found['seconds']} s, equality._same called "
                f"{found['same_calls']:,} times; most own time:"
            )
            for seconds, calls, name in found["top_own_time"]:
                say(f"  {seconds:7.3f} s {calls:>10,} calls  {name}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    command = f"python bench/cached_pairs.py --targets {args.targets} --limit {args.limit}"
    if args.profile:
        command += f" --profile {args.profile}"
    report["command"] = command
    Path(f"{stem}.md").write_text(
        f"# bench/cached_pairs.py, {today()}\n\n`{command}`\n\n```\n" + "\n".join(LINES) + "\n```\n"
    )
    Path(f"{stem}.json").write_text(json.dumps(report, indent=1) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
