"""Step detection by a penalized piecewise-constant fit, the criterion asv uses
(`asv/step_detect.py`; Y.-C. Yao, "Estimating the number of change-points via Schwarz
criterion", Statistics & Probability Letters 6, 1988):

    SC(k) = (m / 2) * ln(RSS_k / m + floor^2) + beta * k * ln(m)
over the m run medians on a log scale, RSS_k the least squared error with k segments, exact by
dynamic programming (Auger and Lawrence's segment neighbourhood). How this differs from asv,
and the calibration of `beta` and the floor: docs/history.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import accumulate

BETA = 2.0          # penalty per segment, in units of ln(m); calibrated, see docs/history.md
FLOOR = 0.004       # noise floor on the log scale (0.4 %): smaller wiggles are never steps
MAX_STEPS = 8


def detect_bic(points: Sequence[float], beta: float = BETA, floor: float = FLOOR,
               max_steps: int = MAX_STEPS) -> list[int]:
    """Positions of the first point after each step (sorted), for `points` on a log scale."""
    m = len(points)
    if m < 2:
        return []
    prefix = [0.0, *accumulate(points)]
    prefix_sq = [0.0, *accumulate(y * y for y in points)]

    def cost(i: int, j: int) -> float:       # squared error of points[i:j] about its mean
        n = j - i
        s = prefix[j] - prefix[i]
        return max(0.0, prefix_sq[j] - prefix_sq[i] - s * s / n)

    k_max = min(max_steps + 1, m)
    # best[k][j]: least cost of points[:j] in k segments; back[k][j]: where the last one starts
    best = [[math.inf] * (m + 1) for _ in range(k_max + 1)]
    back = [[0] * (m + 1) for _ in range(k_max + 1)]
    best[1][1:] = [cost(0, j) for j in range(1, m + 1)]
    for k in range(2, k_max + 1):
        for j in range(k, m + 1):
            for i in range(k - 1, j):
                value = best[k - 1][i] + cost(i, j)
                if value < best[k][j]:
                    best[k][j], back[k][j] = value, i
    scores = [(m / 2) * math.log(best[k][m] / m + floor * floor) + beta * k * math.log(m)
              for k in range(1, k_max + 1)]
    k = 1 + min(range(len(scores)), key=scores.__getitem__)
    steps, j = [], m
    while k > 1:
        j = back[k][j]
        steps.append(j)
        k -= 1
    return sorted(steps)
