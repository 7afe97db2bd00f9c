"""The records a sweep writes: one `TrialResult` per trial (`result.json`) and one `RunRecord`
per run (`run.json`), with their schema versions, strict validation and migrations.

Records are frozen and checked when they are built. `TrialResult.from_json` / `run_from_json`
accept only what this aorta wrote (or an older aorta, migrated here): anything else is a
`RecordError` naming the field, and a record from a newer aorta is a `NewerRecord` naming
both versions. The checks live in `aorta.store.record_checks`, which needs none of these types.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from aorta.store.layout import trial_name
from aorta.store.record_checks import (RUN_SCHEMA, TRIAL_SCHEMA, capture_problem, checked_run,
                                       checked_trial, refuse, retention_problem, run_problem,
                                       trial_problem)

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
    problem: str | None = None      # e.g. the disk filled up while writing it

    @property
    def cut(self) -> int:
        return max(0, self.written - self.kept)


@dataclass(frozen=True)
class Retention:
    """What retention removed from the trial directory after its metrics were read: the
    level applied (`none`, `log`, `summary`, `full`), the files removed (paths inside the
    trial directory, the first 200), how many and how many bytes in all."""

    level: str
    files: list[str]
    file_count: int
    bytes: int

    def __post_init__(self) -> None:
        refuse(retention_problem(self.level, self.files, self.file_count, self.bytes))


@dataclass(frozen=True)
class TrialResult:
    """One trial: how it ended, what it cost, what the collectors measured.

    Times are seconds, memory is MiB. `exit_code` is the payload's (None when it never ran or
    was killed by a signal, then `signal` says which)."""

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

    @classmethod
    def from_json(cls, doc: Any) -> TrialResult:
        """A validated `TrialResult` from a parsed `result.json` (migrated when older)."""
        return trial_result(checked_trial(doc))

    def numeric_metrics(self, allow_partial: bool = False) -> dict[str, float]:
        """The harness's figures plus every finite numeric metric of a collector whose capture
        is `ok` (or `partial`, when asked): a figure from an artifact that was not fully
        read is not a measurement."""
        out = {key: float(value) for key, value in (
            ("wall_s", self.wall_s), ("cpu_user_s", self.cpu_user_s),
            ("cpu_sys_s", self.cpu_sys_s), ("max_rss_mib", self.max_rss_mib)) if value is not None}
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
        refuse(run_problem(self.status))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def run_from_json(doc: Any, baseline_of_v1: Callable[[], bool] = lambda: False) -> RunRecord:
    """A validated `RunRecord` from a parsed `run.json`. A v1 record did not say whether the
    run had baseline trials: `baseline_of_v1()` answers from the run's resolved recipe."""
    return run_record(checked_run(doc, baseline_of_v1))


def trial_result(fields: dict[str, Any]) -> TrialResult:
    """The `TrialResult` of `checked_trial`'s fields."""
    retention = fields["retention"]
    return TrialResult(**{
        **fields, "captures": {k: Capture(**c) for k, c in fields["captures"].items()},
        "logs": {k: LogInfo(**i) for k, i in fields["logs"].items()},
        "retention": None if retention is None else Retention(**retention)})


def run_record(fields: dict[str, Any]) -> RunRecord:
    """The `RunRecord` of `checked_run`'s fields."""
    return RunRecord(**fields)
