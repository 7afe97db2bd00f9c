"""The Slurm commands aorta uses (sbatch, squeue, sacct, scancel), with timeouts, and their
output read into `JobState` records. Jobs are named as Slurm prints them: `123`, or `123_4` for
task 4 of array 123. An ended job stays in `squeue --states=all` for a few minutes (slurm.conf
MinJobAge, 300 s by default); after that only `sacct` knows it, where accounting is enabled.
See https://slurm.schedmd.com/squeue.html and https://slurm.schedmd.com/sacct.html.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from shutil import which

from aorta.base.errors import UserError

_TIMEOUT_S = 60.0

#: States of a job that waits for resources (the rest of the live ones are running).
QUEUED = frozenset({"PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD",
                    "SUSPENDED"})
#: States of a job that will never run again.
ENDED = frozenset({"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
                   "PREEMPTED", "BOOT_FAIL", "DEADLINE", "SPECIAL_EXIT", "REVOKED"})


class SlurmError(UserError):
    """A Slurm command refused or failed; the message carries its own words."""


@dataclass(frozen=True)
class JobState:
    """Where one job stands, as squeue or sacct reported it."""

    job_id: str                  # "123" or "123_4"
    state: str                   # Slurm's word: PENDING, RUNNING, COMPLETED, TIMEOUT, ...
    reason: str | None = None    # why it waits or ended (squeue %r, sacct Reason)
    node: str | None = None
    exit_code: str | None = None   # sacct's "code:signal" of the batch script (the worker)

    @property
    def phase(self) -> str:
        """queued | running | ended."""
        if self.state in ENDED:
            return "ended"
        return "queued" if self.state in QUEUED else "running"

    def details(self) -> str:
        """` [exit 0:15, node n07, reason ...]` with what Slurm said of these; "" if nothing."""
        said = [f"{key} {value}" for key, value in (("exit", self.exit_code), ("node", self.node),
                                                    ("reason", self.reason)) if value]
        return f" [{', '.join(said)}]" if said else ""


def missing_command(name: str = "sbatch") -> str | None:
    """Why Slurm cannot be used from here, or None when `name` is on PATH."""
    if which(name) is None:
        return f"{name} is not on PATH (run aorta where Slurm's commands are, a login node)"
    return None


def _run(argv: Sequence[str], env: Mapping[str, str] | None = None,
         cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(list(argv), env=None if env is None else dict(env), cwd=cwd,
                              capture_output=True, text=True, timeout=_TIMEOUT_S, check=False,
                              stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise SlurmError(f"{argv[0]} is not on PATH") from None
    except subprocess.TimeoutExpired:
        raise SlurmError(f"{argv[0]} did not answer within {_TIMEOUT_S:g} s; is slurmctld "
                         f"up? (try: scontrol ping)") from None


def sbatch(options: Sequence[str], script: Path, env: Mapping[str, str], cwd: Path) -> str:
    """Submit `script` with `options`; the job id (the array's id for an array)."""
    proc = _run(["sbatch", "--parsable", *options, str(script)], env=env, cwd=cwd)
    if proc.returncode != 0:
        said = " ".join(proc.stderr.split()) or f"exit code {proc.returncode}"
        raise SlurmError(f"sbatch refused the sweep's jobs: {said}")
    # --parsable prints "jobid" or "jobid;cluster".
    job_id = proc.stdout.strip().split(";")[0]
    if not job_id.isdigit():
        raise SlurmError(f"sbatch printed {proc.stdout.strip()!r}, not a job id")
    return job_id


def parse_squeue(text: str) -> dict[str, JobState]:
    """`squeue -h -r -t all -o '%i|%T|%r|%N'` output, one line a job:

        12_3|RUNNING|None|node07
    """
    return _parse(text, ("job", "state", "reason", "node"))


def parse_sacct(text: str) -> dict[str, JobState]:
    """`sacct -n -P -X -o JobID,State,ExitCode,Reason,NodeList` output, one line a job:

        12_3|CANCELLED by 0|0:15|None|node07
    """
    return _parse(text, ("job", "state", "exit", "reason", "node"))


def _parse(text: str, columns: tuple[str, ...]) -> dict[str, JobState]:
    jobs = {}
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) != len(columns) or not parts[0] or "[" in parts[0]:
            continue   # sacct's "12_[4-9]" stands for tasks that never started
        row = dict(zip(columns, parts))
        job, state, reason, node = row["job"], row["state"], row["reason"], row["node"]
        jobs[job] = JobState(job, state.split()[0] if state else "UNKNOWN",
                             None if reason in ("", "None") else reason,
                             None if node in ("", "None assigned") else node,
                             row.get("exit") or None)
    return jobs


def query_jobs(job_ids: Collection[str]) -> dict[str, JobState] | None:
    """Where each of `job_ids` stands. A job neither command knows is left out; None when
    squeue itself failed, so nothing can be concluded."""
    if not job_ids:
        return {}
    parents = ",".join(sorted({j.split("_")[0] for j in job_ids}))
    try:
        proc = _run(["squeue", "-h", "-r", "-t", "all", "-j", parents, "-o", "%i|%T|%r|%N"])
    except SlurmError:
        return None
    if proc.returncode != 0 and "Invalid job id" not in proc.stderr:
        return None   # every id purged reads as "Invalid job id": that is an answer
    found = {j: s for j, s in parse_squeue(proc.stdout).items() if j in job_ids}
    gone = set(job_ids) - found.keys()
    if gone:
        found.update({j: s for j, s in _sacct(parents).items() if j in gone})
    return found


def _sacct(parents: str) -> dict[str, JobState]:
    """What accounting remembers; nothing where it is disabled or unreachable."""
    try:
        proc = _run(["sacct", "-n", "-P", "-X", "-j", parents,
                     "-o", "JobID,State,ExitCode,Reason,NodeList"])
    except SlurmError:
        return {}
    return parse_sacct(proc.stdout) if proc.returncode == 0 else {}


def cancel_jobs(job_ids: Collection[str], name: str | None = None, user: str | None = None) -> None:
    """scancel `job_ids`, and every job called `name` of `user` (one submitted while aorta was
    interrupted never had its id recorded). Jobs that already ended are no error."""
    if job_ids:
        _run(["scancel", *sorted(job_ids)])
    if name is not None and user is not None:
        _run(["scancel", f"--name={name}", f"--user={user}"])


def wait_gone(job_ids: Collection[str], seconds: float) -> None:
    """Wait up to `seconds` until Slurm lets go of `job_ids` (each ended, or forgotten)."""
    deadline = time.monotonic() + seconds
    while job_ids and time.monotonic() < deadline:
        states = query_jobs(job_ids)
        if states is not None and all(s.phase == "ended" for s in states.values()):
            return
        time.sleep(0.5)
