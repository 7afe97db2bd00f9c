"""Where every trial of a run directory stands, read from its files and, for trials that ran
as Slurm jobs, from the queue: complete (with its verdict), corrupt (an unreadable record),
queued, running, lost (its job ended without a result), cancelled, not started, or skipped
(its cell was stopped early by the recipe's `stop_after`). Reads
only; changes nothing."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aorta.results import RunRecord
from aorta.run.slurm_commands import JobState, missing_command, query_jobs
from aorta.run.slurm_lost import describe_end
from aorta.run.stop_after import skipped_by_cell, stop_note
from aorta.store.names import name_problem
from aorta.store.run_dir import RunStore, Slot

__all__ = ["TrialStatus", "RunStatus", "run_status", "STATES"]

STATES = ("complete", "corrupt", "running", "queued", "lost", "cancelled", "not started",
          "skipped", "unknown")


@dataclass(frozen=True)
class TrialStatus:
    trial: str                   # "cells/<cell>/trial_<i>", relative to the run directory
    cell: str
    name: str                    # trial_<i> or baseline_<i>
    state: str                   # one of STATES
    verdict: str | None = None   # pass | fail | error, for a complete trial
    reason: str | None = None
    job: str | None = None       # the Slurm job ("123_4"), if it ran as one
    host: str | None = None


@dataclass(frozen=True)
class RunStatus:
    run_dir: Path
    run: str
    status: str                  # run.json's: running | complete | interrupted
    started_at: str | None
    finished_at: str | None
    trials: list[TrialStatus]
    note: str | None = None      # why queue states could not be read, if they could not

    def counts(self) -> dict[str, int]:
        return dict(Counter(t.state for t in self.trials))

    def verdicts(self) -> dict[str, int]:
        return dict(Counter(t.verdict for t in self.trials if t.verdict))


def run_status(run_dir: Path) -> RunStatus:
    """Read `run_dir`'s run.json and trials; ask Slurm about trials with a job but no result.
    Raises RunDirError when `run_dir` holds no readable run."""
    store = RunStore(run_dir)
    run = store.read_run("read")
    recorded = (run.slurm.get("jobs") if isinstance(run.slurm, dict) else None) or {}
    jobs = {k: e for k, e in recorded.items() if isinstance(e, dict)} \
        if isinstance(recorded, dict) else {}
    slots = store.slots(run, _cells(store, run, jobs))
    asked = {s.dir: str(jobs[s.dir].get("job")) for s in slots
             if s.dir in jobs and s.state != "complete" and not jobs[s.dir].get("cancelled")
             and not jobs[s.dir].get("finished")}
    states: dict[str, JobState] | None = {}
    note = None
    if asked:
        note = missing_command("squeue")
        states = None if note else query_jobs(set(asked.values()))
        if states is None and note is None:
            note = "squeue failed, so the state of submitted jobs is unknown"
    skipped = skipped_by_cell(run.stop_after)
    trials = [_skipped(s, run.stop_after) if s.state == "missing"
              and s.index in skipped.get(s.cell, ()) else _one(s, jobs.get(s.dir), states)
              for s in slots]
    return RunStatus(run_dir, run.run, run.status, run.started_at, run.finished_at, trials,
                     note)


def _cells(store: RunStore, run: RunRecord, jobs: dict[str, Any]) -> list[str]:
    """The run's cells, then cells found only on disk or in Slurm's record."""
    extra = [c for c in store.cells_on_disk() if c not in run.cells]
    extra += sorted({k.split("/")[1] for k in jobs if k.count("/") == 2
                     and k.startswith("cells/")} - set(run.cells) - set(extra))
    return run.cells + [c for c in extra if name_problem(c) is None]


def _skipped(slot: Slot, block: Any) -> TrialStatus:
    return TrialStatus(slot.dir, slot.cell, slot.name, "skipped",
                       reason=f"cell {stop_note(block, slot.cell)}")


def _one(slot: Slot, entry: dict[str, Any] | None,
         states: dict[str, JobState] | None) -> TrialStatus:
    key, cell, name = slot.dir, slot.cell, slot.name
    job = str(entry["job"]) if entry and entry.get("job") else None
    if slot.state == "complete" and slot.result is not None:
        result = slot.result
        return TrialStatus(key, cell, name, "complete", result.verdict,
                           None if result.verdict == "pass" else result.reason, job, result.host)
    if slot.state in ("corrupt", "newer"):
        return TrialStatus(key, cell, name, "corrupt", reason=f"result.json: {slot.problem}"
                           + ("; a rerun moves it to quarantine/ and runs the trial again"
                              if slot.state == "corrupt" else ""), job=job)
    if job is None or (entry and entry.get("finished")):   # finished: its result was removed
        return TrialStatus(key, cell, name, "not started")
    if entry and entry.get("cancelled"):
        return TrialStatus(key, cell, name, "cancelled", job=job,
                           reason="cancelled by aorta (Ctrl-C); a rerun submits it again")
    if states is None:
        return TrialStatus(key, cell, name, "unknown", job=job)
    state = states.get(job)
    if state is None or state.phase == "ended":
        return TrialStatus(key, cell, name, "lost", job=job, reason=describe_end(job, state),
                           host=state.node if state else None)
    return TrialStatus(key, cell, name, state.phase, job=job, reason=state.reason,
                       host=state.node)
