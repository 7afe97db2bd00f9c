"""Strict checks of `result.json` and `run.json` as plain dicts: `checked_trial` / `checked_run`
accept only what this aorta wrote (or an older aorta, migrated here) and return the record's
fields, else a `RecordError` naming the field, or a `NewerRecord` naming both versions. A
reader that needs no record type (`aorta sweep status`) uses the fields as they are, so that
it starts without the record types' machinery (dataclasses, typing).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from itertools import chain, repeat
from typing import Any

from aorta.base.names import component_problem
from aorta.recipe.limits import MAX_TRIALS_PER_CELL, RETAIN_LEVELS
from aorta.store.reading import RecordError

TRIAL_SCHEMA = 2
RUN_SCHEMA = 3
VERDICTS = ("pass", "fail", "error")
RUN_STATES = ("running", "complete", "interrupted")
HARNESS_FIGURES = ("wall_s", "cpu_user_s", "cpu_sys_s", "max_rss_mib")   # what every trial costs
#: ok: every record of the artifact was read; partial: some were skipped (see the reason);
#: empty: the profiler ran and saw nothing; missing: no artifact; unparsed: unreadable.
CAPTURE_STATES = ("ok", "partial", "empty", "missing", "unparsed")
_MAX_METRIC_DEPTH = 16
_SCALARS = {str, int, float, bool, type(None)}
_PLAIN = _SCALARS | {list, dict}


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


def refuse(problem: str | None, where: str = "") -> None:
    if problem:
        raise RecordError(where + problem)


# --- the fields of each record: (key, (accepts, what it must be), default) ---------------------
# A test is a type test where it can be (the values come from `json.loads`, so exact types),
# run once per field of every record every command reads.

_REQUIRED, _NULL = object(), type(None)


def _of(what: str, *types: type) -> tuple[Callable[[Any], bool], str]:
    return (lambda v: type(v) in types), what


def _each_str(values: Any) -> bool:
    return all(map(str.__instancecheck__, values))


_STR, _OPT_STR = _of("a string", str), _of("a string or null", str, _NULL)
_OPT_INT, _BOOL = _of("an integer or null", int, _NULL), _of("true or false", bool)
_COUNT = (lambda v: type(v) is int and v >= 0), "a count"
_OPT_AMOUNT = (lambda v: v is None or type(v) in (int, float) and 0 <= v < math.inf,
               "a finite non-negative number or null")
_STR_LIST = (lambda v: type(v) is list and _each_str(v)), "a list of strings"
_STR_MAP = (lambda v: type(v) is dict and _each_str(v.values())), "a mapping of strings"
_MAPPING = _of("a mapping", dict)

_TRIAL = (
    ("index", ((lambda v: type(v) is int and 0 <= v < MAX_TRIALS_PER_CELL), "a trial index"),
     _REQUIRED),
    ("cell", _STR, _REQUIRED), ("verdict", ((lambda v: v in VERDICTS), "a verdict"), _REQUIRED),
    ("reason", _STR, _REQUIRED), ("argv", _STR_LIST, _REQUIRED),
    ("command", _STR_LIST, _REQUIRED), ("env_overlay", _STR_MAP, _REQUIRED),
    ("env_unset", _STR_LIST, _REQUIRED), ("exit_code", _OPT_INT, None),
    ("signal", _OPT_INT, None), ("timed_out", _BOOL, False), ("launched", _BOOL, False),
    ("started_at", _OPT_STR, None), ("host", _OPT_STR, None), ("metrics", _MAPPING, dict),
    ("captures", _MAPPING, dict), ("warnings", _STR_LIST, list),
    ("stderr_tail", _OPT_STR, None), ("logs", _MAPPING, dict), ("device", _OPT_STR, None),
    ("baseline", _BOOL, False), ("retention", _of("a mapping or null", dict, _NULL), None),
    *((key, _OPT_AMOUNT, None) for key in HARNESS_FIGURES))
_CAPTURE = (("state", _STR, _REQUIRED), ("reason", _OPT_STR, None),
            ("resolved", _STR_MAP, dict), ("skipped", _OPT_INT, None))
_LOG = (("written", _COUNT, _REQUIRED), ("kept", _COUNT, _REQUIRED), ("problem", _OPT_STR, None))
_RETENTION = (("level", _STR, _REQUIRED), ("files", _STR_LIST, _REQUIRED),
              ("file_count", _COUNT, _REQUIRED), ("bytes", _COUNT, _REQUIRED))
_RUN = (
    ("cells", _STR_LIST, list),
    ("history", ((lambda v: type(v) is list and all(map(dict.__instancecheck__, v))),
                 "a list of objects"), list),
    ("executor", ((lambda v: v is None or type(v) is dict and type(v.get("kind")) is str),
                  "an object with a string kind, or null"), None),
    ("run", _STR, _REQUIRED), ("fingerprint", _STR, ""), ("command", _STR_LIST, list),
    ("collectors", _STR_LIST, list),
    ("trials_per_cell", ((lambda v: type(v) is int and 0 <= v <= MAX_TRIALS_PER_CELL),
                         "a trial count"), 0),
    ("baseline", _BOOL, False),
    ("status", ((lambda v: v in RUN_STATES), f"one of {', '.join(RUN_STATES)}"), _REQUIRED),
    ("aorta_version", _STR, "unknown"),
    *((key, _OPT_STR, None) for key in ("recipe", "recipe_sha256", "cwd", "created_at",
                                        "started_at", "finished_at")),
    ("stop_after", _of("an object", dict, _NULL), None))


def _fields(doc: Any, spec: Any, where: str = "") -> dict[str, Any]:
    """The fields of `spec` from `doc`, each checked, in `spec`'s order; a missing optional
    field gets its default (a fresh one where the default is `list` or `dict`)."""
    if type(doc) is not dict:
        raise RecordError(f"{where}not a mapping")
    out = {}
    for key, (accepts, what), default in spec:
        if key in doc:
            value = doc[key]
            if not accepts(value):
                raise RecordError(f"{where}{key}: not {what}")
            out[key] = value
        elif default is _REQUIRED:
            raise RecordError(f"{where}{key}: missing")
        else:
            out[key] = default() if default in (list, dict) else default
    return out


def _json_value(v: Any, limit: int = _MAX_METRIC_DEPTH) -> bool:
    """Whether `v` is a finite JSON value nested at most `limit` deep. Every read of every
    record checks its metrics, so the walk goes a level at a time, its tests mapped in C."""
    level = [v]
    for _ in range(limit + 1):
        types = set(map(type, level))
        plain = types <= _PLAIN     # else subclasses (numpy's floats) or no JSON value at all
        if not plain and not all(map(isinstance, level, repeat(tuple(_PLAIN)))):
            return False        # not a JSON value at all
        if (float in types or not plain) and not all(
                map(math.isfinite, filter(float.__instancecheck__, level))):
            return False        # NaN or an infinity
        if types <= _SCALARS:
            return True
        level = [*chain.from_iterable(filter(list.__instancecheck__, level)),
                 *chain.from_iterable(map(dict.values, filter(dict.__instancecheck__, level)))]
        if not level:
            return True
    return False


def clean_metrics(metrics: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The metrics a record can hold (finite JSON values, nested at most 16 deep), and the
    keys that had to be left out."""
    kept = {str(k): v for k, v in metrics.items() if _json_value(v)}
    return kept, [str(k) for k in metrics if str(k) not in kept]


def _metrics(v: dict[str, Any]) -> str | None:
    if _json_value(v, _MAX_METRIC_DEPTH + 1):   # all at once: the usual case
        return None
    bad = next((k for k, x in v.items() if not _json_value(x)), "metrics")
    return f"{bad}: nested too deep or not a finite JSON value"


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
    fields = _fields(doc, _TRIAL)
    refuse(_metrics(fields["metrics"]), "metrics: ")
    for where, spec in (("captures", _CAPTURE), ("logs", _LOG)):
        fields[where] = {name: _fields(raw, spec, f"{where}.{name}: ")
                         for name, raw in fields[where].items()}
    for name, capture in fields["captures"].items():
        refuse(capture_problem(capture["state"], capture["skipped"]), f"captures.{name}: ")
    if fields["retention"] is not None:
        fields["retention"] = _fields(fields["retention"], _RETENTION, "retention: ")
        refuse(retention_problem(*fields["retention"].values()), "retention: ")
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
    if version < 3:     # v2 kept Slurm's state under "slurm"; v3 has a generic executor block
        slurm = doc.get("slurm")
        doc = {**doc, "executor": {**slurm, "kind": "slurm"} if isinstance(slurm, dict)
               else slurm}      # null stays null; anything else is refused below
    fields = _fields(doc, _RUN)
    _check_cells("cells", fields["cells"])
    if len(set(fields["cells"])) != len(fields["cells"]):
        raise RecordError("cells: a cell is listed twice")
    return fields
