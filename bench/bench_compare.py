"""What `aorta compare` costs next to reading the two runs it compares.

Generates pairs of run directories in a temporary directory (written through the same records
a sweep writes: `run.json` and one `result.json` per trial), then times, in one process:

- read: loading both runs (`aorta.comparison.load.load_run`), the floor any compare pays;
- compare: everything after reading (the statistics of every metric and kernel row, and the
  text rendering), as `aorta compare` does it;
- end to end: the command in process (`aorta.cli.compare.run`), output discarded.

Each figure is the median of `--repeats` runs. A trial's record looks like a rocprofv3
trial's: the wrapped argv, the harness metrics, the collector's metrics and a kernel table of
40 kernels (two with long templated C++ names), kernel times with lognormal noise (CV 5%)
in milliseconds to the nanosecond, as rocprofv3 reports them; one scenario rounds them to the
microsecond (a coarse timer, so short kernels tie). NEW is 10% slower in a quarter of the
kernels.

    python bench/bench_compare.py [--repeats 5] [--only NAME] [--cpu] [--python]

`--python` runs the pure-Python quantile search even where the compiled one is built, as an
install without a C compiler does.

Each scenario also prints the best (smallest) of its repeats: the work is deterministic and
CPU-bound, so where other processes share the machine the best is the steadier figure.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import math
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aorta.store.records import TrialResult

try:                                   # where write_json lives since the run-directory store
    from aorta.store.files import write_json
except ImportError:                    # the trees before it, so one script times both
    from aorta.store.records import write_json  # type: ignore[attr-defined,no-redef]

# (name, cells, base trials, new trials, kernels per table, decimals of a kernel's ms)
SCENARIOS = (
    ("20 cells x 10 trials", 20, 10, 10, 40, 6),
    ("40 cells x 10 trials", 40, 10, 10, 40, 6),
    ("20 cells x 5 trials", 20, 5, 5, 40, 6),
    ("20 cells x 10 trials, us timer", 20, 10, 10, 40, 3),
    ("4 cells x 20 trials", 4, 20, 20, 40, 6),
    ("4 cells x 20 trials, us timer", 4, 20, 20, 40, 3),
    ("1 cell x 51 vs 50 trials", 1, 51, 50, 40, 6),
    ("1 cell x 201 vs 200 trials", 1, 201, 200, 40, 6),
    ("1 cell x 1000 trials", 1, 1000, 1000, 40, 6),
)
_SIGMA = math.sqrt(math.log(1 + 0.05 ** 2))
_LONG = ("void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>"
         "(cutlass_80_simt_sgemm_256x128_8x4_nn_align1::Params)")


def kernel_names(count: int) -> list[str]:
    names = [_LONG, "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
             "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, "
             "float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned "
             "int, float, 4>>(at::native::ReduceOp<float>)"]
    names += [f"fused_op{i:02d}_kernel" for i in range(count - len(names))]
    return names[:count]


def trial(cell: str, index: int, rng: random.Random, kernels: list[str], slower: float,
          decimals: int) -> TrialResult:
    def noisy(scale: float) -> float:
        return scale * rng.lognormvariate(0, _SIGMA)

    table = [{"name": name, "calls": 4,
              "total_ms": round(noisy(0.02 * (k + 1)) * (slower if k % 4 == 0 else 1.0),
                                decimals)}
             for k, name in enumerate(kernels)]
    table.sort(key=lambda row: -float(row["total_ms"]))
    out = f"/scratch/runs/bench/cells/{cell}/trial_{index}/rocprof"
    command = ["python3", "train.py", "--steps", "20", "--batch", "64"]
    return TrialResult(
        cell=cell, index=index, verdict="pass", reason="exit 0",
        argv=["rocprofv3", "--kernel-trace", "--stats", "--output-format", "csv", "-d", out,
              "-o", "run", "--", *command],
        command=command, env_overlay={"HIP_VISIBLE_DEVICES": "0"}, env_unset=[], exit_code=0,
        launched=True, wall_s=noisy(1.0), cpu_user_s=noisy(0.8), cpu_sys_s=noisy(0.1),
        max_rss_mib=noisy(512.0), started_at="2026-12-02T18:32:46+00:00", host="node-17",
        device="0",
        metrics={"rocprof_gpu_time_ms": sum(float(r["total_ms"]) for r in table),
                 "rocprof_kernel_count": 4 * len(table),
                 "rocprof_top_kernel_ms": table[0]["total_ms"],
                 "rocprof_top_kernels": [r["name"] for r in table[:5]],
                 "rocprof_kernels": table, "rocprof_capture": "ok", "rocprof_artifact_dir": out,
                 "rocprof_version": "1.0.0"})


def make_run(root: Path, name: str, cells: int, trials: int, kernels: int, slower: float,
             seed: int, decimals: int = 6) -> Path:
    rng = random.Random(seed)
    names = kernel_names(kernels)
    run_dir = root / name
    cell_names = [f"cell{c:02d}" for c in range(cells)]
    write_json(run_dir / "run.json", {
        "schema_version": 1, "aorta_version": "0.1.0", "run": name, "fingerprint": "bench",
        "command": ["payload"], "collectors": ["rocprof"], "cells": cell_names,
        "trials_per_cell": trials, "status": "complete"})
    for cell in cell_names:
        for i in range(trials):
            write_json(run_dir / "cells" / cell / f"trial_{i}" / "result.json",
                       trial(cell, i, rng, names, slower, decimals).to_json())
    return run_dir


def median_time(action: Callable[[], Any], repeats: int,
                clock: Callable[[], float]) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeats):
        start = clock()
        action()
        times.append(clock() - start)
    return statistics.median(times), times


def measure(base: Path, new: Path, repeats: int,
            clock: Callable[[], float] = time.perf_counter) -> dict[str, Any]:
    from aorta.cli.compare import CompareOptions, run
    from aorta.comparison.build import compare_runs
    from aorta.comparison.load import load_run, parse_ref
    from aorta.comparison.model import CompareSettings
    from aorta.comparison.render import text_lines

    def read() -> Any:
        return load_run(parse_ref(str(base))), load_run(parse_ref(str(new)))

    loaded = read()

    def compare() -> Any:
        return text_lines(compare_runs(loaded[0], loaded[1], CompareSettings()))

    def end_to_end() -> Any:
        with contextlib.redirect_stdout(io.StringIO()):
            return run(CompareOptions(str(base), str(new)))

    rows = sum(1 for _ in compare_runs(loaded[0], loaded[1], CompareSettings()).rows())
    read_s, read_all = median_time(read, repeats, clock)
    compare_s, compare_all = median_time(compare, repeats, clock)
    total_s, total_all = median_time(end_to_end, repeats, clock)
    return {"rows": rows, "read": read_s, "compare": compare_s, "total": total_s,
            "runs": (read_all, compare_all, total_all)}


def force_python_search() -> None:
    """Turn the compiled quantile search off, wherever this tree keeps the interval."""
    for name in ("aorta.stats.interval", "aorta.comparison.interval"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        module._compiled_quantiles = None  # type: ignore[attr-defined]
        return
    raise SystemExit("no interval module found")


def machine() -> str:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return (f"{platform.machine()} {platform.processor() or 'cpu'}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}, {platform.system()} {platform.release()}, "
            f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", help="run only the scenarios whose name contains this")
    parser.add_argument("--cpu", action="store_true",
                        help="time with this process's CPU clock instead of the wall clock "
                             "(steadier on a shared machine; all the work is in-process)")
    parser.add_argument("--python", action="store_true",
                        help="use the pure-Python quantile search, not the compiled one")
    args = parser.parse_args()
    if args.python:
        force_python_search()
    clock = time.process_time if args.cpu else time.perf_counter
    print(f"machine: {machine()}; clock: {'process CPU' if args.cpu else 'wall'}; quantile "
          f"search: {'Python' if args.python else 'compiled where built'}")
    print(f"{'scenario':<32} {'rows':>5} {'read s':>8} {'compare s':>10} {'x read':>7} "
          f"{'end-to-end s':>13} {'x read':>7}")
    for name, cells, n_base, n_new, kernels, decimals in SCENARIOS:
        if args.only and args.only not in name:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            base = make_run(Path(tmp), "base", cells, n_base, kernels, 1.0, 1, decimals)
            new = make_run(Path(tmp), "new", cells, n_new, kernels, 1.10, 2, decimals)
            m = measure(base, new, args.repeats, clock)
        print(f"{name:<32} {m['rows']:>5} {m['read']:>8.3f} {m['compare']:>10.3f} "
              f"{m['compare'] / m['read']:>7.1f} {m['total']:>13.3f} "
              f"{m['total'] / m['read']:>7.1f}")
        best_read, _, best_total = (min(ts) for ts in m["runs"])
        print(f"    best of {args.repeats}: read {best_read:.3f}, end-to-end {best_total:.3f}, "
              f"{best_total / best_read:.1f}x read (steadier than the median where other work "
              "shares the machine)")
        print("    runs (read / compare / end-to-end): "
              + " / ".join(", ".join(f"{t:.3f}" for t in ts) for ts in m["runs"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
