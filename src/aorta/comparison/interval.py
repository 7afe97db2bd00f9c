"""The interval of a ratio of medians: the percentile bootstrap's, computed exactly.

The percentile bootstrap draws B resamples of each side and reports the alpha/2 and
1 - alpha/2 quantiles of the B ratios median(new*) / median(base*) (Efron & Tibshirani 1993,
"An Introduction to the Bootstrap", ch. 13). As B grows those quantiles tend to the quantiles
of the ratio's bootstrap distribution, which is known exactly: each side's median has the
closed-form law of `median_law`, the two sides are resampled independently, so

    P(R* <= r) = sum over base outcomes b of P(base median* = b) * P(new median* / b <= r).

This module takes the quantiles of that law without drawing anything, so there is no seed and
the same data always gives the same interval, hence the same verdict:

    low  = the smallest outcome r with P(R* <= r) >  tail      (at most `tail` lies below low)
    high = the smallest outcome r with P(R* <= r) >= 1 - tail  (at most `tail` lies above high)

with tail = (1 - level) / 2: the limits of the plain bootstrap's order statistics
floor(tail B) + 1 and ceil((1 - tail) B) as B grows. Probabilities are floating-point sums,
good to about 1e-13, so a tail that equals the allowed mass within 1e-12 is kept inside: the
interval never narrows on rounding. `ratio_grid` finds the quantiles; where the compiled twin
of its search (`_ratio_quantiles.c`, built at install when a C compiler is present) can take
the grid (every denominator value positive) it does, about 20 times faster.

A base outcome of 0 gives +inf (or 1.0 when the new outcome is 0 too), so an interval can be
open-ended; callers treat an infinite bound as "not settled".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from aorta.comparison.median_law import MedianLaw, law_of
from aorta.comparison.ratio_grid import Grid

_compiled_quantiles: Callable[..., list[tuple[float, float]] | None] | None
try:
    from aorta.comparison._ratio_quantiles import quantiles as _compiled_quantiles
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
    """The central `level` (e.g. 0.95) percentile interval of median(new) / median(base) under
    the bootstrap, computed exactly. Raises ValueError for an empty side or a level outside
    (0, 1)."""
    if not base or not new:
        raise ValueError("a ratio interval needs values on both sides")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    return RatioLaw(law_of(new), law_of(base)).interval((1 - level) / 2)


@dataclass(frozen=True)
class RatioLaw:
    """The bootstrap law of R* = new median* / base median*, the two laws independent."""

    new: MedianLaw
    base: MedianLaw

    def at_most(self, r: float) -> float:
        """P(R* <= r)."""
        return Grid.of(self.new, self.base).cut(r).mass

    def interval(self, tail: float) -> tuple[float, float]:
        """(low, high) as the module docstring defines them, for 0 < tail < 1/2."""
        low_p, high_p = tail - _ROUNDING, 1 - tail + _ROUNDING
        positive = self.new.values[0] > 0 and self.base.values[0] > 0
        if positive and len(self.base.values) > len(self.new.values):
            # Fewer rows the other way round: quantiles of base / new, then the reciprocal
            # (the smallest r with P(R* <= r) > p is 1 / the smallest s with
            # P(1/R* <= s) >= 1 - p, and likewise with the inequalities swapped).
            (low_b, low_n), (high_b, high_n) = quantiles(
                self.base, self.new, (high_p, False), (low_p, True))
        else:
            (low_n, low_b), (high_n, high_b) = quantiles(
                self.new, self.base, (low_p, True), (high_p, False))
        return ratio(low_n, low_b), ratio(high_n, high_b)


def quantiles(num: MedianLaw, den: MedianLaw,
              *wanted: tuple[float, bool]) -> list[tuple[float, float]]:
    """`Grid.of(num, den).quantiles(*wanted)`, by the compiled search where it applies."""
    if _compiled_quantiles is not None:
        found = _compiled_quantiles(num.values, num.probs, num.cumulative, den.values,
                                    den.probs, wanted)
        if found is not None:
            return found
    return Grid.of(num, den).quantiles(*wanted)
