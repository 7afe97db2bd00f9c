"""The more-trials advice: a range over the plausible truths, never one noisy number."""

from __future__ import annotations

import math

import pytest

from aorta.stats.advice import Advice, advise, assurance

EDGES = (math.log(0.95), math.log(1.05))


def test_assurance_by_hand():
    # A sure truth (no uncertainty) in the middle of the band, 0.02 of spread, 10 trials:
    # e ~ N(0, S^2), S = 1.2533 * 0.02 * sqrt(2/10); settled iff |e| < 0.0488 - 1.96 S.
    s = math.sqrt(math.pi / 2) * 0.02 * math.sqrt(2 / 10)
    inside = math.log(1.05) - 1.959964 * s
    outside_low = math.log(0.95) + 1.959964 * s
    expected = (0.5 * math.erfc(-inside / (s * math.sqrt(2)))
                - 0.5 * math.erfc(-outside_low / (s * math.sqrt(2))))
    assert assurance(10, 0.0, 0.0, 0.02, EDGES, 0.05) == pytest.approx(expected, rel=1e-6)


def test_assurance_rises_with_trials_and_doubt_cuts_both_ways():
    chances = [assurance(n, 0.03, 0.02, 0.05, EDGES, 0.05) for n in (5, 20, 80, 320, 5000)]
    assert chances == sorted(chances) and chances[-1] > 0.9
    # Mid-band, doubt about the change can only move it towards an edge...
    assert assurance(40, 0.0, 0.02, 0.05, EDGES, 0.05) < assurance(40, 0.0, 0.0, 0.05,
                                                                    EDGES, 0.05)
    # ... while near an edge it may as well move it away, where trials settle it sooner.
    assert assurance(40, 0.03, 0.04, 0.05, EDGES, 0.05) > assurance(40, 0.03, 0.0, 0.05,
                                                                     EDGES, 0.05)


def test_range_is_ordered_and_grows_with_noise():
    quiet = advise([1.0, 1.01, 0.99, 1.0], [1.0, 1.02, 0.98, 1.01], 0.05, 0.05)
    noisy = advise([1.0, 1.2, 0.8, 1.0], [1.0, 1.22, 0.85, 1.04], 0.05, 0.05)
    assert quiet is not None and noisy is not None and noisy.high is not None
    assert quiet.high is not None and quiet.low <= quiet.high
    assert noisy.low > quiet.low and noisy.high > quiet.high


def test_a_change_at_the_edge_still_gets_a_finite_range():
    # The medians differ by the threshold: the old advice said "more trials are unlikely to
    # settle it"; but the truth is only known to within its error, and on either side of the
    # edge more trials do settle it.
    advice = advise([1.0, 1.1, 0.9, 1.05, 0.95], [1.05, 1.155, 0.945, 1.1025, 0.9975],
                    0.05, 0.05)
    assert advice is not None and advice.high is not None and 1 <= advice.low < advice.high


def test_degenerate_samples():
    assert advise([0.0, 0.0, 1.0], [1.0, 1.0, 1.0], 0.05, 0.05) is None
    assert advise([1.0], [2.0], 0.05, 0.05) == Advice(3, 3)        # the guard's floor: 4
    assert advise([2.0] * 3, [3.0] * 3, 0.05, 0.05) == Advice(1, 1)


def test_advice_records_check_themselves():
    with pytest.raises(ValueError):
        Advice(0, 3)
    with pytest.raises(ValueError):
        Advice(5, 3)
