"""ncu on a real NVIDIA GPU, through `aorta sweep run`, on payloads with known launch counts.

Each test writes a one-cell recipe with `collect: {ncu: ...}`, runs
`python -m aorta sweep run --recipe R --output O -- python payloads/<payload> ARGS` and reads the
trial's result.json. `ncu_matmul.py M` launches exactly M + 2 kernels (two fills, M cuBLAS
matmuls); `ncu_triton_add.py L` launches L `add_kernel`s after two fills.

Skipped without an NVIDIA GPU, without ncu (`$NCU_BIN`, PATH, or a CUDA/Nsight Compute install
folder), or where the driver refuses this process the performance counters.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from aorta.collectors.binaries import gpu_present
from aorta.collectors.ncu.counters import host_counter_access
from aorta_testing import flat_metrics

ROOT = Path(__file__).resolve().parents[2]
PAYLOADS = Path(__file__).resolve().parent / "payloads"
CHILD_TIMEOUT_S = 540
MATMULS = 4


def find_ncu() -> str | None:
    candidates = [os.environ.get("NCU_BIN", ""), shutil.which("ncu") or "",
                  "/usr/local/cuda/bin/ncu", *sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"))]
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


NCU = find_ncu()
HAS_GPU, GPU_HOW = gpu_present()
COUNTERS, COUNTERS_WHY = host_counter_access()

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not HAS_GPU, reason=f"no NVIDIA GPU ({GPU_HOW})"),
    pytest.mark.skipif(NCU is None, reason="no ncu ($NCU_BIN, PATH, /usr/local/cuda/bin, "
                                           "/opt/nvidia/nsight-compute/*)"),
    pytest.mark.skipif(COUNTERS is False, reason=f"GPU counters refused: {COUNTERS_WHY}"),
]


def run_sweep(tmp_path: Path, ncu: dict[str, Any], payload: str,
              *args: str) -> tuple[int, str, list[dict[str, Any]]]:
    """Run one trial under `collect: {ncu: ncu}`: (exit code, output tail, result.json docs)."""
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(yaml.safe_dump({"schema_version": 1, "mode": "probe", "trials": 1,
                                      "timeout_per_trial": 480, "collect": {"ncu": ncu}}))
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "aorta", "sweep", "run", "--recipe", str(recipe), "--output",
            str(out), "--", sys.executable, str(PAYLOADS / payload), *args]
    env = dict(os.environ, NCU_BIN=str(NCU), PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH", "")) if p))
    child = subprocess.Popen(argv, env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = child.communicate(timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        raise
    docs = [json.loads(p.read_text()) for p in sorted(out.glob("*/cells/*/trial_*/result.json"))]
    return child.returncode, output[-4000:], docs


def one_trial(tmp_path: Path, ncu: dict[str, Any], payload: str, *args: str) -> dict[str, Any]:
    code, output, docs = run_sweep(tmp_path, ncu, payload, *args)
    assert code == 0 and len(docs) == 1, f"aorta exited {code}, {len(docs)} results\n{output}"
    doc = docs[0]
    assert doc.get("verdict") == "pass", json.dumps(doc, indent=1)[-3000:]
    metrics: dict[str, Any] = flat_metrics(doc)
    assert metrics["ncu_capture"] == "ok", metrics.get("ncu_capture_reason")
    return metrics


def test_every_matmul_launch_is_profiled(tmp_path: Path) -> None:
    m = one_trial(tmp_path, {"metrics": ["gpu__time_duration.sum", "dram__bytes.sum"]},
                  "ncu_matmul.py", str(MATMULS))
    assert m["ncu_kernel_count"] == MATMULS + 2
    assert len(m["ncu_launches"]) == MATMULS + 2
    assert m["ncu_gpu_time_ms"] > 0 and m["ncu_top_kernel_ms"] > 0
    assert all(launch["metrics"]["gpu__time_duration.sum"] > 0 for launch in m["ncu_launches"])
    assert m["ncu_dram__bytes_sum_mean"] > 0
    assert m["ncu_metric_units"] == {"gpu__time_duration.sum": "ns", "dram__bytes.sum": "byte"}
    fills = [launch for launch in m["ncu_launches"] if "elementwise" in launch["kernel"]]
    assert len(fills) == 2, [launch["kernel"] for launch in m["ncu_launches"]]
    # the top kernel is the matmul, launched MATMULS times
    top = next(row for row in m["ncu_kernels"] if row["name"] == m["ncu_top_kernels"][0])
    assert top["calls"] == MATMULS
    artifacts = Path(m["ncu_artifact_dir"])
    assert (artifacts / "profile.ncu-rep").is_file() and (artifacts / "raw.csv").is_file()
    assert m["ncu_binary"] == NCU


def test_kernel_filter_skip_and_count(tmp_path: Path) -> None:
    m = one_trial(tmp_path, {"kernel_regex": "elementwise", "launch_skip": 1, "launch_count": 1},
                  "ncu_matmul.py", str(MATMULS))
    assert m["ncu_kernel_count"] == 1
    assert "elementwise" in m["ncu_launches"][0]["kernel"]


def test_base_clocks_still_time_every_launch(tmp_path: Path) -> None:
    m = one_trial(tmp_path, {"clock_control": "base"}, "ncu_matmul.py", "2")
    assert m["ncu_kernel_count"] == 4 and m["ncu_gpu_time_ms"] > 0


def test_payload_stdout_stays_clean(tmp_path: Path) -> None:
    one_trial(tmp_path, {}, "ncu_matmul.py", "1")
    stdout = next((tmp_path / "out").glob("*/cells/*/trial_0/stdout.log")).read_text()
    assert "ncu_matmul: launches=3" in stdout
    assert not re.search(r"^==PROF==", stdout, re.MULTILINE)
    log = next((tmp_path / "out").glob("*/cells/*/trial_0/ncu/ncu.log")).read_text()
    assert "==PROF==" in log


def test_triton_kernel_launches(tmp_path: Path) -> None:
    pytest.importorskip("triton")
    launches = 6
    m = one_trial(tmp_path, {"kernel_regex": "add_kernel"}, "ncu_triton_add.py", str(launches))
    assert m["ncu_kernel_count"] == launches
    assert {row["name"] for row in m["ncu_kernels"]} == {"add_kernel"}
    assert m["ncu_gpu__time_duration_sum_mean"] > 0
