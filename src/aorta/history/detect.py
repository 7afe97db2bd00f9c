"""`history`'s step detector, `bic`: asv's penalized piecewise-constant fit (`asv/step_detect.py`;
Y.-C. Yao, Statistics & Probability Letters 6, 1988) over the m run medians on a log scale,
    SC(k) = (m / 2) * ln(RSS_k / m + floor^2) + beta * k * ln(m)
RSS_k the squared error of k segments found by binary segmentation (each time the split that
removes the most error: O(m) per split, so a history of thousands of runs is searched whole).
How it differs from asv, and the calibration of `beta` and the floor: docs/history.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import accumulate

FLOOR = 0.004       # noise floor on the log scale (0.4 %): smaller wiggles are never steps
BETA = 2.0          # penalty per segment, in units of ln(m); calibrated, see docs/history.md
MAX_STEPS = 8       # steps tried, or one per 20 runs in a longer series


def detect_bic(points: Sequence[float], beta: float = BETA, floor: float = FLOOR,
               max_steps: int = MAX_STEPS) -> list[int]:
    """Positions of the first point after each step (sorted), for `points` on a log scale."""
    m = len(points)
    if m < 2:
        return []
    prefix = [0.0, *accumulate(points)]
    prefix_sq = [0.0, *accumulate(y * y for y in points)]

    def cost(i: int, j: int) -> float:       # squared error of points[i:j] about its mean
        s = prefix[j] - prefix[i]
        return max(0.0, prefix_sq[j] - prefix_sq[i] - s * s / (j - i))

    def best_split(i: int, j: int) -> tuple[float, int]:     # (error removed, where)
        # cost(i, j) - cost(i, t) - cost(t, j), the squares cancelling: sums are enough
        base, total = prefix[i], prefix[j] - prefix[i]
        gain, t = max((((s := prefix[t] - base) * s / (t - i) + (total - s) ** 2 / (j - t), t)
                       for t in range(i + 1, j)), default=(total * total / (j - i), i))
        return gain - total * total / (j - i), t

    def score(rss: float, k: int) -> float:
        return (m / 2) * math.log(max(rss, 0.0) / m + floor * floor) + beta * k * math.log(m)

    stretches, rss, steps = {(0, m): best_split(0, m)}, cost(0, m), list[int]()
    scores, best = [score(rss, 1)], 0
    # up to one step per 20 runs, but no further than max_steps past the best count so far
    while len(steps) < max(max_steps, m // 20) and len(steps) - best < max_steps:
        (i, j), (gain, t) = max(stretches.items(), key=lambda item: item[1][0])
        if gain <= 0:
            break
        del stretches[(i, j)]
        stretches.update({(i, t): best_split(i, t), (t, j): best_split(t, j)})
        rss, steps = rss - gain, [*steps, t]
        scores.append(score(rss, len(steps) + 1))
        best = best if scores[best] <= scores[-1] else len(steps)
    return sorted(steps[:best])

