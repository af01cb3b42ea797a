"""Pieces the bench scripts share: a throwaway project (plan, draw, freeze) in a temporary
folder, the bare checker timed on an original tool, a clock on a run's rows, what two
ledgers of the same pairs say differently, and where results land."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.checker import Checker
from harness.execution.draw import Corpus, draw
from harness.execution.freeze import freeze
from harness.execution.ledger import LedgerRow
from harness.execution.plan import load_plan
from harness.targets.registry import Target

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "results" / "bench"


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


class RowClock:
    """A progress hook for `execute`: when scoring began (before the parent's set-up of the
    pairs: targets, baselines, liveness, grades, coverage), when the first row came and
    when the last did."""

    def __init__(self) -> None:
        self.began = self.first = self.ended = 0.0

    def start(self, total: int, skipped: int) -> None:
        self.began = time.perf_counter()

    def advance(self, status: Any) -> None:
        self.ended = time.perf_counter()
        self.first = self.first or self.ended


def said(rows: list[LedgerRow]) -> dict[str, dict[str, Any]]:
    """What each row says (`LedgerRow.comparable()`: all but timing and how the row was
    obtained), without the freeze id: a throwaway project's freeze is not the published one."""
    return {r.pair_id: {**r.comparable(), "freeze_id": None} for r in rows}


def ledger_differences(rows: list[LedgerRow], others: list[LedgerRow]) -> dict[str, str]:
    """Pair id -> how two ledgers of the same pairs differ on it (the fields that differ, or
    which ledger alone has it), for every pair where they do; empty when identical."""
    ours, theirs = said(rows), said(others)
    out = {}
    for pair_id in sorted(ours.keys() | theirs.keys()):
        if pair_id not in theirs:
            out[pair_id] = "only in the first ledger"
        elif pair_id not in ours:
            out[pair_id] = "only in the second ledger"
        else:
            a, b = ours[pair_id], theirs[pair_id]
            fields = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
            if fields:
                out[pair_id] = "differs in " + ", ".join(fields)
    return out


def today() -> str:
    return datetime.now(UTC).date().isoformat()
