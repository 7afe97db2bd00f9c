"""Run directories for report tests, written with the engine's own records and writers."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from aorta.store.records import TrialResult
from aorta.store.files import write_json
from aorta.store.run_dir import RunStore
from aorta.run.summary import summarize_cell
from report_helpers import ENV, FIXTURES

MakeRun = Callable[..., Path]


@pytest.fixture
def make_run(tmp_path: Path) -> MakeRun:
    """Write a run directory: `trials` maps cell -> list of TrialResult or None (None: the trial
    never finished, so it has no directory, as after Ctrl-C)."""

    def make(trials: dict[str, list[TrialResult | None]], status: str = "complete",
             collectors: tuple[str, ...] = ("nsys",), env: dict[str, Any] | None = ENV,
             planned: int | None = None, matrix: bool = True, name: str = "run",
             baseline: dict[str, list[TrialResult]] | None = None) -> Path:
        run_dir = tmp_path / name
        planned = planned or max(len(v) for v in trials.values())
        run_doc = {"schema_version": 1, "aorta_version": "0.1.0", "run": name,
                   "fingerprint": "f" * 64, "recipe": "recipe.yaml", "recipe_sha256": "a" * 64,
                   "command": ["python3", "bench.py", "--size", "512"],
                   "collectors": list(collectors), "cells": list(trials),
                   "trials_per_cell": planned, "created_at": "2026-01-05T10:00:00+00:00",
                   "started_at": "2026-01-05T10:00:00+00:00",
                   "finished_at": "2026-01-05T10:05:00+00:00", "status": status,
                   "history": [{"started_at": "2026-01-05T10:00:00+00:00"}]}
        write_json(run_dir / "run.json", run_doc)
        (run_dir / "recipe.resolved.yaml").write_text(
            f"schema_version: 1\ntrials: {planned}\nbaseline: {str(bool(baseline)).lower()}\n")
        if env is not None:
            write_json(run_dir / "env.json", env)
        for cell, results in {**trials, **{f"{c}~b": r for c, r in (baseline or {}).items()}}.items():
            prefix = "baseline" if cell.endswith("~b") else "trial"
            for result in results:
                if result is not None:
                    trial_dir = run_dir / "cells" / cell.removesuffix("~b") / \
                        f"{prefix}_{result.index}"
                    write_json(trial_dir / "result.json", result.to_json())
                    (trial_dir / "stderr.log").write_text(result.stderr_tail or "")
                    (trial_dir / "stdout.log").write_text("out\n")
                    for c in collectors:
                        (trial_dir / c).mkdir(exist_ok=True)
        if matrix:
            cells = [summarize_cell(c, planned, _results(run_dir, c, planned), list(collectors))
                     for c in trials]
            write_json(run_dir / "matrix.json", {   # the layout matrix.json has (schema 1)
                "schema_version": 1, "run": run_doc,
                "cells": [dict(asdict(c), unreliable=c.unreliable) for c in cells]})
        return run_dir

    return make


def _results(run_dir: Path, cell: str, planned: int) -> list[TrialResult]:
    found = []
    for prefix in ("trial", "baseline"):
        for i in range(planned):
            result = RunStore(run_dir).read_slot(cell, f"{prefix}_{i}").result
            if result is not None:
                found.append(result)
    return found


@pytest.fixture
def real_run(tmp_path: Path) -> Path:
    """A copy of the real H200 run (tests may write report.html into it)."""
    target = tmp_path / "h200-proton-softmax"
    shutil.copytree(FIXTURES / "h200-proton-softmax", target)
    # The failed trials' proton dirs were empty (the payload died before Proton wrote);
    # git keeps no empty directory, so they are made here as the run left them.
    for trial in range(3):
        (target / "cells" / "bad" / f"trial_{trial}" / "proton").mkdir(exist_ok=True)
    return target
