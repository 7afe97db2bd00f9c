"""Run directories as data (docs/api.md): `aorta.open_run(path)` gives a `Run` with every
trial's typed record and its tables as DataFrames; `aorta.compare(base, new)` what `aorta
compare` prints. All is read through `aorta.store`, with the same rules as `aorta report`.
`API_VERSION` is the records' schema version: this API and the JSON files change together.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import repeat
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from aorta.base.errors import UserError
from aorta.store.layout import ENV, SlotState
from aorta.store.record_checks import HARNESS_FIGURES, TRIAL_SCHEMA
from aorta.store.records import RunRecord, TrialResult
from aorta.store.run_dir import RunStore

if TYPE_CHECKING:
    from aorta.comparison.model import Comparison
    from aorta.run.sweep import SweepOutcome
    from aorta.stats.family import Correction

API_VERSION = TRIAL_SCHEMA
Columns = dict[str, list[Any]]

TRIAL_FIELDS = ("run", "cell", "trial", "index", "baseline", "state", "verdict", "reason",
                "exit_code", "signal", "timed_out", "wall_s", "cpu_user_s", "cpu_sys_s",
                "max_rss_mib", "device", "host", "started_at")
KERNEL_FIELDS = ("run", "cell", "trial", "index", "baseline", "table", "name", "mangled",
                 "calls", "total_ms")
_NAN = float("nan")


@dataclass(frozen=True)
class Trial:
    """One trial's place in the run and its record (None unless `state` is `complete`)."""

    cell: str
    name: str                      # trial_<i> or baseline_<i>
    index: int
    baseline: bool
    state: SlotState               # complete | missing | corrupt | newer
    result: TrialResult | None
    problem: str | None            # why the record is corrupt or newer
    dir: Path


class Run:
    """A run directory, read once when opened (`open_run`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._store = RunStore(path)
        self.record: RunRecord = self._store.read_run("open")
        cells = self.record.cells + [c for c in self._store.cells_on_disk()
                                     if c not in self.record.cells]
        self.trials: list[Trial] = [
            Trial(s.cell, s.name, s.index, s.baseline, s.state, s.result, s.problem, path / s.dir)
            for s in self._store.slots(self.record, cells)]
        #: How the `aorta.sweep` call that returned this run went; None when opened.
        self.outcome: SweepOutcome | None = None

    @property
    def name(self) -> str:
        return self.record.run

    @property
    def status(self) -> str:
        return self.record.status

    @property
    def cells(self) -> list[str]:
        return list(dict.fromkeys(t.cell for t in self.trials)) or list(self.record.cells)

    @property
    def collectors(self) -> list[str]:
        return list(self.record.collectors)

    @cached_property
    def env(self) -> dict[str, Any] | None:
        """The environment snapshot (env.json), or None when it is missing or unreadable."""
        doc = self._store.read_json(ENV)
        return doc if isinstance(doc, dict) else None

    def results(self, cell: str | None = None, baseline: bool = False,
                passing: bool = False) -> Iterator[TrialResult]:
        """The complete trials' records (of one cell, profiled or baseline ones)."""
        for t in self.trials:
            if t.result is not None and t.baseline == baseline and cell in (None, t.cell) \
                    and (not passing or t.result.verdict == "pass"):
                yield t.result

    def trials_frame(self, allow_partial: bool = False, backend: str = "pandas") -> Any:
        """One row per trial (profiled and baseline, complete or not): identity, state, verdict,
        the harness's figures, each capture's state, one column per numeric metric that is a
        measurement (see `allow_partial`), NaN where none. `backend`: "pandas" or "polars"."""
        return frame(trial_columns(self.name, self.trials, allow_partial), backend)

    def kernels_frame(self, allow_partial: bool = False, backend: str = "pandas") -> Any:
        """One row per trial and kernel of every per-kernel table (`<c>_kernels`, and
        cProfile's functions): run, cell, trial, table, name, mangled, calls, total_ms."""
        return frame(kernel_columns(self.name, self.trials, allow_partial), backend)

    def __repr__(self) -> str:
        done = sum(t.state == "complete" for t in self.trials)
        return f"<aorta run {self.name!r}: {self.status}, {done}/{len(self.trials)} trials>"


def open_run(path: str | PathLike[str]) -> Run:
    """Read a run directory (`<output>/<run>`). Raises `aorta.base.errors.RunDirError` when it is
    not one (no run.json, an unreadable one, or one written by a newer aorta)."""
    return Run(Path(path))


def compare(base: str | PathLike[str], new: str | PathLike[str], *, threshold: float = 0.05,
            alpha: float = 0.05, metrics: Sequence[str] = (), kernels: bool = True,
            match_templates: bool = False, correction: str = "none",
            allow_partial: bool = False) -> Comparison:
    """Compare run NEW against BASE, as `aorta compare` does (either may be `RUN_DIR:CELL`).
    Returns the `Comparison` the command renders: `.cells`, `.rows()` with each row's ratio,
    interval, p-value and verdict (`aorta.comparison.render.json_text` gives the JSON)."""
    from aorta.comparison.build import compare_runs
    from aorta.comparison.load import load_run, parse_ref
    from aorta.comparison.model import CompareSettings

    settings = CompareSettings(threshold=threshold, alpha=alpha, metrics=tuple(metrics),
                               kernels=kernels, match_templates=match_templates,
                               correction=cast("Correction", correction))
    return compare_runs(load_run(parse_ref(str(base)), allow_partial),
                        load_run(parse_ref(str(new)), allow_partial), settings)


# --- the tables as columns (name -> values: `aorta export` needs no pandas) and frames ---

def trial_columns(run: str, trials: Sequence[Trial], allow_partial: bool = False
                  ) -> Columns:
    """One row per trial of run `run`."""
    figures = {id(t): t.result.numeric_metrics(allow_partial) for t in trials if t.result}
    captures = sorted({c for t in trials if t.result for c in t.result.captures})
    metrics = sorted({k for values in figures.values() for k in values} - set(TRIAL_FIELDS))
    cols: Columns = {key: [] for key in (*TRIAL_FIELDS, *(f"capture_{c}" for c in captures),
                                         *metrics)}
    for t in trials:
        r = t.result
        values: dict[str, Any] = {"run": run, "cell": t.cell, "trial": t.name,
                                  "index": t.index, "baseline": t.baseline, "state": t.state,
                                  "reason": t.problem}
        if r is not None:
            values |= {k: getattr(r, k) for k in TRIAL_FIELDS[6:]}
            values |= {f"capture_{c}": cap.state for c, cap in r.captures.items()}
            if r.verdict == "pass":
                values |= figures[id(t)]
            else:   # a failed trial's figures describe something else
                values |= dict.fromkeys(HARNESS_FIGURES)
        for key, column in cols.items():
            value = values.get(key)
            column.append(_NAN if value is None and key in metrics else value)
    return cols


def kernel_columns(run: str, trials: Sequence[Trial], allow_partial: bool = False
                   ) -> Columns:
    """One row per passing trial and row of each of its per-kernel tables."""
    cols: Columns = {name: [] for name in KERNEL_FIELDS}
    for t in trials:
        r = t.result
        if r is None or r.verdict != "pass":
            continue
        for table, rows in r.kernel_rows(allow_partial).items():
            if not rows:
                continue
            names, totals, calls, mangled = zip(*rows)     # a table at a time: 100,000s of rows
            same = (repeat(v, len(rows)) for v in (run, t.cell, t.name, t.index, t.baseline, table))
            for key, values in zip(KERNEL_FIELDS, (*same, names, mangled, calls, totals)):
                cols[key].extend(values)
    return cols


def frame(columns: Columns, backend: str = "pandas") -> Any:
    """The columns as a DataFrame of `backend` ("pandas" or "polars")."""
    if backend not in ("pandas", "polars"):
        raise UserError(f"backend {backend!r}: use 'pandas' or 'polars'")
    try:
        module = importlib.import_module(backend)
    except ImportError:
        other = "backend='polars', or `aorta export` for CSV" if backend == "pandas" \
            else "backend='pandas'"
        raise UserError(f"{backend} is not installed: pip install {backend} (or use "
                        f"{other})") from None
    if backend == "polars":
        return module.DataFrame(columns, strict=False)
    return module.DataFrame(columns)
