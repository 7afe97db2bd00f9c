"""Where every trial of a run directory stands, read from its files and, for trials that ran
as Slurm jobs, from the queue: complete (with its verdict), corrupt (an unreadable record),
queued, running, lost (its job ended without a result), cancelled, not started, or skipped
(its cell was stopped early by the recipe's `stop_after`). Reads only; changes nothing.

It reads the records' checked fields through `aorta.store.layout`, not the record types, and
loads Slurm's and stop_after's modules only for a run that used them: `aorta sweep status`
starts about as fast as Python itself."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from aorta.base.names import name_problem
from aorta.store.layout import (cells_on_disk, parse_trial_name, read_run_fields, read_trial,
                                slot_names)

if TYPE_CHECKING:
    from typing import Any

    from aorta.run.slurm_commands import JobState

STATES = ("complete", "corrupt", "running", "queued", "lost", "cancelled", "not started",
          "skipped", "unknown")


class TrialStatus:
    """Where one trial stands. (A plain class: `aorta sweep status` starts without loading
    dataclasses, which costs more than the rest of the command.)"""

    __slots__ = ("trial", "cell", "name", "state", "verdict", "reason", "job", "host")

    def __init__(self, trial: str, cell: str, name: str, state: str,
                 verdict: str | None = None, reason: str | None = None,
                 job: str | None = None, host: str | None = None) -> None:
        self.trial = trial       # "cells/<cell>/trial_<i>", relative to the run directory
        self.cell = cell
        self.name = name         # trial_<i> or baseline_<i>
        self.state = state       # one of STATES
        self.verdict = verdict   # pass | fail | error, for a complete trial
        self.reason = reason
        self.job = job           # the Slurm job ("123_4"), if it ran as one
        self.host = host

    def to_json(self) -> dict[str, str | None]:
        return {key: getattr(self, key) for key in self.__slots__}


class RunStatus:
    """Where a run and each of its trials stand."""

    def __init__(self, run_dir: str | os.PathLike[str], run: str, status: str,
                 started_at: str | None, finished_at: str | None, trials: list[TrialStatus],
                 note: str | None = None) -> None:
        self.run_dir = run_dir
        self.run = run
        self.status = status     # run.json's: running | complete | interrupted
        self.started_at = started_at
        self.finished_at = finished_at
        self.trials = trials
        self.note = note         # why queue states could not be read, if they could not

    def counts(self) -> dict[str, int]:
        return _tally(t.state for t in self.trials)

    def verdicts(self) -> dict[str, int]:
        return _tally(t.verdict for t in self.trials if t.verdict)

    def to_json(self) -> dict[str, Any]:
        return {"run_dir": str(self.run_dir), "run": self.run, "status": self.status,
                "started_at": self.started_at, "finished_at": self.finished_at,
                "trials": [t.to_json() for t in self.trials], "note": self.note,
                "counts": self.counts()}

    def lines(self) -> list[str]:
        """What `aorta sweep status` prints: a header, the counts, one aligned row a trial."""
        counts, verdicts = self.counts(), self.verdicts()
        parts = [f"{counts.get('complete', 0)} complete" + (
            " (" + ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items())) + ")"
            if verdicts else "")]
        parts += [f"{counts[s]} {s}" for s in STATES[1:] if counts.get(s)]
        when = f"finished {self.finished_at}" if self.finished_at \
            else f"started {self.started_at}"
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


def _tally(values: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return counts


def run_status(run_dir: str | os.PathLike[str]) -> RunStatus:
    """Read `run_dir`'s run.json and trials; ask Slurm about trials with a job but no result.
    Raises RunDirError when `run_dir` holds no readable run."""
    run = read_run_fields(run_dir, "read")
    recorded = (run["slurm"].get("jobs") if isinstance(run["slurm"], dict) else None) or {}
    jobs = {k: e for k, e in recorded.items() if isinstance(e, dict)} \
        if isinstance(recorded, dict) else {}
    slots = [_Slot(run_dir, cell, name) for cell in _cells(run_dir, run, jobs)
             for name in slot_names(run_dir, cell, run["trials_per_cell"], run["baseline"])]
    asked = {s.dir: str(jobs[s.dir].get("job")) for s in slots
             if s.dir in jobs and s.state != "complete" and not jobs[s.dir].get("cancelled")
             and not jobs[s.dir].get("finished")}
    states: dict[str, JobState] | None = {}
    note = None
    if asked:
        from aorta.run.slurm_commands import missing_command, query_jobs

        note = missing_command("squeue")
        states = None if note else query_jobs(set(asked.values()))
        if states is None and note is None:
            note = "squeue failed, so the state of submitted jobs is unknown"
    skipped: dict[str, set[int]] = {}
    if run["stop_after"]:
        from aorta.run.stop_after import skipped_by_cell

        skipped = skipped_by_cell(run["stop_after"])
    trials = [_skipped(s, run["stop_after"]) if s.state == "missing"
              and s.index in skipped.get(s.cell, ()) else _one(s, jobs.get(s.dir), states)
              for s in slots]
    return RunStatus(run_dir, run["run"], run["status"], run["started_at"], run["finished_at"],
                     trials, note)


class _Slot:
    """One trial directory and what its record holds (`aorta.store.layout.read_trial`)."""

    def __init__(self, run_dir: str | os.PathLike[str], cell: str, name: str) -> None:
        self.cell, self.name, self.dir = cell, name, f"cells/{cell}/{name}"
        self.index = (parse_trial_name(name) or (0, False))[0]
        self.state, self.result, self.problem = read_trial(run_dir, cell, name)


def _cells(run_dir: str | os.PathLike[str], run: dict[str, Any], jobs: dict[str, Any]
           ) -> list[str]:
    """The run's cells, then cells found only on disk or in Slurm's record."""
    planned: list[str] = run["cells"]
    extra = [c for c in cells_on_disk(run_dir) if c not in planned]
    extra += sorted({k.split("/")[1] for k in jobs if k.count("/") == 2
                     and k.startswith("cells/")} - set(planned) - set(extra))
    return planned + [c for c in extra if name_problem(c) is None]


def _skipped(slot: _Slot, block: Any) -> TrialStatus:
    from aorta.run.stop_after import stop_note

    return TrialStatus(slot.dir, slot.cell, slot.name, "skipped",
                       reason=f"cell {stop_note(block, slot.cell)}")


def _one(slot: _Slot, entry: dict[str, Any] | None,
         states: dict[str, JobState] | None) -> TrialStatus:
    key, cell, name = slot.dir, slot.cell, slot.name
    job = str(entry["job"]) if entry and entry.get("job") else None
    if slot.state == "complete" and slot.result is not None:
        result = slot.result
        return TrialStatus(key, cell, name, "complete", result["verdict"],
                           None if result["verdict"] == "pass" else result["reason"], job,
                           result["host"])
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
        from aorta.run.slurm_lost import describe_end

        return TrialStatus(key, cell, name, "lost", job=job, reason=describe_end(job, state),
                           host=state.node if state else None)
    return TrialStatus(key, cell, name, state.phase, job=job, reason=state.reason,
                       host=state.node)
