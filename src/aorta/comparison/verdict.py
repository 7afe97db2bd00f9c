"""The verdict rule: from two samples of one metric to FASTER / SLOWER / SAME / UNCERTAIN, or
INCOMPARABLE where no ratio of medians describes them (`ratio_problem`).
With [lo, hi] the exact (1 - alpha) interval of median(new) / median(base), p the U test's
(adjusted under `--correction`) and the band [1 - threshold, 1 + threshold], in order:
1. too few trials for p ever to reach alpha: UNCERTAIN; 2. [lo, hi] inside the band: SAME;
3. p <= alpha and [lo, hi] wholly beyond the band, on the U statistic's side: SLOWER or FASTER;
4. else UNCERTAIN, with advice. A count gets SAME or CHANGED. `measure` and `decide` are apart
so that p-values can be adjusted across rows in between. Why, and the cost: docs/compare.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median
from typing import NamedTuple, cast

from aorta.comparison.kinds import MetricKind, direction_words
from aorta.comparison.model import CompareSettings, Verdict
from aorta.rendering import fmt
from aorta.stats.advice import advise
from aorta.stats.interval import ratio_interval
from aorta.stats.rank_test import RankTest, can_reach, mann_whitney


class Judgement(NamedTuple):
    """One row's verdict and the numbers behind it, named as `Row` names them."""

    verdict: Verdict
    base_median: float | None
    new_median: float | None
    ratio: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    more_trials: int | None = None
    more_trials_high: int | None = None
    note: str = ""
    p_adjusted: float | None = None


@dataclass(frozen=True)
class Measurement:
    """What one row's samples say before any rule: medians, ratio, interval and test."""

    base: tuple[float, ...]
    new: tuple[float, ...]
    kind: MetricKind
    found: Judgement              # UNCERTAIN with the numbers filled in
    test: RankTest


def measure(base: Sequence[float], new: Sequence[float], kind: MetricKind,
            settings: CompareSettings) -> Measurement | Judgement:
    """The row's numbers, or its final Judgement when it gets no statistics (a count, a side
    with no values, samples no ratio describes: `ratio_problem`)."""
    if not base or not new:
        return Judgement("INCOMPARABLE", median(base) if base else None,
                         median(new) if new else None,
                         note=f"no passing trial in {'base' if not base else 'new'} measured it")
    base_median, new_median = median(base), median(new)
    if kind == "count":
        ratio = new_median / base_median if base_median > 0 else None
        if base_median == new_median:
            return Judgement("SAME", base_median, new_median, ratio)
        return Judgement("CHANGED", base_median, new_median, ratio,
                         note=f"{fmt(base_median)} -> {fmt(new_median)}")
    problem = ratio_problem(base, new)
    if problem:
        return Judgement("INCOMPARABLE", base_median, new_median, note=problem)
    low, high = ratio_interval(base, new, 1 - settings.alpha)
    test = mann_whitney(base, new)
    found = Judgement("UNCERTAIN", base_median, new_median, new_median / base_median,
                      low if math.isfinite(low) else None, high if math.isfinite(high) else None,
                      test.p_value)
    return Measurement(tuple(base), tuple(new), kind, found, test)


def ratio_problem(base: Sequence[float], new: Sequence[float]) -> str:
    """Why median(new) / median(base) cannot describe these samples, in words ('' when it
    can). A ratio compares sizes of one sign: every value must be >= 0 (a kernel a trial never
    ran measured 0 ms), both medians above 0, and their ratio a finite number above 0. Negative
    values would flip the interval's ends and the direction words. The one rule for compare's
    rows and history's steps."""
    why = ""
    for side, values in (("base", base), ("new", new)):
        if not why and min(values) < 0:
            signs = "values of both signs" if max(values) > 0 else "negative values"
            why = f"{side} has {signs}, so no ratio of medians describes the change"
    b, n = median(base), median(new)
    if not why and (b == 0 or n == 0):
        why = f"the {'base' if b == 0 else 'new'} median is zero, so a ratio means nothing"
    elif not why and not 0 < n / b < math.inf:
        side, value = ("base", b) if n / b == math.inf else ("new", n)
        why = (f"the {side} median {fmt(value)} is too close to zero for a ratio (new / base "
               f"is not a finite number above 0)")
    if why and min(new) > max(base):
        why += "; every new value is above every base value"
    elif why and max(new) < min(base):
        why += "; every new value is below every base value"
    return why


def decide(m: Measurement, settings: CompareSettings, adjusted: float | None = None,
           level: float | None = None) -> Judgement:
    """The rule. `adjusted`: the row's p corrected across rows (None: its own p decides);
    `level`: what its own p must then reach (default alpha), which the trial advice aims at."""
    p = m.test.p_value if adjusted is None else adjusted
    alpha = settings.alpha if level is None else level
    found = m.found if adjusted is None else m.found._replace(p_adjusted=adjusted)
    n_base, n_new = len(m.base), len(m.new)
    if not can_reach(settings.alpha, n_base, n_new):
        return _uncertain(found, m, settings.threshold, alpha,
                          f"{n_base} vs {n_new} trials can never reach p <= {settings.alpha:g}")
    centre = n_base * n_new / 2
    side = (m.test.u > centre) - (m.test.u < centre)
    verdict = band_verdict(found.ci_low, found.ci_high, p, side, m.kind, settings)
    if verdict == "UNCERTAIN":
        return _uncertain(found, m, settings.threshold, alpha, "")
    note = (f"a real change (p = {p:.2g}) but within +/-{settings.threshold:.0%}"
            if verdict == "SAME" and p <= settings.alpha else "")
    return found._replace(verdict=verdict, note=note)


def band_verdict(low: float | None, high: float | None, p: float, side: int, kind: MetricKind,
                 settings: CompareSettings) -> Verdict:
    """Rules 2 to 4 for a ratio's interval [low, high] (None: unbounded) and its test's p, the
    test pointing `side` (+1: new larger, -1: smaller, 0: neither): SAME, the kind's direction
    word, or UNCERTAIN. History judges its steps with it."""
    low = -math.inf if low is None else low
    high = math.inf if high is None else high
    if 1 - settings.threshold <= low and high <= 1 + settings.threshold:
        return "SAME"
    down, up = direction_words(kind)
    if p <= settings.alpha and low > 1 + settings.threshold and side > 0:
        return cast(Verdict, up)
    if p <= settings.alpha and high < 1 - settings.threshold and side < 0:
        return cast(Verdict, down)
    return "UNCERTAIN"


def _uncertain(found: Judgement, m: Measurement, threshold: float, alpha: float,
               why: str) -> Judgement:
    advice = advise(m.base, m.new, threshold, alpha)
    low, high = (None, None) if advice is None else (advice.low, advice.high)
    return found._replace(more_trials=low, more_trials_high=high, note=why)
