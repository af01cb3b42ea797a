"""Open-world tables: escape rates per operator and family, escapes by miss cause."""

from __future__ import annotations

from collections.abc import Sequence

from harness.analysis.macros import macro_word
from harness.analysis.runs import RunMeta
from harness.analysis.scoring import (
    ALL,
    EscapeRow,
    MissCauseRow,
    escape_label,
)
from harness.analysis.table_model import (
    DEFF_NOTE,
    Column,
    Kind,
    Row,
    Table,
    op_word,
)


def _escape_key(operator: str) -> str:
    if operator.endswith("/*"):
        return macro_word(operator[:-2]) + "Family"
    return op_word(operator)


def escape_table(escapes: Sequence[EscapeRow], meta: RunMeta) -> Table:
    columns = (
        Column("operator", "operator", Kind.TEXT),
        Column("mutants", "mutants", Kind.INT, "Mutants"),
        Column("pairs", "pairs", Kind.INT, "Pairs"),
        Column("infra", "infra_error", Kind.INT, "Infra"),
        Column("live", "live", Kind.INT, "Live"),
        Column("escapes", "escapes", Kind.INT, "Escapes"),
        Column("escape rate", "escape_rate", Kind.FLOAT, ""),
        Column("95% CI (Wilson)", "escape_rate_ci", Kind.INTERVAL, "Plain"),
        Column("95% CI (deff)", "escape_rate_ci_deff", Kind.INTERVAL, ""),
        Column("n_eff", "n_eff", Kind.FLOAT, "Neff"),
    )
    operators = [r.operator for r in escapes if r.operator != ALL and "/*" not in r.operator]
    rows = tuple(
        Row(
            (
                escape_label(r, operators),
                r.counts.mutants,
                r.counts.n,
                r.counts.infra,
                r.escape.n,
                r.escape.x,
                r.escape.value,
                r.escape.plain,
                (r.escape.clustered.lo, r.escape.clustered.hi),
                r.escape.clustered.n_eff,
            ),
            _escape_key(r.operator),
            r.counts.post_hoc,
            2 if r.operator == ALL else int(r.operator.endswith("/*")),
        )
        for r in escapes
    )
    return Table(
        "open_world_escapes",
        "Open-world escapes per operator",
        meta.freeze_id,
        columns,
        rows,
        "Escape",
        (
            "pairs = pairs drawn less infra_error; live = the mutant differs from the "
            "original on the independent probe corpus; escape = live and missed.",
            "escape rate = escapes / live pairs. " + DEFF_NOTE,
            "<family>/* rows pool the family's operators; all pools every operator, and "
            "says POOLED GENERATORS when it mixes Cosmic Ray with mutmut: read the family "
            "rows for either generator.",
        ),
        run_post_hoc=meta.post_hoc,
    )


def cause_table(causes: Sequence[MissCauseRow], meta: RunMeta, post_hoc: bool) -> Table:
    columns = (
        Column("miss cause", "miss_cause", Kind.TEXT),
        Column("escapes", "escapes", Kind.INT, "Escapes"),
        Column("share of escapes", "share_of_escapes", Kind.FLOAT, "Share"),
        Column("all misses", "misses", Kind.INT, "Misses"),
    )
    rows = tuple(
        Row((r.cause, r.escapes, r.share_of_escapes, r.misses), macro_word(r.cause), post_hoc)
        for r in causes
    )
    return Table(
        "open_world_miss_causes",
        "Open-world escapes by miss cause",
        meta.freeze_id,
        columns,
        rows,
        "EscapeCause",
        (
            "all misses includes those not live (unreached: equivalent or not reached by "
            "any probe), which are not escapes.",
        ),
        run_post_hoc=meta.post_hoc,
    )
