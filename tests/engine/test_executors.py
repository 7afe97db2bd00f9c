"""Parallel trials across (fake) GPUs, and interleaved baseline trials."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from aorta.base.errors import UserError
from aorta.run.executors.gpus import amd_devices, resolve_gpus
from aorta_testing import (fake_nvidia_smi, interruptible, run_aorta, trial_result,
                            write_recipe)

PINNED = """
import json, os, sys, time
log, pause = sys.argv[1], float(sys.argv[2])
start = time.time()
time.sleep(pause)
with open(log, "a") as fh:
    fh.write(json.dumps({"dev": os.environ.get("CUDA_VISIBLE_DEVICES"), "start": start,
                         "end": time.time(), "argv": sys.argv[3:]}) + "\\n")
"""


def test_trials_never_share_a_device_and_results_stay_ordered(tmp_path: Path, payload):
    script = payload(PINNED)
    log = tmp_path / "log.jsonl"
    recipe = write_recipe(tmp_path, """
        schema_version: 1
        ticket: par
        trials: 4
        axes: {v: {x: {args: [x]}, y: {args: [y]}, z: {args: [z]}}}
        executor: {gpus: "0,1,MIG-6e4d0a4b-1c2d-5e6f-8a9b-0c1d2e3f4a5b"}
    """)
    devices = {"0", "1", "MIG-6e4d0a4b-1c2d-5e6f-8a9b-0c1d2e3f4a5b"}
    start = time.monotonic()
    proc = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(tmp_path / "o"),
                     "--", sys.executable, str(script), str(log), "0.4",
                     env=fake_nvidia_smi(tmp_path / "bin"))
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr
    spans = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(spans) == 12
    for i, a in enumerate(spans):
        for b in spans[i + 1:]:
            if a["start"] < b["end"] and b["start"] < a["end"]:
                assert a["dev"] != b["dev"], f"two concurrent trials on device {a['dev']}"
    assert {s["dev"] for s in spans} <= devices
    peak = max(sum(1 for s in spans if s["start"] <= t["start"] < s["end"]) for t in spans)
    assert 2 <= peak <= 3
    assert elapsed < 12 * 0.4 + 2   # faster than one at a time would be (4.8 s of sleeping)
    run_dir = tmp_path / "o" / "par"
    for cell in ("x", "y", "z"):
        for i in range(4):
            r = trial_result(run_dir, cell, i)
            assert r["device"] in devices
            assert r["env_overlay"]["CUDA_VISIBLE_DEVICES"] == r["device"]
    matrix = json.loads((run_dir / "matrix.json").read_text())
    assert [c["name"] for c in matrix["cells"]] == ["x", "y", "z"]
    assert all(c["passed"] == 4 for c in matrix["cells"])


def test_gpus_flag_overrides_and_validates(tmp_path: Path, payload):
    script = payload(PINNED)
    env = fake_nvidia_smi(tmp_path / "bin")
    proc = run_aorta("sweep", "run", "--gpus", "0,0", "--output", str(tmp_path), "--",
                     sys.executable, str(script), str(tmp_path / "l"), "0", env=env)
    assert proc.returncode == 2 and "listed twice" in proc.stderr
    proc = run_aorta("sweep", "run", "--gpus", "1", "--trials", "2", "--output", str(tmp_path),
                     "--", sys.executable, str(script), str(tmp_path / "l"), "0", env=env)
    assert proc.returncode == 0, proc.stderr
    assert trial_result(tmp_path / "adhoc", "default", 1)["device"] == "1"


def test_amd_devices_are_read_from_the_kfd_topology(tmp_path: Path):
    for node, props in enumerate(["cpu_cores_count 64\nsimd_count 0\nunique_id 0\n",
                                  "simd_count 304\nunique_id 1311768467463790320\n",
                                  "simd_count 304\n"]):
        (tmp_path / str(node)).mkdir()
        (tmp_path / str(node) / "properties").write_text(props)
    devices = amd_devices(tmp_path)
    assert devices.ids == {"0": "GPU 0", "GPU-123456789abcdef0": "GPU 0", "1": "GPU 1"}
    assert resolve_gpus("all", devices) == ["0", "1"]
    assert resolve_gpus("GPU-123456789abcdef0,1", devices) == ["GPU-123456789abcdef0", "1"]
    with pytest.raises(UserError, match="no device 2 here; this host has 0 = GPU-1234"):
        resolve_gpus([2], devices)


def test_baseline_trials_interleave_and_give_an_overhead(tmp_path: Path, payload):
    script = payload("sum(i * i for i in range(200000))\n")
    recipe = write_recipe(tmp_path, """
        schema_version: 1
        ticket: base
        trials: 3
        baseline: true
        collect: [cprofile]
    """)
    proc = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(tmp_path / "o"),
                     "--", sys.executable, str(script))
    assert proc.returncode == 0, proc.stderr
    cell = tmp_path / "o" / "base" / "cells" / "default"
    assert sorted(p.name for p in cell.iterdir()) == [
        "baseline_0", "baseline_1", "baseline_2", "trial_0", "trial_1", "trial_2"]
    base = json.loads((cell / "baseline_1" / "result.json").read_text())
    assert base["baseline"] and base["argv"] == [sys.executable, str(script)]
    assert not (cell / "baseline_1" / "cprofile").exists()
    starts = sorted((json.loads((d / "result.json").read_text())["started_at"], d.name)
                    for d in cell.iterdir())
    assert [name for _, name in starts][:2] == ["trial_0", "baseline_0"] or \
        starts[0][0] == starts[1][0]      # same second: order not visible in timestamps
    matrix = json.loads((tmp_path / "o" / "base" / "matrix.json").read_text())
    c = matrix["cells"][0]
    assert c["passed"] == 3 and c["metrics"]["wall_s"]["n"] == 3
    over = c["overhead"]["wall_s"]
    assert over["n_profiled"] == over["n_baseline"] == 3
    assert over["low"] <= over["ratio"] <= over["high"]
    assert over["ratio"] > 1.0    # cProfile slows a Python loop down measurably
    assert "Collector overhead" in (tmp_path / "o" / "base" / "perf.md").read_text()


def test_ctrl_c_with_parallel_trials_kills_every_running_trial(tmp_path: Path, payload):
    import signal
    import subprocess

    pids = tmp_path / "pids"
    script = payload(f"""
        import os, time
        with open({str(pids)!r}, "a") as fh:
            fh.write(f"{{os.getpid()}}\\n")
        time.sleep(60)
    """)
    argv = [sys.executable, "-m", "aorta", "sweep", "run", "--gpus", "0,1", "--trials", "4",
            "--output", str(tmp_path / "o"), "--", sys.executable, str(script)]
    proc = subprocess.Popen(interruptible(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=fake_nvidia_smi(tmp_path / "bin"))
    deadline = time.monotonic() + 30
    while (not pids.exists() or len(pids.read_text().split()) < 2) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    for pid in map(int, pids.read_text().split()):
        assert not Path(f"/proc/{pid}").exists() or \
            Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    run = json.loads((tmp_path / "o" / "adhoc" / "run.json").read_text())
    assert run["status"] == "interrupted"
    assert not list((tmp_path / "o" / "adhoc" / "cells" / "default").glob("*/result.json"))


@pytest.mark.parametrize(("where", "value", "said"), [
    ("recipe", "0,0", "r.yaml: executor.gpus: a device is listed twice, got '0,0'"),
    ("flag", "0,0", "--executor/--gpus: executor.gpus: a device is listed twice"),
    ("recipe", " , ", "r.yaml: executor.gpus: ' ' is not a device id"),
    ("recipe", [], "r.yaml: executor.gpus: give 'all' or device ids"),
])
def test_a_bad_gpus_value_is_blamed_on_where_it_was_written(tmp_path: Path, where: str,
                                                             value: str, said: str):
    recipe = write_recipe(tmp_path, f"schema_version: 1\nexecutor: {{kind: local, gpus: "
                                    f"{value!r}}}\n" if where == "recipe" else
                          "schema_version: 1\n", name="r.yaml")
    flag = ["--gpus", value] if where == "flag" else []
    proc = run_aorta("sweep", "run", "--recipe", str(recipe), *flag, "--output",
                     str(tmp_path / "o"), "--", "true")
    assert proc.returncode == 2 and said in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "o").exists()
