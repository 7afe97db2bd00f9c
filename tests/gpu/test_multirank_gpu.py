"""A 2-rank torchrun payload on one GPU under the proton and torch collectors: one capture per
rank, each rank's exact kernel count, and the roll-up over ranks."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from aorta_testing import flat_metrics

ROOT = Path(__file__).resolve().parents[2]
PAYLOAD = Path(__file__).resolve().parent / "payloads" / "ranked_matmul.py"
TORCHRUN = shutil.which("torchrun")

pytestmark = pytest.mark.skipif(TORCHRUN is None or importlib.util.find_spec("torch") is None,
                                reason="needs torch and its torchrun")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("collector", ["proton", "torch"])
def test_two_ranks_on_one_gpu(tmp_path: Path, collector: str):
    if collector == "proton" and importlib.util.find_spec("triton") is None:
        pytest.skip("needs triton")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH", "")) if p))
    done = subprocess.run(
        [sys.executable, "-m", "aorta", "sweep", "run", "--collect", collector, "--output",
         str(tmp_path), "--", TORCHRUN, "--nproc-per-node", "2", "--master-port",
         str(free_port()), str(PAYLOAD)],
        env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((tmp_path / "adhoc/cells/default/trial_0/result.json").read_text())
    assert result["verdict"] == "pass", result["stderr_tail"]
    m = flat_metrics(result)
    assert m[f"{collector}_capture"] == "ok", m.get(f"{collector}_capture_reason")
    ranks = m[f"{collector}_ranks"]
    assert {r: v["kernel_count"] for r, v in ranks.items()} == {"0": 4, "1": 8}
    assert m[f"{collector}_kernel_count"] == 12
    assert m[f"{collector}_gpu_time_ms"] == max(v["gpu_time_ms"] for v in ranks.values()) > 0
    assert m[f"{collector}_rank_skew"] > 1.0     # rank 1 ran twice the products
