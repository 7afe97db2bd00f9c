"""A Triton vector add with a known number of GPU launches, for Proton's GPU tests.

    python3 proton_vecadd.py LAUNCHES [--size N] [--scoped] [--exit-code K] [--raise]
        [--sleep-after S]

GPU kernels, all Triton: one `fill_kernel` launch writes the inputs, then LAUNCHES launches of
`add_kernel` (or `scoped_add_kernel`, which marks intra-kernel scopes `load` and `store` for the
instrumentation backend) inside `proton.scope("step")`. No torch operator runs on the GPU, so a
capture must hold exactly LAUNCHES + 1 launches. The result is checked on the CPU.

Under `mode: env` (AORTA_PROTON_NAME set) the payload starts and finalizes Proton itself from the
AORTA_PROTON_* variables; under Proton's CLI those calls are ignored by Proton.

It ends the way most scripts do, with `sys.exit(main())`: `sys.exit(0)` when the result is
right, 1 when it is wrong, 2 without a GPU. After correct work, `--exit-code K` makes it
`sys.exit(K)`, `--raise` raises an uncaught RuntimeError (exit 1, with a traceback), and
`--sleep-after S` sleeps S seconds first (for a timeout to interrupt). These exercise the
capture's survival of every ending: Triton <= 3.6's own CLI wrote nothing for any of them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import triton.profiler as proton  # isort: skip  # Proton before torch (Triton 3.8 hangs otherwise)
import torch
import triton
import triton.language as tl

try:
    import triton.profiler.language as pl
except (ImportError, AttributeError):  # a Triton without intra-kernel scopes
    pl = None

BLOCK = 1024


@triton.jit
def fill_kernel(x_ptr, y_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    tl.store(x_ptr + offsets, (offsets % 97).to(tl.float32) * 0.5, mask=mask)
    tl.store(y_ptr + offsets, (offsets % 89).to(tl.float32) * 0.25, mask=mask)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask)
             + tl.load(y_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def scoped_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    pl.enter_scope("load")
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    pl.exit_scope("load")
    pl.enter_scope("store")
    tl.store(out_ptr + offsets, x + y, mask=mask)
    pl.exit_scope("store")


def start_from_env() -> bool:
    """proton.start() from the AORTA_PROTON_* variables; False when they are absent."""
    name = os.environ.get("AORTA_PROTON_NAME")
    if not name:
        return False
    out_dir = os.environ.get("AORTA_PROTON_DIR")
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
    kwargs = {"context": os.environ.get("AORTA_PROTON_CONTEXT", "shadow"),
              "data": os.environ.get("AORTA_PROTON_DATA", "tree")}
    for key, variable in (("backend", "AORTA_PROTON_BACKEND"), ("mode", "AORTA_PROTON_MODE"),
                          ("hook", "AORTA_PROTON_HOOK")):
        if os.environ.get(variable):
            kwargs[key] = os.environ[variable]
    proton.start(name, **kwargs)
    return True


def run(launches: int, size: int, scoped: bool) -> int:
    x = torch.empty(size, device="cuda", dtype=torch.float32)
    y = torch.empty_like(x)
    out = torch.empty_like(x)
    grid = (triton.cdiv(size, BLOCK),)
    fill_kernel[grid](x, y, size, BLOCK_SIZE=BLOCK)
    kernel = scoped_add_kernel if scoped else add_kernel
    with proton.scope("step"):
        for _ in range(launches):
            kernel[grid](x, y, out, size, BLOCK_SIZE=BLOCK)
    torch.cuda.synchronize()
    x_cpu, y_cpu, out_cpu = x.cpu(), y.cpu(), out.cpu()    # copies, not kernels
    expected = x_cpu + y_cpu
    if not torch.equal(out_cpu, expected):
        print(f"vecadd: FAIL, max error {(out_cpu - expected).abs().max().item()}")
        return 1
    print(f"vecadd: launches={launches + 1} size={size} PASS")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("launches", type=int, help="add_kernel launches (plus one fill_kernel)")
    parser.add_argument("--size", type=int, default=1 << 16)
    parser.add_argument("--scoped", action="store_true",
                        help="launch scoped_add_kernel (intra-kernel scopes load, store)")
    parser.add_argument("--exit-code", type=int, default=0)
    parser.add_argument("--raise", dest="raise_after", action="store_true",
                        help="raise RuntimeError after the (correct) work")
    parser.add_argument("--sleep-after", type=float, default=0.0,
                        help="seconds to sleep after the work, before ending")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("vecadd: no GPU visible to torch")
        return 2
    scoped = args.scoped or os.environ.get("AORTA_PROTON_BACKEND") == "instrumentation"
    if scoped:
        if pl is None:
            print("vecadd: this Triton has no triton.profiler.language")
            return 2
        if hasattr(pl, "enable_semantic"):
            pl.enable_semantic("triton")
    started = start_from_env()
    try:
        code = run(args.launches, args.size, scoped)
        if code == 0 and args.sleep_after:
            print(f"vecadd: sleeping {args.sleep_after:g} s", flush=True)
            time.sleep(args.sleep_after)
        if code == 0 and args.raise_after:
            raise RuntimeError("vecadd: raised after the work, as asked (--raise)")
    finally:
        if started:
            proton.finalize()
    return code or args.exit_code


if __name__ == "__main__":
    sys.exit(main())
