"""Pieces the bench scripts share: a throwaway project (plan, draw, freeze) in a temporary
folder, the bare checker timed on an original tool, and where results land."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

from harness.checker import Checker
from harness.execution.draw import Corpus, draw
from harness.execution.freeze import freeze
from harness.execution.plan import load_plan
from harness.targets.registry import Target

RESULTS = Path(__file__).resolve().parent.parent / "results" / "bench"


def throwaway_project(root: Path, name: str, plan_text: str) -> tuple[Path, Corpus]:
    """Write `plan_text` as <root>/plans/<name>.yaml, draw it and freeze it (no git tag):
    the plan path and its drawn corpus. Never touches the repository."""
    (root / "plans").mkdir(parents=True, exist_ok=True)
    plan_path = root / "plans" / f"{name}.yaml"
    plan_path.write_text(plan_text)
    plan = load_plan(plan_path)
    corpus = draw(plan, root)
    freeze(plan_path, plan, root, [p.pair_id for p in corpus.pairs])
    return plan_path, corpus


def bare_checker_seconds(checker: Checker, target: Target, tool: str) -> float:
    """Wall time of one `checker.check` of the ORIGINAL `tool`, in this process."""
    began = time.perf_counter()
    checker.check(target, [tool])
    return time.perf_counter() - began


def today() -> str:
    return datetime.now(UTC).date().isoformat()
