"""`ncu`: Nsight Compute. GPU time and hardware metrics for every profiled kernel launch.

ncu's own messages go to `ncu.log`, so the payload's stdout stays its own; after the trial the
report's raw page is exported to `raw.csv` and read by column name. The argv, metrics and
capture states: docs/collectors/ncu.md.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, Strict, field_validator

from aorta.base.errors import SetupError
from aorta.base.tools import run_tool
from aorta.collectors.base import (Capability, Collector, CollectorOptions, Launch, Metrics,
                                   TrialContext, TrialOutcome, capture_status, cut_short, settle)
from aorta.collectors.binaries import (find_binary, gpu_present, read_tail, resolve_binary,
                                       tool_version)
from aorta.collectors.ncu.counters import PERMISSION_FIX, host_counter_access
from aorta.collectors.options import regex_option, word_list
from aorta.parsers.ncu_csv import TIME_METRIC, NcuProfile, read_ncu_csv
from aorta.parsers.skips import Skips
from aorta.store.reading import RecordError, open_regular

ENV_BIN = "NCU_BIN"
REPORT_STEM = "profile"
REPORT = REPORT_STEM + ".ncu-rep"
RAW_CSV = "raw.csv"
LOG = "ncu.log"
LAUNCH_RECORD_LIMIT = 10_000
EXPORT_TIMEOUT_S = 300.0
NO_LAUNCH = ("ncu profiled no kernel launch (check kernel_regex, launch_skip and launch_count, "
             "and that the command runs GPU work)")

_METRIC_NAME = re.compile(r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$")
_SET_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_ERROR_LINE = re.compile(r"^==ERROR==\s*(.+)$", re.MULTILINE)

StrictInt = Annotated[int, Strict()]


class NcuOptions(CollectorOptions):
    metrics: list[str] = Field(
        default_factory=lambda: [TIME_METRIC],
        description="metrics to collect per launch (comma list accepted); "
                    f"{TIME_METRIC} is always collected")
    set: str | None = Field(
        None, description="a section set to collect as well (basic, detailed, full, ...; "
                          "`ncu --list-sets` names them)")
    kernel_regex: str | None = Field(
        None, description="profile only kernels whose function name matches (ncu -k regex:)")
    launch_skip: Annotated[StrictInt, Field(ge=0)] | None = Field(
        None, description="matching launches to skip before profiling starts")
    launch_count: Annotated[StrictInt, Field(ge=1)] | None = Field(
        None, description="matching launches to profile, then stop profiling")
    clock_control: Literal["none", "base"] = Field(
        "none", description="none: leave GPU clocks alone (times comparable with other "
                            "collectors); base: lock them to base clock")
    cache_control: Literal["none", "all"] = Field(
        "none", description="none: leave caches as the payload left them (times comparable "
                            "with other collectors); all: flush before every replay pass "
                            "(ncu's own default; consistent multi-pass counters)")
    replay_mode: Literal["kernel", "application", "range", "app-range"] | None = Field(
        None, description="how ncu replays work to collect all metrics (ncu's default: kernel)")
    target_processes: Literal["all", "application-only"] = Field(
        "all", description="profile child processes too (all) or the launched process only")

    @field_validator("metrics", mode="before")
    @classmethod
    def _metric_list(cls, value: Any) -> list[str]:
        names = word_list(value)
        if not isinstance(names, list):
            raise ValueError("must be a list of strings or a comma-separated string")
        if not all(isinstance(name, str) for name in names):
            raise ValueError("must be a list of strings")
        for name in names:
            if not _METRIC_NAME.match(name):
                raise ValueError(f"{name!r} is not a metric name such as {TIME_METRIC} "
                                 f"(regex:, group: and breakdown: expressions are not supported: "
                                 f"each launch's value is read from the column of that exact name)")
        return list(dict.fromkeys([TIME_METRIC, *names]))

    @field_validator("set")
    @classmethod
    def _set_name(cls, value: str | None) -> str | None:
        if value is not None and not _SET_NAME.match(value):
            raise ValueError("must be a section set identifier such as basic, detailed or full")
        return value

    @field_validator("kernel_regex")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        return None if value is None else regex_option(value.removeprefix("regex:"),
                                                        "must be a non-empty regular expression")


class NcuCollector(Collector[NcuOptions]):
    name = "ncu"
    wrap_rank = 30
    options_model = NcuOptions
    summary = "Nsight Compute: per-launch GPU time and hardware metrics (NVIDIA)"

    def claims(self, options: NcuOptions) -> frozenset[str]:
        return frozenset({"cupti"})

    def wrap(self, launch: Launch, out_dir: Path, options: NcuOptions, ctx: TrialContext) -> Launch:
        if not launch.argv or launch.argv[0].startswith("-"):
            raise SetupError(f"ncu: the command must start with a program, got "
                             f"{list(launch.argv[:1])!r}; give the command after `--`")
        binary = resolve_binary(ENV_BIN, "ncu", ctx.base_env, self.name)
        return launch.with_prefix(ncu_argv(binary, options, out_dir))

    def summarize(self, out_dir: Path, options: NcuOptions, outcome: TrialOutcome) -> Metrics:
        metrics: Metrics = {"ncu_artifact_dir": str(out_dir)}
        # The trial's own environment finds the same ncu that wrapped it.
        binary = find_binary(ENV_BIN, "ncu", outcome.base_env or os.environ)
        report = out_dir / REPORT
        if not report.is_file():
            state, reason = _no_report(out_dir, outcome)
            return metrics | capture_status(self.name, state, reason)
        if binary is None:
            return metrics | capture_status(self.name, "unparsed", "the report exists but no ncu "
                                            f"binary is found to export it (set {ENV_BIN})")
        if exported := export_raw(binary, report, out_dir / RAW_CSV):
            return metrics | capture_status(self.name, "unparsed", exported)
        try:
            profile = read_ncu_csv(out_dir / RAW_CSV, options.metrics)
        except (ValueError, OSError) as exc:
            return metrics | capture_status(self.name, "unparsed", str(exc))
        profiled = profiled_launches(read_log(out_dir / LOG))
        return metrics | profile_metrics(profile, options.metrics, profiled)

    def probe(self) -> Capability:
        if (binary := find_binary(ENV_BIN, "ncu", os.environ)) is None:
            return Capability(self.name, False, reason="ncu not found ($NCU_BIN unset and no ncu "
                              "on PATH)", fix="install Nsight Compute (part of the CUDA toolkit) "
                              "and put ncu on PATH, or set NCU_BIN")
        version = tool_version(binary, r"Version\s+(\S+)")
        has_gpu, how = gpu_present()
        details = {"binary": binary, "gpu": how}
        if not has_gpu:
            return Capability(self.name, False, version, f"no NVIDIA GPU here ({how})",
                              "run on a machine with an NVIDIA GPU", details)
        allowed, why = host_counter_access()
        details["counters"] = why
        if allowed is False:
            return Capability(self.name, False, version, why, PERMISSION_FIX, details)
        return Capability(self.name, True, version, why, details=details)

    def resolved(self, options: NcuOptions, ctx: TrialContext) -> Metrics:
        binary = find_binary(ENV_BIN, "ncu", ctx.base_env)
        return {"ncu_binary": binary} if binary else {}


def ncu_argv(binary: str, options: NcuOptions, out_dir: Path) -> list[str]:
    """The ncu prefix for one trial (long options only; see the module docstring)."""
    regex = None if options.kernel_regex is None else "regex:" + options.kernel_regex
    given = [("--set", options.set), ("--metrics", ",".join(options.metrics)),
             ("--kernel-name", regex), ("--launch-skip", options.launch_skip),
             ("--launch-count", options.launch_count), ("--replay-mode", options.replay_mode)]
    return [binary, "--target-processes", options.target_processes,
            "--clock-control", options.clock_control, "--cache-control", options.cache_control,
            *[part for flag, value in given if value is not None for part in (flag, str(value))],
            "--export", str(out_dir / REPORT_STEM), "--force-overwrite",
            "--log-file", str(out_dir / LOG)]


def export_raw(binary: str, report: Path, csv_path: Path,
               timeout_s: float = EXPORT_TIMEOUT_S) -> str:
    """Write the report's raw page as CSV to `csv_path`; '' on success, else why not."""
    result = run_tool([binary, "--import", str(report), "--csv", "--page", "raw"], timeout_s,
                      stdout_path=csv_path)
    if result.timed_out:
        return f"`ncu --import` did not finish within {timeout_s:g} s"
    if not result.ok:
        lines = [line.strip() for line in result.output.splitlines() if line.strip()]
        return (f"`ncu --import` failed (exit {result.returncode}): "
                f"{result.problem or (lines[-1] if lines else 'no output')}")
    return ""


def profile_metrics(profile: NcuProfile, requested: list[str],
                    profiled: int | None = None) -> Metrics:
    """Metrics and the capture state from one read export. `profiled`: how many launches ncu
    said it profiled (its `==PROF== Profiling` lines), to catch an export missing some."""
    if not profile.launches:
        if profile.skips:
            return capture_status("ncu", "unparsed", f"{RAW_CSV}: "
                                  f"{profile.skips.describe('row')}", profile.skips.count)
        return capture_status("ncu", "empty", NO_LAUNCH)
    records = [{"kernel": launch.kernel, "id": launch.id, "metrics": launch.values}
               for launch in profile.launches[:LAUNCH_RECORD_LIMIT]]
    out: Metrics = {"ncu_launches": records, "ncu_metric_units": profile.units}
    if profile.missing:
        out["ncu_missing_metrics"] = profile.missing
    time_unit = profile.units.get(TIME_METRIC)
    if TIME_METRIC in profile.missing or time_unit != "ns":
        why = (f"the export has no {TIME_METRIC} column" if TIME_METRIC in profile.missing else
               f"{TIME_METRIC} is in {time_unit!r}, not a unit of time")
        return out | capture_status("ncu", "unparsed", why)
    skips = Skips()
    skips.absorb(profile.skips)
    table = profile.kernel_table(skips)
    seen = len(profile.launches) + profile.skips.count
    if profiled is not None and profiled > seen:
        skips.skip(f"ncu.log reports {profiled} profiled launches, the export holds {seen}",
                   profiled - seen)
    figures = table.metrics("ncu") | _means(profile, requested) if table.rows else {}
    return out | settle("ncu", figures, skips.count,
                        f"{skips.describe('launch')}; figures cover only the launches read")


_PROFILED = re.compile(r'^==PROF== Profiling ".*" - (\d+): ', re.MULTILINE)


def profiled_launches(log: str) -> int | None:
    """Launches ncu says it profiled: one `==PROF== Profiling "name" - 3: 0%...100% - 9 passes`
    line each, numbered from 0. None when the log has no such line."""
    numbers = {int(n) for n in _PROFILED.findall(log)}
    return len(numbers) if numbers else None


def _means(profile: NcuProfile, requested: list[str]) -> Metrics:
    """`ncu_<metric>_mean` for each metric every launch has a value of, in one unit."""
    means: Metrics = {}
    for metric in requested:
        if metric in profile.missing or "|" in profile.units.get(metric, "|"):
            continue
        values = [launch.values.get(metric) for launch in profile.launches]
        if values and all(v is not None for v in values):
            means[f"ncu_{metric.replace('.', '_')}_mean"] = (
                sum(v for v in values if v is not None) / len(values))
    return means


def read_log(path: Path, limit: int = 64 << 20) -> str:
    """ncu's log (its first `limit` bytes), '' when there is none."""
    try:
        with open_regular(path) as fh:
            return fh.read(limit).decode("utf-8", "replace")
    except (OSError, RecordError):
        return ""


def _no_report(out_dir: Path, outcome: TrialOutcome) -> tuple[str, str]:
    if not outcome.launched:
        return "missing", "the payload never started"
    text = read_tail(out_dir / LOG) + "\n" + read_tail(outcome.stderr_path)
    if "ERR_NVGPUCTRPERM" in text:
        return "missing", ("ncu may not read the GPU performance counters here "
                           f"(ERR_NVGPUCTRPERM): {PERMISSION_FIX}")
    if errors := _ERROR_LINE.findall(text):
        return "missing", f"ncu wrote no report: {errors[0].strip()}"
    if "No kernels were profiled" in text:
        return "empty", NO_LAUNCH
    if early := cut_short(outcome, "ncu wrote its report"):
        return "missing", early
    return "missing", f"ncu wrote no {REPORT} (see {LOG})"
