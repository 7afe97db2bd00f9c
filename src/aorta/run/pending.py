"""How many of a plan's trials a run would start now: what `--dry-run` reports as
"would run N of M trials". Reads the run directory, never writes or locks it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aorta.base.errors import RunDirError
from aorta.run.plan import Plan
from aorta.run.sweep import trial_specs
from aorta.store.run_dir import RunStore


@dataclass(frozen=True)
class Pending:
    to_run: int
    total: int
    note: str | None = None     # why everything would run, or why the run would be refused

    def line(self) -> str:
        note = f" ({self.note})" if self.note else ""
        return f"would run {self.to_run} of {self.total} trial(s){note}"


def pending_trials(plan: Plan, run_dir: Path, fresh: bool = False) -> Pending:
    specs = trial_specs(plan, run_dir)
    total = len(specs)
    store = RunStore(run_dir)
    if fresh:
        return Pending(total, total, "--fresh discards what the run directory holds"
                       if store.has_run() else None)
    if not store.has_run():
        return Pending(total, total)
    try:
        previous = store.read_run("resume")
    except RunDirError as exc:
        return Pending(total, total, f"the run would be refused: {exc}")
    if previous.fingerprint != plan.fingerprint():
        return Pending(total, total, f"the run would be refused: {run_dir} holds a run of a "
                                     f"different recipe or command; pass --fresh to replace it")
    done = sum(store.read_slot(s.cell, s.name).state == "complete" for s in specs)
    return Pending(total - done, total, f"{done} already complete" if done else None)
