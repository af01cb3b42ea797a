"""`harness report` wall time on a published run: this checkout beside a baseline git ref
(default `main`), measured in one run, ratio printed side by side.

    python bench/report_time.py [--baseline REF] [--repeat N] [--run RUN_DIR]
                                [--label L] [--replace] [--out DIR]

The baseline is checked out into a temporary git worktree and imported first on
PYTHONPATH, so both sides run in this interpreter's environment; each side reports into its
own temporary folder. The two sides alternate, baseline first, REPEAT rounds (default 3),
and each side's median is kept; the load average is printed before and after. RUN_DIR
defaults to the published run with the most ledger rows (ties: the last by path, so the
choice does not depend on the file system's order). The output is also written to
results/bench/report-time-DATE[-LABEL].md; nothing else in the repository is written.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import add_output_options, load, output_stem, today

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "results" / "reference"


def rows_of(run_dir: Path) -> int:
    with (run_dir / "ledger.jsonl").open() as ledger:
        return sum(1 for _ in ledger)


def largest_run() -> Path:
    runs = [p.parent for p in REFERENCE.glob("*/*/ledger.jsonl")]
    return max(runs, key=lambda run: (rows_of(run), run))  # among equals, the last by path


def time_report(source: Path, run_dir: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(source)}
    with tempfile.TemporaryDirectory() as out:
        began = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "harness", "report", str(run_dir), "--out", out],
            env=env,
            cwd=source,
            check=True,
            capture_output=True,
        )
        return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--run", type=Path, help="a run folder (default: the largest published)")
    add_output_options(parser)
    args = parser.parse_args()
    stem = output_stem(f"report-time-{today()}", args, suffixes=(".md",))
    run_dir = (args.run or largest_run()).resolve()
    if not (run_dir / "ledger.jsonl").is_file():
        print(
            f"error: --run: {run_dir} has no ledger.jsonl; fix: name a run folder", file=sys.stderr
        )
        raise SystemExit(2)
    shown = run_dir.relative_to(ROOT) if run_dir.is_relative_to(ROOT) else run_dir
    lines = [f"load average {load()} before, on {os.cpu_count()} CPUs"]
    before: list[float] = []
    after: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "baseline"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base), args.baseline],
            check=True,
            capture_output=True,
        )
        try:
            for _ in range(args.repeat):
                before.append(time_report(base, run_dir))
                after.append(time_report(ROOT, run_dir))
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=True
            )
    b, a = statistics.median(before), statistics.median(after)
    lines += [
        f"load average {load()} after",
        f"run: {shown} ({rows_of(run_dir)} ledger rows), median of {args.repeat}, alternating",
        f"{'baseline ' + args.baseline:>24}  {'this checkout':>14}  ratio (this / baseline)",
        f"{b:>23.2f}s  {a:>13.2f}s  {a / b:.2f}",
        "rounds: baseline " + ", ".join(f"{s:.2f}" for s in before),
        "        this     " + ", ".join(f"{s:.2f}" for s in after),
    ]
    print("\n".join(lines))
    command = shlex.join(["python", "bench/report_time.py", *sys.argv[1:]])
    Path(f"{stem}.md").write_text(
        f"# bench/report_time.py, {today()}\n\n`{command}`\n\n```\n" + "\n".join(lines) + "\n```\n"
    )


if __name__ == "__main__":
    main()
