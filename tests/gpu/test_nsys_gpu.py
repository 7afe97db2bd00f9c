"""nsys on a real NVIDIA GPU: a full capture where nsys can export, an honest `unparsed` where not.

On the H200 these tests were written for, nsys is only the copy inside Nsight Compute
(`/opt/nvidia/nsight-compute/<ver>/host/target-linux-x64/nsys`), which writes a `.qdstrm` and
has no QdstrmImporter to turn it into a report. There the collector must say so: `probe()` is
unusable with that reason (so `aorta sweep run` refuses to start, exit 2), and a trial run
anyway ends `unparsed` with the same cause, never a crash or a made-up number.

`ncu_matmul.py M` launches exactly M + 2 kernels (two fills, M cuBLAS matmuls).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from aorta.collectors.base import Launch, TrialContext, TrialOutcome
from aorta.collectors.nsys.collector import NsysCollector, find_qdstrm_importer
from aorta.collectors.binaries import gpu_present
from aorta_testing import flat_metrics

ROOT = Path(__file__).resolve().parents[2]
PAYLOAD = Path(__file__).resolve().parent / "payloads" / "ncu_matmul.py"
CHILD_TIMEOUT_S = 540
MATMULS = 3


def find_nsys() -> str | None:
    candidates = [os.environ.get("NSYS_BIN", ""), shutil.which("nsys") or "",
                  *sorted(glob.glob("/opt/nvidia/nsight-systems/*/bin/nsys")),
                  "/usr/local/cuda/bin/nsys",
                  *sorted(glob.glob("/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys"))]
    return next((c for c in candidates if c and os.path.isfile(c) and os.access(c, os.X_OK)), None)


NSYS = find_nsys()
HAS_GPU, GPU_HOW = gpu_present()
CAN_EXPORT = NSYS is not None and find_qdstrm_importer(Path(NSYS)) is not None

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not HAS_GPU, reason=f"no NVIDIA GPU ({GPU_HOW})"),
    pytest.mark.skipif(NSYS is None, reason="no nsys ($NSYS_BIN, PATH, Nsight install folders)"),
]


def env_with_nsys() -> dict[str, str]:
    return dict(os.environ, NSYS_BIN=str(NSYS), PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH", "")) if p))


def run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    child = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = child.communicate(timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        raise
    return child.returncode, output


def assert_full_capture(metrics: dict[str, Any]) -> None:
    assert metrics["nsys_capture"] == "ok", metrics.get("nsys_capture_reason")
    assert metrics["nsys_kernel_count"] == MATMULS + 2
    assert metrics["nsys_gpu_time_ms"] > 0
    assert metrics["nsys_stats_report"] in ("cuda_gpu_kern_sum", "gpukernsum")


def assert_honest_qdstrm(metrics: dict[str, Any]) -> None:
    assert metrics["nsys_capture"] == "unparsed", metrics
    reason = metrics["nsys_capture_reason"]
    assert ".qdstrm" in reason and "QdstrmImporter" in reason, reason
    assert "nsys_gpu_time_ms" not in metrics and "nsys_kernel_count" not in metrics


def test_collector_live_wrap_run_summarize(tmp_path: Path) -> None:
    """The collector's own steps on the real tool, without the engine's preflight."""
    collector = NsysCollector()
    options = collector.validate(None)
    out = tmp_path / "trial" / "nsys"
    out.mkdir(parents=True)
    env = env_with_nsys()
    ctx = TrialContext("c", 0, out.parent, env)
    launch = collector.wrap(Launch((sys.executable, str(PAYLOAD), str(MATMULS))), out, options, ctx)
    code, output = run(list(launch.argv), tmp_path, env)
    stderr = out.parent / "stderr.log"
    stderr.write_text(output)
    metrics = collector.summarize(out, options, TrialOutcome(code, None, False, True, stderr, env))
    assert "ncu_matmul: launches=5" in output, output[-3000:]
    if CAN_EXPORT:
        assert_full_capture(metrics)
    else:
        assert_honest_qdstrm(metrics)


def test_sweep_refuses_or_reports_honestly(tmp_path: Path) -> None:
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(yaml.safe_dump({"schema_version": 1, "mode": "probe", "trials": 1,
                                      "timeout_per_trial": 480, "collect": {"nsys": {}}}))
    out = tmp_path / "out"
    code, output = run([sys.executable, "-m", "aorta", "sweep", "run", "--recipe", str(recipe),
                        "--output", str(out), "--", sys.executable, str(PAYLOAD), str(MATMULS)],
                       tmp_path, env_with_nsys())
    results = sorted(out.glob("*/cells/*/trial_*/result.json"))
    if CAN_EXPORT:
        assert code == 0 and len(results) == 1, output[-3000:]
        assert_full_capture(flat_metrics(json.loads(results[0].read_text())))
    elif results:
        assert_honest_qdstrm(flat_metrics(json.loads(results[0].read_text())))
    else:
        # the preflight refused: exit 2, naming why nsys cannot measure here
        assert code == 2, output[-3000:]
        assert "nsys" in output and "QdstrmImporter" in output, output[-3000:]


def test_probe_matches_what_the_machine_can_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NSYS_BIN", str(NSYS))
    cap = NsysCollector().probe()
    assert cap.version, cap
    assert cap.usable == CAN_EXPORT, cap
