"""A fused row softmax in Triton with a known launch count, for Proton's Python-frame context.

    python softmax.py [--rows 4096] [--cols 1024] [--iters 20]

Each program loads one row, subtracts its maximum, exponentiates, sums and divides: one read
and one write of the matrix. GPU work, all of it one Triton kernel, `softmax_kernel` (inputs
are drawn on the CPU and copied in, the check reads copies back; copies are not kernels):

    1 launch       from check_once()         compiles the kernel; its result is checked
    ITERS launches from timed_iterations()   the same rows again; checked again at the end

so a capture holds exactly ITERS + 1 launches (21 by default). Under `context: python` Proton
files them under the call path that launched them (`file:line@function` frames), so the tree
shows the two call sites apart without any `proton.scope` in the code.

Self-check: the largest absolute difference from a float64 softmax on the CPU must be at most
1e-6 (written as `not err <= tol`, so NaN fails).

Exit status: 0 PASS, 1 wrong result, 2 cannot run here (torch or Triton missing, no GPU, bad
arguments). Never `SystemExit(0)`: on Triton <= 3.6 that would skip Proton's finalize().
"""

from __future__ import annotations

import argparse
import sys

try:
    # Proton before torch, always (on Triton 3.8.0 the reverse order hangs at exit).
    import triton.profiler  # isort: skip  # noqa: I001, F401
    import torch
    import triton
    import triton.language as tl
except ImportError as exc:
    print(f"softmax: cannot run here: needs torch and triton ({exc})", file=sys.stderr)
    raise SystemExit(2) from None

TOLERANCE = 1e-6
MAX_COLS = 16384          # one row per program: the whole row must fit one block


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    in_row = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=in_row, other=-float("inf"))
    shifted = x - tl.max(x, axis=0)
    numerator = tl.exp(shifted)
    denominator = tl.sum(numerator, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, numerator / denominator, mask=in_row)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Triton fused softmax with a known launch count")
    parser.add_argument("--rows", type=int, default=4096, help="rows (default 4096)")
    parser.add_argument("--cols", type=int, default=1024, help=f"columns, 1..{MAX_COLS}")
    parser.add_argument("--iters", type=int, default=20, help="launches after the check")
    args = parser.parse_args(argv)
    if not 1 <= args.rows <= 1 << 20:
        parser.error("--rows must be in 1..1048576")
    if not 1 <= args.cols <= MAX_COLS:
        parser.error(f"--cols must be in 1..{MAX_COLS}")
    if args.rows * args.cols > 1 << 28:
        parser.error("--rows x --cols must be at most 2**28 (32-bit offsets in the kernel)")
    if args.iters < 1:
        parser.error("--iters must be >= 1")
    return args


def softmax(x, out) -> None:
    rows, cols = x.shape
    softmax_kernel[(rows,)](out, x, x.stride(0), out.stride(0), cols,
                            BLOCK_SIZE=triton.next_power_of_2(cols))


def check_once(x, out) -> None:
    softmax(x, out)


def timed_iterations(x, out, iters: int) -> None:
    for _ in range(iters):
        softmax(x, out)


def error_against(out_cpu, expected) -> str | None:
    """Why `out_cpu` is not `expected` (float64) within TOLERANCE, or None."""
    err = float((out_cpu.double() - expected).abs().max())
    if not err <= TOLERANCE:
        return f"largest absolute error {err!r} exceeds {TOLERANCE}"
    return None


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not torch.cuda.is_available():
        print("softmax: cannot run here: torch sees no GPU", file=sys.stderr)
        return 2
    x_cpu = torch.randn(args.rows, args.cols, generator=torch.Generator().manual_seed(0))
    expected = torch.softmax(x_cpu.double(), dim=1)
    x = x_cpu.to("cuda")
    out = torch.empty_like(x)
    check_once(x, out)
    problem = error_against(out.cpu(), expected)
    if problem is None:
        timed_iterations(x, out, args.iters)
        torch.cuda.synchronize()
        problem = error_against(out.cpu(), expected)
    if problem:
        print(f"softmax: FAIL: {problem}", file=sys.stderr)
        return 1
    print(f"softmax: rows={args.rows} cols={args.cols} launches={args.iters + 1} "
          f"(1 check + {args.iters} iters) PASS")
    return 0


if __name__ == "__main__":
    code = main()
    if code:
        raise SystemExit(code)
