"""The interval statistics against DESIGN.md's published figures, statsmodels, hand-worked
examples and an ANOVA computed another way."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.oneway import anova_oneway
from statsmodels.stats.proportion import proportion_confint

from harness.analysis.statistics import (
    BOOTSTRAP_RESAMPLES,
    Z95,
    cluster_bootstrap,
    clustered_wilson,
    compare_bounds,
    design_effect,
    effective_n,
    evidence_bounds,
    icc_anova,
    wilson_interval,
)

# --- Wilson -------------------------------------------------------------------------------


def test_reference_figures_from_the_published_table() -> None:
    """DESIGN.md, Statistics: 5 of 7 → 0.359; 1 of 7 with n_eff = 5 → 0.020; 25 of 25 → 0.867."""
    assert f"{wilson_interval(5, 7)[0]:.3f}" == "0.359"
    # p̂ = x/N with n_eff: successes x·n_eff/N over n_eff.
    assert f"{wilson_interval(1 * 5 / 7, 5)[0]:.3f}" == "0.020"
    assert f"{wilson_interval(25, 25)[0]:.3f}" == "0.867"
    assert wilson_interval(25, 25)[1] == 1.0


def test_z_is_the_two_sided_95_percent_normal_quantile() -> None:
    assert math.isclose(0.5 * math.erfc(-Z95 / math.sqrt(2)), 0.975, abs_tol=1e-15)


GRID = [(x, n) for n in range(1, 31) for x in range(n + 1)] + [
    (0.5, 1.5),
    (2.5, 7.3),
    (0.0, 0.4),
    (3.7, 3.7),
    (12.25, 40.8),
    (1.0, 1000.0),
]


@pytest.mark.parametrize(("x", "n"), GRID)
def test_wilson_matches_statsmodels(x: float, n: float) -> None:
    ours = wilson_interval(x, n)
    lo, hi = proportion_confint(x, n, alpha=0.05, method="wilson")
    assert ours[0] == pytest.approx(max(0.0, lo), abs=1e-9)
    assert ours[1] == pytest.approx(min(1.0, hi), abs=1e-9)


def test_wilson_edge_cases() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and 0 < hi < 1
    with pytest.raises(ValueError):
        wilson_interval(3, 2)
    with pytest.raises(ValueError):
        wilson_interval(-1, 2)


# --- ICC ----------------------------------------------------------------------------------


def test_icc_hand_computed_equal_clusters() -> None:
    # k=2, n=(4,4), N=8, p=(.25,.75), p̄=.5: SSB=.5, SSW=1.5, MSB=.5, MSW=.25, m0=4,
    # ICC = (.5-.25)/(.5+3*.25) = 0.2
    assert icc_anova([(1, 4), (3, 4)]) == pytest.approx(0.2, abs=1e-12)


def test_icc_hand_computed_unequal_clusters() -> None:
    # n=(2,3,5), x=(0,2,4), N=10, p̄=.6: SSB=14/15, SSW=22/15, MSB=7/15, MSW=22/105,
    # m0=(10-38/10)/2=3.1, ICC=(9/35)/(68/75)=135/476
    assert icc_anova([(0, 2), (2, 3), (4, 5)]) == pytest.approx(135 / 476, abs=1e-12)


def _icc_from_raw_anova(clusters: list[tuple[int, int]]) -> float:
    """The ANOVA estimator computed on the 0/1 outcomes themselves (numpy), independently of
    the rate-based sums: MSB and MSW from squared deviations of every observation."""
    groups = [np.array([1.0] * s + [0.0] * (n - s)) for s, n in clusters]
    data = np.concatenate(groups)
    grand = data.mean()
    k, total = len(groups), data.size
    msb = sum(g.size * (g.mean() - grand) ** 2 for g in groups) / (k - 1)
    msw = sum(((g - g.mean()) ** 2).sum() for g in groups) / (total - k)
    m0 = (total - sum(g.size**2 for g in groups) / total) / (k - 1)
    return float(np.clip((msb - msw) / (msb + (m0 - 1) * msw), 0, 1))


def _icc_from_statsmodels_f(clusters: list[tuple[int, int]]) -> float:
    """ICC = (F−1)/(F+m0−1) with F = MSB/MSW from statsmodels' one-way ANOVA."""
    groups = [np.array([1.0] * s + [0.0] * (n - s)) for s, n in clusters]
    f = float(anova_oneway(groups, use_var="equal").statistic)
    total = sum(n for _, n in clusters)
    m0 = (total - sum(n * n for _, n in clusters) / total) / (len(clusters) - 1)
    return float(np.clip((f - 1) / (f + m0 - 1), 0, 1))


def _random_clusters(rng: np.random.Generator, smallest: int) -> list[tuple[int, int]]:
    while True:
        sizes = rng.integers(smallest, 9, size=rng.integers(2, 9))
        rates = rng.beta(0.6, 0.6, size=sizes.size)
        successes = rng.binomial(sizes, rates)
        clusters = [(int(s), int(n)) for s, n in zip(successes, sizes, strict=True)]
        within = sum(s * (n - s) for s, n in clusters)
        if sum(sizes) > len(sizes) and within > 0:  # F is finite
            return clusters


def test_icc_matches_two_independent_computations() -> None:
    rng = np.random.default_rng(20261130)
    for _ in range(40):
        # statsmodels needs two observations per cluster (its within variance uses ddof=1).
        clusters = _random_clusters(rng, smallest=2)
        ours = icc_anova(clusters)
        assert ours == pytest.approx(_icc_from_raw_anova(clusters), abs=1e-9), clusters
        assert ours == pytest.approx(_icc_from_statsmodels_f(clusters), abs=1e-9), clusters
        with_singletons = _random_clusters(rng, smallest=1)
        expected = _icc_from_raw_anova(with_singletons)
        assert icc_anova(with_singletons) == pytest.approx(expected, abs=1e-9), with_singletons
    assert _icc_from_statsmodels_f([(0, 2), (2, 3), (4, 5)]) == pytest.approx(135 / 476)


def test_icc_undefined_or_out_of_range_cases() -> None:
    assert icc_anova([]) == 0.0
    assert icc_anova([(3, 5)]) == 0.0  # k < 2
    assert icc_anova([(1, 1), (0, 1), (1, 1)]) == 0.0  # N == k
    assert icc_anova([(0, 2), (0, 3)]) == 0.0  # MSB = MSW = 0
    assert icc_anova([(1, 2), (2, 4), (3, 6)]) == 0.0  # negative estimate, clipped
    assert icc_anova([(0, 3), (3, 3)]) == 1.0  # clusters all-or-nothing
    assert icc_anova([(1, 4), (3, 4), (0, 0)]) == pytest.approx(0.2)  # empty cluster ignored
    with pytest.raises(ValueError):
        icc_anova([(3, 2), (1, 2)])


# --- design effect and clustered interval -------------------------------------------------


def test_design_effect_and_effective_n() -> None:
    assert design_effect(5, 0.1) == pytest.approx(1.4)
    assert design_effect(1, 0.9) == 1.0  # clusters of one: no correlation to correct
    assert design_effect(4, 0.0) == 1.0
    assert effective_n(7, 1.4) == pytest.approx(5.0)
    with pytest.raises(ValueError):
        effective_n(7, 0)


def test_clustered_wilson_uses_x_over_n_with_n_eff() -> None:
    # ICC 0.2 (above), m̄ = 4 → deff = 1.6, n_eff = 8/1.6 = 5; p̂ = 4/8 → 2.5 of 5.
    lo, hi, n_eff, deff, icc = clustered_wilson(4, [(1, 4), (3, 4)])
    assert icc == pytest.approx(0.2)
    assert deff == pytest.approx(1.6)
    assert n_eff == pytest.approx(5.0)
    assert (lo, hi) == pytest.approx(wilson_interval(2.5, 5))
    assert (lo, hi) == pytest.approx(proportion_confint(2.5, 5, method="wilson"), abs=1e-9)


def test_clustered_wilson_without_correlation_is_plain_wilson() -> None:
    result = clustered_wilson(5, [(1, 1), (1, 1), (1, 1), (1, 1), (1, 1), (0, 1), (0, 1)])
    assert (result.lo, result.hi) == pytest.approx(wilson_interval(5, 7))
    assert result.n_eff == 7 and result.deff == 1.0
    assert f"{result.lo:.3f}" == "0.359"


def test_clustered_wilson_accepts_another_success_count() -> None:
    # The upper evidence count P + U with the clusters of detections.
    result = clustered_wilson(7, [(1, 4), (3, 4)])
    assert (result.lo, result.hi) == pytest.approx(wilson_interval(7 / 8 * 5, 5))
    assert clustered_wilson(0, []) == (0.0, 1.0, 0.0, 1.0, 0.0)
    with pytest.raises(ValueError):
        clustered_wilson(9, [(1, 4), (3, 4)])


def test_icc_without_within_cluster_variance() -> None:
    # MSW = 0: every cluster all-or-nothing. Means that differ are perfectly correlated
    # within clusters (ICC 1); means that agree carry no information (0).
    assert icc_anova([(0, 3), (3, 3)]) == 1.0
    assert icc_anova([(0, 3), (0, 2)]) == 0.0
    assert icc_anova([(1, 1), (0, 1), (2, 2)]) == 1.0  # singletons, MSW still 0


# --- cluster bootstrap --------------------------------------------------------------------


def _hand_cluster_bootstrap(clusters: list[tuple[int, int]], seed: int) -> tuple[float, float]:
    """Resample whole clusters with numpy alone (another stream), percentile 2.5 / 97.5."""
    rng = np.random.default_rng(seed)
    s = np.array([c[0] for c in clusters], dtype=float)
    n = np.array([c[1] for c in clusters], dtype=float)
    picks = rng.integers(0, len(clusters), size=(20000, len(clusters)))
    rates = s[picks].sum(axis=1) / n[picks].sum(axis=1)
    lo, hi = np.percentile(rates, [2.5, 97.5])
    return float(lo), float(hi)


def test_cluster_bootstrap_against_an_independent_resampling() -> None:
    clusters = [(1, 4), (3, 4), (0, 3), (5, 6), (2, 2), (4, 7)]
    ours = cluster_bootstrap(clusters)
    assert ours is not None
    hand = _hand_cluster_bootstrap(clusters, seed=7)
    # Two Monte Carlo estimates of the same quantiles: agree to sampling error.
    assert ours == pytest.approx(hand, abs=0.03)
    pooled = sum(s for s, _ in clusters) / sum(n for _, n in clusters)
    assert ours[0] < pooled < ours[1]


def test_cluster_bootstrap_is_seeded_and_needs_two_clusters() -> None:
    clusters = [(1, 4), (3, 4), (0, 3), (5, 6), (2, 2), (4, 7), (1, 5), (6, 9)]
    assert cluster_bootstrap(clusters) == cluster_bootstrap(clusters)
    assert cluster_bootstrap(clusters, seed=1) != cluster_bootstrap(clusters, seed=2)
    assert cluster_bootstrap([(2, 5)]) is None
    assert cluster_bootstrap([(2, 5), (0, 0)]) is None  # an empty cluster is no cluster
    # Every cluster at the same rate: resampling tools cannot move the pooled rate.
    assert cluster_bootstrap([(1, 2), (2, 4), (3, 6)]) == pytest.approx((0.5, 0.5))
    assert BOOTSTRAP_RESAMPLES >= 1000


# --- evidence bounds and comparison -------------------------------------------------------


def test_evidence_bounds() -> None:
    assert evidence_bounds(5, 1, 2) == (5 / 8, 7 / 8)
    assert evidence_bounds(3, 2, 0) == (0.6, 0.6)
    assert evidence_bounds(0, 0, 4) == (0.0, 1.0)
    assert evidence_bounds(0, 0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        evidence_bounds(-1, 0, 0)


def test_compare_bounds() -> None:
    assert compare_bounds((0.6, 0.9), (0.1, 0.5)) == "A>B"
    assert compare_bounds((0.1, 0.5), (0.6, 0.9)) == "B>A"
    assert compare_bounds((0.4, 0.7), (0.5, 0.9)) == "?"
    assert compare_bounds((0.5, 0.9), (0.1, 0.5)) == "?"  # touching is not separated
    assert compare_bounds((0.2, 0.8), (0.3, 0.4)) == "?"
