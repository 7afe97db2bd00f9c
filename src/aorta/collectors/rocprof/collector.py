"""`rocprof`: rocprofv3 (ROCprofiler-SDK), the whole-process tracer of AMD GPUs.

Numbers come from the CSV files only, `*kernel_stats.csv` else `*kernel_trace.csv`, summed over
processes (`figures.py`). The argv, why each flag, metrics and capture states:
docs/collectors/rocprof.md.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import Field, ValidationInfo, field_validator

from aorta.base.errors import SetupError
from aorta.base.tools import run_tool
from aorta.collectors.artifact_dir import list_artifact_dir
from aorta.collectors.base import (Capability, Collector, CollectorOptions, Launch, Metrics,
                                   TrialContext, TrialOutcome, capture_status, cut_short)
from aorta.collectors.binaries import find_binary, read_tail, resolve_binary
from aorta.collectors.options import regex_option, word_list
from aorta.collectors.rocprof.figures import numbers

ENV_BIN = "ROCPROF_BIN"
OUTPUT_FILE = "aorta_%pid%"
SUMMARY_STEM = "rocprof_summary"
VERSION_TIMEOUT_S = 10.0

TraceDomain = Literal["kernel", "hip", "hip_runtime", "memory_copy", "rccl", "marker", "scratch"]
#: Each domain's rocprofv3 flag: --<domain>-trace (scratch: --scratch-memory-trace).
TRACE_FLAGS = {d: "--" + ("scratch-memory" if d == "scratch" else d.replace("_", "-")) + "-trace"
               for d in get_args(TraceDomain)}
OutputFormat = Literal["csv", "json", "pftrace", "otf2", "rocpd"]
DEFAULT_TRACE: tuple[TraceDomain, ...] = ("kernel",)
DEFAULT_FORMATS: tuple[OutputFormat, ...] = ("csv",)
_WHAT = {"trace": f"domain ({', '.join(TRACE_FLAGS)})",
         "output_format": "format (csv, json, pftrace, otf2, rocpd)",
         "pmc": "counter (leave the key out to collect none)"}
# Counter names as rocprofv3-avail lists them: SQ_WAVES, TCC_HIT[0], GRBM_GUI_ACTIVE, MemUnitBusy.
_COUNTER = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:]*(\[\d+\])?$")


class RocprofUnavailableError(SetupError):
    """rocprofv3 is not on this machine (or not where $ROCPROF_BIN says)."""


class RocprofOptions(CollectorOptions):
    trace: list[TraceDomain] = Field(
        default_factory=lambda: list(DEFAULT_TRACE),
        description="what to trace: kernel, hip, hip_runtime, memory_copy, rccl, marker, "
                    "scratch (comma list accepted); GPU time comes from kernel")
    output_format: list[OutputFormat] = Field(
        default_factory=lambda: list(DEFAULT_FORMATS),
        description="files rocprofv3 writes: csv, json, pftrace, otf2, rocpd; aorta reads "
                    "numbers from csv only")
    stats: bool = Field(True, description="also write *_stats.csv (per-kernel totals)")
    pmc: list[str] | None = Field(
        None, description="hardware counters to collect, e.g. SQ_WAVES GRBM_GUI_ACTIVE")
    kernel_include_regex: str | None = Field(
        None, description="only kernels matching this regular expression")
    summary_units: Literal["sec", "msec", "usec", "nsec"] | None = Field(
        None, description="time unit of the text summary file")

    @field_validator("trace", "output_format", "pmc", mode="before")
    @classmethod
    def _word_list(cls, value: Any, info: ValidationInfo) -> Any:
        value = word_list(value, lower=info.field_name != "pmc")
        if value == []:
            raise ValueError(f"must name at least one {_WHAT[str(info.field_name)]}")
        bad = [v for v in value if not (isinstance(v, str) and _COUNTER.match(v))] \
            if info.field_name == "pmc" and isinstance(value, list) else []
        if bad:
            raise ValueError(f"{bad[0]!r} is not a counter name (letters, digits, _ . : and an "
                             f"optional [index], e.g. SQ_WAVES or TCC_HIT[0])")
        return value

    @field_validator("summary_units", mode="before")
    @classmethod
    def _lowercase(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("kernel_include_regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        return None if value is None else regex_option(
            value, "must not be empty (leave the key out to keep every kernel)")


def rocprof_argv(binary: str, options: RocprofOptions, out_dir: Path) -> list[str]:
    """The rocprofv3 prefix, ending with `--`, that makes `out_dir` hold the capture."""
    argv = [binary, "--output-directory", str(out_dir), "--output-file", OUTPUT_FILE,
            "--output-format", *options.output_format,
            *[TRACE_FLAGS[domain] for domain in options.trace],
            *(["--stats"] if options.stats else []),
            "--summary", "--summary-output-file", SUMMARY_STEM]
    if options.summary_units:
        argv += ["--summary-units", options.summary_units]
    if options.kernel_include_regex is not None:
        argv += ["--kernel-include-regex", options.kernel_include_regex]
    return argv + (["--pmc", *options.pmc] if options.pmc else []) + ["--"]


class RocprofCollector(Collector[RocprofOptions]):
    name = "rocprof"
    wrap_rank = 10
    options_model = RocprofOptions
    summary = "rocprofv3: kernel dispatch trace and per-kernel stats of AMD GPUs"

    def claims(self, options: RocprofOptions) -> frozenset[str]:
        return frozenset({"hsa-queue"})

    def wrap(self, launch: Launch, out_dir: Path, options: RocprofOptions,
             ctx: TrialContext) -> Launch:
        if not launch.argv:
            raise SetupError("rocprof: the command is empty; give the command after `--`")
        binary = resolve_binary(ENV_BIN, "rocprofv3", ctx.base_env, self.name,
                                error=RocprofUnavailableError)
        return launch.with_prefix(rocprof_argv(os.path.abspath(binary), options, out_dir))

    def summarize(self, out_dir: Path, options: RocprofOptions, outcome: TrialOutcome) -> Metrics:
        return {"rocprof_artifact_dir": str(out_dir)} | _read_capture(out_dir, options, outcome)

    def probe(self) -> Capability:
        binary = find_binary(ENV_BIN, "rocprofv3", os.environ)
        details = {"binary": binary, "kfd": os.path.exists("/dev/kfd")}
        if binary is None:
            return Capability(self.name, False, reason="rocprofv3 not found ($ROCPROF_BIN unset "
                              "or not executable, and no rocprofv3 on PATH)",
                              fix="install ROCm's rocprofiler-sdk, or set ROCPROF_BIN to "
                                  "rocprofv3", details=details)
        version = rocprof_version(binary)
        if not details["kfd"]:
            return Capability(self.name, False, version, "no AMD GPU here (/dev/kfd is missing)",
                              "run on a host with an AMD GPU and the amdgpu driver; in a "
                              "container pass --device /dev/kfd --device /dev/dri", details)
        return Capability(self.name, True, version, f"{binary} and /dev/kfd present",
                          details=details)


def rocprof_version(binary: str) -> str | None:
    """`version` (and `rocm_version`) from `rocprofv3 --version`, which prints lines like
    `             version: 1.0.0`."""
    result = run_tool([binary, "--version"], VERSION_TIMEOUT_S)
    if not result.ok:
        return None
    found = dict(re.findall(r"^\s*(version|rocm_version):\s*(\S+)", result.output, re.MULTILINE))
    if "version" not in found:
        return None
    rocm = found.get("rocm_version")
    return f"{found['version']} (ROCm {rocm})" if rocm and "@" not in rocm else found["version"]


def _read_capture(out_dir: Path, options: RocprofOptions, outcome: TrialOutcome) -> Metrics:
    found = list_artifact_dir(out_dir)
    if found.problem:
        return capture_status("rocprof", "unparsed", found.problem)
    if not found.exists:
        return capture_status("rocprof", "missing",
                              f"the artifact directory {out_dir} does not exist")
    if not found.files:
        if found.odd:
            return capture_status("rocprof", "unparsed", f"only links or special files here "
                                  f"({found.odd[0]}); aorta does not follow or read them")
        return _why_no_files(outcome)
    if "csv" not in options.output_format:
        return capture_status("rocprof", "unparsed", (
            f"output_format {', '.join(options.output_format)} writes no CSV and aorta reads "
            "numbers only from CSV; add csv to output_format (or run `rocpd convert -i <db> "
            "--output-format csv` yourself)"))
    stats = [f for f in found.files if f.name.endswith("kernel_stats.csv")]
    traces = [f for f in found.files if f.name.endswith("kernel_trace.csv")]
    if stats or traces:
        return numbers(stats, traces, outcome)
    if "kernel" not in options.trace:
        return capture_status("rocprof", "unparsed", f"trace {', '.join(options.trace)} records "
                              "no kernel dispatch, so there is no GPU time; add kernel to trace")
    return capture_status("rocprof", "unparsed",
                          "rocprofv3 wrote no *kernel_stats.csv or *kernel_trace.csv")


def _why_no_files(outcome: TrialOutcome) -> Metrics:
    if not outcome.launched:
        return capture_status("rocprof", "missing",
                              "the payload never started, so rocprofv3 wrote nothing")
    fatal = [line for line in read_tail(outcome.stderr_path).splitlines()
             if line.startswith("Fatal error:")]
    if fatal:
        why = f"rocprofv3 failed: {fatal[-1][len('Fatal error:'):].strip()[:300]}"
        return capture_status("rocprof", "missing", why)
    if early := cut_short(outcome, "rocprofv3 wrote its files"):
        return capture_status("rocprof", "missing", early)
    return capture_status("rocprof", "empty",
                          "rocprofv3 wrote no files: the payload dispatched no GPU work")
