"""How well each history change detector finds steps injected into synthetic series.

A series is R runs (12 to 40) of T trials (3 or 5). Every run has its own offset (the machine
differs from day to day: lognormal, sigma 0.5-3 %), every trial its own noise (0.5-3 %), and
5 % of trials are slow outliers (x1.2-1.5). Scenarios: no step; one step of +-5, 10, 20 or
50 % at a random run; a step at the newest run (what a CI gate must catch); two steps.

A true step counts as found when a detected step lies within 2 runs of it (exact: at the same
run); every other detected step is a false alarm. Parameters are calibrated on one seed and
the figures reported on another, so the table is not fitted to its own data.

    python bench/bench_history_detection.py [--series 200] [--calibrate]
"""

from __future__ import annotations

import argparse
import math
import platform
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from aorta.history.changes import METHODS, find_steps  # noqa: E402
from aorta.history.detect import detect_bayes, detect_bic  # noqa: E402

Detector = Callable[[Sequence[Sequence[float]]], list[int]]


@dataclass(frozen=True)
class Case:
    groups: list[list[float]]
    steps: list[int]


def make_series(rng: random.Random, step_sizes: Sequence[float], at_end: bool = False) -> Case:
    runs = rng.randint(12, 40)
    trials = rng.choice((3, 5))
    sigma_run, sigma_trial = rng.uniform(0.005, 0.03), rng.uniform(0.005, 0.03)
    positions: list[int] = []
    for _ in step_sizes:
        for _attempt in range(100):
            p = runs - 1 if at_end else rng.randint(2, runs - 2)
            if all(abs(p - q) >= 4 for q in positions):
                positions.append(p)
                break
    positions.sort()
    sizes = list(step_sizes)
    groups = []
    for r in range(runs):
        level = 10.0
        for p, s in zip(positions, sizes):
            if r >= p:
                level *= 1 + s
        offset = math.exp(rng.gauss(0, sigma_run))
        row = []
        for _ in range(trials):
            value = level * offset * math.exp(rng.gauss(0, sigma_trial))
            if rng.random() < 0.05:
                value *= rng.uniform(1.2, 1.5)
            row.append(value)
        groups.append(row)
    return Case(groups, positions)


SCENARIOS: dict[str, Callable[[random.Random], Case]] = {
    "no step": lambda rng: make_series(rng, []),
    "step 5%": lambda rng: make_series(rng, [rng.choice((0.05, -0.05))]),
    "step 10%": lambda rng: make_series(rng, [rng.choice((0.10, -0.10))]),
    "step 20%": lambda rng: make_series(rng, [rng.choice((0.20, -0.20))]),
    "step 50%": lambda rng: make_series(rng, [rng.choice((0.50, -0.35))]),
    "20% at newest run": lambda rng: make_series(rng, [0.20], at_end=True),
    "two steps 20%": lambda rng: make_series(rng, [0.20, -0.15]),
}


@dataclass
class Score:
    true: int = 0
    found: int = 0
    exact: int = 0
    error_sum: int = 0
    false: int = 0
    series_with_false: int = 0
    series: int = 0
    runs: int = 0
    seconds: float = 0.0


def score(detector: Detector, cases: Sequence[Case]) -> Score:
    s = Score()
    for case in cases:
        start = time.perf_counter()
        found = detector(case.groups)
        s.seconds += time.perf_counter() - start
        unmatched = list(found)
        for step in case.steps:
            s.true += 1
            near = [f for f in unmatched if abs(f - step) <= 2]
            if near:
                best = min(near, key=lambda f: abs(f - step))
                unmatched.remove(best)
                s.found += 1
                s.exact += best == step
                s.error_sum += abs(best - step)
        s.false += len(unmatched)
        s.series_with_false += bool(unmatched)
        s.series += 1
        s.runs += len(case.groups)
    return s


def detectors(calibrated: bool) -> dict[str, Detector]:
    if calibrated:
        return {"bayes": lambda g: find_steps(g, "bayes"), "bic": lambda g: find_steps(g, "bic")}
    out: dict[str, Detector] = {}
    for beta in (1.0, 1.5, 2.0, 3.0):
        out[f"bic beta={beta}"] = lambda g, b=beta: _with(detect_bic, "bic", g, beta=b)
    for threshold in (0.9, 0.95, 0.99):
        out[f"bayes p>={threshold}"] = lambda g, t=threshold: _with(detect_bayes, "bayes", g,
                                                                     threshold=t)
    return out


def _with(function: Callable[..., list[int]], name: str, groups: Sequence[Sequence[float]],
          **params: float) -> list[int]:
    """find_steps with `name`'s detector given other parameters."""
    saved = METHODS[name]
    METHODS[name] = lambda y: function(y, **params)
    try:
        return find_steps(groups, name)
    finally:
        METHODS[name] = saved


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--series", type=int, default=200, help="series per scenario")
    parser.add_argument("--calibrate", action="store_true",
                        help="grid of parameters on the calibration seed")
    args = parser.parse_args()
    seed = 1 if args.calibrate else 2
    cases = {name: [make(random.Random(seed * 100_003 + i)) for i in range(args.series)]
             for name, make in SCENARIOS.items()}
    print(f"# {args.series} series per scenario, seed {seed}, {platform.python_version()} "
          f"on {platform.machine()}")
    print("| detector | scenario | found | exact run | mean location error (runs) | "
          "false alarms per 100 runs | series with a false alarm | ms per series |")
    print("|---|---|---|---|---|---|---|---|")
    for name, detector in detectors(not args.calibrate).items():
        for scenario, series in cases.items():
            s = score(detector, series)
            found = f"{100 * s.found / s.true:.1f}%" if s.true else "-"
            exact = f"{100 * s.exact / s.found:.1f}%" if s.found else "-"
            error = f"{s.error_sum / s.found:.2f}" if s.found else "-"
            print(f"| {name} | {scenario} | {found} | {exact} | {error} | "
                  f"{100 * s.false / s.runs:.2f} | {100 * s.series_with_false / s.series:.1f}% | "
                  f"{1000 * s.seconds / s.series:.2f} |")


if __name__ == "__main__":
    main()
