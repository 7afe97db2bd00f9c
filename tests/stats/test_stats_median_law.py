"""The exact law of a bootstrap median, checked against enumeration of every resample."""

from __future__ import annotations

import itertools
import math
import random
from bisect import bisect_right
from fractions import Fraction

import pytest

from aorta.stats.median_law import MedianLaw, binom_cdf, law_of, median_law


def law_as_dict(n):
    lows, highs, probs = median_law(n)
    return dict(zip(zip(lows, highs), probs))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7])
def test_median_law_matches_every_resample(n):
    # All n^n resamples of positions 0..n-1, and where their median lands.
    counts = {}
    for resample in itertools.product(range(n), repeat=n):
        ordered = sorted(resample)
        key = (ordered[(n - 1) // 2], ordered[n // 2])
        counts[key] = counts.get(key, 0) + 1
    law = law_as_dict(n)
    assert set(law) <= set(counts)
    for key, count in counts.items():
        assert law.get(key, 0.0) == pytest.approx(count / n ** n, abs=1e-12)


@pytest.mark.parametrize("n", [10, 25, 64, 199, 200, 1001, 1200])
def test_median_law_is_a_distribution(n):
    lows, highs, probs = median_law(n)
    assert math.fsum(probs) == pytest.approx(1.0, abs=1e-12)
    assert all(p > 0 for p in probs)
    assert all(0 <= i <= j < n for i, j in zip(lows, highs))
    assert all(i == j for i, j in zip(lows, highs)) == (n % 2 == 1)
    # The law is symmetric: position k mirrors n - 1 - k.
    law = dict(zip(zip(lows, highs), probs))
    for (i, j), p in law.items():
        assert law.get((n - 1 - j, n - 1 - i), 0.0) == pytest.approx(p, abs=1e-12)


@pytest.mark.parametrize("n,p,c", [(7, 3 / 7, 3), (12, 0.5, 5), (40, 0.1, 2), (40, 0.9, 35)])
def test_binomial_tail_against_exact_fractions(n, p, c):
    q = Fraction(p).limit_denominator(1000)
    exact = sum(math.comb(n, x) * q ** x * (1 - q) ** (n - x) for x in range(c + 1))
    assert binom_cdf(n, float(q), c) == pytest.approx(float(exact), rel=1e-12, abs=1e-15)
    assert binom_cdf(n, 0.3, -1) == 0.0 and binom_cdf(n, 0.3, n) == 1.0


def test_large_n_matches_a_plain_bootstrap():
    # n = 12: 12^12 resamples are too many to list, so 40,000 of them, against the law's
    # CDF (a Kolmogorov distance above 0.012 has probability below 1e-5 by the DKW bound).
    rng = random.Random(7)
    values = [rng.lognormvariate(0, 0.3) for _ in range(12)]
    law = law_of(values)
    draws = sorted((lambda s: (s[5] + s[6]) / 2)(sorted(rng.choices(values, k=12)))
                   for _ in range(40_000))
    worst = max(abs(law.at_most(x) - bisect_right(draws, x) / len(draws)) for x in set(draws))
    assert worst < 0.012


def test_law_of_a_sample():
    law = law_of([3.0, 1.0, 2.0])
    assert law.values == (1.0, 2.0, 3.0)
    assert law.cumulative[0] == 0.0 and law.cumulative[-1] == 1.0
    assert law.probs[1] == pytest.approx(1 - 2 * 7 / 27)      # P(median* = 2) = 13/27
    assert law.at_most(2.0) == pytest.approx(20 / 27) and law.below(2.0) == pytest.approx(7 / 27)
    tied = law_of([1.0, 1.0, 2.0, 2.0])
    assert len(set(tied.values)) == len(tied.values) == 3      # 1.0, 1.5, 2.0: one atom each
    assert sum(tied.probs) == pytest.approx(1.0)


def test_bad_input():
    with pytest.raises(ValueError):
        median_law(0)
    with pytest.raises(ValueError):
        MedianLaw((1.0,), (1.0,), (0.0,))
