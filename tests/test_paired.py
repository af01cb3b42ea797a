"""`better_than` predictions: the paired table on shared pairs, the support rule beside it,
McNemar's exact test, and the held / failed / undecided rule, against hand-computed values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.analysis.paired import (
    PairedTable,
    better_than_outcome,
    mcnemar_exact,
    paired_tables,
)
from harness.analysis.predictions import Outcome, PredictionKind, score_predictions
from harness.execution.ledger import LedgerRow, PairStatus, Timing
from harness.execution.plan import BetterThan, Predictions


def _row(pair: str, status: PairStatus, target: str = "toy_domain", op: str = "M-IGNARG"):
    return LedgerRow(
        pair_id=pair,
        mutant_id=pair,
        tool="t",
        arm="closed_world",
        operator=op,
        defect_class=None,
        target=target,
        target_version="1",
        freeze_id="f",
        status=status,
        timing=Timing(seconds=0.1, started_at="2026-01-01T00:00:00+00:00"),
    )


D, M, U, INFRA = (
    PairStatus.DETECTED,
    PairStatus.MISSED,
    PairStatus.UNTESTABLE,
    PairStatus.INFRA_ERROR,
)


def test_mcnemar_exact_matches_the_binomial_by_hand() -> None:
    # 5 vs 1 discordant: 2 * P(X <= 1 | 6, 1/2) = 2 * 7/64
    assert mcnemar_exact(5, 1) == pytest.approx(14 / 64)
    assert mcnemar_exact(1, 5) == pytest.approx(14 / 64)
    assert mcnemar_exact(10, 0) == pytest.approx(2 / 1024)
    assert mcnemar_exact(3, 3) == pytest.approx(1.0)
    assert mcnemar_exact(0, 0) is None


def test_the_paired_table_counts_shared_pairs_only_per_scope() -> None:
    new = [
        _row("a", D),
        _row("b", D),
        _row("c", D),
        _row("d", M),
        _row("e", U),
        _row("only-in-new", D),
        _row("infra", INFRA),
        _row("r1", D, "tau2-airline"),
        _row("r2", M, "tau2-airline"),
        _row("w1", D, "agentdojo-workspace"),
        _row("ctl", D, op="C-REORDER"),  # a control arm: not a closed-world pair
    ]
    old = [
        _row("a", D),
        _row("b", M),
        _row("c", M),
        _row("d", D),
        _row("e", M),
        _row("infra", D),
        _row("r1", M, "tau2-airline"),
        _row("r2", M, "tau2-airline"),
        _row("w1", D, "agentdojo-workspace"),
        _row("ctl", M, op="C-REORDER"),
    ]
    for row in (*new, *old):
        if row.operator.startswith("C-"):
            object.__setattr__(row, "arm", "controls")
    found = paired_tables(new, old)
    # toy, real, each real benchmark (sorted), pooled
    assert [t.scope for t in found] == ["toy", "real", "agentdojo", "tau2", "pooled"]
    tables = {t.scope: t for t in found}
    toy, real, pooled = tables["toy"], tables["real"], tables["pooled"]
    assert (toy.both, toy.only_new, toy.only_old, toy.neither) == (1, 2, 1, 1)
    assert (toy.undecided_new, toy.undecided_old) == (1, 0)
    assert (real.both, real.only_new, real.only_old, real.neither) == (1, 1, 0, 1)
    tau2, agentdojo = tables["tau2"], tables["agentdojo"]
    assert (tau2.both, tau2.only_new, tau2.only_old, tau2.neither) == (0, 1, 0, 1)
    assert (agentdojo.both, agentdojo.n) == (1, 1)
    assert pooled.n == toy.n + real.n == 8
    # toy: new [3/5, 4/5], old [2/5, 2/5]: new's lower end 0.6 > old's upper 0.4
    assert toy.evidence_new == (0.6, 0.8) and toy.evidence_old == (0.4, 0.4)
    assert toy.support == "new>old"
    assert toy.mcnemar_p == pytest.approx(1.0)  # 2 vs 1: chance explains it
    assert toy.paired_claim == "?"
    assert better_than_outcome(toy) == "undecided"


@pytest.mark.parametrize(
    ("table", "outcome"),
    [
        # 12 only new, 0 only old, 8 neither: [12/20, 12/20] vs [0, 0]; p = 2/4096
        (PairedTable("real", 0, 12, 0, 8, 0, 0), "held"),
        # equal rates: new's upper 0.5 does not exceed old's lower 0.5
        (PairedTable("real", 5, 0, 0, 5, 0, 0), "failed"),
        # old better by the test: 0 only new, 10 only old
        (PairedTable("real", 0, 0, 10, 10, 0, 0), "failed"),
        # support says new>old, the test cannot (3 vs 0: p = 0.25)
        (PairedTable("real", 10, 3, 0, 7, 0, 0), "undecided"),
        # the test says new>old, the undecided pairs could explain it away
        (PairedTable("real", 0, 12, 0, 8, 0, 12), "undecided"),
        (None, "undecided"),
    ],
)
def test_the_outcome_rule(table, outcome) -> None:
    assert better_than_outcome(table) == outcome


def test_a_better_than_prediction_is_scored_from_the_published_ledger(tmp_path: Path) -> None:
    published = tmp_path / "results" / "reference" / "old" / "abc"
    published.mkdir(parents=True)
    old = [_row(f"p{i}", M) for i in range(12)] + [_row(f"q{i}", M) for i in range(8)]
    new = [_row(f"p{i}", D) for i in range(12)] + [_row(f"q{i}", M) for i in range(8)]
    (published / "ledger.jsonl").write_text(
        "".join(json.dumps(r.model_dump(mode="json")) + "\n" for r in old)
    )
    spec = BetterThan(run="results/reference/old/abc", scopes=["toy", "real"])
    scored = score_predictions(new, Predictions(better_than=[spec]), tmp_path)
    rows = [p for p in scored if p.kind is PredictionKind.BETTER_THAN]
    assert [(p.scope, p.n, p.outcome) for p in rows] == [
        ("toy", 20, Outcome.HELD),
        ("real", 0, Outcome.UNDECIDED),  # no real pairs shared
    ]
    assert rows[0].paired is not None and rows[0].paired.only_new == 12
    assert "p=0.0005" in (rows[0].observed or "")
    missing = score_predictions(new, Predictions(better_than=[spec]), tmp_path / "elsewhere")
    assert [p.observed for p in missing if p.kind is PredictionKind.BETTER_THAN] == [
        "run not found",
        "run not found",
    ]


def test_the_paired_table_renders_every_count_and_claim(tmp_path: Path) -> None:
    from harness.analysis.render import render_markdown
    from harness.analysis.runs import RunMeta
    from harness.analysis.tables.paired import paired_table

    published = tmp_path / "old"
    published.mkdir()
    old = [_row(f"p{i}", M) for i in range(12)]
    (published / "ledger.jsonl").write_text(
        "".join(json.dumps(r.model_dump(mode="json")) + "\n" for r in old)
    )
    new = [_row(f"p{i}", D) for i in range(12)]
    spec = BetterThan(run="old", scopes=["pooled"])
    scored = score_predictions(new, Predictions(better_than=[spec]), tmp_path)
    text = render_markdown(paired_table(scored, RunMeta(plan="p", run="r", freeze_id="f")))
    assert "McNemar exact p" in text and "paired sampling-robust claim" in text
    lines = [row for row in text.splitlines() if row.startswith("| old")]
    toy, pooled = ([c.strip() for c in line.strip("|").split("|")] for line in lines)
    # every scope is shown; only the predicted one has an outcome
    assert toy[1] == "toy" and toy[12] == "not predicted"
    assert pooled[1:7] == ["pooled", "12", "0", "12", "0", "0"]
    assert pooled[9] == "new>old" and pooled[11] == "new>old" and pooled[12] == "held"


def test_a_plan_naming_a_run_that_is_not_there_is_refused(tmp_path: Path) -> None:
    from harness.errors import UserError
    from harness.execution.plan import load_plan

    (tmp_path / "plans").mkdir()
    plan = tmp_path / "plans" / "p.yaml"
    text = """
schema_version: 1
name: p
description: d
seed: 1
arms:
  - {name: a, kind: closed_world, target: toy_domain, operators: [M-IGNARG], draw_per_operator: 1}
predictions:
  better_than:
    - run: results/reference/old/abc
"""
    plan.write_text(text)
    with pytest.raises(UserError, match=r"better_than\[0\]\.run"):
        load_plan(plan)
    published = tmp_path / "results" / "reference" / "old" / "abc"
    published.mkdir(parents=True)
    (published / "ledger.jsonl").write_text("")
    assert load_plan(plan).predictions.better_than[0].scopes == ["toy", "real", "pooled"]


def test_open_world_pairs_are_paired_only_when_asked() -> None:
    from harness.analysis.frame import ledger_frame
    from harness.analysis.paired import paired_frames

    def rows(statuses: str) -> list[LedgerRow]:
        out = [_row("closed", D)]
        for i, s in enumerate(statuses):
            row = _row(f"o{i}", D if s == "D" else M, target="tau2-retail", op="CR-core/AddNot")
            out.append(row.model_copy(update={"arm": "open_world"}))
        return out

    new, old = ledger_frame(rows("DDMM")), ledger_frame(rows("DMDM"))
    closed = paired_frames(new, old)
    assert [(t.scope, t.n) for t in closed] == [("toy", 1), ("pooled", 1)]
    tables = {t.scope: t for t in paired_frames(new, old, arm_kind="open_world")}
    assert sorted(tables) == ["pooled", "real", "tau2"]
    t = tables["tau2"]
    assert (t.both, t.only_new, t.only_old, t.neither) == (1, 1, 1, 1)
    assert t.mcnemar_p == pytest.approx(1.0)
