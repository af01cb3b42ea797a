"""The same_as table of `same_as` predictions: per scope, the pairs both runs share and how
many changed a decision; then every changed pair of the pooled scope with its changes."""

from __future__ import annotations

from collections.abc import Sequence

from harness.analysis.predictions import PredictionKind, PredictionRow
from harness.analysis.runs import RunMeta
from harness.analysis.same_as import DECISIONS
from harness.analysis.scoring import Scope
from harness.analysis.table_model import Column, Kind, Row, Table

RUN_NOT_FOUND = "run not found"


def same_as_table(predictions: Sequence[PredictionRow], meta: RunMeta) -> Table:
    columns = (
        Column("compared run", "run", Kind.TEXT),
        Column("scope", "scope", Kind.TEXT),
        Column("shared n", "n", Kind.INT),
        Column("changed", "changed", Kind.INT),
        Column("changed pair", "pair", Kind.TEXT),
        Column("decisions changed (old→new)", "changes", Kind.TEXT),
        Column("outcome", "outcome", Kind.TEXT),
    )
    by_run: dict[str, list[PredictionRow]] = {}
    for p in predictions:
        if p.kind is PredictionKind.SAME_AS:
            by_run.setdefault(p.subject, []).append(p)
    scopes, pairs = [], []
    for run, predicted in by_run.items():
        post_hoc = predicted[0].post_hoc
        context = predicted[0].same_context
        if not context:  # the run is not there: each predicted scope stays undecided
            scopes += [
                Row(
                    (run, p.scope, None, None, RUN_NOT_FOUND, None, p.outcome.value),
                    post_hoc=post_hoc,
                )
                for p in predicted
            ]
            continue
        outcomes = {p.scope: p.outcome.value for p in predicted}
        for t in context:
            outcome = outcomes.get(t.scope, "not predicted")
            cells = (run, t.scope, t.n, len(t.changed), None, None, outcome)
            scopes.append(Row(cells, post_hoc=post_hoc))
            if t.scope == Scope.POOLED.value:
                pairs += [
                    Row(
                        (run, t.scope, None, None, c.pair_id, c.said, None),
                        post_hoc=post_hoc,
                        section=1,
                    )
                    for c in t.changed
                ]
    return Table(
        "same_as",
        "same_as: this run against a published run, decision for decision on the pairs both share",
        meta.freeze_id,
        columns,
        (*scopes, *pairs),
        "SameAs",
        notes=(
            "shared pairs: pairs of every arm (closed world, open world, controls, negative "
            "controls) with the same pair id in both ledgers, in n in both.",
            f"decisions compared: {', '.join(DECISIONS)} (ledger frame columns); none equals "
            "none, a value appearing from none is a change; timing and coverage reuse are "
            "never compared.",
            "scopes: toy, real, each benchmark of the real targets, pooled; outcome only for "
            "the scopes the plan predicted: held when some pair is shared and none changed, "
            "failed when one changed, undecided when none is shared or the run is not found.",
            "below the scopes: every changed pair of the pooled scope, by pair id.",
        ),
        run_post_hoc=meta.post_hoc,
    )
