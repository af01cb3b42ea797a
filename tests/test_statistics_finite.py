"""Finite-population correction, decidability of a prediction and the minimal mutant set,
against hand-computed values."""

from __future__ import annotations

import pytest

from harness.analysis.statistics import (
    Stratum,
    decidability,
    finite_population_correction,
    minimal_mutants,
    n_to_decide,
    stratified_wilson,
    wilson_interval,
)


def test_fpc_textbook_values() -> None:
    # Cochran (1977) §2.5: √((N − n)/(N − 1)); 100 of 1000 → √(900/999) = 0.94916.
    assert finite_population_correction(100, 1000) == pytest.approx(0.949158, abs=1e-6)
    # Cochran's list of 3042 names, a sample of 200: √(2842/3041) = 0.96673.
    assert finite_population_correction(200, 3042) == pytest.approx(0.966727, abs=1e-6)
    assert finite_population_correction(50, 50) == 0.0
    assert finite_population_correction(1, 10**9) == pytest.approx(1.0)


def test_fpc_rejects_a_sample_larger_than_its_pool() -> None:
    with pytest.raises(ValueError):
        finite_population_correction(11, 10)


def test_a_floor_of_0_8_can_never_hold_at_12_pairs() -> None:
    """Issue 29: 12 of 12 gives a Wilson lower end of 0.758 < 0.8."""
    d = decidability("floor", 0.8, 12, 1.0, 0.95)
    assert f"{d.best:.3f}" == "0.758"
    assert not d.can_hold and d.p_held == 0.0


def test_held_and_failed_probabilities_by_hand() -> None:
    # n = 24, floor 0.8: only 24 of 24 (lower 0.862) holds; P = 0.95^24.
    d = decidability("floor", 0.8, 24, 1.0, 0.95)
    assert d.can_hold and f"{d.best:.3f}" == "0.862"
    assert d.p_held == pytest.approx(0.95**24)
    # n = 3: the upper end lies below 0.8 only at 0 and 1 of 3 (2 of 3: upper 0.939).
    d = decidability("floor", 0.8, 3, 1.0, 0.95)
    assert d.p_failed == pytest.approx(0.05**3 + 3 * 0.95 * 0.05**2)


def test_a_design_effect_lowers_the_best_outcome() -> None:
    # 24 pairs with deff 2 are judged as 12: the floor can no longer hold.
    d = decidability("floor", 0.8, 24, 2.0, 0.95)
    assert d.best == pytest.approx(wilson_interval(12, 12)[0])
    assert not d.can_hold


def test_a_ceiling_mirrors_a_floor() -> None:
    floor = decidability("floor", 0.8, 20, 1.0, 0.9)
    ceiling = decidability("ceiling", 0.2, 20, 1.0, 0.1)
    assert ceiling.best == pytest.approx(1 - floor.best)
    assert (ceiling.p_held, ceiling.p_failed) == pytest.approx((floor.p_held, floor.p_failed))


def test_n_to_decide_is_the_first_n_that_reaches_the_power() -> None:
    n = n_to_decide("floor", 0.8, 1.0, 1.0)
    assert n is not None
    # At a true recall of 1 every draw is n of n: decided once n of n's lower end is ≥ 0.8.
    assert wilson_interval(n, n)[0] >= 0.8 > wilson_interval(n - 1, n - 1)[0]
    # A true rate on the bound is never decided with 80% probability.
    assert n_to_decide("floor", 0.8, 1.0, 0.8, limit=200) is None


def test_minimal_set_worked_example() -> None:
    """docs/ledger.md, dominator recall: four live mutants of one tool over calls c1..c3.
    a is killed by {c1, c2}, b and d by {c1} (one class, represented by b), e by {c3};
    f by nothing (not live). b subsumes a ({c1} ⊂ {c1, c2}); the minimal set is {b, e}."""
    kills = {
        "a": frozenset({"c1", "c2"}),
        "b": frozenset({"c1"}),
        "d": frozenset({"c1"}),
        "e": frozenset({"c3"}),
        "f": frozenset(),
    }
    assert minimal_mutants(kills) == ["b", "e"]


def test_minimal_set_of_disjoint_mutants_is_all_of_them() -> None:
    kills = {m: frozenset({m}) for m in "xyz"}
    assert minimal_mutants(kills) == ["x", "y", "z"]
    assert minimal_mutants({}) == []


def test_stratified_wilson_by_hand() -> None:
    # Two strata, N = 100 and 300; 8 of 10 and 15 of 30 drawn. W = 0.25, 0.75;
    # p_st = 0.25·0.8 + 0.75·0.5 = 0.575. Smoothed p̃ = 9/12 = 0.75 and 16/32 = 0.5;
    # FPC² = 90/99 and 270/299: v = 0.0625·(90/99)·0.1875/10 + 0.5625·(270/299)·0.25/30
    # = 0.00106534 + 0.00423286 = 0.0052982; p̃ = 0.5625, n_eff = 0.5625·0.4375/v = 46.448.
    p, (lo, hi) = stratified_wilson([Stratum(8, 10, 100), Stratum(15, 30, 300)])
    assert p == pytest.approx(0.575)
    n_eff = 0.5625 * 0.4375 / (0.0625 * 90 / 99 * 0.1875 / 10 + 0.5625 * 270 / 299 * 0.25 / 30)
    assert n_eff == pytest.approx(46.448, abs=1e-3)
    assert (lo, hi) == pytest.approx(wilson_interval(0.575 * n_eff, n_eff))


def test_one_pair_per_stratum_still_leaves_the_pool_uncertain() -> None:
    """Ten strata of 100, one pair drawn from each, all detected: not a known pool."""
    p, (lo, hi) = stratified_wilson([Stratum(1, 1, 100)] * 10)
    assert p == pytest.approx(1.0) and hi == pytest.approx(1.0)
    # p̃ = 2/3 each, FPC² = 99/99: v = 10 · 0.01 · (2/9) = 1/45, n_eff = (2/9)·45 = 10.
    assert lo == pytest.approx(wilson_interval(10, 10)[0], abs=1e-6)
    assert lo < 0.75


def test_a_stratum_drawn_whole_adds_no_variance() -> None:
    # A census stratum fixes a quarter of the population at rate 1; the other is sampled.
    p, interval = stratified_wilson([Stratum(10, 10, 10), Stratum(15, 20, 30)])
    assert p == pytest.approx(0.25 * 1 + 0.75 * 0.75)
    alone = stratified_wilson([Stratum(15, 20, 30)])[1]
    assert interval[1] - interval[0] < alone[1] - alone[0]
    p, interval = stratified_wilson([Stratum(10, 10, 10), Stratum(3, 30, 30)])
    assert p == pytest.approx(0.325) and interval == pytest.approx((0.325, 0.325))


def test_unequal_sampling_fractions_are_weighted_not_pooled() -> None:
    """3 of 3 drawn from a stratum of 3000 and 0 of 30 from one of 30: the pooled sample
    rate 3/33 is not the population's; p_st = 3000/3030."""
    p, _ = stratified_wilson([Stratum(3, 3, 3000), Stratum(0, 30, 30)])
    assert p == pytest.approx(3000 / 3030)
