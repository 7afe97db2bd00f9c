"""Reading a run directory into what the history records: the only module of `aorta.history`
that reads runs (through `aorta.store`). Only passing, non-baseline trials give numbers, and a
collector's figures only when its capture is `ok`: a partial capture would read as a speed-up."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any

from aorta.base.errors import UserError
from aorta.report.header import env_gpus
from aorta.store.layout import ENV, RECIPE
from aorta.store.records import RunRecord
from aorta.store.run_dir import RunStore, Slot


@dataclass(frozen=True)
class CellData:
    """One cell of a run: its passing trials' numbers, one row per trial and metric: `samples`
    (metric, trial, value) and `kernels` (table, kernel, trial, total_ms, calls)."""

    name: str
    passed: int
    total: int
    samples: tuple[tuple[str, int, float], ...]
    kernels: tuple[tuple[str, str, int, float, int | None], ...]


@dataclass(frozen=True)
class RunSnapshot:
    path: Path
    run: RunRecord
    created_at: str                 # run.json's created_at, else its started_at
    collect: Mapping[str, Any]      # collector -> resolved options (recipe.resolved.yaml)
    host: str
    gpu: str
    cells: tuple[CellData, ...]
    cwd: Path | None
    recipe_path: Path | None        # as run.json recorded it, a relative one taken from `cwd`


def read_run(run_dir: Path) -> RunSnapshot:
    """Read `run_dir`. Raises UserError when it is not a run directory."""
    store = RunStore(run_dir)
    run = store.read_run("record")
    env = store.read_json(ENV)
    env = env if isinstance(env, dict) else {}
    by_cell: dict[str, list[Slot]] = {name: [] for name in run.cells}
    for slot in store.slots(run):
        if not slot.baseline:
            by_cell[slot.cell].append(slot)
    created = run.created_at or run.started_at
    if created is None:
        raise UserError(f"{run_dir / 'run.json'}: no created_at time; cannot place the run in "
                        f"a history")
    host: dict[str, Any] = env["host"] if isinstance(env.get("host"), dict) else {}
    cwd = Path(run.cwd) if run.cwd else None
    return RunSnapshot(
        path=run_dir.resolve(), run=run, created_at=created, collect=_collect(store, run),
        host=str(host.get("hostname") or "unknown"), gpu=gpu_text(env),
        cells=tuple(_cell(name, slots) for name, slots in by_cell.items()), cwd=cwd,
        recipe_path=(cwd or Path()) / run.recipe if run.recipe else None)


def gpu_text(env: Mapping[str, Any]) -> str:
    """The GPUs env.json saw, as one key: `NVIDIA H200`, `8x AMD Instinct MI300X`, `none`."""
    if not env:
        return "unknown"
    counts = Counter(g.name for g in env_gpus(env)[0])
    return " + ".join(n if c == 1 else f"{c}x {n}" for n, c in counts.items()) or "none"


def _collect(store: RunStore, run: RunRecord) -> dict[str, Any]:
    """Each collector's resolved options; a collector without a readable block gets None."""
    from aorta.recipe.schema import load_recipe

    path = store.path(RECIPE)
    try:
        collect = load_recipe(path).recipe.collect if path.is_file() else {}
    except UserError:
        collect = {}
    return {name: collect.get(name) for name in run.collectors}


def _cell(name: str, slots: Sequence[Slot]) -> CellData:
    passing = [s.result for s in slots if s.result is not None and s.result.verdict == "pass"]
    metrics: dict[str, list[tuple[str, int, float]]] = {}     # rows by metric, trials in order
    kernels: dict[tuple[str, str], list[tuple[str, str, int, float, int | None]]] = {}
    for trial in passing:
        for key, value in trial.numeric_metrics().items():
            metrics.setdefault(key, []).append((key, trial.index, value))
        for table, entries in trial.kernel_tables().items():
            for kernel, entry in entries.items():
                kernels.setdefault((table, kernel), []).append(
                    (table, kernel, trial.index, entry.total_ms, entry.calls))
    return CellData(name, len(passing), len(slots), tuple(chain(*metrics.values())),
                    tuple(chain(*kernels.values())))
