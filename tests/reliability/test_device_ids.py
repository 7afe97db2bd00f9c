"""Device ids (`--gpus`, `executor.gpus`) and collector lists (`--collect`) from the outside:
on a host whose `nvidia-smi -L` lists two GPUs (one split into MIG instances), every id that
names one of them is accepted and pinned; every other value, and any id on a host without a
GPU, is refused with one line and exit 2 before anything is written."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from aorta_testing import fake_nvidia_smi, run_aorta, trial_result, write_recipe

MIG = "MIG-7f5e1b5c-2d3e-6f70-9bac-1d2e3f4a5b6c"


@pytest.mark.parametrize("gpus", ["0", "1", "0,1", "GPU-0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5",
                                  MIG, f"1,{MIG}", "all"])
def test_devices_present_are_accepted_and_pinned(tmp_path: Path, gpus: str):
    proc = run_aorta("sweep", "run", "--gpus", gpus, "--trials", "1", "--collect", "none",
                     "--output", str(tmp_path / "o"), "--", "true",
                     env=fake_nvidia_smi(tmp_path / "bin"))
    assert proc.returncode == 0, proc.stderr
    device = trial_result(tmp_path / "o" / "adhoc", "default", 0)["device"]
    assert device in (["0", "1"] if gpus == "all" else gpus.split(","))


@pytest.mark.parametrize("gpus, why", [
    ("9", "no device 9 here"), ("0,9", "no device 9 here"),
    ("GPU-0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f6", "no device GPU-0c1d2e3f"),
    ("MIG-6e4d0a4b-1c2d-5e6f-8a9b-0c1d2e3f4a5c", "no device MIG-6e4d0a4b"),
    ("MIG-GPU-5a4c2c5e-0b1d-8a3e-7f21-3c9d4e5f6a7b/1/2", "no device MIG-GPU"),
    ("1,GPU-0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5", "two ids name one GPU"),
    ("ALL", "is not a device id"), ("1e3", "is not a device id"), ("MIG-xyz/1/2", "not a device"),
    (" 0", "is not a device id"), ("0,,1", "is not a device id"), ("0, 1", "is not a device id"),
    ("", "is not a device id"), (",", "is not a device id"), ("00", "is not a device id"),
    ("-1", "is not a device id"), ("1" * 26, "is not a device id"), ("1,1", "listed twice"),
])
def test_devices_absent_or_misspelt_are_refused_before_anything_is_written(
        tmp_path: Path, gpus: str, why: str):
    proc = run_aorta("sweep", "run", "--gpus", gpus, "--trials", "1", "--collect", "none",
                     "--output", str(tmp_path / "o"), "--", "true",
                     env=fake_nvidia_smi(tmp_path / "bin"))
    assert proc.returncode == 2 and why in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    if "here" in why or "one GPU" in why:     # the line names the devices that exist
        assert "0 = GPU-5a4c2c5e" in proc.stderr and MIG in proc.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("listing, code, why", [
    ("", 0, "nvidia-smi -L lists no GPU"),
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", 9,
     "couldn't communicate with the NVIDIA driver"),
    (None, 0, "could not start nvidia-smi"),
])
def test_a_host_without_a_gpu_refuses_any_device(tmp_path: Path, listing, code, why):
    recipe = write_recipe(tmp_path, "schema_version: 1\nexecutor: {gpus: [0]}\n")
    env = fake_nvidia_smi(tmp_path / "bin", listing or "", code)
    if listing is None:
        env["PATH"] = str(tmp_path / "empty")
    for gpus in (["--recipe", str(recipe)], ["--gpus", "all"]):
        proc = run_aorta("sweep", "run", *gpus, "--output", str(tmp_path / "o"), "--collect",
                         "none", "--", sys.executable, "-c", "pass", env=env)
        assert proc.returncode == 2, proc.stderr
        assert "no GPU found on this host" in proc.stderr and why in proc.stderr
        assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("collect", ["", ",", " , ", "cprofile,", ",cprofile", "cprofile, torch",
                                     "none,cprofile", "NONE", "cprofile,cprofile"])
def test_collect_values_that_name_no_collector_are_refused(tmp_path: Path, collect: str):
    proc = run_aorta("sweep", "run", "--collect", collect, "--trials", "1",
                     "--output", str(tmp_path / "o"), "--", sys.executable, "-c", "pass")
    assert proc.returncode == 2 and proc.stderr.startswith("aorta: error: --collect: "), \
        proc.stderr
    assert proc.stderr.count("\n") == 1 and not (tmp_path / "o").exists()
