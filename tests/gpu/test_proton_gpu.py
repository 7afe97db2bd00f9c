"""Proton on a real GPU, through `aorta sweep run`, on a payload with a known launch count.

Each test writes a one-cell recipe, runs `python -m aorta sweep run --recipe R --output O --
python payloads/proton_vecadd.py LAUNCHES ...` and reads the trial's result.json. The payload
launches exactly LAUNCHES + 1 Triton kernels (one fill, LAUNCHES adds) and nothing else on the GPU.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from aorta.collectors.proton_host import find_triton, gpu_vendor

ROOT = Path(__file__).resolve().parents[2]
PAYLOAD = Path(__file__).resolve().parent / "payloads" / "proton_vecadd.py"
LAUNCHES = 12
CHILD_TIMEOUT_S = 300

TRITON = find_triton()
VENDOR = gpu_vendor()

needs_triton = pytest.mark.skipif(TRITON.version is None,
                                  reason=f"Triton is not installed ({TRITON.problem})")
needs_gpu = pytest.mark.skipif(VENDOR is None,
                               reason="no GPU device (/dev/kfd, /dev/nvidiactl, nvidia-smi)")
needs_nvidia = pytest.mark.skipif(VENDOR != "nvidia", reason="cupti needs an NVIDIA GPU")


def run_sweep(tmp_path: Path, options: dict[str, str], *payload_args: str) -> dict[str, Any]:
    """Run one trial under `collect: {proton: options}`; its result.json as a dict."""
    recipe = tmp_path / "recipe.yaml"
    block = "".join(f"\n    {key}: {value}" for key, value in options.items()) or " {}"
    recipe.write_text(textwrap.dedent("""\
        schema_version: 1
        trials: 1
        timeout_per_trial: 240
        collect:
          proton:""") + block + "\n")
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "aorta", "sweep", "run", "--recipe", str(recipe),
            "--output", str(out), "--", sys.executable, str(PAYLOAD), str(LAUNCHES),
            *payload_args]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH", "")) if p))
    done = _run(argv, env, tmp_path)
    results = sorted(out.glob("*/cells/*/trial_*/result.json"))
    assert len(results) == 1, f"aorta exited {done[0]}; results {results}\n{done[1]}"
    return dict(json.loads(results[0].read_text()))


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str]:
    child = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = child.communicate(timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate(timeout=CHILD_TIMEOUT_S)
        raise
    return child.returncode, output[-4000:]


def calls(metrics: dict[str, Any]) -> dict[str, int | None]:
    return {row["name"]: row["calls"] for row in metrics["proton_kernels"]}


def assert_exact_capture(metrics: dict[str, Any]) -> None:
    assert metrics["proton_capture"] == "ok", metrics.get("proton_capture_reason")
    assert calls(metrics) == {"add_kernel": LAUNCHES, "fill_kernel": 1}
    assert metrics["proton_kernel_count"] == LAUNCHES + 1
    assert metrics["proton_gpu_time_ms"] > 0
    assert metrics["proton_top_kernels"][0] == "add_kernel"
    assert metrics["proton_triton_version"] == TRITON.version


@pytest.mark.parametrize("options", [{}, {"mode": "env", "backend": "cupti"},
                                     {"context": "python"}, {"data": "trace"}],
                         ids=["cli-auto", "env-cupti", "context-python", "data-trace"])
@pytest.mark.gpu
@needs_triton
@needs_nvidia
def test_kernel_counts_are_exact(tmp_path: Path, options: dict[str, str]) -> None:
    result = run_sweep(tmp_path, options)
    metrics = result["metrics"]
    assert_exact_capture(metrics)
    assert metrics["proton_backend"] == "cupti"          # auto resolved, or pinned
    artifacts = Path(metrics["proton_artifact_dir"])
    suffix = ".chrome_trace" if options.get("data") == "trace" else ".hatchet"
    assert (artifacts / f"proton{suffix}").is_file()


@pytest.mark.gpu
@needs_triton
@needs_gpu
def test_instrumentation_gives_cycles_per_scope(tmp_path: Path) -> None:
    result = run_sweep(tmp_path, {"mode": "env", "backend": "instrumentation"}, "--scoped")
    metrics = result["metrics"]
    assert metrics["proton_capture"] == "ok", metrics.get("proton_capture_reason")
    assert metrics["proton_backend"] == "instrumentation"
    cycles = metrics["proton_scope_cycles"]
    assert {"load", "store"} <= set(cycles), cycles
    assert all(cycles[scope] > 0 for scope in ("load", "store"))


@pytest.mark.gpu
@needs_triton
@needs_nvidia
def test_a_payload_ending_in_system_exit(tmp_path: Path) -> None:
    """Triton <= 3.6 skips finalize() on SystemExit: an explicit `missing`, not a blank."""
    result = run_sweep(tmp_path, {}, "--exit-code", "3")
    metrics = result["metrics"]
    release = TRITON.release
    assert release is not None
    if release <= (3, 6):
        assert metrics["proton_capture"] == "missing"
        assert "exited 3" in metrics["proton_capture_reason"]
        assert "skips finalize()" in metrics["proton_capture_reason"]
        assert "proton_kernel_count" not in metrics
    else:
        assert_exact_capture(metrics)
