"""Adjusting p-values across the rows of a comparison: Holm and Benjamini-Hochberg."""

from __future__ import annotations

import random

import pytest

from aorta.stats.family import adjust

P = [0.01, 0.04, 0.03, 0.005, 0.2]


def test_holm_by_hand():
    # Sorted: 0.005 (x5), 0.01 (x4), 0.03 (x3), 0.04 (x2), 0.2 (x1), running maximum.
    assert adjust(P, "holm") == pytest.approx([0.04, 0.09, 0.09, 0.025, 0.2])


def test_bh_by_hand():
    # Sorted: 0.005*5/1, 0.01*5/2, 0.03*5/3, 0.04*5/4, 0.2*5/5, running minimum from the top.
    assert adjust(P, "bh") == pytest.approx([0.025, 0.05, 0.05, 0.025, 0.2])


def test_properties_on_random_families():
    rng = random.Random(1)
    for _ in range(200):
        p = [rng.random() ** 3 for _ in range(rng.randint(1, 30))]
        holm, bh = adjust(p, "holm"), adjust(p, "bh")
        assert all(raw <= b <= h <= 1 for raw, b, h in zip(p, bh, holm))
        order = sorted(range(len(p)), key=p.__getitem__)
        for adjusted in (holm, bh):            # the order of the p-values is kept
            assert [adjusted[k] for k in order] == sorted(adjusted)


def test_none_and_empty():
    assert adjust(P, "none") == P
    assert adjust([], "holm") == []
    with pytest.raises(ValueError):
        adjust(P, "bonferroni")  # type: ignore[arg-type]
