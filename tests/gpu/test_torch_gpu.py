"""The torch collector on a real GPU, through `aorta sweep run`, on a payload with a known
number of kernel launches.

Each test writes a one-cell recipe with `collect: {torch: ...}`, runs `python -m aorta sweep run
--recipe R --output O -- python payloads/torch_matmul.py STEPS ...` and reads the trial's
result.json. The payload launches exactly one cuBLAS GEMM and one elementwise add per step.

Skipped without a GPU (tests/gpu/conftest.py), and without a CUDA build of torch: the exact
GEMM count is known for NVIDIA's cuBLAS only.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from aorta.collectors.torch.collector import torch_build
from aorta_testing import flat_metrics

ROOT = Path(__file__).resolve().parents[2]
PAYLOAD = Path(__file__).resolve().parent / "payloads" / "torch_matmul.py"
STEPS = 5
CHILD_TIMEOUT_S = 300


def _build() -> str:
    try:
        return torch_build(importlib.metadata.distribution("torch"))
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


BUILD = _build()

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not BUILD.startswith("cuda"),
                       reason=f"needs a CUDA build of torch (found: {BUILD})"),
]


def run_sweep(tmp_path: Path, options: dict[str, Any], *payload_args: str) -> dict[str, Any]:
    """One trial of the payload under `collect: {torch: options}`; its result.json."""
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(yaml.safe_dump({
        "schema_version": 1, "mode": "probe", "ticket": "torch-gpu", "trials": 1,
        "timeout_per_trial": CHILD_TIMEOUT_S - 60, "collect": {"torch": options}}))
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "aorta", "sweep", "run", "--recipe", str(recipe),
            "--output", str(out), "--", sys.executable, str(PAYLOAD), str(STEPS), *payload_args]
    # the env-mode payload imports aorta's helper, so the checkout goes on PYTHONPATH for all
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH", "")) if p))
    code, output = _run(argv, env, tmp_path)
    results = sorted(out.glob("*/cells/*/trial_*/result.json"))
    assert len(results) == 1, f"aorta exited {code}; results {results}\n{output}"
    return dict(json.loads(results[0].read_text()))


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str]:
    child = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = child.communicate(timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate(timeout=60)
        raise
    return child.returncode, output[-4000:]


def assert_launches(metrics: dict[str, Any], steps: int) -> None:
    """`steps` GEMMs and `steps` elementwise adds, and nothing else."""
    assert metrics["torch_capture"] == "ok", metrics.get("torch_capture_reason")
    calls = {row["name"]: row["calls"] for row in metrics["torch_kernels"]}
    adds = sum(n for name, n in calls.items() if "elementwise" in name)
    assert adds == steps, calls
    assert sum(calls.values()) - adds == steps, calls          # one cuBLAS kernel per matmul
    assert metrics["torch_kernel_count"] == 2 * steps
    assert metrics["torch_gpu_time_ms"] > 0
    assert metrics["torch_top_kernel_ms"] <= metrics["torch_gpu_time_ms"]
    assert "torch_cpu_time_ms" not in metrics


def test_cli_mode_counts_every_launch(tmp_path: Path) -> None:
    result = run_sweep(tmp_path, {})
    assert result["verdict"] == "pass", result.get("stderr_tail")
    assert_launches(flat_metrics(result), STEPS)
    assert flat_metrics(result)["torch_activities"] == ["cpu", "cuda"]
    artifacts = Path(flat_metrics(result)["torch_artifact_dir"])
    assert "Self CUDA" in (artifacts / "kernels.txt").read_text()
    summary = json.loads((artifacts / "summary.json").read_text())
    assert summary["device"] and summary["errors"] == []


def test_a_failing_payload_keeps_its_exit_code_and_its_kernels(tmp_path: Path) -> None:
    result = run_sweep(tmp_path, {"activities": "cpu,gpu"}, "--exit", "3")
    assert (result["verdict"], result["exit_code"]) == ("fail", 3)
    assert_launches(flat_metrics(result), STEPS)


def test_env_mode_schedule_records_only_active_steps(tmp_path: Path) -> None:
    options = {"mode": "env", "schedule": {"wait": 1, "warmup": 1, "active": 3, "repeat": 1}}
    result = run_sweep(tmp_path, options, "--env-profiler")
    assert result["verdict"] == "pass", result.get("stderr_tail")
    assert result["argv"][1] == str(PAYLOAD)                   # argv untouched in mode env
    assert_launches(flat_metrics(result), 3)


def test_cpu_activity_only_gives_operator_figures(tmp_path: Path) -> None:
    result = run_sweep(tmp_path, {"activities": "cpu"})
    metrics = flat_metrics(result)
    assert result["verdict"] == "pass" and metrics["torch_capture"] == "ok"
    assert "torch_kernel_count" not in metrics
    assert metrics["torch_cpu_time_ms"] > 0
    calls = {row["name"]: row["calls"] for row in metrics["torch_ops"]}
    assert calls["aten::mm"] == STEPS and calls["aten::add_"] == STEPS
