"""How many more trials would likely settle an UNCERTAIN comparison: a range, not a number.

Settled: the interval clears a band edge, lo = log(1 - threshold) or hi = log(1 + threshold).
With s the spread of log values and 1.2533 = sqrt(pi/2) the median's efficiency factor, N
trials per side give S(N) = 1.2533 s sqrt(2 / N), and power 0.8 at distance m from the nearer
edge takes n(m) = 2 (1.2533 s (z[1 - alpha/2] + z[0.8]) / m)^2 per side. The observed change d
has se = 1.2533 s sqrt(1/n_base + 1/n_new). Low: n(m) for the change within d +/- se farthest
from an edge. High: the N whose assurance (O'Hagan, Stevens & Campbell 2005, Pharmaceutical
Statistics 4(3):187-201) over truths delta ~ N(d, se^2) reaches 0.8; with the new estimate
e ~ N(d, S(N)^2 + se^2),
    A(N) = P(e < lo - z S) + P(lo + z S < e < hi - z S) + P(e > hi + z S)
(the middle term only while the band is wider than 2 z S). Open-ended past 10,000 per side.
Why a range, and how it was measured: docs/compare.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist, median

from aorta.stats.rank_test import min_trials_per_side

MEDIAN_SE_FACTOR = math.sqrt(math.pi / 2)  # SE(median) / SE(mean) for normal data
POWER = 0.8                                # power at the low end, assurance at the high end
_MOST = 10_000                             # trials per side past which advice is open-ended


@dataclass(frozen=True)
class Advice:
    """More trials per side: `low` if the truth is as favourable as the data allow, `high`
    for an assurance of 0.8 over every plausible truth (None: past 10,000 per side)."""

    low: int
    high: int | None

    def __post_init__(self) -> None:
        if self.low < 1 or (self.high is not None and self.high < self.low):
            raise ValueError(f"advice must be 1 <= low <= high, got {self.low}..{self.high}")


def trials_for(margin: float, spread: float, alpha: float) -> float:
    """n(m) of the module docstring: trials per side to clear `margin` (log units) at `alpha`
    with power 0.8, for log values of SD `spread`. Infinite for a zero margin."""
    if margin <= 0:
        return math.inf
    z = _critical(alpha) + NormalDist().inv_cdf(POWER)
    return 2 * (MEDIAN_SE_FACTOR * spread * z / margin) ** 2


def assurance(trials: float, change: float, change_se: float, spread: float,
              edges: tuple[float, float], alpha: float) -> float:
    """A(N) of the module docstring: the chance that `trials` new trials per side settle a
    comparison whose log change is known as `change` +/- `change_se`."""
    z = _critical(alpha)
    lower, upper = edges
    step = MEDIAN_SE_FACTOR * spread * math.sqrt(2 / trials)
    scale = math.hypot(step, change_se) * math.sqrt(2)

    def below(x: float) -> float:                  # P(e < x)
        return 0.5 * math.erfc((change - x) / scale) if scale else float(change < x)

    chance = below(lower - z * step) + 1 - below(upper + z * step)
    if upper - lower > 2 * z * step:
        chance += below(upper - z * step) - below(lower + z * step)
    return min(1.0, max(0.0, chance))


def _critical(alpha: float) -> float:
    return NormalDist().inv_cdf(1 - alpha / 2)


def advise(base: Sequence[float], new: Sequence[float], threshold: float,
           alpha: float) -> Advice | None:
    """The range of more trials per side (see the module docstring); None when the medians
    are not both positive, so a ratio means nothing."""
    base_median = median(base) if base else 0.0
    new_median = median(new) if new else 0.0
    if base_median <= 0 or new_median <= 0:
        return None
    have = min(len(base), len(new))
    floor_n = min_trials_per_side(alpha)
    logs_base = [math.log(v) for v in base if v > 0]
    logs_new = [math.log(v) for v in new if v > 0]
    spread = _pooled_sd(logs_base, logs_new) if min(len(logs_base), len(logs_new)) > 1 else 0.0
    if spread == 0:                 # too few values, or all equal: only the test's own floor
        return _more(floor_n, floor_n, have)
    change = math.log(new_median / base_median)
    change_se = MEDIAN_SE_FACTOR * spread * math.sqrt(1 / len(logs_base) + 1 / len(logs_new))
    edges = (math.log1p(-threshold), math.log1p(threshold))
    low = max(floor_n, trials_for(_best_margin(change - change_se, change + change_se, edges),
                                  spread, alpha))

    def assured(n: float) -> bool:
        return assurance(n, change, change_se, spread, edges, alpha) >= POWER

    high = _smallest(assured, math.ceil(min(low, _MOST)),
                     _first_guess(change, change_se, spread, edges, alpha))
    return _more(low, max(low, high), have)


def _first_guess(change: float, change_se: float, spread: float,
                 edges: tuple[float, float], alpha: float) -> float:
    """Where A(N) reaches POWER once S(N) is small next to se: then 1 - A(N) is about
    2 z S(N) (phi(a) + phi(b)) / se, a and b the edges' distances from the change in se."""
    density = sum(math.exp(-0.5 * ((e - change) / change_se) ** 2) for e in edges) \
        / math.sqrt(2 * math.pi)
    if density <= 0:
        return 0.0
    step = (1 - POWER) * change_se / (2 * _critical(alpha) * density)
    return 2 * (MEDIAN_SE_FACTOR * spread / step) ** 2


def _best_margin(start: float, end: float, edges: tuple[float, float]) -> float:
    """Largest distance to the nearer band edge over [start, end]: mid-band or at an end."""
    lower, upper = edges
    middle = (lower + upper) / 2
    candidates = [start, end] + ([middle] if start <= middle <= end else [])
    return max(min(abs(x - lower), abs(x - upper)) for x in candidates)


def _smallest(enough: Callable[[float], bool], start: int, guess: float) -> float:
    """About the smallest integer n >= start with enough(n), monotone in n: doubling from
    `guess` until bracketed, then bisection to within 1/8 (a rough figure); inf past _MOST."""
    if enough(start):
        return start
    low, high = float(start), min(max(guess, start + 1.0), 2.0 * _MOST)
    while not enough(high):
        if high > _MOST:
            return math.inf
        low, high = high, high * 2
    while high > low * 1.125 and high - low > 1:
        middle = math.sqrt(low * high)
        low, high = (low, middle) if enough(middle) else (middle, high)
    return math.ceil(high)


def _more(low_n: float, high_n: float, have: int) -> Advice:
    """Per-side totals (possibly infinite) as more trials beyond the `have` already run."""
    low = max(1, math.ceil(min(low_n, _MOST)) - have)
    high = None if high_n > _MOST else max(low, math.ceil(high_n) - have)
    return Advice(low, high)


def _pooled_sd(a: Sequence[float], b: Sequence[float]) -> float:
    def sum_sq(xs: Sequence[float]) -> float:
        mean = sum(xs) / len(xs)
        return sum((x - mean) * (x - mean) for x in xs)

    return math.sqrt((sum_sq(a) + sum_sq(b)) / (len(a) + len(b) - 2))
