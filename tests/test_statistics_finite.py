"""Finite-population correction, decidability of a prediction and the minimal mutant set,
against hand-computed values."""

from __future__ import annotations

import pytest

from harness.analysis.statistics import (
    decidability,
    finite_population_correction,
    fpc_wilson,
    minimal_mutants,
    n_to_decide,
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


def test_fpc_wilson_is_wilson_at_the_variance_equivalent_n() -> None:
    # 12 of 16 drawn from a pool of 28: n* = 16·27/12 = 36, successes 0.75·36 = 27.
    assert fpc_wilson(12, 16, 28) == pytest.approx(wilson_interval(27, 36))
    lo, hi = fpc_wilson(12, 16, 28)
    plain = wilson_interval(12, 16)
    assert plain[0] < lo < 0.75 < hi < plain[1]  # narrower than without the correction


def test_a_census_has_no_sampling_error() -> None:
    assert fpc_wilson(7, 10, 10) == (0.7, 0.7)


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
