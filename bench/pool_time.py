"""Where a published run's time went, target by target, from its own ledger.

    python bench/pool_time.py RUN_FOLDER [--label NAME]

Sums the pairs' own times (`timing.seconds`: the pair's clock in its worker, from the
hand-over to the answer) per target, with the pairs, the mean and the share of the whole,
and the run's wall time (run.json) beside them: with W workers, the sum over W is the
least wall time the pairs allow. Reads nothing but the run folder; writes
results/bench/pool-time-<plan>-<freeze id>[-LABEL].json and .md.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from datetime import datetime
from pathlib import Path

from common import add_output_options, output_stem


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a run folder (ledger.jsonl and run.json)")
    add_output_options(parser)
    args = parser.parse_args()
    ledger, meta = args.run / "ledger.jsonl", args.run / "run.json"
    for path in (ledger, meta):
        if not path.is_file():
            print(f"error: {path}: not found; fix: give a run folder", file=sys.stderr)
            return 2
    run = json.loads(meta.read_text())
    stem = output_stem(f"pool-time-{run['plan']}-{run['freeze_id']}", args)
    seconds: dict[str, float] = defaultdict(float)
    pairs: dict[str, int] = defaultdict(int)
    for line in ledger.read_text().splitlines():
        row = json.loads(line)
        seconds[row["target"]] += (row.get("timing") or {}).get("seconds") or 0.0
        pairs[row["target"]] += 1
    total = sum(seconds.values())
    wall = None
    if run.get("started_at") and run.get("ended_at"):
        wall = (
            datetime.fromisoformat(run["ended_at"]) - datetime.fromisoformat(run["started_at"])
        ).total_seconds()
    workers = run.get("workers")
    lines = [
        f"# Pair time by target: {run['plan']} / {run['freeze_id']}",
        "",
        f"`python bench/pool_time.py {args.run}`",
        "",
        f"{sum(pairs.values()):,} pairs, {total:,.0f} s of pair time"
        + (f"; wall time {wall:,.0f} s" if wall is not None else "")
        + (f" with {workers} workers" if workers else ""),
        "",
        "| target | pairs | seconds | mean s | share |",
        "|---|---:|---:|---:|---:|",
    ]
    by_time = sorted(seconds, key=lambda t: -seconds[t])
    for target in by_time:
        lines.append(
            f"| {target} | {pairs[target]:,} | {seconds[target]:,.1f} | "
            f"{seconds[target] / pairs[target]:.3f} | {seconds[target] / total:.1%} |"
        )
    print("\n".join(lines[4:]))
    Path(f"{stem}.md").write_text("\n".join(lines) + "\n")
    Path(f"{stem}.json").write_text(
        json.dumps(
            {
                "run": str(args.run),
                "plan": run["plan"],
                "freeze_id": run["freeze_id"],
                "wall_seconds": wall,
                "workers": workers,
                "targets": {
                    t: {"pairs": pairs[t], "seconds": round(seconds[t], 2)} for t in by_time
                },
            },
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {stem}.md and .json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
