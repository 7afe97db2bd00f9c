"""A Triton vector add with a known launch count, for the proton collector's CLI mode.

    python vecadd.py [--size 1048576] [--iters 20] [--block-size 1024]

GPU work, all of it one Triton kernel, `add_kernel` (inputs are drawn on the CPU and copied in,
the check reads copies back; copies are not kernels):

    1 launch       inside proton.scope("check")   compiles the kernel; its result is checked
    ITERS launches inside proton.scope("iters")   the same sum again; checked again at the end

so a capture holds exactly ITERS + 1 launches of `add_kernel` (21 by default), attributed to the
two scopes. Run without a profiler, the scopes record nothing.

Exit status: 0 PASS, 1 wrong result, 2 cannot run here (torch or Triton missing, no GPU, bad
arguments). Never `SystemExit(0)`: on Triton <= 3.6 that would skip Proton's finalize().
"""

from __future__ import annotations

import argparse
import sys

try:
    # Proton before torch, always (on Triton 3.8.0 the reverse order hangs at exit).
    import triton.profiler as proton  # isort: skip  # noqa: I001
    import torch
    import triton
    import triton.language as tl
except ImportError as exc:
    print(f"vecadd: cannot run here: needs torch and triton ({exc})", file=sys.stderr)
    raise SystemExit(2) from None


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    in_bounds = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=in_bounds)
    y = tl.load(y_ptr + offsets, mask=in_bounds)
    tl.store(out_ptr + offsets, x + y, mask=in_bounds)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Triton vector add with a known launch count")
    parser.add_argument("--size", type=int, default=1 << 20, help="elements (default 1048576)")
    parser.add_argument("--iters", type=int, default=20, help="launches after the check")
    parser.add_argument("--block-size", type=int, default=1024,
                        help="elements per program, a power of 2 (default 1024)")
    args = parser.parse_args(argv)
    if not 1 <= args.size <= 1 << 30:
        parser.error("--size must be in 1..2**30")
    if args.iters < 1:
        parser.error("--iters must be >= 1")
    if not 16 <= args.block_size <= 1 << 16 or args.block_size & (args.block_size - 1):
        parser.error("--block-size must be a power of 2 in 16..65536")
    return args


def launch(x, y, out, block_size: int) -> None:
    grid = (triton.cdiv(x.numel(), block_size),)
    add_kernel[grid](x, y, out, x.numel(), BLOCK_SIZE=block_size)


def mismatch(out, expected) -> str | None:
    """Why `out` differs from `expected` (CPU tensors), or None. An fp32 sum is exact."""
    if torch.equal(out, expected):
        return None
    wrong = int((out != expected).sum())
    first = int((out != expected).nonzero()[0, 0])
    return f"{wrong} element(s) differ, first at {first}: {float(out[first])!r} != " \
           f"{float(expected[first])!r}"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not torch.cuda.is_available():
        print("vecadd: cannot run here: torch sees no GPU", file=sys.stderr)
        return 2
    generator = torch.Generator().manual_seed(0)
    x_cpu = torch.rand(args.size, generator=generator)
    y_cpu = torch.rand(args.size, generator=generator)
    expected = x_cpu + y_cpu
    x, y = x_cpu.to("cuda"), y_cpu.to("cuda")
    out = torch.empty_like(x)
    with proton.scope("check"):
        launch(x, y, out, args.block_size)
    problem = mismatch(out.cpu(), expected)
    if problem is None:
        with proton.scope("iters"):
            for _ in range(args.iters):
                launch(x, y, out, args.block_size)
        torch.cuda.synchronize()
        problem = mismatch(out.cpu(), expected)
    if problem:
        print(f"vecadd: FAIL: {problem}", file=sys.stderr)
        return 1
    print(f"vecadd: size={args.size} block_size={args.block_size} launches={args.iters + 1} "
          f"(1 check + {args.iters} iters) PASS")
    return 0


if __name__ == "__main__":
    code = main()
    if code:
        raise SystemExit(code)
