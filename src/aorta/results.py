"""The records a sweep writes: one `TrialResult` per trial (`result.json`) and one `RunRecord`
per run (`run.json`), with their schema versions, strict validation and migrations.

Records are frozen and checked when they are built. `trial_from_json` / `run_from_json` accept
only what this aorta wrote (or an older aorta, migrated here): anything else is a
`RecordError` naming the field, and a record from a newer aorta is a `NewerRecord` naming
both versions. Where files live is `aorta.store`'s business, not this module's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from aorta.store.files import RecordError
from aorta.store.names import MAX_NAME_BYTES, name_problem

__all__ = ["TRIAL_SCHEMA", "RUN_SCHEMA", "CAPTURE_STATES", "VERDICTS", "RUN_STATES",
           "Verdict", "Capture", "LogInfo", "Retention", "TrialResult", "RunRecord", "RecordError",
           "NewerRecord", "trial_from_json", "run_from_json", "MAX_TRIALS_PER_CELL",
           "clean_metrics"]

TRIAL_SCHEMA = 2
RUN_SCHEMA = 2
Verdict = Literal["pass", "fail", "error"]
VERDICTS = ("pass", "fail", "error")
RUN_STATES = ("running", "complete", "interrupted")
#: ok: every record of the artifact was read; partial: some were skipped (see the reason);
#: empty: the profiler ran and saw nothing; missing: no artifact; unparsed: unreadable.
CAPTURE_STATES = ("ok", "partial", "empty", "missing", "unparsed")
MAX_TRIALS_PER_CELL = 10_000
_MAX_METRIC_DEPTH = 16


class NewerRecord(RecordError):
    """A record written by a newer aorta: refused, never rewritten or deleted."""

    def __init__(self, what: str, version: int, supported: int) -> None:
        super().__init__(f"written by a newer aorta ({what} schema {version}; this aorta "
                         f"reads up to {supported}): upgrade aorta to use it")
        self.version = version


@dataclass(frozen=True)
class Capture:
    """What one collector got from one trial: its state, why when not `ok`, and what it
    resolved for this trial (e.g. `{"proton_backend": "cupti"}` when `auto` was asked)."""

    state: str
    reason: str | None = None
    resolved: dict[str, str] = field(default_factory=dict)
    skipped: int | None = None      # records of the artifact left out (`partial`)

    def __post_init__(self) -> None:
        if self.state not in CAPTURE_STATES:
            raise ValueError(f"capture state {self.state!r} is not one of {CAPTURE_STATES}")
        if self.skipped is not None and self.skipped < 0:
            raise ValueError("a capture cannot have skipped a negative number of records")


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
        if self.level not in ("none", "log", "summary", "full"):
            raise ValueError(f"retention level {self.level!r} is not none, log, summary or full")
        if self.file_count < len(self.files) or self.bytes < 0:
            raise ValueError("retention counts fewer files than it lists, or negative bytes")


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
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if self.verdict == "pass" and self.exit_code != 0:
            raise ValueError("a passing trial must have exit code 0")

    @property
    def name(self) -> str:
        """The trial's directory name: `trial_<i>`, or `baseline_<i>` for a no-collector one."""
        return f"{'baseline' if self.baseline else 'trial'}_{self.index}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: Any) -> TrialResult:
        return trial_from_json(doc)

    def numeric_metrics(self, allow_partial: bool = False) -> dict[str, float]:
        """The harness's figures plus every finite numeric metric of a collector whose capture
        is `ok` (or `partial`, when asked): a figure from an artifact that was not fully
        read is not a measurement."""
        out = {}
        for key, value in (("wall_s", self.wall_s), ("cpu_user_s", self.cpu_user_s),
                           ("cpu_sys_s", self.cpu_sys_s), ("max_rss_mib", self.max_rss_mib)):
            if value is not None:
                out[key] = float(value)
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
    slurm: dict[str, Any] | None = None
    stop_after: dict[str, Any] | None = None   # the rule and each cell's state, when set
    schema_version: int = RUN_SCHEMA

    def __post_init__(self) -> None:
        if self.status not in RUN_STATES:
            raise ValueError(f"run status must be one of {RUN_STATES}, got {self.status!r}")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# --- validation -------------------------------------------------------------------------

_REQUIRED = object()
Check = Callable[[Any], str | None]


def _take(doc: Mapping[str, Any], key: str, check: Check, default: Any = _REQUIRED) -> Any:
    if key not in doc:
        if default is _REQUIRED:
            raise RecordError(f"{key}: missing")
        return default
    value = doc[key]
    problem = check(value)
    if problem:
        raise RecordError(f"{key}: {problem}")
    return value


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _str(v: Any) -> str | None:
    return None if isinstance(v, str) else "not a string"


def _opt_str(v: Any) -> str | None:
    return None if v is None or isinstance(v, str) else "not a string or null"


def _opt_int(v: Any) -> str | None:
    return None if v is None or _is_int(v) else "not an integer or null"


def _bool(v: Any) -> str | None:
    return None if isinstance(v, bool) else "not true or false"


def _opt_amount(v: Any) -> str | None:
    if v is None:
        return None
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
    return None if ok else "not a finite non-negative number or null"


def _str_list(v: Any) -> str | None:
    ok = isinstance(v, list) and all(isinstance(x, str) for x in v)
    return None if ok else "not a list of strings"


def _str_map(v: Any) -> str | None:
    ok = isinstance(v, dict) and all(isinstance(x, str) for x in v.values())
    return None if ok else "not a mapping of strings"


def _json_value(v: Any, depth: int = 0) -> bool:
    if depth > _MAX_METRIC_DEPTH:
        return False
    if v is None or isinstance(v, (str, bool, int)):
        return True
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, list):
        return all(_json_value(x, depth + 1) for x in v)
    if isinstance(v, dict):
        return all(_json_value(x, depth + 1) for x in v.values())
    return False


def clean_metrics(metrics: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The metrics a record can hold (finite JSON values, nested at most 16 deep), and the
    keys that had to be left out."""
    kept = {str(k): v for k, v in metrics.items() if _json_value(v)}
    return kept, [str(k) for k in metrics if str(k) not in kept]


def _metrics(v: Any) -> str | None:
    if not isinstance(v, dict):
        return "not a mapping"
    bad = next((k for k, x in v.items() if not _json_value(x)), None)
    return None if bad is None else f"{bad}: nested too deep or not a finite JSON value"


def _captures(v: Any) -> dict[str, Capture]:
    if not isinstance(v, dict):
        raise RecordError("captures: not a mapping")
    out = {}
    for name, raw in v.items():
        if not isinstance(raw, dict):
            raise RecordError(f"captures.{name}: not a mapping")
        try:
            out[name] = Capture(_take(raw, "state", _str), _take(raw, "reason", _opt_str, None),
                                dict(_take(raw, "resolved", _str_map, {})),
                                _take(raw, "skipped", _opt_int, None))
        except ValueError as exc:
            raise RecordError(f"captures.{name}: {exc}") from None
    return out


def _logs(v: Any) -> dict[str, LogInfo]:
    if not isinstance(v, dict):
        raise RecordError("logs: not a mapping")
    out = {}
    for name, raw in v.items():
        if not isinstance(raw, dict):
            raise RecordError(f"logs.{name}: not a mapping")
        counts = [_take(raw, k, lambda x: None if _is_int(x) and x >= 0 else "not a count")
                  for k in ("written", "kept")]
        out[name] = LogInfo(counts[0], counts[1], _take(raw, "problem", _opt_str, None))
    return out


def _count(v: Any) -> str | None:
    return None if _is_int(v) and v >= 0 else "not a count"


def _retention(v: Any) -> Retention | None:
    if v is None:
        return None
    if not isinstance(v, dict):
        raise RecordError("retention: not a mapping")
    try:
        return Retention(_take(v, "level", _str), list(_take(v, "files", _str_list)),
                         _take(v, "file_count", _count), _take(v, "bytes", _count))
    except (ValueError, RecordError) as exc:
        raise RecordError(f"retention: {exc}") from None


def _check_version(doc: Any, what: str, current: int) -> int:
    if not isinstance(doc, dict):
        raise RecordError(f"not a JSON object (found {type(doc).__name__})")
    version = doc.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise RecordError(f"schema_version: {version!r} is not a {what} schema version")
    if version > current:
        raise NewerRecord(what, version, current)
    return version


def trial_from_json(doc: Any) -> TrialResult:
    """A validated `TrialResult` from a parsed `result.json` (migrated when older)."""
    if _check_version(doc, "trial", TRIAL_SCHEMA) == 1:
        doc = _trial_v1_to_v2(doc)
    index = _take(doc, "index", lambda x: None if _is_int(x) and 0 <= x < MAX_TRIALS_PER_CELL
                  else "not a trial index")
    fields = dict(
        cell=_take(doc, "cell", _str), index=index,
        verdict=_take(doc, "verdict", lambda x: None if x in VERDICTS else "not a verdict"),
        reason=_take(doc, "reason", _str), argv=_take(doc, "argv", _str_list),
        command=_take(doc, "command", _str_list), env_overlay=_take(doc, "env_overlay", _str_map),
        env_unset=_take(doc, "env_unset", _str_list),
        exit_code=_take(doc, "exit_code", _opt_int, None),
        signal=_take(doc, "signal", _opt_int, None),
        timed_out=_take(doc, "timed_out", _bool, False),
        launched=_take(doc, "launched", _bool, False),
        started_at=_take(doc, "started_at", _opt_str, None),
        host=_take(doc, "host", _opt_str, None),
        metrics=_take(doc, "metrics", _metrics, {}),
        captures=_captures(doc.get("captures", {})),
        warnings=_take(doc, "warnings", _str_list, []),
        stderr_tail=_take(doc, "stderr_tail", _opt_str, None),
        logs=_logs(doc.get("logs", {})),
        device=_take(doc, "device", _opt_str, None),
        baseline=_take(doc, "baseline", _bool, False),
        retention=_retention(doc.get("retention")))
    for key in ("wall_s", "cpu_user_s", "cpu_sys_s", "max_rss_mib"):
        fields[key] = _take(doc, key, _opt_amount, None)
    if name_problem(fields["cell"]) or len(fields["cell"].encode()) > MAX_NAME_BYTES:
        raise RecordError(f"cell: {fields['cell']!r} is not a cell name")
    try:
        return TrialResult(**fields)
    except ValueError as exc:
        raise RecordError(str(exc)) from None


def _trial_v1_to_v2(doc: dict[str, Any]) -> dict[str, Any]:
    """v1 kept each capture's state as string metrics (`<c>_capture`, `<c>_capture_reason`)
    and repeated it as a warning; v2 has a typed `captures` field."""
    metrics = dict(doc.get("metrics") or {}) if isinstance(doc.get("metrics"), dict) else {}
    captures: dict[str, Any] = {}
    for key in [k for k in metrics if k.endswith("_capture")]:
        name, state = key[:-len("_capture")], metrics.pop(key)
        reason = metrics.pop(f"{name}_capture_reason", None)
        if state in CAPTURE_STATES:
            captures[name] = {"state": state, "reason": reason if isinstance(reason, str)
                              else None}
    warnings = doc.get("warnings")
    if isinstance(warnings, list):
        said = tuple(f"aorta: {c} capture is " for c in captures)
        warnings = [w for w in warnings if not (isinstance(w, str) and w.startswith(said))]
    return {**doc, "metrics": metrics, "captures": captures, "warnings": warnings,
            "schema_version": 2}


def run_from_json(doc: Any, baseline_of_v1: Callable[[], bool] = lambda: False) -> RunRecord:
    """A validated `RunRecord` from a parsed `run.json`. A v1 record did not say whether the
    run had baseline trials: `baseline_of_v1()` answers from the run's resolved recipe."""
    version = _check_version(doc, "run", RUN_SCHEMA)
    if "run" not in doc:
        raise RecordError("not an aorta run record (no 'run' key)")
    if version == 1 and "baseline" not in doc:
        doc = {**doc, "baseline": baseline_of_v1()}
    cells = _take(doc, "cells", _str_list, [])
    bad = next((c for c in cells if name_problem(c) or len(c.encode()) > MAX_NAME_BYTES), None)
    if bad is not None or len(set(cells)) != len(cells):
        raise RecordError(f"cells: {bad!r} is not a cell name" if bad is not None
                          else "cells: a cell is listed twice")
    history = _take(doc, "history", lambda x: None if isinstance(x, list) and all(
        isinstance(h, dict) for h in x) else "not a list of objects", [])
    slurm = _take(doc, "slurm", lambda x: None if x is None or isinstance(x, dict)
                  else "not an object", None)
    try:
        return RunRecord(
            run=_take(doc, "run", _str), fingerprint=_take(doc, "fingerprint", _str, ""),
            command=_take(doc, "command", _str_list, []),
            collectors=_take(doc, "collectors", _str_list, []), cells=cells,
            trials_per_cell=_take(doc, "trials_per_cell", lambda x: None if _is_int(x) and
                                  0 <= x <= MAX_TRIALS_PER_CELL else "not a trial count", 0),
            baseline=_take(doc, "baseline", _bool, False),
            status=_take(doc, "status", lambda x: None if x in RUN_STATES else
                         f"not one of {', '.join(RUN_STATES)}"),
            aorta_version=_take(doc, "aorta_version", _str, "unknown"),
            recipe=_take(doc, "recipe", _opt_str, None),
            recipe_sha256=_take(doc, "recipe_sha256", _opt_str, None),
            cwd=_take(doc, "cwd", _opt_str, None),
            created_at=_take(doc, "created_at", _opt_str, None),
            started_at=_take(doc, "started_at", _opt_str, None),
            finished_at=_take(doc, "finished_at", _opt_str, None),
            history=list(history), slurm=slurm,
            stop_after=_take(doc, "stop_after", lambda x: None if x is None or isinstance(x, dict)
                             else "not an object", None))
    except ValueError as exc:
        raise RecordError(str(exc)) from None
