"""What the harness itself costs: per-trial overhead of `aorta sweep run` and `aorta --help`.

Per-trial overhead is a slope, so aorta's one-time start-up does not hide in it:

    overhead = (T(aorta, N_big) - T(aorta, N_small)) / (N_big - N_small) - (bare loop per run)

where the bare loop runs the same command with `subprocess.run` N times. The command is
`/bin/true`, so the payload costs next to nothing and the harness is what is measured.

    python bench/bench_harness.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMAND = ["/bin/true"]


def time_aorta(trials: int, workdir: Path) -> float:
    recipe = workdir / "bench.yaml"
    recipe.write_text(f"schema_version: 1\nticket: bench\ntrials: {trials}\n")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "aorta", "sweep", "run", "--recipe", str(recipe),
                    "--output", str(workdir / "out"), "--fresh", "--", *COMMAND],
                   check=True, capture_output=True)
    return time.perf_counter() - start


def time_bare(trials: int) -> float:
    start = time.perf_counter()
    for _ in range(trials):
        subprocess.run(COMMAND, check=True)
    return time.perf_counter() - start


def time_help() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "aorta", "--help"], check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--small", type=int, default=10)
    parser.add_argument("--big", type=int, default=110)
    args = parser.parse_args()
    overheads, helps = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeats):
            small = time_aorta(args.small, Path(tmp))
            big = time_aorta(args.big, Path(tmp))
            bare = time_bare(args.big - args.small) / (args.big - args.small)
            overheads.append((big - small) / (args.big - args.small) - bare)
            helps.append(time_help())
    print(f"machine: {platform.machine()}, {platform.processor() or 'cpu'}, "
          f"Python {platform.python_version()}")
    print(f"per-trial overhead of aorta sweep run: median {statistics.median(overheads) * 1e3:.2f} ms "
          f"(runs: {', '.join(f'{o * 1e3:.2f}' for o in overheads)}; target <= 10 ms)")
    print(f"aorta --help start-up: median {statistics.median(helps) * 1e3:.0f} ms "
          f"(runs: {', '.join(f'{h * 1e3:.0f}' for h in helps)}; target < 300 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
