"""Time per AgentDojo pair, and the share spent outside the checker's own probes.

    python bench/agentdojo_pairs.py [--suites banking slack] [--per-operator 2] [--workers 1]

In one sitting: draws a small closed-world plan over the given suites in a temporary
project, runs it with the harness runner (one process forked per pair: mutant applied in
memory, liveness corpus, checker, grader replay), then times the bare reference checker on
each pair's ORIGINAL tool in this process (median of 3). The ratio of the two is the
harness overhead per pair; the machine is shared and noisy, so only ratios measured side
by side in this run are printed as results. Writes results/bench/agentdojo-<date>.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from common import add_output_options, output_stem, today

PLAN = """
schema_version: 1
name: bench
description: AgentDojo pair timing (bench/agentdojo_pairs.py)
seed: 11
timeout_seconds: 60
liveness_probes_per_tool: 12
arms:
{arms}
"""
ARM = """  - name: {suite}
    kind: closed_world
    target: agentdojo-{suite}
    operators: [M-PHANTOM, M-PRECOND, M-IGNARG, M-PARTIAL, M-INVAR]
    draw_per_operator: {per_operator}
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", nargs="+", default=["banking", "slack", "travel", "workspace"])
    parser.add_argument("--per-operator", type=int, default=2)
    parser.add_argument("--workers", type=int, default=1)
    add_output_options(parser)
    args = parser.parse_args()
    path = Path(f"{output_stem(f'agentdojo-{today()}', args, ('.json',))}.json")

    from common import bare_checker_seconds, throwaway_project

    from harness.checker import ReferenceChecker
    from harness.execution.runner import execute
    from harness.targets.registry import load_target

    started = time.perf_counter()
    targets = {s: load_target(f"agentdojo-{s}") for s in args.suites}
    for target in targets.values():
        target.adapter.fresh()  # pay the import and the suite load once, before timing
    import_seconds = time.perf_counter() - started

    with tempfile.TemporaryDirectory() as folder:
        arms = "".join(ARM.format(suite=s, per_operator=args.per_operator) for s in args.suites)
        plan_path, _ = throwaway_project(Path(folder), "bench", PLAN.format(arms=arms))
        began = time.perf_counter()
        result = execute(plan_path, workers=args.workers)
        run_seconds = time.perf_counter() - began

    checker = ReferenceChecker()
    bare: dict[tuple[str, str], float] = {}
    for row in result.rows:
        key = (row.target, row.tool)
        if key not in bare:
            target = targets[row.target.removeprefix("agentdojo-")]
            times = [bare_checker_seconds(checker, target, row.tool) for _ in range(3)]
            bare[key] = statistics.median(times)

    per_suite = {}
    for suite in args.suites:
        rows = [r for r in result.rows if r.target == f"agentdojo-{suite}"]
        if not rows:
            continue
        pair = statistics.mean(r.timing.seconds for r in rows)
        limit = statistics.mean(bare[(r.target, r.tool)] for r in rows)
        per_suite[suite] = {
            "pairs": len(rows),
            "mean_pair_seconds": round(pair, 4),
            "mean_bare_checker_seconds": round(limit, 4),
            "pair_over_bare": round(pair / limit, 3),
            "share_outside_checker_probes": round(1 - limit / pair, 3),
            "grader_caught": sum(1 for r in rows if r.grader_caught),
            "checker_detected": sum(1 for r in rows if r.status.value == "detected"),
        }
    pair_all = statistics.mean(r.timing.seconds for r in result.rows)
    bare_all = statistics.mean(bare[(r.target, r.tool)] for r in result.rows)
    summary = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "workers": args.workers,
        "pairs": len(result.rows),
        "import_and_load_seconds": round(import_seconds, 2),
        "run_wall_seconds": round(run_seconds, 2),
        "mean_pair_seconds": round(pair_all, 4),
        "mean_bare_checker_seconds": round(bare_all, 4),
        "pair_over_bare": round(pair_all / bare_all, 3),
        "share_outside_checker_probes": round(1 - bare_all / pair_all, 3),
        "per_suite": per_suite,
    }
    load = summary["import_and_load_seconds"]
    print(
        f"{summary['pairs']} AgentDojo pairs, {args.workers} worker(s), "
        f"run {summary['run_wall_seconds']} s (import+load {load} s)"
    )
    print(f"{'suite':<10} {'pairs':>5} {'pair s':>8} {'bare s':>8} {'ratio':>6} {'outside':>8}")
    for suite, row in per_suite.items():
        print(
            f"{suite:<10} {row['pairs']:>5} {row['mean_pair_seconds']:>8.3f} "
            f"{row['mean_bare_checker_seconds']:>8.3f} {row['pair_over_bare']:>6.2f} "
            f"{row['share_outside_checker_probes']:>8.1%}"
        )
    print(
        f"{'all':<10} {summary['pairs']:>5} {pair_all:>8.3f} {bare_all:>8.3f} "
        f"{summary['pair_over_bare']:>6.2f} {summary['share_outside_checker_probes']:>8.1%}"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
