"""Where every trial of a run directory stands, read from its files and, for trials that ran
as Slurm jobs, from the queue: complete (with its verdict), queued, running, lost (its job
ended without a result), cancelled, or not started. Reads only; changes nothing."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aorta.errors import RunDirError
from aorta.results import read_run_record, read_trial
from aorta.run.slurm_commands import JobState, missing_command, query_jobs
from aorta.run.slurm_lost import describe_end

__all__ = ["TrialStatus", "RunStatus", "run_status", "STATES"]

STATES = ("complete", "running", "queued", "lost", "cancelled", "not started", "unknown")
_TRIAL_DIR = re.compile(r"^(trial|baseline)_(\d+)$")


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
    doc = _run_doc(run_dir)
    slurm = doc.get("slurm")
    recorded = (slurm.get("jobs") if isinstance(slurm, dict) else None) or {}
    jobs = {k: e for k, e in recorded.items() if isinstance(e, dict)}
    keys = _trial_keys(run_dir, doc, jobs)
    asked = {k: str(jobs[k]["job"]) for k in keys
             if k in jobs and not jobs[k].get("cancelled") and not jobs[k].get("finished")
             and read_trial(run_dir / k / "result.json") is None}
    states: dict[str, JobState] | None = {}
    note = None
    if asked:
        note = missing_command("squeue")
        states = None if note else query_jobs(set(asked.values()))
        if states is None and note is None:
            note = "squeue failed, so the state of submitted jobs is unknown"
    trials = [_one(run_dir, k, jobs.get(k), states) for k in keys]
    return RunStatus(run_dir, str(doc.get("run") or run_dir.name), str(doc.get("status")),
                     doc.get("started_at"), doc.get("finished_at"), trials, note)


def _run_doc(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "run.json"
    if not path.is_file():
        raise RunDirError(f"{run_dir}: no run.json, so not an aorta run directory")
    return read_run_record(path, "read")


def _trial_keys(run_dir: Path, doc: dict[str, Any], jobs: dict[str, Any]) -> list[str]:
    """Every trial the run plans, has on disk, or submitted, in cell then trial order."""
    cells = [str(c) for c in doc.get("cells") or []]
    count = doc.get("trials_per_cell")
    count = count if isinstance(count, int) else 0
    keys = {f"cells/{c}/trial_{i}" for c in cells for i in range(count)}
    if _has_baseline(run_dir):
        keys |= {f"cells/{c}/baseline_{i}" for c in cells for i in range(count)}
    keys |= {k for k in jobs if k.startswith("cells/")}
    for cell_dir in (run_dir / "cells").glob("*"):
        keys |= {f"cells/{cell_dir.name}/{d.name}" for d in cell_dir.iterdir()
                 if d.is_dir() and _TRIAL_DIR.match(d.name)}
    order = {c: i for i, c in enumerate(cells)}

    def sort_key(key: str) -> tuple[int, str, str, int]:
        _, cell, name = key.split("/", 2)
        match = _TRIAL_DIR.match(name)
        kind, index = (match.group(1), int(match.group(2))) if match else (name, 0)
        return order.get(cell, len(order)), cell, "" if kind == "trial" else kind, index

    return sorted(keys, key=sort_key)


def _has_baseline(run_dir: Path) -> bool:
    import yaml

    try:
        recipe = yaml.safe_load((run_dir / "recipe.resolved.yaml").read_text())
    except (OSError, yaml.YAMLError):
        return False
    return isinstance(recipe, dict) and recipe.get("baseline") is True


def _one(run_dir: Path, key: str, entry: dict[str, Any] | None,
         states: dict[str, JobState] | None) -> TrialStatus:
    _, cell, name = key.split("/", 2)
    job = str(entry["job"]) if entry and entry.get("job") else None
    result = read_trial(run_dir / key / "result.json")
    if result is not None:
        return TrialStatus(key, cell, name, "complete", result.verdict,
                           None if result.verdict == "pass" else result.reason, job, result.host)
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
