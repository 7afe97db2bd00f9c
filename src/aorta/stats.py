"""Small, dependency-free statistics shared by summaries and comparisons."""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["RatioEstimate", "ratio_of_medians"]

MIN_FOR_INTERVAL = 3


@dataclass(frozen=True)
class RatioEstimate:
    ratio: float              # median(a) / median(b)
    low: float | None         # percentile bootstrap bounds; None with too few samples
    high: float | None


def ratio_of_medians(a: Sequence[float], b: Sequence[float], confidence: float = 0.95,
                     resamples: int = 2000, seed: int = 0) -> RatioEstimate | None:
    """median(a)/median(b) with a percentile-bootstrap interval (seeded: reruns agree).

    None when a median of `b` is not positive (no ratio is meaningful)."""
    mb = statistics.median(b)
    if not a or mb <= 0:
        return None
    ratio = statistics.median(a) / mb
    if len(a) < MIN_FOR_INTERVAL or len(b) < MIN_FOR_INTERVAL:
        return RatioEstimate(ratio, None, None)
    rng = random.Random(seed)
    boots = []
    for _ in range(resamples):
        mb_star = statistics.median(rng.choices(b, k=len(b)))
        if mb_star > 0:
            boots.append(statistics.median(rng.choices(a, k=len(a))) / mb_star)
    boots.sort()
    tail = (1 - confidence) / 2
    return RatioEstimate(ratio, boots[int(tail * (len(boots) - 1))],
                         boots[int((1 - tail) * (len(boots) - 1))])
