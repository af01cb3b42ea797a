"""What verifying a freeze costs, in this checkout and in an earlier commit, side by side.

    python bench/verify_time.py [--before 91cb1ba] [--plans closed_world,open_world_all]
                                [--repeat 5]

Every `harness run` verifies its freeze before its first row: it hashes every file the
freeze covers again (the plan, the drawn corpus, every installed file of the targets'
packages, the harness code) and compares. This times that computation
(`freeze.current_inputs`) for each of the repository's plans in two fresh interpreters, one
importing the harness of this checkout and one importing the harness of `--before` (checked
out with `git worktree` into a temporary folder and put first on PYTHONPATH), both reading
this checkout's plans, corpora and installed packages (`python -P`: the working folder is
not put first on sys.path, so PYTHONPATH decides which harness is imported). Each
interpreter computes it once to import and load the targets, then `--repeat` times; the two
alternate, plan by plan, so both see the same load. Prints the median of each, their ratio,
and the load average; checks that both computed the same hashes for every group, and in
the `harness` group the same files with the same hashes but for the files `git diff`
names between the two commits; writes
results/bench/verify-time-<date>.json and .md."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import REPO, RESULTS, add_output_options, load, output_stem, today

TIMER = """
import json, sys, time
from pathlib import Path
import harness
from harness.execution.freeze import current_inputs
from harness.execution.plan import load_plan

plan_path, repeat = Path(sys.argv[1]), int(sys.argv[2])
plan = load_plan(plan_path)
hashes, _ = current_inputs(plan_path, plan, Path("."))  # imports, targets loaded
seconds = []
for _ in range(repeat):
    began = time.perf_counter()
    current_inputs(plan_path, plan, Path("."))
    seconds.append(time.perf_counter() - began)
print(json.dumps({"seconds": seconds, "hashes": hashes, "harness": harness.__file__}))
"""


def timed(plan: str, repeat: int, pythonpath: str | None) -> dict[str, Any]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    done = subprocess.run(
        [sys.executable, "-P", "-c", TIMER, f"plans/{plan}.yaml", str(repeat)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"timing {plan} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def same_inputs(now: dict[str, Any], then: dict[str, Any], changed: set[str]) -> bool:
    """Every group equal, but the `harness` group's hashes of the files changed between the
    two commits (its keys are equal too)."""
    ours, theirs = dict(now["hashes"]), dict(then["hashes"])
    harness_now, harness_then = ours.pop("harness"), theirs.pop("harness")
    if ours != theirs or harness_now.keys() != harness_then.keys():
        return False
    return all(harness_now[k] == harness_then[k] for k in harness_now if k not in changed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="91cb1ba", help="the earlier commit")
    parser.add_argument(
        "--plans", default="closed_world,open_world,closed_world_all,open_world_all"
    )
    parser.add_argument("--repeat", type=int, default=5)
    add_output_options(parser)
    args = parser.parse_args()
    out = output_stem(f"verify-time-{today()}", args)
    plans = args.plans.split(",")
    report: dict[str, Any] = {"date": today(), "before": args.before, "plans": {}}
    failures = []
    print(f"load average at the start: {load()} on {os.cpu_count()} CPUs", flush=True)
    with tempfile.TemporaryDirectory(prefix="verify-time-") as tmp:
        old = Path(tmp) / "before"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(old), args.before],
            cwd=REPO,
            check=True,
            capture_output=True,
        )
        changed = set(
            subprocess.run(
                ["git", "diff", "--name-only", args.before, "HEAD", "--", "harness/"],
                cwd=REPO,
                check=True,
                capture_output=True,
                text=True,
            ).stdout.split()
        )
        report["harness_files_changed"] = sorted(changed)
        try:
            for plan in plans:
                before_load = load()
                now = timed(plan, args.repeat, None)
                then = timed(plan, args.repeat, str(old))
                if not then["harness"].startswith(str(old)):
                    raise SystemExit(f"the earlier harness was not imported: {then['harness']}")
                same = same_inputs(now, then, changed)
                if not same:
                    failures.append(plan)
                entry = {
                    "before_s": round(statistics.median(then["seconds"]), 3),
                    "now_s": round(statistics.median(now["seconds"]), 3),
                    "hashes": sum(len(group) for group in now["hashes"].values()),
                    "same_hashes_but_changed_files": same,
                    "load": [before_load, load()],
                }
                entry["now_over_before"] = round(entry["now_s"] / entry["before_s"], 2)
                report["plans"][plan] = entry
                print(
                    f"  {plan:<17} {entry['hashes']:>6,} hashes: before "
                    f"{entry['before_s']:6.3f} s, now {entry['now_s']:6.3f} s, now / before "
                    f"{entry['now_over_before']:.2f}; hashes "
                    f"{'IDENTICAL' if same else 'DIFFER'}; load {before_load} -> {load()}",
                    flush=True,
                )
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(old)], cwd=REPO, check=False
            )
    lines = [
        f"# Verifying a freeze, before and now ({report['date']})",
        "",
        f"`python bench/verify_time.py --before {args.before} --plans {args.plans} "
        f"--repeat {args.repeat}`: `freeze.current_inputs`, median of {args.repeat} in a "
        f"warm interpreter, the two commits alternating plan by plan, on {os.cpu_count()} CPUs. "
        f"Same hashes: every group, and the `harness` group but for the files changed between "
        f"the two commits ({', '.join(sorted(changed))}).",
        "",
        "| plan | hashes | before (s) | now (s) | now / before | same hashes | load |",
        "| --- | ---: | ---: | ---: | ---: | --- | --- |",
        *(
            f"| {plan} | {e['hashes']:,} | {e['before_s']} | {e['now_s']} | "
            f"{e['now_over_before']} | {'yes' if e['same_hashes_but_changed_files'] else 'NO'} | "
            f"{e['load'][0]} → {e['load'][1]} |"
            for plan, e in report["plans"].items()
        ),
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    Path(f"{out}.json").write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    Path(f"{out}.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out}.json and .md")
    if failures:
        print(f"FAILED: hashes differ for {', '.join(failures)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
