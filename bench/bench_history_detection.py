"""How well each history change detector finds steps injected into synthetic series: `bic`,
the one `aorta history` uses, and `bayes`, measured against it (history_bayes.py).

A series is R runs (12 to 40) of T trials (3 or 5). Every run has its own offset (the machine
differs from day to day: lognormal, sigma 0.5-3 %), every trial its own noise (0.5-3 %), and
5 % of trials are slow outliers (x1.2-1.5). Scenarios: no step; one step of +-5, 10, 20 or
50 % at a random run; a step at the newest run (what a CI gate must catch); two steps.

What is scored is what `history show` reports (`detect_changes`, default `--threshold 0.05`):
a true step counts as found when a step reported FASTER or SLOWER lies within 2 runs of it
(exact: at the same run), as *uncertain* when only an UNCERTAIN step does; every other step
reported FASTER or SLOWER is a false alarm (other UNCERTAIN steps are counted apart). With
`--calibrate`, the raw detectors over a grid of parameters on another seed (every detected
step counts), so the table is not fitted to its own data.

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
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from aorta.history.changes import Detector as Steps  # noqa: E402
from aorta.history.changes import detect_changes, find_steps  # noqa: E402
from aorta.history.detect import detect_bic  # noqa: E402
from aorta.history.model import Context, Point, RunInfo, Series  # noqa: E402
from history_bayes import detect_bayes  # noqa: E402

# groups -> the steps shown: (position, True for FASTER or SLOWER, False for UNCERTAIN)
Detector = Callable[[Sequence[Sequence[float]]], list[tuple[int, bool]]]
CONTEXT = Context(1, "recipe.yaml", "host", "none", "{}")


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
    "step 7.5%": lambda rng: make_series(rng, [rng.choice((0.075, -0.075))]),
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
    uncertain: int = 0
    other_uncertain: int = 0
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
        shown = detector(case.groups)
        s.seconds += time.perf_counter() - start
        unmatched = [position for position, decided in shown if decided]
        uncertain = [position for position, decided in shown if not decided]
        for step in case.steps:
            s.true += 1
            near = [f for f in unmatched if abs(f - step) <= 2]
            if near:
                best = min(near, key=lambda f: abs(f - step))
                unmatched.remove(best)
                s.found += 1
                s.exact += best == step
                s.error_sum += abs(best - step)
            elif any(abs(f - step) <= 2 for f in uncertain):
                s.uncertain += 1
                uncertain = [f for f in uncertain if abs(f - step) > 2]
        s.other_uncertain += len(uncertain)
        s.false += len(unmatched)
        s.series_with_false += bool(unmatched)
        s.series += 1
        s.runs += len(case.groups)
    return s


def shown(groups: Sequence[Sequence[float]], steps: Steps) -> list[tuple[int, bool]]:
    """What `history show` reports for a series of these trial groups with `steps` as its
    detector."""
    runs = [RunInfo(i, 1, f"run{i}", f"2026-01-01T00:00:{i:02d}", ("bench",), None, None, None)
            for i in range(len(groups))]
    series = Series(CONTEXT, "c1", "wall_s", None,
                    tuple(Point(run, tuple(g)) for run, g in zip(runs, groups)))
    changes = detect_changes(series, detector=steps)
    return [(c.position, c.verdict != "UNCERTAIN") for c in changes]


def detectors(calibrated: bool) -> dict[str, Detector]:
    if calibrated:
        return {"bayes": lambda g: shown(g, detect_bayes), "bic": lambda g: shown(g, detect_bic)}
    out: dict[str, Detector] = {}
    for beta in (1.0, 1.5, 2.0, 3.0):
        out[f"bic beta={beta}"] = partial(_raw, steps=partial(detect_bic, beta=beta))
    for threshold in (0.9, 0.95, 0.99):
        out[f"bayes p>={threshold}"] = partial(_raw, steps=partial(detect_bayes,
                                                                    threshold=threshold))
    return out


def _raw(groups: Sequence[Sequence[float]], steps: Steps) -> list[tuple[int, bool]]:
    """find_steps with this detector (every step counts)."""
    return [(position, True) for position in find_steps(groups, steps)]


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
    print("| detector | scenario | found | only UNCERTAIN | exact run | mean location error (runs) "
          "| false alarms per 100 runs | series with a false alarm | other UNCERTAIN per 100 runs "
          "| ms per series |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, detector in detectors(not args.calibrate).items():
        for scenario, series in cases.items():
            s = score(detector, series)
            found = f"{100 * s.found / s.true:.1f}%" if s.true else "-"
            uncertain = f"{100 * s.uncertain / s.true:.1f}%" if s.true else "-"
            exact = f"{100 * s.exact / s.found:.1f}%" if s.found else "-"
            error = f"{s.error_sum / s.found:.2f}" if s.found else "-"
            print(f"| {name} | {scenario} | {found} | {uncertain} | {exact} | {error} | "
                  f"{100 * s.false / s.runs:.2f} | {100 * s.series_with_false / s.series:.1f}% | "
                  f"{100 * s.other_uncertain / s.runs:.2f} | {1000 * s.seconds / s.series:.2f} |")


if __name__ == "__main__":
    main()
