"""A whole pool scored by the local executor and by Dask at the same worker count, one after
the other, set-up cached (issue 31: Dask with coverage within 15 % of local).

    python bench/pool_dask.py [--plan plans/closed_world_all.yaml] [--workers 2]
                              [--first local|dask]

`bench/overhead.py` compares the executors on 25 pairs; this runs a repository plan as a
user does, `python -m harness run PLAN --workers N` and the same with `--executor dask`
(a LocalCluster of N single-threaded workers), in a detached git worktree of HEAD under a
temporary folder, so that the plan's freeze verifies from history and nothing under
results/ here changes. The freeze's set-up cache (`results/.setup-cache/<freeze id>`) is
copied into the worktree when this checkout has one; without it the first run computes the
set-up and the second reads it, which is said, and the ratio is then not a fair one.

Prints, with the load average beside each: each run's wall time and the time from its
start to its ledger's first row (the set-up, and on Dask a cluster and batch hosts started);
Dask over local, end to end and after the first row; the rows of the two runs against each
other and against the published run of the freeze (`results/reference/<plan>/<freeze id>`),
if there is one (identical, else exit 1). Writes results/bench/pool-dask-<plan>-<date>.json
and .md. Runs the two in the `--first` order (default: local).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from common import (
    REPO,
    add_output_options,
    head_commit,
    head_worktree,
    ledger_differences,
    load,
    output_stem,
    repository_plan,
    run_to_first_row,
    set_up_steps,
    today,
)

from harness.execution.ledger import read_rows

COMMANDS = {
    "local": [],
    "dask": ["--executor", "dask"],
}


def timed_run(root: Path, plan: Path, name: str, workers: int, executor: str) -> dict[str, Any]:
    """`python -m harness run PLAN` in `root` (`plan` relative to it): seconds to the ledger's
    first whole row and to the end, the load before and after, and the run folder (moved
    aside under `root`)."""
    before = load()
    first, seconds, errors = run_to_first_row(
        ["run", str(plan), "--workers", str(workers), *COMMANDS[executor]],
        root,
        root / "results" / name,
        env={**os.environ, "PYTHONPATH": str(root)},  # the worktree's harness: HEAD's
    )
    (run_dir,) = (root / "results" / name).iterdir()
    kept = root / "runs" / executor
    kept.parent.mkdir(exist_ok=True)
    run_dir.rename(kept)
    set_up = [line for line in errors.splitlines() if line.startswith("set-up: done")]
    return {
        "seconds": round(seconds, 1),
        "first_row_s": round(first if first is not None else seconds, 1),
        "after_first_row_s": round(seconds - (first if first is not None else seconds), 1),
        "set_up": set_up[-1] if set_up else None,
        "steps": set_up_steps(errors),
        "load_before": before,
        "load_after": load(),
        "folder": kept,
    }


def rows_of(folder: Path) -> list[Any]:
    return list(read_rows(folder / "ledger.jsonl"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plan", type=Path, default=REPO / "plans" / "closed_world_all.yaml")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--first", choices=sorted(COMMANDS), default="local")
    add_output_options(parser)
    args = parser.parse_args()
    plan_path, plan, freeze_id = repository_plan(args.plan)
    out = output_stem(f"pool-dask-{plan.name}-{today()}", args)
    print(f"load average at the start: {load()}", flush=True)
    order = [args.first, *(e for e in COMMANDS if e != args.first)]
    report: dict[str, Any] = {
        "date": today(),
        "plan": plan.name,
        "freeze_id": freeze_id,
        "workers": args.workers,
        "order": order,
        "head": head_commit(),
    }
    failures: list[str] = []
    with head_worktree("pool-dask-") as root:
        cache = REPO / "results" / ".setup-cache" / freeze_id
        report["set_up_cache_copied"] = cache.is_dir()
        if cache.is_dir():
            shutil.copytree(cache, root / "results" / ".setup-cache" / freeze_id)
        else:
            print(
                f"  no set-up cache for {freeze_id} here: the first run computes it, the "
                "second reads it (the ratio is not a fair one)",
                flush=True,
            )
        runs: dict[str, dict[str, Any]] = {}
        for executor in order:
            runs[executor] = timed_run(
                root, plan_path.relative_to(REPO), plan.name, args.workers, executor
            )
            entry = runs[executor]
            print(
                f"  {executor:<5} --workers {args.workers}: {entry['seconds']:7.1f} s, first "
                f"row after {entry['first_row_s']:6.1f} s, then "
                f"{entry['after_first_row_s']:7.1f} s; load {entry['load_before']} -> "
                f"{entry['load_after']}; {entry['set_up']}",
                flush=True,
            )
        local, dask = rows_of(runs["local"]["folder"]), rows_of(runs["dask"]["folder"])
        pairs = {"local / dask": (local, dask)}
        published = REPO / "results" / "reference" / plan.name / freeze_id
        if (published / "ledger.jsonl").is_file():
            pairs["published / dask"] = (rows_of(published), dask)
            pairs["published / local"] = (rows_of(published), local)
        report["identity"] = {}
        for label, (old, new) in pairs.items():
            differences = ledger_differences(old, new)
            same = not differences and len(old) == len(new)
            report["identity"][label] = {"pairs": [len(old), len(new)], "identical": same}
            print(
                f"  rows {label}: {len(old)} / {len(new)} pairs, "
                + ("IDENTICAL" if same else f"DIFFERENT: {len(differences)} pairs"),
                flush=True,
            )
            if not same:
                failures.append(label)
        ratio = runs["dask"]["seconds"] / runs["local"]["seconds"]
        after = runs["dask"]["after_first_row_s"] / runs["local"]["after_first_row_s"]
        print(f"  dask over local: {ratio:.3f} end to end, {after:.3f} after the first row")
        report["dask_over_local"] = round(ratio, 3)
        report["dask_over_local_after_first_row"] = round(after, 3)
        report["runs"] = {k: {**v, "folder": None} for k, v in runs.items()}
    report["load_at_end"] = load()
    Path(f"{out}.json").write_text(json.dumps(report, indent=1) + "\n")
    lines = [
        f"# bench/pool_dask.py, {today()}",
        "",
        f"`{' '.join(['python bench/pool_dask.py', *sys.argv[1:]])}` at `{report['head']}`: plan "
        f"{plan.name}, freeze {freeze_id}, set-up cache copied: "
        f"{report['set_up_cache_copied']}, order {', '.join(order)}, 2 CPUs shared.",
        "",
        "| executor | wall (s) | to the first row (s) | after it (s) | load before → after |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for executor, entry in report["runs"].items():
        lines.append(
            f"| {executor} | {entry['seconds']} | {entry['first_row_s']} | "
            f"{entry['after_first_row_s']} | {entry['load_before']} → {entry['load_after']} |"
        )
    lines += [
        "",
        f"Dask over local: {report['dask_over_local']:.3f} end to end, "
        f"{report['dask_over_local_after_first_row']:.3f} after the first row. Rows: "
        + "; ".join(
            f"{k} {'identical' if v['identical'] else 'DIFFERENT'} ({v['pairs'][0]} / "
            f"{v['pairs'][1]})"
            for k, v in report["identity"].items()
        )
        + ".",
    ]
    Path(f"{out}.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out}.json and .md")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
