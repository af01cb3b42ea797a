"""Interval statistics for detection rates (DESIGN.md, Statistics). Pure functions only.

Every rate here is a binomial proportion x / n over pairs; pairs of one tool are correlated,
so intervals are widened by the Kish design effect with tools as clusters.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, NamedTuple

import numpy as np

# scipy.stats and statsmodels are imported inside the functions that use them: importing
# them costs about two seconds, which every `harness` command would otherwise pay at start.

Z95 = 1.959963984540054
"""Two-sided 95% standard normal quantile, Φ⁻¹(0.975)."""

Bounds = tuple[float, float]
Claim = Literal["A>B", "B>A", "?"]


def wilson_interval(x: float, n: float, z: float = Z95) -> Bounds:
    """Wilson score interval for a proportion p̂ = x/n, from statsmodels'
    `proportion_confint(x, n, method="wilson")` (which accepts non-integer x and n, and clips
    to [0, 1] with the ends exact at x = 0 and x = n).

    (p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n), clipped to [0, 1].
    This wrapper stays for three things statsmodels does not do: n = 0 gives the vacuous
    (0, 1) (statsmodels returns nan with divide-by-zero warnings), x outside [0, n] is an
    error (statsmodels returns a number), and the ends are plain floats, not numpy scalars.
    Reference: Wilson, E. B. (1927), JASA 22(158), 209–212; Brown, Cai & DasGupta (2001),
    Statistical Science 16(2), 101–133 (the score interval).
    """
    if n < 0 or x < 0 or x > n:
        raise ValueError(f"need 0 <= x <= n, got x={x}, n={n}")
    if n == 0:
        return (0.0, 1.0)
    from scipy.stats import norm
    from statsmodels.stats.proportion import proportion_confint

    alpha = 2.0 * float(norm.sf(z))  # the two-sided level of z (Z95: 0.05, to rounding)
    lo, hi = proportion_confint(x, n, alpha=alpha, method="wilson")
    return (float(lo), float(hi))


def icc_anova(clusters: Sequence[tuple[int, int]]) -> float:
    """One-way ANOVA intraclass correlation of a 0/1 outcome over clusters (successes, size).

    With k clusters of sizes nᵢ, N = Σnᵢ, rates (group means) pᵢ and pooled rate p̄:
    F = MSB/MSW from the group means, variances nᵢpᵢ(1−pᵢ)/(nᵢ−1) and sizes (statsmodels'
    `anova_generic`, equal variances), m₀ = (N − Σnᵢ²/N)/(k−1), ICC = (F−1)/(F+m₀−1),
    clipped to [0, 1]; equivalently (MSB−MSW)/(MSB+(m₀−1)·MSW). MSW = 0 gives 1 when the
    means differ and 0 when not; 0 when undefined (k < 2, N = k). Empty clusters are ignored.
    Reference: Donner, A. (1986), Int. Stat. Review 54(1), 67–82 (the ANOVA estimator with
    unequal cluster sizes); Ridout, Demétrio & Firth (1999), Biometrics 55(1), 137–148.
    """
    for successes, size in clusters:
        if size < 0 or successes < 0 or successes > size:
            raise ValueError(f"need 0 <= successes <= size, got ({successes}, {size})")
    cells = [(s, n) for s, n in clusters if n > 0]
    k = len(cells)
    total = sum(n for _, n in cells)
    if k < 2 or total == k:
        return 0.0
    sizes = np.array([n for _, n in cells], dtype=float)
    means = np.array([s for s, _ in cells], dtype=float) / sizes
    # The sample variance of a 0/1 cluster; a singleton adds nothing within (weight nᵢ − 1 = 0).
    variances = np.where(sizes > 1, sizes * means * (1.0 - means) / np.maximum(sizes - 1, 1), 0)
    m0 = (total - float((sizes**2).sum()) / total) / (k - 1)
    if not variances.any():  # MSW = 0: F is infinite, or undefined when the means agree too
        return 1.0 if np.ptp(means) > 0 else 0.0
    from statsmodels.stats.oneway import anova_generic

    f = float(anova_generic(means, variances, sizes, use_var="equal").statistic)
    return min(1.0, max(0.0, (f - 1.0) / (f + m0 - 1.0)))


def design_effect(mean_cluster_size: float, icc: float) -> float:
    """Kish design effect deff = 1 + (m̄ − 1)·ICC.

    Reference: Kish, L. (1965), Survey Sampling, Wiley.
    """
    return 1.0 + (mean_cluster_size - 1.0) * icc


def effective_n(n: float, deff: float) -> float:
    """Effective sample size n_eff = N / deff (Kish 1965)."""
    if deff <= 0:
        raise ValueError(f"a design effect must be positive, got {deff}")
    return n / deff


class ClusteredInterval(NamedTuple):
    lo: float
    hi: float
    n_eff: float
    deff: float
    icc: float


def clustered_wilson(x: float, clusters: Sequence[tuple[int, int]]) -> ClusteredInterval:
    """Wilson interval of p̂ = x/N widened by the design effect of `clusters` (successes, size).

    N = Σnᵢ, ICC = icc_anova(clusters), m̄ = N/k (k non-empty clusters),
    deff = 1 + (m̄−1)·ICC, n_eff = N/deff; the interval is wilson_interval(p̂·n_eff, n_eff).
    `x` may differ from the clusters' successes (e.g. the upper evidence count P + U).
    Reference: DESIGN.md, Statistics; Kish (1965).
    """
    total = sum(n for _, n in clusters)
    if x < 0 or x > total:
        raise ValueError(f"need 0 <= x <= N, got x={x}, N={total}")
    if total == 0:
        return ClusteredInterval(0.0, 1.0, 0.0, 1.0, 0.0)
    icc = icc_anova(clusters)
    k = sum(1 for _, n in clusters if n > 0)
    deff = design_effect(total / k, icc)
    n_eff = effective_n(total, deff)
    lo, hi = wilson_interval(x / total * n_eff, n_eff)
    return ClusteredInterval(lo, hi, n_eff, deff, icc)


BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20261201  # fixed: the same ledger gives the same bytes


def cluster_bootstrap(
    clusters: Sequence[tuple[int, int]],
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> Bounds | None:
    """95% percentile interval of the pooled rate Σsᵢ/Σnᵢ when whole clusters (successes,
    size) are resampled with replacement: `scipy.stats.bootstrap` over the clusters, paired,
    seeded. A sensitivity check beside `clustered_wilson`, which assumes one common ICC;
    None with fewer than two non-empty clusters (nothing to resample between).
    Reference: Davison & Hinkley (1997), Bootstrap Methods and their Application, CUP, §3.8
    (resampling clusters); Field & Welsh (2007), JRSS B 69(3), 369–390.
    """
    cells = [(s, n) for s, n in clusters if n > 0]
    if len(cells) < 2:
        return None
    from scipy.stats import bootstrap

    successes = np.array([s for s, _ in cells], dtype=float)
    sizes = np.array([n for _, n in cells], dtype=float)

    def pooled(s: np.ndarray, n: np.ndarray, axis: int = -1) -> np.ndarray:
        return s.sum(axis=axis) / n.sum(axis=axis)

    result = bootstrap(
        (successes, sizes),
        pooled,
        paired=True,
        vectorized=True,
        n_resamples=resamples,
        confidence_level=0.95,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    interval = result.confidence_interval
    return (float(interval.low), float(interval.high))


def evidence_bounds(detected: int, missed: int, undecided: int) -> Bounds:
    """Identified range of recall [P/N, (P+U)/N] with N = P + F + U: every undecided pair
    counted as missed, then as detected. No pairs gives (0, 1).
    Reference: Manski, C. F. (2003), Partial Identification of Probability Distributions,
    Springer, ch. 1 (worst-case bounds under missing outcomes); DESIGN.md, Statistics.
    """
    if min(detected, missed, undecided) < 0:
        raise ValueError("counts must be non-negative")
    total = detected + missed + undecided
    if total == 0:
        return (0.0, 1.0)
    return (detected / total, (detected + undecided) / total)


def compare_bounds(a: Bounds, b: Bounds) -> Claim:
    """ "A>B" only if A's lower end exceeds B's upper end, "B>A" the other way, else "?"."""
    if a[0] > b[1]:
        return "A>B"
    if b[0] > a[1]:
        return "B>A"
    return "?"


# --- finite populations (census and sample of a pool) --------------------------------------


def finite_population_correction(n: int, population: int) -> float:
    """FPC of a simple random sample of n from N without replacement: √((N − n)/(N − 1)),
    the factor on the standard error of a mean or proportion (1 for N = 1 or n ≤ 1 of a
    large N, 0 for a census n = N).
    Reference: Cochran, W. G. (1977), Sampling Techniques, 3rd ed., Wiley, §2.5 (eq. 2.10)
    and §3.2 (proportions).
    """
    if population < 1 or n < 0 or n > population:
        raise ValueError(f"need 0 <= n <= N and N >= 1, got n={n}, N={population}")
    if population == 1:
        return 0.0 if n == 1 else 1.0
    return math.sqrt((population - n) / (population - 1))


# --- decidability of a prediction before the run -------------------------------------------

Side = Literal["floor", "ceiling"]


class Decidability(NamedTuple):
    """What a bound on a rate can come to at n pairs with design effect deff."""

    best: float  # the interval end the bound is judged on, at the best possible outcome
    can_hold: bool
    p_held: float  # P(held) when the true rate is `assumed`
    p_failed: float
    assumed: float


def decidability(side: Side, bound: float, n: int, deff: float, assumed: float) -> Decidability:
    """The chance that a floor (or ceiling) on a rate is decided at n pairs.

    Each outcome x ∈ {0..n} is judged as harness.analysis.predictions judges one: the
    Wilson interval of x/n at n_eff = n/deff, held when it lies on the predicted side of the
    bound, failed when wholly on the other. best = the lower end at x = n (a floor) or the
    upper end at x = 0 (a ceiling); the bound can hold only if best is on its side.
    P(held) and P(failed) sum the exact binomial probabilities Bin(x; n, assumed) of the
    outcomes that give them.
    Reference: exact power of a binomial test by enumeration of outcomes, e.g. Chernick &
    Liu (2002), The American Statistician 56(2), 149–155; DESIGN.md, Statistics.
    """
    if n < 0 or deff <= 0 or not 0.0 <= assumed <= 1.0:
        raise ValueError(f"need n >= 0, deff > 0, 0 <= assumed <= 1; got {n}, {deff}, {assumed}")
    if n == 0:
        return Decidability(0.0 if side == "floor" else 1.0, False, 0.0, 0.0, assumed)
    from scipy.stats import binom
    from statsmodels.stats.proportion import proportion_confint

    n_eff = effective_n(n, deff)
    # Every outcome's interval at once (statsmodels takes arrays), as `wilson_interval` clips.
    x = np.arange(n + 1)
    los, his = proportion_confint(x / n * n_eff, n_eff, alpha=0.05, method="wilson")
    los, his = np.clip(los, 0.0, 1.0), np.clip(his, 0.0, 1.0)
    if side == "floor":
        outcomes = np.where(los >= bound, 1, np.where(his < bound, -1, 0))
    else:
        outcomes = np.where(his <= bound, 1, np.where(los > bound, -1, 0))
    judged = outcomes.tolist()
    pmf = binom.pmf(x, n, assumed)
    best_lo, best_hi = wilson_interval(n_eff if side == "floor" else 0.0, n_eff)
    best = best_lo if side == "floor" else best_hi
    return Decidability(
        best,
        bool(judged[n] == 1 if side == "floor" else judged[0] == 1),
        float(pmf[outcomes == 1].sum()),
        float(pmf[outcomes == -1].sum()),
        assumed,
    )


def n_to_decide(
    side: Side, bound: float, deff: float, assumed: float, power: float = 0.8, limit: int = 2000
) -> int | None:
    """The smallest n ≤ limit at which P(held) + P(failed) ≥ power when the true rate is
    `assumed` (same deff); None if no n up to `limit` reaches it (e.g. assumed = bound).
    A doubling search then a scan back: the decided probability is not monotone in n
    (binomial outcomes are discrete), so the scan keeps the first n that reaches it.
    """

    def decided(n: int) -> bool:
        d = decidability(side, bound, n, deff, assumed)
        return d.p_held + d.p_failed >= power

    hi = 1
    while hi <= limit and not decided(hi):
        hi *= 2
    if hi > limit:
        hi = limit
        if not decided(hi):
            return None
    lo = max(1, hi // 2)
    return next(n for n in range(lo, hi + 1) if decided(n))


# --- dominator (minimal) mutant sets ------------------------------------------------------


def minimal_mutants(kills: dict[str, frozenset[str]]) -> list[str]:
    """The dominator set of mutants by dynamic subsumption over one test set.

    `kills` maps a mutant to the tests (here: liveness corpus calls) that kill it; a mutant
    killed by none is left out (not live). m₁ subsumes m₂ when kills(m₁) ⊆ kills(m₂): every
    test that kills m₁ kills m₂. Mutants with equal kill sets are one class, represented by
    its first id in sorted order; a class is in the minimal set when no other class's kill
    set is a proper subset of its own. Returns the representatives, sorted.
    Reference: Ammann, Delamaro & Offutt (2014), "Establishing Theoretical Minimal Sets of
    Mutants", ICST, §III (dynamic subsumption); Kurtz et al. (2014), "Mutant subsumption
    graphs", ICSTW.
    """
    classes: dict[frozenset[str], str] = {}
    for mutant in sorted(kills):
        if kills[mutant]:
            classes.setdefault(kills[mutant], mutant)
    sets = list(classes)
    return sorted(classes[s] for s in sets if not any(other < s for other in sets))


class Stratum(NamedTuple):
    """One stratum of a stratified sample: successes x of n drawn from a population N."""

    x: int
    n: int
    population: int


def stratified_wilson(strata: Sequence[Stratum], z: float = Z95) -> tuple[float, Bounds]:
    """The population proportion from a stratified sample, and its Wilson interval at the
    effective size of the design.

    p_st = Σ W_h p_h with W_h = N_h/N. Variance: Σ W_h² FPC_h² p̃_h(1 − p̃_h)/n_h with
    FPC_h² = (N_h − n_h)/(N_h − 1) (`finite_population_correction`) and
    p̃_h = (x_h + 1)/(n_h + 2): the estimate's usual p_h(1 − p_h)/(n_h − 1) is
    undefined at n_h = 1 and zero whenever p_h is 0 or 1, which a draw of one or three
    pairs per operator gives almost always, and would call a mostly unsampled pool known;
    the Laplace-smoothed p̃_h keeps every sampled stratum's share of the uncertainty (an
    approximation, conservative for small n_h). A stratum drawn whole (n_h = N_h) adds none.
    The interval is the Wilson interval at n_eff = p̃(1 − p̃)/v with p̃ = Σ W_h p̃_h (Kish's
    effective size). Strata with n_h = 0 are left out (p_st is over the strata drawn). Every
    stratum drawn whole: (p_st, p_st), a census.
    Reference: Cochran (1977), Sampling Techniques, §5.3 and §5A.8 (proportions in
    stratified random sampling); Kish (1965) §2.7 (effective size); Korn & Graubard (1998),
    Survey Methodology 24(2), 193–201 (intervals at the effective size); Agresti & Coull
    (1998), The American Statistician 52(2), 119–126 (adding successes and failures).
    """
    drawn = [s for s in strata if s.n > 0]
    for s in drawn:
        if not 0 <= s.x <= s.n <= s.population:
            raise ValueError(f"need 0 <= x <= n <= N, got {s}")
    total = sum(s.population for s in drawn)
    if not drawn or total == 0:
        return (0.0, (0.0, 1.0))
    p = sum(s.population / total * s.x / s.n for s in drawn)
    if all(s.n == s.population for s in drawn):
        return (p, (p, p))
    smoothed = [(s, (s.x + 1) / (s.n + 2)) for s in drawn]
    variance = sum(
        (s.population / total) ** 2
        * finite_population_correction(s.n, s.population) ** 2
        * q
        * (1 - q)
        / s.n
        for s, q in smoothed
    )
    q = sum(s.population / total * q for s, q in smoothed)
    n_eff = q * (1 - q) / variance
    return (p, wilson_interval(p * n_eff, n_eff, z))
