"""Detected changes in a series: where, how large, which way, whether a regression. Detectors
see each run's log median over the whole series; each step is then measured on the medians of
up to `SIDE_RUNS` runs each side, each run one observation, and judged by compare's rule
(docs/history.md, "Finding steps").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from statistics import fmean, median
from typing import cast

from aorta.comparison.kinds import REGRESSIONS, MetricKind, metric_kind
from aorta.comparison.model import CompareSettings
from aorta.comparison.verdict import Measurement, band_verdict, decide, measure, ratio_problem
from aorta.history.detect import detect_bic
from aorta.history.model import Change, ChangeVerdict, Series
from aorta.stats import student_t

Detector = Callable[[Sequence[float]], list[int]]     # log medians -> first run after each step
SIDE_RUNS = 10      # runs each side of a step whose medians measure its size


def log_medians(groups: Sequence[Sequence[float]]) -> list[float]:
    """One number per run: the log of its median (values <= 0: the median itself, scaled by
    the largest magnitude, so steps are still relative)."""
    medians = [median(g) for g in groups]
    if all(m > 0 for m in medians):
        return [math.log(m) for m in medians]
    scale = max((abs(m) for m in medians), default=1.0) or 1.0
    return [m / scale for m in medians]


def find_steps(groups: Sequence[Sequence[float]], detector: Detector = detect_bic) -> list[int]:
    """Positions (first run after) of the steps in the whole series. A lone run fenced by a
    step each side is an outlier, set aside before searching again; never the newest, so a
    step at the last run, the one a CI gate must see, still shows."""
    points = log_medians(groups)
    kept = list(range(len(points)))
    while True:
        steps = detector([points[i] for i in kept])
        lone = {p for p in steps if p + 1 in steps and p + 1 < len(kept)}
        if not lone:
            return [kept[p] for p in steps]
        kept = [k for i, k in enumerate(kept) if i not in lone]


def judged(change: Change, p: float, kind: MetricKind, threshold: float) -> Change | None:
    """`change` with the verdict compare's rule gives it for the test's `p`: a direction word or
    UNCERTAIN; a count CHANGED, never a regression; None for SAME (not reported)."""
    if kind == "count":
        verdict = "SAME" if abs(change.ratio - 1) < threshold else "CHANGED"
    else:
        side = (change.ratio > 1) - (change.ratio < 1)
        verdict = band_verdict(change.low, change.high, p, side, kind,
                               CompareSettings(threshold=threshold, alpha=1 - change.level))
    if verdict == "SAME":
        return None
    return replace(change, verdict=cast(ChangeVerdict, verdict), regression=verdict in REGRESSIONS)


def step_size(before: Sequence[float], after: Sequence[float],
              level: float) -> tuple[float, float, float, float]:
    """(ratio, low, high, p) of a step between two sets of positive run medians: on their logs,
    the difference of means with Student's t interval and test, the variance pooled within the
    two sides, so run-to-run variation is what the interval is made of. Fewer than 3 runs:
    no test, (ratio, 0, inf, 1)."""
    b, a = [math.log(v) for v in before], [math.log(v) for v in after]
    shift, df = fmean(a) - fmean(b), len(a) + len(b) - 2
    if df < 1:
        return math.exp(shift), 0.0, math.inf, 1.0
    pooled = (sum((v - fmean(b)) ** 2 for v in b) + sum((v - fmean(a)) ** 2 for v in a)) / df
    se = math.sqrt(pooled * (1 / len(a) + 1 / len(b)))
    p = 1 - student_t.within(shift / se, df) if se > 0 else float(shift == 0)
    half = student_t.quantile(level, df) * se
    return math.exp(shift), math.exp(shift - half), math.exp(shift + half), p


def detect_changes(series: Series, threshold: float = 0.05, level: float = 0.95,
                   detector: Detector = detect_bic) -> list[Change]:
    """The changes in `series`, oldest first, with the verdict compare's rule gives them over
    runs; SAME steps are dropped. A FASTER or SLOWER also needs compare's verdict on the trials
    of those runs to agree: one run whose median is itself an outlier, two slow trials of
    three, is not a step. Points of runs that were not complete are left out: they can
    neither make nor hide a step."""
    trusted = [position for position, p in enumerate(series.points) if p.run.complete]
    groups = [series.points[position].values for position in trusted]
    steps = find_steps(groups, detector) if len(groups) > 1 else []
    kind, medians = metric_kind(series.unit_name), [median(g) for g in groups]
    settings = CompareSettings(threshold=threshold, alpha=1 - level)
    out = []
    bounds = [0, *steps, len(groups)]
    for number, position in enumerate(steps, start=1):
        first = max(bounds[number - 1], position - SIDE_RUNS)
        last = min(bounds[number + 1], position + SIDE_RUNS)
        before, after = medians[first:position], medians[position:last]
        if ratio_problem(before, after) or min(before + after) <= 0:   # compare's INCOMPARABLE
            continue
        ratio, low, high, p = step_size(before, after, level)
        trials = measure([v for g in groups[first:position] for v in g],
                         [v for g in groups[position:last] for v in g], kind, settings)
        trials = decide(trials, settings) if isinstance(trials, Measurement) else trials
        change = judged(Change(trusted[position], series.points[trusted[position - 1]].run,
                               series.points[trusted[position]].run, ratio, low, high, level,
                               "UNCERTAIN", False, p), p, kind, threshold)
        if change and kind != "count" and change.verdict not in ("UNCERTAIN", trials.verdict):
            change = replace(change, verdict="UNCERTAIN", regression=False)
        out += [change] if change else []
    return out
