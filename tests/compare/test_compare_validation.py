"""Honest statistics: simulated pairs of runs, with fixed seeds, so the figures never flake.

Trials are lognormal (timings are positive and right-skewed) with a coefficient of variation
of 5-10%, as seen run to run on a shared GPU node.

Bounds. Under "no change", SLOWER or FASTER needs U-test significance, whose exact rate is at
most alpha, so the false-positive rate must stay below alpha (with the threshold it is far
below); over 500 pairs a binomial standard error is about 1%, and the bound asserted is
alpha + 3 standard errors (0.079), under the 2 * alpha the issue allows. The measured figures
are quoted next to each assert.
"""

from __future__ import annotations

import math
import random

from aorta.compare.bootstrap import ratio_interval
from aorta.compare.model import CompareSettings
from aorta.compare.verdict import judge

ALPHA = 0.05
PAIRS = 500
FP_BOUND = ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / PAIRS)   # 0.079


def simulate(n, cv, shift, threshold=0.05, pairs=PAIRS, seed=11):
    """Verdict counts over `pairs` simulated comparisons of n trials per side."""
    rng = random.Random(seed)
    sigma = math.sqrt(math.log(1 + cv ** 2))          # lognormal with this CV
    settings = CompareSettings(threshold=threshold, alpha=ALPHA)
    counts: dict[str, int] = {}
    for k in range(pairs):
        base = [rng.lognormvariate(0, sigma) for _ in range(n)]
        new = [rng.lognormvariate(0, sigma) * (1 + shift) for _ in range(n)]
        verdict = judge(base, new, "time", settings, seed=k).verdict
        counts[verdict] = counts.get(verdict, 0) + 1
    return counts


def rate(counts, *verdicts):
    return sum(counts.get(v, 0) for v in verdicts) / sum(counts.values())


def test_false_positives_five_trials_cv_5_percent():
    counts = simulate(n=5, cv=0.05, shift=0.0)
    assert rate(counts, "SLOWER", "FASTER") <= FP_BOUND        # measured: 0.000


def test_false_positives_five_trials_cv_10_percent():
    counts = simulate(n=5, cv=0.10, shift=0.0)
    assert rate(counts, "SLOWER", "FASTER") <= FP_BOUND        # measured: 0.002


def test_false_positives_without_a_threshold_are_the_tests_own_rate():
    # threshold 0 leaves the U test alone to decide. With 5 vs 5 the attainable two-sided
    # p-values are 2, 4, 8, 14... out of 252, so the test's true size at alpha 0.05 is
    # 8/252 = 0.032: the simulated rate must match it (neither above nor far below).
    counts = simulate(n=5, cv=0.10, shift=0.0, threshold=0.0)
    size = 8 / 252
    error = 3 * math.sqrt(size * (1 - size) / PAIRS)
    assert abs(rate(counts, "SLOWER", "FASTER") - size) <= error   # measured: 0.032


def test_a_real_ten_percent_slowdown_is_found():
    # SLOWER needs the whole interval beyond +5%, so a 10% change needs enough trials to
    # pin the ratio within about +/-4%: 60 per side at CV 5%, or 20 at CV 3%.
    counts = simulate(n=60, cv=0.05, shift=0.10, pairs=200)
    assert rate(counts, "SLOWER") >= 0.90                      # measured: 0.99
    assert rate(counts, "FASTER") == 0.0
    counts = simulate(n=20, cv=0.03, shift=0.10, pairs=300)
    assert rate(counts, "SLOWER") >= 0.90                      # measured: 0.99


def test_a_change_below_the_threshold_is_not_called_slower():
    # A real 4% slowdown against a 5% threshold: significant with many trials, but never
    # "more than 5% slower". The rule bounds this at about alpha/2 = 0.025.
    for n in (20, 60):
        counts = simulate(n=n, cv=0.05, shift=0.04, pairs=200)
        assert rate(counts, "SLOWER") <= 0.03                  # measured: 0.0 at both


def test_few_trials_stay_uncertain_rather_than_guess():
    # 5 trials at CV 10% cannot resolve a 10% change reliably (found in 0.06 of pairs): what
    # is not found must be UNCERTAIN, never the wrong direction.
    counts = simulate(n=5, cv=0.10, shift=0.10, pairs=300)
    assert rate(counts, "FASTER", "SAME") <= 0.01
    assert rate(counts, "SLOWER") + rate(counts, "UNCERTAIN") >= 0.99


def advised_rerun(n, shift, pairs, seed, cap):
    """(asked, settled): UNCERTAIN comparisons of n trials, rerun with the advised number."""
    rng = random.Random(seed)
    sigma = math.sqrt(math.log(1 + 0.05 ** 2))
    settings = CompareSettings()
    settled = asked = 0

    def sample(size):
        return ([rng.lognormvariate(0, sigma) for _ in range(size)],
                [rng.lognormvariate(0, sigma) * (1 + shift) for _ in range(size)])

    for k in range(pairs):
        first = judge(*sample(n), "time", settings, seed=k)
        if first.verdict != "UNCERTAIN" or first.more_trials is None:
            continue
        if first.more_trials > cap:
            continue                  # keep the test fast; these are the rare wild guesses
        asked += 1
        second = judge(*sample(n + first.more_trials), "time", settings, seed=k)
        settled += second.verdict == ("SAME" if shift == 0 else "SLOWER")
    return asked, settled


def test_more_trials_advice_mostly_settles_it():
    # No change, 5 trials: rerun with the advised count, and count how many read SAME.
    asked, settled = advised_rerun(n=5, shift=0.0, pairs=200, seed=5, cap=120)
    assert asked >= 100
    assert settled / asked >= 0.5                  # measured: 81 of 112 (0.72)
    # A real 10% slowdown, 10 trials: rerun with the advice, and count how many read SLOWER.
    asked, settled = advised_rerun(n=10, shift=0.10, pairs=120, seed=6, cap=100)
    assert asked >= 40
    assert settled / asked >= 0.5                  # measured: 37 of 50 (0.74)


def test_interval_covers_the_true_ratio():
    # A 95% interval should hold the true ratio (here 1.0) in about 95% of pairs.
    rng = random.Random(1)
    sigma = math.sqrt(math.log(1 + 0.05 ** 2))
    covered = 0
    for k in range(400):
        base = [rng.lognormvariate(0, sigma) for _ in range(5)]
        new = [rng.lognormvariate(0, sigma) for _ in range(5)]
        low, high = ratio_interval(base, new, 0.95, seed=k)
        covered += low <= 1.0 <= high
    assert covered / 400 >= 0.90                              # measured: 0.96


def test_a_real_change_beyond_the_threshold_is_not_called_same():
    # SAME is a claim too: a true 8% slowdown must (almost) never read as within +/-5%.
    for n in (5, 20):
        counts = simulate(n=n, cv=0.05, shift=0.08, pairs=200)
        assert rate(counts, "SAME", "FASTER") <= 0.02          # measured: 0.0 at both
