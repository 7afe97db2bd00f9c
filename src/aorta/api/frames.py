"""The tables of a run as columns (name -> list of values: `aorta export` needs no pandas),
and as pandas or polars DataFrames. A figure that is not a measurement (a failed trial's, or a
collector's whose capture is not `ok`; `partial` counts with `allow_partial`) is left empty,
never zero.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

from aorta.base.errors import UserError
from aorta.store.records import TrialResult

Columns = dict[str, list[Any]]

TRIAL_FIELDS = ("run", "cell", "trial", "index", "baseline", "state", "verdict", "reason",
                "exit_code", "signal", "timed_out", "wall_s", "cpu_user_s", "cpu_sys_s",
                "max_rss_mib", "device", "host", "started_at")
KERNEL_FIELDS = ("run", "cell", "trial", "index", "baseline", "table", "name", "mangled",
                 "calls", "total_ms")
_NAN = float("nan")


class TrialRecord(Protocol):
    """A trial's place in its run and its record (`aorta.Trial`)."""

    @property
    def cell(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def index(self) -> int: ...
    @property
    def baseline(self) -> bool: ...
    @property
    def state(self) -> str: ...
    @property
    def result(self) -> TrialResult | None: ...
    @property
    def problem(self) -> str | None: ...


def trial_columns(run: str, trials: Sequence[TrialRecord], allow_partial: bool = False
                  ) -> Columns:
    """One row per trial of run `run`."""
    cols: Columns = {name: [] for name in TRIAL_FIELDS}
    captures = sorted({c for t in trials if t.result for c in t.result.captures})
    for c in captures:
        cols[f"capture_{c}"] = []
    metrics = sorted({k for t in trials if t.result
                      for k in t.result.numeric_metrics(allow_partial)} - set(TRIAL_FIELDS))
    for key in metrics:
        cols[key] = []
    for t in trials:
        r = t.result
        values: dict[str, Any] = {"run": run, "cell": t.cell, "trial": t.name,
                                  "index": t.index, "baseline": t.baseline, "state": t.state,
                                  "reason": t.problem}
        if r is not None:
            values |= {k: getattr(r, k) for k in TRIAL_FIELDS[6:]}
            values |= {f"capture_{c}": cap.state for c, cap in r.captures.items()}
            if r.verdict == "pass":
                values |= r.numeric_metrics(allow_partial)
            else:   # a failed trial's figures describe something else
                values |= {k: None for k in ("wall_s", "cpu_user_s", "cpu_sys_s", "max_rss_mib")}
        for key, column in cols.items():
            value = values.get(key)
            column.append(_NAN if value is None and key in metrics else value)
    return cols


def kernel_columns(run: str, trials: Sequence[TrialRecord], allow_partial: bool = False
                   ) -> Columns:
    """One row per passing trial and row of each of its per-kernel tables."""
    cols: Columns = {name: [] for name in KERNEL_FIELDS}
    for t in trials:
        r = t.result
        if r is None or r.verdict != "pass":
            continue
        untrusted = r.untrusted_prefixes(allow_partial)
        for table, rows in r.metrics.items():
            if table.startswith(untrusted) or not _is_table(rows):
                continue
            for row in rows:
                total = row.get("total_ms")
                if not isinstance(row.get("name"), str) or not _finite(total):
                    continue
                calls = row.get("calls")
                if not isinstance(calls, int) or isinstance(calls, bool):
                    calls = None
                values = (run, t.cell, t.name, t.index, t.baseline, table, row["name"],
                          row.get("mangled"), calls, float(total))
                for key, value in zip(KERNEL_FIELDS, values):
                    cols[key].append(value)
    return cols


def _is_table(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(
        isinstance(r, dict) and "name" in r and "total_ms" in r for r in value)


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value) and value >= 0


def frame(columns: Columns, backend: str = "pandas") -> Any:
    """The columns as a DataFrame of `backend` ("pandas" or "polars")."""
    if backend == "pandas":
        try:
            import pandas
        except ImportError:
            raise UserError("pandas is not installed: pip install pandas (or use "
                            "backend='polars', or `aorta export` for CSV)") from None
        return pandas.DataFrame(columns)
    if backend == "polars":
        try:
            import polars
        except ImportError:
            raise UserError("polars is not installed: pip install polars (or use "
                            "backend='pandas')") from None
        return polars.DataFrame(columns, strict=False)
    raise UserError(f"backend {backend!r}: use 'pandas' or 'polars'")
