"""The remote probe's parts that need no Slurm: the node's answer (the probe module run for
real, as the probe job runs it), how the driver words a refusal, the batch script's setup
lines (run for real under bash), and the strict recipe keys."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from aorta.collectors.registry import get
from aorta.base.errors import SetupError
from aorta.run.executors.slurm.preflight import judge_answer
from aorta.run.executors.slurm.executor import batch_script
from aorta.run.executors.base import Executor
from aorta.run.executors.local import LocalExecutor, LocalOptions
from aorta.run.executors.slurm.executor import SlurmExecutor
from aorta.run.executors.slurm.options import SlurmOptions
from aorta.run.executors.slurm.script import job_script, setup_files
from aorta.run.executors.slurm.worker import write_manifest
from aorta.run.trial import TrialSpec
from aorta.store.run_dir import RunStore
from aorta_testing import REPO, run_aorta, write_recipe
from standins import standin_tools

needs_no_nvidia = pytest.mark.skipif(os.path.exists("/dev/nvidiactl"),
                                     reason="a real NVIDIA GPU answers instead of the stand-in")


def _env(path_first: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "src"), env.get("PYTHONPATH")]))
    env.pop("NCU_BIN", None)
    if path_first is not None:
        env["PATH"] = f"{path_first}{os.pathsep}{env['PATH']}"
    return env


def _probe(run_dir: Path, collectors: dict[str, dict], command: list[str],
           env: dict[str, str]) -> dict:
    """Run `python -m aorta.run.executors.slurm.probe` on a one-trial manifest; its answer."""
    spec = TrialSpec(cell="c", index=0, run_dir=run_dir, command=tuple(command), env={},
                     collectors={n: get(n).validate(o) for n, o in collectors.items()})
    run_dir.mkdir(parents=True, exist_ok=True)
    write_manifest(RunStore(run_dir), "probe_1.json", [spec], "driver-host", {})
    proc = subprocess.run([sys.executable, "-m", "aorta.run.executors.slurm.probe",
                           str(run_dir / "slurm" / "probe_1.json"), "probe_1.answer.json"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads((run_dir / "slurm" / "probe_1.answer.json").read_text())


def _doctor(names: str, env: dict[str, str]) -> tuple[int, list[str]]:
    proc = run_aorta("doctor", "--collect", names, env=env)
    return proc.returncode, proc.stdout.splitlines()


@needs_no_nvidia
def test_the_node_answers_exactly_as_doctor_does_there(tmp_path: Path):
    tools = standin_tools(tmp_path / "bin")
    env = _env(tools)
    answer = _probe(tmp_path / "run", {"ncu": {}}, [sys.executable, "-c", "pass"], env)
    code, lines = _doctor("ncu", env)
    assert code == 0 and answer["lines"] == lines
    assert answer["ok"] is True and answer["node"] == os.uname().nodename
    assert answer["rows"][0]["check"] == "ncu" and answer["rows"][0]["version"] == "2025.3.1.0"
    assert judge_answer(answer, "7") == (answer["node"], None)


@needs_no_nvidia
def test_a_collector_the_node_cannot_use_is_refused_in_doctors_words(tmp_path: Path):
    tools = standin_tools(tmp_path / "bin", gpu=False)
    env = _env(tools)
    answer = _probe(tmp_path / "run", {"ncu": {}}, [sys.executable, "-c", "pass"], env)
    code, lines = _doctor("ncu", env)
    assert code == 2 and answer["lines"] == lines
    assert answer["ok"] is False and answer["refused"] == "ncu"
    node, refusal = judge_answer(answer, "42")
    assert refusal == (f"collector ncu cannot measure on Slurm node {node} (probe job 42): "
                       f"no NVIDIA GPU here (nvidia-smi -L lists no GPU); run on a machine "
                       f"with an NVIDIA GPU; no trial was submitted")


def test_a_command_the_collector_cannot_wrap_on_the_node_is_refused(tmp_path: Path):
    answer = _probe(tmp_path / "run", {"cprofile": {}}, ["/bin/true"], _env())
    assert answer["ok"] is False and answer["refused"] is None
    node, refusal = judge_answer(answer, "9")
    assert refusal is not None and refusal.startswith(f"on Slurm node {node} (probe job 9): "
                                                      f"cprofile: needs a Python script launch")


def test_an_unreadable_manifest_is_an_answer_too(tmp_path: Path):
    (tmp_path / "run" / "slurm").mkdir(parents=True)
    manifest = tmp_path / "run" / "slurm" / "probe_1.json"
    manifest.write_text('{"schema_version": 99}')
    proc = subprocess.run([sys.executable, "-m", "aorta.run.executors.slurm.probe", str(manifest),
                           "probe_1.answer.json"], env=_env(), capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    answer = json.loads((manifest.parent / "probe_1.answer.json").read_text())
    node, refusal = judge_answer(answer, "5")
    assert refusal is not None and "could not check the collectors on Slurm node" in refusal
    assert "not a version-1 aorta Slurm manifest" in refusal


@pytest.mark.parametrize("answer", [None, [], {"schema_version": 2, "aorta_version": "9.0"}])
def test_an_answer_of_another_aorta_is_refused(answer):
    node, refusal = judge_answer(answer, "3")
    assert node is None and refusal is not None and "cannot read" in refusal


def test_setup_scripts_run_in_order_before_the_payload_with_exact_paths(tmp_path: Path):
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash on this machine")
    odd = tmp_path / "it's $HOME `x`; dir"
    odd.mkdir()
    first, second = odd / "one.sh", odd / "two words.sh"
    first.write_text('export AORTA_TEST_SETUP="one"\n')
    second.write_text('export AORTA_TEST_SETUP="$AORTA_TEST_SETUP two"\n')
    script = tmp_path / "job.sh"
    script.write_text(job_script(["a test"], [str(first), str(second)],
                                 [sys.executable, "-c", "import os; print(os.environ['AORTA_TEST_SETUP'])"]))
    assert script.read_text().startswith("#!/bin/bash\n")
    proc = subprocess.run([bash, str(script)], capture_output=True, text=True, timeout=30)
    assert (proc.returncode, proc.stdout.strip()) == (0, "one two"), proc.stderr


def test_a_failing_setup_script_ends_the_job_before_aorta_starts(tmp_path: Path):
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash on this machine")
    setup = tmp_path / "setup.sh"
    setup.write_text("false\n")
    marker = tmp_path / "ran"
    script = tmp_path / "job.sh"
    script.write_text(job_script([], [str(setup)], ["touch", str(marker)]))
    proc = subprocess.run([bash, str(script)], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and not marker.exists()
    assert proc.stderr.strip() == f"aorta: error: executor.setup script {setup} failed (exit 1)"


def test_without_setup_the_batch_script_stays_posix_sh(tmp_path: Path):
    assert batch_script("/usr/bin/python3", tmp_path / "m.json", "r").startswith("#!/bin/sh\n")
    with_setup = batch_script("/usr/bin/python3", tmp_path / "m.json", "r", ["/s/env.sh"])
    assert with_setup.startswith("#!/bin/bash\n") and "\n. /s/env.sh || {" in with_setup


def test_setup_files_are_taken_from_the_working_directory_and_checked(tmp_path: Path):
    (tmp_path / "env.sh").write_text("true\n")
    assert setup_files(["env.sh"], tmp_path) == (str(tmp_path / "env.sh"),)
    with pytest.raises(SetupError, match=r"executor.setup: .*missing.sh: No such file"):
        setup_files(["missing.sh"], tmp_path)
    with pytest.raises(SetupError, match="is not a regular file"):
        setup_files([str(tmp_path)], tmp_path)


@pytest.mark.parametrize("executor, words", [
    ("{kind: local, setup: [env.sh]}", "executor.setup: unknown key; allowed: gpus, kind"),
    ("{kind: local, remote_probe: false}", "executor.remote_probe: unknown key; allowed: gpus"),
    ("{kind: kubernetes}", "executor.kind: 'kubernetes' is not one of local, slurm"),
    ("{kind: slurm, gpus: all}", "gpus applies to kind: local; for Slurm use gpus_per_trial"),
    ("{kind: slurm, probe_timeout: 0}", "executor.probe_timeout"),
    ("{kind: slurm, remote_probe: 'no'}", "executor.remote_probe"),
    ("{kind: slurm, setup: env.sh}", "executor.setup"),
    ("{kind: slurm, setup: ['']}", "an entry is empty"),
    ('{kind: slurm, setup: ["a\\nb.sh"]}', "not a usable path"),
    ("{kind: slurm, probe_timeout: .inf}", "executor.probe_timeout"),
])
def test_the_new_executor_keys_are_strict(tmp_path: Path, executor: str, words: str):
    recipe = write_recipe(tmp_path, f"""
        schema_version: 1
        executor: {executor}
    """)
    proc = run_aorta("sweep", "plan", "--recipe", str(recipe), "--", "true", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert words in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_skip_remote_probe_is_for_slurm_only():
    proc = run_aorta("sweep", "plan", "--skip-remote-probe", "--", "true")
    assert proc.returncode == 2 and "(--executor slurm)" in proc.stderr
    assert "applies only to an executor that checks the collectors on a remote node" in \
        proc.stderr


@pytest.mark.slurm     # its second half needs Slurm's commands
def test_a_tool_missing_on_the_driver_is_left_to_the_node_only_for_slurm(tmp_path: Path):
    spec = TrialSpec(cell="c", index=0, run_dir=tmp_path, command=("/bin/true",), env={},
                     collectors={"ncu": get("ncu").validate({})})
    caller = {"PATH": str(tmp_path)}   # no ncu here
    with pytest.raises(SetupError, match="'ncu' is not on PATH"):
        Executor.preflight(LocalExecutor(LocalOptions()), None, spec, caller)  # type: ignore
    if shutil.which("sbatch") is None:
        pytest.skip("Slurm's commands are not installed (bash scripts/slurm-local.sh)")
    slurm = SlurmExecutor(SlurmOptions(), note=lambda line: None)
    launch, notes = slurm.preflight(None, spec, caller)  # type: ignore[arg-type]
    assert launch.argv == ("/bin/true",)
    assert len(notes) == 1 and "a probe job checks them on a node" in notes[0]
