"""Reading what a comparison needs from run directories: per-cell samples, one per trial.
Only passing trials give numbers (a failed or errored one measured something else); the others
are counted so the report says how many were left out. What a kernel table is: docs/compare.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from aorta.base.errors import UserError
from aorta.comparison.model import TrialCounts
from aorta.store.records import KernelEntry
from aorta.store.run_dir import RunStore, Slot


@dataclass(frozen=True)
class RunRef:
    """A run directory, and optionally one of its cells (`RUN:cell` on the command line)."""

    path: Path
    cell: str | None = None

    @property
    def label(self) -> str:
        return f"{self.path}:{self.cell}" if self.cell else str(self.path)


# One passing trial's kernel table: raw kernel name -> entry.
TrialTable = Mapping[str, KernelEntry]


@dataclass(frozen=True)
class CellSamples:
    name: str
    trials: TrialCounts
    metrics: Mapping[str, tuple[float, ...]]           # metric -> one value per passing trial
    tables: Mapping[str, tuple[TrialTable, ...]]       # table metric -> one per passing trial


@dataclass(frozen=True)
class LoadedRun:
    ref: RunRef
    cells: Mapping[str, CellSamples]                   # in the run's cell order
    partial: int = 0        # passing trials with a `partial` capture (counted only if allowed)


def parse_ref(text: str) -> RunRef:
    """`path` or `path:cell`. A path that exists as written wins over a `:cell` reading."""
    if not text:
        raise UserError("a run to compare is an empty string; give a run directory")
    path = Path(text)
    if path.exists() or ":" not in text:
        return RunRef(path)
    head, _, cell = text.rpartition(":")
    if not cell:
        raise UserError(f"{text!r}: nothing after ':'; write RUN_DIR:CELL or just RUN_DIR")
    return RunRef(Path(head), cell)


def load_run(ref: RunRef, allow_partial: bool = False) -> LoadedRun:
    """Read a run directory (only `ref.cell` when named); a collector's figures count when its
    capture is `ok` (or `partial`, with `allow_partial`). UserError when it is missing, is not a
    run, or lacks the named cell."""
    store = RunStore(ref.path)
    run = store.read_run("compare")
    names = run.cells + [c for c in store.cells_on_disk() if c not in run.cells]
    if ref.cell is not None:
        if ref.cell not in names:
            raise UserError(f"{ref.path}: no cell {ref.cell!r}; its cells are "
                            f"{', '.join(names) or '(none)'}")
        names = [ref.cell]
    cells, partial = {}, 0
    for name in names:     # a cell at a time: its samples are kept, not its records
        slots = [s for s in store.slots(run, [name]) if not s.baseline]
        partial += sum(1 for s in slots if s.result is not None and s.result.verdict == "pass"
                       and any(c.state == "partial" for c in s.result.captures.values()))
        cells[name] = _load_cell(name, slots, allow_partial)
    return LoadedRun(ref, cells, partial)


def _load_cell(name: str, slots: list[Slot], allow_partial: bool) -> CellSamples:
    results = [s.result for s in slots if s.result is not None]
    passing = [r for r in results if r.verdict == "pass"]
    metrics: dict[str, list[float]] = {}
    tables: dict[str, list[TrialTable]] = {}
    for trial in passing:
        for key, value in trial.numeric_metrics(allow_partial).items():
            metrics.setdefault(key, []).append(value)
        for key, table in trial.kernel_tables(allow_partial).items():
            tables.setdefault(key, []).append(table)
    # A record that is missing or cannot be read counts as missing, never as a pass.
    verdicts = Counter(r.verdict for r in results)
    counts = TrialCounts(len(passing), verdicts["fail"], verdicts["error"],
                         len(slots) - len(results))
    return CellSamples(name, counts, {k: tuple(v) for k, v in metrics.items()},
                       {k: tuple(v) for k, v in tables.items()})


def pair_cells(base: LoadedRun, new: LoadedRun) -> list[tuple[str, CellSamples, CellSamples]]:
    """(label, base cell, new cell) pairs: two named cells with each other, one named cell with
    its namesake, else every cell both runs have, in base order. UserError when none pairs."""
    if base.ref.cell and new.ref.cell:
        b, n = base.cells[base.ref.cell], new.cells[new.ref.cell]
        label = b.name if b.name == n.name else f"{b.name} -> {n.name}"
        return [(label, b, n)]
    named = base.ref.cell or new.ref.cell
    if named:
        other = new if base.ref.cell else base
        if named not in other.cells:
            raise UserError(f"{other.ref.path}: no cell {named!r} to compare with; its cells "
                            f"are {', '.join(other.cells) or '(none)'}")
        return [(named, base.cells[named], new.cells[named])]
    common = [name for name in base.cells if name in new.cells]
    if not common:
        raise UserError(f"no cell in common: base has {', '.join(base.cells) or '(none)'}; "
                        f"new has {', '.join(new.cells) or '(none)'}; to compare two cells, "
                        f"write BASE:cell NEW:cell")
    return [(name, base.cells[name], new.cells[name]) for name in common]
