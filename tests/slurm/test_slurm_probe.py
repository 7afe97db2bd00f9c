"""The probe job through a real Slurm (issue 14): a Slurm sweep's collectors are checked on a
node, in the job's environment after its setup scripts, not on the driver's host. A refusal
names the node and its reason, and leaves no job of the sweep queued."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aorta.run.executors.slurm.executor import job_name
from aorta_testing import REPO, run_aorta, trial_result, write_recipe
from standins import path_setup, standin_tools

pytestmark = [pytest.mark.slurm, pytest.mark.usefixtures("slurm"),
              pytest.mark.skipif(os.path.exists("/dev/nvidiactl"),
                                 reason="a real NVIDIA GPU answers instead of the stand-in")]


def _env(path_first: Path | None = None) -> dict[str, str]:
    """The driver's environment: without ncu on PATH unless `path_first` holds one."""
    env = dict(os.environ)
    env.pop("NCU_BIN", None)
    if path_first is not None:
        env["PATH"] = f"{path_first}{os.pathsep}{env['PATH']}"
    return env


def _queued(run_dir: Path) -> list[str]:
    out = subprocess.run(["squeue", "-h", "-r", f"--name={job_name(run_dir)}", "-o", "%i %T"],
                         capture_output=True, text=True, timeout=30, check=True).stdout
    return out.splitlines()


def _slurm_record(run_dir: Path) -> dict:
    return json.loads((run_dir / "run.json").read_text())["executor"]


def _sweep(tmp_path: Path, recipe: Path, env: dict[str, str], *extra: str
           ) -> subprocess.CompletedProcess[str]:
    return run_aorta("sweep", "run", "--recipe", str(recipe), "--output",
                     str(tmp_path / "out"), *extra, "--", sys.executable, "-c", "print('hi')",
                     cwd=tmp_path, env=env)


def test_a_tool_only_the_jobs_setup_provides_is_checked_on_the_node(tmp_path: Path):
    tools = standin_tools(tmp_path / "modules" / "ncu" / "bin")
    path_setup(tmp_path / "load_ncu.sh", tools)
    recipe = write_recipe(tmp_path, """
        schema_version: 1
        ticket: onnode
        trials: 2
        collect: [ncu]
        executor: {kind: slurm, setup: [load_ncu.sh], probe_timeout: 120}
    """)
    local = run_aorta("sweep", "run", "--executor", "local", "--recipe", str(recipe),
                      "--output", str(tmp_path / "local"), "--", sys.executable, "-c", "pass",
                      cwd=tmp_path, env=_env())
    assert local.returncode == 2 and "'ncu' is not on PATH" in local.stderr

    proc = _sweep(tmp_path, recipe, _env())
    assert proc.returncode == 0, proc.stderr
    run_dir = tmp_path / "out" / "onnode"
    probe = _slurm_record(run_dir)["probe"]
    assert probe["ok"] is True and probe["problem"] is None and probe["collectors"] == ["ncu"]
    assert probe["lines"][0].startswith("ok  ncu 2025.3.1.0")
    assert f"the collectors can measure on Slurm node {probe['node']} (probe job " \
           f"{probe['job']}): ncu 2025.3.1.0" in proc.stderr
    for index in range(2):
        result = trial_result(run_dir, "default", index)
        assert result["captures"]["ncu"]["resolved"]["ncu_binary"] == str(tools / "ncu")
        log = run_dir / "cells" / "default" / f"trial_{index}" / "ncu" / "ncu.log"
        assert log.read_text().startswith("==PROF== stand-in ncu ran on")
    script = (run_dir / "slurm" / "submit_1.sh").read_text()
    assert f"\n. {tmp_path / 'load_ncu.sh'} || {{" in script


def test_a_node_that_cannot_measure_refuses_the_sweep_with_its_reason(tmp_path: Path):
    tools = standin_tools(tmp_path / "bin")                         # the driver has a GPU...
    hidden = standin_tools(tmp_path / "nogpu", ncu=False, gpu=False)  # ...the node does not
    path_setup(tmp_path / "node.sh", hidden)
    recipe = write_recipe(tmp_path, """
        schema_version: 1
        ticket: refused
        collect: [ncu]
        executor: {kind: slurm, setup: [node.sh]}
    """)
    doctor = run_aorta("doctor", "--collect", "ncu", env=_env(tools))
    assert doctor.returncode == 0, doctor.stdout

    proc = _sweep(tmp_path, recipe, _env(tools))
    assert proc.returncode == 2, proc.stderr
    run_dir = tmp_path / "out" / "refused"
    probe = _slurm_record(run_dir)["probe"]
    error = proc.stderr.strip().splitlines()[-1]
    assert error == (f"aorta: error: collector ncu cannot measure on Slurm node {probe['node']} "
                     f"(probe job {probe['job']}): no NVIDIA GPU here (nvidia-smi -L lists no "
                     f"GPU); run on a machine with an NVIDIA GPU; no trial was submitted")
    on_node = run_aorta("doctor", "--collect", "ncu",
                        env=_env(Path(f"{hidden}{os.pathsep}{tools}")))
    assert on_node.returncode == 2 and probe["lines"] == on_node.stdout.splitlines()
    for line in probe["lines"]:
        assert f"aorta:   {line}" in proc.stderr
    assert probe["ok"] is False and _slurm_record(run_dir)["submissions"] == []
    assert not list((run_dir / "slurm").glob("submit_*")) and _queued(run_dir) == []
    assert not (run_dir / "cells").exists() or not any((run_dir / "cells").iterdir())


def test_a_setup_script_that_fails_on_the_node_is_named(tmp_path: Path):
    (tmp_path / "broken.sh").write_text("module load rocm/6.2 2>/dev/null\n")
    recipe = write_recipe(tmp_path, """
        schema_version: 1
        ticket: badsetup
        collect: [cprofile]
        executor: {kind: slurm, setup: [broken.sh]}
    """)
    proc = _sweep(tmp_path, recipe, _env())
    assert proc.returncode == 2
    assert "without an answer; its stderr ends: 'aorta: error: executor.setup script " \
           f"{tmp_path / 'broken.sh'} failed (exit 127)'" in proc.stderr
    run_dir = tmp_path / "out" / "badsetup"
    assert _queued(run_dir) == [] and _slurm_record(run_dir)["submissions"] == []


def test_a_probe_that_waits_too_long_is_cancelled(tmp_path: Path):
    recipe = write_recipe(tmp_path, """
        schema_version: 1
        ticket: waits
        collect: [cprofile]
        executor: {kind: slurm, probe_timeout: 3, sbatch_args: [--begin=now+1hour]}
    """)
    proc = _sweep(tmp_path, recipe, _env())
    assert proc.returncode == 2
    assert "gave no answer within 3 s; it was PENDING (BeginTime); it is cancelled and no " \
           "trial was submitted: raise executor.probe_timeout" in proc.stderr
    run_dir = tmp_path / "out" / "waits"
    assert _queued(run_dir) == [] and _slurm_record(run_dir)["submissions"] == []


PENDING_PROBE = """
    schema_version: 1
    ticket: stopped
    collect: [cprofile]
    executor: {kind: slurm, probe_timeout: 3, sbatch_args: [--begin=now+1hour]}
"""


def _driver_while_the_probe_waits(tmp_path: Path, recipe: Path) -> subprocess.Popen[str]:
    """A driver in the background, once its probe job waits in the queue."""
    env = _env()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "src"), env.get("PYTHONPATH")]))
    log = tmp_path / "driver.err"
    with open(log, "w") as err:
        driver = subprocess.Popen(
            [sys.executable, "-m", "aorta", "sweep", "run", "--recipe", str(recipe), "--output",
             str(tmp_path / "out"), "--", sys.executable, "-c", "pass"], cwd=tmp_path, env=env,
            stdout=subprocess.DEVNULL, stderr=err, text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while "probe job" not in log.read_text() or not _queued(tmp_path / "out" / "stopped"):
            assert time.monotonic() < deadline and driver.poll() is None, log.read_text()
            time.sleep(0.1)
    except BaseException:
        driver.kill()
        driver.wait(timeout=30)
        raise
    return driver


def test_ctrl_c_while_the_probe_waits_leaves_nothing_queued(tmp_path: Path):
    recipe = write_recipe(tmp_path, PENDING_PROBE.replace("probe_timeout: 3", "probe_timeout: 60"))
    driver = _driver_while_the_probe_waits(tmp_path, recipe)
    run_dir = tmp_path / "out" / "stopped"
    try:
        driver.send_signal(signal.SIGINT)
        assert driver.wait(timeout=60) == 130, (tmp_path / "driver.err").read_text()
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait(timeout=30)
    assert _queued(run_dir) == [] and _slurm_record(run_dir)["submissions"] == []


def test_a_killed_drivers_probe_is_cancelled_by_the_next_driver(tmp_path: Path):
    recipe = write_recipe(tmp_path, PENDING_PROBE.replace("probe_timeout: 3", "probe_timeout: 60"))
    driver = _driver_while_the_probe_waits(tmp_path, recipe)
    driver.kill()
    driver.wait(timeout=30)
    run_dir = tmp_path / "out" / "stopped"
    try:
        first = _slurm_record(run_dir)["probe"]["job"]
        assert [line.split()[0] for line in _queued(run_dir)] == [first]
        write_recipe(tmp_path, PENDING_PROBE)   # the rerun's own probe times out at once
        proc = run_aorta("sweep", "run", "--recipe", str(recipe), "--output",
                         str(tmp_path / "out"), "--", sys.executable, "-c", "pass",
                         cwd=tmp_path, env=_env())
        assert proc.returncode == 2 and "gave no answer within 3 s" in proc.stderr, proc.stderr
        assert _slurm_record(run_dir)["probe"]["job"] != first and _queued(run_dir) == []
    finally:
        subprocess.run(["scancel", f"--name={job_name(run_dir)}"], timeout=30, check=False)


def test_skip_remote_probe_submits_without_the_check(tmp_path: Path):
    """The documented risk: what the probe would have refused fails every trial instead
    (cprofile cannot wrap `python -c`)."""
    recipe = write_recipe(tmp_path, """
        schema_version: 1
        ticket: skipped
        collect: [cprofile]
        executor: {kind: slurm}
    """)
    proc = _sweep(tmp_path, recipe, _env(), "--skip-remote-probe")
    assert proc.returncode == 3, proc.stderr      # no trial passed
    run_dir = tmp_path / "out" / "skipped"
    assert "probe" not in _slurm_record(run_dir) and "probe job" not in proc.stderr
    assert not list((run_dir / "slurm").glob("probe_*"))
    result = trial_result(run_dir, "default", 0)
    assert result["verdict"] == "error" and "cprofile: cannot wrap" in result["reason"]
