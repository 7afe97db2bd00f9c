"""An erf-form GELU in Triton, for statistical (PC-sampling) attribution inside the kernel.

    python gelu.py [--size 4194304] [--iters 50] [--backend rocprofiler]
                   [--backend-mode pcsampling]

`gelu_kernel` computes 0.5 * x * (1 + erf(x / sqrt(2))) elementwise: a kernel long enough in
arithmetic that PC samples land on more than its loads and stores.

GPU work: 1 launch before the session (compiles the kernel; its result is checked against
float64 on the CPU), then ITERS launches inside it (50 by default). Inputs are drawn on the CPU
and copied in; the final check reads a copy back after the session.

The session is aorta's when the proton collector runs in `mode: env` (AORTA_PROTON_{DIR,NAME,
BACKEND,CONTEXT,DATA,MODE,HOOK}); run by hand, `--backend NAME [--backend-mode MODE]` starts
one writing ./gelu.hatchet. Before starting, the payload asks this Triton which backends it has
(`get_available_profilers()`, Triton >= 3.8; older releases are assumed to have cupti,
roctracer and instrumentation only) and exits 2 with the reason when the one asked for is
missing, or when Proton refuses the mode (`pcsampling` on AMD needs a Triton newer than 3.8.0).

Exit status: 0 PASS, 1 wrong result, 2 cannot run here (torch or Triton missing, no GPU, bad
arguments, a backend or mode this Triton or host cannot start).
"""

from __future__ import annotations

import argparse
import os
import sys

try:
    # Proton before torch, always: the rocprofiler backend configures rocprofiler-sdk when
    # libproton loads, which must happen before torch brings up HSA; and on Triton 3.8.0 the
    # reverse order hangs at exit.
    import triton.profiler as proton  # isort: skip  # noqa: I001
    import torch
    import triton
    import triton.language as tl
    from triton._C.libproton import proton as libproton
except ImportError as exc:
    print(f"gelu: cannot run here: needs torch and triton ({exc})", file=sys.stderr)
    raise SystemExit(2) from None

BLOCK = 1024
RELATIVE_TOLERANCE = 1e-5
#: What Triton releases without `get_available_profilers()` (before 3.8) can start.
PRE_REGISTRY_BACKENDS = ("cupti", "roctracer", "instrumentation")
#: Fragments of proton.start() errors, and what to do about each.
REMEDIES = (
    ("unsupported mode", "this Triton's backend does not offer that mode; AMD pcsampling needs "
                         "a Triton main build newer than 3.8.0"),
    ("could not load", "the profiler library is missing or only present under a versioned "
                       "name; install the ROCm profiler packages of this ROCm release"),
    ("visible_devices", "pick GPUs with ROCR_VISIBLE_DEVICES instead of HIP_/CUDA_VISIBLE_DEVICES"),
)


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    inside = offsets < n
    x = tl.load(x_ptr + offsets, mask=inside)
    tl.store(out_ptr + offsets, 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476)),
             mask=inside)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="erf GELU in Triton for PC sampling")
    parser.add_argument("--size", type=int, default=1 << 22, help="elements (default 4194304)")
    parser.add_argument("--iters", type=int, default=50, help="launches inside the session")
    parser.add_argument("--backend", help="run by hand: start a Proton session on this backend "
                                          "(aorta's AORTA_PROTON_BACKEND wins)")
    parser.add_argument("--backend-mode", help="run by hand: the backend's mode, e.g. pcsampling "
                                               "(aorta's AORTA_PROTON_MODE wins)")
    args = parser.parse_args(argv)
    if not 1 <= args.size <= 1 << 30:
        parser.error("--size must be in 1..2**30")
    if args.iters < 1:
        parser.error("--iters must be >= 1")
    if args.backend_mode and not args.backend:
        parser.error("--backend-mode needs --backend")
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


def unavailable(backend: str | None) -> str | None:
    """Why this Triton cannot start `backend`, or None (None: auto, or it is listed)."""
    if backend is None:
        return None
    listing = getattr(libproton, "get_available_profilers", None)
    available = tuple(listing()) if listing else PRE_REGISTRY_BACKENDS
    if backend in available:
        return None
    return (f"backend {backend!r} is not available in Triton {triton.__version__} "
            f"(it offers {', '.join(available)})")


def remedy(error: Exception) -> str:
    text = str(error).lower()
    return next((fix for fragment, fix in REMEDIES if fragment in text), "")


def start_session(settings) -> str | None:
    """Start the Proton session; why it cannot be started here, or None."""
    directory, start_kwargs = settings
    problem = unavailable(start_kwargs["backend"])
    if problem:
        return problem
    if directory:
        os.makedirs(directory, exist_ok=True)
    try:
        proton.start(**start_kwargs)
    except Exception as exc:  # noqa: BLE001 - any refusal means this host cannot profile
        fix = remedy(exc)
        return f"proton.start() failed: {type(exc).__name__}: {exc}" + (f" ({fix})" if fix else "")
    return None


def launch(x, out) -> None:
    gelu_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, out, x.numel(), BLOCK_SIZE=BLOCK)


def mismatch(out_cpu, x_cpu) -> str | None:
    x = x_cpu.double()
    want = 0.5 * x * (1.0 + torch.erf(x / 2 ** 0.5))
    error = (out_cpu.double() - want).abs()
    bad = ~(error <= RELATIVE_TOLERANCE * want.abs() + 1e-7)        # NaN counts as bad
    if not bool(bad.any()):
        return None
    i = int(bad.nonzero()[0, 0])
    return f"gelu({float(x_cpu[i])!r}) = {float(out_cpu[i])!r}, want {float(want[i])!r}"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not torch.cuda.is_available():
        print("gelu: cannot run here: torch sees no GPU", file=sys.stderr)
        return 2
    x_cpu = torch.randn(args.size, generator=torch.Generator().manual_seed(0)) * 3
    x = x_cpu.to("cuda")
    out = torch.empty_like(x)
    launch(x, out)
    problem = mismatch(out.cpu(), x_cpu)
    if problem:
        print(f"gelu: FAIL: {problem}", file=sys.stderr)
        return 1
    settings = proton_settings(os.environ, args.backend, args.backend_mode, default_name="gelu")
    if settings is not None:
        refusal = start_session(settings)
        if refusal:
            print(f"gelu: cannot run here: {refusal}", file=sys.stderr)
            return 2
    try:
        for _ in range(args.iters):
            launch(x, out)
        torch.cuda.synchronize()
    finally:
        if settings is not None:
            proton.finalize()
    problem = mismatch(out.cpu(), x_cpu)
    if problem:
        print(f"gelu: FAIL after the session: {problem}", file=sys.stderr)
        return 1
    print(f"gelu: size={args.size} launches_in_session={args.iters} (plus 1 before) PASS")
    return 0


if __name__ == "__main__":
    code = main()
    if code:
        raise SystemExit(code)
