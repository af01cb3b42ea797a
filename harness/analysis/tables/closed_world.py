"""Closed-world tables: recall per operator and scope, per observation axis, miss causes, and
the pool per operator before and after screening."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from harness.analysis.macros import macro_word
from harness.analysis.runs import RunMeta
from harness.analysis.scoring import (
    UNKNOWN_CAUSE,
    CauseCountRow,
    RecallRow,
    Scope,
)
from harness.analysis.table_model import (
    BOOTSTRAP_NOTE,
    DEFF_NOTE,
    N_NOTE,
    SCOPE_WORD,
    Cell,
    Column,
    Kind,
    Row,
    Table,
    op_word,
)
from harness.execution.ledger import MissCause

NO_CANDIDATES = "no candidates"


def empty_operators(meta: RunMeta, kind: str) -> list[tuple[str, str]]:
    """(operator, "arm: reason") for each operator of an arm of `kind` with nothing drawn."""
    return [
        (p.operator, f"{p.arm}: {p.empty_reason or 'nothing drawn'}")
        for p in meta.pools
        if p.kind == kind and p.drawn == 0
    ]


def recall_table(recall: Sequence[RecallRow], meta: RunMeta) -> Table:
    table = _recall_rows_table(
        recall,
        meta,
        "closed_world_recall",
        "Closed-world recall per operator",
        "operator",
        "Recall",
    )
    return with_empty_rows(table, meta, "closed_world")


def with_empty_rows(table: Table, meta: RunMeta, kind: str) -> Table:
    """An operator of the plan that drew nothing keeps its row: "no candidates", n = 0, and
    a note with its reason, never a missing row."""
    shown = {row.cells[1] for row in table.rows}
    empty = [(op, why) for op, why in empty_operators(meta, kind) if op not in shown]
    if not empty:
        return table
    blank: tuple[Cell, ...] = (None,) * (len(table.columns) - 3)
    rows = [
        Row((Scope.POOLED.value, f"{op} ({NO_CANDIDATES})", 0, *blank), section=99)
        for op in dict.fromkeys(op for op, _ in empty)
    ]
    notes = [f"{op}: {NO_CANDIDATES} ({why})." for op, why in empty]
    return replace(table, rows=(*table.rows, *rows), notes=(*table.notes, *notes))


def pool_table(meta: RunMeta) -> Table:
    """Per arm and operator: the pool before and after each screen, and what was drawn."""
    from harness.mutation.screen import SCREENS

    columns = (
        Column("arm", "arm", Kind.TEXT),
        Column("operator", "operator", Kind.TEXT),
        Column("offered", "offered", Kind.INT, "Offered"),
        *(Column(s.value, s.value, Kind.INT) for s in SCREENS),
        Column("kept", "kept", Kind.INT, "Kept"),
        Column("drawn", "drawn", Kind.INT, "Drawn"),
        Column("note", "note", Kind.TEXT, width="5cm"),
    )
    rows = tuple(
        Row(
            (
                p.arm,
                p.operator,
                p.offered,
                *(p.screened.get(s.value, 0) for s in SCREENS),
                p.kept,
                p.drawn,
                f"{NO_CANDIDATES}: {p.empty_reason}" if p.empty_reason else "",
            ),
            macro_word(p.arm) + macro_word(p.operator.replace("/", "-")),
        )
        for p in meta.pools
    )
    return Table(
        "pool_screening",
        f"Pool per operator before and after screening (rule {meta.screening_rule})",
        meta.freeze_id,
        columns,
        rows,
        "Pool",
        (
            "offered = candidate pairs enumerated; each screen column = pairs it removed "
            "(compile_error: does not compile; definition_error: fails where the function is "
            "defined; equivalent: bytecode-identical to the original; duplicate: same "
            "function as an earlier candidate of the site); kept = left to draw.",
        ),
        run_post_hoc=meta.post_hoc,
    )


def axis_table(recall: Sequence[RecallRow], meta: RunMeta) -> Table:
    """Recall on the observation-clause operators, one row per axis (validity, integrity)."""
    table = _recall_rows_table(
        recall,
        meta,
        "closed_world_axes",
        "Closed-world recall per observation axis",
        "axis",
        "AxisRecall",
    )
    note = (
        "axis = the defect class the operator instantiates: validity_break (an artifact used "
        "outside its window on the environment's clock) or integrity_break (altered bytes "
        "accepted); class-matched counts detections of that class."
    )
    return replace(table, notes=(*table.notes[:1], note, *table.notes[1:]))


def _recall_rows_table(
    recall: Sequence[RecallRow],
    meta: RunMeta,
    name: str,
    title: str,
    label: str,
    macro_prefix: str,
) -> Table:
    columns = (
        Column("scope", "scope", Kind.TEXT),
        Column(label, label, Kind.TEXT),
        Column("n", "n", Kind.INT, "N"),
        Column("n_eff", "n_eff", Kind.FLOAT, "Neff"),
        Column("detected", "detected", Kind.INT, "Detected"),
        Column("missed", "missed", Kind.INT, "Missed"),
        Column("untestable", "untestable", Kind.INT, "Untestable"),
        Column("error", "error", Kind.INT, "Error"),
        Column("infra", "infra_error", Kind.INT, "Infra"),
        Column("recall", "recall", Kind.FLOAT, ""),
        Column("recall 95% CI (deff)", "recall_ci", Kind.INTERVAL, ""),
        Column(
            "sensitivity: recall 95% CI (cluster bootstrap)",
            "recall_ci_bootstrap",
            Kind.INTERVAL,
            "Bootstrap",
        ),
        Column("evidence bounds", "evidence", Kind.INTERVAL, "Evidence"),
        Column("P/(P+F)", "counted_only", Kind.FLOAT, "CountedOnly"),
        Column("U/N", "unknown_share", Kind.FLOAT, "UnknownShare"),
        Column("class-matched recall", "class_matched_recall", Kind.FLOAT, "ClassMatched"),
        Column("class-matched 95% CI (deff)", "class_matched_ci", Kind.INTERVAL, "ClassMatched"),
    )
    rows = []
    for r in recall:
        c = r.counts
        rows.append(
            Row(
                (
                    r.scope.value,
                    r.operator,
                    c.n,
                    r.recall.clustered.n_eff,
                    c.detected,
                    c.missed,
                    c.untestable,
                    c.error,
                    c.infra,
                    r.recall.value,
                    (r.recall.clustered.lo, r.recall.clustered.hi),
                    r.recall.bootstrap,
                    c.evidence,
                    c.counted_only,
                    c.unknown_share,
                    r.class_matched.value,
                    (r.class_matched.clustered.lo, r.class_matched.clustered.hi),
                ),
                SCOPE_WORD[r.scope] + op_word(r.operator),
                c.post_hoc,
                list(Scope).index(r.scope),
            )
        )
    return Table(
        name,
        title,
        meta.freeze_id,
        columns,
        tuple(rows),
        macro_prefix,
        (
            N_NOTE,
            "error = timeout + crash + compile_error; recall = detected / n (any class); "
            "class-matched counts only detections of the operator's own defect class.",
            DEFF_NOTE,
            BOOTSTRAP_NOTE,
            "Evidence bounds [P/n, (P+U)/n]: P detected, U undecided (untestable + error); "
            "beside them the counted-only rate P/(P+F) (F missed) and the Unknown share U/n.",
            "Scope toy = target toy_domain, real = every other target, pooled = both.",
        ),
        run_post_hoc=meta.post_hoc,
    )


def closed_cause_table(causes: Sequence[CauseCountRow], meta: RunMeta) -> Table:
    names = [c.value for c in MissCause]
    if any(r.of(UNKNOWN_CAUSE) for r in causes):
        names.append(UNKNOWN_CAUSE)
    columns = (
        Column("scope", "scope", Kind.TEXT),
        Column("operator", "operator", Kind.TEXT),
        Column("missed", "missed", Kind.INT, "Missed"),
        *(Column(name, name, Kind.INT, macro_word(name)) for name in names),
    )
    rows = tuple(
        Row(
            (r.scope.value, r.operator, r.misses, *(r.of(name) for name in names)),
            SCOPE_WORD[r.scope] + op_word(r.operator),
            r.post_hoc,
            list(Scope).index(r.scope),
        )
        for r in causes
    )
    return Table(
        "closed_world_miss_causes",
        "Closed-world misses by cause per operator",
        meta.freeze_id,
        columns,
        rows,
        "MissCause",
        (
            "missed = pairs the checker ran on and found nothing new in; each has one cause.",
            "no_clause: live, and no clause constrains what the mutant changed (no predicate "
            "reads the changed path in the post-state; no frame clause has it in its scope "
            "outside its writes); probe_unrevealing: live and constrained, but no checker "
            "probe revealed it; unreached: not live on the independent corpus; "
            "checker_crash: the checker failed on the mutant.",
            "Scope toy = target toy_domain, real = every other target, pooled = both.",
        ),
        run_post_hoc=meta.post_hoc,
    )
