"""A reduced AgentDojo plan (a few tools per suite) drawn, frozen and run end to end, the
way CI exercises the real target; grader columns included."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("agentdojo")

PLAN = """
schema_version: 1
name: agentdojo_ci
description: reduced AgentDojo plan for CI
seed: 5
timeout_seconds: 60
liveness_probes_per_tool: 6
arms:
  - name: banking
    kind: closed_world
    target: agentdojo-banking
    tools: [send_money, update_password]
    operators: [M-PHANTOM, M-PRECOND, M-IGNARG]
    draw_per_operator: 1
  - name: slack
    kind: closed_world
    target: agentdojo-slack
    tools: [send_direct_message, add_user_to_channel]
    operators: [M-PHANTOM, M-PRECOND]
    draw_per_operator: 1
  - name: travel
    kind: closed_world
    target: agentdojo-travel
    tools: [reserve_hotel]
    operators: [M-IGNARG]
    draw_per_operator: 1
"""


def harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_reduced_agentdojo_plan_end_to_end(tmp_path):
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "agentdojo_ci.yaml").write_text(PLAN)
    for command in ("draw", "freeze", "run"):
        done = harness(command, "plans/agentdojo_ci.yaml", cwd=tmp_path)
        assert done.returncode == 0, command + done.stdout + done.stderr
    (run,) = (tmp_path / "results" / "agentdojo_ci").iterdir()
    rows = [json.loads(line) for line in (run / "ledger.jsonl").read_text().splitlines()]
    assert len(rows) >= 5
    assert {r["target"] for r in rows} == {
        "agentdojo-banking",
        "agentdojo-slack",
        "agentdojo-travel",
    }
    assert {r["status"] for r in rows} <= {"detected", "missed", "untestable"}
    banking = [r for r in rows if r["target"] == "agentdojo-banking"]
    # banking tools are called by user tasks' ground truths: the grader arm is filled
    assert all(r["grader_caught"] is not None for r in banking)
    assert any(r["status"] == "detected" for r in rows)
    assert "Closed-world recall per operator" in done.stdout
    assert "real" in done.stdout  # the real-tool rows of the recall table
