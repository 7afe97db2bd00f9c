"""Two-sample statistics for a handful of noisy trials: a rank test and a trial-count estimate.

Why the Mann-Whitney U test. Profiler timings are few (3 to 20 trials per side), skewed
(a slow outlier from a page fault or a clock ramp is common) and not normal, so a t-test's
p-value cannot be trusted. The U test only asks "do values from one side tend to be larger",
needs no distribution, and for small samples its exact null distribution is cheap to compute
(it depends only on the two sample sizes). A permutation test on the medians would need
enumeration or Monte Carlo per comparison and, with 5 trials, reaches the same resolution
(C(10, 5) = 252 arrangements) at far more cost.

Two guards keep it honest:
- exact p-values up to 50 trials per side; ties (quantised timers, counters) are scored as
  half-wins and the untied null distribution is kept, which makes p larger, never smaller
  (conservative). Beyond 50, the normal approximation with tie and continuity correction;
- `smallest_p(n1, n2)`: with 3 trials per side no arrangement can give p below 0.1, so no
  verdict may be drawn; callers check `can_reach(alpha, n1, n2)` before believing any p.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

__all__ = ["RankTest", "mann_whitney", "smallest_p", "can_reach", "min_trials_per_side",
           "median", "trials_needed", "EXACT_LIMIT", "MEDIAN_SE_FACTOR"]

EXACT_LIMIT = 50                          # trials per side up to which p is exact
MEDIAN_SE_FACTOR = math.sqrt(math.pi / 2)  # SE(median) / SE(mean) for normal data
_MAX_TRIALS_ADVISED = 1_000               # beyond this, "more trials" will not settle it


@dataclass(frozen=True)
class RankTest:
    """The outcome of a two-sided Mann-Whitney U test of `new` against `base`.

    `u` counts pairs where the new value is larger (a tie counts one half), so `u` near
    `n_base * n_new` means "new is larger", near 0 "new is smaller"."""

    u: float
    p_value: float
    exact: bool

    def __post_init__(self) -> None:
        if not 0.0 <= self.p_value <= 1.0:
            raise ValueError(f"p_value must lie in [0, 1], got {self.p_value}")


def median(values: Sequence[float]) -> float:
    """The sample median (mean of the two middle values for an even count)."""
    if not values:
        raise ValueError("median of no values")
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def mann_whitney(base: Sequence[float], new: Sequence[float]) -> RankTest:
    """Two-sided U test. Raises ValueError when a side is empty."""
    n1, n2 = len(base), len(new)
    if n1 == 0 or n2 == 0:
        raise ValueError("the U test needs at least one value per side")
    u = sum(1.0 if y > x else 0.5 if y == x else 0.0 for x in base for y in new)
    if max(n1, n2) <= EXACT_LIMIT:
        return RankTest(u, _exact_p(u, n1, n2), exact=True)
    return RankTest(u, _normal_p(u, list(base), list(new)), exact=False)


def _exact_p(u: float, n1: int, n2: int) -> float:
    # The null distribution is symmetric about n1*n2/2: take the nearer tail, doubled.
    # A half-integer U (ties) is rounded towards the centre, which can only raise p.
    low = min(u, n1 * n2 - u)
    cumulative = _u_cumulative(min(n1, n2), max(n1, n2))
    return min(1.0, 2 * cumulative[math.ceil(low)] / cumulative[-1])


@lru_cache(maxsize=256)
def _u_cumulative(n1: int, n2: int) -> tuple[int, ...]:
    """Running totals of the number of arrangements with U = 0, 1, ..., n1*n2.

    They are the coefficients of the Gaussian binomial [n1+n2 choose n1](q), built as the
    product over i of (1 - q^(n2+i)) / (1 - q^i); every partial product is itself a Gaussian
    binomial, so integer arithmetic stays exact."""
    coeffs = [1]
    for i in range(1, n1 + 1):
        grown = coeffs + [0] * (n2 + i)
        for d in range(len(grown) - 1, n2 + i - 1, -1):   # times (1 - q^(n2+i))
            grown[d] -= grown[d - (n2 + i)]
        for d in range(i, len(grown)):                    # divided by (1 - q^i)
            grown[d] += grown[d - i]
        coeffs = grown[: i * n2 + 1]
    running, total = [], 0
    for c in coeffs:
        total += c
        running.append(total)
    return tuple(running)


def _normal_p(u: float, base: list[float], new: list[float]) -> float:
    n1, n2 = len(base), len(new)
    n = n1 + n2
    counts: dict[float, int] = {}
    for v in base + new:
        counts[v] = counts.get(v, 0) + 1
    tie_term = sum(t ** 3 - t for t in counts.values()) / (n * (n - 1))
    variance = n1 * n2 / 12 * ((n + 1) - tie_term)
    if variance <= 0:
        return 1.0
    z = max(0.0, abs(u - n1 * n2 / 2) - 0.5) / math.sqrt(variance)
    return min(1.0, 2 * (1 - NormalDist().cdf(z)))


def smallest_p(n1: int, n2: int) -> float:
    """The smallest two-sided p-value the U test can give with these sample sizes."""
    if n1 < 1 or n2 < 1:
        return 1.0
    if max(n1, n2) > EXACT_LIMIT:
        return 0.0
    return min(1.0, 2 / math.comb(n1 + n2, n1))


def can_reach(alpha: float, n1: int, n2: int) -> bool:
    """Whether any outcome at all could be significant at `alpha`."""
    return n1 >= 2 and n2 >= 2 and smallest_p(n1, n2) <= alpha


def min_trials_per_side(alpha: float) -> int:
    """The fewest equal trials per side for which the U test can reach `alpha`."""
    n = 2
    while not can_reach(alpha, n, n):
        n += 1
    return n


def trials_needed(base: Sequence[float], new: Sequence[float], threshold: float,
                  alpha: float, power: float = 0.8) -> int | None:
    """About how many trials per side would likely settle a comparison, or None when more
    trials would not help (the change sits on the threshold, or nothing varies).

    The change d = log(median ratio) is judged against the band edges log(1 +/- threshold).
    A comparison is settled once its interval no longer straddles an edge: wholly inside
    the band (SAME) or wholly beyond it (FASTER or SLOWER, then also clear of 0). So the
    margin M is the distance from d to the nearer edge, and the standard sample-size formula,
    with the pooled spread s of log values and the median's efficiency factor, gives
    n = 2 * (1.2533 * s * (z[1-alpha/2] + z[power]) / M)^2."""
    if not base or not new or median(base) <= 0 or median(new) <= 0:
        return None
    logs_base = [math.log(v) for v in base if v > 0]
    logs_new = [math.log(v) for v in new if v > 0]
    floor_n = min_trials_per_side(alpha)
    if len(logs_base) < 2 or len(logs_new) < 2:
        return floor_n
    spread = _pooled_sd(logs_base, logs_new)
    d = math.log(median(new) / median(base))
    upper, lower = math.log1p(threshold), math.log1p(-threshold)
    margin = min(abs(upper - d), abs(d - lower))
    if spread == 0:
        return floor_n
    if margin <= 0:
        return None
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    needed = math.ceil(2 * (MEDIAN_SE_FACTOR * spread * z / margin) ** 2)
    return max(floor_n, needed) if needed <= _MAX_TRIALS_ADVISED else None


def _pooled_sd(a: Sequence[float], b: Sequence[float]) -> float:
    def sum_sq(xs: Sequence[float]) -> float:
        mean = sum(xs) / len(xs)
        return sum((x - mean) ** 2 for x in xs)

    return math.sqrt((sum_sq(a) + sum_sq(b)) / (len(a) + len(b) - 2))
