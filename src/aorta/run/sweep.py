"""The sweep loop: preflight, the run directory (lock, resume, provenance), every trial, and the
summaries, which are written whatever happens, Ctrl-C included.

    <output>/<run>/run.json  recipe.resolved.yaml  env.json  matrix.json  perf.md
                   cells/<cell>/trial_<i>/result.json ...
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from aorta import __version__
from aorta.errors import RunDirError, SetupError
from aorta.plan import Plan
from aorta.results import (RUN_SCHEMA, TrialResult, atomic_write_text, read_run_record,
                           read_trial, write_json)
from aorta.run.lock import RunLock
from aorta.run.progress import Progress
from aorta.run.executors import Executor, SerialExecutor
from aorta.run.trial import TrialSpec
from aorta.summary import CellSummary, matrix_document, perf_markdown, summarize_cell

__all__ = ["SweepOutcome", "run_sweep", "preflight", "trial_specs", "RUN_SCHEMA"]



@dataclass(frozen=True)
class SweepOutcome:
    run_dir: Path
    cells: list[CellSummary]
    status: str                  # complete | interrupted
    ran: int                     # trials run now (not resumed)

    @property
    def all_passed(self) -> bool:
        return all(c.passed == c.trials for c in self.cells)


def preflight(plan: Plan) -> None:
    """Refuse a sweep whose collectors cannot measure on this machine, before any trial."""
    from aorta.collectors.registry import get

    for name in plan.collectors:
        cap = get(name).probe()
        if not cap.usable:
            fix = f"; {cap.fix}" if cap.fix else ""
            raise SetupError(f"collector {name} cannot measure on this machine: {cap.reason}{fix}")


def trial_specs(plan: Plan, run_dir: Path) -> list[TrialSpec]:
    """Every trial in run order. With `baseline`, each profiled trial is followed by one with
    no collector, so drift over the run affects both alike."""
    specs = []
    for cell, index in plan.trial_ids():
        spec = TrialSpec(
            cell=cell.name, index=index, trial_dir=run_dir / "cells" / cell.name / f"trial_{index}",
            command=plan.command + cell.args, env={**plan.recipe.env, **cell.env},
            collectors=plan.collectors, env_mode=plan.recipe.env_passthrough_mode,
            timeout=plan.recipe.timeout_per_trial, grace=plan.recipe.kill_grace_s)
        specs.append(spec)
        if plan.recipe.baseline:
            specs.append(replace(spec, trial_dir=spec.trial_dir.with_name(f"baseline_{index}"),
                                 collectors={}, baseline=True))
    return specs


def run_sweep(plan: Plan, output: Path, caller_env: Mapping[str, str], progress: Progress,
              fresh: bool = False, executor: Executor | None = None) -> SweepOutcome:
    """Run every trial of `plan` that has no complete result yet under `output`/<run>."""
    import yaml

    from aorta.envsnap import snapshot

    run_dir = output / plan.run_name
    run_dir.mkdir(parents=True, exist_ok=True)
    with RunLock(run_dir):
        run_doc = _claim_run_dir(plan, run_dir, fresh)
        atomic_write_text(run_dir / "recipe.resolved.yaml",
                          yaml.safe_dump(plan.resolved_recipe(), sort_keys=False))
        if not (run_dir / "env.json").exists():
            write_json(run_dir / "env.json", snapshot(caller_env))
        specs = trial_specs(plan, run_dir)
        todo = [s for s in specs if read_trial(s.trial_dir / "result.json") is None]
        progress.start(len(specs), len(specs) - len(todo))
        status, ran = "interrupted", 0

        def done(result: TrialResult) -> None:
            nonlocal ran
            ran += 1
            progress.trial_done(result)

        executor = executor or SerialExecutor()
        attach = getattr(executor, "attach", None)
        if attach is not None:   # executors that keep state in run.json (Slurm job ids)
            attach(run_dir, run_doc, lambda: write_json(run_dir / "run.json", run_doc))
        try:
            executor.run(todo, caller_env, lambda s: progress.trial_started(s.cell, s.index),
                         done)
            status = "complete"
        finally:
            progress.close()
            cells = _write_summaries(plan, run_dir, specs, run_doc, status)
    return SweepOutcome(run_dir, cells, status, ran)


def _claim_run_dir(plan: Plan, run_dir: Path, fresh: bool) -> dict[str, Any]:
    """Check the directory holds this run (or nothing), then write `run.json` as running."""
    fingerprint = plan.fingerprint()
    previous = _read_run(run_dir)
    slurm = (previous or {}).get("slurm")   # job ids: live jobs re-attach, --fresh cancels them
    if fresh:
        for name in ("cells", "matrix.json", "perf.md", "env.json", "run.json"):
            target = run_dir / name
            if target.is_dir():
                shutil.rmtree(target)
            else:
                target.unlink(missing_ok=True)
        previous = None
    elif previous is not None and previous.get("fingerprint") != fingerprint:
        raise RunDirError(
            f"{run_dir}: holds a run of a different recipe or command (recipe "
            f"{previous.get('recipe')}, command {' '.join(previous.get('command') or [])!r}); "
            f"pass --fresh to replace it, or choose another --output or ticket")
    elif previous is None and (run_dir / "cells").exists():
        raise RunDirError(f"{run_dir}: has trial results but no run.json, so aorta cannot tell "
                          f"what produced them; pass --fresh to replace them or use another "
                          f"--output")
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    doc = {
        "schema_version": RUN_SCHEMA, "aorta_version": __version__, "run": plan.run_name,
        "fingerprint": fingerprint,
        "recipe": str(plan.source) if plan.source else None, "recipe_sha256": plan.source_sha256,
        "command": list(plan.command), "collectors": list(plan.collectors),
        "cells": [c.name for c in plan.cells], "trials_per_cell": plan.trials,
        "created_at": (previous or {}).get("created_at", now), "started_at": now,
        "finished_at": None, "status": "running",
        "history": (previous or {}).get("history", []) + [{"started_at": now}],
    }
    if isinstance(slurm, dict):
        doc["slurm"] = {**slurm, "discarded": fresh}
    write_json(run_dir / "run.json", doc)
    return doc


def _read_run(run_dir: Path) -> dict[str, Any] | None:
    path = run_dir / "run.json"
    if not path.exists():
        return None
    return read_run_record(path, "resume", "pass --fresh to start the run over")


def _write_summaries(plan: Plan, run_dir: Path, specs: list[TrialSpec],
                     run_doc: dict[str, Any], status: str) -> list[CellSummary]:
    by_cell: dict[str, list[TrialResult]] = {c.name: [] for c in plan.cells}
    for spec in specs:
        result = read_trial(spec.trial_dir / "result.json")
        if result is not None:
            by_cell[spec.cell].append(result)
    cells = [summarize_cell(c.name, plan.trials, by_cell[c.name], list(plan.collectors))
             for c in plan.cells]
    run_doc.update(status=status,
                   finished_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    run_doc["history"][-1].update(finished_at=run_doc["finished_at"], status=status)
    write_json(run_dir / "run.json", run_doc)
    write_json(run_dir / "matrix.json", matrix_document(run_doc, cells))
    atomic_write_text(run_dir / "perf.md", perf_markdown(f"aorta run {plan.run_name}", run_doc,
                                                         cells))
    return cells
