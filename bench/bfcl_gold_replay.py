"""The gold replay of every task of BFCL's multi_turn_base through both grader arms, on the
original classes (issue 26's acceptance: both arms must pass all 200).

    python bench/bfcl_gold_replay.py

For each arm (`shipped`: BFCL's own multi_turn_checker, differential; `expected`: against
the unmutated classes), `grade(task)` on every task, then `evaluate(task, replay(task))`,
with the wall time of each pass. The expected arm's first pass includes building its
expectations (once per process). Exits 1 when any verdict is False. Runs no mutant.
"""

from __future__ import annotations

import time

from harness.targets.bfcl import grader
from harness.targets.bfcl.adapter import bfcl_tasks, bfcl_version
from harness.targets.bfcl.tasks import task_order


def main() -> int:
    tasks = sorted(bfcl_tasks(), key=task_order)
    print(f"{bfcl_version()}: {len(tasks)} tasks of {grader.CATEGORY}")
    failed_any = False
    for arm in grader.ARMS:
        for label, run in (
            ("grade", lambda t: grader.grade(t)),
            ("evaluate(replay)", lambda t: grader.evaluate(t, grader.replay(t))),
        ):
            started = time.perf_counter()
            failed = [task for task in tasks if not run(f"{task}:{arm}")]
            seconds = time.perf_counter() - started
            failed_any |= bool(failed)
            print(
                f"{arm:>8} {label:<17} passed {len(tasks) - len(failed)} of {len(tasks)} "
                f"in {seconds:.2f} s" + (f"; failed: {', '.join(failed)}" if failed else "")
            )
    print(f"checker instances left in its module globals: {len(grader.cached_instances())}")
    return 1 if failed_any else 0


if __name__ == "__main__":
    raise SystemExit(main())
