"""`torch`: the PyTorch profiler (Kineto), attached to a Python payload.

`mode: cli` runs the script (or pytest) through `python -m aorta.launchers.torch_profile`, which
writes `trace.json`, `kernels.txt` and `summary.json` even when the target fails; `mode: env`
hands the payload `AORTA_TORCH_*` variables. Metrics: the common scheme from GPU kernel events,
else CPU operator figures (`torch_cpu_time_ms`, ...). torch is never imported here. Options,
states and reasons: docs/collectors/torch.md.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator

from aorta.base.errors import SetupError
from aorta.base.version import dist_version
from aorta.collectors.attach_failure import with_attach_failure
from aorta.collectors.base import (INSTALL_FIX, RANK_TOKEN, Capability, Collector,
                                   CollectorOptions, Launch, Metrics, TrialContext, TrialOutcome,
                                   capture_status, cut_short, importable_by_child, settle)
from aorta.collectors.binaries import gpu_vendor
from aorta.collectors.options import word_list
from aorta.collectors.python_launch import split_python_launch
from aorta.collectors.ranks import summarize_ranks
from aorta.parsers.skips import Skips
from aorta.parsers.torch_trace import read_trace_figures
from aorta.store.reading import read_text_file

LAUNCHER = "aorta.launchers.torch_profile"
ENV_PREFIX = "AORTA_TORCH_"
TRACE, SUMMARY = "trace.json", "summary.json"
TRACE_NAMES = ("trace*.json", "*.pt.trace.json", "trace*.json.gz", "*.pt.trace.json.gz")
GPU_NAMES = frozenset({"gpu", "cuda", "hip", "xpu"})
ESCAPE = ("use mode: env instead (argv stays as it is; the payload runs torch.profiler itself "
          "from the AORTA_TORCH_* variables, e.g. aorta.launchers.torch_profile."
          "profiler_from_env())")

Activity = Literal["cpu", "gpu", "cuda", "hip", "xpu"]
DEFAULT_ACTIVITIES: tuple[Activity, ...] = ("cpu", "gpu")
#: The on/off options, rendered as the launcher's flags and as `AORTA_TORCH_*` "1"/"0".
SWITCHES = ("record_shapes", "with_stack", "profile_memory")


#: `cuda: Optional[str] = '13.0'` or `hip = None` at the start of a line of torch/version.py.
_BUILD_LINE = re.compile(r"^(cuda|hip|xpu)\s*(?::[^=\n]*)?=(.+)$", re.MULTILINE)


class TorchLaunchError(SetupError):
    """The torch profiler cannot take over this launch; the message names `mode: env`."""


class TorchSchedule(CollectorOptions):
    """`torch.profiler.schedule`: skip `wait` steps, warm up `warmup`, record `active`."""

    wait: int = Field(0, ge=0, description="steps skipped at the start of each cycle")
    warmup: int = Field(1, ge=0, description="steps traced but thrown away (profiler warm-up)")
    active: int = Field(..., ge=1, description="steps recorded per cycle")
    repeat: int = Field(1, ge=0, description="cycles; 0 keeps cycling until the payload stops")


class TorchOptions(CollectorOptions):
    mode: Literal["cli", "env"] = Field(
        "cli", description="cli: the launcher runs the script; env: the payload runs the profiler")
    activities: list[Activity] = Field(
        default_factory=lambda: list(DEFAULT_ACTIVITIES),
        description="cpu and one GPU: gpu (whatever this torch build drives), cuda, hip or xpu")
    record_shapes: bool = Field(False, description="record operator input shapes")
    with_stack: bool = Field(False, description="record Python stacks (large traces)")
    profile_memory: bool = Field(False, description="record tensor allocations")
    schedule: TorchSchedule | None = Field(
        None, description="wait/warmup/active/repeat steps; needs mode: env (the payload steps)")
    row_limit: int = Field(50, ge=1, description="rows of kernels.txt and of torch_ops")

    @field_validator("activities", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        return word_list(value, lower=True)

    @field_validator("activities")
    @classmethod
    def _one_gpu(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("name at least one activity (cpu, gpu, cuda, hip, xpu)")
        gpus = [v for v in value if v in GPU_NAMES]
        if len(gpus) > 1:
            raise ValueError(f"name at most one GPU activity, got {', '.join(gpus)} "
                             f"(gpu means whatever GPU this torch build drives)")
        return value

    @field_validator("schedule")
    @classmethod
    def _schedule_needs_env(cls, value: TorchSchedule | None,
                            info: ValidationInfo) -> TorchSchedule | None:
        if value is not None and info.data.get("mode") == "cli":
            raise ValueError("a schedule counts steps, and only the payload knows where a step "
                             "ends (prof.step()); set mode: env and run the profiler in the "
                             "payload (it gets AORTA_TORCH_SCHEDULE), or drop the schedule to "
                             "record the whole run")
        return value


def cli_flags(out_dir: Path, opts: TorchOptions) -> list[str]:
    """The launcher's options, mirrored by `env_overlay`."""
    return ["--out", str(out_dir), "--activities", ",".join(opts.activities),
            *["--" + key.replace("_", "-") for key in SWITCHES if getattr(opts, key)],
            "--row-limit", str(opts.row_limit)]


def env_overlay(out_dir: Path, opts: TorchOptions) -> dict[str, str]:
    """`mode: env` variables, mirroring the launcher's flags."""
    env = {ENV_PREFIX + "DIR": str(out_dir), ENV_PREFIX + "TRACE": str(out_dir / TRACE),
           ENV_PREFIX + "ACTIVITIES": ",".join(opts.activities)}
    env |= {ENV_PREFIX + key.upper(): "1" if getattr(opts, key) else "0" for key in SWITCHES}
    env[ENV_PREFIX + "ROW_LIMIT"] = str(opts.row_limit)
    if opts.schedule is not None:
        env[ENV_PREFIX + "SCHEDULE"] = ",".join(f"{k}={v}" for k, v in opts.schedule)
    return env


class TorchCollector(Collector[TorchOptions]):
    name = "torch"
    wrap_rank = 80
    per_process = True
    options_model = TorchOptions
    summary = "PyTorch profiler: GPU time per kernel, or CPU time per operator without a GPU"

    def describe(self, options: TorchOptions) -> str:
        return f"torch (activities: {', '.join(options.activities)})"

    def claims(self, options: TorchOptions) -> frozenset[str]:
        # Kineto traces NVIDIA GPUs through CUPTI, which takes one subscriber per process.
        gpu = any(a in GPU_NAMES for a in options.activities)
        return frozenset({"cupti"}) if gpu else frozenset()

    def child_imports(self, options: TorchOptions) -> tuple[str, ...]:
        # In mode env the payload imports torch itself; in mode cli aorta's launcher does.
        return ("torch",) if options.mode == "cli" else ()

    def wrap(self, launch: Launch, out_dir: Path, options: TorchOptions,
             ctx: TrialContext) -> Launch:
        if ctx.per_rank:   # one directory per rank; the per-rank shim fills in the rank
            out_dir = out_dir / f"rank{RANK_TOKEN}"
        if options.mode == "env":
            return launch.with_env(env_overlay(out_dir, options))
        py = split_python_launch(launch.argv, "torch", ESCAPE, TorchLaunchError)
        argv = py.through(LAUNCHER, cli_flags(out_dir, options))
        return importable_by_child(Launch(argv, launch.env, launch.unset), ctx, py.flags,
                                   TorchLaunchError, f"{INSTALL_FIX}, or {ESCAPE}")

    def summarize(self, out_dir: Path, options: TorchOptions, outcome: TrialOutcome) -> Metrics:
        per_rank = {d.name[len("rank"):]: self._summarize_one(d, options, outcome)
                    for d in sorted(out_dir.glob("rank*")) if d.is_dir() and not d.is_symlink()}
        if per_rank:
            gpu = any("torch_gpu_time_ms" in m for m in per_rank.values())
            keys = ("gpu_time_ms", "kernel_count") if gpu else ("cpu_time_ms", "cpu_op_count")
            metrics = {"torch_artifact_dir": str(out_dir)} | summarize_ranks(self.name, per_rank,
                                                                             *keys)
        else:
            metrics = self._summarize_one(out_dir, options, outcome)
        if options.mode == "env":
            return metrics
        return with_attach_failure(self.name, metrics, outcome,
                                   f"install aorta into that interpreter, or {ESCAPE}")

    def _summarize_one(self, out_dir: Path, opts: TorchOptions, outcome: TrialOutcome) -> Metrics:
        launcher = _read_summary(out_dir / SUMMARY)
        metrics: Metrics = {"torch_artifact_dir": str(out_dir)} | _launcher_metrics(launcher)
        # trace.json, then trace.2.json... (one per schedule cycle), or tensorboard_trace_handler's
        found = {path for pattern in TRACE_NAMES for path in out_dir.glob(pattern)}
        # X.json.gz beside X.json is the same trace twice: read it once, from the plain file
        traces = sorted(p for p in found if not (p.suffix == ".gz" and p.with_suffix("") in found))
        if not traces:
            return metrics | capture_status(
                self.name, "missing", _missing_reason(out_dir, opts, launcher, outcome))
        skips = Skips()
        try:
            figures = read_trace_figures(traces, skips)
        except (ValueError, OSError, RecursionError) as exc:
            return metrics | capture_status(self.name, "unparsed", str(exc) or type(exc).__name__)
        why = f"{skips.describe('event')}; figures cover only the events read"
        if len(figures.kernels):
            if not (kernel_metrics := figures.kernels.metrics(self.name)):
                return metrics | capture_status(self.name, "unparsed",
                                                "kernel durations add up to infinity")
            return metrics | settle(self.name, kernel_metrics, skips.count, why)
        cpu_metrics = figures.cpu_metrics(self.name, opts.row_limit)
        if figures.op_count and not cpu_metrics:
            return metrics | capture_status(self.name, "unparsed",
                                            "operator durations add up to infinity")
        if skips:
            return metrics | settle(self.name, cpu_metrics, skips.count, why)
        metrics.update(cpu_metrics)
        recorded = metrics.get("torch_activities", opts.activities)
        if ranges := figures.categories.get("cuda_profiler_range", 0):
            return metrics | capture_status(self.name, "empty", (
                f"the trace holds {ranges} cuda_profiler_range events (CUPTI range-profiler "
                f"mode: experimental_config's profiler_metrics) and no kernel event; record "
                f"without profiler_metrics to time kernels"))
        if figures.launches and any(a in GPU_NAMES for a in recorded):
            return metrics | capture_status(
                self.name, "empty",
                f"the payload launched {figures.launches} GPU kernels (runtime launch calls in "
                f"the trace) but no kernel event was recorded: another CUPTI client (nsys, ncu, "
                f"Proton) may hold the GPU; profile them in separate runs")
        if cpu_metrics:
            return metrics | capture_status(self.name, "ok")
        held = ", ".join(f"{n} {cat}" for cat, n in sorted(figures.categories.items())
                         if cat != "Trace")     # the profiler's own span
        return metrics | capture_status(
            self.name, "empty", "the trace holds no GPU kernel and no CPU operator event" +
            (f", only {held} events" if held else ": nothing was recorded while the profiler "
             "ran"))

    def probe(self) -> Capability:
        try:
            dist = importlib.metadata.distribution("torch")
        except importlib.metadata.PackageNotFoundError:
            return Capability(self.name, False, reason=f"PyTorch is not installed for aorta's "
                              f"Python ({sys.executable})",
                              fix="pip install torch (a CUDA or ROCm build to see GPU kernels)")
        build, version = torch_build(dist), dist_version(dist)
        vendor = gpu_vendor()
        kernels = (build.startswith("cuda") and vendor in ("nvidia", "both")) or \
            (build.startswith("rocm") and vendor in ("amd", "both"))
        details = {"build": build, "gpu": vendor, "gpu_kernels": kernels}
        if kernels:
            return Capability(self.name, True, version, f"{build} build with a GPU: "
                              f"kernels and CPU operators", details=details)
        why = (f"{build} build of torch" if vendor else "no GPU on this machine") + \
            ": only CPU operators are measured (torch_cpu_time_ms)"
        fix = "" if not vendor else ("install a CUDA build of torch" if vendor == "nvidia"
                                     else "install a ROCm build of torch") + \
            " (https://pytorch.org/get-started/locally/) to see GPU kernels"
        return Capability(self.name, True, version, why, fix, details)


def torch_build(dist: importlib.metadata.Distribution) -> str:
    """`cuda 13.0`, `rocm 6.2.41133`, `xpu ...`, `cpu` or `unknown` for an installed torch
    distribution, read from its `torch/version.py` (`cuda: Optional[str] = '13.0'`) without
    importing torch; from the version's local tag (`+cu130`, `+rocm6.2`, `+cpu`) when that
    file cannot be read."""
    try:
        text = Path(str(dist.locate_file("torch/version.py"))).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    values: dict[str, Any] = {}
    for key, value in _BUILD_LINE.findall(text):
        try:
            values[key] = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            continue
    for key, label in (("hip", "rocm"), ("cuda", "cuda"), ("xpu", "xpu")):
        if values.get(key):
            return f"{label} {values[key]}"
    if values:
        return "cpu"
    tag = (dist_version(dist) or "").partition("+")[2]
    for prefix, label in (("rocm", "rocm"), ("cu", "cuda"), ("xpu", "xpu"), ("cpu", "cpu")):
        if tag.startswith(prefix):
            return label
    return "unknown"


def _read_summary(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(read_text_file(path))
    except (OSError, ValueError):       # RecordError is a ValueError
        return {}
    return data if isinstance(data, dict) else {}


def _launcher_metrics(launcher: Mapping[str, Any]) -> Metrics:
    out: Metrics = {}
    if isinstance(launcher.get("torch_version"), str):
        out["torch_version"] = launcher["torch_version"]
    activities = launcher.get("activities")
    if isinstance(activities, list) and all(isinstance(a, str) for a in activities):
        out["torch_activities"] = activities
    return out


def _missing_reason(out_dir: Path, opts: TorchOptions, launcher: Mapping[str, Any],
                    outcome: TrialOutcome) -> str:
    if not outcome.launched:
        return "the payload never started"
    if launcher.get("error"):
        return f"the launcher did not run the payload: {launcher['error']}"
    if launcher.get("errors"):
        return "the launcher could not write the trace: " + "; ".join(map(str, launcher["errors"]))
    if opts.mode == "env":
        return (f"the payload wrote no {TRACE}: in mode env it runs the profiler itself and "
                f"must export the trace to $AORTA_TORCH_TRACE")
    if early := cut_short(outcome, "the launcher could write the trace"):
        return early
    if (out_dir / (TRACE + ".partial")).exists():
        return "the trace export was cut short (trace.json.partial left behind)"
    if not launcher:
        return "the launcher never got to write its files (see stderr.log)"
    return "the launcher wrote no trace (see stderr.log)"

