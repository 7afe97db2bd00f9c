"""The Bayesian change detector that `aorta history` once offered as `--method bayes`, kept
here so that bench_history_detection.py still compares it with the product's `bic` detector
(docs/history.md, "How well they find injected steps").

Bayesian binary segmentation. Each segment is normal with its own unknown mean and variance
under the conjugate normal-inverse-gamma prior (a product-partition model: D. Barry and
J. A. Hartigan, JASA 88, 1993; the one-change posterior as in Adams and MacKay, "Bayesian
online changepoint detection", 2007, used offline). A stretch is split at its most probable
boundary (both halves then searched again) when
    P(change | y) = q * mean_t p(y[:t]) p(y[t:])  /  (q * mean_t p(y[:t]) p(y[t:]) + (1 - q) p(y))
exceeds `THRESHOLD`. Log medians are first divided by a robust noise estimate, so the prior is
in units of run-to-run noise for every metric.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import accumulate
from statistics import median

from aorta.history.detect import FLOOR

THRESHOLD = 0.95        # posterior probability of a change needed to report it
PRIOR_CHANGE = 0.5      # prior probability that a stretch holds a change
_KAPPA0 = 0.01          # prior precision of a segment's level: +/- 10 noise units
_ALPHA0, _BETA0 = 2.0, 1.0   # prior on the variance: mean 1 noise unit squared


def noise_scale(points: Sequence[float], floor: float = FLOOR) -> float:
    """Run-to-run noise (a standard deviation) from successive differences, robust to steps."""
    diffs = [abs(b - a) for a, b in zip(points, points[1:])]
    if not diffs:
        return floor
    return max(floor, median(diffs) / (0.6745 * math.sqrt(2)))


def detect_bayes(points: Sequence[float], threshold: float = THRESHOLD,
                 prior: float = PRIOR_CHANGE) -> list[int]:
    """Positions of the first point after each step (sorted), for `points` on a log scale."""
    if len(points) < 2:
        return []
    scale = noise_scale(points)
    centre = median(points)
    z = [(y - centre) / scale for y in points]
    found: list[int] = []
    stack = [(0, len(z))]
    while stack:
        a, b = stack.pop()
        split = _best_split(z[a:b], threshold, prior)
        if split is not None:
            found.append(a + split)
            stack += [(a, a + split), (a + split, b)]
    return sorted(found)


def _best_split(z: Sequence[float], threshold: float, prior: float) -> int | None:
    n = len(z)
    if n < 2:
        return None
    prefix = [0.0, *accumulate(z)]
    prefix_sq = [0.0, *accumulate(v * v for v in z)]

    def log_marginal(i: int, j: int) -> float:
        count = j - i
        mean = (prefix[j] - prefix[i]) / count
        ss = max(0.0, prefix_sq[j] - prefix_sq[i] - count * mean * mean)
        kappa = _KAPPA0 + count
        alpha = _ALPHA0 + count / 2
        beta = _BETA0 + ss / 2 + _KAPPA0 * count * mean * mean / (2 * kappa)
        return (math.lgamma(alpha) - math.lgamma(_ALPHA0) + _ALPHA0 * math.log(_BETA0)
                - alpha * math.log(beta) + 0.5 * math.log(_KAPPA0 / kappa)
                - count / 2 * math.log(2 * math.pi))

    whole = log_marginal(0, n)
    splits = [log_marginal(0, t) + log_marginal(t, n) for t in range(1, n)]
    top = max(splits)
    # log of mean_t exp(splits[t]), computed stably
    log_mean = top + math.log(sum(math.exp(s - top) for s in splits) / len(splits))
    log_odds = math.log(prior / (1 - prior)) + log_mean - whole
    posterior = 1 / (1 + math.exp(-log_odds)) if log_odds > -700 else 0.0
    if posterior < threshold:
        return None
    return 1 + max(range(len(splits)), key=splits.__getitem__)
