"""The rank test's exact p with ties: what counting costs, and how far the normal
approximation used past the exact range strays from the exact p.

Cost: seconds per exact tied p (`rank_test` counts with `rank_null.tied_tails`), on samples of
n per side with one tied pair or quantised to 10, 100 or 1000 levels, shifted so p spans 0 to 1.
Accuracy: where compare uses the normal approximation (ties above
`rank_test.TIED_EXACT_LIMIT` per side, no ties above `EXACT_LIMIT`), its p against the exact
one, counted here regardless of size: the largest relative error for exact p in [0.005, 0.2],
the lowest approximation / exact there, and the largest factor either way for exact p in
[1e-4, 0.005) and in [1e-6, 1e-4) (which Holm or BH over hundreds of rows can still reach).

    python bench/bench_rank_ties.py [--samples 300] [--seed 1]
"""

from __future__ import annotations

import argparse
import math
import platform
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from aorta.stats import rank_test  # noqa: E402
from aorta.stats.rank_test import EXACT_LIMIT, TIED_EXACT_LIMIT, mann_whitney  # noqa: E402


def sample(rng: random.Random, n1: int, n2: int, tied: bool) -> tuple[list[float], list[float]]:
    """Two samples; `tied`: one tied pair or values on 10, 100 or 1000 levels."""
    shift = rng.choice((0.0, 0.05, 0.1, 0.2, 0.3, 0.5))
    base = [rng.random() for _ in range(n1)]
    new = [rng.random() + shift for _ in range(n2)]
    if not tied:
        return base, new
    levels = rng.choice((0, 10, 100, 1000))
    if levels == 0:
        new[0] = base[0]
        return base, new
    return [round(v * levels) for v in base], [round(v * levels) for v in new]


def exact_p(base: list[float], new: list[float]) -> float:
    """The exact p whatever the size (the limits lifted for this call)."""
    limits = rank_test.EXACT_LIMIT, rank_test.TIED_EXACT_LIMIT
    rank_test.EXACT_LIMIT = rank_test.TIED_EXACT_LIMIT = 10 ** 6
    try:
        found = mann_whitney(base, new)
    finally:
        rank_test.EXACT_LIMIT, rank_test.TIED_EXACT_LIMIT = limits
    assert found.exact
    return found.p_value


def cost(rng: random.Random, samples: int) -> None:
    print("## seconds per exact tied p (median / max)")
    for n in (10, 20, 25, 30, 40, 50):
        took = []
        for _ in range(samples):
            base, new = sample(rng, n, n, tied=True)
            if len(set(base + new)) == 2 * n:
                continue
            start = time.perf_counter()
            exact_p(base, new)
            took.append(time.perf_counter() - start)
        print(f"{n} per side: {statistics.median(took) * 1e3:.2f} ms / "
              f"{max(took) * 1e3:.2f} ms over {len(took)} samples", flush=True)


def accuracy(rng: random.Random, samples: int, low: int, high: int, tied: bool) -> None:
    mid_error, mid_lowest, in_mid = 0.0, math.inf, 0
    tails = {(1e-4, 0.005): [1.0, 0], (1e-6, 1e-4): [1.0, 0]}
    for _ in range(samples):
        base, new = sample(rng, rng.randint(low, high), rng.randint(low, high), tied)
        if (len(set(base + new)) < len(base + new)) != tied:
            continue
        approx = mann_whitney(base, new)
        assert not approx.exact
        exact = exact_p(base, new)
        if 0.005 <= exact <= 0.2:
            in_mid += 1
            mid_error = max(mid_error, abs(approx.p_value - exact) / exact)
            mid_lowest = min(mid_lowest, approx.p_value / exact)
        for (start, end), tally in tails.items():
            if start <= exact < end:
                tally[0] = max(tally[0], approx.p_value / exact, exact / approx.p_value)
                tally[1] += 1
    print(f"{'tied' if tied else 'untied'}, {low}-{high} per side: p in [0.005, 0.2] "
          f"({in_mid} samples): largest error {mid_error:.1%}, lowest approx / exact "
          f"{mid_lowest:.3f}" + "".join(f"; p in [{a:g}, {b:g}) ({n} samples): largest factor "
                                        f"{f:.2f}" for (a, b), (f, n) in tails.items()),
          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"# {platform.machine()}, Python {platform.python_version()}, seed {args.seed}; "
          f"exact up to {EXACT_LIMIT} per side untied, {TIED_EXACT_LIMIT} tied")
    rng = random.Random(args.seed)
    cost(rng, max(10, args.samples // 10))
    print("## the normal approximation where compare uses it, against the exact p")
    accuracy(rng, args.samples, TIED_EXACT_LIMIT + 1, EXACT_LIMIT, tied=True)
    accuracy(rng, args.samples, EXACT_LIMIT + 1, 2 * EXACT_LIMIT, tied=False)
    accuracy(rng, args.samples // 3, EXACT_LIMIT + 1, 2 * EXACT_LIMIT, tied=True)


if __name__ == "__main__":
    main()
