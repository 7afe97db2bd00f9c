"""A Triton vector add launched a known number of times, for the ncu GPU tests.

    python3 ncu_triton_add.py LAUNCHES [--size N]

GPU kernels: two `torch.full` fills for the inputs, then LAUNCHES launches of the Triton kernel
`add_kernel` (compiling it launches nothing on the GPU). A capture filtered to `add_kernel`
must hold exactly LAUNCHES launches; unfiltered, LAUNCHES + 2. Checked on the CPU.

Exit codes: 0 correct, 1 wrong result, 2 no GPU.
"""

from __future__ import annotations

import argparse

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask)
             + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def run(launches: int, size: int) -> int:
    x = torch.full((size,), 1.5, device="cuda", dtype=torch.float32)
    y = torch.full((size,), 2.25, device="cuda", dtype=torch.float32)
    out = torch.empty_like(x)
    grid = (triton.cdiv(size, BLOCK),)
    for _ in range(launches):
        add_kernel[grid](x, y, out, size, BLOCK_SIZE=BLOCK)
    torch.cuda.synchronize()
    host = out.cpu()
    if not (host.min().item() == 3.75 == host.max().item()):
        print("ncu_triton_add: FAIL")
        return 1
    print(f"ncu_triton_add: add_kernel launches={launches} size={size} PASS")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("launches", type=int)
    parser.add_argument("--size", type=int, default=1 << 20)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("ncu_triton_add: no GPU visible to torch")
        return 2
    return run(args.launches, args.size)


if __name__ == "__main__":
    raise SystemExit(main())
