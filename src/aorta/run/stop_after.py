"""`stop_after`: stop a cell early once `events` of its trials ended with `event_verdict`, or
`max_trials` ran (docs/sweep.md); such a cell runs its trials one at a time, in index order.
Whether a cell stopped depends on its results alone (`cell_stop`), so a resume decides alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from aorta.store.records import TrialResult

if TYPE_CHECKING:
    from aorta.recipe.schema import StopAfter
    from aorta.run.trial import TrialSpec

RunBatch = Callable[[list["TrialSpec"], Callable[[TrialResult], None]], None]


@dataclass(frozen=True)
class CellStop:
    """Where one cell stands: trials with a result in the index prefix, how many of them
    ended with the event verdict, whether the cell stopped, and which trials it skipped."""

    trials_run: int
    events: int
    stopped: bool
    skipped: list[int] = field(default_factory=list)


def cell_stop(rule: StopAfter, results: Mapping[int, TrialResult]) -> CellStop:
    """The cell's state from its profiled trials' results (index -> result)."""
    events = ran = 0
    for index in range(rule.max_trials):
        if events >= rule.events:
            skipped = [i for i in range(index, rule.max_trials) if i not in results]
            return CellStop(ran, events, True, skipped)
        result = results.get(index)
        if result is None:
            return CellStop(ran, events, False)
        ran += 1
        events += result.verdict == rule.event_verdict
    return CellStop(ran, events, events >= rule.events)


def run_with_stop_after(rule: StopAfter, specs: Sequence[TrialSpec],
                        done: Mapping[str, TrialResult], run_batch: RunBatch
                        ) -> dict[str, CellStop]:
    """Run `specs` (every planned trial, in plan order) under `rule`, skipping those with a
    result in `done` (key -> result). `run_batch(batch, record)` runs the next trial (with its
    baseline) of every cell not stopped, calling `record` per result. Returns each cell's state."""
    results = dict(done)
    groups: dict[str, dict[int, list[TrialSpec]]] = {}
    for spec in specs:
        groups.setdefault(spec.cell, {}).setdefault(spec.index, []).append(spec)
    # Each cell's profiled results by index, kept up to date as results come in (rescanning
    # every result each round made long sweeps quadratic), and the first index not yet sent.
    profiled: dict[str, dict[int, TrialResult]] = {cell: {} for cell in groups}
    for key, result in done.items():
        _file_profiled(profiled, key, result)
    sent_upto = dict.fromkeys(groups, 0)
    tried: set[str] = set()

    def record(result: TrialResult) -> None:
        key = f"cells/{result.cell}/{result.name}"
        results[key] = result
        _file_profiled(profiled, key, result)

    while True:
        batch = []
        for cell, by_index in groups.items():
            state = cell_stop(rule, profiled[cell])
            # The next trial of a running cell, and any baseline trial left behind earlier.
            upto = state.trials_run if state.stopped else state.trials_run + 1
            for index in range(sent_upto[cell], upto):
                batch += [s for s in by_index.get(index, [])
                          if s.key not in results and s.key not in tried]
            sent_upto[cell] = max(sent_upto[cell], upto)
        if not batch:
            break
        tried.update(s.key for s in batch)
        run_batch(batch, record)
    return {cell: cell_stop(rule, profiled[cell]) for cell in groups}


def _file_profiled(profiled: dict[str, dict[int, TrialResult]], key: str,
                   result: TrialResult) -> None:
    """File `result` under its cell when `key` (cells/CELL/NAME) names a profiled trial_N."""
    top, cell, name = (key.split("/", 2) + ["", ""])[:3]
    if top == "cells" and name.startswith("trial_") and cell in profiled:
        profiled[cell][result.index] = result


def skipped_by_cell(block: Any) -> dict[str, set[int]]:
    """Cell -> indices of trials that run.json's `stop_after` block says were skipped."""
    cells = block.get("cells") if isinstance(block, dict) else None
    if not isinstance(cells, dict):
        return {}
    out = {}
    for cell, state in cells.items():
        skipped = state.get("skipped") if isinstance(state, dict) else None
        if isinstance(skipped, list):
            out[str(cell)] = {i for i in skipped if isinstance(i, int) and not isinstance(i, bool)}
    return out


def stop_note(block: Any, cell: str) -> str | None:
    """`stopped by stop_after after 3 trial(s) (2 fail); 7 skipped`, for a stopped cell."""
    cells = block.get("cells") if isinstance(block, dict) else None
    state = cells.get(cell) if isinstance(cells, dict) else None
    if not isinstance(state, dict) or not state.get("stopped"):
        return None
    skipped = state.get("skipped")
    count = len(skipped) if isinstance(skipped, list) else 0
    return (f"stopped by stop_after after {state.get('trials_run')} trial(s) "
            f"({state.get('events')} {block.get('event_verdict')}); {count} skipped")


def stop_states(rule: StopAfter | None, by_cell: Mapping[str, Sequence[TrialResult]]
                ) -> dict[str, Any] | None:
    """run.json's `stop_after` block (the rule, then each cell's state) from every cell's
    results; None without a rule."""
    if rule is None:
        return None
    cells = {cell: asdict(cell_stop(rule, {r.index: r for r in results if not r.baseline}))
             for cell, results in by_cell.items()}
    return {**rule.model_dump(), "cells": cells}
