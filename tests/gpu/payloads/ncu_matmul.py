"""Torch matmuls with a known number of GPU launches, for the ncu and nsys GPU tests.

    python3 ncu_matmul.py MATMULS [--size N]

GPU kernels: two `torch.full` fills for the inputs (one elementwise kernel each), then MATMULS
fp32 N x N matmuls, one cuBLAS kernel each (on the H200 with torch 2.11 and N = 1024:
`sm80_xmma_gemm_f32f32_...`). Nothing else runs on the GPU, so a capture must hold exactly
MATMULS + 2 launches. Results are checked on the CPU (the copies are memcpys, not kernels).

Exit codes: 0 correct, 1 wrong result, 2 no GPU.
"""

from __future__ import annotations

import argparse

import torch


def run(matmuls: int, size: int) -> int:
    a = torch.full((size, size), 1.0, device="cuda", dtype=torch.float32)
    b = torch.full((size, size), 0.5, device="cuda", dtype=torch.float32)
    products = [a @ b for _ in range(matmuls)]
    torch.cuda.synchronize()
    expected = size * 0.5                       # exact in fp32 for these sizes
    for product in (products[0], products[-1]):
        host = product.cpu()
        if not (host.min().item() == expected == host.max().item()):
            print(f"ncu_matmul: FAIL, expected {expected} everywhere")
            return 1
    print(f"ncu_matmul: launches={matmuls + 2} size={size} PASS")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("matmuls", type=int, help="matmuls to run (plus two fills)")
    parser.add_argument("--size", type=int, default=1024)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("ncu_matmul: no GPU visible to torch")
        return 2
    return run(args.matmuls, args.size)


if __name__ == "__main__":
    raise SystemExit(main())
