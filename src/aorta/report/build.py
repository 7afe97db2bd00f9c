"""Build a `Report` from a run directory's files alone (docs/report.md). Figures come from the
trial results by the engine's own rule (`summarize_cell`), so a run interrupted before its
summaries were written reports too.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from aorta.rendering import unit_of
from aorta.report.header import env_notices, run_header
from aorta.report.model import (CellReport, KernelBar, KernelChart, MetricSummary, Notice, Overhead,
                                Point, Report, TrialRef)
from aorta.report.notices import cell_notices, clean_text, failures, run_notices
from aorta.run.stop_after import skipped_by_cell, stop_note
from aorta.run.summary import summarize_cell
from aorta.store.layout import ENV, MATRIX, RECIPE
from aorta.store.record_checks import HARNESS_FIGURES
from aorta.store.records import TrialResult
from aorta.store.run_dir import RunStore, Slot

TOP_BARS = 10


def build_report(run_dir: Path, allow_partial: bool = False) -> Report:
    """Read `run_dir` into a `Report`; `partial` captures count only with `allow_partial`.
    Raises `RunDirError` when it is not a run directory."""
    store = RunStore(run_dir)
    run = store.read_run("report")
    env = store.read_json(ENV)
    env = env if isinstance(env, dict) else None
    header = run_header(run, env, store.read_text(RECIPE))
    collectors = header.collectors
    skipped = skipped_by_cell(run.stop_after)
    cells, failed, warnings = [], [], []
    # A cell at a time: what the report keeps of each is its figures, not its records.
    for name in run.cells + [c for c in store.cells_on_disk() if c not in run.cells]:
        slots = store.slots(run, [name])
        if not slots:
            continue
        # Trials that stop_after skipped were never meant to run: not missing, not planned.
        slots = [s for s in slots if s.result is not None or s.index not in skipped.get(name, ())]
        cell = _cell_report(store, name, run.trials_per_cell - len(skipped.get(name, ())),
                            slots, collectors, allow_partial)
        cells.append(cell)
        stopped = stop_note(run.stop_after, name)
        if stopped:
            warnings.append(Notice("run", stopped, name))
        failed += failures(store, slots, collectors)
        warnings += cell_notices(cell, slots, collectors)
    warnings = run_notices(header.status, cells, isinstance(store.read_json(MATRIX), dict)) \
        + warnings + env_notices(env)
    return Report(header=header, cells=cells, metrics=_metric_order(cells), failures=failed,
                  warnings=warnings)


def _cell_report(store: RunStore, name: str, planned: int, slots: Sequence[Slot],
                 collectors: list[str], allow_partial: bool) -> CellReport:
    done = [s.result for s in slots if s.result is not None]
    summary = summarize_cell(name, planned, done, collectors, allow_partial)
    profiled = _passing(slots, baseline=False)
    return CellReport(
        name=name, planned=planned, passed=summary.passed, failed=summary.failed,
        errored=summary.errored, missing=summary.missing, unreliable=summary.unreliable,
        captures=summary.captures, metrics=_summaries(summary.metrics, profiled, allow_partial),
        kernels=_kernel_charts(profiled, allow_partial),
        trials=[_trial_ref(store, s, collectors) for s in slots],
        baseline=_summaries(summary.baseline, _passing(slots, baseline=True), allow_partial),
        overhead={key: Overhead(key, o.ratio, o.low, o.high, o.n_profiled, o.n_baseline)
                  for key, o in summary.overhead.items()})


def _trial_ref(store: RunStore, slot: Slot, collectors: list[str]) -> TrialRef:
    result = slot.result
    verdict: str
    if result is not None:
        verdict, reason = result.verdict, clean_text(result.reason)
    else:
        verdict = "corrupt" if slot.state in ("corrupt", "newer") else "missing"
        reason = f"result.json: {slot.problem}" if slot.problem else "not run yet"
    return TrialRef(cell=slot.cell, name=slot.name, index=slot.index, baseline=slot.baseline,
                    verdict=verdict, reason=reason, wall_s=result.wall_s if result else None,
                    dir=slot.dir + "/", files=store.trial_files(slot, collectors))


def _passing(slots: Sequence[Slot], baseline: bool) -> list[TrialResult]:
    return [s.result for s in slots
            if s.baseline == baseline and s.result is not None and s.result.verdict == "pass"]


def _summaries(stats: Mapping[str, Any], passing: list[TrialResult],
               allow_partial: bool) -> dict[str, MetricSummary]:
    figures = [(r.index, r.numeric_metrics(allow_partial)) for r in passing]
    return {key: MetricSummary(key, unit_of(key), s.n, s.median, s.min, s.max, s.mean, s.std,
                               [Point(index, v) for index, values in figures
                                if (v := values.get(key)) is not None])
            for key, s in stats.items()}


def _kernel_charts(passing: list[TrialResult], allow_partial: bool) -> list[KernelChart]:
    by_table: dict[str, dict[str, list[tuple[float, float | None]]]] = {}
    for result in passing:
        for key, table in result.kernel_tables(allow_partial).items():
            for name, entry in table.items():
                by_table.setdefault(key, {}).setdefault(name, []).append(
                    (entry.total_ms, entry.calls))
    charts = []
    for key in sorted(by_table):
        bars = []
        for name, entries in by_table[key].items():
            # A trial whose table does not list the kernel ran it for 0 ms (full tables) or
            # for less than the table's last row (truncated ones): 0 is the honest median.
            everything = entries + [(0.0, 0.0)] * (len(passing) - len(entries))
            calls = [c for _, c in everything]
            bars.append(KernelBar(name, statistics.median(ms for ms, _ in everything),
                                  None if None in calls else statistics.median(
                                      c for c in calls if c is not None), len(entries)))
        bars.sort(key=lambda b: -b.median_ms)
        charts.append(KernelChart(key, bars[:TOP_BARS], len(bars), len(passing)))
    return charts


def _metric_order(cells: list[CellReport]) -> list[str]:
    keys = {k for c in cells for k in c.metrics}
    return [k for k in HARNESS_FIGURES if k in keys] + sorted(keys - set(HARNESS_FIGURES))
