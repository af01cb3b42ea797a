"""The ledger as a pandas DataFrame: one row per pair, typed columns (docs/ledger.md, "The
ledger as a frame"). The rule: a column is either a ledger field as written, or a function
of one row that the scoring rule defines (its arm kind, scope, whether it counts in n, is
detected, class-matched, an escape); nothing here aggregates.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from harness.analysis.runs import RunMeta, load_run
from harness.analysis.scoring import ArmKind, Scope, arm_kind, is_escape, scope_of
from harness.checker.verdicts import DefectClass, Verdict
from harness.execution.ledger import LedgerRow, MissCause, PairStatus

# (column, dtype, meaning): the documented schema, in column order (docs/ledger.md).
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("plan", "category", "the plan the run belongs to (run.json)"),
    ("run", "category", "the run folder's name (run.json)"),
    ("freeze_id", "category", "the freeze the row was scored under"),
    ("pair_id", "string", "`<mutant_id>:<tool>`"),
    ("mutant_id", "string", "content-derived mutant id"),
    ("target", "category", "the target"),
    ("target_version", "string", "the target's version"),
    ("tool", "category", "the tool the mutant is scored against (the cluster, with target)"),
    ("arm", "category", "the arm as the plan names it"),
    ("arm_kind", "category", "closed_world, controls, negative_controls or open_world"),
    ("scope", "category", "toy (target toy_domain) or real"),
    ("operator", "category", "the operator (M-…, C-…, CR-core/…, MM-…, NC-…)"),
    ("defect_class", "category", "the class a closed-world operator instantiates"),
    ("status", "category", "the pair's status (ordered as PairStatus)"),
    ("in_n", "bool", "counts in n (every status but infra_error)"),
    ("detected", "bool", "status is detected"),
    ("undecided", "bool", "untestable, timeout, crash or compile_error"),
    ("class_matched", "boolean", "detected with the operator's own class; <NA>: no class"),
    ("live", "boolean", "differs from the original on the liveness corpus; <NA>: not judged"),
    ("escape", "bool", "live and missed"),
    ("miss_cause", "category", "for a miss: no_clause, probe_unrevealing, unreached, …"),
    ("grader_caught", "boolean", "some task's utility verdict changed; <NA>: no grader"),
    ("grader_tasks", "Int64", "how many tasks' utility verdicts changed"),
    ("grader_task_ids", "string", "those tasks' ids, comma-separated; <NA>: no grader"),
    ("tool_verdict", "category", "the checker's roll-up for the tool under the mutant"),
    ("predicted", "category", "negative controls: the verdict predicted before the first run"),
    ("new_violations", "string", "clause ids of the new VIOLATES, comma-separated"),
    ("witness", "string", "for a detection: the first new violation's one-line account"),
    ("error", "string", "what went wrong (timeout, crash, compile_error, infra_error)"),
    ("post_hoc", "bool", "the inputs differed from the freeze (--post-hoc)"),
    ("seconds", "float64", "wall time of the pair (varies on rerun)"),
    (
        "skipped_by_coverage",
        "bool",
        "scored without a worker from the original's runs (varies with --no-skip-by-coverage)",
    ),
    ("reused_runs", "int64", "runs taken from the original (varies with --no-skip-by-coverage)"),
)

_CATEGORIES: dict[str, list[str]] = {
    "arm_kind": [k.value for k in ArmKind],
    "scope": [Scope.REAL.value, Scope.TOY.value],
    "defect_class": [c.value for c in DefectClass],
    "status": [s.value for s in PairStatus],
    "miss_cause": [c.value for c in MissCause],
    "tool_verdict": [v.value for v in Verdict],
    "predicted": [v.value for v in Verdict],
}


def _record(row: LedgerRow, meta: RunMeta | None) -> dict[str, object]:
    return {
        "plan": meta.plan if meta else None,
        "run": meta.run if meta else None,
        "freeze_id": row.freeze_id,
        "pair_id": row.pair_id,
        "mutant_id": row.mutant_id,
        "target": row.target,
        "target_version": row.target_version,
        "tool": row.tool,
        "arm": row.arm,
        "arm_kind": arm_kind(row).value,
        "scope": scope_of(row).value,
        "operator": row.operator,
        "defect_class": row.defect_class.value if row.defect_class else None,
        "status": row.status.value,
        "in_n": row.status.in_denominator,
        "detected": row.status is PairStatus.DETECTED,
        "undecided": row.status.undecided,
        "class_matched": row.class_matched,
        "live": row.live,
        "escape": is_escape(row),
        "miss_cause": row.miss_cause.value if row.miss_cause else None,
        "grader_caught": row.grader_caught,
        "grader_tasks": len(row.grader_tasks) if row.grader_caught is not None else None,
        "grader_task_ids": ", ".join(row.grader_tasks) if row.grader_caught is not None else None,
        "tool_verdict": row.tool_verdict.value if row.tool_verdict else None,
        "predicted": row.predicted.value if row.predicted else None,
        "new_violations": ", ".join(v.clause_id for v in row.new_violations) or None,
        "witness": row.witness.detail if row.witness else None,
        "error": row.error,
        "post_hoc": row.post_hoc,
        "seconds": row.timing.seconds,
        "skipped_by_coverage": row.skipped_by_coverage,
        "reused_runs": row.reused_runs,
    }


def ledger_frame(rows: Iterable[LedgerRow], meta: RunMeta | None = None) -> pd.DataFrame:
    """The frame of already-loaded rows (see `load_ledger`); without `meta`, plan and run
    are <NA> (the scoring reads neither)."""
    records = [_record(row, meta) for row in rows]
    frame = pd.DataFrame.from_records(records, columns=[name for name, _, _ in COLUMNS])
    for name, dtype, _ in COLUMNS:
        if name in _CATEGORIES:
            ordered = name == "status"
            frame[name] = pd.Categorical(frame[name], _CATEGORIES[name], ordered=ordered)
        else:
            frame[name] = frame[name].astype(dtype)
    return frame


def load_ledger(run_dir: str | Path) -> pd.DataFrame:
    """One row per pair of the run at `run_dir` (a `results/<plan>/<run>/` folder), with the
    columns of `COLUMNS`. A torn last line is skipped; a bad line is a `UserError`."""
    meta, rows = load_run(Path(run_dir))
    return ledger_frame(rows, meta)


def load_ledgers(run_dirs: Sequence[str | Path]) -> pd.DataFrame:
    """Several runs stacked (tell them apart by `plan`, `run` and `freeze_id`); the category
    columns take the union of the runs' categories."""
    frames = [load_ledger(d) for d in run_dirs]
    if not frames:
        return ledger_frame([], RunMeta(plan="", run="", freeze_id=""))
    for name in ("plan", "run", "freeze_id", "target", "tool", "arm", "operator"):
        union = sorted(set().union(*(f[name].cat.categories for f in frames)))
        for f in frames:
            f[name] = f[name].cat.set_categories(union)
    return pd.concat(frames, ignore_index=True)
