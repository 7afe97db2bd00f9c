"""The report as plain data, filled by `build.py`, only formatted by the renderers. Units are
those the metric names say (`_s`, `_ms`, `_mib`); paths are run-relative, `/`-separated."""

from __future__ import annotations

from dataclasses import dataclass

REPORT_SCHEMA = 1


@dataclass(frozen=True)
class Gpu:
    """One GPU as the environment snapshot saw it; `memory` is text with its unit."""

    index: str | None
    name: str
    driver: str | None = None
    memory: str | None = None


@dataclass(frozen=True)
class RunHeader:
    run: str
    status: str                            # complete | interrupted | running | unknown
    command: list[str]
    recipe: str | None
    recipe_sha256: str | None
    recipe_text: str | None                # recipe.resolved.yaml verbatim
    collectors: list[str]
    trials_per_cell: int                   # 0 when run.json does not say
    created_at: str | None
    started_at: str | None
    finished_at: str | None
    starts: int                            # times the sweep ran trials (1 + resumes)
    aorta_version: str | None
    host: str | None
    os: str | None
    cpu: str | None
    gpus: list[Gpu]
    gpu_source: str | None                 # nvidia-smi | amd-smi | rocm-smi | None
    software: dict[str, str]               # python, torch, triton, aorta, CUDA, ROCm...
    env_vars: dict[str, str]               # steering variables, credentials already redacted


@dataclass(frozen=True)
class Point:
    trial: int
    value: float


@dataclass(frozen=True)
class MetricSummary:
    """A metric over a cell's passing trials (sample std; 0.0 for one trial)."""

    metric: str
    unit: str
    n: int
    median: float
    min: float
    max: float
    mean: float
    std: float
    points: list[Point]


@dataclass(frozen=True)
class KernelBar:
    """One kernel (or function) of a per-trial table: median total time per trial, ms, over
    every passing trial (one whose table does not list the kernel counts as 0 ms)."""

    name: str
    median_ms: float
    calls: float | None                    # median calls per trial; None when untrusted
    trials: int                            # passing trials whose table lists it


@dataclass(frozen=True)
class KernelChart:
    table: str                             # the metric holding the table, e.g. nsys_kernels
    bars: list[KernelBar]
    listed: int                            # distinct names over all passing trials
    trials: int                            # passing trials the medians are over


@dataclass(frozen=True)
class TrialRef:
    """One planned trial and links to what it left; `verdict` is `missing` when it has no
    readable result (interrupted run). Baseline trials (`baseline_<i>`) ran with no collector."""

    cell: str
    name: str                              # trial_<i> or baseline_<i>
    index: int
    baseline: bool
    verdict: str
    reason: str
    wall_s: float | None
    dir: str
    files: dict[str, str]                  # label -> path, only those that exist


@dataclass(frozen=True)
class Overhead:
    """A metric's median over profiled trials divided by its median over baseline trials
    (no collector), with a 95% interval; None bounds when there are too few trials."""

    metric: str
    ratio: float
    low: float | None
    high: float | None
    n_profiled: int
    n_baseline: int


@dataclass(frozen=True)
class CellReport:
    name: str
    planned: int
    passed: int
    failed: int
    errored: int
    missing: int                           # profiled trials only
    unreliable: bool
    captures: dict[str, dict[str, int]]    # collector -> capture state -> trials
    metrics: dict[str, MetricSummary]      # profiled trials
    kernels: list[KernelChart]
    trials: list[TrialRef]                 # profiled trials, then baseline ones
    baseline: dict[str, MetricSummary]     # baseline trials (no collector); empty without
    overhead: dict[str, Overhead]


@dataclass(frozen=True)
class Failure:
    """A trial that did not pass, with the end of its stderr (untrusted; "": empty, None: unknown),
    and of its stdout when only stdout says why (a payload that prints its error there). Trials
    of the cell that ended the same way with the same output are folded into `repeats`."""

    cell: str
    name: str                              # trial_<i> or baseline_<i>
    verdict: str
    reason: str
    exit_code: int | None
    signal: int | None
    timed_out: bool
    stderr_tail: str | None
    stdout_tail: str | None                # only when stderr has no line to read and stdout has
    captures: dict[str, str]               # collector -> "state: reason", when not ok
    files: dict[str, str]
    repeats: list[str]                     # other trials of the cell with the same ending


@dataclass(frozen=True)
class Notice:
    kind: str                              # capture | unreliable | missing | corrupt | gpu | env | run | trial
    message: str
    cell: str | None = None


@dataclass(frozen=True)
class Report:
    header: RunHeader
    cells: list[CellReport]
    metrics: list[str]                     # every metric any cell has, harness figures first
    failures: list[Failure]
    warnings: list[Notice]
    schema_version: int = REPORT_SCHEMA

    @property
    def totals(self) -> dict[str, int]:
        keys = ("planned", "passed", "failed", "errored", "missing")
        return {k: sum(getattr(c, k) for c in self.cells) for k in keys}
