"""The telemetry collector on a real NVIDIA GPU through NVML (issue 12.4): one sweep whose
cells keep the GPU busy or leave it idle, through `aorta sweep run`.

The busy cell runs bf16 matrix multiplications for eight seconds (long enough that torch's
import and CUDA's start on a cold machine stay a minority of the samples); the idle one sleeps. Their
samples must tell them apart (utilisation, power), and every figure must be a real reading. On
a host with several GPUs the busy trial's figures come from the GPU its process ran on.
With `AORTA_TELEMETRY_KEEP=DIR`, the samples are copied there (the CPU tests' fixture)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from aorta_testing import flat_metrics

ROOT = Path(__file__).resolve().parents[2]
LOAD = """
import sys, time
import torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    for _ in range(20):
        b = a @ a
    torch.cuda.synchronize()
"""
IDLE = "import sys, time; time.sleep(float(sys.argv[1]))"

pytestmark = pytest.mark.gpu


def test_busy_and_idle_gpus_read_apart(tmp_path: Path) -> None:
    pytest.importorskip("pynvml")
    pytest.importorskip("torch")
    (tmp_path / "load.py").write_text(LOAD)
    (tmp_path / "idle.py").write_text(IDLE)
    (tmp_path / "r.yaml").write_text(
        "schema_version: 1\nticket: telemetry\ntrials: 2\n"
        "collect: {telemetry: {interval_ms: 50}}\n"
        f"axes: {{load: {{busy: {{args: [{tmp_path / 'load.py'}, '8']}}, "
        f"idle: {{args: [{tmp_path / 'idle.py'}, '3']}}}}}}\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-m", "aorta", "sweep", "run", "--recipe",
                           str(tmp_path / "r.yaml"), "--output", str(tmp_path / "out"), "--",
                           sys.executable], capture_output=True, text=True, env=env,
                          timeout=300)
    run = tmp_path / "out" / "telemetry"
    keep = os.environ.get("AORTA_TELEMETRY_KEEP")
    if keep:
        for cell in ("busy", "idle"):
            for i in range(2):
                sample = run / f"cells/{cell}/trial_{i}/telemetry/samples.json"
                if sample.is_file():
                    shutil.copy(sample, Path(keep) / f"telemetry-{cell}-{i}.json")
        if (run / "perf.md").is_file():
            shutil.copy(run / "perf.md", Path(keep) / "telemetry-perf.md")
    assert done.returncode == 0, done.stderr
    figures = {}
    for cell in ("busy", "idle"):
        for i in range(2):
            result = json.loads((run / f"cells/{cell}/trial_{i}/result.json").read_text())
            m = flat_metrics(result)
            assert result["verdict"] == "pass", result["stderr_tail"]
            assert m["telemetry_capture"] == "ok", m.get("telemetry_capture_reason")
            assert m["telemetry_samples"] >= 20
            assert m["telemetry_sm_clock_mhz_max"] > 0 and m["telemetry_temp_c_max"] > 0
            figures[(cell, i)] = m
    for i in range(2):
        busy, idle = figures[("busy", i)], figures[("idle", i)]
        assert busy["telemetry_gpu_util_pct_median"] >= 50, busy
        assert idle["telemetry_gpu_util_pct_median"] <= 10, idle
        assert busy["telemetry_power_w_median"] > idle["telemetry_power_w_median"] * 1.5
        # NVML listed the busy trial's process on the one GPU it used (the first visible)
        assert len(busy["telemetry_used_devices"]) == 1, busy
        assert busy["telemetry_shared_fraction"] == 0, busy
        assert "telemetry_used_devices" not in idle
