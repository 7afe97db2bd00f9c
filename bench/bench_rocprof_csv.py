"""How fast aorta reads a long rocprofv3 kernel trace, against a plain `csv.DictReader` loop.

Generates a ROCm 7 `kernel_trace.csv` of N rows (default 5 million) in a temporary directory:
a training-step-like cycle of dispatches over 20 kernel names taken from real ROCm workloads
(hipBLASLt/Tensile GEMMs, PyTorch templates whose quoted names hold commas, RCCL, Triton, rocclr
helpers). Then, each in a fresh process so peak memory is that reader's alone, runs by turns:

- `python`: aorta's reader, `aorta.parsers.rocprof_csv.read_trace`, the `csv` module, row by
  row (a pyarrow reader beside it was removed on 2026-12-05: bench/README.md)
- `dictreader`: the same aggregation (KERNEL_DISPATCH rows, end >= start, per-kernel total,
  count and longest) written as a plain `csv.DictReader` loop
- `polars`: the same aggregation as a polars query, `scan_csv(...).filter(...).group_by(...)`
  on the streaming engine: a candidate measured side by side, not a reader aorta uses
  (skipped when polars is not installed)
- `polars_lean`: the same polars query told the whole schema (timestamps parsed as Int64),
  low-memory parsing and small streaming chunks (`BENCH_POLARS_CHUNK`, default 4096)
- `duckdb`: the same aggregation in SQL over DuckDB's `read_csv` with every column typed,
  strict quoting, `threads` 2 and a `memory_limit` (`BENCH_DUCKDB_THREADS`,
  `BENCH_DUCKDB_MEMORY`, default 128MB); skipped when duckdb is not installed

and prints each reader's median wall time over the runs, rows per second, its speed against
`dictreader`, and peak resident memory (`ru_maxrss` of the worker process, interpreter and
imports included). All must agree on every kernel's total, count and longest.

    python bench/bench_rocprof_csv.py [--rows 5000000] [--repeats 3] [--baseline SRC]
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import math
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
HEADER = ("Guid,Kind,Agent_Id,Queue_Id,Stream_Id,Thread_Id,Dispatch_Id,Kernel_Id,Kernel_Name,"
          "Correlation_Id,Start_Timestamp,End_Timestamp,LDS_Block_Size,Scratch_Size,VGPR_Count,"
          "Accum_VGPR_Count,SGPR_Count,Workgroup_Size_X,Workgroup_Size_Y,Workgroup_Size_Z,"
          "Grid_Size_X,Grid_Size_Y,Grid_Size_Z")
KERNELS = [  # (name, typical duration in ns)
    ("Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64_MI16x16x1_SN_LDSB1_AFC1_"
     "AFEM1_ASEM1_CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSU0_GSUAMB_GLS0_ISA942_"
     "IU1_K1_LBSPPA1024_LBSPPB1024_LPA16_LPB16_LRVW8_MIAV1_MIWT8_8_MO40_NTn1_NEPBS16_NLCA1_NLCB1_"
     "ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW8_SK3_TLDS1_USL1_VSn1_VWA8_VWB8_WSGRA0_"
     "WSGRB0_WS64_WG32_8_1_WGM8", 410_000),
    ("Cijk_Ailk_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x256x64_MI16x16x1_SN_LDSB1_AFC1_"
     "AFEM1_ASEM1_CLR1_CADS0_DTVA0_DTVB0_EPS0_GRVWA8_GRVWB8_GSU0_ISA942_IU1_K1_LPA16_LPB16_"
     "MIAV1_MO40_NTn1_ONLL1_PGR2_PLR1_SIA3_SS1_SVW8_TLDS1_VWA8_VWB8_WS64_WG32_8_1_WGM8", 260_000),
    ("Cijk_Alik_Bljk_BBS_BH_Bias_HAS_SAV_UserArgs_MT64x64x128_MI16x16x1_SN_LDSB0_AFC1_"
     "AFEM1_ASEM1_CLR1_CADS0_GRVWA8_GRVWB8_GSU0_ISA942_IU1_K1_MIAV0_MO40_NTn1_PGR2_PLR1_SIA3_"
     "SS1_SVW4_TLDS1_VWA4_VWB4_WS64_WG16_16_1_WGM8", 45_000),
    ("void at::native::vectorized_elementwise_kernel<4, "
     "at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3> >(int, "
     "at::native::CUDAFunctor_add<c10::BFloat16>, "
     "at::detail::Array<char*, 3>)", 9_000),
    ("void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<"
     "at::native::BinaryFunctor<float, float, float, "
     "at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, "
     "at::native::BinaryFunctor<float, float, float, "
     "at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, "
     "at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, "
     "at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, "
     "at::native::BinaryFunctor<float, float, float, "
     "at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1})", 12_000),
    ("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, "
     "c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>"
     "(c10::BFloat16*, c10::BFloat16 const*, int)", 30_000),
    ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>"
     "(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, "
     "float*, c10::BFloat16*)", 18_000),
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
     "at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >("
     "at::native::ReduceOp<float, "
     "at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)", 14_000),
    ("void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<"
     "at::native::index_kernel_impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, "
     "c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}>"
     "(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, "
     "at::native::index_kernel_impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, "
     "c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1} const&, "
     "bool)::{lambda(int)#1}>(long, at::native::gpu_index_kernel<"
     "at::native::index_kernel_impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, "
     "c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}>"
     "(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, "
     "at::native::index_kernel_impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, "
     "c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1} const&, "
     "bool)::{lambda(int)#1})", 7_000),
    ("ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)", 350_000),
    ("_attn_fwd", 220_000),
    ("_attn_bwd", 480_000),
    ("triton_poi_fused__to_copy_add_mul_0", 6_000),
    ("triton_red_fused__log_softmax_1", 25_000),
    ("triton_per_fused_native_layer_norm_2", 16_000),
    ("__amd_rocclr_copyBuffer", 20_000),
    ("__amd_rocclr_fillBufferAligned", 4_000),
    ("void rocprim::detail::scan_batches_kernel<256u, 2u, 2u>(unsigned int*, unsigned int*, "
     "unsigned int)", 5_000),
    ("void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<ck::tensor_layout::"
     "gemm::RowMajor, ck::tensor_layout::gemm::ColumnMajor, ck::tensor_layout::gemm::RowMajor, "
     "ck::bhalf_t, ck::bhalf_t, float, ck::bhalf_t>, true, 2, 1>(ck::GridwiseGemm_xdl_cshuffle_"
     "v3<ck::tensor_layout::gemm::RowMajor>::Argument)", 150_000),
    ("void at::native::(anonymous namespace)::fused_dropout_kernel_vec<c10::BFloat16, float, "
     "unsigned int, 1, 4, bool>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, "
     "at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, "
     "at::cuda::detail::TensorInfo<bool, unsigned int>, unsigned int, float, at::PhiloxCudaState)",
     11_000),
]


def generate(path: Path, rows: int, seed: int = 1) -> None:
    """A trace of `rows` dispatches: a fixed 'training step' of 40 launches, repeated."""
    rnd = random.Random(seed)
    step = [rnd.randrange(len(KERNELS)) for _ in range(40)]
    quoted = ['"' + name.replace('"', '""') + '"' for name, _ in KERNELS]
    clock = 1_735_000_000_000_000      # ns, 16 digits
    with open(path, "w", newline="") as fh:
        fh.write(",".join(f'"{c}"' for c in HEADER.split(",")) + "\n")
        lines = []
        for i in range(rows):
            k = step[i % len(step)]
            clock += rnd.randrange(2_000, 8_000)
            start, end = clock, clock + int(KERNELS[k][1] * rnd.uniform(0.9, 1.1))
            clock = end
            lines.append(f'"00006409-00d1-70d1-a5cb-b5ab88214544","KERNEL_DISPATCH","Agent 4",'
                         f'1,0,714789,{i + 1},{k + 1},{quoted[k]},{i + 1},{start},{end},'
                         f'8456,0,128,0,96,256,1,1,{256 * (k + 1)},1,1\n')
            if len(lines) == 50_000:
                fh.write("".join(lines))
                lines.clear()
        fh.write("".join(lines))


def dictreader_totals(path: Path) -> dict[str, list[int]]:
    """The plain loop aorta's reader is measured against."""
    totals: dict[str, list[int]] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row.get("Kind", "KERNEL_DISPATCH") != "KERNEL_DISPATCH":
                continue
            try:
                start, end = int(row["Start_Timestamp"]), int(row["End_Timestamp"])
            except (TypeError, ValueError):
                continue
            if end < start:
                continue
            entry = totals.setdefault(row["Kernel_Name"], [0, 0, 0])
            entry[0] += end - start
            entry[1] += 1
            entry[2] = max(entry[2], end - start)
    return totals


def polars_totals(path: Path) -> dict[str, list[int]]:
    """The candidate: polars' CSV reader and group-by, all columns read as text."""
    import polars as pl

    ns = pl.col("End_Timestamp").cast(pl.Int64) - pl.col("Start_Timestamp").cast(pl.Int64)
    query = (pl.scan_csv(path, infer_schema=False, low_memory=True)
             .select("Kind", "Kernel_Name", "Start_Timestamp", "End_Timestamp")
             .filter(pl.col("Kind") == "KERNEL_DISPATCH")
             .with_columns(ns=ns).filter(pl.col("ns") >= 0)
             .group_by("Kernel_Name", maintain_order=True)
             .agg(pl.col("ns").sum().alias("total"), pl.len().alias("calls"),
                  pl.col("ns").max().alias("longest")))
    return {name: [total, calls, longest]
            for name, total, calls, longest in query.collect(engine="streaming").iter_rows()}


def polars_lean_totals(path: Path) -> dict[str, list[int]]:
    """polars' streaming engine told the whole schema (timestamps parsed as Int64, every
    other column text, only four projected), low-memory parsing and small streaming chunks."""
    import polars as pl

    pl.Config.set_streaming_chunk_size(int(os.environ.get("BENCH_POLARS_CHUNK", "4096")))
    schema = {c: pl.String for c in HEADER.split(",")}
    schema.update(Start_Timestamp=pl.Int64, End_Timestamp=pl.Int64)
    ns = pl.col("End_Timestamp") - pl.col("Start_Timestamp")
    query = (pl.scan_csv(path, schema=schema, low_memory=True, infer_schema=False)
             .select("Kind", "Kernel_Name", "Start_Timestamp", "End_Timestamp")
             .filter(pl.col("Kind") == "KERNEL_DISPATCH")
             .with_columns(ns=ns).filter(pl.col("ns") >= 0)
             .group_by("Kernel_Name")
             .agg(pl.col("ns").sum().alias("total"), pl.len().alias("calls"),
                  pl.col("ns").max().alias("longest")))
    return {name: [total, calls, longest]
            for name, total, calls, longest in query.collect(engine="streaming").iter_rows()}


def duckdb_totals(path: Path) -> dict[str, list[int]]:
    """The candidate: DuckDB's CSV reader told every column (timestamps as BIGINT), strict
    quoting, two threads and a memory limit, the aggregation in SQL."""
    import duckdb

    con = duckdb.connect(config={"threads": int(os.environ.get("BENCH_DUCKDB_THREADS", "2")),
                                 "memory_limit": os.environ.get("BENCH_DUCKDB_MEMORY", "128MB"),
                                 "preserve_insertion_order": False})
    types = {c: "VARCHAR" for c in HEADER.split(",")}
    types.update(Start_Timestamp="BIGINT", End_Timestamp="BIGINT")
    spec = "{" + ", ".join(f"'{c}': '{t}'" for c, t in types.items()) + "}"
    rows = con.execute(
        f"SELECT Kernel_Name, sum(End_Timestamp - Start_Timestamp)::HUGEINT, count(*), "
        f"max(End_Timestamp - Start_Timestamp) "
        f"FROM read_csv(?, header=true, delim=',', quote='\"', escape='\"', "
        f"columns={spec}, strict_mode=true, ignore_errors=false, auto_detect=false, "
        f"parallel=true) "
        f"WHERE Kind = 'KERNEL_DISPATCH' AND End_Timestamp >= Start_Timestamp "
        f"GROUP BY Kernel_Name", [str(path)]).fetchall()
    return {name: [int(total), calls, longest] for name, total, calls, longest in rows}


def aorta_totals(path: Path) -> dict[str, list[int]]:
    """`read_trace`'s totals."""
    from aorta.parsers import rocprof_csv
    from aorta.parsers.kernel_table import KernelTable

    table = KernelTable()
    rocprof_csv.read_trace(path, table)
    return {r.name: [int(r.total_ns), r.calls or 0, int(r.max_ns)] for r in table.rows.values()}


def worker(reader: str, path: Path) -> None:
    """One measurement in this (fresh) process; prints JSON."""
    wall, cpu = time.perf_counter(), time.process_time()
    totals = {"python": aorta_totals, "dictreader": dictreader_totals, "polars": polars_totals,
              "polars_lean": polars_lean_totals, "duckdb": duckdb_totals}[reader](path)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(json.dumps({"wall_s": wall, "cpu_s": cpu, "peak_mib": peak_rss_mib(),
                      "hwm_mib": high_water_mib(),
                      "totals": sorted([k, *v] for k, v in totals.items())}))


def peak_rss_mib() -> float:
    """This process's peak resident memory, `ru_maxrss` (KiB on Linux). Linux carries the
    parent's peak over an exec into it, so the parent stays small: the trace is generated in
    a process of its own."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def high_water_mib() -> float:
    """The same from /proc (VmHWM starts afresh at exec): a cross-check, Linux only."""
    try:
        return int(Path("/proc/self/status").read_text().split("VmHWM:")[1].split()[0]) / 1024
    except (OSError, IndexError, ValueError):
        return float("nan")


@dataclass(frozen=True)
class Run:
    wall_s: float
    cpu_s: float
    peak_mib: float
    hwm_mib: float
    totals: list[list[object]]


BASELINE = "@baseline"     # a reader name ending so runs with the --baseline source tree


def run_self(*args: str, src: Path = SRC) -> str:
    """This script run again in a fresh process with `args`; its stdout."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, __file__, *args], env=env, capture_output=True,
                          text=True, check=True, timeout=3600)
    return done.stdout


def measure(reader: str, path: Path, baseline: Path | None) -> Run:
    if reader.endswith(BASELINE) and baseline is not None:
        name = reader.removesuffix(BASELINE)
        return Run(**json.loads(run_self("--worker", name, str(path), src=baseline)))
    return Run(**json.loads(run_self("--worker", reader, str(path))))


def readers() -> list[str]:
    """Not importing the candidates here: this process's peak memory would pass to every
    worker."""
    found = ["python", "dictreader", "polars", "polars_lean", "duckdb"]
    for reader, module in (("polars", "polars"), ("polars_lean", "polars"), ("duckdb", "duckdb")):
        if importlib.util.find_spec(module) is None:
            print(f"{module} is not installed: the {reader} reader is skipped", file=sys.stderr)
            found.remove(reader)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--worker", nargs=2, metavar=("READER", "PATH"), help=argparse.SUPPRESS)
    parser.add_argument("--generate", metavar="PATH", help=argparse.SUPPRESS)
    parser.add_argument("--trace", metavar="PATH", help="use this trace instead of generating one")
    parser.add_argument("--only", metavar="READERS",
                        help="comma-separated readers to run (default: every one installed)")
    parser.add_argument("--baseline", metavar="SRC", type=Path,
                        help="also run aorta's reader of this source tree (e.g. an unpacked "
                             "`git archive main src`), by turns with the others")
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], Path(args.worker[1]))
        return 0
    if args.generate:
        generate(Path(args.generate), args.rows)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.trace or Path(tmp) / "aorta_4242_kernel_trace.csv")
        began = time.perf_counter()
        if not args.trace:
            run_self("--generate", str(path), "--rows", str(args.rows))
        size_mib = path.stat().st_size / 2**20
        print(f"trace of {args.rows:,} rows, {size_mib:,.0f} MiB ready in "
              f"{time.perf_counter() - began:.0f} s")
        names = readers()
        if args.only:
            names = [n for n in args.only.split(",") if n in names]
        if args.baseline:
            names += ["python" + BASELINE] if "python" in names else []
        runs: dict[str, list[Run]] = {reader: [] for reader in names}
        for _ in range(args.repeats):          # by turns, so machine load hits all alike
            for reader in runs:
                runs[reader].append(measure(reader, path, args.baseline))
        if len({json.dumps(rs[0].totals) for rs in runs.values()}) != 1:
            print("MISMATCH: the readers disagree", file=sys.stderr)
            return 1
        report(runs, args.rows)
    return 0


def report(runs: dict[str, list[Run]], rows: int) -> None:
    wall = {reader: statistics.median(r.wall_s for r in rs) for reader, rs in runs.items()}
    for reader, results in runs.items():
        walls = ", ".join(f"{r.wall_s:.2f}" for r in results)
        cpus = ", ".join(f"{r.cpu_s:.2f}" for r in results)
        print(f"{reader:>16}: median {wall[reader]:6.2f} s wall, {rows / wall[reader]:>10,.0f} "
              f"rows/s, {wall.get('dictreader', math.nan) / wall[reader]:5.1f}x DictReader "
              f"(runs {walls}; cpu s {cpus}); "
              f"peak RSS {max(r.peak_mib for r in results):.0f} MiB "
              f"(VmHWM {max(r.hwm_mib for r in results):.0f})")
    print(f"   machine: {platform.machine()}, {os.cpu_count()} cpus, Python "
          f"{platform.python_version()}, {platform.platform()}")


if __name__ == "__main__":
    sys.exit(main())
