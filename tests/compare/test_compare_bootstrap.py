"""The ratio interval: the exact law of a bootstrap median, checked against enumeration."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from aorta.compare.bootstrap import EXACT_LIMIT, bootstrap_medians, median_law, ratio_interval


def law_as_dict(n):
    pairs, cumulative = median_law(n)
    previous = (0.0,) + cumulative[:-1]
    return {pair: c - p for pair, c, p in zip(pairs, cumulative, previous)}


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


@pytest.mark.parametrize("n", [10, 25, 64, 199, 200])
def test_median_law_is_a_distribution(n):
    pairs, cumulative = median_law(n)
    assert cumulative[-1] == 1.0
    assert all(b >= a for a, b in zip(cumulative, cumulative[1:]))
    assert all(0 <= i <= j < n for i, j in pairs)


def test_draws_follow_the_plain_bootstrap():
    rng = random.Random(3)
    values = sorted(rng.lognormvariate(0, 0.2) for _ in range(8))
    fast = sorted(bootstrap_medians(values, 20000, random.Random(1)))
    plain = []
    draw = random.Random(2)
    for _ in range(20000):
        sample = sorted(draw.choices(values, k=8))
        plain.append((sample[3] + sample[4]) / 2)
    plain.sort()
    for q in (0.025, 0.25, 0.5, 0.75, 0.975):
        i = int(q * 20000)
        assert fast[i] == pytest.approx(plain[i], rel=0.03)


def test_interval_is_deterministic_and_brackets_the_ratio():
    base = [1.00, 1.02, 0.98, 1.01, 0.99]
    new = [1.10, 1.12, 1.08, 1.11, 1.09]
    low, high = ratio_interval(base, new, 0.95, seed=5)
    assert (low, high) == ratio_interval(base, new, 0.95, seed=5)
    assert low <= 1.10 / 1.00 <= high
    assert 1.0 < low < high < 1.2


def test_interval_of_identical_constants_is_a_point():
    assert ratio_interval([2.0] * 4, [3.0] * 4, 0.95) == (1.5, 1.5)


def test_zero_base_draws_give_an_open_end():
    low, high = ratio_interval([0.0, 0.0, 1.0], [1.0, 1.0, 1.0], 0.95)
    assert math.isinf(high)
    assert ratio_interval([0.0] * 3, [0.0] * 3, 0.95) == (1.0, 1.0)


def test_large_samples_use_the_plain_bootstrap():
    rng = random.Random(0)
    values = [rng.gauss(10, 1) for _ in range(EXACT_LIMIT + 1)]
    low, high = ratio_interval(values, [v * 1.5 for v in values], 0.95, resamples=200)
    assert 1.4 < low < 1.5 < high < 1.6
    assert ratio_interval([2.0] * 300, [3.0] * 300, 0.95, resamples=100) == (1.5, 1.5)


def test_bad_arguments():
    with pytest.raises(ValueError):
        ratio_interval([], [1.0], 0.95)
    with pytest.raises(ValueError):
        ratio_interval([1.0], [1.0], 1.5)
    with pytest.raises(ValueError):
        median_law(0)
