"""The rank test and its small-sample guard, against exact enumeration of every split."""

from __future__ import annotations

import itertools
import random

import pytest

from aorta.stats import rank_test
from aorta.stats.rank_test import (EXACT_LIMIT, can_reach, mann_whitney, min_trials_per_side,
                                   smallest_p)


def half_u(base, new):
    return sum(1.0 if y > x else 0.5 if y == x else 0.0 for x in base for y in new)


def permutation_p(base, new):
    """Two-sided exact permutation p of U (ties as half-wins), by enumerating every split of
    the pooled values: the reference, independent of the counting code."""
    pooled = list(base) + list(new)
    centre = len(base) * len(new) / 2
    observed = abs(half_u(base, new) - centre)
    extreme = total = 0
    for chosen in itertools.combinations(range(len(pooled)), len(base)):
        rest = [pooled[i] for i in range(len(pooled)) if i not in chosen]
        total += 1
        extreme += abs(half_u([pooled[i] for i in chosen], rest) - centre) >= observed - 1e-9
    return extreme / total


@pytest.mark.parametrize("base,new", [
    ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]),
    ([1.0, 5.0, 9.0, 2.5], [3.0, 4.0, 6.0, 7.0, 8.0]),
    ([10.0, 11.0, 12.0, 13.0, 14.0], [1.5, 10.5, 12.5, 20.0, 21.0]),
    ([2.0, 4.0], [1.0, 3.0, 5.0, 7.0, 9.0, 11.0]),
])
def test_exact_p_matches_enumeration(base, new):
    result = mann_whitney(base, new)
    assert result.exact
    assert result.p_value == pytest.approx(permutation_p(base, new))


def test_ties_use_the_exact_tied_distribution():
    # Issue 13: the untied null distribution gave p = 0.042 here; counting every split with
    # the ties as they are gives 20/330 = 0.0606.
    result = mann_whitney([1, 2, 2, 3], [2, 3, 3, 4, 4, 4, 5])
    assert result.exact
    assert result.p_value == pytest.approx(permutation_p([1, 2, 2, 3], [2, 3, 3, 4, 4, 4, 5]))
    assert result.p_value == pytest.approx(20 / 330)


def test_tied_p_matches_enumeration_on_random_tie_patterns():
    rng = random.Random(13)
    smaller = 0
    for _ in range(120):
        levels = rng.choice([[1, 2], [1, 2, 3], [1, 2, 3, 4, 5], [0.5, 1.0, 1.5, 9.0]])
        base = [rng.choice(levels) for _ in range(rng.randint(1, 6))]
        new = [rng.choice(levels) for _ in range(rng.randint(1, 6))]
        exact = permutation_p(base, new)
        assert mann_whitney(base, new).p_value == pytest.approx(exact, abs=1e-12)
        smaller += rank_test._exact_p(round(half_u(base, new)), len(base), len(new)) < exact - 1e-9
    # The untied distribution would have understated p for some of these patterns.
    assert smaller > 0


def test_known_values():
    # Complete separation of 5 vs 5: p = 2 / C(10, 5) = 2/252.
    result = mann_whitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    assert result.exact and result.u == 25
    assert result.p_value == pytest.approx(2 / 252)
    assert mann_whitney([6, 7, 8, 9, 10], [1, 2, 3, 4, 5]).u == 0
    assert mann_whitney([1.0] * 5, [1.0] * 5).p_value == 1.0
    assert mann_whitney([1.0, 1.0, 2.0], [1.0, 2.0, 2.0]).u == 6.0   # 2.5 + 2.5 + 1


def test_normal_approximation_agrees_with_exact_near_the_switch():
    base = [float(i) for i in range(EXACT_LIMIT)]
    for shift in (3.3, 7.3, 12.3):
        new = [i + shift for i in range(EXACT_LIMIT)]
        exact = mann_whitney(base, new)
        assert exact.exact
        approx = rank_test._normal_p(exact.u, len(base), len(new), sorted(base + new))
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


def test_smallest_p_is_the_least_p_any_tie_pattern_gives():
    # Every tie pattern of the pooled values (a pattern: which neighbours in sorted order are
    # equal) and every split, up to 4 vs 5: the guard's floor is the least p the test gives.
    for n1, n2 in itertools.combinations_with_replacement(range(1, 6), 2):
        if n1 > 4:
            continue
        n = n1 + n2
        least = 1.0
        for equal in itertools.product((False, True), repeat=n - 1):
            values = list(itertools.accumulate((0, *equal), lambda v, same: v + (not same)))
            for chosen in itertools.combinations(range(n), n1):
                base = [values[i] for i in chosen]
                new = [values[i] for i in range(n) if i not in chosen]
                least = min(least, mann_whitney(base, new).p_value)
        assert least == pytest.approx(smallest_p(n1, n2)), (n1, n2)


def test_ties_let_three_against_four_reach_alpha():
    # Untied, 3 vs 4 gives p >= 2/35 = 0.057; four tied values above three reach 1/35.
    assert mann_whitney([1.0, 2.0, 3.0], [4.0] * 4).p_value == pytest.approx(1 / 35)
    assert smallest_p(3, 4) == pytest.approx(1 / 35) and can_reach(0.05, 3, 4)


def test_an_empty_side_is_an_error():
    with pytest.raises(ValueError):
        mann_whitney([], [1.0])


def test_one_tied_pair_at_fourteen_a_side_is_still_exact():
    base = [float(i) for i in range(14)]
    new = [i + 0.5 for i in range(14)]
    new[0] = base[3]
    assert mann_whitney(base, new).exact


def test_past_the_tied_limit_the_normal_approximation_is_close(monkeypatch):
    # Tied samples of 26-40 a side get the tie-corrected normal p; against the exact one
    # (counted here with the limit lifted) bench/bench_rank_ties.py measured it within 9% for
    # p in [0.005, 0.2], never more than 0.3% below it.
    rng = random.Random(5)
    compared = 0
    for _ in range(40):
        n1, n2 = (rng.randint(rank_test.TIED_EXACT_LIMIT + 1, 40) for _ in "ab")
        levels = rng.choice([40, 100, 1000])
        base = [rng.randint(0, levels) for _ in range(n1)]
        new = [rng.randint(0, levels) + levels // 8 for _ in range(n2)]
        test = mann_whitney(base, new)
        assert not test.exact
        with monkeypatch.context() as patch:
            patch.setattr(rank_test, "TIED_EXACT_LIMIT", rank_test.EXACT_LIMIT)
            exact = mann_whitney(base, new)
        assert exact.exact
        if 0.005 <= exact.p_value <= 0.2:
            compared += 1
            assert abs(test.p_value - exact.p_value) <= 0.15 * exact.p_value
            assert test.p_value >= 0.99 * exact.p_value
    assert compared >= 8
