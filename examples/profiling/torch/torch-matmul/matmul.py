"""PyTorch matrix products (`a @ b`) with a known count, for whole-process profilers.

    python matmul.py [--size 2048] [--iters 20] [--warmup 3] [--dtype float16] [--device cuda]

GPU work: WARMUP + ITERS products `a @ b` (23 by default) and nothing else on the GPU. The
inputs are drawn on the CPU and copied in, and the check reads copies back: copies are not
kernels. Each product is one call into the vendor BLAS (cuBLAS/cuBLASLt on NVIDIA, hipBLASLt
or rocBLAS on AMD), which usually runs it as one kernel; a library may split a product into
two kernels (a split-K reduction), and the profiler then shows a multiple of 23 launches.

Self-check: every entry is finite, and 16 sampled entries match a float64 dot product of the
same inputs within a tolerance scaled by sum(|a_ik * b_kj|) (float32 2e-3, which admits TF32;
float16 1e-2; bfloat16 2e-2).

Exit status: 0 PASS, 1 wrong result, 2 cannot run here (torch missing, no GPU for
`--device cuda`, bad arguments). `--device cpu` runs the same products on the CPU.

This file is the same, byte for byte, in rocprof/torch-matmul, nsys/torch-matmul and
torch/torch-matmul.
"""

from __future__ import annotations

import argparse
import sys

SAMPLES = 16
TOLERANCE = {"float32": 2e-3, "float16": 1e-2, "bfloat16": 2e-2}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="PyTorch a @ b with a known product count")
    parser.add_argument("--size", type=int, default=2048, help="matrix order n (default 2048)")
    parser.add_argument("--iters", type=int, default=20, help="timed products (default 20)")
    parser.add_argument("--warmup", type=int, default=3, help="products before them (default 3)")
    parser.add_argument("--dtype", choices=sorted(TOLERANCE), default="float16")
    parser.add_argument("--device", default="cuda", help="cuda (also AMD GPUs) or cpu")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not 1 <= args.size <= 32768:
        parser.error("--size must be in 1..32768")
    if args.iters < 1 or args.warmup < 0:
        parser.error("--iters must be >= 1 and --warmup >= 0")
    return args


def check(a, b, c, dtype_name: str, seed: int) -> str | None:
    """Why `c` is not `a @ b` (all CPU tensors), or None when the sampled entries agree."""
    import torch

    if not bool(torch.isfinite(c).all()):
        return "the product holds a non-finite entry"
    n = a.shape[0]
    picks = torch.randint(0, n, (SAMPLES, 2), generator=torch.Generator().manual_seed(seed + 1))
    for i, j in picks.tolist():
        terms = a[i].double() * b[:, j].double()
        want, scale = float(terms.sum()), float(terms.abs().sum())
        got = float(c[i, j])
        allowed = TOLERANCE[dtype_name] * scale + 1e-30
        if not abs(got - want) <= allowed:      # written so that NaN fails too
            return f"c[{i}, {j}] = {got!r}, want {want!r} (allowed error {allowed:.3g})"
    return None


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        import torch
    except ImportError as exc:
        print(f"matmul: cannot run here: torch is not importable ({exc})", file=sys.stderr)
        return 2
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("matmul: cannot run here: torch sees no GPU (add --device cpu to run on the CPU)",
              file=sys.stderr)
        return 2
    dtype = getattr(torch, args.dtype)
    generator = torch.Generator().manual_seed(args.seed)
    # Drawn and converted on the CPU, so that moving them is a plain copy and not a kernel.
    a_cpu = (torch.rand(args.size, args.size, generator=generator) * 2 - 1).to(dtype)
    b_cpu = (torch.rand(args.size, args.size, generator=generator) * 2 - 1).to(dtype)
    a, b = a_cpu.to(args.device), b_cpu.to(args.device)
    for _ in range(args.warmup + args.iters):
        c = a @ b
    if args.device.startswith("cuda"):
        torch.cuda.synchronize()
    print(f"matmul: size={args.size} dtype={args.dtype} device={args.device} "
          f"products={args.warmup + args.iters} (warmup {args.warmup} + iters {args.iters})")
    problem = check(a_cpu, b_cpu, c.cpu(), args.dtype, args.seed)
    if problem:
        print(f"matmul: FAIL: {problem}", file=sys.stderr)
        return 1
    print("matmul: PASS")
    return 0


if __name__ == "__main__":
    code = main()
    if code:
        raise SystemExit(code)
