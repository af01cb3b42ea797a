"""Control tables: specificity on semantics-preserving controls, flag precision, negative
controls."""

from __future__ import annotations

from collections.abc import Sequence

from harness.analysis.macros import macro_word
from harness.analysis.runs import RunMeta
from harness.analysis.scoring import (
    ALL,
    FlagPrecisionRow,
    NegativeControlRow,
    SpecificityRow,
)
from harness.analysis.table_model import (
    DEFF_NOTE,
    N_NOTE,
    SCOPE_WORD,
    Column,
    Kind,
    Row,
    Table,
)


def _specificity_key(arm: str, operator: str) -> str:
    if arm == ALL:
        return "All"
    return macro_word(arm) + ("" if operator == ALL else macro_word(operator))


def specificity_table(specificity: Sequence[SpecificityRow], meta: RunMeta) -> Table:
    columns = (
        Column("arm", "arm", Kind.TEXT),
        Column("control", "control", Kind.TEXT),
        Column("n", "n", Kind.INT, "N"),
        Column("not flagged", "not_flagged", Kind.INT, "NotFlagged"),
        Column("flagged (FP)", "flagged", Kind.INT, "Flagged"),
        Column("undecided", "undecided", Kind.INT, "Undecided"),
        Column("infra", "infra_error", Kind.INT, "Infra"),
        Column("specificity", "specificity", Kind.FLOAT, ""),
        Column("specificity 95% CI", "specificity_ci", Kind.INTERVAL, ""),
        Column("FP rate", "false_positive_rate", Kind.FLOAT, "FPRate"),
        Column("FP rate 95% CI", "false_positive_rate_ci", Kind.INTERVAL, "FPRate"),
    )
    sections = {"controls": 0, "negative_controls": 1, ALL: 2}
    rows = tuple(
        Row(
            (
                r.arm,
                r.operator,
                r.counts.n,
                r.specificity.x,
                r.false_positive.x,
                r.counts.undecided,
                r.counts.infra,
                r.specificity.value,
                r.specificity.plain,
                r.false_positive.value,
                r.false_positive.plain,
            ),
            _specificity_key(r.arm, r.operator),
            r.counts.post_hoc,
            sections.get(r.arm, 3),
        )
        for r in specificity
    )
    return Table(
        "control_specificity",
        "Specificity on controls: a flagged control is a false positive",
        meta.freeze_id,
        columns,
        rows,
        "Specificity",
        (
            N_NOTE,
            "specificity = not flagged / n (the complement of the false-positive rate on "
            "controls); FP rate = flagged / n; both with the plain Wilson 95% interval. "
            "undecided controls (untestable, timeout, crash, compile_error) count as not "
            "flagged. Precision over flags is in flag_precision.",
        ),
        run_post_hoc=meta.post_hoc,
    )


def flag_precision_table(flags: Sequence[FlagPrecisionRow], meta: RunMeta) -> Table:
    columns = (
        Column("scope", "scope", Kind.TEXT),
        Column("flags", "flags", Kind.INT, "Flags"),
        Column("on mutants", "on_mutants", Kind.INT, "OnMutants"),
        Column("on controls", "on_controls", Kind.INT, "OnControls"),
        Column("on negative controls", "on_negative_controls", Kind.INT, "OnNegativeControls"),
        Column("correct", "correct", Kind.INT, "Correct"),
        Column("false", "false_flags", Kind.INT, "False"),
        Column("precision", "precision", Kind.FLOAT, ""),
        Column("95% CI (Wilson)", "precision_ci", Kind.INTERVAL, "Plain"),
        Column("95% CI (deff)", "precision_ci_deff", Kind.INTERVAL, ""),
    )
    rows = tuple(
        Row(
            (
                r.scope.value,
                r.flags,
                r.on_mutants,
                r.on_controls,
                r.on_negative_controls,
                r.precision.x,
                r.false_flags,
                r.precision.value,
                r.precision.plain,
                (r.precision.clustered.lo, r.precision.clustered.hi),
            ),
            SCOPE_WORD[r.scope] + "All",
            r.post_hoc,
        )
        for r in flags
    )
    return Table(
        "flag_precision",
        "Flag precision: correct flags among every pair the checker flagged",
        meta.freeze_id,
        columns,
        rows,
        "FlagPrecision",
        (
            "flags = pairs detected (a new VIOLATES) over every arm: closed- and open-world "
            "mutants, controls and negative controls.",
            "correct = a flag on a mutant, or on a negative control predicted to VIOLATE; a "
            "flag on a control or on a negative control predicted to CONFORM is false.",
            "precision = correct / flags with the plain Wilson 95% interval and the one "
            "widened by the design effect over tools. " + DEFF_NOTE,
        ),
        run_post_hoc=meta.post_hoc,
    )


def negative_control_table(controls: Sequence[NegativeControlRow], meta: RunMeta) -> Table:
    columns = (
        Column("control", "control", Kind.TEXT),
        Column("tool", "tool", Kind.TEXT),
        Column("predicted", "predicted", Kind.TEXT),
        Column("observed", "observed", Kind.TEXT),
        Column("status", "status", Kind.TEXT),
        Column("outcome", "outcome", Kind.TEXT),
        Column("why the prediction failed", "detail", Kind.TEXT, width="6cm"),
    )
    rows = tuple(
        Row(
            (
                r.control,
                r.tool,
                r.predicted.value if r.predicted else None,
                r.observed.value if r.observed else None,
                r.status.value,
                "hit" if r.hit else "miss",
                r.detail or None,
            ),
            post_hoc=r.post_hoc,
        )
        for r in controls
    )
    hits = sum(1 for r in controls if r.hit)
    return Table(
        "negative_controls",
        "Negative controls: predicted and observed tool verdicts",
        meta.freeze_id,
        columns,
        rows,
        "NegativeControl",
        (
            "predicted = the verdict written in the plan before the first run; observed = "
            "the checker's tool verdict with the control applied; hit = the two agree.",
        ),
        extra_macros=(("N", len(controls)), ("Hits", hits), ("Misses", len(controls) - hits)),
        run_post_hoc=meta.post_hoc,
    )
