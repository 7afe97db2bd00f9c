"""Null distributions of the rank statistic, counted exactly, against listing every split."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from aorta.stats.rank_null import tied_tails, untied_cumulative


def doubled_rank_sums(groups, drawn):
    """2 x rank sum of every choice of `drawn` positions, mid-ranks for tied groups."""
    ranks = []
    for size in groups:
        ranks += [2 * len(ranks) + size + 1] * size
    return [sum(ranks[i] for i in chosen)
            for chosen in itertools.combinations(range(len(ranks)), drawn)]


@pytest.mark.parametrize("n1,n2", [(1, 1), (2, 3), (4, 4), (3, 6), (5, 5)])
def test_untied_counts_match_enumeration(n1, n2):
    counts = [0] * (n1 * n2 + 1)
    for chosen in itertools.combinations(range(n1 + n2), n2):
        # U = pairs where the chosen sample is larger = rank sum - n2 (n2 + 1) / 2
        counts[sum(i + 1 for i in chosen) - n2 * (n2 + 1) // 2] += 1
    running = list(itertools.accumulate(counts))
    assert untied_cumulative(n1, n2) == tuple(running) == untied_cumulative(n2, n1)
    assert running[-1] == math.comb(n1 + n2, n1)


def test_tied_tails_match_enumeration():
    rng = random.Random(2)
    for _ in range(200):
        groups = [rng.choice([1, 1, 2, 3, 4]) for _ in range(rng.randint(1, 6))]
        total = sum(groups)
        drawn = rng.randint(0, total)
        sums = doubled_rank_sums(groups, drawn)
        low = rng.randint(min(sums) - 3, max(sums) + 3)
        high = rng.randint(min(sums) - 3, max(sums) + 3)
        assert tied_tails(groups, drawn, low, high) == (
            sum(s <= low for s in sums), sum(s >= high for s in sums))


def test_one_group_and_no_ties_are_the_plain_cases():
    assert tied_tails([5], 2, 12, 12) == (10, 10)           # every split has T = 2 x 6
    untied = untied_cumulative(3, 4)
    # T <= 2 x (6 + 2) is U <= 2 for the 3 drawn values.
    assert tied_tails([1] * 7, 3, 16, 10 ** 6) == (untied[2], 0)


def test_drawing_more_values_than_there_are_is_an_error():
    with pytest.raises(ValueError):
        tied_tails([2, 2], 5, 0, 0)


def test_tails_near_the_centre_match_enumeration():
    # As the rank test asks (centre -/+ distance): near the centre both tails are wide and
    # one count up to `high` replaces the two (issue 13); counts must not move.
    rng = random.Random(13)
    for _ in range(150):
        groups = [rng.choice([1, 1, 1, 1, 2, 3]) for _ in range(rng.randint(4, 9))]
        total = sum(groups)
        drawn = rng.randint(1, total - 1)
        sums = doubled_rank_sums(groups, drawn)
        centre = drawn * (total + 1)
        for distance in (0, 1, 2, 3, 5, 8, rng.randint(0, max(sums) - centre + 2)):
            low, high = centre - distance, centre + distance
            assert tied_tails(groups, drawn, low, high) == (
                sum(s <= low for s in sums), sum(s >= high for s in sums)), (groups, drawn, distance)
