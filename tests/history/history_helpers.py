"""Run directories and databases for history tests, written with the engine's own records."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from aorta.store.records import Capture, TrialResult
from aorta.store.files import write_json

# The role and password scripts/postgres-local.sh creates; override with AORTA_TEST_POSTGRES_URL.
POSTGRES_URL = os.environ.get("AORTA_TEST_POSTGRES_URL",
                              "postgresql://aorta:aorta-test-secret@127.0.0.1:5432/aorta_test")
PG_PASSWORD = "aorta-test-secret"

ENV = {"schema_version": 1, "host": {"hostname": "bench-1"},
       "nvidia": [{"index": "0", "name": "NVIDIA H200"}], "amd": None}


def trial(cell: str, index: int, wall_s: float, verdict: str = "pass",
          metrics: Mapping[str, Any] | None = None) -> TrialResult:
    """A `<c>_capture` entry of `metrics` becomes the trial's typed capture, as the engine
    records it."""
    exit_code = 0 if verdict == "pass" else 1
    figures = {k: v for k, v in (metrics or {}).items() if not k.endswith("_capture")}
    captures = {k[:-len("_capture")]: Capture(v) for k, v in (metrics or {}).items()
                if k.endswith("_capture")}
    return TrialResult(cell=cell, index=index, verdict=verdict,  # type: ignore[arg-type]
                       reason=f"exit code {exit_code}", argv=["python3", "bench.py"],
                       command=["python3", "bench.py"], env_overlay={}, env_unset=[],
                       exit_code=exit_code, launched=True, wall_s=wall_s, cpu_user_s=wall_s,
                       cpu_sys_s=0.01, max_rss_mib=100.0, metrics=figures, captures=captures)


def write_run(root: Path, name: str, created_at: str,
              cells: Mapping[str, Sequence[TrialResult]], *, collectors: Sequence[str] = (),
              command: Sequence[str] = ("python3", "bench.py"), env: Mapping[str, Any] = ENV,
              cwd: Path | None = None, recipe: str | None = "recipe.yaml",
              collect_yaml: str = "", status: str = "complete") -> Path:
    """A run directory as a sweep leaves it (run.json, env.json, recipe.resolved.yaml,
    cells/<cell>/trial_<i>/result.json)."""
    run_dir = root / name
    write_json(run_dir / "run.json", {
        "schema_version": 2, "aorta_version": "0.1.0", "run": name, "fingerprint": name,
        "cwd": str(cwd) if cwd is not None else None,
        "recipe": recipe, "recipe_sha256": "a" * 64, "command": list(command),
        "collectors": list(collectors), "cells": list(cells), "trials_per_cell": 3,
        "created_at": created_at, "started_at": created_at, "finished_at": created_at,
        "status": status, "history": []})
    write_json(run_dir / "env.json", dict(env))
    (run_dir / "recipe.resolved.yaml").write_text(
        f"schema_version: 1\nmode: probe\n{collect_yaml}")
    for results in cells.values():
        for result in results:
            trial_dir = run_dir / "cells" / result.cell / f"trial_{result.index}"
            write_json(trial_dir / "result.json", result.to_json())
    return run_dir


def series_runs(root: Path, levels: Sequence[float], trials: int = 3, cell: str = "c1",
                jitter: float = 0.01, first: int = 0, **kwargs: Any) -> list[Path]:
    """One run per level (wall_s around that level), an hour apart; `first` numbers the first."""
    runs = []
    for position, level in enumerate(levels, start=first):
        results = [trial(cell, i, level * (1 + jitter * ((i + position) % 3 - 1)))
                   for i in range(trials)]
        runs.append(write_run(root, f"run{position:03d}",
                              f"2026-01-{1 + position // 24:02d}T{position % 24:02d}:00:00+00:00",
                              {cell: results}, **kwargs))
    return runs
