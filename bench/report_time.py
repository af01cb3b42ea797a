"""`harness report` wall time on the largest published run: this checkout beside a baseline
git ref (default `main`), measured in one run, ratio printed side by side.

    python bench/report_time.py [--baseline REF] [--repeat N]

The baseline is checked out into a temporary git worktree and imported first on
PYTHONPATH, so both sides run in this interpreter's environment; each side reports into its
own temporary folder. Nothing in the repository is written.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "results" / "reference"


def largest_run() -> Path:
    ledgers = sorted(REFERENCE.glob("*/*/ledger.jsonl"), key=lambda p: -sum(1 for _ in p.open()))
    return ledgers[0].parent


def time_report(source: Path, run_dir: Path, repeat: int) -> list[float]:
    env = {**os.environ, "PYTHONPATH": str(source)}
    seconds = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as out:
            began = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "harness", "report", str(run_dir), "--out", out],
                env=env,
                cwd=source,
                check=True,
                capture_output=True,
            )
            seconds.append(time.perf_counter() - began)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    run_dir = largest_run()
    rows = sum(1 for _ in (run_dir / "ledger.jsonl").open())
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "baseline"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base), args.baseline],
            check=True,
            capture_output=True,
        )
        try:
            before = time_report(base, run_dir, args.repeat)
            after = time_report(ROOT, run_dir, args.repeat)
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=True
            )
    b, a = statistics.median(before), statistics.median(after)
    print(f"run: {run_dir.relative_to(ROOT)} ({rows} ledger rows), median of {args.repeat}")
    print(f"{'baseline ' + args.baseline:>24}  {'this checkout':>14}  ratio (this / baseline)")
    print(f"{b:>23.2f}s  {a:>13.2f}s  {a / b:.2f}")


if __name__ == "__main__":
    main()
