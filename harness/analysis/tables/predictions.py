"""The predictions table: every registered prediction of the plan, scored."""

from __future__ import annotations

from collections.abc import Sequence

from harness.analysis.macros import macro_word
from harness.analysis.predictions import (
    Outcome,
    PredictionKind,
    PredictionRow,
)
from harness.analysis.runs import RunMeta
from harness.analysis.same_as import DECISIONS
from harness.analysis.table_model import (
    Column,
    Kind,
    Row,
    Table,
)

_PREDICTION_SECTION = {kind: index for index, kind in enumerate(PredictionKind)}
# only beside a same_as row: a run without one keeps the notes it always had
_SAME_AS_NOTE = (
    "same_as: on the pairs of every arm both runs share (in n in both); held when none "
    f"changed a decision ({', '.join(DECISIONS)}), failed when one did, undecided when none "
    "is shared or the run is not found; no interval (the same_as table below).",
)


def predictions_table(predictions: Sequence[PredictionRow], meta: RunMeta, source: str) -> Table:
    """`source`: where the plan's predictions were read from (for the notes)."""
    columns = (
        Column("prediction", "prediction", Kind.TEXT),
        Column("scope", "scope", Kind.TEXT),
        Column("subject", "subject", Kind.TEXT),
        Column("predicted", "predicted", Kind.TEXT),
        Column("observed", "observed", Kind.TEXT),
        Column("n", "n", Kind.INT),
        Column("95% CI (deff)", "ci", Kind.INTERVAL),
        Column("outcome", "outcome", Kind.TEXT),
    )
    rows = tuple(
        Row(
            (
                p.kind.value,
                p.scope,
                p.subject,
                p.predicted,
                p.observed,
                p.n,
                p.interval,
                p.outcome.value,
            ),
            post_hoc=p.post_hoc,
            section=_PREDICTION_SECTION[p.kind],
        )
        for p in predictions
    )
    tally = {o: sum(1 for p in predictions if p.outcome is o) for o in Outcome}
    return Table(
        "predictions",
        "Predictions of the plan, scored",
        meta.freeze_id,
        columns,
        rows,
        "Predictions",
        (
            f"plan predictions: {source}; negative-control verdicts: the ledger rows.",
            "95% CI (deff): Wilson 95% interval with the Kish design effect over tools, as "
            "in the recall, escape and flag-precision tables; recall = detected / n "
            "(undecided pairs count as not detected); precision = correct flags / flags.",
            "held: the whole interval lies on the predicted side (floor f: lower end ≥ f; "
            "ceiling c: upper end ≤ c); failed: it lies wholly on the other side (floor: "
            "upper end < f; ceiling: lower end > c); undecided: it straddles the bound, or "
            "there are no pairs.",
            "negative control: held when the observed tool verdict is the predicted one, "
            "failed when it is another verdict, undecided when there is no verdict to test "
            "(no verdict, or UNTESTABLE against a predicted CONFORMS / VIOLATES).",
            "better_than: on the closed-world pairs both runs share; held when the support "
            "rule on evidence bounds and McNemar's exact test (p < 0.05) both say new>old, "
            "failed when the new upper evidence bound is at most the old lower one or the "
            "test says old>new, undecided otherwise (the paired table below).",
            *(_SAME_AS_NOTE if any(p.kind is PredictionKind.SAME_AS for p in predictions) else ()),
            f"{tally[Outcome.HELD]} held, {tally[Outcome.FAILED]} failed, "
            f"{tally[Outcome.UNDECIDED]} undecided of {len(predictions)}.",
        ),
        extra_macros=(
            ("N", len(predictions)),
            *((macro_word(o.value), tally[o]) for o in Outcome),
        ),
        run_post_hoc=meta.post_hoc,
    )
