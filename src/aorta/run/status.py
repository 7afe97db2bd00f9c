"""Where every trial of a run directory stands (one of `STATES`), read from its files and, for
trials without a result, from the run's executor (Slurm's queue, for one). Reads only."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aorta.run.executors import EXECUTORS, executor_class
from aorta.run.stop_after import skipped_by_cell, stop_note
from aorta.store.layout import (cells_on_disk, parse_trial_name, read_run_fields, read_trial,
                                slot_names)

if TYPE_CHECKING:
    from aorta.run.executors.base import TrialState

STATES = ("complete", "corrupt", "running", "queued", "lost", "cancelled", "not started",
          "skipped", "unknown")


@dataclass(frozen=True)
class TrialStatus:
    """Where one trial stands."""

    trial: str                   # "cells/<cell>/trial_<i>", relative to the run directory
    cell: str
    name: str                    # trial_<i> or baseline_<i>
    state: str                   # one of STATES
    verdict: str | None = None   # pass | fail | error, for a complete trial
    reason: str | None = None
    job: str | None = None       # the job that runs it ("123_4"), where an executor has jobs
    host: str | None = None


@dataclass(frozen=True)
class RunStatus:
    """Where a run and each of its trials stand."""

    run_dir: str | os.PathLike[str]
    run: str
    status: str                  # run.json's: running | complete | interrupted
    started_at: str | None
    finished_at: str | None
    trials: list[TrialStatus]
    note: str | None = None      # why queue states could not be read, if they could not

    def counts(self) -> dict[str, int]:
        return dict(Counter(t.state for t in self.trials))

    def to_json(self) -> dict[str, Any]:
        return {"run_dir": str(self.run_dir), "run": self.run, "status": self.status,
                "started_at": self.started_at, "finished_at": self.finished_at,
                "trials": [{**asdict(t), "baseline": t.name.startswith("baseline_")}
                           for t in self.trials], "note": self.note, "counts": self.counts()}

    def lines(self) -> list[str]:
        """What `aorta sweep status` prints: a header, the counts, one aligned row a trial."""
        counts = self.counts()
        verdicts = Counter(t.verdict for t in self.trials if t.verdict)
        parts = [f"{counts.get('complete', 0)} complete" + (
            " (" + ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items())) + ")"
            if verdicts else "")]
        parts += [f"{counts[s]} {s}" for s in STATES[1:] if counts.get(s)]
        when = f"finished {self.finished_at}" if self.finished_at else f"started {self.started_at}"
        based = sum(t.name.startswith("baseline_") for t in self.trials)
        kinds = f" ({len(self.trials) - based} profiled, {based} baseline with no collector)" \
            if based else ""
        lines = [f"run {self.run} ({self.run_dir}): {self.status}, {when}",
                 f"{len(self.trials)} trial(s){kinds}: " + ", ".join(parts)]
        if self.note:
            lines.append(f"aorta: {self.note}")
        rows = [("cell", "trial", "state", "verdict", "job", "host", "reason")]
        rows += [(t.cell, t.name, t.state, t.verdict or "-", t.job or "-", t.host or "-",
                  t.reason or "") for t in self.trials]
        widths = [max(len(r[i]) for r in rows) for i in range(6)]
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[6] for r in rows]
        return [line.rstrip() for line in lines]


def run_status(run_dir: str | os.PathLike[str]) -> RunStatus:
    """Read `run_dir`'s run.json and trials; ask the run's executor where the trials without
    a result stand. Raises RunDirError when `run_dir` holds no readable run."""
    run = read_run_fields(run_dir, "read")
    block = run["executor"] or {"kind": "local"}
    cells = run["cells"] + [c for c in cells_on_disk(run_dir) if c not in run["cells"]]
    slots = [_Slot(run_dir, cell, name) for cell in cells
             for name in slot_names(run_dir, cell, run["trials_per_cell"], run["baseline"])]
    states: dict[str, TrialState] = {}
    note = None
    if set(block) - {"kind"} and block.get("kind") in EXECUTORS:   # it kept state: ask it
        pending = [s.dir for s in slots if s.state == "missing"]
        states, note = executor_class(block["kind"]).trial_states(Path(run_dir), block, pending)
    skipped = skipped_by_cell(run["stop_after"])
    trials = [TrialStatus(s.dir, s.cell, s.name, "skipped",
                          reason=f"cell {stop_note(run['stop_after'], s.cell)}")
              if s.state == "missing" and s.index in skipped.get(s.cell, ())
              else _one(s, states.get(s.dir)) for s in slots]
    return RunStatus(run_dir, run["run"], run["status"], run["started_at"], run["finished_at"],
                     trials, note)


class _Slot:
    """One trial directory and what its record holds (`aorta.store.layout.read_trial`)."""

    def __init__(self, run_dir: str | os.PathLike[str], cell: str, name: str) -> None:
        self.cell, self.name, self.dir = cell, name, f"cells/{cell}/{name}"
        self.index = (parse_trial_name(name) or (0, False))[0]
        self.state, fields, self.problem = read_trial(run_dir, cell, name)
        # What status shows, not the whole record: a run's records hold trials x kernels.
        self.result = None if fields is None else {
            key: fields[key] for key in ("verdict", "reason", "host", "baseline")}


def _one(slot: _Slot, known: TrialState | None) -> TrialStatus:
    key, cell, name = slot.dir, slot.cell, slot.name
    job = known.job if known else None
    if slot.state == "complete" and slot.result is not None:
        result = slot.result
        return TrialStatus(key, cell, name, "complete", result["verdict"],
                           None if result["verdict"] == "pass" else result["reason"], job,
                           result["host"])
    if slot.state in ("corrupt", "newer"):
        return TrialStatus(key, cell, name, "corrupt", reason=f"result.json: {slot.problem}"
                           + ("; a rerun moves it to quarantine/ and runs the trial again"
                              if slot.state == "corrupt" else ""), job=job)
    if known is None:
        return TrialStatus(key, cell, name, "not started")
    return TrialStatus(key, cell, name, known.state, job=known.job, reason=known.reason,
                       host=known.host)
