"""One deliberately unbalanced Triton kernel with two named intra-kernel scopes.

    python hotspot.py [--size 65536] [--steps 8] [--iters 5] [--backend instrumentation]

`unbalanced_kernel` marks two regions with `triton.profiler.language` scopes: `cheap` (one load
and one add) and `expensive` (STEPS dependent multiply-adds, unrolled at compile time). Proton's
`instrumentation` backend compiles cycle counters into those regions and reports cycles per
scope, so the tree answers "where inside this kernel does the time go"; the `expensive` share
grows with --steps.

GPU work: ITERS launches of `unbalanced_kernel` (5 by default), all of them inside the session,
the first included: the counters are compiled into the kernel, so a launch before the session
would cache a binary without them. Inputs are drawn on the CPU and copied in; the check reads a
copy back after the session.

The session is aorta's when the proton collector runs in `mode: env` (AORTA_PROTON_{DIR,NAME,
BACKEND,CONTEXT,DATA,MODE,HOOK}); run by hand, `--backend NAME` starts one writing
./hotspot.hatchet; with neither, the scopes compile to nothing and only the result is checked.

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
    import triton.profiler.language as pl
except ImportError as exc:
    print(f"hotspot: cannot run here: needs torch and a triton with triton.profiler.language "
          f"({exc})", file=sys.stderr)
    raise SystemExit(2) from None

BLOCK = 1024
MAX_STEPS = 64            # the loop is unrolled at compile time
TOLERANCE = 1e-5


@triton.jit
def unbalanced_kernel(x_ptr, out_ptr, n, STEPS: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    inside = offsets < n
    pl.enter_scope("cheap")
    x = tl.load(x_ptr + offsets, mask=inside, other=0.0)
    shifted = x + 1.0
    pl.exit_scope("cheap")
    pl.enter_scope("expensive")
    acc = x
    for _ in tl.static_range(STEPS):
        acc = acc * acc * 0.5 + shifted * 0.25
    pl.exit_scope("expensive")
    tl.store(out_ptr + offsets, shifted + acc, mask=inside)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="an unbalanced Triton kernel with two scopes")
    parser.add_argument("--size", type=int, default=65536, help="elements (default 65536)")
    parser.add_argument("--steps", type=int, default=8, help=f"expensive steps, 1..{MAX_STEPS}")
    parser.add_argument("--iters", type=int, default=5, help="launches, all in the session")
    parser.add_argument("--backend", help="run by hand: start a Proton session on this backend "
                                          "(aorta's AORTA_PROTON_BACKEND wins)")
    args = parser.parse_args(argv)
    if not 1 <= args.size <= 1 << 30:
        parser.error("--size must be in 1..2**30")
    if not 1 <= args.steps <= MAX_STEPS:
        parser.error(f"--steps must be in 1..{MAX_STEPS} (the loop is unrolled)")
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


def launch(x, out, steps: int) -> None:
    grid = (triton.cdiv(x.numel(), BLOCK),)
    unbalanced_kernel[grid](x, out, x.numel(), STEPS=steps, BLOCK_SIZE=BLOCK)


def reference(x_cpu, steps: int):
    x = x_cpu.double()
    shifted = x + 1.0
    acc = x
    for _ in range(steps):
        acc = acc * acc * 0.5 + shifted * 0.25
    return shifted + acc


def error_against(out_cpu, expected) -> str | None:
    err = float((out_cpu.double() - expected).abs().max())
    if not err <= TOLERANCE:                        # NaN fails too
        return f"largest absolute error {err!r} exceeds {TOLERANCE}"
    return None


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not torch.cuda.is_available():
        print("hotspot: cannot run here: torch sees no GPU", file=sys.stderr)
        return 2
    if hasattr(pl, "enable_semantic"):
        pl.enable_semantic("triton")    # Triton >= 3.6 instruments only Gluon kernels unless told
    x_cpu = torch.rand(args.size, generator=torch.Generator().manual_seed(0))
    x = x_cpu.to("cuda")
    out = torch.empty_like(x)
    settings = proton_settings(os.environ, args.backend, default_name="hotspot")
    if settings is not None:
        directory, start_kwargs = settings
        if directory:
            os.makedirs(directory, exist_ok=True)
        try:
            proton.start(**start_kwargs)
        except Exception as exc:  # noqa: BLE001 - any refusal means this host cannot profile
            print(f"hotspot: cannot run here: proton.start({start_kwargs['backend'] or 'auto'}) "
                  f"failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 2
    try:
        for _ in range(args.iters):
            launch(x, out, args.steps)
        torch.cuda.synchronize()
    finally:
        if settings is not None:
            proton.finalize()
    problem = error_against(out.cpu(), reference(x_cpu, args.steps))
    if problem:
        print(f"hotspot: FAIL: {problem}", file=sys.stderr)
        return 1
    print(f"hotspot: size={args.size} steps={args.steps} launches={args.iters} "
          f"(all in the session) PASS")
    return 0


if __name__ == "__main__":
    code = main()
    if code:
        raise SystemExit(code)
