"""The interval of a ratio of medians: the percentile bootstrap's, computed exactly.

The percentile bootstrap (Efron & Tibshirani 1993, "An Introduction to the Bootstrap", ch. 13)
takes quantiles of B resampled median(new*) / median(base*); here, their limits as B grows, from
the exact law (`median_law` per side, sides independent), so the same data give the same
interval. With tail = (1 - level) / 2:
    low  = the smallest outcome r with P(R* <= r) >  tail      (at most `tail` lies below low)
    high = the smallest outcome r with P(R* <= r) >= 1 - tail  (at most `tail` lies above high)
(the limits of the plain bootstrap's order statistics floor(tail B) + 1 and ceil((1 - tail) B)).
Sums are good to about 1e-13, so a tail within 1e-12 of the allowed mass counts as inside: the
interval never narrows on rounding. `ratio_grid` finds the quantiles, or its compiled twin
(`_ratio_quantiles.c`) where every denominator value is positive. A base outcome of 0 gives
+inf (1.0 over a new 0); callers treat an infinite bound as "not settled".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from aorta.stats.median_law import MedianLaw, law_of
from aorta.stats.ratio_grid import Grid

_compiled_quantiles: Callable[..., list[tuple[float, float]] | None] | None
try:
    from aorta.stats._ratio_quantiles import quantiles as _compiled_quantiles
except ImportError:             # built without a C compiler: the Python search alone
    _compiled_quantiles = None

_ROUNDING = 1e-12      # masses within this of a tail count as inside the interval


def ratio(new: float, base: float) -> float:
    """new / base, with base 0 giving +inf or -inf by the sign of new, and 1.0 for 0 / 0."""
    if base == 0:
        return 1.0 if new == 0 else math.copysign(math.inf, new)
    return new / base


def ratio_interval(base: Sequence[float], new: Sequence[float],
                   level: float) -> tuple[float, float]:
    """The exact central `level` (e.g. 0.95) bootstrap interval of median(new) / median(base).
    Raises ValueError for an empty side or a level outside (0, 1)."""
    if not base or not new:
        raise ValueError("a ratio interval needs values on both sides")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    num, den = law_of(new), law_of(base)
    tail = (1 - level) / 2
    low_p, high_p = tail - _ROUNDING, 1 - tail + _ROUNDING
    if num.values[0] > 0 and den.values[0] > 0 and len(den.values) > len(num.values):
        # Fewer rows the other way round: quantiles of base / new, then the reciprocal (the
        # smallest r with P(R* <= r) > p is 1 / the smallest s with P(1/R* <= s) >= 1 - p,
        # and likewise with the inequalities swapped).
        (low_b, low_n), (high_b, high_n) = _quantiles(den, num, (high_p, False), (low_p, True))
    else:
        (low_n, low_b), (high_n, high_b) = _quantiles(num, den, (low_p, True), (high_p, False))
    return ratio(low_n, low_b), ratio(high_n, high_b)


def _quantiles(num: MedianLaw, den: MedianLaw,
               *wanted: tuple[float, bool]) -> list[tuple[float, float]]:
    if _compiled_quantiles is not None:
        found = _compiled_quantiles(num.values, num.probs, num.cumulative, den.values,
                                    den.probs, wanted)
        if found is not None:
            return found
    return Grid.of(num, den).quantiles(*wanted)
