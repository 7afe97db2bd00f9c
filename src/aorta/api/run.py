"""Run directories as data, for notebooks, dashboards and scripts (docs/api.md):
`aorta.open_run(path)` gives a `Run` with every trial's typed record and its tables as
DataFrames; `aorta.compare(base, new)` what `aorta compare` prints. Everything is read through
`aorta.store`, with the same validation and the same rule for what counts as `aorta report`.
`API_VERSION` is the records' schema version: this API and the JSON files change together.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aorta.store.layout import ENV, SlotState
from aorta.store.record_checks import TRIAL_SCHEMA
from aorta.store.records import RunRecord, TrialResult
from aorta.store.run_dir import RunStore, Slot

if TYPE_CHECKING:
    from aorta.comparison.model import Comparison
    from aorta.run.sweep import SweepOutcome

API_VERSION = TRIAL_SCHEMA


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

    @classmethod
    def _of(cls, slot: Slot, root: Path) -> Trial:
        return cls(slot.cell, slot.name, slot.index, slot.baseline, slot.state, slot.result,
                   slot.problem, root / slot.dir)


class Run:
    """A run directory, read once when opened (`open_run`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._store = RunStore(path)
        self.record: RunRecord = self._store.read_run("open")
        cells = self.record.cells + [c for c in self._store.cells_on_disk()
                                     if c not in self.record.cells]
        self.trials: list[Trial] = [Trial._of(s, path) for s in self._store.slots(self.record,
                                                                                   cells)]
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
        """One row per trial (profiled and baseline, complete or not): identity, state,
        verdict and the harness's figures, each collector's capture state, and one column per
        numeric metric that is a measurement (see `allow_partial`); NaN where there is none.
        `backend`: "pandas" or "polars"."""
        from aorta.api.frames import frame, trial_columns

        return frame(trial_columns(self.name, self.trials, allow_partial), backend)

    def kernels_frame(self, allow_partial: bool = False, backend: str = "pandas") -> Any:
        """One row per trial and kernel of every per-kernel table (`<c>_kernels`, and
        cProfile's functions): run, cell, trial, table, name, mangled, calls, total_ms."""
        from aorta.api.frames import frame, kernel_columns

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
    from typing import cast

    from aorta.comparison.build import compare_runs
    from aorta.comparison.load import load_run, parse_ref
    from aorta.comparison.model import CompareSettings
    from aorta.stats.family import Correction

    settings = CompareSettings(threshold=threshold, alpha=alpha, metrics=tuple(metrics),
                               kernels=kernels, match_templates=match_templates,
                               correction=cast(Correction, correction))
    return compare_runs(load_run(parse_ref(str(base)), allow_partial),
                        load_run(parse_ref(str(new)), allow_partial), settings)
