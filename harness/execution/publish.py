"""`harness publish`: copy a finished run into the committed reference folder, only when
git history shows its freeze came first (`harness.execution.history`; a post-hoc run has no
freeze to show and is published as post hoc)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from harness.errors import Problem, UserError
from harness.execution.atomic import staged_folder
from harness.execution.freeze import record_path
from harness.execution.held_out import blind_predecessor, check_held_out, record_at
from harness.execution.history import check_order
from harness.execution.run_folder import (
    ledger_state,
    read_bytes,
    read_ledger,
    refuse_symlinked_folder,
)

# coverage.json (what each run started on the original) lets a reader audit every row's
# `reused_runs`; a run scored without coverage-guided scoring has none
# digests.json: the digests baseline.json and coverage.json were written with
PUBLISHED = ("ledger.jsonl", "run.json", "baseline.json", "coverage.json", "digests.json")
RUN_CORPUS = "corpus.json"  # the drawn manifest the run was scored from


def publish(run_dir: Path) -> Path:
    """results/<plan>/<run>/ -> results/reference/<plan>/<run>/ (replaced whole)."""
    from harness.analysis.runs import load_run_meta  # it imports this module's RUN_CORPUS

    refuse_symlinked_folder(run_dir)
    # no run.json, or a field missing or of the wrong form: one line each, as `report` says
    meta = load_run_meta(run_dir)
    results = run_dir.resolve().parent.parent
    if results.name == "reference" and results.parent.name == "results":
        raise UserError(
            Problem(
                str(run_dir),
                "run_dir",
                "is a published run already (it lies in results/reference/)",
                "publish the run's own folder, results/<plan>/<run>",
            )
        )
    manifest = json.loads(read_bytes(run_dir / "run.json"))  # the fields RunMeta leaves out
    if not manifest.get("ended_at"):
        raise UserError(
            Problem(
                str(run_dir / "run.json"),
                "ended_at",
                "the run has not finished",
                "run `harness run` on its plan again to finish it",
            )
        )
    if not (run_dir / "ledger.jsonl").is_file():
        raise UserError(
            Problem(
                str(run_dir / "ledger.jsonl"),
                "ledger",
                "is missing or not a file",
                "restore the ledger from the run, or run the plan again",
            )
        )
    read = read_ledger(run_dir / "ledger.jsonl")
    state = ledger_state(manifest, read, None)
    if state is not None or read.torn is not None:
        raise UserError(
            Problem(
                str(read.path),
                "rows",
                f"the ledger is not the whole one its run wrote ({state or 'a torn last line'})",
                "restore the ledger from the run, or run the plan again",
            )
        )
    if not meta.post_hoc:
        found = check_order(
            results.parent, run_dir, meta.plan, meta.freeze_id, manifest.get("freeze_record")
        )
        _check_held_out(results.parent, meta.plan, found.commit)
    destination = results / "reference" / meta.plan / meta.run
    destination.parent.mkdir(parents=True, exist_ok=True)
    # written aside and swapped in whole: an interrupt or a full disk leaves the old copy
    with staged_folder(destination) as tmp:
        for name in PUBLISHED:
            if (run_dir / name).exists():
                shutil.copy2(run_dir / name, tmp / name, follow_symlinks=False)
        # the drawn corpus the run was scored from: its diffs outlive the next draw
        drawn = results.parent / "mutants" / meta.plan / "manifest.json"
        if drawn.is_file():
            shutil.copy2(drawn, tmp / RUN_CORPUS)
    return destination


def _check_held_out(root: Path, plan: str, freeze_commit: str | None) -> None:
    """The plan's held-out targets unseen in every ledger committed up to its freeze commit."""
    from harness.execution.plan import load_plan

    plan_path = root / "plans" / f"{plan}.yaml"
    if not plan_path.exists() or freeze_commit is None:
        return
    held_out = load_plan(plan_path).held_out
    try:
        check_held_out(root, f"plans/{plan}.yaml", held_out, freeze_commit, "its freeze commit")
    except UserError:
        # a refreeze may name the blind freeze it refroze (harness.execution.held_out)
        record_file = record_path(root, plan)
        record = record_at(root, record_file, freeze_commit)
        named = record.get("blind_as_of")
        if (
            named is None
            or blind_predecessor(root, record_file, record, held_out, freeze_commit) != named
        ):
            raise
