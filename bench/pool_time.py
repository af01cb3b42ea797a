"""Where a published run's time went, target by target, from its own ledger.

    python bench/pool_time.py RUN_FOLDER [--against OLD_RUN_FOLDER] [--label NAME]

Sums the pairs' own times (`timing.seconds`: the pair's clock in its worker, from the
hand-over to the answer) per target, with the pairs, the mean and the share of the whole,
and the run's wall time (run.json) beside them: with W workers, the sum over W is the
least wall time the pairs allow. With `--against`, an earlier run of the same pairs (the
run before a refreeze, say): per target, the pairs the two ledgers share and their time
in this run over their time in that one. Two runs are two hours of a shared machine, so
the ratio mixes the code and the hour; a target whose code did not change gives the
hour's part. Reads nothing but the run folders; writes
results/bench/pool-time-<plan>-<freeze id>[-LABEL].json and .md.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

from common import add_output_options, output_stem


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a run folder (ledger.jsonl and run.json)")
    parser.add_argument(
        "--against", type=Path, help="an earlier run folder: the shared pairs' time, new over old"
    )
    add_output_options(parser)
    args = parser.parse_args()
    folders = [args.run] + ([args.against] if args.against else [])
    for path in [f / name for f in folders for name in ("ledger.jsonl", "run.json")]:
        if not path.is_file():
            print(f"error: {path}: not found; fix: give a run folder", file=sys.stderr)
            return 2
    run = json.loads((args.run / "run.json").read_text())
    stem = output_stem(f"pool-time-{run['plan']}-{run['freeze_id']}", args)
    timed = pair_seconds(args.run / "ledger.jsonl")
    seconds: dict[str, float] = defaultdict(float)
    pairs: dict[str, int] = defaultdict(int)
    for target, spent in timed.values():
        seconds[target] += spent
        pairs[target] += 1
    total = sum(seconds.values())
    against = (
        shared_ratios(timed, pair_seconds(args.against / "ledger.jsonl")) if args.against else {}
    )
    wall = None
    if run.get("started_at") and run.get("ended_at"):
        wall = (
            datetime.fromisoformat(run["ended_at"]) - datetime.fromisoformat(run["started_at"])
        ).total_seconds()
    workers = run.get("workers")
    lines = [
        f"# Pair time by target: {run['plan']} / {run['freeze_id']}",
        "",
        f"`python bench/pool_time.py {args.run}"
        + (f" --against {args.against}`" if args.against else "`"),
        "",
        f"{sum(pairs.values()):,} pairs, {total:,.0f} s of pair time"
        + (f"; wall time {wall:,.0f} s" if wall is not None else "")
        + (f" with {workers} workers" if workers else ""),
        "",
        *(
            [f"against {args.against}: the shared pairs' seconds here over there", ""]
            if against
            else []
        ),
        "| target | pairs | seconds | mean s | share |" + (AGAINST_HEAD if against else ""),
        "|---|---:|---:|---:|---:|" + ("---:|---:|" if against else ""),
    ]
    by_time = sorted(seconds, key=lambda t: -seconds[t])
    for target in [*by_time, *(["all"] if against else [])]:
        if target == "all":
            cells = f"| all | {sum(pairs.values()):,} | {total:,.1f} | | |"
        else:
            cells = (
                f"| {target} | {pairs[target]:,} | {seconds[target]:,.1f} | "
                f"{seconds[target] / pairs[target]:.3f} | {seconds[target] / total:.1%} |"
            )
        if against:
            shared = against.get(target)
            cells += f" {shared['pairs']:,} | {shared['ratio']:.2f} |" if shared else " 0 | |"
        lines.append(cells)
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
                **({"against": str(args.against), "shared": against} if against else {}),
            },
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {stem}.md and .json")
    return 0


AGAINST_HEAD = " shared pairs | new / old |"


def pair_seconds(ledger: Path) -> dict[str, tuple[str, float]]:
    """pair id -> (target, the pair's own seconds) of a ledger."""
    out = {}
    for line in ledger.read_text().splitlines():
        row = json.loads(line)
        out[row["pair_id"]] = (row["target"], (row.get("timing") or {}).get("seconds") or 0.0)
    return out


def shared_ratios(
    new: dict[str, tuple[str, float]], old: dict[str, tuple[str, float]]
) -> dict[str, dict[str, Any]]:
    """Per target and for "all": the pairs both ledgers hold (same id, same target) and
    their seconds in `new` over their seconds in `old` (total over total)."""
    sums: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for pair_id, (target, spent) in new.items():
        if pair_id in old and old[pair_id][0] == target:
            for key in (target, "all"):
                sums[key][0] += 1
                sums[key][1] += spent
                sums[key][2] += old[pair_id][1]
    return {
        key: {
            "pairs": int(n),
            "new_seconds": round(a, 2),
            "old_seconds": round(b, 2),
            "ratio": round(a / b, 3) if b else None,
        }
        for key, (n, a, b) in sums.items()
    }


if __name__ == "__main__":
    raise SystemExit(main())
