"""How often `--correction` lets chance through: simulated comparisons of many rows, judged by
compare's own procedure (measure, adjust across rows, decide), against BH over every tested
row as compare did before.

A row is lognormal trials with its own noise (CV) and a true change. Figures per scenario, over
`--runs` comparisons, of the FASTER or SLOWER calls: the share on unchanged rows (calls there /
calls, 0 without calls, averaged: BH's false discovery rate on calls), the share on rows whose
true change lies within the threshold (unchanged ones included), the chance of any call on an
unchanged row, and the calls per comparison on rows truly beyond the threshold.

    python bench/bench_compare_family.py [--runs 400] [--seed 1]
"""

from __future__ import annotations

import argparse
import math
import platform
import random
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from aorta.comparison.build import _decide_all, _Pending  # noqa: E402
from aorta.comparison.model import CompareSettings  # noqa: E402
from aorta.comparison.verdict import Measurement, decide, measure  # noqa: E402
from aorta.stats.family import adjust  # noqa: E402

# (name, rows as (true change, CV) repeated, trials per side, threshold)
SCENARIOS: list[tuple[str, list[tuple[float, float]], int, float]] = [
    ("40 quiet rows +2% (CV 1%), 10 noisy unchanged (CV 20%); 10 trials, threshold 5%",
     [(0.02, 0.01)] * 40 + [(0.0, 0.20)] * 10, 10, 0.05),
    ("same, 20 trials", [(0.02, 0.01)] * 40 + [(0.0, 0.20)] * 10, 20, 0.05),
    ("45 quiet rows +2% (CV 1%), 5 noisy unchanged (CV 30%); 10 trials, threshold 5%",
     [(0.02, 0.01)] * 45 + [(0.0, 0.30)] * 5, 10, 0.05),
    ("50 unchanged (CV 5%); 10 trials, threshold 0",
     [(0.0, 0.05)] * 50, 10, 0.0),
    ("50 unchanged (CV 5%); 10 trials, threshold 2%",
     [(0.0, 0.05)] * 50, 10, 0.02),
    ("1 row +10%, 49 unchanged (CV 5%); 10 trials, threshold 2%",
     [(0.10, 0.05)] + [(0.0, 0.05)] * 49, 10, 0.02),
    ("45 unchanged, 5 rows +3% (CV 5%); 20 trials, threshold 2%",
     [(0.0, 0.05)] * 45 + [(0.03, 0.05)] * 5, 20, 0.02),
    ("45 rows +4.5%, 5 rows +10% (CV 5%); 20 trials, threshold 5%",
     [(0.045, 0.05)] * 45 + [(0.10, 0.05)] * 5, 20, 0.05),
]


def draw(rng: random.Random, n: int, cv: float, change: float) -> tuple[list[float], list[float]]:
    sigma = math.sqrt(math.log(1 + cv ** 2))
    return ([rng.lognormvariate(0, sigma) for _ in range(n)],
            [rng.lognormvariate(0, sigma) * (1 + change) for _ in range(n)])


def verdicts_before(measured: Sequence[Measurement], settings: CompareSettings) -> list[str]:
    """BH or Holm over every tested row, as compare did before."""
    adjusted = adjust([m.test.p_value for m in measured], settings.correction)
    return [decide(m, settings, q).verdict for m, q in zip(measured, adjusted)]


def verdicts_now(measured: Sequence[Measurement], settings: CompareSettings) -> list[str]:
    pending = [_Pending(m, dict(cell="c", scope="kernel", name=f"k{i}", kind="time", table="t",
                                base_n=len(m.base), new_n=len(m.new)))
               for i, m in enumerate(measured)]
    return [row.verdict for row in _decide_all(pending, settings)[0]]


def scenario(rows: Sequence[tuple[float, float]], n: int, threshold: float, correction: str,
             runs: int, seed: int) -> dict[str, list[float]]:
    rng = random.Random(seed)
    settings = CompareSettings(threshold=threshold, correction=correction)  # type: ignore[arg-type]
    tally = {"before": [0.0] * 4, "now": [0.0] * 4}
    for _ in range(runs):
        measured = []
        for change, cv in rows:
            m = measure(*draw(rng, n, cv, change), "time", settings)
            assert isinstance(m, Measurement)
            measured.append(m)
        for name, judge in (("before", verdicts_before), ("now", verdicts_now)):
            called = [(v, change) for v, (change, _) in zip(judge(measured, settings), rows)
                      if v in ("FASTER", "SLOWER")]
            unchanged = sum(change == 0 for _, change in called)
            within = sum(abs(change) <= threshold for _, change in called)
            tally[name][0] += unchanged / len(called) if called else 0.0
            tally[name][1] += within / len(called) if called else 0.0
            tally[name][2] += unchanged > 0
            tally[name][3] += len(called) - within
    return {k: [x / runs for x in v] for k, v in tally.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"# {platform.machine()}, Python {platform.python_version()}, {args.runs} comparisons "
          f"per scenario, seed {args.seed}")
    print("# share of calls on unchanged rows / on rows within the threshold / any call on an "
          "unchanged row / calls per comparison on rows beyond the threshold")
    for name, rows, n, threshold in SCENARIOS:
        for correction in ("bh", "holm"):
            found = scenario(rows, n, threshold, correction, args.runs, args.seed)
            print(f"{name} | {correction} | before " + " / ".join(
                f"{x:.3f}" for x in found["before"]) + " | now " + " / ".join(
                f"{x:.3f}" for x in found["now"]), flush=True)


if __name__ == "__main__":
    main()
