"""Census and superpopulation columns, dominator recall, clause yield and the generators
kept apart (issue 29, items 2–5), on hand-made ledger rows with hand-computed answers."""

from __future__ import annotations

import pytest

from harness.analysis.census import (
    CENSUS,
    NOT_RECORDED,
    SAMPLE,
    UNKNOWN,
    StratumCount,
    dominators,
    pool_estimate,
    recall_census_table,
    strata,
)
from harness.analysis.clause_yield import clause_yield, clause_yield_table
from harness.analysis.frame import ledger_frame
from harness.analysis.runs import RunMeta
from harness.analysis.scoring import ALL, family_of, generator_of, open_world_escapes
from harness.analysis.statistics import Stratum, stratified_wilson
from harness.checker.verdicts import DefectClass
from harness.execution.draw import OperatorPool
from harness.execution.ledger import LedgerRow, NewViolation, PairStatus, Timing

DET, MIS = PairStatus.DETECTED, PairStatus.MISSED


def row(
    mutant: str,
    status: PairStatus,
    kills: list[int] | None,
    clauses: list[str] = (),
    graded: list[str] | None = None,
    tool: str = "deposit",
    operator: str = "M-PRECOND",
    arm: str = "closed_world",
) -> LedgerRow:
    return LedgerRow(
        pair_id=f"{mutant}:{tool}",
        mutant_id=mutant,
        tool=tool,
        arm=arm,
        operator=operator,
        defect_class=DefectClass.UNENFORCED_PRECONDITION if arm == "closed_world" else None,
        target="toy_domain",
        target_version="1",
        freeze_id="f",
        status=status,
        live=bool(kills),
        new_violations=[NewViolation(clause_id=c, defect_class=None) for c in clauses],
        kill_vector=kills,
        graded_clauses=graded,
        timing=Timing(seconds=0, started_at="x"),
    )


def meta(kept: int, drawn: int) -> RunMeta:
    pool = OperatorPool(
        arm="closed_world",
        kind="closed_world",
        target="toy_domain",
        operator="M-PRECOND",
        offered=kept,
        screened={},
        kept=kept,
        drawn=drawn,
    )
    return RunMeta(plan="p", run="f", freeze_id="f", pools=[pool])


# The worked example of docs/ledger.md: a {1,2}, b and d {1} (one class), e {3}, f not live.
# b subsumes a; the minimal set is {b, e}. b detected, e missed; a and d detected.
WORKED = [
    row("a", DET, [1, 2], ["pre.x"], ["pre.x", "eff.y"]),
    row("b", DET, [1], ["pre.x", "eff.y"], ["pre.x", "eff.y"]),
    row("d", DET, [1], ["pre.x"], ["pre.x", "eff.y"]),
    row("e", MIS, [3], [], ["pre.x", "eff.y", "inv.z"]),
    row("f", MIS, [], [], ["pre.x"]),
]


def test_dominator_recall_on_the_worked_example() -> None:
    found = dominators(WORKED, lambda r: r.status is DET)
    assert found is not None
    assert (found.live, found.minimal, found.hits) == (4, 2, 1)
    assert found.rate == 0.5  # raw recall is 3 of 5


def test_minimal_sets_are_per_tool() -> None:
    # The same kill vector on another tool is another corpus call: never one class.
    rows = [row("a", DET, [1]), row("b", MIS, [1], tool="withdraw")]
    found = dominators(rows, lambda r: r.status is DET)
    assert found is not None and (found.minimal, found.hits) == (2, 1)


def test_old_ledgers_say_not_recorded() -> None:
    old = [r.model_copy(update={"kill_vector": None}) for r in WORKED]
    assert dominators(old, lambda r: r.status is DET) is None
    table = recall_census_table(old, meta(5, 5))
    assert table is not None
    assert {r.cells[9] for r in table.rows} == {NOT_RECORDED}


def test_a_census_shows_evidence_bounds_and_the_superpopulation_interval() -> None:
    table = recall_census_table(WORKED, meta(5, 5))
    assert table is not None
    toy = next(r for r in table.rows if r.cells[:2] == ("toy", "M-PRECOND"))
    # n, pool N, known by, recall, pool recall, pool bounds, (superpopulation), live,
    # minimal set, minimal detected, dominator recall
    assert toy.cells[2:8] == (5, 5, CENSUS, 0.6, 0.6, (0.6, 0.6))
    assert toy.cells[9:] == ("4", 2, 1, 0.5)
    lo, hi = toy.cells[8]
    assert lo < 0.6 < hi  # the superpopulation interval keeps its width


def test_a_sample_is_weighted_by_its_strata() -> None:
    """Two arms draw M-PRECOND at different fractions: 3 of 3 from a pool of 30 on one,
    0 of 2 from a pool of 2 (a census stratum) on the other."""
    rows = [row(f"a{i}", DET, [1]) for i in range(3)] + [
        row(f"b{i}", MIS, [1], arm="other") for i in range(2)
    ]
    pools = [
        OperatorPool(
            arm=arm,
            kind="closed_world",
            target="toy_domain",
            operator="M-PRECOND",
            offered=kept,
            screened={},
            kept=kept,
            drawn=drawn,
        )
        for arm, kept, drawn in (("closed_world", 30, 3), ("other", 2, 2))
    ]
    found = strata(rows, pools, lambda r: r.status is DET, lambda r: r.status.in_denominator)
    assert found == [StratumCount(3, 3, 3, 3, 30), StratumCount(0, 2, 2, 2, 2)]
    kind, estimate = pool_estimate(found)
    assert kind == SAMPLE
    assert estimate == stratified_wilson([Stratum(3, 3, 30), Stratum(0, 2, 2)])
    assert estimate[0] == pytest.approx(30 / 32)  # not the plain 3 of 5
    assert pool_estimate([StratumCount(1, 2, 2, 2, 2)]) == (CENSUS, None)
    assert pool_estimate(None) == (UNKNOWN, None)
    assert strata(rows, pools[:1], lambda r: True, lambda r: True) is None  # a pool missing


def test_clause_yield_counts_detections_sole_detections_and_coverage() -> None:
    found = {c.clause_id: c for c in clause_yield(WORKED)}
    assert (found["pre.x"].covered, found["pre.x"].detected, found["pre.x"].only) == (5, 3, 2)
    assert (found["eff.y"].covered, found["eff.y"].detected, found["eff.y"].only) == (4, 1, 0)
    assert (found["inv.z"].covered, found["inv.z"].detected) == (1, 0)  # never detected
    table = clause_yield_table(WORKED, meta(5, 5))
    assert table is not None
    assert [r.cells[2] for r in table.rows if r.section] == ["inv.z"]
    assert any("1 clauses graded defect pairs but never detected" in n for n in table.notes)


def test_clause_yield_of_an_old_ledger_cannot_list_the_silent_clauses() -> None:
    old = [r.model_copy(update={"graded_clauses": None}) for r in WORKED]
    assert {c.covered for c in clause_yield(old)} == {None}
    table = clause_yield_table(old, meta(5, 5))
    assert table is not None and "not recorded" in table.notes[-1]


@pytest.mark.parametrize(
    ("operator", "generator"),
    [
        ("CR-core/NumberReplacer", "Cosmic Ray"),
        ("CR-core/ReplaceBinaryOperator_Add_Sub", "Cosmic Ray"),
        ("MM-string", "mutmut"),
        ("MM-number", "mutmut"),
    ],
)
def test_generator_of(operator: str, generator: str) -> None:
    assert generator_of(operator) == generator


def test_no_escape_row_but_all_pools_two_generators() -> None:
    """Item 5: every operator and family row holds one generator; only `all` mixes them."""
    rows = [
        row("c1", MIS, [1], operator="CR-core/NumberReplacer", arm="open_world"),
        row("c2", DET, [2], operator="CR-core/ReplaceBinaryOperator_Add_Sub", arm="open_world"),
        row("m1", MIS, [1], operator="MM-string", arm="open_world"),
        row("m2", MIS, [], operator="MM-number", arm="open_world"),
    ]
    operators = sorted({r.operator for r in rows})
    for e in open_world_escapes(ledger_frame(rows)):
        if e.operator == ALL:
            members = operators
        elif e.operator.endswith("/*"):
            members = [op for op in operators if family_of(op) == e.operator[:-2]]
        else:
            members = [e.operator]
        generators = {generator_of(op) for op in members}
        assert len(generators) == (2 if e.operator == ALL else 1), e.operator
        if e.operator == "MM/*":
            assert (e.escape.x, e.escape.n) == (1, 1)  # m2 is not live
