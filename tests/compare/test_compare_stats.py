"""The rank test, its small-sample guard, and the trial-count advice."""

from __future__ import annotations

import itertools
import math

import pytest

from aorta.compare import stats
from aorta.compare.stats import (EXACT_LIMIT, can_reach, mann_whitney, median,
                                 min_trials_per_side, smallest_p, trials_needed)


def brute_force_p(base, new):
    """Two-sided exact p by enumerating every split of the pooled values (untied data)."""
    pooled = list(base) + list(new)
    n1 = len(base)
    observed = sum(y > x for x in base for y in new)
    centre = len(base) * len(new) / 2
    extreme = total = 0
    for chosen in itertools.combinations(range(len(pooled)), n1):
        b = [pooled[i] for i in chosen]
        n = [pooled[i] for i in range(len(pooled)) if i not in chosen]
        u = sum(y > x for x in b for y in n)
        total += 1
        extreme += abs(u - centre) >= abs(observed - centre)
    return extreme / total


@pytest.mark.parametrize("base,new", [
    ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]),
    ([1.0, 5.0, 9.0, 2.5], [3.0, 4.0, 6.0, 7.0, 8.0]),
    ([10.0, 11.0, 12.0, 13.0, 14.0], [1.5, 10.5, 12.5, 20.0, 21.0]),
    ([2.0, 4.0], [1.0, 3.0, 5.0, 7.0, 9.0, 11.0]),
])
def test_exact_p_matches_enumeration(base, new):
    assert mann_whitney(base, new).p_value == pytest.approx(brute_force_p(base, new))


def test_known_values():
    # Complete separation of 5 vs 5: p = 2 / C(10, 5) = 2/252.
    result = mann_whitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    assert result.exact and result.u == 25
    assert result.p_value == pytest.approx(2 / 252)
    assert mann_whitney([6, 7, 8, 9, 10], [1, 2, 3, 4, 5]).u == 0
    assert mann_whitney([1.0] * 5, [1.0] * 5).p_value == 1.0


def test_ties_never_make_p_smaller():
    # Quantised timers tie; a tie scores one half and p is rounded towards 1.
    untied = mann_whitney([1.0, 2.0, 3.0, 4.0], [3.5, 5.0, 6.0, 7.0]).p_value
    tied = mann_whitney([1.0, 2.0, 3.0, 4.0], [4.0, 5.0, 6.0, 7.0]).p_value
    assert tied >= untied
    assert mann_whitney([1.0, 1.0, 2.0], [1.0, 2.0, 2.0]).u == 6.0   # 2.5 + 2.5 + 1


def test_normal_approximation_agrees_with_exact_near_the_switch():
    base = [float(i) for i in range(EXACT_LIMIT)]
    for shift in (3.3, 7.3, 12.3):
        new = [i + shift for i in range(EXACT_LIMIT)]
        exact = mann_whitney(base, new)
        assert exact.exact
        approx = stats._normal_p(exact.u, base, new)
        assert approx == pytest.approx(exact.p_value, rel=0.05, abs=1e-4)
    assert not mann_whitney(base + [99.5], new + [0.5]).exact


def test_large_sample_with_ties_uses_tie_corrected_normal():
    base = [1.0] * 40 + [2.0] * 40
    new = [1.0] * 20 + [2.0] * 60
    result = mann_whitney(base, new)
    assert not result.exact and 0.0 < result.p_value < 0.05
    assert mann_whitney([3.0] * 60, [3.0] * 60).p_value == 1.0


def test_small_samples_can_never_reach_alpha():
    assert smallest_p(3, 3) == pytest.approx(0.1)
    assert not can_reach(0.05, 3, 3)
    assert can_reach(0.05, 4, 4) and smallest_p(4, 4) == pytest.approx(2 / 70)
    assert not can_reach(0.05, 1, 100)        # one value has no spread to judge
    assert min_trials_per_side(0.05) == 4
    assert min_trials_per_side(0.01) == 5
    assert min_trials_per_side(0.001) == 7


def test_median():
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0, 3.0, 2.0]) == 2.5
    with pytest.raises(ValueError):
        median([])
    with pytest.raises(ValueError):
        mann_whitney([], [1.0])


def test_trials_needed_grows_with_noise_and_shrinks_with_the_effect():
    quiet = trials_needed([1.0, 1.01, 0.99, 1.0], [1.0, 1.02, 0.98, 1.01], 0.05, 0.05)
    noisy = trials_needed([1.0, 1.2, 0.8, 1.0], [1.0, 1.22, 0.85, 1.04], 0.05, 0.05)
    assert quiet is not None and noisy is not None and noisy > quiet >= 4
    # A clear change needs fewer trials to reach significance than a marginal one.
    clear = trials_needed([1.0, 1.1, 0.9], [1.5, 1.6, 1.4], 0.05, 0.05)
    marginal = trials_needed([1.0, 1.1, 0.9], [1.1, 1.2, 1.0], 0.05, 0.05)
    assert clear is not None and marginal is not None and marginal > clear


def test_trials_needed_refuses_what_trials_cannot_settle():
    # The medians differ by the threshold: no sample size moves the interval off the edge.
    assert trials_needed([1.0, 1.1, 0.9], [1.05, 1.155, 0.945], 0.05, 0.05) is None
    assert trials_needed([0.0, 0.0, 1.0], [1.0, 1.0, 1.0], 0.05, 0.05) is None
    # One value per side: only the guard's floor can be advised.
    assert trials_needed([1.0], [2.0], 0.05, 0.05) == 4
    # No spread at all: the floor is enough.
    assert trials_needed([2.0] * 3, [3.0] * 3, 0.05, 0.05) == 4


def test_sizes_formula_by_hand():
    # s = pooled SD of logs, d = 0: margin log(1.05); n = 2 * (1.2533 * s * 2.8016 / m)^2
    base = [math.exp(v) for v in (-0.1, 0.0, 0.1)]
    new = [math.exp(v) for v in (-0.1, 0.0, 0.1)]
    s, m = 0.1, math.log(1.05)
    expected = math.ceil(2 * (math.sqrt(math.pi / 2) * s * 2.8015852 / m) ** 2)
    assert trials_needed(base, new, 0.05, 0.05) == expected
