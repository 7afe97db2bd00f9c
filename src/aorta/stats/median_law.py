"""The exact bootstrap distribution of a sample median, in closed form (docs/compare.md).

Resampling n values x_(1) <= ... <= x_(n) with replacement (by position, so ties are told
apart), C_k ~ Binomial(n, k/n) draws land at or below position k. The resample's median M* is
one sorted value (odd n) or the mean of two (even n), its law depending on n alone:
- odd n, m = (n + 1) / 2: P(M* <= x_(k)) = P(C_k >= m) (Efron 1979, Ann. Statist. 7(1),
  section 3; Maritz & Jarrett 1978, JASA 73(361):194-196);
- even n, m = n / 2, M* = (X*_(m) + X*_(m+1)) / 2 needs the joint law of the two middle order
  statistics (Hutson & Ernst 2000, JRSS B 62(1):89-94). Counting the n^n resamples: choose
  the m low draws (C(n, m) ways), all at or below position i with one at i, and n - m high
  draws at or above position j with one at j:
    i < j:  C(n, m) ((i/n)^m - ((i-1)/n)^m) (((n-j+1)/n)^(n-m) - ((n-j)/n)^(n-m))
    i = j:  P(C_(i-1) <= m - 1) - P(C_i <= m) + C(n, m) ((i-1)/n)^m ((n-i)/n)^(n-m)
Outcomes below 1e-15 (far below the interval's 1e-12) are dropped and the rest renormalised;
binomial tails are summed from lgamma, so any n works.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate

_NEGLIGIBLE = 1e-15


@dataclass(frozen=True)
class MedianLaw:
    """The bootstrap law of one sample's median: distinct `values` in ascending order, their
    probabilities `probs`, and `cumulative`, one longer, with cumulative[0] = 0 and
    cumulative[k] = P(M* <= values[k-1])."""

    values: tuple[float, ...]
    probs: tuple[float, ...]
    cumulative: tuple[float, ...]

    def __post_init__(self) -> None:
        if not self.values or len(self.probs) != len(self.values) \
                or len(self.cumulative) != len(self.values) + 1:
            raise ValueError("a median law needs values, as many probabilities and one more "
                             "cumulative probability")

    def at_most(self, t: float) -> float:
        """P(M* <= t)."""
        return self.cumulative[bisect_right(self.values, t)]

    def below(self, t: float) -> float:
        """P(M* < t)."""
        return self.cumulative[bisect_left(self.values, t)]


def law_of(sample: Sequence[float]) -> MedianLaw:
    """The bootstrap law of median(sample). Raises ValueError for an empty sample."""
    ordered = sorted(sample)
    lows, highs, probs = median_law(len(ordered))
    if len(ordered) % 2:
        values = [ordered[i] for i in lows]
    else:                                   # (x[i] + x[j]) / 2, as statistics.median has it
        values = [(ordered[i] + ordered[j]) / 2 for i, j in zip(lows, highs)]
    order = sorted(range(len(values)), key=values.__getitem__)
    values = [values[k] for k in order]
    weights = [probs[k] for k in order]
    cumulative = list(accumulate(weights, initial=0.0))
    if any(a == b for a, b in zip(values, values[1:])):     # ties: one atom per value
        last = [k for k in range(len(values)) if k + 1 == len(values) or values[k] != values[k + 1]]
        values = [values[k] for k in last]
        cumulative = [0.0] + [cumulative[k + 1] for k in last]
        weights = [b - a for a, b in zip(cumulative, cumulative[1:])]
    cumulative[-1] = 1.0
    return MedianLaw(tuple(values), tuple(weights), tuple(cumulative))


@lru_cache(maxsize=256)
def median_law(n: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[float, ...]]:
    """The law of a resample's median of n sorted values: aligned 0-based positions i <= j (median
    (x[i] + x[j]) / 2) and probabilities summing to 1, by (i, j). ValueError for n < 1."""
    if n < 1:
        raise ValueError("no values")
    weights = _odd_law(n) if n % 2 else _even_law(n)
    kept = [(i, j, w) for i, j, w in weights if w > _NEGLIGIBLE]
    total = math.fsum(w for _, _, w in kept)
    return (tuple(i for i, _, _ in kept), tuple(j for _, j, _ in kept),
            tuple(w / total for _, _, w in kept))


def _odd_law(n: int) -> list[tuple[int, int, float]]:
    m = (n + 1) // 2
    at_most = [0.0] + [1 - binom_cdf(n, k / n, m - 1) for k in range(1, n + 1)]
    return [(k - 1, k - 1, max(0.0, at_most[k] - at_most[k - 1])) for k in range(1, n + 1)]


def _even_law(n: int) -> list[tuple[int, int, float]]:
    m = n // 2
    log_choose = math.lgamma(n + 1) - 2 * math.lgamma(m + 1)
    # log of C(n, m) ((i/n)^m - ((i-1)/n)^m), and of ((n-j+1)/n)^m - ((n-j)/n)^m
    lower = [-math.inf] + [log_choose + _log_step(i, n, m) for i in range(1, n + 1)]
    upper = [-math.inf] + [_log_step(n - j + 1, n, m) for j in range(1, n + 1)]
    out = []
    for i in range(1, n + 1):
        both = math.exp(log_choose + _log_power(i - 1, n, m) + _log_power(n - i, n, m))
        same = binom_cdf(n, (i - 1) / n, m - 1) - binom_cdf(n, i / n, m) + both
        out.append((i - 1, i - 1, max(0.0, same)))
        for j in range(i + 1, n + 1):     # decreasing in j: stop at the first negligible one
            weight = math.exp(lower[i] + upper[j])
            if weight <= _NEGLIGIBLE:
                break
            out.append((i - 1, j - 1, weight))
    return out


def _log_power(k: int, n: int, m: int) -> float:
    """log((k/n)^m), -inf for k = 0."""
    return m * math.log(k / n) if k > 0 else -math.inf


def _log_step(k: int, n: int, m: int) -> float:
    """log((k/n)^m - ((k-1)/n)^m) for k >= 1."""
    if k == 1:
        return m * math.log(1 / n)
    return m * math.log(k / n) + math.log(-math.expm1(m * math.log1p(-1 / k)))


def binom_cdf(n: int, p: float, c: int) -> float:
    """P(Binomial(n, p) <= c), summing the smaller tail outward from c until its terms no
    longer change the sum (terms fall monotonically away from the mean)."""
    if c < 0:
        return 0.0
    if c >= n or p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    q = 1.0 - p
    if c < n * p:
        x, term, total = c, _binom_pmf(n, p, c), 0.0
        while x >= 0 and term > total * 1e-17:
            total += term
            term *= x * q / ((n - x + 1) * p)
            x -= 1
        return total
    x, term, total = c + 1, _binom_pmf(n, p, c + 1), 0.0
    while x <= n and term > total * 1e-17:
        total += term
        term *= (n - x) * p / ((x + 1) * q)
        x += 1
    return 1.0 - total


def _binom_pmf(n: int, p: float, x: int) -> float:
    log_pmf = (math.lgamma(n + 1) - math.lgamma(x + 1) - math.lgamma(n - x + 1)
               + x * math.log(p) + (n - x) * math.log1p(-p))
    return math.exp(log_pmf)
