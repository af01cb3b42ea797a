"""`harness plan check` and its run at draw and freeze: a prediction that can never hold at
its drawn n is a warning, or an error under `predictions.undecidable: error`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from harness.analysis.decidability import check_plan, undecidable_problems
from harness.execution.draw import load_corpus
from harness.execution.plan import load_plan

PLAN = """
schema_version: 1
name: small
description: two pairs per operator cannot carry a 0.8 floor
seed: 5
liveness_probes_per_tool: 2
arms:
  - name: bank
    kind: closed_world
    target: toy_domain
    tools: [deposit, freeze_account]
    operators: [M-PRECOND]
    draw_per_operator: 2
    stratify_by: tool
predictions:
  recall_floor:
    M-PRECOND: 0.8
    all: 0.1
"""


def harness_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True, text=True
    )


def test_an_undecidable_floor_warns_at_draw_and_is_listed(tmp_path: Path) -> None:
    (tmp_path / "plans").mkdir()
    plan_file = tmp_path / "plans" / "small.yaml"
    plan_file.write_text(PLAN)
    done = harness_cli("draw", "plans/small.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "predictions.recall_floor.M-PRECOND: can never hold in scope toy" in done.stderr
    assert "0.342" in done.stderr  # 2 of 2: Wilson lower end 0.342
    plan = load_plan(plan_file)
    rows = check_plan(plan, load_corpus(tmp_path, plan), None)
    # toy and pooled rows for each floor: 2 pairs, no published run (deff 1, best case).
    assert [(r.scope, r.subject, r.n, r.can_hold) for r in rows] == [
        ("toy", "M-PRECOND", 2, False),
        ("pooled", "M-PRECOND", 2, False),
        ("toy", "all", 2, True),
        ("pooled", "all", 2, True),
    ]
    assert rows[0].n_for_power == 16  # 16 of 16: lower end 0.806; 15 of 15: 0.796
    corpus = load_corpus(tmp_path, plan)
    kept = sum(p.kept for p in corpus.pools if p.operator == "M-PRECOND")
    assert rows[0].pool == kept > 2
    problems = undecidable_problems("plans/small.yaml", rows)
    assert len(problems) == 2
    # The fix says whether drawing more can help at all: not beyond the pool.
    assert ("the pool holds" in problems[0].fix) == (kept < 16)

    listed = harness_cli("plan", "check", "plans/small.yaml", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    shown = " ".join(listed.stdout.split())  # the caption wraps
    assert shown.count("NEVER") == 3 and "2 of 4 rows can never hold" in shown

    plan_file.write_text(PLAN.replace("    all: 0.1\n", "    all: 0.1\n  undecidable: error\n"))
    refused = harness_cli("freeze", "plans/small.yaml", cwd=tmp_path)
    assert refused.returncode == 2
    assert "can never hold" in refused.stderr
    assert not (tmp_path / "plans" / "small.freeze.json").exists()
