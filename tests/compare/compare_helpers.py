"""Run directories for compare tests, written through the same records a sweep writes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from aorta.comparison.kinds import MetricKind
from aorta.comparison.model import CompareSettings
from aorta.comparison.verdict import Judgement, decide, measure
from aorta.store.records import TrialResult, Verdict
from aorta.store.files import write_json


def judge(base: Sequence[float], new: Sequence[float], kind: MetricKind,
          settings: CompareSettings) -> Judgement:
    """Judge one metric on its own, as compare does without --correction."""
    m = measure(base, new, kind, settings)
    return m if isinstance(m, Judgement) else decide(m, settings)


def trial(cell: str, index: int, verdict: Verdict = "pass", wall: float | None = 1.0,
          **metrics: Any) -> TrialResult:
    exit_code = 0 if verdict == "pass" else (1 if verdict == "fail" else None)
    return TrialResult(cell=cell, index=index, verdict=verdict, reason="test",
                       argv=["payload"], command=["payload"], env_overlay={}, env_unset=[],
                       exit_code=exit_code, launched=verdict != "error", wall_s=wall,
                       metrics=metrics)


def kernels(**totals_ms: float) -> list[dict[str, Any]]:
    """A `<c>_kernels` table as KernelTable.metrics publishes it (name, calls, total_ms)."""
    return [{"name": name, "calls": 1, "total_ms": ms} for name, ms in totals_ms.items()]


def make_run(root: Path, name: str, cells: Mapping[str, Sequence[TrialResult]],
             trials_per_cell: int | None = None, **run_fields: Any) -> Path:
    """Write run.json and cells/<cell>/trial_<i>/result.json; returns the run directory."""
    run_dir = root / name
    planned = trials_per_cell or max((len(t) for t in cells.values()), default=0)
    write_json(run_dir / "run.json", {
        "schema_version": 1, "aorta_version": "0.1.0", "run": name, "fingerprint": "f",
        "command": ["payload"], "collectors": ["rocprof"], "cells": list(cells),
        "trials_per_cell": planned, "status": "complete", **run_fields})
    for cell, results in cells.items():
        for result in results:
            write_json(run_dir / "cells" / cell / f"trial_{result.index}" / "result.json",
                       result.to_json())
    return run_dir


def timed_cell(cell: str, walls: Sequence[float], **per_trial: Sequence[Any]) -> list[TrialResult]:
    """Passing trials with the given wall times and, per metric name, one value per trial."""
    return [trial(cell, i, wall=w, **{k: v[i] for k, v in per_trial.items()})
            for i, w in enumerate(walls)]
