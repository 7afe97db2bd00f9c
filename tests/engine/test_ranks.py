"""Multi-rank launches: splitting the launcher from each rank's command, and per-rank captures."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from aorta.collectors.rank_launch import split_rank_launch
from aorta.collectors.ranks import rank_of, rollup
from aorta_testing import run_aorta, trial_result


@pytest.mark.parametrize("argv, prefix, inner", [
    (["torchrun", "--nproc-per-node", "2", "--standalone", "t.py", "--lr", "1"],
     ("torchrun", "--nproc-per-node", "2", "--standalone", "--no-python"), ("t.py", "--lr", "1")),
    (["torchrun", "--nproc_per_node=4", "t.py"],
     ("torchrun", "--nproc_per_node=4", "--no-python"), ("t.py",)),
    (["python3", "-m", "torch.distributed.run", "--nnodes", "1", "t.py"],
     ("python3", "-m", "torch.distributed.run", "--nnodes", "1", "--no-python"), ("python3", "t.py")),
    (["srun", "-n", "4", "--gpus-per-task", "1", "python3", "-u", "t.py"],
     ("srun", "-n", "4", "--gpus-per-task", "1"), ("python3", "-u", "t.py")),
    (["mpirun", "-np", "2", "python", "t.py"], ("mpirun", "-np", "2"), ("python", "t.py")),
])
def test_split(argv, prefix, inner):
    split = split_rank_launch(argv)
    assert split is not None
    assert split.prefix == prefix
    assert split.inner[-len(inner):] == inner


@pytest.mark.parametrize("argv", [["python3", "t.py"], ["torchrun", "--no-python", "app"],
                                  ["torchrun", "-m", "pkg.mod"], ["srun", "-n", "2", "./app"],
                                  ["torchrun", "--nnodes", "1"], []])
def test_not_a_rank_launch(argv):
    assert split_rank_launch(argv) is None


def test_rank_of_and_rollup():
    assert rank_of("profile.rank3.pstats") == "3" and rank_of("profile.pstats") is None
    out = rollup("x", {"0": {"time_ms": 10.0, "n": 2}, "1": {"time_ms": 30.0, "n": 3},
                       "2": {"time_ms": 20.0, "n": 1}}, "time_ms", "n")
    assert out["x_time_ms"] == 30.0 and out["x_time_spread_ms"] == 20.0
    assert out["x_rank_skew"] == 1.5 and out["x_n"] == 6 and out["x_rank_count"] == 3
    assert out["x_ranks"]["1"] == {"time_ms": 30.0, "n": 3}


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


TORCHRUN = shutil.which("torchrun", path=str(Path(sys.executable).parent))
needs_torchrun = pytest.mark.skipif(TORCHRUN is None, reason="torch without its torchrun")

DDP = """
import sys
import torch
import torch.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
x = torch.ones(64, 64)


def step():
    return x @ x


for _ in range(20 + 5000 * rank):     # rank 1 works far longer: a straggler
    step()
dist.all_reduce(x)
dist.destroy_process_group()
"""


@pytest.mark.torch
@needs_torchrun
def test_two_rank_torchrun_gives_one_capture_per_rank(tmp_path: Path, payload):
    script = payload(DDP, "ddp.py")
    proc = run_aorta("sweep", "run", "--collect", "cprofile", "--output", str(tmp_path), "--",
                     TORCHRUN, "--nproc-per-node", "2", "--master-port", str(free_port()),
                     str(script), timeout=240)
    assert proc.returncode == 0, proc.stderr
    result = trial_result(tmp_path / "adhoc", "default", 0)
    assert result["verdict"] == "pass", result["stderr_tail"]
    files = sorted(p.name for p in (tmp_path / "adhoc/cells/default/trial_0/cprofile").iterdir())
    assert files == ["profile.rank0.pstats", "profile.rank1.pstats"]
    m = result["metrics"]
    assert m["cprofile_rank_count"] == 2 and set(m["cprofile_ranks"]) == {"0", "1"}
    calls = {r: v["call_count"] for r, v in m["cprofile_ranks"].items()}
    assert calls["1"] - calls["0"] >= 4000    # the straggler made 5000 extra calls of step()
    assert m["cprofile_call_count"] == calls["0"] + calls["1"]
    assert m["cprofile_rank_skew"] >= 1.0


@pytest.mark.torch
@needs_torchrun
def test_two_rank_torchrun_under_the_torch_profiler(tmp_path: Path, payload):
    script = payload(DDP, "ddp.py")
    proc = run_aorta("sweep", "run", "--collect", "torch", "--output", str(tmp_path), "--",
                     TORCHRUN, "--nproc-per-node", "2", "--master-port", str(free_port()),
                     str(script), timeout=240)
    assert proc.returncode == 0, proc.stderr
    result = trial_result(tmp_path / "adhoc", "default", 0)
    assert result["verdict"] == "pass", result["stderr_tail"]
    torch_dir = tmp_path / "adhoc/cells/default/trial_0/torch"
    assert sorted(p.name for p in torch_dir.iterdir()) == ["rank0", "rank1"]
    assert all((torch_dir / r / "trace.json").is_file() for r in ("rank0", "rank1"))
    m = result["metrics"]
    assert result["captures"]["torch"]["state"] == "ok" and m["torch_rank_count"] == 2
    ops = {r: v["cpu_op_count"] for r, v in m["torch_ranks"].items()}
    assert m["torch_cpu_op_count"] == ops["0"] + ops["1"]
    times = [v["cpu_time_ms"] for v in m["torch_ranks"].values()]
    assert m["torch_cpu_time_ms"] == max(times) > 0
    assert m["torch_rank_skew"] >= 1.0
