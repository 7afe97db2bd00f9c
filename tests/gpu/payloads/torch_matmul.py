"""Torch steps with a known number of GPU launches, for the torch collector's GPU tests.

    python3 torch_matmul.py STEPS [--size N] [--exit CODE] [--env-profiler]

The inputs are made on the CPU and copied over (copies are memcpys, not kernels). Each step runs
one fp32 N x N matmul (one cuBLAS kernel on the H200 with torch 2.11 and N = 1024:
`sm80_xmma_gemm_f32f32_...`) and one in-place add (one elementwise kernel): 2 x STEPS kernel
launches in all, nothing else on the GPU. The result is checked on the CPU.

`--env-profiler` runs torch.profiler in the payload from the collector's `AORTA_TORCH_*`
variables (`mode: env`) and calls `prof.step()` after every step.

Exit codes: 0 correct (or `--exit CODE`), 1 wrong result, 2 no GPU.
"""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

import torch


def run(steps: int, size: int, profiler: Any) -> int:
    a = torch.ones((size, size), dtype=torch.float32).to("cuda")
    b = torch.ones((size, size), dtype=torch.float32).to("cuda")
    with profiler or contextlib.nullcontext():
        for _ in range(steps):
            c = a @ b
            c.add_(1.0)
            if profiler is not None:
                profiler.step()
        torch.cuda.synchronize()
    host = c.cpu()
    expected = size + 1.0                        # exact in fp32 for these sizes
    if not (host.min().item() == expected == host.max().item()):
        print(f"torch_matmul: FAIL, expected {expected} everywhere")
        return 1
    print(f"torch_matmul: launches={2 * steps} size={size} PASS")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("steps", type=int, help="steps of one matmul and one add")
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--exit", type=int, default=None, help="exit with this code when done")
    parser.add_argument("--env-profiler", action="store_true",
                        help="run torch.profiler here from AORTA_TORCH_* (mode: env)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("torch_matmul: no GPU visible to torch")
        return 2
    profiler = None
    if args.env_profiler:
        from aorta.launchers.torch_profile import profiler_from_env

        profiler = profiler_from_env()
    code = run(args.steps, args.size, profiler)
    return code if args.exit is None or code else args.exit


if __name__ == "__main__":
    raise SystemExit(main())
