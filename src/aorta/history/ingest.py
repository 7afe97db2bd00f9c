"""Reading a run directory into what the history records. The only module of `aorta.history`
that knows the run directory's files; when the run-directory store lands, only this changes.

Only passing trials give numbers (a failed trial measured something else), baseline trials
(no collector) are left out, and a collector's figures count only when its capture is `ok`:
with `<c>_capture` anything else (or absent), every `<c>_...` number and table of that trial
is dropped, since a partial capture would read as a speed-up.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aorta.errors import UserError
from aorta.results import TrialResult, read_json, read_run_record, read_trial

__all__ = ["KernelRow", "CellData", "RunSnapshot", "read_run", "kernel_tables", "gpu_text"]


@dataclass(frozen=True)
class KernelRow:
    trial: int
    total_ms: float
    calls: int | None


@dataclass(frozen=True)
class CellData:
    """One cell of a run: passing trials' numbers, one (trial, value) per trial."""

    name: str
    passed: int
    total: int
    metrics: Mapping[str, tuple[tuple[int, float], ...]]
    kernels: Mapping[tuple[str, str], tuple[KernelRow, ...]]   # (table, kernel) -> rows


@dataclass(frozen=True)
class RunSnapshot:
    """What a run directory says about itself, as the history needs it."""

    path: Path
    name: str
    fingerprint: str
    recipe: str | None              # the recipe file as run.json recorded it
    recipe_sha256: str | None
    command: tuple[str, ...]
    collectors: tuple[str, ...]
    collect: Mapping[str, Any]      # collector -> resolved options (recipe.resolved.yaml)
    created_at: str
    finished_at: str | None
    status: str
    aorta_version: str | None
    host: str
    gpu: str
    cwd: Path | None                # where the sweep ran (trials' rerun.sh `cd` line)
    cells: tuple[CellData, ...]


def read_run(run_dir: Path) -> RunSnapshot:
    """Read `run_dir`. Raises UserError when it is not a run directory."""
    run_json = run_dir / "run.json"
    if not run_json.is_file():
        raise UserError(f"{run_dir}: not a run directory (no run.json)")
    doc = read_run_record(run_json, "record")
    env = _env(run_dir)
    collectors = tuple(str(c) for c in doc.get("collectors") or [])
    names = [c for c in doc.get("cells") or [] if isinstance(c, str)]
    cells = tuple(_cell(run_dir / "cells" / n, n, collectors) for n in names)
    created = doc.get("created_at") or doc.get("started_at")
    if not isinstance(created, str):
        raise UserError(f"{run_json}: no created_at time; cannot place the run in a history")
    host: dict[str, Any] = env["host"] if isinstance(env.get("host"), dict) else {}
    return RunSnapshot(
        path=run_dir.resolve(), name=str(doc.get("run") or run_dir.name),
        fingerprint=str(doc.get("fingerprint") or ""),
        recipe=doc.get("recipe") if isinstance(doc.get("recipe"), str) else None,
        recipe_sha256=doc.get("recipe_sha256") if isinstance(doc.get("recipe_sha256"), str)
        else None,
        command=tuple(str(a) for a in doc.get("command") or []), collectors=collectors,
        collect=_collect(run_dir, collectors), created_at=created,
        finished_at=doc.get("finished_at") if isinstance(doc.get("finished_at"), str) else None,
        status=str(doc.get("status") or "unknown"),
        aorta_version=str(doc["aorta_version"]) if doc.get("aorta_version") else None,
        host=str(host.get("hostname") or "unknown"), gpu=gpu_text(doc, env),
        cwd=_cwd(doc, run_dir, names), cells=cells)


def _env(run_dir: Path) -> dict[str, Any]:
    try:
        env = read_json(run_dir / "env.json")
    except (OSError, ValueError):
        return {}
    return env if isinstance(env, dict) else {}


def gpu_text(run_doc: Mapping[str, Any], env: Mapping[str, Any]) -> str:
    """The GPUs env.json saw, as one key: `NVIDIA H200`, `8x AMD Instinct MI300X`, `none`."""
    from aorta.report.header import run_header

    if not env:
        return "unknown"
    names = [g.name for g in run_header(run_doc, env, None).gpus]
    if not names:
        return "none"
    counts = {n: names.count(n) for n in dict.fromkeys(names)}
    return " + ".join(n if c == 1 else f"{c}x {n}" for n, c in counts.items())


def _collect(run_dir: Path, collectors: Sequence[str]) -> dict[str, Any]:
    """Each collector's resolved options; a collector without a readable block gets None."""
    from aorta.recipe import load_recipe

    path = run_dir / "recipe.resolved.yaml"
    try:
        collect = load_recipe(path).recipe.collect if path.is_file() else {}
    except UserError:
        collect = {}
    return {name: collect.get(name) for name in collectors}


def _cwd(doc: Mapping[str, Any], run_dir: Path, cells: Sequence[str]) -> Path | None:
    """run.json's `cwd` when it has one, else the `cd DIR || exit 1` line aorta writes at the
    top of every trial's rerun.sh."""
    if isinstance(doc.get("cwd"), str):
        return Path(doc["cwd"])
    for cell in cells:
        for rerun in sorted((run_dir / "cells" / cell).glob("trial_*/rerun.sh")):
            try:
                lines = rerun.read_text(encoding="utf-8").splitlines()[:5]
            except OSError:
                continue
            for line in lines:
                if line.startswith("cd "):
                    words = shlex.split(line)
                    if len(words) >= 2:
                        return Path(words[1])
    return None


def _cell(cell_dir: Path, name: str, collectors: Sequence[str]) -> CellData:
    trials = [t for t in (read_trial(p / "result.json") for p in _trial_dirs(cell_dir))
              if t is not None and not t.baseline]
    metrics: dict[str, list[tuple[int, float]]] = {}
    kernels: dict[tuple[str, str], list[KernelRow]] = {}
    passing = [t for t in trials if t.verdict == "pass"]
    for trial in passing:
        dropped = tuple(f"{c}_" for c in collectors if trial.metrics.get(f"{c}_capture") != "ok")
        for key, value in trial.numeric_metrics().items():
            if not key.startswith(dropped):   # startswith(()) is False
                metrics.setdefault(key, []).append((trial.index, value))
        for (table, kernel), row in kernel_tables(trial).items():
            if not table.startswith(dropped):
                kernels.setdefault((table, kernel), []).append(row)
    return CellData(name, len(passing), len(trials),
                    {k: tuple(v) for k, v in metrics.items()},
                    {k: tuple(v) for k, v in kernels.items()})


def _trial_dirs(cell_dir: Path) -> list[Path]:
    def index(p: Path) -> int:
        suffix = p.name.removeprefix("trial_")
        return int(suffix) if suffix.isdigit() else -1

    return sorted((p for p in cell_dir.glob("trial_*") if p.is_dir()), key=index)


def kernel_tables(trial: TrialResult) -> dict[tuple[str, str], KernelRow]:
    """Every per-kernel row of a trial: any metric holding rows like
    `{"name": "softmax_kernel", "calls": 21, "total_ms": 0.125}`. A repeated name is summed;
    a row without a name or a finite, non-negative total is skipped."""
    out: dict[tuple[str, str], KernelRow] = {}
    for key, value in trial.metrics.items():
        if not isinstance(value, list) or not value or \
                not all(isinstance(r, dict) and "name" in r and "total_ms" in r for r in value):
            continue
        for row in value:
            name, total, calls = row.get("name"), row.get("total_ms"), row.get("calls")
            if not isinstance(name, str) or not name or not _duration(total):
                continue
            calls = calls if isinstance(calls, int) and not isinstance(calls, bool) else None
            previous = out.get((key, name))
            if previous is not None:
                total = previous.total_ms + total
                calls = None if previous.calls is None or calls is None else previous.calls + calls
            out[(key, name)] = KernelRow(trial.index, float(total), calls)
    return out


def _duration(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value >= 0)
