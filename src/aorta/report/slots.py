"""Where each planned trial of a cell lives, and what it left there.

    cells/<cell>/trial_<i>/     result.json stdout.log stderr.log rerun.sh <collector>/
    cells/<cell>/baseline_<i>/  the same trial with no collector (recipe `baseline: true`)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aorta.results import TrialResult, read_trial

__all__ = ["Slot", "read_slots", "trial_files", "TRIAL_FILES"]

TRIAL_FILES = ("result.json", "stdout.log", "stderr.log", "rerun.sh")


@dataclass(frozen=True)
class Slot:
    """One planned trial; `result` is None when it has no readable result.json."""

    cell: str
    name: str                 # trial_<i> or baseline_<i>
    index: int
    baseline: bool
    result: TrialResult | None

    @property
    def dir(self) -> str:
        """The trial directory relative to the run directory, `/`-separated."""
        return f"cells/{self.cell}/{self.name}"


def read_slots(run_dir: Path, cell: str, planned: int, baseline: bool) -> list[Slot]:
    """Every planned trial of `cell` in run order: profiled ones, then baseline ones."""
    kinds = [("trial", False)] + ([("baseline", True)] if baseline else [])
    return [Slot(cell, f"{prefix}_{i}", i, is_baseline,
                 read_trial(run_dir / "cells" / cell / f"{prefix}_{i}" / "result.json"))
            for prefix, is_baseline in kinds for i in range(planned)]


def trial_files(run_dir: Path, slot: Slot, collectors: list[str]) -> dict[str, str]:
    """Label -> path (relative to the run directory) of the artifacts that exist."""
    base = run_dir / slot.dir
    files = {name: f"{slot.dir}/{name}" for name in TRIAL_FILES if (base / name).is_file()}
    files.update({f"{c}/": f"{slot.dir}/{c}/" for c in collectors if (base / c).is_dir()})
    return files
