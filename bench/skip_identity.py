"""Exact skipping, checked: the same pools scored with `--skip-by-coverage` off and on must
give identical ledgers (timing and the `skipped_by_coverage` flag aside).

    python bench/skip_identity.py [PLAN ...] [--workers N]

Default plans: plans/closed_world_all.yaml and plans/open_world_all.yaml. Each is drawn
and frozen in a throwaway project under a temporary folder (never in the repository; its
negative controls are copied), then run twice by `execute`, skipping off first. Prints per
plan the pairs, wall times, the speed-up, the pairs skipped outright and the runs reused,
and FAILS (exit 1) naming the first differing pairs when any row differs. Writes
results/bench/skip-identity-<date>.json. The machine may be shared: the load average is
printed beside every time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import RESULTS, throwaway_project, today

from harness.execution.ledger import LedgerRow
from harness.execution.runner import execute

REPO = Path(__file__).resolve().parent.parent
DEFAULT_PLANS = [REPO / "plans" / "closed_world_all.yaml", REPO / "plans" / "open_world_all.yaml"]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def scored(plan_path: Path, workers: int, skip: bool) -> tuple[float, list[LedgerRow], str]:
    shutil.rmtree(plan_path.parent.parent / "results", ignore_errors=True)  # no resume
    before = load()
    began = time.perf_counter()
    result = execute(plan_path, workers=workers, skip_by_coverage=skip)
    return time.perf_counter() - began, sorted(result.rows, key=lambda r: r.pair_id), before


def differing(off: list[LedgerRow], on: list[LedgerRow]) -> list[str]:
    """Pair ids whose comparable rows differ (or that only one ledger has)."""
    left = {r.pair_id: r.comparable() for r in off}
    right = {r.pair_id: r.comparable() for r in on}
    return sorted(p for p in left.keys() | right.keys() if left.get(p) != right.get(p))


def check_plan(source: Path, workers: int, folder: Path) -> dict[str, Any]:
    root = folder / source.stem
    if (REPO / "controls").is_dir():
        shutil.copytree(REPO / "controls", root / "controls")
    plan_path, corpus = throwaway_project(root, source.stem, source.read_text())
    off_seconds, off_rows, off_load = scored(plan_path, workers, skip=False)
    on_seconds, on_rows, on_load = scored(plan_path, workers, skip=True)
    coverage_file = next((plan_path.parent.parent / "results").rglob("coverage.json"), None)
    bad = differing(off_rows, on_rows)
    report = {
        "plan": source.stem,
        "pairs": len(corpus.pairs),
        "workers": workers,
        "seconds_skipping_off": round(off_seconds, 2),
        "seconds_skipping_on": round(on_seconds, 2),
        "speed_up": round(off_seconds / on_seconds, 2),
        "load_average_off": off_load,
        "load_average_on": on_load,
        "skipped_by_coverage": sum(r.skipped_by_coverage for r in on_rows),
        "coverage_json_bytes": coverage_file.stat().st_size if coverage_file else 0,
        "identical": not bad,
        "differing_pairs": bad[:20],
    }
    if bad:
        left = {r.pair_id: r.comparable() for r in off_rows}
        right = {r.pair_id: r.comparable() for r in on_rows}
        report["first_difference"] = {"off": left.get(bad[0]), "on": right.get(bad[0])}
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("plans", nargs="*", type=Path, default=DEFAULT_PLANS)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--keep", type=Path, default=None, help="keep the projects here")
    args = parser.parse_args()
    reports = []
    with tempfile.TemporaryDirectory(prefix="skip-identity-") as tmp:
        folder = args.keep or Path(tmp)
        for plan in args.plans:
            report = check_plan(plan.resolve(), args.workers, folder)
            reports.append(report)
            print(
                f"{report['plan']}: {report['pairs']} pairs, {args.workers} workers: "
                f"{report['seconds_skipping_off']} s off (load {report['load_average_off']}), "
                f"{report['seconds_skipping_on']} s on (load {report['load_average_on']}), "
                f"x{report['speed_up']}; {report['skipped_by_coverage']} skipped outright; "
                + ("ledgers IDENTICAL" if report["identical"] else "ledgers DIFFER: ")
                + ", ".join(report["differing_pairs"][:5]),
                flush=True,
            )
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"skip-identity-{today()}.json"
    out.write_text(json.dumps(reports, indent=1) + "\n")
    print(f"wrote {out.relative_to(REPO)}")
    failed = [r["plan"] for r in reports if not r["identical"]]
    if failed:
        print(f"FAIL: rows differ with skipping on in {', '.join(failed)}", file=sys.stderr)
        for r in reports:
            if "first_difference" in r:
                print(json.dumps(r["first_difference"], indent=1)[:4000], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
