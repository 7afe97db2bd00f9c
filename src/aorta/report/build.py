"""Build a `Report` from a run directory's files alone: run.json, env.json, matrix.json,
recipe.resolved.yaml and every trial's result.json. Nothing is re-run or recomputed from
profiler artifacts; a run with failed, errored or missing trials still reports.

Figures come from the trial results with the engine's own rule (`summarize_cell`: statistics
over passing trials only), so a run interrupted before its summaries were written reports too.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from aorta.errors import RunDirError
from aorta.report.header import env_notices, run_header
from aorta.report.model import (CellReport, KernelBar, KernelChart, MetricSummary, Overhead,
                                Point, Report, TrialRef)
from aorta.report.notices import cell_notices, clean_text, failures, run_notices
from aorta.report.numbers import unit_of
from aorta.report.slots import Slot, read_slots, trial_files
from aorta.results import TrialResult, read_json, read_run_record
from aorta.summary import summarize_cell

__all__ = ["build_report", "read_run_doc"]

TOP_BARS = 10
HARNESS = ("wall_s", "cpu_user_s", "cpu_sys_s", "max_rss_mib")


def build_report(run_dir: Path) -> Report:
    """Read `run_dir` into a `Report`. Raises `RunDirError` when it is not a run directory."""
    run = read_run_doc(run_dir)
    env = _optional_json(run_dir / "env.json")
    env = env if isinstance(env, dict) else None
    recipe_text = _optional_text(run_dir / "recipe.resolved.yaml")
    matrix = _optional_json(run_dir / "matrix.json")
    header = run_header(run, env, recipe_text)
    planned = _planned_trials(run, matrix, run_dir)
    baseline = _has_baseline(run, recipe_text)
    cells, failed, warnings = [], [], []
    for name in _cell_names(run, matrix, run_dir):
        slots = read_slots(run_dir, name, planned, baseline)
        cell = _cell_report(run_dir, name, planned, slots, header.collectors)
        cells.append(cell)
        failed += failures(run_dir, slots, header.collectors)
        warnings += cell_notices(run_dir, cell, slots, header.collectors)
    warnings = run_notices(header.status, cells, matrix is not None) + warnings
    warnings += env_notices(env)
    return Report(header=header, cells=cells, metrics=_metric_order(cells), failures=failed,
                  warnings=warnings)


def read_run_doc(run_dir: Path) -> dict[str, Any]:
    """`run.json`, checked enough to know this is an aorta run directory."""
    if not run_dir.is_dir():
        raise RunDirError(f"{run_dir}: no such directory; pass the run directory a sweep "
                          f"printed as 'results:' (<output>/<run>)")
    path = run_dir / "run.json"
    if not path.is_file():
        raise RunDirError(f"{run_dir}: not an aorta run directory (no run.json); pass the "
                          f"directory a sweep printed as 'results:' (<output>/<run>)")
    return read_run_record(path, "report")


def _optional_json(path: Path) -> Any:
    try:
        return read_json(path)
    except (OSError, ValueError):
        return None


def _optional_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _has_baseline(run: Mapping[str, Any], recipe_text: str | None) -> bool:
    """Whether the sweep planned no-collector trials (`baseline: true` in the recipe)."""
    if isinstance(run.get("baseline"), bool):
        return bool(run["baseline"])
    if not recipe_text:
        return False
    import yaml

    try:
        recipe = yaml.safe_load(recipe_text)
    except yaml.YAMLError:
        return False
    return isinstance(recipe, dict) and recipe.get("baseline") is True


def _planned_trials(run: Mapping[str, Any], matrix: Any, run_dir: Path) -> int:
    if isinstance(run.get("trials_per_cell"), int):
        return int(run["trials_per_cell"])
    cells = matrix.get("cells") if isinstance(matrix, dict) else None
    if isinstance(cells, list) and cells and isinstance(cells[0], dict) \
            and isinstance(cells[0].get("trials"), int):
        return int(cells[0]["trials"])
    dirs = [len(list(d.glob("trial_*"))) for d in (run_dir / "cells").glob("*") if d.is_dir()]
    return max(dirs, default=0)


def _cell_names(run: Mapping[str, Any], matrix: Any, run_dir: Path) -> list[str]:
    if isinstance(run.get("cells"), list) and run["cells"]:
        return [str(c) for c in run["cells"]]
    cells = matrix.get("cells") if isinstance(matrix, dict) else None
    if isinstance(cells, list) and cells:
        return [str(c.get("name")) for c in cells if isinstance(c, dict) and c.get("name")]
    return sorted(d.name for d in (run_dir / "cells").glob("*") if d.is_dir())


def _cell_report(run_dir: Path, name: str, planned: int, slots: Sequence[Slot],
                 collectors: list[str]) -> CellReport:
    done = [s.result for s in slots if s.result is not None]
    summary = summarize_cell(name, planned, done, collectors)
    profiled = _passing(slots, baseline=False)
    return CellReport(
        name=name, planned=planned, passed=summary.passed, failed=summary.failed,
        errored=summary.errored, missing=summary.missing, unreliable=summary.unreliable,
        captures=summary.captures, metrics=_summaries(summary.metrics, profiled),
        kernels=_kernel_charts(profiled),
        trials=[TrialRef(cell=name, name=s.name, index=s.index, baseline=s.baseline,
                         verdict=s.result.verdict if s.result else "missing",
                         reason=clean_text(s.result.reason) if s.result
                         else "no readable result.json",
                         wall_s=s.result.wall_s if s.result else None, dir=s.dir + "/",
                         files=trial_files(run_dir, s, collectors)) for s in slots],
        baseline=_summaries(getattr(summary, "baseline", {}), _passing(slots, baseline=True)),
        overhead={key: Overhead(key, o.ratio, o.low, o.high, o.n_profiled, o.n_baseline)
                  for key, o in getattr(summary, "overhead", {}).items()})


def _passing(slots: Sequence[Slot], baseline: bool) -> list[TrialResult]:
    return [s.result for s in slots
            if s.baseline == baseline and s.result is not None and s.result.verdict == "pass"]


def _summaries(stats: Mapping[str, Any], passing: list[TrialResult]) -> dict[str, MetricSummary]:
    out = {}
    for key, s in stats.items():
        points = [Point(r.index, v) for r in passing
                  if (v := r.numeric_metrics().get(key)) is not None]
        out[key] = MetricSummary(key, unit_of(key), s.n, s.median, s.min, s.max, s.mean, s.std,
                                 points)
    return out


def _kernel_tables(result: TrialResult) -> dict[str, dict[str, tuple[float, float | None]]]:
    """Per-kernel tables of one trial: metric -> name -> (total ms, calls or None).

    A table row looks like {"name": "add_kernel", "calls": 10, "total_ms": 0.0227}."""
    tables: dict[str, dict[str, tuple[float, float | None]]] = {}
    for key, value in result.metrics.items():
        if not isinstance(value, list) or not value:
            continue
        rows = [r for r in value if isinstance(r, dict) and isinstance(r.get("name"), str)
                and _number(r.get("total_ms")) is not None]
        if len(rows) != len(value):
            continue
        table: dict[str, tuple[float, float | None]] = {}
        for row in rows:
            ms, calls = _number(row["total_ms"]) or 0.0, _number(row.get("calls"))
            old_ms, old_calls = table.get(row["name"], (0.0, 0.0))
            table[row["name"]] = (old_ms + ms, None if calls is None or old_calls is None
                                  else old_calls + calls)
        tables[key] = table
    return tables


def _kernel_charts(passing: list[TrialResult]) -> list[KernelChart]:
    by_table: dict[str, dict[str, list[tuple[float, float | None]]]] = {}
    for result in passing:
        for key, table in _kernel_tables(result).items():
            for name, entry in table.items():
                by_table.setdefault(key, {}).setdefault(name, []).append(entry)
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
                                      c for c in calls if c is not None),
                                  len(entries)))
        bars.sort(key=lambda b: -b.median_ms)
        charts.append(KernelChart(key, bars[:TOP_BARS], len(bars), len(passing)))
    return charts


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if number == number and abs(number) != float("inf") else None


def _metric_order(cells: list[CellReport]) -> list[str]:
    keys = {k for c in cells for k in c.metrics}
    return sorted(keys, key=lambda k: (k not in HARNESS, HARNESS.index(k) if k in HARNESS else 0,
                                       k))
