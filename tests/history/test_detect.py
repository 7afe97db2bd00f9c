"""Change detection on synthetic series with known steps."""

from __future__ import annotations

import math
import random

import pytest

from aorta.history.changes import detect_changes, find_steps
from aorta.history.model import Context, Point, RunInfo, Series
from aorta.stats.family import Correction

CONTEXT = Context(1, "recipe.yaml", "host", "none", "{}")


def _run(i: int) -> RunInfo:
    return RunInfo(i, 1, f"run{i}", f"2026-01-01T00:{i:02d}:00+00:00", ("bench",), f"{i:040x}",
                   False, "command")


def _series(levels: list[float], seed: int = 0, noise: float = 0.01, trials: int = 3,
            metric: str = "wall_s") -> Series:
    rng = random.Random(seed)
    points = []
    for i, level in enumerate(levels):
        offset = math.exp(rng.gauss(0, noise))
        points.append(Point(_run(i), tuple(level * offset * math.exp(rng.gauss(0, noise))
                                           for _ in range(trials))))
    return Series(CONTEXT, "c1", metric, None, tuple(points))


def test_one_step_found_at_its_run() -> None:
    series = _series([1.0] * 12 + [1.3] * 10)
    (change,) = detect_changes(series)
    assert change.position == 12
    assert change.after.name == "run12" and change.before.name == "run11"
    assert change.verdict == "SLOWER" and change.regression
    assert change.low <= 1.3 <= change.high and 1.25 < change.ratio < 1.35


def test_flat_noisy_series_has_no_change() -> None:
    for seed in range(10):
        assert detect_changes(_series([1.0] * 25, seed=seed, noise=0.02)) == []


def test_improvement_is_not_a_regression() -> None:
    (change,) = detect_changes(_series([2.0] * 10 + [1.0] * 10))
    assert change.verdict == "FASTER" and not change.regression


def test_step_at_the_newest_run() -> None:
    (change,) = detect_changes(_series([1.0] * 15 + [1.5]))
    assert change.position == 15


def test_a_lone_outlier_run_is_not_a_change() -> None:
    levels = [1.0] * 10 + [1.6] + [1.0] * 10
    assert find_steps([p.values for p in _series(levels).points]) == []


def test_count_changes_but_never_regresses() -> None:
    (change,) = detect_changes(_series([10.0] * 8 + [20.0] * 8, noise=0.0,
                                       metric="nsys_kernel_count"))
    assert change.verdict == "CHANGED" and not change.regression


def test_steps_below_the_threshold_are_dropped() -> None:
    series = _series([1.0] * 15 + [1.03] * 15, noise=0.001)
    assert detect_changes(series, threshold=0.05) == []
    assert [c.position for c in detect_changes(series, threshold=0.01)] == [15]


def test_two_steps() -> None:
    changes = detect_changes(_series([1.0] * 10 + [1.4] * 10 + [1.1] * 10))
    assert [c.position for c in changes] == [10, 20]
    assert [c.verdict for c in changes] == ["SLOWER", "FASTER"]


def test_detection_rate_and_false_alarms_on_synthetic_series() -> None:
    """A small version of bench/bench_history_detection.py, as a guard on the figures in
    docs/history.md: 20 % steps are found, flat series stay quiet."""
    found = alarms = 0
    for seed in range(40):
        rng = random.Random(seed)
        runs, at = rng.randint(12, 30), rng.randint(3, 9)
        steps = find_steps([p.values for p in _series([1.0] * at + [1.2] * (runs - at),
                                                      seed=seed, noise=0.02).points])
        found += any(abs(s - at) <= 2 for s in steps)
        alarms += bool(find_steps([p.values for p in _series([1.0] * runs, seed=seed + 99,
                                                             noise=0.02).points]))
    assert found >= 38 and alarms <= 3



@pytest.mark.parametrize(("metric", "verdict", "fail_on", "fails"), [
    ("max_rss_mib", "LARGER", ("slower",), False),     # slower watches times and rates only
    ("max_rss_mib", "LARGER", ("max_rss_mib",), True),
    ("max_rss_mib", "LARGER", ("kernels",), False),
    ("wall_s", "SLOWER", ("slower",), True),
    ("tokens_per_s", "SLOWER", ("slower",), True),
    ("wall_s", "SLOWER", ("kernels",), False)])
def test_history_gates_a_change_as_compare_does(metric: str, verdict: str,
                                                fail_on: tuple[str, ...], fails: bool) -> None:
    from aorta.comparison.gate import watched
    from aorta.comparison.kinds import metric_kind
    from aorta.history.analyse import Analysed, Settings, gated
    from aorta.history.model import Change

    runs = [RunInfo(i, 1, f"r{i}", f"2024-01-0{i + 1}", (), None, None, None) for i in range(2)]
    series = Series(Context(1, "r", "h", "g", "{}"), "c", metric, None,
                    (Point(runs[0], (100.0,) * 5), Point(runs[1], (200.0,) * 5)))
    size = (0.5, 0.45, 0.55) if metric.endswith("_per_s") else (2.0, 1.9, 2.1)   # a rate halves
    change = Change(1, runs[0], runs[1], *size, 0.95, verdict, True, 0.001)
    _, failing = gated([Analysed(series, (change,))], fail_on, Settings())
    assert bool(failing) is fails
    assert watched(False, metric, metric_kind(metric), fail_on) is fails    # compare's rule


def test_a_step_no_ratio_describes_is_not_reported() -> None:
    # -1 -> -2: a ratio of 2 would read SLOWER, a regression, though the values went down.
    assert detect_changes(_series([-1.0] * 10 + [-2.0] * 10, noise=0.0)) == []
    assert detect_changes(_series([5e-324] * 10 + [1.0] * 10, noise=0.0)) == []



def test_a_step_anywhere_in_a_long_history_is_found() -> None:
    """The whole series is searched, not only its newest runs."""
    (change,) = detect_changes(_series([1.0] * 700 + [1.1] * 300, noise=0.01))
    assert change.position == 700 and change.verdict == "SLOWER" and change.regression


def _wiggle(count: int, size: float = 0.03) -> list[float]:
    """Run levels alternating +-size (log): run-to-run noise, made exact."""
    return [math.exp(size * (-1) ** i) for i in range(count)]


def test_a_step_within_the_threshold_whose_interval_is_not_is_uncertain() -> None:
    # +4 %, below --threshold 0.05, but the runs say anything from about +1 % to +7 %:
    # compare calls that UNCERTAIN, not SAME, so it is shown.
    (change,) = detect_changes(_series(_wiggle(40) + [1.04 * v for v in _wiggle(40)], noise=0))
    assert change.position == 40 and change.ratio < 1.05 < change.high
    assert change.verdict == "UNCERTAIN" and not change.regression


def test_a_step_after_runs_that_disagree_is_uncertain() -> None:
    # Three runs of one size, the third larger: the first two differ by a third, so one run
    # +50 % is no evidence of a step (history called it SLOWER REGRESSION, [1.18, 1.89]).
    runs = [(0.2128, 0.2486, 0.2659), (0.1798, 0.1845, 0.1885), (0.299, 0.3024, 0.3484)]
    series = Series(CONTEXT, "c1", "wall_s", None,
                    tuple(Point(_run(i), values) for i, values in enumerate(runs)))
    (change,) = detect_changes(series)
    assert change.position == 2 and change.verdict == "UNCERTAIN" and not change.regression


def test_every_verdict_follows_compares_rule() -> None:
    seen = set()
    for seed in range(40):
        rng = random.Random(seed)
        at, size = rng.randint(3, 20), rng.choice((0.03, 0.05, 0.07, 0.1, -0.07, -0.1))
        series = _series([1.0] * at + [1 + size] * rng.randint(1, 20), seed=seed, noise=0.02)
        for c in detect_changes(series):
            seen.add(c.verdict)
            beyond = c.low > 1.05 or c.high < 0.95
            assert c.verdict != "SLOWER" or (beyond and c.ratio > 1 and c.p_value <= 0.05)
            assert c.verdict != "FASTER" or (beyond and c.ratio < 1 and c.p_value <= 0.05)
            assert c.verdict != "UNCERTAIN" or not (0.95 <= c.low and c.high <= 1.05)
            assert c.regression == (c.verdict == "SLOWER")
    assert seen == {"SLOWER", "FASTER", "UNCERTAIN"}


@pytest.mark.parametrize(("correction", "fails"), [("none", True), ("holm", False)])
def test_holm_holds_back_a_borderline_step_among_many_series(correction: Correction,
                                                             fails: bool) -> None:
    from aorta.history.analyse import Analysed, Settings, gated

    stepped = _series(_wiggle(10, 0.02) + [math.exp(0.105)], noise=0)
    (change,) = detect_changes(stepped)
    assert change.verdict == "SLOWER" and 0.05 / 60 < change.p_value < 0.05    # alone: yes
    flat = _series(_wiggle(11, 0.02), noise=0)
    items = [Analysed(stepped, (change,))] + [Analysed(flat, ())] * 59     # 60 series gated
    items, failing = gated(items, ("slower",), Settings(correction=correction))
    assert bool(failing) is fails
    (judged,) = items[0].changes
    assert judged.verdict == ("SLOWER" if fails else "UNCERTAIN")
    assert judged.p_adjusted == pytest.approx(change.p_value * (1 if fails else 60))


def test_a_newest_run_whose_median_is_an_outlier_is_not_a_regression() -> None:
    # Two slow trials of three make the newest run's median 30 % slower: a step against the
    # runs before it, but compare on the trials (one of them as fast as ever) says UNCERTAIN.
    runs = [tuple(w * v for v in (0.99, 1.0, 1.01)) for w in _wiggle(10, 0.01)]
    series = Series(CONTEXT, "c1", "wall_s", None, tuple(
        Point(_run(i), values) for i, values in enumerate([*runs, (1.0, 1.3, 1.35)])))
    (change,) = detect_changes(series)
    assert change.position == 10 and change.low > 1.05       # the runs alone would say SLOWER
    assert change.verdict == "UNCERTAIN" and not change.regression
    steady = Series(CONTEXT, "c1", "wall_s", None, tuple(
        Point(_run(i), values) for i, values in enumerate([*runs, (1.29, 1.3, 1.31)])))
    assert [c.verdict for c in detect_changes(steady)] == ["SLOWER"]
