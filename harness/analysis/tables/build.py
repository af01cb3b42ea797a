"""Every table of a run, in a fixed order (`build_tables`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from harness.analysis.census import escape_census_table, recall_census_table
from harness.analysis.clause_yield import clause_yield_table
from harness.analysis.frame import ledger_frame
from harness.analysis.predictions import (
    PredictionKind,
    PredictionRow,
    score_frame_predictions,
)
from harness.analysis.runs import RunMeta
from harness.analysis.scoring import (
    EscapeRow,
    closed_world_miss_causes,
    closed_world_recall,
    control_specificity,
    escape_causes,
    flag_precision,
    grader_arm,
    grader_tasks_by_tool,
    negative_controls,
    observation_axis_recall,
    open_world_escapes,
    per_tool,
)
from harness.analysis.table_model import (
    Table,
)
from harness.analysis.tables.closed_world import (
    axis_table,
    closed_cause_table,
    empty_operators,
    pool_table,
    recall_table,
)
from harness.analysis.tables.controls import (
    flag_precision_table,
    negative_control_table,
    specificity_table,
)
from harness.analysis.tables.grader import grader_table, grader_tasks_table
from harness.analysis.tables.open_world import cause_table, escape_table
from harness.analysis.tables.paired import paired_table
from harness.analysis.tables.per_tool import tool_table
from harness.analysis.tables.predictions import predictions_table
from harness.analysis.tables.same_as import same_as_table
from harness.execution.ledger import LedgerRow

if TYPE_CHECKING:
    import pandas as pd


def build_tables(
    rows: Sequence[LedgerRow],
    meta: RunMeta,
    frame: pd.DataFrame | None = None,
    predictions: Sequence[PredictionRow] | None = None,
    escapes: Sequence[EscapeRow] | None = None,
) -> list[Table]:
    """Every table that has rows, in a fixed order; an unfinished run's say so in their
    title and notes (the caption). `frame` (`ledger_frame(rows, meta)`), `predictions`
    (its `score_frame_predictions`, [] for a comparison checker's run) and `escapes` (its
    `open_world_escapes`) are computed here unless the caller has them already (`harness
    report` uses all three again)."""
    tables = _tables(rows, meta, frame, predictions, escapes)
    others = sorted({r.freeze_id for r in rows} - {meta.freeze_id})
    if others:  # rows that run.json does not account for: say so in every table
        note = f"rows also carry freeze ids {', '.join(others)} (run.json: {meta.freeze_id})."
        tables = [replace(t, notes=(*t.notes, note)) for t in tables]
    if (label := meta.unfinished(len(rows))) is not None:
        note = f"{label}: the run has not ended (run.json ended_at is null); not a result."
        tables = [replace(t, unfinished=label, notes=(note, *t.notes)) for t in tables]
    if meta.incomplete is not None:  # a short or altered ledger (harness.analysis.runs)
        note = f"{meta.incomplete}: the ledger is not the one its run wrote; not a result."
        tables = [
            replace(
                t,
                unfinished="; ".join(filter(None, (meta.incomplete, t.unfinished))),
                notes=(note, *t.notes),
            )
            for t in tables
        ]
    return tables


def _tables(
    rows: Sequence[LedgerRow],
    meta: RunMeta,
    frame: pd.DataFrame | None,
    predictions: Sequence[PredictionRow] | None,
    escapes: Sequence[EscapeRow] | None,
) -> list[Table]:
    if frame is None:
        frame = ledger_frame(rows, meta)  # every count below is a group-by over it
    if escapes is None:
        escapes = open_world_escapes(frame)
    tables = []
    recall = closed_world_recall(frame)
    if recall:
        tables.append(recall_table(recall, meta))
    elif empty_operators(meta, "closed_world"):  # nothing drawn at all: still say so
        tables.append(recall_table([], meta))
    if axes := observation_axis_recall(frame):
        tables.append(axis_table(axes, meta))
    if closed_causes := closed_world_miss_causes(frame):
        tables.append(closed_cause_table(closed_causes, meta))
    if specificity := control_specificity(frame):
        tables.append(specificity_table(specificity, meta))
    if flags := flag_precision(frame):
        tables.append(flag_precision_table(flags, meta))
    if controls := negative_controls(frame):
        tables.append(negative_control_table(controls, meta))
    if escapes:
        tables.append(escape_table(escapes, meta))
        if causes := escape_causes(frame):
            tables.append(cause_table(causes, meta, escapes[-1].counts.post_hoc))
    if grader := grader_arm(frame):  # none for targets without a grader (the toy domain)
        tables.append(grader_table(grader, meta))
        tables.append(grader_tasks_table(grader_tasks_by_tool(frame), meta))
    # census and superpopulation, dominator recall, clause yield (harness.analysis.census,
    # .clause_yield)
    censuses = (recall_census_table(rows, meta, recall), escape_census_table(rows, meta, escapes))
    tables += [t for t in censuses if t]
    if (clauses := clause_yield_table(rows, meta)) is not None:
        tables.append(clauses)
    if tools := per_tool(frame):
        tables.append(tool_table(tools, meta))
    if meta.pools:
        tables.append(pool_table(meta))
    # last, so `harness run` prints it last; a comparison checker's run has none to score
    if predictions is None:
        predictions = (
            []
            if meta.comparison_run
            else score_frame_predictions(frame, meta.predictions, meta.project_root, escapes)
        )
    if predictions:
        source = (
            meta.predictions_source
            if meta.predictions is not None
            else "unknown (run.json records none and no frozen plan matched the run)"
        )
        tables.append(predictions_table(predictions, meta, source))
        if any(p.paired_context for p in predictions):
            tables.append(paired_table(predictions, meta))
        if any(p.kind is PredictionKind.SAME_AS for p in predictions):
            tables.append(same_as_table(predictions, meta))
    return tables
