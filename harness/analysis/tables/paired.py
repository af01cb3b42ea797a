"""The paired table of `better_than` predictions: shared pairs, new run against old."""

from __future__ import annotations

from collections.abc import Sequence

from harness.analysis.paired import ALPHA
from harness.analysis.predictions import PredictionRow
from harness.analysis.runs import RunMeta
from harness.analysis.table_model import Column, Kind, Row, Table


def paired_table(predictions: Sequence[PredictionRow], meta: RunMeta) -> Table:
    columns = (
        Column("compared run", "run", Kind.TEXT),
        Column("scope", "scope", Kind.TEXT),
        Column("shared n", "n", Kind.INT),
        Column("both", "both", Kind.INT),
        Column("only new", "only_new", Kind.INT),
        Column("only old", "only_old", Kind.INT),
        Column("neither", "neither", Kind.INT),
        Column("new evidence", "new_evidence", Kind.INTERVAL),
        Column("old evidence", "old_evidence", Kind.INTERVAL),
        Column("support claim (evidence bounds)", "support_claim", Kind.TEXT),
        Column("McNemar exact p", "mcnemar_p", Kind.FLOAT),
        Column("paired sampling-robust claim (McNemar)", "paired_claim", Kind.TEXT),
        Column("outcome", "outcome", Kind.TEXT),
    )
    rows = []
    by_run: dict[str, list[PredictionRow]] = {}
    for p in predictions:
        if p.paired is not None or p.paired_context:
            by_run.setdefault(p.subject, []).append(p)
    for run, predicted in by_run.items():
        outcomes = {p.scope: p for p in predicted}
        for t in predicted[0].paired_context:
            p = outcomes.get(t.scope)
            rows.append(
                Row(
                    (
                        run,
                        t.scope,
                        t.n,
                        t.both,
                        t.only_new,
                        t.only_old,
                        t.neither,
                        t.evidence_new,
                        t.evidence_old,
                        t.support,
                        t.mcnemar_p,
                        t.paired_claim,
                        p.outcome.value if p is not None else "not predicted",
                    ),
                    post_hoc=predicted[0].post_hoc,
                )
            )
    return Table(
        "paired",
        "better_than: this run against a published run, on the pairs both share",
        meta.freeze_id,
        columns,
        tuple(rows),
        "Paired",
        notes=(
            "shared pairs: closed-world pairs with the same pair id in both ledgers, in n in "
            "both; both / only new / only old / neither: detected by which run.",
            "evidence: [P/N, (P+U)/N] over the shared pairs (U: undecided). Support claim: "
            "new>old only if the new run's lower end exceeds the old run's upper end.",
            "scopes: toy, real, each benchmark of the real targets, pooled; outcome only for "
            "the scopes the plan predicted.",
            "McNemar exact p: two-sided binomial test of only new against only new + only old "
            f"at 1/2 (statsmodels); the paired sampling-robust claim at p < {ALPHA}, with its "
            "direction.",
        ),
        run_post_hoc=meta.post_hoc,
    )
