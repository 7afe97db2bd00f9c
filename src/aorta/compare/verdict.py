"""The verdict rule: from two samples of one metric to FASTER / SLOWER / SAME / UNCERTAIN.

With r = median(new) / median(base), its (1 - alpha) bootstrap interval [lo, hi], the
two-sided Mann-Whitney p and the band [1 - threshold, 1 + threshold]:

1. too few trials for the U test ever to reach alpha (3 per side at alpha 0.05): UNCERTAIN,
   whatever the numbers say; nothing is judged from samples that cannot be significant;
2. [lo, hi] inside the band: SAME, even when p is tiny (a real change, too small to matter);
3. p <= alpha and [lo, hi] wholly beyond the band, on the side the U statistic points to:
   SLOWER or FASTER (for a time; other kinds use their own words);
4. anything else: UNCERTAIN, with about how many more trials per side would likely settle it.

Rule 3 asks for the whole interval beyond the threshold, not just the estimate: SLOWER then
means "confidently more than threshold slower", so a change smaller than the threshold is
called SLOWER at most about alpha/2 of the time, however many trials there are, while a
rule on the estimate alone calls a true 4% change SLOWER in a third of 20-trial comparisons
at a 5% threshold. The price is trials: the UNCERTAIN advice says how many. A count gets no
statistics: SAME when the medians agree, CHANGED otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from aorta.compare.bootstrap import ratio_interval
from aorta.compare.kinds import MetricKind, direction_words
from aorta.compare.model import CompareSettings, Verdict
from aorta.compare.stats import can_reach, mann_whitney, median, trials_needed

__all__ = ["Judgement", "judge"]


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    base_median: float | None
    new_median: float | None
    ratio: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    more_trials: int | None = None
    note: str = ""


def judge(base: Sequence[float], new: Sequence[float], kind: MetricKind,
          settings: CompareSettings, seed: int) -> Judgement:
    """Judge one metric: `base` and `new` hold one value per passing trial."""
    if not base or not new:
        side = "base" if not base else "new"
        return Judgement("INCOMPARABLE", _median_or_none(base), _median_or_none(new),
                         note=f"no passing trial in {side} measured it")
    base_median, new_median = median(base), median(new)
    if kind == "count":
        return _judge_count(base_median, new_median)
    if base_median <= 0 or new_median <= 0:
        return Judgement("INCOMPARABLE", base_median, new_median,
                         note="a median is zero or negative, so a ratio means nothing")
    ratio = new_median / base_median
    low, high = ratio_interval(base, new, 1 - settings.alpha, settings.resamples, seed)
    test = mann_whitney(base, new)
    found = Judgement("UNCERTAIN", base_median, new_median, ratio, _bound(low), _bound(high),
                      test.p_value)
    if not can_reach(settings.alpha, len(base), len(new)):
        return _uncertain(found, base, new, settings,
                          f"{len(base)} vs {len(new)} trials can never reach "
                          f"p <= {settings.alpha:g}")
    band_low, band_high = 1 - settings.threshold, 1 + settings.threshold
    if band_low <= low and high <= band_high:
        note = (f"a real change (p = {test.p_value:.2g}) but within "
                f"+/-{settings.threshold:.0%}") if test.p_value <= settings.alpha else ""
        return _with(found, "SAME", note)
    down, up = direction_words(kind)
    centre = len(base) * len(new) / 2
    if test.p_value <= settings.alpha:
        if low > band_high and test.u > centre:
            return _with(found, up)
        if high < band_low and test.u < centre:
            return _with(found, down)
    return _uncertain(found, base, new, settings, "")


def _judge_count(base_median: float, new_median: float) -> Judgement:
    ratio = new_median / base_median if base_median > 0 else None
    if base_median == new_median:
        return Judgement("SAME", base_median, new_median, ratio)
    return Judgement("CHANGED", base_median, new_median, ratio,
                     note=f"{_plain(base_median)} -> {_plain(new_median)}")


def _uncertain(found: Judgement, base: Sequence[float], new: Sequence[float],
               settings: CompareSettings, why: str) -> Judgement:
    needed = trials_needed(base, new, settings.threshold, settings.alpha)
    if needed is None:
        advice = ("more trials are unlikely to settle it: the change is too close to the "
                  "threshold for this much noise")
        return _with(found, "UNCERTAIN", "; ".join(p for p in (why, advice) if p))
    more = max(1, needed - min(len(base), len(new)))
    return Judgement("UNCERTAIN", found.base_median, found.new_median, found.ratio,
                     found.ci_low, found.ci_high, found.p_value, more, why)


def _with(found: Judgement, verdict: str, note: str = "") -> Judgement:
    return Judgement(cast(Verdict, verdict), found.base_median, found.new_median, found.ratio,
                     found.ci_low, found.ci_high, found.p_value, None, note)


def _bound(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _median_or_none(values: Sequence[float]) -> float | None:
    return median(values) if values else None


def _plain(value: float) -> str:
    return f"{value:g}"
