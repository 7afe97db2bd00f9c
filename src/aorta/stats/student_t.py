"""Student's t law for an integer number of degrees of freedom, in closed form (Abramowitz
and Stegun 26.7.3-4): with theta = atan(t / sqrt(df)), s = sin theta, c = cos theta,
    P(|T| <= t) = s (1 + 1/2 c^2 + 1*3/(2*4) c^4 + ...)                 df even
                = 2/pi (theta + s c (1 + 2/3 c^2 + 2*4/(3*5) c^4 + ...))    df odd
the sums running to the power c^(df - 2) (even) or c^(df - 3) (odd; none for df = 1).
"""

from __future__ import annotations

import math


def within(t: float, df: int) -> float:
    """P(|T| <= t); 1 - within(|t|, df) is the two-sided p of a t statistic."""
    theta = math.atan(abs(t) / math.sqrt(df))
    s, c = math.sin(theta), math.cos(theta)
    odd = df % 2
    term = total = 1.0
    for k in range(1, (df - odd) // 2):
        term *= c * c * (2 * k - 1 + odd) / (2 * k + odd)
        total += term
    if not odd:
        return s * total
    return 2 / math.pi * (theta + (s * c * total if df > 1 else 0.0))


def quantile(level: float, df: int) -> float:
    """The q with P(|T| <= q) = level (0.95: the two-sided 95% critical value), for levels up
    to 0.999 (q = 636.6 at df = 1)."""
    low, high = 0.0, 1000.0
    for _ in range(70):
        middle = (low + high) / 2
        low, high = (middle, high) if within(middle, df) < level else (low, middle)
    return high
