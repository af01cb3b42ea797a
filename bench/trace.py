"""Speed of the score-at-risk trace on the four AgentDojo suites.

    python bench/trace.py [--suites banking slack travel workspace]

In one process: loads the targets (the agentdojo import and the suites, timed apart), then
times the static trace (defect fields, evaluator read sites, basis, gold replay and reach;
no repair, no control) from results/agentdojo-baseline, then the repairs' validation and
the positive controls under repairs/, reported as control paths per second (each path runs
twice: unrepaired and repaired). Target: the static trace under 30 s on 2 cores. Writes
results/bench/trace-<date>.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from common import add_output_options, output_stem, today

ROOT = Path(__file__).resolve().parent.parent
STATIC_TARGET_SECONDS = 30.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", nargs="+", default=["banking", "slack", "travel", "workspace"])
    add_output_options(parser)
    args = parser.parse_args()
    out = Path(f"{output_stem(f'trace-{today()}', args, ('.json',))}.json")

    from harness.checker import ReferenceChecker
    from harness.targets.registry import load_target
    from harness.trace.controls import run_controls
    from harness.trace.repairs import load_repairs, validate
    from harness.trace.run import read_defects, trace_target
    from harness.trace.suites import suite_for

    started = time.perf_counter()
    targets = [load_target(f"agentdojo-{s}") for s in args.suites]
    for target in targets:
        target.adapter.fresh()  # the import and the suite load, once, before the trace
    load_seconds = time.perf_counter() - started

    defects, _ = read_defects(ROOT / "results" / "agentdojo-baseline")
    checker = ReferenceChecker()
    started = time.perf_counter()
    rows = 0
    with tempfile.TemporaryDirectory() as empty:  # no repairs: the static trace alone
        for target in targets:
            mine = [d for d in defects if d.target == target.name]
            rows += len(trace_target(target, mine, Path(empty), checker, lambda _: None).rows)
    static_seconds = time.perf_counter() - started

    validate_seconds = control_seconds = 0.0
    paths = repairs = 0
    for target in targets:
        tasks = suite_for(target)
        by_tool = {d.tool: d for d in defects if d.target == target.name}
        for repair in load_repairs(target, ROOT / "repairs"):
            started = time.perf_counter()
            validate(target, repair, set(by_tool[repair.spec.tool].clauses), checker)
            validate_seconds += time.perf_counter() - started
            repairs += 1
            if repair.spec.control is None:
                continue
            callers = [
                t for t in tasks.task_ids()
                if any(c.tool == repair.spec.tool for c in tasks.gold_calls(t))
            ]  # fmt: skip
            started = time.perf_counter()
            paths += len(run_controls(target, tasks, repair, callers)[0])
            control_seconds += time.perf_counter() - started

    result = {
        "date": today(),
        "suites": args.suites,
        "load_seconds": round(load_seconds, 2),
        "static_trace_seconds": round(static_seconds, 2),
        "static_trace_rows": rows,
        "static_target_seconds": STATIC_TARGET_SECONDS,
        "static_within_target": static_seconds < STATIC_TARGET_SECONDS,
        "repairs_validated": repairs,
        "repair_validation_seconds": round(validate_seconds, 2),
        "control_paths": paths,
        "control_seconds": round(control_seconds, 2),
        "control_paths_per_second": round(paths / control_seconds, 2) if control_seconds else None,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    for key, value in result.items():
        print(f"{key}: {value}")
    print(f"wrote {out.relative_to(ROOT)}")
    return 0 if result["static_within_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
