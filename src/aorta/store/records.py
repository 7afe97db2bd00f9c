"""The records a sweep writes: one `TrialResult` per trial (`result.json`) and one `RunRecord`
per run (`run.json`), frozen and checked when built from the fields `aorta.store.record_checks`
validated and migrated (`trial_result`, `RunRecord(**fields)`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any, Literal, NamedTuple

from aorta.store.layout import trial_name
from aorta.store.reading import RecordError
from aorta.store.record_checks import (HARNESS_FIGURES, RUN_SCHEMA, RUN_STATES, TRIAL_SCHEMA,
                                       capture_problem, refuse, retention_problem, trial_problem)

Verdict = Literal["pass", "fail", "error"]


@dataclass(frozen=True)
class Capture:
    """What one collector got from one trial: its state, why when not `ok`, and what it
    resolved for this trial (e.g. `{"proton_backend": "cupti"}` when `auto` was asked)."""

    state: str
    reason: str | None = None
    resolved: dict[str, str] = field(default_factory=dict)
    skipped: int | None = None      # records of the artifact left out (`partial`)

    def __post_init__(self) -> None:
        refuse(capture_problem(self.state, self.skipped))


@dataclass(frozen=True)
class LogInfo:
    """How much the payload wrote to one stream and how much of it the log file keeps (its
    head and tail, when the stream was longer than the cap). Bytes."""

    written: int
    kept: int
    problem: str | None = None      # why writing it failed (then the trial is not recorded)

    @property
    def cut(self) -> int:
        return max(0, self.written - self.kept)


@dataclass(frozen=True)
class Retention:
    """What retention removed from the trial directory after its metrics were read: the level,
    the files removed (paths inside it, the first 200), their count and bytes in all."""

    level: str
    files: list[str]
    file_count: int
    bytes: int

    def __post_init__(self) -> None:
        refuse(retention_problem(self.level, self.files, self.file_count, self.bytes))


class KernelEntry(NamedTuple):
    """One kernel in one trial's table: its total time (ms) and launch count (None when the
    profiler gave no trusted count)."""

    total_ms: float
    calls: int | None


class KernelRow(NamedTuple):
    """One valid row of a per-kernel table as written (a name may repeat)."""

    name: str
    total_ms: float
    calls: int | None
    mangled: str | None = None


@dataclass(frozen=True)
class TrialResult:
    """One trial: how it ended, what it cost, what the collectors measured. Seconds and MiB;
    `exit_code` is None when the payload never ran or a signal (`signal`) killed it."""

    cell: str
    index: int
    verdict: Verdict
    reason: str
    argv: list[str]                  # what was run, collectors' wrapping included (redacted)
    command: list[str]               # what the user asked for (redacted)
    env_overlay: dict[str, str]
    env_unset: list[str]
    exit_code: int | None = None
    signal: int | None = None
    timed_out: bool = False
    launched: bool = False
    wall_s: float | None = None
    cpu_user_s: float | None = None
    cpu_sys_s: float | None = None
    max_rss_mib: float | None = None
    started_at: str | None = None
    host: str | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    captures: dict[str, Capture] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    stderr_tail: str | None = None   # the end of stderr.log when the trial did not pass
    logs: dict[str, LogInfo] = field(default_factory=dict)
    device: str | None = None        # the GPU the trial was pinned to, if any
    baseline: bool = False           # run with no collector, to measure their overhead
    retention: Retention | None = None   # what the recipe's `retain` removed, if anything
    schema_version: int = TRIAL_SCHEMA

    def __post_init__(self) -> None:
        refuse(trial_problem(self.verdict, self.exit_code))

    @property
    def name(self) -> str:
        """The trial's directory name: `trial_<i>`, or `baseline_<i>` for a no-collector one."""
        return trial_name(self.index, self.baseline)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def numeric_metrics(self, allow_partial: bool = False) -> dict[str, float]:
        """The harness's figures plus every finite numeric metric of a collector whose capture
        is `ok` (or `partial`, if asked): a partly read artifact's figures are no measurement."""
        out = {key: float(value) for key in HARNESS_FIGURES
               if (value := getattr(self, key)) is not None}
        untrusted = self.untrusted_prefixes(allow_partial)
        for key, value in self.metrics.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) \
                    and math.isfinite(value) and not key.startswith(untrusted):
                out[key] = float(value)
        return out

    def untrusted_prefixes(self, allow_partial: bool = False) -> tuple[str, ...]:
        """`<collector>_` for every collector whose figures are not measurements here."""
        trusted = ("ok", "partial") if allow_partial else ("ok",)
        return tuple(f"{c}_" for c, cap in self.captures.items() if cap.state not in trusted)

    def kernel_rows(self, allow_partial: bool = False) -> dict[str, list[KernelRow]]:
        """Every per-kernel table of a collector whose figures are measurements (see
        `numeric_metrics`): metric -> its valid rows. A table is a list of rows like
        `{"name": "softmax_kernel", "calls": 21, "total_ms": 0.125}`; a row without a name or
        a finite, non-negative total is left out."""
        untrusted = self.untrusted_prefixes(allow_partial)
        out: dict[str, list[KernelRow]] = {}
        for key, rows in self.metrics.items():
            if key.startswith(untrusted) or not isinstance(rows, list) or not rows or not all(
                    isinstance(r, dict) and "name" in r and "total_ms" in r for r in rows):
                continue
            kept = out[key] = []
            for row in rows:
                name, total, calls, mangled = (row["name"], row["total_ms"], row.get("calls"),
                                               row.get("mangled"))
                if isinstance(name, str) and name and isinstance(total, (int, float)) \
                        and not isinstance(total, bool) and 0 <= total < math.inf:
                    kept.append(_kernel_row((name, float(total), calls if isinstance(calls, int)
                                             and not isinstance(calls, bool) else None,
                                             mangled if isinstance(mangled, str) else None)))
        return out

    def kernel_tables(self, allow_partial: bool = False) -> dict[str, dict[str, KernelEntry]]:
        """`kernel_rows` as metric -> kernel name -> entry; a name listed twice is summed."""
        out: dict[str, dict[str, KernelEntry]] = {}
        for key, rows in self.kernel_rows(allow_partial).items():
            table = out[key] = {}
            for name, total, calls, _ in rows:
                if name in table:
                    before = table[name]
                    total += before.total_ms
                    calls = None if before.calls is None or calls is None else before.calls + calls
                table[name] = _kernel_entry((total, calls))
        return out


# The named tuples made without their Python-level `__new__`: a run has trials x kernels.
_kernel_row = partial(tuple.__new__, KernelRow)
_kernel_entry = partial(tuple.__new__, KernelEntry)


@dataclass(frozen=True)
class RunRecord:
    """`run.json`: what ran, with which collectors, over which cells, and how it stands."""

    run: str
    fingerprint: str
    command: list[str]
    collectors: list[str]
    cells: list[str]
    trials_per_cell: int
    baseline: bool
    status: str
    aorta_version: str
    recipe: str | None = None
    recipe_sha256: str | None = None
    cwd: str | None = None          # where the sweep ran (relative paths in the command)
    created_at: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    #: Where the trials ran: `{"kind": "local"}`, or an executor's kind and its state
    #: (`{"kind": "slurm", "jobs": ...}`); None for a run planned but not started.
    executor: dict[str, Any] | None = None
    stop_after: dict[str, Any] | None = None   # the rule and each cell's state, when set
    schema_version: int = RUN_SCHEMA

    def __post_init__(self) -> None:
        if self.status not in RUN_STATES:
            raise RecordError(f"run status must be one of {RUN_STATES}, got {self.status!r}")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def trial_result(fields: dict[str, Any]) -> TrialResult:
    retention = fields["retention"]
    return TrialResult(**{
        **fields, "captures": {k: Capture(**c) for k, c in fields["captures"].items()},
        "logs": {k: LogInfo(**i) for k, i in fields["logs"].items()},
        "retention": None if retention is None else Retention(**retention)})
