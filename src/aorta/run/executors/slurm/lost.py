"""A trial whose Slurm job ended without writing `result.json` (cancelled outside aorta, time
limit, node failure, out of memory, a worker that could not start): the driver writes the
record itself, as an `error` with Slurm's word for why, so the sweep keeps the failure."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from aorta.base.errors import DiskFullError
from aorta.base.redaction import Redactor
from aorta.run.executors.slurm.commands import JobState
from aorta.store.reading import read_tail
from aorta.store.records import TrialResult
from aorta.store.run_dir import RunStore

if TYPE_CHECKING:  # the trial runner pulls in every collector: `sweep status` needs none
    from aorta.run.trial import TrialSpec

_TAIL_BYTES = 4096
_WHY = {
    "TIMEOUT": "hit its Slurm time limit (raise executor.time)",
    "CANCELLED": "was cancelled outside aorta",
    "NODE_FAIL": "lost its node (NODE_FAIL)",
    "OUT_OF_MEMORY": "ran out of memory (raise executor.mem)",
    "PREEMPTED": "was preempted",
    "BOOT_FAIL": "could not boot its node",
    "DEADLINE": "missed its deadline",
    "FAILED": "failed before the trial could record anything",
    "COMPLETED": "ended but no result.json appeared (is the run directory on a filesystem "
                 "the nodes share?)",
}


def describe_end(job: str, state: JobState | None) -> str:
    """One line: how job `job` ended, in Slurm's words and what they mean."""
    if state is None:
        return (f"Slurm job {job} is gone: neither squeue nor sacct knows it any more "
                f"(accounting disabled, or purged)")
    why = _WHY.get(state.state, f"ended in state {state.state}")
    return f"Slurm job {job} {why}{state.details()}"


def lost_result(spec: TrialSpec, job: str, state: JobState | None, logs: Path) -> TrialResult:
    """Write and return the `error` record of a trial whose job ended without one. The tail
    of the job's own stderr file (`<logs>/<job>.err`) says what the worker saw; where that is
    a full disk, `DiskFullError` instead: the trial is left to run again."""
    tail = read_tail(logs / f"{job}.err", _TAIL_BYTES) or None
    for line in (tail or "").splitlines():
        if line.startswith("aorta: error: ") and line[14:].startswith(DiskFullError.FULL):
            raise DiskFullError(line[14:])
    overlay = {**spec.env, **spec.device_env}
    redactor = Redactor.for_inputs([overlay], [spec.command])
    result = TrialResult(
        cell=spec.cell, index=spec.index, verdict="error",
        reason=describe_end(job, state) + " without a result",
        argv=redactor.argv(spec.command), command=redactor.argv(spec.command),
        env_overlay=redactor.env(overlay), env_unset=[], host=state.node if state else None,
        warnings=[f"aorta: recorded by the driver; Slurm's log of the job: {logs / job}.err"],
        stderr_tail=tail, device=spec.device, baseline=spec.baseline)
    RunStore(spec.run_dir, redactor).write_trial(result)
    return result
