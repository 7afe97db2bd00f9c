"""Checking a Slurm sweep's collectors where its trials will run, before any trial is
submitted (docs/slurm.md, "Checking the collectors on a node"): one short probe job with a
trial's resources, setup scripts and environment runs `aorta.run.executors.slurm.probe`, and
the driver waits at most `executor.probe_timeout` seconds for its answer. A refusal submits no
trial; nor does no answer (a time-out, a job ended without one, Ctrl-C), which cancels the job.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aorta.base.version import VERSION as __version__
from aorta.run.executors.slurm.commands import (JobState, SlurmError, cancel_jobs, query_jobs,
                                                sbatch, wait_gone)
from aorta.run.executors.slurm.options import SlurmOptions
from aorta.run.executors.slurm.probe import ANSWER_SCHEMA
from aorta.run.executors.slurm.script import job_options, job_script
from aorta.run.executors.slurm.worker import write_manifest
from aorta.run.trial import TrialSpec, utc_now
from aorta.store.reading import read_tail
from aorta.store.run_dir import RunStore

Note = Callable[[str], None]


@dataclass(frozen=True)
class ProbeJob:
    """How to submit the probe: as a trial's job. `poll_s`: the first and longest pause between
    looks (s); `settle_s`: how long a job may be gone before its missing answer is believed."""

    config: SlurmOptions
    store: RunStore
    name: str                 # the sweep's job name: Ctrl-C and --fresh find the probe too
    python: str
    setup: tuple[str, ...] = ()
    poll_s: tuple[float, float] = (1.0, 5.0)
    settle_s: float = 15.0


def check_on_node(job: ProbeJob, spec: TrialSpec, caller_env: Mapping[str, str], note: Note,
                  submitted: Callable[[dict[str, Any]], None]
                  ) -> tuple[dict[str, Any], str | None]:
    """Submit the probe job for `spec`'s collectors, wait for the node's answer and judge it:
    (run.json's executor.probe record, the one-line refusal or None when the sweep may be
    submitted). `submitted` gets the record as soon as the job has an id."""
    folder = job.store.root / "slurm"
    stem = _free_stem(folder)
    answer_name = f"{stem}.answer.json"
    secrets = write_manifest(job.store, f"{stem}.json", [spec], socket.gethostname(), caller_env)
    comment = [f"aorta sweep {job.store.root.name}: the probe job, which checks the collectors "
               f"on a node before the trials are submitted"]
    job.store.write_text(f"{stem}.sh", job_script(
        comment, job.setup, [job.python, "-m", "aorta.run.executors.slurm.probe",
                             str(folder / f"{stem}.json"), answer_name]),
        parts=("slurm",), executable=True)
    cwd = Path(os.getcwd())
    job_id = sbatch(job_options(job.config, job.name, folder, stem, cwd), folder / f"{stem}.sh",
                    {**caller_env, **secrets}, cwd)
    record: dict[str, Any] = {"job": job_id, "submitted_at": utc_now(),
                              "collectors": list(spec.collectors), "answer": f"slurm/{answer_name}"}
    try:   # from here on, whatever stops the driver cancels the probe job
        submitted(record)
        note(f"checking the collectors on a Slurm node before submitting the trials: probe "
             f"job {job_id} (its log: {folder / stem}.err)")
        answer, lost = _wait(job, job_id, answer_name, note)
    except BaseException:
        _cancel(job_id)
        raise
    if answer is None:
        _cancel(job_id)
        return {**record, "ok": False, "problem": lost}, lost
    node, refusal = judge_answer(answer, job_id)
    lines = [str(line) for line in answer.get("lines") or []] if isinstance(answer, dict) else []
    if refusal is not None and lines:
        note(f"Slurm node {node} answers, as `aorta doctor --collect "
             f"{','.join(spec.collectors)}` would there:")
        for line in lines:
            note(f"  {line}")
    elif refusal is None:
        note(f"the collectors can measure on Slurm node {node} (probe job {job_id}): "
             f"{_usable(answer)}")
    return ({**record, "node": node, "ok": refusal is None, "lines": lines,
             "checked_at": utc_now(), "problem": refusal}, refusal)


def judge_answer(answer: Any, job_id: str) -> tuple[str | None, str | None]:
    """(the node, the refusal line or None) from a probe's answer, worded as the local
    refusal is, with the node in place of "this machine"."""
    if not isinstance(answer, dict) or answer.get("schema_version") != ANSWER_SCHEMA:
        version = answer.get("aorta_version") if isinstance(answer, dict) else None
        return None, (f"probe job {job_id} wrote an answer this aorta ({__version__}) cannot "
                      f"read (from aorta {version or 'unknown'}): the nodes must import the "
                      f"driver's aorta; no trial was submitted")
    node = str(answer.get("node") or "?")
    where = f"on Slurm node {node} (probe job {job_id})"
    if answer.get("error"):
        return node, (f"probe job {job_id} could not check the collectors on Slurm node "
                      f"{node}: {answer['error']}; no trial was submitted")
    refused = answer.get("refused")
    if refused:
        row = next((r for r in answer.get("rows") or []
                    if isinstance(r, dict) and r.get("check") == refused), {})
        fix = f"; {row['fix']}" if row.get("fix") else ""
        return node, (f"collector {refused} cannot measure {where}: "
                      f"{row.get('reason') or 'no reason given'}{fix}; no trial was submitted")
    if answer.get("wrap_error"):
        return node, f"{where}: {answer['wrap_error']}; no trial was submitted"
    if answer.get("ok") is not True:
        return node, f"{where}: the node refused without a reason; no trial was submitted"
    return node, None


def _usable(answer: Mapping[str, Any]) -> str:
    rows = [r for r in answer.get("rows") or [] if isinstance(r, dict)
            and ":" not in str(r.get("check"))]
    return ", ".join(f"{r.get('check')} {r.get('version') or ''}".strip() for r in rows)


def _wait(job: ProbeJob, job_id: str, answer_name: str, note: Note) -> tuple[Any, str | None]:
    """(the answer, None), or (None, why there is none) after the time-out or once the job
    has been gone `settle_s` without writing one."""
    timeout = job.config.probe_timeout
    deadline = time.monotonic() + timeout
    pause, gone_since, said = job.poll_s[0], None, ""
    state: JobState | None = None
    while True:
        if (answer := job.store.read_json(answer_name, parts=("slurm",))) is not None:
            return answer, None
        now = time.monotonic()
        if now >= deadline:
            last = "" if state is None else f"; it was {state.state}" + (
                f" ({state.reason})" if state.reason else "")
            return None, (f"probe job {job_id}, which checks the collectors on a node, gave no "
                          f"answer within {timeout:g} s{last}; it is cancelled and no trial "
                          f"was submitted: raise executor.probe_timeout, or pass "
                          f"--skip-remote-probe to submit without the check")
        states = query_jobs({job_id})
        if states is not None:
            state = states.get(job_id)
            if state is None or state.phase == "ended":
                gone_since = now if gone_since is None else gone_since
                if now - gone_since >= job.settle_s:
                    return None, _ended_without_answer(job, job_id, state, answer_name)
            elif state.phase == "queued" and state.reason and state.reason != said:
                said = state.reason
                note(f"probe job {job_id} waits in Slurm's queue ({state.reason})")
        time.sleep(max(0.0, min(pause, deadline - now)))
        pause = min(pause * 1.5, job.poll_s[1])


def _ended_without_answer(job: ProbeJob, job_id: str, state: JobState | None,
                          answer_name: str) -> str:
    stem = answer_name.removesuffix(".answer.json")
    err = job.store.root / "slurm" / f"{stem}.err"
    how = "is gone (neither squeue nor sacct knows it)" if state is None \
        else f"ended {state.state}{state.details()}"
    tail = [line.strip() for line in (read_tail(err, 2048) or "").splitlines() if line.strip()]
    said = f"; its stderr ends: {tail[-1]!r}" if tail else ""
    return (f"probe job {job_id}, which checks the collectors on a node, {how} without an "
            f"answer{said}; check executor.setup and that the nodes run {job.python} with "
            f"this aorta (log: {err}); no trial was submitted")


def _cancel(job_id: str) -> None:
    # A second Ctrl-C stops the wait (the scancel has been sent); a failed scancel is not
    # reported: the refusal (or the interrupt) is what the user must see.
    with suppress(KeyboardInterrupt, SlurmError):
        cancel_jobs({job_id})
        wait_gone({job_id}, seconds=15.0)


def _free_stem(folder: Path) -> str:
    """`probe_<n>` for the first n whose files do not exist: an earlier driver's probe job
    that still runs writes only into its own files."""
    n = 1
    while any((folder / f"probe_{n}{ext}").exists() for ext in (".sh", ".answer.json")):
        n += 1
    return f"probe_{n}"
