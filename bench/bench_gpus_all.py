"""How much faster does a sweep run with `--gpus all` than on one GPU of the same host?

Runs the same sweep (default: the torch-matmul example, 1000 bf16 4096^3 products, under the torch
collector) alternately with `--gpus 0` and `--gpus all`, each `--repeats` times, and prints the
median wall time of each and their ratio, with the machine it ran on.

    python bench/bench_gpus_all.py --out DIR [--trials 8] [--repeats 2] [-- python payload.py ...]

Needs two or more NVIDIA GPUs and a CUDA build of torch. Writes the run directories under --out.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

DEFAULT = ["examples/profiling/torch/torch-matmul/matmul.py", "--size", "4096", "--iters", "1000",
           "--dtype", "bfloat16"]
NO_MULTICAST = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                "NVSHMEM_DISABLE_NVLS": "1"}


def timed_sweep(gpus: str, out: Path, trials: int, command: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "aorta", "sweep", "run", "--gpus", gpus,
                           "--trials", str(trials), "--collect", "torch", "--output", str(out),
                           "--fresh", "--", *command], capture_output=True, text=True,
                          env={**os.environ, **NO_MULTICAST}, check=False)
    if done.returncode != 0:
        sys.exit(f"the sweep with --gpus {gpus} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return time.perf_counter() - start


def machine() -> str:
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True, check=True).stdout.strip().splitlines()
    return f"{len(smi)} x {smi[0]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("command", nargs="*", help="payload after --")
    args = parser.parse_args()
    command = args.command or [sys.executable, *DEFAULT]
    walls: dict[str, list[float]] = {"0": [], "all": []}
    for i in range(args.repeats):
        for gpus in walls:
            walls[gpus].append(timed_sweep(gpus, args.out / f"gpus-{gpus}-{i}", args.trials,
                                           command))
            print(f"--gpus {gpus}: {walls[gpus][-1]:.1f} s", flush=True)
    one, every = statistics.median(walls["0"]), statistics.median(walls["all"])
    print(f"machine: {machine()}; {args.trials} trials of {' '.join(command[1:])}")
    print(f"--gpus 0:   median {one:.1f} s  ({', '.join(f'{w:.1f}' for w in walls['0'])})")
    print(f"--gpus all: median {every:.1f} s  ({', '.join(f'{w:.1f}' for w in walls['all'])})")
    print(f"speed-up: {one / every:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
