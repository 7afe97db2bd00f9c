"""`nsys`: Nsight Systems. A whole-process timeline; aorta reads its CUDA kernel summary, which
`nsys stats` exports after the trial. nsys turns its `.qdstrm` into a report with the
`QdstrmImporter` of a full install. Argv, metrics and capture states: docs/collectors/nsys.md.
"""

from __future__ import annotations

import contextlib
import glob
import os
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import Field, field_validator, model_validator

from aorta.base.errors import RunDirError, SetupError
from aorta.base.tools import run_tool
from aorta.collectors.base import (Capability, Collector, CollectorOptions, Launch, Metrics,
                                   TrialContext, TrialOutcome, capture_status, cut_short, settle)
from aorta.collectors.binaries import (find_binary, gpu_present, read_tail, resolve_binary,
                                       tool_version)
from aorta.collectors.options import word_list
from aorta.parsers.nsys_csv import NO_KERNELS, KernelSummary, read_kern_sum
from aorta.store.files import write_text

ENV_BIN = "NSYS_BIN"
REPORT_STEM = "report"
REPORTS = ("report.nsys-rep", "report.qdrep")     # .qdrep: releases up to 2021.x
STATS_PREFIX = "kern"
STATS_LOG = "stats.log"
STATS_REPORTS = ("cuda_gpu_kern_sum", "gpukernsum")
STATS_TIMEOUT_S = 600.0
IMPORTER = "QdstrmImporter"
IMPORTER_FIX = ("install the full Nsight Systems package (its host-linux-* folder holds "
                "QdstrmImporter) and point NSYS_BIN at its nsys")

# What `--trace` may name here: the APIs of nsys' documented list that make sense for a
# command-line sweep (graphics-only and Windows-only ones are left out).
TraceApi = Literal["cuda", "nvtx", "osrt", "cublas", "cusparse", "cudnn", "cusolver", "mpi",
                   "ucx", "oshmem", "openacc", "openmp", "opengl", "vulkan"]
DEFAULT_TRACE: tuple[TraceApi, ...] = ("cuda", "nvtx")


class NsysOptions(CollectorOptions):
    trace: list[TraceApi] = Field(
        default_factory=lambda: list(DEFAULT_TRACE),
        description="APIs to trace (comma list accepted); must include cuda, where the kernel "
                    "table comes from")
    sample: Literal["none", "process-tree", "system-wide"] = Field(
        "none", description="CPU sampling; off by default (it needs perf_event_paranoid <= 2)")
    cuda_graph_trace: Literal["graph", "node"] | None = Field(
        None, description="trace CUDA graphs as one item (graph) or per kernel (node)")
    capture_range: Literal["none", "cudaProfilerApi", "nvtx"] | None = Field(
        None, description="record only between cudaProfilerStart/Stop, or inside an NVTX range")
    nvtx_capture: str | None = Field(
        None, description="the NVTX range (range@domain) that starts capture; "
                          "required with capture_range: nvtx")

    @field_validator("trace", mode="before")
    @classmethod
    def _trace_list(cls, value: Any) -> Any:
        value = word_list(value)
        if isinstance(value, list) and "cuda" not in value:
            raise ValueError(f"must include cuda (the kernel summary comes from CUDA "
                             f"tracing); allowed: {', '.join(get_args(TraceApi))}")
        return value

    @model_validator(mode="after")
    def _nvtx_capture_needs_range(self) -> NsysOptions:
        if (self.capture_range == "nvtx") != (self.nvtx_capture is not None):
            raise ValueError("nvtx_capture is required with capture_range: nvtx, and only then")
        if self.nvtx_capture is not None and not self.nvtx_capture.strip():
            raise ValueError("nvtx_capture must name a range, e.g. step@mydomain")
        return self


class NsysCollector(Collector[NsysOptions]):
    name = "nsys"
    wrap_rank = 20
    options_model = NsysOptions
    summary = "Nsight Systems: whole-process timeline; CUDA kernel summary (NVIDIA)"

    def claims(self, options: NsysOptions) -> frozenset[str]:
        return frozenset({"cupti"})

    def wrap(self, launch: Launch, out_dir: Path, options: NsysOptions,
             ctx: TrialContext) -> Launch:
        if not launch.argv:
            raise SetupError("nsys: the command is empty; give the command after `--`")
        binary = resolve_binary(ENV_BIN, "nsys", ctx.base_env, self.name)
        return launch.with_prefix(nsys_argv(binary, options, out_dir))

    def summarize(self, out_dir: Path, options: NsysOptions, outcome: TrialOutcome) -> Metrics:
        metrics: Metrics = {"nsys_artifact_dir": str(out_dir)}
        # The trial's own environment finds the same nsys that wrapped it.
        binary = find_binary(ENV_BIN, "nsys", outcome.base_env or os.environ)
        report = next((out_dir / r for r in REPORTS if (out_dir / r).is_file()), None)
        if report is None:
            state, reason = _no_report(out_dir, outcome, binary)
            return metrics | capture_status(self.name, state, reason)
        if binary is None:
            return metrics | capture_status(self.name, "unparsed", "the report exists but no "
                                            f"nsys binary is found to read it (set {ENV_BIN})")
        found = run_stats(binary, report, out_dir)
        if isinstance(found, str):
            state = "empty" if NO_KERNELS in found else "unparsed"
            return metrics | capture_status(self.name, state, found)
        report_name, csv_path = found
        metrics["nsys_stats_report"] = report_name
        try:
            summary = read_kern_sum(csv_path)
        except (ValueError, OSError) as exc:
            return metrics | capture_status(self.name, "unparsed", str(exc))
        return metrics | summary_metrics(summary, csv_path.name)

    def probe(self) -> Capability:
        if (binary := find_binary(ENV_BIN, "nsys", os.environ)) is None:
            return Capability(self.name, False, reason="nsys not found ($NSYS_BIN unset and no "
                              "nsys on PATH)", fix="install Nsight Systems and put nsys on PATH, "
                              "or set NSYS_BIN")
        version = tool_version(binary, r"version\s+(\S+)")
        importer = find_qdstrm_importer(Path(binary))
        details: dict[str, Any] = {"binary": binary, "importer": str(importer or "")}
        if importer is None:
            return Capability(self.name, False, version, details=details, fix=IMPORTER_FIX,
                              reason=f"nsys at {binary} cannot export: no {IMPORTER} next to "
                                     f"it, so a capture stays a .qdstrm and never becomes a "
                                     f"report")
        has_gpu, how = gpu_present()
        details["gpu"] = how
        if not has_gpu:
            return Capability(self.name, False, version, f"no NVIDIA GPU here ({how})",
                              "run on a machine with an NVIDIA GPU", details)
        return Capability(self.name, True, version, "CUDA tracing needs no counter permission",
                          details=details)

    def resolved(self, options: NsysOptions, ctx: TrialContext) -> Metrics:
        binary = find_binary(ENV_BIN, "nsys", ctx.base_env)
        return {"nsys_binary": binary} if binary else {}


def nsys_argv(binary: str, options: NsysOptions, out_dir: Path) -> list[str]:
    """The nsys prefix for one trial, up to and including `--` (docs/collectors/nsys.md)."""
    given = {"cuda-graph-trace": options.cuda_graph_trace,
             "capture-range": options.capture_range, "nvtx-capture": options.nvtx_capture}
    return [binary, "profile", "--trace=" + ",".join(options.trace), "--sample=" + options.sample,
            "--cpuctxsw=none", f"--output={out_dir / REPORT_STEM}", "--force-overwrite=true",
            *[f"--{flag}={value}" for flag, value in given.items() if value is not None], "--"]


def run_stats(binary: str, report: Path, out_dir: Path,
              timeout_s: float = STATS_TIMEOUT_S) -> tuple[str, Path] | str:
    """Export the kernel summary: (report name, CSV path), or why there is none. The pre-2023
    report name is tried only when the current one gave no CSV and did not say "no kernels"."""
    log: list[str] = []
    for name in STATS_REPORTS:
        csv_path = out_dir / f"{STATS_PREFIX}_{name}.csv"
        result = run_tool([binary, "stats", f"--report={name}", "--format=csv",
                           f"--output={out_dir / STATS_PREFIX}", str(report)], timeout_s)
        log.append(f"$ nsys stats --report={name} (exit {result.returncode})\n"
                   f"{result.problem or result.output}")
        with contextlib.suppress(OSError, RunDirError):   # never through a planted link
            write_text(out_dir, (), STATS_LOG, "\n".join(log))
        if csv_path.is_file():
            return name, csv_path
        if result.timed_out:
            return f"`nsys stats` did not finish within {timeout_s:g} s"
        if NO_KERNELS in result.output:
            return f"nsys recorded no CUDA kernel ({NO_KERNELS}); did the command run GPU work?"
    return (f"`nsys stats` wrote no kernel summary under either report name "
            f"({', '.join(STATS_REPORTS)}); see {STATS_LOG}")


def summary_metrics(summary: KernelSummary, source: str) -> Metrics:
    """Metrics and the capture state from one read summary."""
    if summary.no_kernels or (summary.header_found and not summary.rows):
        return capture_status("nsys", "empty", "nsys recorded no CUDA kernel; did the command "
                              "run GPU work?")
    if not summary.table.rows and not summary.skips:
        return capture_status("nsys", "unparsed", f"{source} holds no kernel summary table")
    return settle("nsys", summary.table.metrics("nsys"), summary.skips.count,
                  f"{source}: {summary.skips.describe('row')}; figures cover only the rows "
                  f"read")


def find_qdstrm_importer(nsys: Path) -> Path | None:
    """The QdstrmImporter an nsys binary would use, looked for around its real path. Layouts
    seen: `<root>/target-linux-x64/nsys` or `<root>/bin/nsys` beside `<root>/host-linux-x64/
    QdstrmImporter`; a CUDA toolkit's `bin/nsys` beside `nsight-systems-<ver>/host-linux-x64/`."""
    real = Path(os.path.realpath(nsys))
    for folder in [real.parent, *list(real.parents)[1:3]]:
        for pattern in (IMPORTER, f"host-linux-*/{IMPORTER}",
                        f"nsight-systems*/host-linux-*/{IMPORTER}"):
            for hit in sorted(glob.glob(str(folder / pattern))):
                if os.access(hit, os.X_OK):
                    return Path(hit)
    return None


def _no_report(out_dir: Path, outcome: TrialOutcome, binary: str | None) -> tuple[str, str]:
    if streams := sorted(p.name for p in out_dir.glob("*.qdstrm")):
        importer = find_qdstrm_importer(Path(binary)) if binary else None
        cause = (f"no {IMPORTER} next to nsys ({binary}); {IMPORTER_FIX}" if importer is None
                 else "the conversion failed or was cut short (see the trial's stderr)")
        return "unparsed", (f"nsys wrote only {', '.join(streams)} and could not turn it into a "
                            f"report: {cause}")
    if early := cut_short(outcome, "nsys wrote its report"):
        return "missing", early
    tail = [line.strip() for line in read_tail(outcome.stderr_path, 4096).splitlines()
            if line.strip()]
    return "missing", "nsys wrote no report" + (f" (stderr ends: {tail[-1]})" if tail else "")
