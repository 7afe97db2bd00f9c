"""Strict checks of `result.json` and `run.json` as plain dicts: `checked_trial` / `checked_run`
accept only what this aorta wrote (or an older aorta, migrated here) and return the record's
fields, else a `RecordError` naming the field, or a `NewerRecord` naming both versions. A
reader that needs no record type (`aorta sweep status`) uses the fields as they are, so that
it starts without the record types' machinery (dataclasses, typing).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from aorta.base.names import component_problem
from aorta.recipe.limits import MAX_TRIALS_PER_CELL, RETAIN_LEVELS
from aorta.store.reading import RecordError

Check = Callable[[Any], str | None]

TRIAL_SCHEMA = 2
RUN_SCHEMA = 3
VERDICTS = ("pass", "fail", "error")
RUN_STATES = ("running", "complete", "interrupted")
#: ok: every record of the artifact was read; partial: some were skipped (see the reason);
#: empty: the profiler ran and saw nothing; missing: no artifact; unparsed: unreadable.
CAPTURE_STATES = ("ok", "partial", "empty", "missing", "unparsed")
_MAX_METRIC_DEPTH = 16


class NewerRecord(RecordError):
    """A record written by a newer aorta: refused, never rewritten or deleted."""

    def __init__(self, what: str, version: int, supported: int) -> None:
        super().__init__(f"written by a newer aorta ({what} schema {version}; this aorta "
                         f"reads up to {supported}): upgrade aorta to use it")
        self.version = version


# --- rules a record must keep however it was made (the record types check them too) --------

def capture_problem(state: object, skipped: int | None) -> str | None:
    if state not in CAPTURE_STATES:
        return f"capture state {state!r} is not one of {CAPTURE_STATES}"
    if skipped is not None and skipped < 0:
        return "a capture cannot have skipped a negative number of records"
    return None


def retention_problem(level: object, files: list[str], file_count: int, size: int) -> str | None:
    if level not in RETAIN_LEVELS:
        return f"retention level {level!r} is not none, log, summary or full"
    if file_count < len(files) or size < 0:
        return "retention counts fewer files than it lists, or negative bytes"
    return None


def trial_problem(verdict: object, exit_code: int | None) -> str | None:
    if verdict not in VERDICTS:
        return f"verdict must be one of {VERDICTS}, got {verdict!r}"
    if verdict == "pass" and exit_code != 0:
        return "a passing trial must have exit code 0"
    return None


def run_problem(status: object) -> str | None:
    if status not in RUN_STATES:
        return f"run status must be one of {RUN_STATES}, got {status!r}"
    return None


def refuse(problem: str | None) -> None:
    if problem:
        raise RecordError(problem)


_REQUIRED = object()


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


def _rule(ok: Callable[[Any], bool], what: str, null: bool = False) -> Check:
    return lambda v: None if (null and v is None) or ok(v) else f"not {what}"


_str = _rule(lambda v: isinstance(v, str), "a string")
_opt_str = _rule(lambda v: isinstance(v, str), "a string or null", null=True)
_opt_int = _rule(_is_int, "an integer or null", null=True)
_bool = _rule(lambda v: isinstance(v, bool), "true or false")
_count = _rule(lambda v: _is_int(v) and v >= 0, "a count")
_opt_object = _rule(lambda v: isinstance(v, dict), "an object", null=True)
_opt_amount = _rule(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
                    and math.isfinite(v) and v >= 0,
                    "a finite non-negative number or null", null=True)
_str_list = _rule(lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
                  "a list of strings")
_str_map = _rule(lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
                 "a mapping of strings")


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


def _mapping(where: str, v: Any) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise RecordError(f"{where}: not a mapping")
    return v


def _within(where: str, v: Any, read: Callable[[dict[str, Any]], dict[str, Any]]
            ) -> dict[str, Any]:
    raw = _mapping(where, v)
    try:
        return read(raw)
    except RecordError as exc:
        raise RecordError(f"{where}: {exc}") from None


def _capture(raw: dict[str, Any]) -> dict[str, Any]:
    capture = {"state": _take(raw, "state", _str),
               "reason": _take(raw, "reason", _opt_str, None),
               "resolved": dict(_take(raw, "resolved", _str_map, {})),
               "skipped": _take(raw, "skipped", _opt_int, None)}
    refuse(capture_problem(capture["state"], capture["skipped"]))
    return capture


def _retention(raw: dict[str, Any]) -> dict[str, Any]:
    kept = {"level": _take(raw, "level", _str), "files": list(_take(raw, "files", _str_list)),
            "file_count": _take(raw, "file_count", _count), "bytes": _take(raw, "bytes", _count)}
    refuse(retention_problem(kept["level"], kept["files"], kept["file_count"], kept["bytes"]))
    return kept


def _log(raw: dict[str, Any]) -> dict[str, Any]:
    return {"written": _take(raw, "written", _count), "kept": _take(raw, "kept", _count),
            "problem": _take(raw, "problem", _opt_str, None)}


def _check_version(doc: Any, what: str, current: int) -> int:
    if not isinstance(doc, dict):
        raise RecordError(f"not a JSON object (found {type(doc).__name__})")
    version = doc.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise RecordError(f"schema_version: {version!r} is not a {what} schema version")
    if version > current:
        raise NewerRecord(what, version, current)
    return version


def _check_cells(key: str, cells: list[str]) -> None:
    bad = next((c for c in cells if component_problem(c) is not None), None)
    if bad is not None:
        raise RecordError(f"{key}: {bad!r} is not a cell name")


def checked_trial(doc: Any) -> dict[str, Any]:
    """A `TrialResult`'s fields (nested records as dicts) from a parsed `result.json`. Checked
    in a fixed order, so a record with several faults is always refused for the same one."""
    if _check_version(doc, "trial", TRIAL_SCHEMA) == 1:
        doc = _trial_v1_to_v2(doc)
    index = _take(doc, "index", _rule(lambda x: _is_int(x) and 0 <= x < MAX_TRIALS_PER_CELL,
                                      "a trial index"))
    retention = doc.get("retention")
    fields = dict(
        cell=_take(doc, "cell", _str), index=index,
        verdict=_take(doc, "verdict", _rule(lambda x: x in VERDICTS, "a verdict")),
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
        captures={name: _within(f"captures.{name}", raw, _capture)
                  for name, raw in _mapping("captures", doc.get("captures", {})).items()},
        warnings=_take(doc, "warnings", _str_list, []),
        stderr_tail=_take(doc, "stderr_tail", _opt_str, None),
        logs={name: _log(_mapping(f"logs.{name}", raw))
              for name, raw in _mapping("logs", doc.get("logs", {})).items()},
        device=_take(doc, "device", _opt_str, None),
        baseline=_take(doc, "baseline", _bool, False),
        retention=None if retention is None else _within("retention", retention, _retention),
        schema_version=TRIAL_SCHEMA)
    for key in ("wall_s", "cpu_user_s", "cpu_sys_s", "max_rss_mib"):
        fields[key] = _take(doc, key, _opt_amount, None)
    _check_cells("cell", [fields["cell"]])
    refuse(trial_problem(fields["verdict"], fields["exit_code"]))
    return fields


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


def checked_run(doc: Any, baseline_of_v1: Callable[[], bool] = lambda: False) -> dict[str, Any]:
    """The fields of a `RunRecord` from a parsed `run.json`. A v1 record did not say whether
    the run had baseline trials: `baseline_of_v1()` answers from the run's resolved recipe."""
    version = _check_version(doc, "run", RUN_SCHEMA)
    if "run" not in doc:
        raise RecordError("not an aorta run record (no 'run' key)")
    if version == 1 and "baseline" not in doc:
        doc = {**doc, "baseline": baseline_of_v1()}
    cells = _take(doc, "cells", _str_list, [])
    _check_cells("cells", cells)
    if len(set(cells)) != len(cells):
        raise RecordError("cells: a cell is listed twice")
    history = _take(doc, "history", _rule(lambda x: isinstance(x, list) and all(
        isinstance(h, dict) for h in x), "a list of objects"), [])
    if version < 3:     # v2 kept Slurm's state under "slurm"; v3 has a generic executor block
        slurm = doc.get("slurm")
        doc = {**doc, "executor": {**slurm, "kind": "slurm"} if isinstance(slurm, dict)
               else slurm}      # null stays null; anything else is refused below
    executor = _take(doc, "executor", _rule(lambda x: isinstance(x, dict) and isinstance(
        x.get("kind"), str), "an object with a string kind, or null", null=True), None)
    return dict(
        run=_take(doc, "run", _str), fingerprint=_take(doc, "fingerprint", _str, ""),
        command=_take(doc, "command", _str_list, []),
        collectors=_take(doc, "collectors", _str_list, []), cells=cells,
        trials_per_cell=_take(doc, "trials_per_cell", _rule(
            lambda x: _is_int(x) and 0 <= x <= MAX_TRIALS_PER_CELL, "a trial count"), 0),
        baseline=_take(doc, "baseline", _bool, False),
        status=_take(doc, "status", _rule(lambda x: x in RUN_STATES,
                                          f"one of {', '.join(RUN_STATES)}")),
        aorta_version=_take(doc, "aorta_version", _str, "unknown"),
        **{key: _take(doc, key, _opt_str, None) for key in (
            "recipe", "recipe_sha256", "cwd", "created_at", "started_at", "finished_at")},
        history=list(history), executor=executor,
        stop_after=_take(doc, "stop_after", _opt_object, None),
        schema_version=RUN_SCHEMA)
