"""Time per exact ratio interval, with the compiled quantile search and with the Python one
(as on an install without a C compiler), on lognormal samples (CV 5%) of n trials a side, and
how many cuts of the outcome grid the Python search makes per quantile.

    python bench/bench_interval.py [--rows 200]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from aorta.stats import interval, ratio_grid  # noqa: E402


def per_interval(samples: list[tuple[list[float], list[float]]]) -> float:
    """Best of 5 passes over the samples, seconds per interval."""
    best = math.inf
    for _ in range(5):
        start = time.process_time()
        for base, new in samples:
            interval.ratio_interval(base, new, 0.95)
        best = min(best, (time.process_time() - start) / len(samples))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200)
    args = parser.parse_args()
    compiled = interval._compiled_quantiles
    if compiled is None:
        raise SystemExit("the compiled search is not built (python setup.py build_ext --inplace)")
    print(f"# {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.2f}; process CPU time, best of 5")
    sigma = math.sqrt(math.log(1 + 0.05 ** 2))
    for n in (10, 20, 50, 200):
        rng = random.Random(n)
        rows = args.rows if n < 100 else max(10, args.rows // 10)
        samples = [([rng.lognormvariate(0, sigma) for _ in range(n)],
                    [rng.lognormvariate(0, sigma) * 1.03 for _ in range(n)]) for _ in range(rows)]
        interval._compiled_quantiles = compiled
        fast = per_interval(samples)
        interval._compiled_quantiles = None
        slow = per_interval(samples)
        print(f"{n} trials a side: compiled {fast * 1e6:.0f} us, Python {slow * 1e6:.0f} us, "
              f"{slow / fast:.1f}x; Python search: {cuts_per_quantile(samples):.1f} cuts per "
              f"quantile", flush=True)


def cuts_per_quantile(samples: list[tuple[list[float], list[float]]]) -> float:
    """Mean cuts per quantile of the Python search (`Grid.cut` calls, two quantiles each)."""
    cut, calls = ratio_grid.Grid.cut, [0]

    def counting(self: ratio_grid.Grid, *args: object, **kwargs: object) -> object:
        calls[0] += 1
        return cut(self, *args, **kwargs)  # type: ignore[arg-type]

    ratio_grid.Grid.cut = counting  # type: ignore[assignment, method-assign]
    try:
        for base, new in samples:
            interval.ratio_interval(base, new, 0.95)
    finally:
        ratio_grid.Grid.cut = cut  # type: ignore[method-assign]
    return calls[0] / (2 * len(samples))


if __name__ == "__main__":
    main()
