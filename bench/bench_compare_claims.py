"""Every simulated figure docs/compare.md quotes for the statistics, recomputed with the seeds
of tests/compare/test_compare_validation.py (whose asserts hold them loosely), so the docs can
quote what the code does today.

    python bench/bench_compare_claims.py
"""

from __future__ import annotations

import importlib.util
import math
import platform
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests" / "compare")]

from aorta.comparison.model import CompareSettings  # noqa: E402
from aorta.stats.rank_test import mann_whitney  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "validation", ROOT / "tests" / "compare" / "test_compare_validation.py")
assert _spec is not None and _spec.loader is not None
v = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(v)


def show(what: str, *figures: float) -> None:
    print(f"{what}: " + ", ".join(f"{f:.3f}" for f in figures), flush=True)


def rates(n: int, cv: float, shift: float, *verdicts: str, **kw: float) -> float:
    return float(v.rate(v.simulate(n=n, cv=cv, shift=shift, **kw), *verdicts))


def main() -> None:
    print(f"# {platform.machine()}, Python {platform.python_version()}")
    show("no change, 5 trials, CV 5% / 10%: SLOWER+FASTER",
         rates(5, 0.05, 0.0, "SLOWER", "FASTER"), rates(5, 0.10, 0.0, "SLOWER", "FASTER"))
    show("no change, 10 trials, CV 5%, 300 pairs",
         rates(10, 0.05, 0.0, "SLOWER", "FASTER", pairs=300))
    show("no change, threshold 0, 5 trials CV 10% (exact size 8/252 = 0.032)",
         rates(5, 0.10, 0.0, "SLOWER", "FASTER", threshold=0.0))
    show("10% slower, CV 5%, 60 trials: SLOWER / FASTER+SAME",
         rates(60, 0.05, 0.10, "SLOWER", pairs=200), rates(60, 0.05, 0.10, "FASTER", "SAME",
                                                           pairs=200))
    show("10% slower, CV 3%, 20 trials: SLOWER", rates(20, 0.03, 0.10, "SLOWER", pairs=300))
    show("10% slower, CV 5%, 5/10/20/40 trials (seed 3): SLOWER",
         *(rates(n, 0.05, 0.10, "SLOWER", pairs=200, seed=3) for n in (5, 10, 20, 40)))
    show("10% slower, CV 10%, 5 trials: FASTER+SAME", rates(5, 0.10, 0.10, "FASTER", "SAME",
                                                            pairs=300))
    show("4% slower, 20 / 60 trials: SLOWER", *(rates(n, 0.05, 0.04, "SLOWER", pairs=200)
                                                for n in (20, 60)))
    show("8% slower, 5 / 20 trials: SAME+FASTER", *(rates(n, 0.05, 0.08, "SAME", "FASTER",
                                                           pairs=200) for n in (5, 20)))
    show("coverage, 3 / 4 trials (1000 pairs)", v.coverage(3, 1000), v.coverage(4, 1000))
    show("coverage, 5 / 10 / 20 trials (600 pairs)", *(v.coverage(n, 600) for n in (5, 10, 20)))
    rng = random.Random(11)
    settings = CompareSettings()
    point_rule = 0
    for _ in range(500):
        base, new = v.draw(rng, 20, 0.05, 0.04)
        point_rule += (mann_whitney(base, new).p_value <= 0.05
                       and statistics.median(new) / statistics.median(base) > 1.05)
    show("4% slower, 20 trials, point-estimate rule (p <= 0.05 and ratio > 1.05): SLOWER",
         point_rule / 500)
    show("issue example [1,2,2,3] vs [2,3,3,4,4,4,5]: p (exact 20/330 = 0.0606)",
         mann_whitney([1, 2, 2, 3], [2, 3, 3, 4, 4, 4, 5]).p_value)
    rng = random.Random(21)
    significant = understated = 0
    for _ in range(1000):
        base = [rng.choice((1.0, 2.0, 3.0)) for _ in range(6)]
        new = [rng.choice((1.0, 2.0, 3.0)) for _ in range(6)]
        test = mann_whitney(base, new)
        significant += test.p_value <= 0.05
        understated += v.untied_p(test.u, 6, 6) < test.p_value - 1e-12
    show("3-level timer, 6 trials, no change: p <= 0.05 / untied p understated (of 1000)",
         significant / 1000, understated)
    show("50 unchanged kernels, 5 trials, threshold 2%: any FASTER/SLOWER",
         v.any_alarm(5, 0.02, "none", 150))
    show("50 unchanged kernels, 10 trials, threshold 0: none / holm / bh",
         *(v.any_alarm(10, 0.0, c, 100) for c in ("none", "holm", "bh")))
    found = []
    for correction in ("none", "holm", "bh"):
        rng = random.Random(9)
        s = CompareSettings(threshold=0.02, correction=correction)  # type: ignore[arg-type]
        found.append(sum(v.comparison(rng, [0.10] + [0.0] * 49, 10, s)[0] == "SLOWER"
                         for _ in range(80)) / 80)
    show("1 kernel 10% slower among 50, 10 trials, threshold 2%: found none / holm / bh", *found)
    show("Holm at 5 vs 5 over 50 rows: smallest adjusted p", 50 * 2 / math.comb(10, 5))
    for n, shift, seed in ((5, 0.0, 5), (10, 0.10, 6)):
        low, low_asked, high, high_asked = v.rerun(n=n, shift=shift, pairs=80, seed=seed)
        show(f"advice reruns, {n} trials, shift {shift}: low end settled / asked, high end",
             low / low_asked, low_asked, high / high_asked, high_asked)
    rng = random.Random(5)
    lows, highs = [], []
    for _ in range(200):
        j = v.judge(*v.draw(rng, 5, 0.05, 0.0), "time", settings)
        if j.verdict == "UNCERTAIN" and j.more_trials is not None:
            lows.append(j.more_trials)
            highs.append(j.more_trials_high if j.more_trials_high is not None else math.inf)
    show("advice, no change, 5 trials, CV 5%: median low / median high more per side",
         statistics.median(lows), statistics.median(highs))


if __name__ == "__main__":
    main()
