"""What "differential by construction" costs tau2's db_match: for every drawn tau2 pair of a
plan's corpus, the port's db_match (expected database rebuilt with the same, mutated,
tools) beside an independent db_match (expected database from the original tools), on
every task whose gold actions call the pair's tool; telecom's env_assertions beside them.

    python bench/tau2_grader.py PROJECT_ROOT [PLAN]     # PLAN defaults to closed_world

Prints one line per pair and the totals; runs no checker.
"""

from __future__ import annotations

import sys
from pathlib import Path

from harness.execution.draw import load_corpus
from harness.execution.plan import load_plan
from harness.mutation.apply import MutantCompileError, applied
from harness.targets.equality import canonical_equal
from harness.targets.tau2.adapter import Tau2Adapter
from harness.targets.tau2.grader import grade, grader_tasks, replay, tasks


def main(root: Path, plan_name: str) -> int:
    plan = load_plan(root / "plans" / f"{plan_name}.yaml")
    corpus = load_corpus(root, plan)
    pairs = [p for p in corpus.pairs if p.mutant.target.startswith("tau2-")]
    adapters: dict[str, Tau2Adapter] = {}
    expected: dict[tuple[str, str], object] = {}
    baseline: dict[tuple[str, str], bool] = {}
    totals = {"pairs": 0, "port": 0, "independent": 0}
    for pair in pairs:
        domain = pair.mutant.target.removeprefix("tau2-")
        adapter = adapters.setdefault(domain, Tau2Adapter(domain))
        ids = grader_tasks(adapter, pair.tool)
        for grader_task in ids:  # the original tools' verdicts and expected states, once
            task_id = grader_task.rpartition(":")[0]
            if (domain, grader_task) not in baseline:
                baseline[(domain, grader_task)] = grade(adapter, grader_task)
                if grader_task.endswith(":db_match"):
                    expected[(domain, task_id)] = adapter.snapshot(
                        replay(adapter, tasks(domain)[task_id])
                    )
        port, independent = [], []
        try:
            with applied(adapter, pair.mutant):
                for grader_task in ids:
                    task_id = grader_task.rpartition(":")[0]
                    try:
                        verdict = grade(adapter, grader_task)
                    except Exception:
                        verdict = False
                    if verdict != baseline[(domain, grader_task)]:
                        port.append(grader_task)
                    if grader_task.endswith(":db_match"):
                        state = adapter.snapshot(replay(adapter, tasks(domain)[task_id]))
                        if not canonical_equal(state, expected[(domain, task_id)]):
                            independent.append(task_id)
        except MutantCompileError:
            continue
        totals["pairs"] += 1
        totals["port"] += bool(port)
        totals["independent"] += bool(independent)
        print(
            f"{pair.arm} {pair.mutant.operator} {pair.tool}: tasks {len(ids)}, "
            f"port scorers changed {len(port)}, independent db_match changed {len(independent)}"
        )
    print(
        f"{totals['pairs']} tau2 pairs: the port's scorers caught {totals['port']}; "
        f"db_match against the original tools' expected state would catch "
        f"{totals['independent']}"
    )
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    raise SystemExit(main(Path(args[0]), args[1] if len(args) > 1 else "closed_world"))
