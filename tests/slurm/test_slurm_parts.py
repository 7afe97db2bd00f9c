"""The Slurm executor's parts that need no Slurm: sbatch options, the batch script, reading
squeue/sacct, the worker (run for real, as a job would run it), lost-job records, `status`."""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aorta.collectors.registry import get
from aorta.run.executors.slurm.options import SlurmOptions
from aorta.store.files import write_json
from aorta.run.executors.slurm.executor import batch_script, job_name, sbatch_options
from aorta.run.executors.slurm.commands import JobState, parse_sacct, parse_squeue
from aorta.run.executors.slurm.lost import describe_end, lost_result
from aorta.run.executors.slurm.worker import (pin_slurm_gpus, read_manifest, spec_from_json,
                                              spec_to_json, write_manifest)
from aorta.base.errors import DiskFullError, UserError
from aorta.run.trial import TrialSpec
from aorta.store.run_dir import RunStore
from aorta_testing import REPO, run_aorta, trial_result, write_recipe


def _spec(run_dir: Path, index: int, command: list[str], **extra) -> TrialSpec:
    return TrialSpec(cell="c", index=index, run_dir=run_dir, command=tuple(command),
                     env={"MODE": "x"}, collectors={}, **extra)


def _manifest(run_dir: Path, specs: list[TrialSpec], host: str,
              caller_env: dict[str, str] | None = None) -> tuple[Path, dict[str, str]]:
    run_dir.mkdir(parents=True, exist_ok=True)
    secrets = write_manifest(RunStore(run_dir), "m.json", specs, host, caller_env or {})
    return run_dir / "slurm" / "m.json", secrets


def _worker(manifest: Path, task: int, **env: str) -> subprocess.Popen[str]:
    child = {**os.environ, "SLURM_ARRAY_TASK_ID": str(task), **env}
    child["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "src"),
                                                        os.environ.get("PYTHONPATH")]))
    return subprocess.Popen([sys.executable, "-m", "aorta.run.executors.slurm.worker", str(manifest)],
                            env=child, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_sbatch_options_carry_every_executor_setting_and_user_options_last(tmp_path: Path):
    config = SlurmOptions(partition="gpu", account="proj1", time="00:30:00",
                            gpus_per_trial=2, cpus_per_trial=8, mem="64G", max_parallel=3,
                            sbatch_args=["--qos=high", "--cpus-per-task=4"])
    logs = tmp_path / "50%" / "slurm"
    options = sbatch_options(config, "aorta-x-1", logs, 5, tmp_path, after="41")
    assert options == [
        "--job-name=aorta-x-1", "--array=0-4%3", f"--output={tmp_path}/50%%/slurm/%A_%a.out",
        f"--error={tmp_path}/50%%/slurm/%A_%a.err", f"--chdir={tmp_path}", "--nodes=1",
        "--ntasks=1", "--cpus-per-task=8", "--gres=gpu:2", "--mem=64G", "--time=00:30:00",
        "--partition=gpu", "--account=proj1", "--dependency=afterany:41", "--qos=high",
        "--cpus-per-task=4"]
    bare = sbatch_options(SlurmOptions(), "n", logs, 1, tmp_path)
    assert "--array=0-0" in bare and not any(o.startswith(("--gres", "--mem", "--time",
                                                           "--partition", "--dependency"))
                                             for o in bare)


def test_batch_script_runs_the_worker_with_exact_paths(tmp_path: Path):
    manifest = tmp_path / "it's a dir" / "submit_1.json"
    text = batch_script("/opt/my python/bin/python3", manifest, "run")
    assert text.startswith("#!/bin/sh\n")
    exec_line = text.splitlines()[-1]
    assert shlex.split(exec_line) == ["exec", "/opt/my python/bin/python3", "-m",
                                      "aorta.run.executors.slurm.worker", str(manifest)]


def test_job_name_tells_run_directories_apart(tmp_path: Path):
    a, b = tmp_path / "one" / "run", tmp_path / "two" / "run"
    assert job_name(a).startswith("aorta-run-") and job_name(a) != job_name(b)
    assert job_name(a) == job_name(a)


def test_squeue_and_sacct_lines_are_read_and_junk_is_skipped():
    squeue = parse_squeue("12_0|RUNNING|None|node07\n12_1|PENDING|JobArrayTaskLimit|\n"
                          "garbage line\n|||\n13|COMPLETING|None|node02\n")
    assert squeue["12_0"] == JobState("12_0", "RUNNING", None, "node07")
    assert (squeue["12_1"].phase, squeue["12_1"].reason, squeue["12_1"].node) == \
        ("queued", "JobArrayTaskLimit", None)
    assert squeue["13"].phase == "running" and len(squeue) == 3
    sacct = parse_sacct("12_2|CANCELLED by 0|0:15|None|node07\n12_[3-9]|PENDING|0:0|None|"
                        "None assigned\n12_4|TIMEOUT|0:0|None|node01\n12_5|FAILED|127:0\n")
    assert sacct["12_2"] == JobState("12_2", "CANCELLED", None, "node07", "0:15")
    assert sacct["12_4"].phase == "ended" and set(sacct) == {"12_2", "12_4"}


def test_a_spec_survives_the_manifest(tmp_path: Path):
    collectors = {"cprofile": get("cprofile").validate({"sort": "cumulative"})}
    spec = TrialSpec(cell="fp32", index=3, run_dir=tmp_path,
                     command=("python", "b.py", "--n", "2"), env={"A": "1"},
                     collectors=collectors, env_mode="clean", timeout=12.5, grace=2.0,
                     baseline=True)
    manifest, secrets = _manifest(tmp_path, [spec], "driver-host")
    host, trials = read_manifest(manifest)
    again = spec_from_json(json.loads(json.dumps(trials[0])))
    assert host == "driver-host" and again == spec and secrets == {}
    assert spec.trial_dir == tmp_path / "cells/fp32/baseline_3"
    assert spec_to_json(again)["collectors"] == {"cprofile": {"sort": "cumulative"}}


def test_a_manifest_holds_no_credential_and_the_job_gets_them_from_its_environment(
        tmp_path: Path):
    spec = TrialSpec(cell="c", index=0, run_dir=tmp_path,
                     command=("python", "b.py", "--api-key=sk-abcdefghijklmnopqrstuvwxyz",
                              "--token", "tok-12345678"),
                     env={"HF_TOKEN": "hf-secret-value", "DB": "postgres://u:pw123456@h/d",
                          "N": "1"}, collectors={})
    manifest, secrets = _manifest(tmp_path, [spec], "h")
    text = manifest.read_text()
    for secret in ("sk-abcdefghijklmnopqrstuvwxyz", "tok-12345678", "hf-secret-value",
                   "pw123456"):
        assert secret not in text
    assert sorted(secrets.values()) == sorted(["--api-key=sk-abcdefghijklmnopqrstuvwxyz",
                                               "tok-12345678", "hf-secret-value",
                                               "postgres://u:pw123456@h/d"])
    _, trials = read_manifest(manifest)
    assert spec_from_json(trials[0], secrets) == spec
    with pytest.raises(UserError, match="AORTA_SECRET_.* is not in the job's environment"):
        spec_from_json(trials[0], {})


def test_a_manifest_of_another_version_is_refused(tmp_path: Path):
    path = tmp_path / "m.json"
    write_json(path, {"schema_version": 99, "trials": []})
    with pytest.raises(ValueError, match="not a version-1 aorta Slurm manifest"):
        read_manifest(path)
    worker = _worker(path, 0)
    assert worker.wait(timeout=60) == 2
    assert worker.stderr.read().startswith("aorta: error: cannot run task 0 of ")


def test_a_worker_whose_task_is_not_in_the_manifest_says_so_in_one_line(tmp_path: Path):
    manifest, _ = _manifest(tmp_path, [_spec(tmp_path, 0, ["true"])], "h")
    worker = _worker(manifest, 5)
    assert worker.wait(timeout=60) == 2
    err = worker.stderr.read()
    assert err.count("\n") == 1 and "cannot run task 5" in err and "Traceback" not in err


def test_worker_runs_its_array_task_and_snapshots_a_node_other_than_the_drivers(
        tmp_path: Path, payload):
    script = payload("import os, sys; print(sys.argv[1], os.environ['MODE'])")
    away_run = tmp_path / "away"
    specs = [_spec(away_run, i, [sys.executable, str(script), f"t{i}"]) for i in range(2)]
    away, _ = _manifest(away_run, specs, "some-other-host")
    proc = _worker(away, 1)
    assert proc.wait(timeout=60) == 0, proc.stderr.read()
    away_cell = away_run / "cells" / "c"
    assert not (away_cell / "trial_0").exists()   # task 1 runs the second trial only
    result = json.loads((away_cell / "trial_1/result.json").read_text())
    assert (result["verdict"], result["host"]) == ("pass", socket.gethostname())
    assert (away_cell / "trial_1/stdout.log").read_text() == "t1 x\n"
    node_env = json.loads((away_cell / "trial_1/node_env.json").read_text())
    assert node_env["host"]["hostname"] == socket.gethostname()

    here_run = tmp_path / "here"
    here, _ = _manifest(here_run, [_spec(here_run, 0, specs[0].command)], socket.gethostname())
    assert _worker(here, 0).wait(timeout=60) == 0
    assert (here_run / "cells/c/trial_0/result.json").exists()
    assert not (here_run / "cells/c/trial_0/node_env.json").exists()


def test_slurms_sigterm_stops_the_payload_and_leaves_no_result(tmp_path: Path, payload):
    pid_file = tmp_path / "pid"
    script = payload(f"""
        import os, time
        open({str(pid_file)!r}, "w").write(str(os.getpid()))
        time.sleep(60)
    """)
    manifest, _ = _manifest(tmp_path, [_spec(tmp_path, 0, [sys.executable, str(script)])],
                            socket.gethostname())
    worker = _worker(manifest, 0)
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    payload_pid = int(pid_file.read_text())
    worker.send_signal(signal.SIGTERM)   # what scancel or a time limit sends
    assert worker.wait(timeout=30) == 143
    assert "stopped by Slurm (SIGTERM)" in worker.stderr.read()
    assert not (tmp_path / "cells/c/trial_0/result.json").exists()
    with pytest.raises(ProcessLookupError):
        os.kill(payload_pid, 0)


def test_gpu_pin_comes_only_from_a_slurm_gpu_allocation(tmp_path: Path):
    spec = _spec(tmp_path, 0, ["true"])
    assert pin_slurm_gpus(spec, {"CUDA_VISIBLE_DEVICES": "3"}) == spec   # exported from the driver
    pinned = pin_slurm_gpus(spec, {"SLURM_JOB_GPUS": "2,5", "CUDA_VISIBLE_DEVICES": "0,1",
                                   "ROCR_VISIBLE_DEVICES": ""})
    assert (dict(pinned.device_env), pinned.device) == ({"CUDA_VISIBLE_DEVICES": "0,1"}, "2,5")


def test_a_lost_job_becomes_an_error_record_with_slurms_reason(tmp_path: Path):
    logs = tmp_path / "slurm"
    logs.mkdir()
    (logs / "7_1.err").write_text("slurmstepd: error: *** JOB 9 ON n1 CANCELLED AT 2026-01-01 "
                                  "DUE TO TIME LIMIT ***\n")
    spec = TrialSpec(cell="c", index=1, run_dir=tmp_path,
                     command=("bench",), env={"API_TOKEN": "s3cret", "N": "1"}, collectors={})
    result = lost_result(spec, "7_1", JobState("7_1", "TIMEOUT", None, "n1", "0:15"), logs)
    on_disk = trial_result(tmp_path, "c", 1)
    assert on_disk == result.to_json()
    assert result.verdict == "error" and result.host == "n1"
    assert result.reason == ("Slurm job 7_1 hit its Slurm time limit (raise executor.time) "
                             "[exit 0:15, node n1] without a result")
    assert "TIME LIMIT" in result.stderr_tail
    assert result.env_overlay == {"API_TOKEN": "<redacted>", "N": "1"}
    assert "neither squeue nor sacct" in describe_end("8_0", None)
    assert "ended in state SPECIAL_EXIT" in describe_end("8_0", JobState("8_0", "SPECIAL_EXIT"))


def test_status_of_a_local_run_and_of_slurm_jobs_that_were_cancelled_or_never_ran(
        tmp_path: Path):
    out = tmp_path / "out"
    recipe = write_recipe(tmp_path, "schema_version: 1\nticket: st\ntrials: 2\n"
                                    "axes: {v: {a: {}, b: {}}}\n")
    proc = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(out), "--",
                     sys.executable, "-c", "import os, sys; sys.exit(os.environ.get('X') == '1')")
    assert proc.returncode == 0, proc.stderr
    run_dir = out / "st"
    (run_dir / "cells/b/trial_1/result.json").unlink()
    doc = json.loads((run_dir / "run.json").read_text())
    doc["executor"] = {"kind": "slurm",
                       "jobs": {"cells/b/trial_1": {"job": "99999998_1", "cancelled": True}}}
    doc["trials_per_cell"] = 3   # a third trial that nothing ran yet
    write_json(run_dir / "run.json", doc)
    status = run_aorta("sweep", "status", str(run_dir))
    assert status.returncode == 0, status.stderr
    assert status.stdout.splitlines()[1] == \
        "6 trial(s): 3 complete (3 pass), 1 cancelled, 2 not started"
    rows = [line.split()[:5] for line in status.stdout.splitlines()[3:]]
    assert rows == [["a", "trial_0", "complete", "pass", "-"],
                    ["a", "trial_1", "complete", "pass", "-"],
                    ["a", "trial_2", "not", "started", "-"],
                    ["b", "trial_0", "complete", "pass", "-"],
                    ["b", "trial_1", "cancelled", "-", "99999998_1"],
                    ["b", "trial_2", "not", "started", "-"]]
    as_json = json.loads(run_aorta("sweep", "status", "--json", str(run_dir)).stdout)
    assert as_json["counts"] == {"complete": 3, "cancelled": 1, "not started": 2}


_QUEUE_TOOLS = {
    # squeue answers, but neither it nor sacct knows the job any more
    "forgotten": ({"squeue": "exit 0", "sacct": "exit 0"}, "lost",
                  "neither squeue nor sacct knows it"),
    # the controller is down: nothing can be concluded about the job
    "no controller": ({"squeue": "echo 'slurm_load_jobs error: Unable to contact slurm "
                                 "controller (connect failure)' >&2; exit 1"}, "unknown",
                      "squeue failed"),
    "no squeue": ({}, "unknown", "squeue is not on PATH"),
}


@pytest.mark.parametrize("case", _QUEUE_TOOLS)
def test_status_of_a_job_slurm_cannot_account_for(tmp_path: Path, case: str):
    """The queue's tools are stand-ins, so each case is tested whatever Slurm is installed."""
    tools, state, said = _QUEUE_TOOLS[case]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in tools.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    run_dir = tmp_path / "r"
    jobs = {"cells/c/trial_0": {"job": "99999997_0"}}
    write_json(run_dir / "run.json", {"schema_version": 2, "run": "r", "status": "running",
                                      "command": ["x"], "cells": ["c"], "trials_per_cell": 1,
                                      "slurm": {"jobs": jobs}})
    env = {**os.environ, "PATH": f"{bin_dir}:{Path(sys.executable).parent}"}
    shown = json.loads(run_aorta("sweep", "status", "--json", str(run_dir), env=env).stdout)
    trial = shown["trials"][0]
    assert trial["state"] == state
    assert said in (trial.get("reason") or "") + (shown.get("note") or "")


def test_status_of_something_that_is_not_a_run(tmp_path: Path):
    proc = run_aorta("sweep", "status", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"aorta: error: {tmp_path}: not an aorta run directory (no " \
                                  f"run.json)"


def test_slurm_executor_without_sbatch_is_refused_before_anything_runs(tmp_path: Path):
    env = {**os.environ, "PATH": str(Path(sys.executable).parent)}
    proc = run_aorta("sweep", "run", "--executor", "slurm", "--output", str(tmp_path / "o"),
                     "--", sys.executable, "-c", "pass", env=env)
    assert proc.returncode == 2
    assert "--executor slurm: sbatch is not on PATH" in proc.stderr
    assert not (tmp_path / "o").exists()


def test_a_job_stopped_by_a_full_disk_stops_the_run_and_records_nothing(tmp_path: Path):
    """Issue 24: a trial the disk decided is not an `error` record; resume runs it again."""
    logs = tmp_path / "slurm"
    logs.mkdir()
    line = "no space left on device writing /r/cells/c/trial_1/stdout.log: what finished is kept"
    (logs / "7_1.err").write_text(f"aorta: error: {line}\n")
    spec = TrialSpec(cell="c", index=1, run_dir=tmp_path, command=("bench",), env={},
                     collectors={})
    with pytest.raises(DiskFullError, match=f"^{line}$"):
        lost_result(spec, "7_1", JobState("7_1", "FAILED", None, "n1", "2:0"), logs)
    assert not (tmp_path / "cells" / "c" / "trial_1" / "result.json").exists()
