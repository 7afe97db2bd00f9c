"""A row-wise RMS norm in Triton with three intra-kernel scopes, for Proton's instrumentation
backend under its command-line front end.

    python rmsnorm.py [--rows 8192] [--cols 1024] [--iters 10]

Each program normalises one row: out = x / sqrt(mean(x^2) + eps) * weight. The kernel marks
three regions with `triton.profiler.language` scopes: `load` (the row and the weights come in),
`reduce` (the sum of squares across the row) and `store` (scale and write back). Proton's
`instrumentation` backend compiles cycle counters into those regions, so the capture says how a
launch's cycles split between memory traffic and the reduction.

GPU work: 1 launch from check_once() (compiles the kernel; the result is checked against float64
on the CPU) and ITERS launches from timed_iterations() (10 by default), all of them
`rmsnorm_kernel`. Under Proton's CLI the session is open before the script starts, so the first
compile already carries the counters. Inputs are drawn on the CPU and copied in; the checks read
copies back.

Exit status: 0 PASS, 1 wrong result, 2 cannot run here (torch or Triton missing, no GPU, bad
arguments). Never `SystemExit(0)`: on Triton <= 3.6 that would skip Proton's finalize().
"""

from __future__ import annotations

import argparse
import sys

try:
    # Proton before torch, always (on Triton 3.8.0 the reverse order hangs at exit).
    import triton.profiler.language as pl  # isort: skip  # noqa: I001
    import torch
    import triton
    import triton.language as tl
except ImportError as exc:
    print(f"rmsnorm: cannot run here: needs torch and a triton with triton.profiler.language "
          f"({exc})", file=sys.stderr)
    raise SystemExit(2) from None

EPS = 1e-6
MAX_COLS = 16384
RELATIVE_TOLERANCE = 1e-5


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    in_row = cols < n_cols
    pl.enter_scope("load")
    x = tl.load(x_ptr + row * n_cols + cols, mask=in_row, other=0.0)
    w = tl.load(w_ptr + cols, mask=in_row, other=0.0)
    pl.exit_scope("load")
    pl.enter_scope("reduce")
    inverse_rms = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    pl.exit_scope("reduce")
    pl.enter_scope("store")
    tl.store(out_ptr + row * n_cols + cols, x * inverse_rms * w, mask=in_row)
    pl.exit_scope("store")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Triton RMS norm with three intra-kernel scopes")
    parser.add_argument("--rows", type=int, default=8192, help="rows (default 8192)")
    parser.add_argument("--cols", type=int, default=1024, help=f"columns, 1..{MAX_COLS}")
    parser.add_argument("--iters", type=int, default=10, help="launches after the check")
    args = parser.parse_args(argv)
    if not 1 <= args.rows <= 1 << 20 or not 1 <= args.cols <= MAX_COLS:
        parser.error(f"--rows must be in 1..1048576 and --cols in 1..{MAX_COLS}")
    if args.rows * args.cols > 1 << 28:
        parser.error("--rows x --cols must be at most 2**28 (32-bit offsets in the kernel)")
    if args.iters < 1:
        parser.error("--iters must be >= 1")
    return args


def rmsnorm(x, weight, out) -> None:
    rows, cols = x.shape
    rmsnorm_kernel[(rows,)](x, weight, out, cols, EPS, BLOCK_SIZE=triton.next_power_of_2(cols))


def check_once(x, weight, out) -> None:
    rmsnorm(x, weight, out)


def timed_iterations(x, weight, out, iters: int) -> None:
    for _ in range(iters):
        rmsnorm(x, weight, out)


def reference(x_cpu, w_cpu):
    x = x_cpu.double()
    return x / (x.square().mean(dim=1, keepdim=True) + EPS).sqrt() * w_cpu.double()


def mismatch(out_cpu, want) -> str | None:
    error = (out_cpu.double() - want).abs()
    bad = ~(error <= RELATIVE_TOLERANCE * want.abs() + 1e-6)        # NaN counts as bad
    if not bool(bad.any()):
        return None
    row, col = (int(v) for v in bad.nonzero()[0])
    return f"out[{row}, {col}] = {float(out_cpu[row, col])!r}, want {float(want[row, col])!r}"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not torch.cuda.is_available():
        print("rmsnorm: cannot run here: torch sees no GPU", file=sys.stderr)
        return 2
    if hasattr(pl, "enable_semantic"):
        pl.enable_semantic("triton")    # Triton >= 3.6 instruments only Gluon kernels unless told
    generator = torch.Generator().manual_seed(0)
    x_cpu = torch.randn(args.rows, args.cols, generator=generator)
    w_cpu = torch.rand(args.cols, generator=generator) + 0.5
    want = reference(x_cpu, w_cpu)
    x, weight = x_cpu.to("cuda"), w_cpu.to("cuda")
    out = torch.empty_like(x)
    check_once(x, weight, out)
    problem = mismatch(out.cpu(), want)
    if problem is None:
        timed_iterations(x, weight, out, args.iters)
        torch.cuda.synchronize()
        problem = mismatch(out.cpu(), want)
    if problem:
        print(f"rmsnorm: FAIL: {problem}", file=sys.stderr)
        return 1
    print(f"rmsnorm: rows={args.rows} cols={args.cols} launches={args.iters + 1} "
          f"(1 check + {args.iters} iters) PASS")
    return 0


if __name__ == "__main__":
    code = main()
    if code:
        raise SystemExit(code)
