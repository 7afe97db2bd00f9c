"""Detected changes in a series: where, how large (ratio of medians, bootstrap interval), which
way, whether a regression. Detectors see each run's log median; each step is then measured on
the trials of up to `SIDE_RUNS` runs each side (docs/history.md, "Finding steps").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from statistics import median
from typing import cast

from aorta.comparison.kinds import REGRESSIONS, direction_words, metric_kind
from aorta.comparison.verdict import ratio_problem
from aorta.history.detect import detect_bayes, detect_bic
from aorta.history.model import Change, ChangeVerdict, Series
from aorta.stats.interval import ratio_interval

Detector = Callable[[Sequence[float]], list[int]]
METHODS: dict[str, Detector] = {"bayes": detect_bayes, "bic": detect_bic}
DEFAULT_METHOD = "bic"
WINDOW = 120        # newest runs of a series searched for steps (cost grows with its square)
SIDE_RUNS = 10      # runs each side of a step whose trials measure its size


def log_medians(groups: Sequence[Sequence[float]]) -> list[float]:
    """One number per run: the log of its median (values <= 0: the median itself, scaled by
    the largest magnitude, so steps are still relative)."""
    medians = [median(g) for g in groups]
    if all(m > 0 for m in medians):
        return [math.log(m) for m in medians]
    scale = max((abs(m) for m in medians), default=1.0) or 1.0
    return [m / scale for m in medians]


def find_steps(groups: Sequence[Sequence[float]], method: str = DEFAULT_METHOD) -> list[int]:
    """Positions (first run after) of the steps in the newest `WINDOW` runs. A lone run fenced by
    a step each side is an outlier, set aside before searching again; never the newest, so a
    step at the last run, the one a CI gate must see, still shows."""
    start = max(0, len(groups) - WINDOW)
    points = log_medians(groups[start:])
    kept = list(range(len(points)))
    for _ in range(len(points)):
        steps = METHODS[method]([points[i] for i in kept])
        lone = [p for p in steps if p + 1 in steps and p + 1 < len(kept)]
        if not lone:
            return [start + kept[p] for p in steps]
        del kept[lone[0]]
    return []


def detect_changes(series: Series, method: str = DEFAULT_METHOD, threshold: float = 0.05,
                   level: float = 0.95) -> list[Change]:
    """The changes in `series`, oldest first; a step within `threshold` of 1 is dropped (as
    compare's SAME). A regression: SLOWER or LARGER, its whole interval beyond 1. Points of
    runs that were not complete are left out: they can neither make nor hide a step."""
    trusted = [position for position, p in enumerate(series.points) if p.run.complete]
    groups = [series.points[position].values for position in trusted]
    steps = find_steps(groups, method) if len(groups) > 1 else []
    kind = metric_kind(series.unit_name)
    out = []
    bounds = [0, *steps, len(groups)]
    for number, position in enumerate(steps, start=1):
        before_start = max(bounds[number - 1], position - SIDE_RUNS)
        after_end = min(bounds[number + 1], position + SIDE_RUNS)
        before = [v for g in groups[before_start:position] for v in g]
        after = [v for g in groups[position:after_end] for v in g]
        if ratio_problem(before, after):     # as compare's INCOMPARABLE: no ratio, no step
            continue
        ratio = median(after) / median(before)
        if abs(ratio - 1) < threshold:
            continue
        low, high = ratio_interval(before, after, level)
        verdict = "CHANGED" if kind == "count" else direction_words(kind)[ratio > 1]
        regression = verdict in REGRESSIONS and (low > 1 if ratio > 1 else high < 1)
        out.append(Change(trusted[position], series.points[trusted[position - 1]].run,
                          series.points[trusted[position]].run, ratio, low, high, level,
                          cast(ChangeVerdict, verdict), regression, method))
    return out
