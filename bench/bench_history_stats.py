"""The statistics `aorta history` prints, measured on synthetic series with a known truth.

1. Coverage of a step's 95 % interval. Every run has its own offset (lognormal, sigma_run: the
   machine differs from day to day) and every trial its own noise (sigma_trial); a step of
   +10 % multiplies every value from a known run on, so the true ratio is 1.10 exactly. Two
   intervals are computed at the true step, over the same 10 runs each side: aorta's (Student's
   t over the runs' log medians, `changes.step_size`) and the one history printed before
   (compare's bootstrap interval over all trials pooled, as if independent). A third line
   scores the steps `history show` reports at the true run (`detect_changes`, default
   settings): what a user reads. Also with a step at the newest run (one run after it), and
   with the generator of bench_history_detection.py (5 % slow outliers, random noise levels).
2. The CI gate's false alarms per job: a job gates `--fail-on slower --recent 1` over S flat
   series (nothing changed); the share of jobs that fail, with `--correction none` and `holm`.
   And its power: one of the S series has a +10 % step at the newest run.
3. Detection time for a 5,000-run series (the whole series is searched).

    python bench/bench_history_stats.py [--repeats 2000] [--jobs 1000]

Seeds are fixed (each case's seed is its index), so a run reproduces its figures.
"""

from __future__ import annotations

import argparse
import math
import platform
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_history_detection import make_series  # noqa: E402

from aorta.history.analyse import Analysed, Settings, gated  # noqa: E402
from aorta.history.changes import SIDE_RUNS, detect_changes, step_size  # noqa: E402
from aorta.history.model import Context, Point, RunInfo, Series  # noqa: E402
from aorta.stats.interval import ratio_interval  # noqa: E402

CONTEXT = Context(1, "recipe.yaml", "host", "none", "{}")
STEP = 0.10


def groups_with_step(rng: random.Random, runs: int, at: int, sigma_run: float,
                     sigma_trial: float, trials: int = 3, step: float = STEP) -> list[list[float]]:
    out = []
    for r in range(runs):
        level = (1 + step if r >= at else 1.0) * math.exp(rng.gauss(0, sigma_run))
        out.append([level * math.exp(rng.gauss(0, sigma_trial)) for _ in range(trials)])
    return out


def as_series(groups: Sequence[Sequence[float]], metric: str = "wall_s") -> Series:
    runs = [RunInfo(i, 1, f"run{i}", f"2026-01-01T{i // 3600:02d}:{i // 60 % 60:02d}:"
                    f"{i % 60:02d}", ("bench",), f"{i:040x}", False, "command")
            for i in range(len(groups))]
    return Series(CONTEXT, "c1", metric, None,
                  tuple(Point(run, tuple(g)) for run, g in zip(runs, groups)))


def coverage_row(name: str, cases: Sequence[tuple[list[list[float]], int, float]]) -> None:
    """cases: (groups, true step position, true ratio)."""
    t_cover = pooled_cover = reported = reported_cover = 0
    widths: list[float] = []
    for groups, at, truth in cases:
        before, after = groups[max(0, at - SIDE_RUNS):at], groups[at:at + SIDE_RUNS]
        _, low, high, _ = step_size([sorted(g)[len(g) // 2] for g in before],
                                    [sorted(g)[len(g) // 2] for g in after], 0.95)
        t_cover += low <= truth <= high
        widths.append(high / low)
        low, high = ratio_interval([v for g in before for v in g],
                                   [v for g in after for v in g], 0.95)
        pooled_cover += low <= truth <= high
        for change in detect_changes(as_series(groups)):
            if change.position == at:
                reported += 1
                reported_cover += change.low <= truth <= change.high
    n = len(cases)
    widths.sort()
    print(f"| {name} | {n} | {100 * t_cover / n:.1f}% | {100 * pooled_cover / n:.1f}% | "
          f"{reported} | {100 * reported_cover / max(reported, 1):.1f}% | "
          f"x{widths[n // 2]:.3f} |")


def coverage(repeats: int) -> None:
    print("\n## 1. Coverage of the 95% interval of a +10% step (true ratio 1.100)\n")
    print("| series | cases | aorta (t over run medians) | before (trials pooled) | "
          "reported at the true run | of those, covering | median width (high/low) |")
    print("|---|---|---|---|---|---|---|")
    for sigma_run, sigma_trial in ((0.0, 0.01), (0.01, 0.01), (0.02, 0.01), (0.02, 0.02),
                                   (0.03, 0.01)):
        for runs, at, where in ((30, 15, "10 runs each side"), (16, 15, "1 run after")):
            cases = [(groups_with_step(random.Random(i), runs, at, sigma_run, sigma_trial),
                      at, 1 + STEP) for i in range(repeats)]
            coverage_row(f"run {sigma_run:.0%}, trial {sigma_trial:.0%}, 3 trials, {where}",
                         cases)
    docs = []
    for i in range(repeats):
        size = random.Random(-1 - i).choice((STEP, -STEP))
        case = make_series(random.Random(i), [size])
        docs.append((case.groups, case.steps[0], 1 + size))
    coverage_row("bench_history_detection's generator (sigma 0.5-3% each, 5% slow trials, "
                 "12-40 runs), +-10% step", docs)


GATE_ROWS = [   # (series gated, --threshold, --recent, generator, one series stepped)
    (1, 0.05, 1, "plain", False), (1, 0.05, 1, "plain", True),
    (25, 0.05, 1, "plain", False), (25, 0.05, 1, "plain", True),
    (25, 0.0, 1, "plain", False), (25, 0.0, 1, "plain", True),
    (25, 0.05, 0, "plain", False), (25, 0.0, 0, "plain", False),
    (25, 0.05, 1, "detection bench", False), (25, 0.05, 0, "detection bench", False),
    (25, 0.05, 1, "detection bench, 5 trials", False),
]


def gate_series(rng: random.Random, generator: str, stepped: bool) -> Series:
    if generator == "plain":      # 30 runs, run noise 2 %, trial 1 %, 3 trials
        return as_series(groups_with_step(rng, 30, 29 if stepped else 30, 0.02, 0.01))
    case = make_series(rng, [])
    while generator.endswith("5 trials") and len(case.groups[0]) != 5:
        case = make_series(rng, [])
    return as_series(case.groups)


def gate(jobs: int) -> None:
    print("\n## 2. The CI gate (--fail-on slower) per job\n")
    print("plain: 30 runs, run noise 2%, trial noise 1%, 3 trials; detection bench: "
          "bench_history_detection's generator, flat (5 trials: only its series of 5 trials a "
          "run). Stepped: one series +10% at the newest run (the gate's power).\n")
    print("| series gated | --threshold | --recent | series | jobs | fail, --correction none | "
          "fail, holm (default) |")
    print("|---|---|---|---|---|---|---|")
    for count, threshold, recent, generator, stepped in GATE_ROWS:
        fails = {"none": 0, "holm": 0}
        for job in range(jobs):
            items = []
            for s in range(count):
                series = gate_series(random.Random(job * 1000 + s), generator,
                                     stepped and s == 0)
                changes = detect_changes(series, threshold=threshold)
                items.append(Analysed(series, tuple(changes)))
            for correction in fails:
                _, failing = gated(items, ("slower",), Settings(
                    threshold=threshold, recent=recent, correction=correction))
                fails[correction] += bool(failing)
        what = f"{generator}, {'one stepped' if stepped else 'flat'}"
        print(f"| {count} | {threshold:g} | {recent} | {what} | {jobs} | "
              f"{100 * fails['none'] / jobs:.1f}% | {100 * fails['holm'] / jobs:.1f}% |")


def speed() -> None:
    print("\n## 3. Detection time, whole series searched\n")
    for runs in (1000, 5000):
        series = as_series(groups_with_step(random.Random(runs), runs, runs * 7 // 10, 0.02,
                                            0.01))
        start = time.perf_counter()
        changes = detect_changes(series)
        took = time.perf_counter() - start
        print(f"- {runs} runs, +10% at run {runs * 7 // 10 + 1}: "
              f"{[(c.position + 1, c.verdict) for c in changes]} in {took:.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=2000, help="series per coverage row")
    parser.add_argument("--jobs", type=int, default=1000, help="CI jobs per gate row")
    parser.add_argument("--only", choices=("coverage", "gate", "speed"))
    args = parser.parse_args()
    print(f"# Python {platform.python_version()} on {platform.machine()}, "
          f"{args.repeats} series per coverage row, {args.jobs} jobs per gate row")
    if args.only in (None, "coverage"):
        coverage(args.repeats)
    if args.only in (None, "gate"):
        gate(args.jobs)
    if args.only in (None, "speed"):
        speed()


if __name__ == "__main__":
    main()
