"""Three Triton kernels in sequence, profiled by a Proton session the payload starts itself.

    python pipeline.py [--rows 4096] [--cols 1024] [--iters 20] [--backend roctracer]

One pass of the pipeline is three launches: `scale_kernel` (y = alpha * x), `bias_gelu_kernel`
(z = gelu(y + bias), erf form) and `row_sum_kernel` (s = sum of each row of z).

    1 pass before the session    compiles the three kernels and initialises the GPU runtime
                                 (roctracer records nothing unless it starts after that);
                                 the result is checked against float64 on the CPU
    ITERS passes in the session  3 * ITERS launches (60 by default), and nothing else: inputs
                                 were copied in before, the final check reads copies after

The session is aorta's when the proton collector runs in `mode: env`: it hands the payload
AORTA_PROTON_{DIR,NAME,BACKEND,CONTEXT,DATA,MODE,HOOK} and the payload calls proton.start()
with them and proton.finalize() in a `finally`. Run by hand, `--backend NAME` starts a session
writing ./pipeline.hatchet; with neither, nothing is profiled.

Exit status: 0 PASS, 1 wrong result, 2 cannot run here (torch or Triton missing, no GPU, bad
arguments, a Proton backend that cannot start here).
"""

from __future__ import annotations

import argparse
import os
import sys

try:
    # Proton before torch, always (on Triton 3.8.0 the reverse order hangs at exit).
    import triton.profiler as proton  # isort: skip  # noqa: I001
    import torch
    import triton
    import triton.language as tl
except ImportError as exc:
    print(f"pipeline: cannot run here: needs torch and triton ({exc})", file=sys.stderr)
    raise SystemExit(2) from None

ALPHA = 0.75
RELATIVE_TOLERANCE = 1e-5


@triton.jit
def scale_kernel(x_ptr, y_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=inside) * alpha, mask=inside)


@triton.jit
def bias_gelu_kernel(y_ptr, bias_ptr, z_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    inside = cols < n_cols
    v = tl.load(y_ptr + row * n_cols + cols, mask=inside) + tl.load(bias_ptr + cols, mask=inside)
    gelu = 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))
    tl.store(z_ptr + row * n_cols + cols, gelu, mask=inside)


@triton.jit
def row_sum_kernel(z_ptr, s_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    z = tl.load(z_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(s_ptr + row, tl.sum(z, axis=0))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="three Triton kernels under a Proton session")
    parser.add_argument("--rows", type=int, default=4096, help="rows (default 4096)")
    parser.add_argument("--cols", type=int, default=1024, help="columns, 1..16384")
    parser.add_argument("--iters", type=int, default=20, help="passes inside the session")
    parser.add_argument("--backend", help="run by hand: start a Proton session on this backend "
                                          "(aorta's AORTA_PROTON_BACKEND wins)")
    args = parser.parse_args(argv)
    if not 1 <= args.rows <= 1 << 20 or not 1 <= args.cols <= 16384:
        parser.error("--rows must be in 1..1048576 and --cols in 1..16384")
    if args.rows * args.cols > 1 << 28:
        parser.error("--rows x --cols must be at most 2**28 (32-bit offsets in the kernels)")
    if args.iters < 1:
        parser.error("--iters must be >= 1")
    return args


def proton_settings(environ, backend=None, mode=None, default_name="proton"):
    """(directory or None, proton.start() keyword arguments) from aorta's AORTA_PROTON_*
    variables (the collector's mode: env), else from --backend when run by hand; None when
    neither asks for a session. The variables win over the command line."""
    name = environ.get("AORTA_PROTON_NAME")
    backend = environ.get("AORTA_PROTON_BACKEND") or backend
    if not name and not backend:
        return None
    directory = environ.get("AORTA_PROTON_DIR") or None
    return directory, {
        "name": name or default_name,
        "context": environ.get("AORTA_PROTON_CONTEXT") or "shadow",
        "data": environ.get("AORTA_PROTON_DATA") or "tree",
        "backend": backend,
        "mode": environ.get("AORTA_PROTON_MODE") or mode,
        "hook": environ.get("AORTA_PROTON_HOOK") or None,
    }


def run_pipeline(x, bias, y, z, s) -> None:
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    scale_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, ALPHA, x.numel(), BLOCK=1024)
    bias_gelu_kernel[(rows,)](y, bias, z, cols, BLOCK=block)
    row_sum_kernel[(rows,)](z, s, cols, BLOCK=block)


def reference(x_cpu, bias_cpu):
    v = x_cpu.double() * ALPHA + bias_cpu.double()
    terms = 0.5 * v * (1.0 + torch.erf(v / 2 ** 0.5))
    return terms.sum(dim=1), terms.abs().sum(dim=1)


def mismatch(s_cpu, want, scale) -> str | None:
    """Why the row sums `s_cpu` are not `want`, or None; the error allowed grows with
    sum(|terms|) of the row, so rows that nearly cancel are judged fairly."""
    error = (s_cpu.double() - want).abs()
    allowed = RELATIVE_TOLERANCE * scale + 1e-6
    bad = ~(error <= allowed)                       # NaN counts as bad
    if not bool(bad.any()):
        return None
    row = int(bad.nonzero()[0, 0])
    return f"row {row}: sum {float(s_cpu[row])!r}, want {float(want[row])!r}"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not torch.cuda.is_available():
        print("pipeline: cannot run here: torch sees no GPU", file=sys.stderr)
        return 2
    generator = torch.Generator().manual_seed(0)
    x_cpu = torch.randn(args.rows, args.cols, generator=generator)
    bias_cpu = torch.randn(args.cols, generator=generator)
    x, bias = x_cpu.to("cuda"), bias_cpu.to("cuda")
    y, z = torch.empty_like(x), torch.empty_like(x)
    s = torch.empty(args.rows, device="cuda")
    run_pipeline(x, bias, y, z, s)
    first = s.cpu()
    problem = mismatch(first, *reference(x_cpu, bias_cpu))
    if problem:
        print(f"pipeline: FAIL: {problem}", file=sys.stderr)
        return 1
    settings = proton_settings(os.environ, args.backend, default_name="pipeline")
    if settings is not None:
        directory, start_kwargs = settings
        if directory:
            os.makedirs(directory, exist_ok=True)
        try:
            proton.start(**start_kwargs)
        except Exception as exc:  # noqa: BLE001 - any refusal means this host cannot profile
            print(f"pipeline: cannot run here: proton.start({start_kwargs['backend'] or 'auto'}) "
                  f"failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 2
    try:
        for _ in range(args.iters):
            run_pipeline(x, bias, y, z, s)
        torch.cuda.synchronize()
    finally:
        if settings is not None:
            proton.finalize()
    if not torch.equal(s.cpu(), first):
        print("pipeline: FAIL: the profiled passes changed the result", file=sys.stderr)
        return 1
    print(f"pipeline: rows={args.rows} cols={args.cols} launches_in_session={3 * args.iters} "
          f"(3 kernels x {args.iters} iters, plus 3 before the session) PASS")
    return 0


if __name__ == "__main__":
    code = main()
    if code:
        raise SystemExit(code)
