"""Sweeps through a real Slurm: trials run as jobs, results land, `status` reads them, a killed
driver's jobs are re-attached, Ctrl-C and --fresh leave no job behind."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aorta.run.plan import Overrides, build_plan
from aorta.recipe.schema import load_recipe
from aorta.run.progress import PlainProgress
from aorta.run.executors.slurm.executor import SlurmExecutor, job_name
from aorta.run.executors.slurm.options import SlurmOptions
from aorta.run.sweep import run_sweep
from aorta_testing import REPO, interruptible, run_aorta, trial_result, write_recipe

pytestmark = [pytest.mark.slurm, pytest.mark.usefixtures("slurm")]

SHOW_JOB = """
import os, sys, time
time.sleep(float(sys.argv[1]))
print(os.environ.get("SLURM_ARRAY_JOB_ID"), os.environ.get("SLURM_ARRAY_TASK_ID"), sys.argv[2:])
"""

# Runs until the test creates the release file (bounded, so nothing outlives a broken test).
HOLD = """
import os, sys, time
deadline = time.time() + 60
while not os.path.exists(sys.argv[1]) and time.time() < deadline:
    time.sleep(0.1)
"""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "src"), env.get("PYTHONPATH")]))
    return env


def _start_driver(log: Path, *args: str) -> subprocess.Popen[str]:
    """`aorta ARGS` in the background, its stderr in `log`; Ctrl-C reaches it even when our
    own parent ignores SIGINT (as background jobs of a script do)."""
    with open(log, "w") as err:
        return subprocess.Popen(interruptible([sys.executable, "-m", "aorta", *args]),
                                env=_env(), text=True, stdout=subprocess.DEVNULL, stderr=err)


def _stop(driver: subprocess.Popen[str]) -> None:
    if driver.poll() is None:
        driver.kill()
    driver.wait(timeout=30)


def _jobs_in_queue(name: str) -> list[str]:
    """This run's jobs that Slurm still holds (queued, running or completing)."""
    out = subprocess.run(["squeue", "-h", "-r", f"--name={name}", "-o", "%i %T"],
                         capture_output=True, text=True, timeout=30, check=True).stdout
    return out.split("\n") if out.strip() else []


def _accounting(name: str) -> dict[str, str] | None:
    """sacct's job -> state for jobs called `name`; None where accounting is disabled."""
    proc = subprocess.run(["sacct", "-n", "-P", "-X", f"--name={name}", "-S", "now-1hours",
                           "-o", "JobID,State"], capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        return None
    return dict(line.split("|", 1) for line in proc.stdout.splitlines() if "|" in line)


def _until(predicate, seconds: float = 60, what: str = "") -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.2)


def _slurm_record(run_dir: Path) -> dict:
    return json.loads((run_dir / "run.json").read_text())["executor"]


def _running_jobs(run_dir: Path, running: int, submitted: int) -> bool:
    """Whether `submitted` jobs are recorded in run.json and `running` of them run."""
    try:
        jobs = (_slurm_record(run_dir) or {})["jobs"]   # null until the trials are submitted
    except (OSError, ValueError, KeyError):
        return False
    states = _jobs_in_queue(job_name(run_dir))
    return len(jobs) == submitted and sum(s.endswith("RUNNING") for s in states) == running


def test_trials_run_as_slurm_jobs_and_status_reads_them(tmp_path: Path, payload):
    script = payload(SHOW_JOB)
    recipe = write_recipe(tmp_path, """
        schema_version: 1
        ticket: onslurm
        trials: 2
        collect: [cprofile]
        axes: {size: {small: {args: [s]}, big: {args: [b]}}}
        executor: {kind: slurm, max_parallel: 2, cpus_per_trial: 1}
    """)
    out = tmp_path / "out"
    proc = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(out), "--",
                     sys.executable, str(script), "0.2")
    assert proc.returncode == 0, proc.stderr
    run_dir = out / "onslurm"
    assert "as Slurm job array" in proc.stderr
    record = _slurm_record(run_dir)
    array = record["submissions"][0]["job"]
    for cell in ("small", "big"):
        for i in range(2):
            result = trial_result(run_dir, cell, i)
            job = record["jobs"][f"cells/{cell}/trial_{i}"]["job"]
            assert result["verdict"] == "pass" and result["host"] == socket.gethostname()
            assert result["captures"]["cprofile"]["state"] == "ok"
            # The payload itself saw Slurm's variables: it ran inside that array task.
            stdout = (run_dir / "cells" / cell / f"trial_{i}" / "stdout.log").read_text()
            assert stdout.split()[:2] == job.split("_") and stdout.split()[0] == array
            # Same host as the driver: no node snapshot is needed.
            assert not (run_dir / "cells" / cell / f"trial_{i}" / "node_env.json").exists()
    assert all(line.endswith("COMPLETING") for line in _jobs_in_queue(record["job_name"]))
    if _accounting(record["job_name"]) is not None:   # scripts/slurm-local.sh enables it
        jobs = {e["job"] for e in record["jobs"].values()}
        # slurmdbd hears of a job's end a moment after squeue does.
        _until(lambda: {_accounting(record["job_name"]).get(j) for j in jobs} == {"COMPLETED"},
               30, f"sacct to show {sorted(jobs)} COMPLETED")
    status = run_aorta("sweep", "status", str(run_dir))
    assert status.returncode == 0, status.stderr
    assert "4 trial(s): 4 complete (4 pass)" in status.stdout
    rows = [line.split() for line in status.stdout.splitlines()[3:]]
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        ("small", "trial_0", "complete", "pass"), ("small", "trial_1", "complete", "pass"),
        ("big", "trial_0", "complete", "pass"), ("big", "trial_1", "complete", "pass")]
    assert {r[4] for r in rows} == {e["job"] for e in record["jobs"].values()}

    # A deleted result is run again: one new job, the others stay as they were.
    (run_dir / "cells/big/trial_1/result.json").unlink()
    rows = [line.split()[:4] for line in
            run_aorta("sweep", "status", str(run_dir)).stdout.splitlines()]
    assert ["big", "trial_1", "not", "started"] in rows
    again = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(out), "--",
                      sys.executable, str(script), "0.2")
    assert again.returncode == 0, again.stderr
    assert "submitted 1 trial(s)" in again.stderr and "re-attached" not in again.stderr
    jobs = {k: e["job"] for k, e in _slurm_record(run_dir)["jobs"].items()}
    assert jobs["cells/big/trial_1"] != record["jobs"]["cells/big/trial_1"]["job"]
    assert trial_result(run_dir, "big", 1)["verdict"] == "pass"


def test_rerun_after_a_killed_driver_reattaches_to_live_jobs(tmp_path: Path, payload):
    script = payload(HOLD)
    release = tmp_path / "release"
    recipe = write_recipe(tmp_path, """
        schema_version: 1
        ticket: reattach
        trials: 3
        executor: {kind: slurm, max_parallel: 2}
    """)
    out = tmp_path / "out"
    run_dir = out / "reattach"
    args = ("sweep", "run", "--recipe", str(recipe), "--output", str(out), "--",
            sys.executable, str(script), str(release))
    driver = _start_driver(tmp_path / "first.log", *args)
    try:
        _until(lambda: _running_jobs(run_dir, 2, 3) or driver.poll() is not None, 60,
               "two running jobs")
    finally:
        _stop(driver)   # SIGKILL: no chance to cancel anything
    before = {k: e["job"] for k, e in _slurm_record(run_dir)["jobs"].items()}
    assert len(before) == 3
    status = run_aorta("sweep", "status", str(run_dir))
    assert "2 running, 1 queued" in status.stdout, status.stdout
    assert "JobArrayTaskLimit" in status.stdout   # the third waits for max_parallel

    log = tmp_path / "again.log"
    again = _start_driver(log, *args)
    try:
        _until(lambda: "re-attached" in log.read_text() or again.poll() is not None, 60,
               "the second driver to attach")
        assert _jobs_in_queue(job_name(run_dir))   # still live when it re-attached
        release.touch()
        again.wait(timeout=90)
    finally:
        _stop(again)
    err = log.read_text()
    assert again.returncode == 0, err
    assert "re-attached to 3 Slurm job(s) of an earlier driver" in err
    assert "as Slurm job array" not in err   # nothing submitted
    record = _slurm_record(run_dir)
    assert {k: e["job"] for k, e in record["jobs"].items()} == before
    assert len(record["submissions"]) == 1
    assert all(trial_result(run_dir, "default", i)["verdict"] == "pass" for i in range(3))
    if _accounting(record["job_name"]) is not None:   # no job was submitted twice
        _until(lambda: sorted(_accounting(record["job_name"])) == sorted(before.values()), 30,
               f"sacct to list exactly {sorted(before.values())}")


def test_ctrl_c_cancels_every_job_and_a_rerun_submits_them_again(tmp_path: Path, payload):
    script = payload(HOLD)
    release = tmp_path / "release"
    recipe = write_recipe(tmp_path, """
        schema_version: 1
        ticket: cancel
        trials: 3
        executor: {kind: slurm, max_parallel: 2}
    """)
    out = tmp_path / "out"
    run_dir = out / "cancel"
    args = ("sweep", "run", "--recipe", str(recipe), "--output", str(out), "--",
            sys.executable, str(script), str(release))
    driver = _start_driver(tmp_path / "driver.log", *args)
    try:
        _until(lambda: _running_jobs(run_dir, 2, 3) or driver.poll() is not None, 60,
               "two running jobs")
        driver.send_signal(signal.SIGINT)
        driver.wait(timeout=60)
    finally:
        _stop(driver)
    assert driver.returncode == 130, (tmp_path / "driver.log").read_text()
    name = job_name(run_dir)
    assert _jobs_in_queue(name) == []   # nothing queued, running or completing
    first = {k: e["job"] for k, e in _slurm_record(run_dir)["jobs"].items()}
    assert not list(run_dir.glob("cells/*/*/result.json"))   # the trials stay to be run
    status = run_aorta("sweep", "status", str(run_dir))
    assert "3 cancelled" in status.stdout, status.stdout

    release.touch()
    proc = run_aorta(*args)
    assert proc.returncode == 0, proc.stderr
    second = {k: e["job"] for k, e in _slurm_record(run_dir)["jobs"].items()}
    assert set(second.values()).isdisjoint(first.values())
    assert all(trial_result(run_dir, "default", i)["verdict"] == "pass" for i in range(3))


def test_fresh_cancels_the_jobs_of_the_run_it_discards(tmp_path: Path, payload):
    hold = payload(HOLD, "hold.py")
    quick = payload(SHOW_JOB, "quick.py")
    recipe = write_recipe(tmp_path, """
        schema_version: 1
        ticket: fresh
        trials: 2
        executor: {kind: slurm}
    """)
    out = tmp_path / "out"
    run_dir = out / "fresh"
    driver = _start_driver(tmp_path / "driver.log", "sweep", "run", "--recipe", str(recipe),
                           "--output", str(out), "--", sys.executable, str(hold),
                           str(tmp_path / "never"))
    try:
        _until(lambda: _running_jobs(run_dir, 2, 2) or driver.poll() is not None, 60,
               "two running jobs")
    finally:
        _stop(driver)
    old = {e["job"] for e in _slurm_record(run_dir)["jobs"].values()}
    proc = run_aorta("sweep", "run", "--fresh", "--recipe", str(recipe), "--output", str(out),
                     "--", sys.executable, str(quick), "0")
    assert proc.returncode == 0, proc.stderr
    queue = subprocess.run(["squeue", "-h", "-r", "-t", "all", "-o", "%i %T"],
                           capture_output=True, text=True, timeout=30).stdout
    states = dict(line.split() for line in queue.splitlines())
    assert {states.get(job, "CANCELLED") for job in old} == {"CANCELLED"}
    assert {trial_result(run_dir, "default", i)["verdict"] for i in range(2)} == {"pass"}


def _in_process_sweep(tmp_path: Path, executor: SlurmExecutor, command: list[str]):
    recipe = write_recipe(tmp_path, """
        schema_version: 1
        ticket: lost
        trials: 1
        executor: {kind: slurm}
    """)
    plan = build_plan(load_recipe(recipe), Overrides(command=tuple(command)))
    with open(tmp_path / "progress.log", "w") as log:
        return run_sweep(plan, tmp_path / "out", _env(), PlainProgress(log), False, executor)


def test_a_job_that_cannot_run_its_worker_is_an_error_trial(tmp_path: Path):
    config = SlurmOptions()
    executor = SlurmExecutor(config, poll_s=(0.3, 1.0), settle_s=0.5,
                             python=str(tmp_path / "no-such-python"), note=lambda line: None)
    outcome = _in_process_sweep(tmp_path, executor, [sys.executable, "-c", "pass"])
    assert outcome.status == "complete"
    result = trial_result(outcome.run_dir, "default", 0)
    assert result["verdict"] == "error"
    assert "failed before the trial could record anything" in result["reason"]
    assert "no-such-python" in result["stderr_tail"]   # the job's own stderr says why
    assert outcome.cells[0].errored == 1


def test_a_job_cancelled_behind_aortas_back_is_an_error_trial(tmp_path: Path, payload):
    script = payload(HOLD)
    config = SlurmOptions()
    notes: list[str] = []

    def cancel_once_running(line: str) -> None:
        notes.append(line)
        if line.startswith("Slurm: 1 running"):
            job = _slurm_record(tmp_path / "out" / "lost")["jobs"]["cells/default/trial_0"]
            subprocess.run(["scancel", job["job"]], check=True, timeout=30)

    executor = SlurmExecutor(config, poll_s=(0.3, 1.0), settle_s=0.5,
                             note=cancel_once_running)
    outcome = _in_process_sweep(tmp_path, executor,
                                [sys.executable, str(script), str(tmp_path / "never")])
    result = trial_result(outcome.run_dir, "default", 0)
    assert result["verdict"] == "error", notes
    assert "was cancelled outside aorta" in result["reason"]
    assert "CANCELLED" in (result["stderr_tail"] or "")
    assert result["host"] == socket.gethostname()   # the node Slurm had given it
    assert outcome.cells[0].errored == 1
