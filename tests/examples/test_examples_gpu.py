"""The examples on a real GPU, through the commands their READMEs give (marked `gpu`).

Each test runs an example's README command with two substitutions, so that it is hermetic:
`--output` points into the test's temporary directory, and `python` is this interpreter (the
one with torch and Triton). Native payloads are built first with the README's own compiler
command, into the temporary directory instead of /tmp. The assertions are the "What to expect"
figures of each README: exact launch counts, positive GPU times, the right kernel names.

Every test skips, saying why, where its GPU, vendor or tool is missing; a capture that a host
cannot produce for a documented reason (no counter access for ncu, an nsys without its
importer) skips with aorta's own capture reason rather than passing.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from aorta.collectors.binaries import gpu_vendor
from examples_catalog import ROOT, Example, aorta_command, commands, section
from aorta_testing import flat_metrics

pytestmark = pytest.mark.gpu

CHILD_TIMEOUT_S = 600
VENDOR = gpu_vendor()
HAS_TORCH = importlib.util.find_spec("torch") is not None
HAS_TRITON = importlib.util.find_spec("triton") is not None

needs_gpu = pytest.mark.skipif(VENDOR is None, reason="no GPU (/dev/kfd, /dev/nvidiactl, "
                                                      "nvidia-smi)")
needs_nvidia = pytest.mark.skipif(VENDOR not in ("nvidia", "both"), reason="needs an NVIDIA GPU")
needs_amd = pytest.mark.skipif(VENDOR not in ("amd", "both"), reason="needs an AMD GPU")
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed here")
needs_triton = pytest.mark.skipif(not (HAS_TORCH and HAS_TRITON),
                                  reason="torch and triton are not both installed here")


def run_readme_command(key: str, tmp_path: Path, binary: Path | None = None) -> dict[str, Any]:
    """Run example `key`'s README command into `tmp_path`; its trial's result.json."""
    argv = shlex.split(aorta_command(Example(key)))
    argv[argv.index("--output") + 1] = str(tmp_path / "results")
    cut = argv.index("--")
    target = argv[cut + 1:]
    if target[0] == "python":
        target[0] = sys.executable
    elif binary is not None:
        target[0] = str(binary)
    full = [sys.executable, "-m", "aorta", *argv[1:cut], "--", *target]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH", "")) if p)}
    done = subprocess.run(full, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT_S, check=False)
    results = sorted((tmp_path / "results").glob("*/cells/*/trial_*/result.json"))
    if not results:
        pytest.fail(f"aorta exited {done.returncode} without a trial:\n{done.stderr[-3000:]}")
    return dict(json.loads(results[0].read_text()))


def build_readme_binary(key: str, tmp_path: Path) -> Path:
    """Compile the example's source with the README's compiler command, into `tmp_path`."""
    example = Example(key)
    build = next(c for c in commands(section(example.readme.read_text(), "## Run it standalone"))
                 if c.startswith(("nvcc", "hipcc")))
    argv = shlex.split(build)
    if shutil.which(argv[0]) is None:
        pytest.skip(f"{argv[0]} is not installed")
    out = tmp_path / Path(argv[argv.index("-o") + 1]).name
    argv[argv.index("-o") + 1] = str(out)
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr
    return out


def calls(metrics: dict[str, Any], table: str) -> dict[str, int | None]:
    return {row["name"]: row["calls"] for row in metrics[table]}


def assert_passed_with_capture(result: dict[str, Any], collector: str) -> dict[str, Any]:
    metrics = flat_metrics(result)
    assert result["verdict"] == "pass", (result["reason"], result.get("stderr_tail"))
    assert result["captures"][collector]["state"] == "ok", result["captures"][collector]
    return metrics


# --- NVIDIA ------------------------------------------------------------------------------------

@needs_nvidia
def test_ncu_cuda_gemm(tmp_path: Path):
    if shutil.which("ncu") is None and not os.environ.get("NCU_BIN"):
        pytest.skip("ncu is not on PATH and NCU_BIN is unset")
    binary = build_readme_binary("ncu/cuda-gemm", tmp_path)
    result = run_readme_command("ncu/cuda-gemm", tmp_path, binary)
    reason = flat_metrics(result).get("ncu_capture_reason", "")
    if any(s in reason for s in ("ERR_NVGPUCTRPERM", "LibraryNotLoaded", "initialize")):
        pytest.skip(f"ncu cannot read counters on this host: {reason}")
    metrics = assert_passed_with_capture(result, "ncu")
    assert metrics["ncu_kernel_count"] == 23
    assert calls(metrics, "ncu_kernels") == {"sgemm_tiled": 23}
    assert metrics["ncu_gpu_time_ms"] > 0


@needs_nvidia
def test_portable_gemm_source_runs_on_nvidia(tmp_path: Path):
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")
    binary = tmp_path / "hip_gemm"
    subprocess.run(["nvcc", "-O3", "-x", "cu", "-o", str(binary),
                    str(Example("rocprof/hip-gemm").payload)], check=True, timeout=600)
    done = subprocess.run([str(binary), "512", "20"], capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT_S, check=False)
    assert done.returncode == 0 and "gemm: PASS" in done.stdout, done.stdout + done.stderr
    assert "launches=23" in done.stdout


@needs_nvidia
@needs_torch
def test_nsys_torch_matmul(tmp_path: Path):
    from aorta.collectors.nsys.collector import NsysCollector

    capability = NsysCollector().probe()
    if not capability.usable:   # the sweep's preflight refuses it for this same reason
        pytest.skip(f"nsys cannot measure here: {capability.reason}")
    result = run_readme_command("nsys/torch-matmul", tmp_path)
    metrics = flat_metrics(result)
    if result["captures"]["nsys"]["state"] != "ok":
        pytest.skip(f"nsys made no report here: {result['captures']['nsys']['reason']}")
    metrics = assert_passed_with_capture(result, "nsys")
    assert metrics["nsys_kernel_count"] > 0 and metrics["nsys_kernel_count"] % 23 == 0
    assert metrics["nsys_gpu_time_ms"] > 0


@needs_gpu
@needs_torch
def test_torch_torch_matmul_on_the_gpu(tmp_path: Path):
    metrics = assert_passed_with_capture(run_readme_command("torch/torch-matmul", tmp_path),
                                         "torch")
    assert metrics["torch_kernel_count"] > 0 and metrics["torch_kernel_count"] % 23 == 0
    assert metrics["torch_gpu_time_ms"] > 0


# --- Proton, both vendors ----------------------------------------------------------------------

@needs_gpu
@needs_triton
@pytest.mark.parametrize("key, kernel", [("proton/triton-vecadd", "add_kernel"),
                                         ("proton/triton-softmax", "softmax_kernel")])
def test_portable_triton_examples_count_exactly(tmp_path: Path, key: str, kernel: str):
    metrics = assert_passed_with_capture(run_readme_command(key, tmp_path), "proton")
    assert calls(metrics, "proton_kernels") == {kernel: 21}
    assert metrics["proton_kernel_count"] == 21
    assert metrics["proton_gpu_time_ms"] > 0
    if VENDOR == "nvidia":
        assert metrics["proton_backend"] == "cupti"


@needs_gpu
@needs_triton
@pytest.mark.parametrize("key, scopes", [("proton/nvidia-instrumentation",
                                          {"load", "reduce", "store"}),
                                         ("proton/amd-instrumentation", {"cheap", "expensive"})])
def test_instrumentation_examples_report_cycles_per_scope(tmp_path: Path, key: str,
                                                          scopes: set[str]):
    metrics = assert_passed_with_capture(run_readme_command(key, tmp_path), "proton")
    cycles = metrics["proton_scope_cycles"]
    assert set(cycles) == scopes and all(v > 0 for v in cycles.values())
    assert "proton_kernel_count" not in metrics
    if key == "proton/amd-instrumentation" and VENDOR == "amd":
        # On an H200 the order reverses: `cheap` holds the wait for the global load, which
        # costs more than eight register FMAs (measured 685687 vs 224717 cycles, Triton 3.6.0).
        assert cycles["expensive"] > cycles["cheap"]


@needs_nvidia
@needs_triton
@pytest.mark.parametrize("key", ["proton/amd-roctracer", "proton/amd-rocprofiler"])
def test_amd_pinned_backends_exit_2_on_nvidia(tmp_path: Path, key: str):
    result = run_readme_command(key, tmp_path)
    assert result["verdict"] == "fail" and result["exit_code"] == 2, result["reason"]
    assert "cannot run here" in (result.get("stderr_tail") or "")


# --- AMD ---------------------------------------------------------------------------------------

@needs_amd
def test_rocprof_hip_gemm(tmp_path: Path):
    if shutil.which("rocprofv3") is None and not os.environ.get("ROCPROF_BIN"):
        pytest.skip("rocprofv3 is not on PATH and ROCPROF_BIN is unset")
    binary = build_readme_binary("rocprof/hip-gemm", tmp_path)
    metrics = assert_passed_with_capture(run_readme_command("rocprof/hip-gemm", tmp_path, binary),
                                         "rocprof")
    assert metrics["rocprof_kernel_count"] == 23
    assert calls(metrics, "rocprof_kernels") == {"sgemm_tiled": 23}


@needs_amd
@needs_triton
def test_amd_roctracer_counts_three_kernels_per_pass(tmp_path: Path):
    metrics = assert_passed_with_capture(run_readme_command("proton/amd-roctracer", tmp_path),
                                         "proton")
    assert calls(metrics, "proton_kernels") == {
        "scale_kernel": 20, "bias_gelu_kernel": 20, "row_sum_kernel": 20}
    assert metrics["proton_kernel_count"] == 60
