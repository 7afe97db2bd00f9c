"""Several GPUs of one host: `--gpus all` gives each trial one GPU of its own, and a 2-rank
torchrun payload over NCCL (one GPU a rank) gets one capture per rank with exact counts.

What each trial saw is read three ways: the device aorta recorded in result.json, what the
payload itself reports, and NVML's list of the processes running on each GPU, sampled every
20 ms while the sweep runs. Skipped on a machine with fewer than two GPUs.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from collections import defaultdict
from pathlib import Path

import pytest
from aorta_testing import flat_metrics

ROOT = Path(__file__).resolve().parents[2]
PAYLOADS = Path(__file__).resolve().parent / "payloads"
MATMUL = ROOT / "examples/profiling/torch/torch-matmul/matmul.py"
TORCHRUN = shutil.which("torchrun")
# NVLink multicast stays off wherever NCCL or PyTorch run on shared multi-GPU hosts: a program
# using it can take every GPU of the host out of service.
NO_MULTICAST = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                "NVSHMEM_DISABLE_NVLS": "1"}


def gpu_count() -> int:
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return out.stdout.count("GPU ") if out.returncode == 0 else 0


pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch"),
    pytest.mark.skipif(importlib.util.find_spec("pynvml") is None, reason="needs nvidia-ml-py"),
    pytest.mark.skipif(gpu_count() < 2, reason="needs two or more NVIDIA GPUs"),
]


class GpuProcessWatch:
    """Samples, on a thread, which processes NVML lists on each GPU (compute contexts)."""

    def __init__(self, period_s: float = 0.02) -> None:
        import pynvml

        self._nvml = pynvml
        pynvml.nvmlInit()
        count = pynvml.nvmlDeviceGetCount()
        self.handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
        self.uuids = [str(pynvml.nvmlDeviceGetUUID(h)).removeprefix("GPU-") for h in self.handles]
        self.samples: list[list[set[int]]] = []
        self._period = period_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append([
                {p.pid for p in self._nvml.nvmlDeviceGetComputeRunningProcesses(h)}
                for h in self.handles])
            self._stop.wait(self._period)

    def __enter__(self) -> GpuProcessWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._nvml.nvmlShutdown()

    def gpus_of_each_pid(self) -> dict[int, set[int]]:
        seen: dict[int, set[int]] = defaultdict(set)
        for sample in self.samples:
            for gpu, pids in enumerate(sample):
                for pid in pids:
                    seen[pid].add(gpu)
        return seen


def aorta_env() -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, **NO_MULTICAST}


def sweep(args: list[str], timeout: float = 540) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "aorta", "sweep", "run", *args],
                          env=aorta_env(), capture_output=True, text=True, timeout=timeout,
                          check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done


def results(out: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(out.glob("*/cells/*/trial_*/result.json"))]


def test_gpus_all_gives_each_trial_a_gpu_of_its_own(tmp_path: Path) -> None:
    gpus = gpu_count()
    trials = 2 * gpus
    with GpuProcessWatch() as watch:
        sweep(["--gpus", "all", "--trials", str(trials), "--collect", "torch,telemetry",
               "--output",
               str(tmp_path), "--", sys.executable, str(MATMUL), "--size", "8192", "--iters",
               "600", "--dtype", "bfloat16"])
    done = results(tmp_path)
    assert [r["verdict"] for r in done] == ["pass"] * trials, [r["reason"] for r in done]
    for r in done:
        m = flat_metrics(r)
        assert m["torch_capture"] == m["telemetry_capture"] == "ok"
        # aorta's own telemetry saw the trial's process on its GPU, alone
        assert m["telemetry_used_devices"] == [r["device"]], m
        assert m["telemetry_shared_fraction"] == 0
    per_device: dict[str, int] = defaultdict(int)
    for r in done:
        per_device[r["device"]] += 1
    assert set(per_device) == {str(i) for i in range(gpus)}, per_device

    # NVML's view: every payload process ran on exactly one GPU, no GPU ever held two at once,
    # each GPU hosted as many processes as aorta recorded trials on it, and the GPUs were busy
    # at the same time (the trials really ran in parallel).
    gpus_of = watch.gpus_of_each_pid()
    assert len(gpus_of) == trials, gpus_of
    assert all(len(g) == 1 for g in gpus_of.values()), gpus_of
    assert max(len(pids) for sample in watch.samples for pids in sample) == 1
    hosted: dict[str, int] = defaultdict(int)
    for gpu_set in gpus_of.values():
        hosted[str(next(iter(gpu_set)))] += 1
    assert hosted == per_device
    assert any(all(sample) for sample in watch.samples), "the GPUs were never busy together"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


_RANK_LINE = re.compile(r"ranked_nccl: rank=(\d+) pid=(\d+) gpu=(\S+) products=(\d+) PASS")


@pytest.mark.skipif(TORCHRUN is None, reason="needs torchrun")
@pytest.mark.parametrize("collector", ["proton", "torch"])
def test_two_ranks_over_nccl_on_two_gpus(tmp_path: Path, collector: str) -> None:
    if collector == "proton" and importlib.util.find_spec("triton") is None:
        pytest.skip("needs triton")
    with GpuProcessWatch() as watch:
        sweep(["--collect", collector, "--output", str(tmp_path), "--", TORCHRUN,
               "--nproc-per-node", "2", "--master-port", str(free_port()),
               str(PAYLOADS / "ranked_nccl.py")])
    (result,) = results(tmp_path)
    assert result["verdict"] == "pass", result["stderr_tail"]
    stdout = next(tmp_path.glob("*/cells/*/trial_0/stdout.log")).read_text()
    ranks = {int(m[1]): (int(m[2]), m[3].removeprefix("GPU-")) for m in _RANK_LINE.finditer(stdout)}
    assert sorted(ranks) == [0, 1], stdout

    # Each rank on its own GPU, as the payload and NVML both saw it.
    gpus_of = watch.gpus_of_each_pid()
    for rank, (pid, uuid) in ranks.items():
        if pid in gpus_of:      # NVML shows host pids; they match where no pid namespace hides them
            assert [watch.uuids[g] for g in gpus_of[pid]] == [uuid], (rank, gpus_of)
    assert ranks[0][1] != ranks[1][1]

    m = flat_metrics(result)
    assert m[f"{collector}_capture"] == "ok", m.get(f"{collector}_capture_reason")
    per_rank = m[f"{collector}_ranks"]
    assert sorted(per_rank) == ["0", "1"]
    # rank r: 4 + 4r cuBLAS products and NCCL's all-reduce (one kernel)
    assert {r: v["kernel_count"] for r, v in per_rank.items()} == {"0": 5, "1": 9}, per_rank
    assert m[f"{collector}_kernel_count"] == 14
    assert m[f"{collector}_rank_skew"] > 1.0
    print(f"{collector}: per-rank {json.dumps(per_rank)} skew {m[f'{collector}_rank_skew']:.3f}")
