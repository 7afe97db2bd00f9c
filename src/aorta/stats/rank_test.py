"""The rank test between two handfuls of noisy trials, and its small-sample guard.

Timings are few (3 to 20 per side), skewed and not normal, so a t-test's p cannot be trusted;
the Mann-Whitney U test only asks whether one side's values tend to be larger. Its p is exact
(`rank_null`, ties as mid-ranks) up to 50 trials per side without ties and 25 with them, else
the normal approximation with tie and continuity correction (error: docs/compare.md). With 3
trials per side no outcome gives p below 0.1: callers check `can_reach` before believing a p.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from itertools import groupby
from statistics import NormalDist

from aorta.stats.rank_null import tied_tails, untied_cumulative

EXACT_LIMIT = 50              # trials per side up to which p is exact without ties
TIED_EXACT_LIMIT = 25         # ... and with ties: about 1 ms a row there (bench_rank_ties.py)


@dataclass(frozen=True)
class RankTest:
    """A two-sided U test of `new` against `base`; `u` counts pairs where new is larger (a tie
    counts one half): near `n_base * n_new`, "new is larger"; near 0, "new is smaller"."""

    u: float
    p_value: float
    exact: bool

    def __post_init__(self) -> None:
        if not 0.0 <= self.p_value <= 1.0:
            raise ValueError(f"p_value must lie in [0, 1], got {self.p_value}")


def mann_whitney(base: Sequence[float], new: Sequence[float]) -> RankTest:
    """Two-sided U test (which p: module docstring). Raises ValueError when a side is empty."""
    n1, n2 = len(base), len(new)
    if n1 == 0 or n2 == 0:
        raise ValueError("the U test needs at least one value per side")
    ordered = sorted(base)
    # Pairs where new is larger, a tie counting one half.
    u = (sum(map(partial(bisect_left, ordered), new))
         + sum(map(partial(bisect_right, ordered), new))) / 2
    pooled = sorted(ordered + list(new))
    tied = len(set(pooled)) < len(pooled)
    if max(n1, n2) <= (TIED_EXACT_LIMIT if tied else EXACT_LIMIT):
        p = _exact_tied_p(u, n1, n2, pooled) if tied else _exact_p(u, n1, n2)
        return RankTest(u, p, exact=True)
    return RankTest(u, _normal_p(u, n1, n2, pooled if tied else []), exact=False)


def _exact_p(u: float, n1: int, n2: int) -> float:
    # The untied null distribution is symmetric about n1*n2/2: the nearer tail, doubled.
    low = min(u, n1 * n2 - u)
    cumulative = untied_cumulative(n1, n2)
    return min(1.0, 2 * cumulative[int(low)] / cumulative[-1])


def _exact_tied_p(u: float, n1: int, n2: int, pooled: list[float]) -> float:
    """P(|T - E T| >= |t - E T|) for T twice the smaller sample's rank sum, given the ties."""
    groups = [sum(1 for _ in run) for _, run in groupby(pooled)]
    n = n1 + n2
    doubled_new = int(round(2 * u)) + n2 * (n2 + 1)          # 2 x new's rank sum
    drawn, observed = (n2, doubled_new) if n2 <= n1 else (n1, n * (n + 1) - doubled_new)
    centre = drawn * (n + 1)
    distance = abs(observed - centre)
    tails = tied_tails(groups, drawn, centre - distance, centre + distance)
    return min(1.0, sum(tails) / math.comb(n, drawn))


def _normal_p(u: float, n1: int, n2: int, pooled: list[float]) -> float:
    """Normal approximation, continuity and tie corrected (`pooled` sorted; empty: no ties)."""
    n = n1 + n2
    tie_term = sum(t ** 3 - t for t in (sum(1 for _ in run) for _, run in groupby(pooled)))
    variance = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)))
    if variance <= 0:
        return 1.0
    z = max(0.0, abs(u - n1 * n2 / 2) - 0.5) / math.sqrt(variance)
    return min(1.0, 2 * (1 - NormalDist().cdf(z)))


def smallest_p(n1: int, n2: int) -> float:
    """The smallest two-sided p the U test can give for any samples of these sizes, ties
    included. Only the most extreme split counts toward it, plus its mirror image when that is
    as far from the centre. Equal sizes: the n lowest and n highest ranks always mirror each
    other, so 2 / C(2n, n). Unequal sizes: ties can break the mirror (3 against 4 values, the 4
    tied above the 3: 1/35, where untied samples give at least 2/35), so 1 / C(n1 + n2, n1)."""
    if n1 < 1 or n2 < 1:
        return 1.0
    return min(1.0, (2 if n1 == n2 else 1) / math.comb(n1 + n2, n1))


def can_reach(alpha: float, n1: int, n2: int) -> bool:
    """Whether any outcome at all could be significant at `alpha`."""
    return n1 >= 2 and n2 >= 2 and smallest_p(n1, n2) <= alpha


def min_trials_per_side(alpha: float) -> int:
    """The fewest equal trials per side for which the U test can reach `alpha`."""
    n = 2
    while not can_reach(alpha, n, n):
        n += 1
    return n
