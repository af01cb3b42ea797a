"""Screening at enumeration and empty arms (issue 18): a candidate that cannot run or that
is the original (or another candidate) again stays in the pool with its status and is
never drawn; an operator with nothing to draw says so at draw time and keeps its row in
the report."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

from harness.execution.draw import PoolEntry, draw_sample
from harness.execution.plan import Plan
from harness.mutation.model import Arm, Mutant, mutant_id
from harness.mutation.screen import SCREENING_RULE, Screener, ScreenStatus
from harness.mutation.sites import function_source, tool_sites
from harness.targets.registry import load_target

TARGET = load_target("toy_domain")
ROOT = Path(TARGET.adapter.source_root())
SITE = tool_sites(TARGET.adapter, "advance_voucher_clock")[0]
ORIGINAL = function_source(SITE, ROOT)


def candidate(text: str, operator: str = "M-PRECOND", arm: Arm = Arm.CLOSED_WORLD) -> Mutant:
    return Mutant(
        id=mutant_id("v", SITE, operator, 0, text),
        arm=arm,
        operator=operator,
        defect_class=None,
        target="toy_domain",
        target_version="v",
        site=SITE,
        occurrence=0,
        mutated_source=text,
        diff="",
    )


def test_each_screen_has_its_status() -> None:
    assert "if seconds <= 0:" in ORIGINAL
    screener = Screener(ROOT)
    texts = {
        "syntax": ORIGINAL.replace("if seconds <= 0:", "if seconds <= 0"),
        "definition": ORIGINAL.replace("seconds: int)", "seconds: int = 1 // 0)"),
        "folded": ORIGINAL.replace("if seconds <= 0:", "if seconds <= 1 - 1:"),
        "kept": ORIGINAL.replace("if seconds <= 0:", "if seconds < 0:"),
        "same as kept": ORIGINAL.replace("if seconds <= 0:", "if seconds < 1 - 1:"),
    }
    statuses = {name: screener.status(candidate(text)) for name, text in texts.items()}
    assert statuses == {
        "syntax": ScreenStatus.COMPILE_ERROR,
        "definition": ScreenStatus.DEFINITION_ERROR,
        "folded": ScreenStatus.EQUIVALENT,
        "kept": ScreenStatus.KEPT,
        "same as kept": ScreenStatus.DUPLICATE,
    }


def test_a_duplicate_is_per_operator_and_a_control_is_never_equivalent() -> None:
    screener = Screener(ROOT)
    text = ORIGINAL.replace("if seconds <= 0:", "if seconds < 0:")
    assert screener.status(candidate(text, "M-PRECOND")) is ScreenStatus.KEPT
    assert screener.status(candidate(text, "M-VALIDITY")) is ScreenStatus.KEPT
    folded = ORIGINAL.replace("if seconds <= 0:", "if seconds <= 1 - 1:")
    assert screener.status(candidate(folded, "C-REWORD", Arm.CONTROLS)) is ScreenStatus.KEPT


def test_a_screened_candidate_is_never_drawn() -> None:
    plan = Plan.model_validate(
        {
            "name": "p",
            "description": "d",
            "seed": 3,
            "arms": [
                {
                    "name": "a",
                    "kind": "closed_world",
                    "target": "toy_domain",
                    "operators": ["M-PRECOND"],
                    "draw_per_operator": 100,
                }
            ],
        }
    )
    statuses = list(ScreenStatus)
    pool = [
        PoolEntry(
            pair_id=f"m{i}:t{i % 3}",
            mutant_id=f"m{i}",
            arm="a",
            operator="M-PRECOND",
            tool=f"t{i % 3}",
            screen=statuses[i % len(statuses)],
        )
        for i in range(40)
    ]
    drawn = draw_sample(plan, pool, set())
    kept = {e.pair_id for e in pool if e.screen is ScreenStatus.KEPT}
    assert {e.pair_id for e in drawn} == kept and len(kept) == 8


# --- end to end: draw, freeze, run, report ------------------------------------------------

EMPTY_PLAN = """
schema_version: 1
name: empty
description: an arm whose M-VALIDITY pool is empty (bank tools have no clock)
seed: 5
timeout_seconds: 60
liveness_probes_per_tool: 2
arms:
  - name: bank
    kind: closed_world
    target: toy_domain
    tools: [deposit, freeze_account]
    operators: [M-PRECOND, M-VALIDITY]
    draw_per_operator: 2
    stratify_by: tool
"""


def harness_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True, text=True
    )


def test_an_empty_operator_is_reported_at_draw_time_and_in_the_report(tmp_path: Path) -> None:
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "empty.yaml").write_text(EMPTY_PLAN)
    done = harness_cli("draw", "plans/empty.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (
        "arm bank, operator M-VALIDITY: no candidates: no clock path (no validity observation "
        "clause in the arm's contracts)" in done.stdout
    )
    corpus = tmp_path / "mutants" / "empty"
    manifest = json.loads((corpus / "manifest.json").read_text())
    assert manifest["screening_rule"] == SCREENING_RULE
    pools = {p["operator"]: p for p in manifest["pools"]}
    assert pools["M-VALIDITY"]["offered"] == 0 and pools["M-VALIDITY"]["empty_reason"]
    assert pools["M-PRECOND"]["kept"] > 0 and pools["M-PRECOND"]["drawn"] == 2
    entries = json.loads((corpus / "pool.json").read_text())["entries"]
    assert all("screen" in e for e in entries)
    assert "M-VALIDITY | 0 |" in (corpus / "README.md").read_text()
    for command in ("freeze", "run"):
        done = harness_cli(command, "plans/empty.yaml", cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
    assert "no candidates" in done.stdout  # the run's own tables keep the row
    (run,) = (tmp_path / "results" / "empty").iterdir()
    report = harness_cli("report", str(run), "--out", str(tmp_path / "report"), cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    with (tmp_path / "report" / "tables" / "closed_world_recall.csv").open() as handle:
        operators = [r["operator"] for r in csv.DictReader(handle)]
    assert "M-VALIDITY (no candidates)" in operators
    with (tmp_path / "report" / "tables" / "pool_screening.csv").open() as handle:
        rows = {r["operator"]: r for r in csv.DictReader(handle)}
    assert rows["M-VALIDITY"]["note"].startswith("no candidates: no clock path")
    assert rows["M-PRECOND"]["drawn"] == "2"


# --- a controls arm over several targets (issue 19, friction 7) ---------------------------


def test_a_controls_arm_may_take_several_targets() -> None:
    from harness.execution.draw import build_pool, operator_pools

    plan = Plan.model_validate(
        {
            "name": "p",
            "description": "d",
            "seed": 3,
            "arms": [
                {
                    "name": "controls",
                    "kind": "controls",
                    "target": ["toy_domain", "agentdojo-banking"],
                    "operators": ["C-REWORD"],
                    "draw_per_operator": 4,
                }
            ],
        }
    )
    assert plan.targets() == ["agentdojo-banking", "toy_domain"]
    targets = {name: load_target(name) for name in plan.targets()}
    pool, mutants = build_pool(plan, targets)
    assert {mutants[e.mutant_id].target for e in pool} == {"toy_domain", "agentdojo-banking"}
    drawn = draw_sample(plan, pool, set())
    assert len(drawn) == 4
    (summary,) = operator_pools(plan, targets, pool, drawn)
    assert summary.target == "toy_domain, agentdojo-banking" and summary.drawn == 4


def test_an_arm_names_each_target_once() -> None:
    import pytest
    from pydantic import ValidationError

    arm = {"name": "c", "kind": "controls", "operators": ["C-REWORD"], "draw_per_operator": 1}
    with pytest.raises(ValidationError, match="distinct targets"):
        Plan.model_validate(
            {
                "name": "p",
                "description": "d",
                "seed": 1,
                "arms": [{**arm, "target": ["toy_domain", "toy_domain"]}],
            }
        )
