"""Interval statistics for detection rates (DESIGN.md, Statistics). Pure functions only.

Every rate here is a binomial proportion x / n over pairs; pairs of one tool are correlated,
so intervals are widened by the Kish design effect with tools as clusters.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, NamedTuple

Z95 = 1.959963984540054
"""Two-sided 95% standard normal quantile, Φ⁻¹(0.975)."""

Bounds = tuple[float, float]
Claim = Literal["A>B", "B>A", "?"]


def wilson_interval(x: float, n: float, z: float = Z95) -> Bounds:
    """Wilson score interval for a proportion p̂ = x/n.

    (p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n), clipped to [0, 1].
    `x` and `n` may be non-integer (effective counts); n = 0 gives (0, 1).
    Reference: Wilson, E. B. (1927), JASA 22(158), 209–212; Brown, Cai & DasGupta (2001),
    Statistical Science 16(2), 101–133 (the score interval).
    """
    if n < 0 or x < 0 or x > n:
        raise ValueError(f"need 0 <= x <= n, got x={x}, n={n}")
    if n == 0:
        return (0.0, 1.0)
    p = x / n
    z2 = z * z
    denominator = 1.0 + z2 / n
    centre = (p + z2 / (2.0 * n)) / denominator
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denominator
    # At x = 0 (x = n) the lower (upper) end is 0 (1) exactly; rounding must not move it.
    lo = 0.0 if x == 0 else max(0.0, centre - half)
    hi = 1.0 if x == n else min(1.0, centre + half)
    return (lo, hi)


def icc_anova(clusters: Sequence[tuple[int, int]]) -> float:
    """One-way ANOVA intraclass correlation of a 0/1 outcome over clusters (successes, size).

    With k clusters of sizes nᵢ, N = Σnᵢ, rates pᵢ and pooled rate p̄:
    SSB = Σnᵢ(pᵢ−p̄)², SSW = Σnᵢpᵢ(1−pᵢ), MSB = SSB/(k−1), MSW = SSW/(N−k),
    m₀ = (N − Σnᵢ²/N)/(k−1), ICC = (MSB−MSW)/(MSB+(m₀−1)·MSW), clipped to [0, 1];
    0 when undefined (k < 2, N = k, or a zero denominator). Empty clusters are ignored.
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
    pooled = sum(s for s, _ in cells) / total
    ssb = sum(n * (s / n - pooled) ** 2 for s, n in cells)
    ssw = sum(n * (s / n) * (1.0 - s / n) for s, n in cells)
    msb = ssb / (k - 1)
    msw = ssw / (total - k)
    m0 = (total - sum(n * n for _, n in cells) / total) / (k - 1)
    denominator = msb + (m0 - 1.0) * msw
    if denominator <= 0:
        return 0.0
    return min(1.0, max(0.0, (msb - msw) / denominator))


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
