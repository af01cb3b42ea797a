"""Whether splitting a grader pays: each target's grader tasks graded whole against replayed,
fingerprinted and evaluated apart, on the original tools, in this process.

    python bench/split_grading.py [--targets agentdojo-workspace,bfcl-travel] [--tasks N]
        [--repeat N]

With coverage-guided scoring the runner grades a task of a `SplitGrader` by replaying it with
the mutant and comparing the fingerprint of what the evaluation reads with the original's;
it evaluates only when they differ (`pair_scoring._evaluated`). That costs a replay and a
fingerprint where a whole grade costs a replay and an evaluation, so it pays only where the
evaluation costs more than the fingerprint and whatever the split replay copies to feed
it. Per target (its first `--tasks` grader tasks, sorted; each task graded once untimed
first, then each timing the best of `--repeat`): milliseconds a task for a whole `grade`, `replay`,
`fingerprint` and `evaluate`, and split / whole with the inputs equal (replay + fingerprint
over grade: below 1 the split pays), beside whether the adapter splits
(`harness.targets.adapter.splits`). Checks that the split gives the whole grade's verdict on
every task, and exits 1 when one differs. Writes results/bench/split-grading-DATE.{md,json}.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import RESULTS, add_output_options, load, output_stem, today

from harness.cli import fixed_hash_seed
from harness.execution.coverage import ClockWindow, fingerprint
from harness.targets.adapter import SplitGrader, splits
from harness.targets.registry import BUILTIN_TARGETS, load_target

LINES: list[str] = []


def say(text: str) -> None:
    print(text, flush=True)
    LINES.append(text)


def best(function: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """(the fewest seconds of `repeat` calls, the last call's value)."""
    seconds, value = float("inf"), None
    for _ in range(repeat):
        began = time.perf_counter()
        value = function()
        seconds = min(seconds, time.perf_counter() - began)
    return seconds, value


def measure(name: str, tasks: int, repeat: int) -> dict[str, Any] | None:
    target = load_target(name)
    adapter = target.adapter
    if not isinstance(adapter, SplitGrader):
        return None
    found = sorted({task for tool in target.contracts for task in adapter.grader_tasks(tool)})
    chosen = found[:tasks]
    totals = {"grade": 0.0, "replay": 0.0, "fingerprint": 0.0, "evaluate": 0.0}
    differ = []
    for task in chosen:
        adapter.grade(task)  # untimed: imports, caches, first touches
        seconds, whole = best(lambda task=task: adapter.grade(task), repeat)
        totals["grade"] += seconds
        seconds, (inputs, window) = best(
            lambda task=task: ClockWindow.around(lambda: adapter.replay(task)), repeat
        )
        totals["replay"] += seconds
        seconds, _ = best(lambda inputs=inputs, window=window: fingerprint(inputs, window), repeat)
        totals["fingerprint"] += seconds
        seconds, verdict = best(
            lambda task=task, inputs=inputs: adapter.evaluate(task, inputs), repeat
        )
        totals["evaluate"] += seconds
        if bool(verdict) != bool(whole):
            differ.append(task)
    ms = {k: round(1000 * v / max(len(chosen), 1), 3) for k, v in totals.items()}
    split = (totals["replay"] + totals["fingerprint"]) / totals["grade"] if chosen else None
    return {
        "target": name,
        "tasks": len(chosen),
        "of": len(found),
        "ms_a_task": ms,
        "split_over_whole_inputs_equal": None if split is None else round(split, 2),
        "splits": splits(adapter),
        "verdicts_differ": differ,
    }


def _ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def main() -> int:
    fixed_hash_seed()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default=",".join(BUILTIN_TARGETS))
    parser.add_argument("--tasks", type=int, default=30, help="grader tasks a target")
    parser.add_argument("--repeat", type=int, default=3)
    add_output_options(parser)
    args = parser.parse_args()
    stem = output_stem(f"split-grading-{today()}", args)
    say(f"load average at the start: {load()} on {os.cpu_count()} CPUs")
    say(
        f"{'target':<22} {'tasks':>9} {'grade':>8} {'replay':>8} {'fingerpr.':>9} "
        f"{'evaluate':>8} {'split/whole':>11}  splits"
    )
    found, failed = [], False
    for name in args.targets.split(","):
        entry = measure(name, args.tasks, args.repeat)
        if entry is None:
            say(f"{name:<22} not a SplitGrader")
            continue
        found.append(entry)
        ms = entry["ms_a_task"]
        say(
            f"{name:<22} {entry['tasks']:>4} of {entry['of']:<3} {ms['grade']:8.2f} "
            f"{ms['replay']:8.2f} {ms['fingerprint']:9.2f} {ms['evaluate']:8.2f} "
            f"{_ratio(entry['split_over_whole_inputs_equal']):>11}  "
            f"{'yes' if entry['splits'] else 'no'}"
            f"; load {load()}"
        )
        if entry["verdicts_differ"]:
            failed = True
            say(f"  split and whole verdicts DIFFER on {entry['verdicts_differ']}")
    say("(milliseconds a task, the best of each; split/whole: replay + fingerprint over grade)")
    RESULTS.mkdir(parents=True, exist_ok=True)
    command = "python bench/split_grading.py " + " ".join(
        f"--{k} {v}" for k, v in vars(args).items() if k not in ("label", "replace")
    )
    Path(f"{stem}.md").write_text(
        f"# bench/split_grading.py, {today()}\n\n`{command}`\n\n```\n"
        + "\n".join(LINES)
        + "\n```\n"
    )
    Path(f"{stem}.json").write_text(
        json.dumps({"date": today(), "command": command, "targets": found}, indent=1) + "\n"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
