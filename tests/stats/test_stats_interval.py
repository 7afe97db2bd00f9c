"""The exact interval of a ratio of medians: against every resample, and a large bootstrap."""

from __future__ import annotations

import itertools
import math
import random
from bisect import bisect_left, bisect_right

import pytest

from aorta.stats import interval
from aorta.stats.interval import ratio, ratio_interval
from aorta.stats.median_law import law_of
from aorta.stats.ratio_grid import Grid

ROUNDING = 1e-12


def plain_median(sample):
    s = sorted(sample)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def quantiles_of(outcomes, level):
    """(low, high) by the module's definition, from a list of (ratio, weight)."""
    outcomes.sort()
    tail, running, low, high = (1 - level) / 2, 0.0, None, None
    for r, w in outcomes:
        running += w
        if low is None and running > tail - ROUNDING:
            low = r
        if high is None and running >= 1 - tail + ROUNDING:
            high = r
    return low, outcomes[-1][0] if high is None else high


def test_equals_every_resample_of_tiny_samples():
    # 3^3 x 4^4 = 6,912 equally likely pairs of resamples: the whole bootstrap distribution,
    # with no median law involved.
    base, new = [1.0, 1.3, 0.9], [1.1, 1.5, 1.2, 1.05]
    medians_b = [plain_median(r) for r in itertools.product(base, repeat=3)]
    medians_n = [plain_median(r) for r in itertools.product(new, repeat=4)]
    weight = 1 / (len(medians_b) * len(medians_n))
    outcomes = [(ratio(n, b), weight) for b in medians_b for n in medians_n]
    for level in (0.95, 0.9, 0.5):
        want = quantiles_of(list(outcomes), level)
        assert ratio_interval(base, new, level) == pytest.approx(want, rel=1e-12)


def random_sample(rng, n, kind):
    if kind == "lognormal":
        return [rng.lognormvariate(0, 0.1) for _ in range(n)]
    if kind == "quantised":
        return [round(rng.lognormvariate(0, 0.1), 1) for _ in range(n)]
    if kind == "with zeros":
        return [rng.choice([0.0, 1.0, 2.0, 1.5]) for _ in range(n)]
    return [rng.gauss(0, 1) for _ in range(n)]


@pytest.mark.parametrize("kind", ["lognormal", "quantised", "with zeros", "signed"])
def test_equals_the_full_product_of_the_two_laws(kind):
    # Every outcome of the two exact laws listed and sorted: the search must land on the same
    # outcome, whichever side has more of them, with zeros and negative values too.
    rng = random.Random(f"product-{kind}")     # str seeds are stable across processes
    for _ in range(150):
        base = random_sample(rng, rng.randint(1, 14), kind)
        new = [v * 1.1 for v in random_sample(rng, rng.randint(1, 14), kind)]
        b, n = law_of(base), law_of(new)
        outcomes = [(ratio(a, d), pa * pd) for d, pd in zip(b.values, b.probs)
                    for a, pa in zip(n.values, n.probs)]
        assert ratio_interval(base, new, 0.95) == pytest.approx(
            quantiles_of(outcomes, 0.95), rel=1e-12)


def bootstrap_ratios(rng, base, new, draws):
    return sorted(plain_median(rng.choices(new, k=len(new)))
                  / plain_median(rng.choices(base, k=len(base))) for _ in range(draws))


@pytest.mark.parametrize("n_base,n_new,quantised,draws", [
    (8, 9, False, 100_000), (20, 20, True, 50_000), (51, 50, False, 20_000),
    (201, 200, False, 4_000),
])
def test_agrees_with_a_large_monte_carlo_bootstrap(n_base, n_new, quantised, draws):
    rng = random.Random(n_base)
    base = [rng.lognormvariate(0, 0.05) for _ in range(n_base)]
    new = [rng.lognormvariate(0, 0.05) * 1.03 for _ in range(n_new)]
    if quantised:
        base, new = [round(v, 2) for v in base], [round(v, 2) for v in new]
    ratios = bootstrap_ratios(rng, base, new, draws)
    # The resampled CDF is within eps of the exact one everywhere, except with probability
    # 2 exp(-2 draws eps^2) = 1e-6 (Dvoretzky-Kiefer-Wolfowitz, Massart's constant).
    eps = math.sqrt(math.log(2 / 1e-6) / (2 * draws))
    grid = Grid.of(law_of(new), law_of(base))
    for r in ratios[::max(1, draws // 400)]:
        assert abs(grid.cut(r).mass - bisect_right(ratios, r) / draws) <= eps
    # So the exact bounds sit where the resampled CDF crosses the tails, within eps.
    low, high = ratio_interval(base, new, 0.95)
    assert bisect_left(ratios, low) / draws <= 0.025 + eps
    assert bisect_right(ratios, low) / draws >= 0.025 - eps
    assert bisect_left(ratios, high) / draws <= 0.975 + eps
    assert bisect_right(ratios, high) / draws >= 0.975 - eps


def test_same_data_same_interval_in_any_order():
    rng = random.Random(4)
    base = [rng.lognormvariate(0, 0.05) for _ in range(10)]
    new = [rng.lognormvariate(0, 0.05) * 1.04 for _ in range(10)]
    first = ratio_interval(base, new, 0.95)
    assert ratio_interval(base[::-1], sorted(new), 0.95) == first
    assert ratio_interval(base, new, 0.95) == first
    assert first[0] <= plain_median(new) / plain_median(base) <= first[1]


def test_interval_brackets_a_clear_change():
    low, high = ratio_interval([1.00, 1.02, 0.98, 1.01, 0.99], [1.10, 1.12, 1.08, 1.11, 1.09],
                               0.95)
    assert 1.0 < low <= 1.10 <= high < 1.2


def test_constants_zeros_and_open_ends():
    assert ratio_interval([2.0] * 4, [3.0] * 4, 0.95) == (1.5, 1.5)
    low, high = ratio_interval([0.0, 0.0, 1.0], [1.0, 1.0, 1.0], 0.95)
    assert low == 1.0 and math.isinf(high)
    assert ratio_interval([0.0] * 3, [0.0] * 3, 0.95) == (1.0, 1.0)


def test_bad_arguments():
    with pytest.raises(ValueError):
        ratio_interval([], [1.0], 0.95)
    with pytest.raises(ValueError):
        ratio_interval([1.0], [1.0], 1.5)


def test_laws_spanning_the_floats_do_not_overflow_the_search():
    # A model step from 1e-300 toward 1e300 leaves the floats: the search cuts elsewhere.
    base = [1e-300, 2e-300, 1e300, 3e-300, 2e300, 5e-301, 1e299, 4e-300, 7e299, 9e-301, 3e300]
    new = [v * 1.5 for v in base[::-1]] + [1.0]
    low, high = ratio_interval(base, new, 0.95)
    assert 0 <= low <= high       # a ratio this small may underflow to 0
    compiled = interval._compiled_quantiles
    interval._compiled_quantiles = None          # the Python search on its own
    try:
        assert ratio_interval(base, new, 0.95) == (low, high)
    finally:
        interval._compiled_quantiles = compiled
