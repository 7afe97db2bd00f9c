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

from aorta.collectors.binaries import gpu_vendor
from aorta.collectors.proton.host import find_triton
from aorta_testing import flat_metrics

ROOT = Path(__file__).resolve().parents[2]
PAYLOAD = Path(__file__).resolve().parent / "payloads" / "proton_vecadd.py"
LAUNCHES = 12
CHILD_TIMEOUT_S = 300
#: The trial timeout of the SIGTERM case: well past the payload's start-up and first compile
#: (about 4 s on an H200 with a warm cache), well short of its 600 s sleep.
TIMEOUT_CASE_S = 60

TRITON = find_triton()
VENDOR = gpu_vendor()

needs_triton = pytest.mark.skipif(TRITON.version is None,
                                  reason=f"Triton is not installed ({TRITON.problem})")
needs_gpu = pytest.mark.skipif(VENDOR is None,
                               reason="no GPU device (/dev/kfd, /dev/nvidiactl, nvidia-smi)")
needs_nvidia = pytest.mark.skipif(VENDOR != "nvidia", reason="cupti needs an NVIDIA GPU")


def run_sweep(tmp_path: Path, options: dict[str, str], *payload_args: str,
              timeout_s: int = 240) -> dict[str, Any]:
    """Run one trial under `collect: {proton: options}`; its result.json as a dict."""
    recipe = tmp_path / "recipe.yaml"
    block = "".join(f"\n    {key}: {value}" for key, value in options.items()) or " {}"
    recipe.write_text(textwrap.dedent(f"""\
        schema_version: 1
        trials: 1
        timeout_per_trial: {timeout_s}
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
    metrics = flat_metrics(result)
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
    metrics = flat_metrics(result)
    assert metrics["proton_capture"] == "ok", metrics.get("proton_capture_reason")
    assert metrics["proton_backend"] == "instrumentation"
    cycles = metrics["proton_scope_cycles"]
    assert {"load", "store"} <= set(cycles), cycles
    assert all(cycles[scope] > 0 for scope in ("load", "store"))


ENDINGS = {
    # args to the payload, its exit code, the trial's verdict, a line its stderr must hold
    "sys.exit(0)": ((), 0, "pass", None),
    "sys.exit(3)": (("--exit-code", "3"), 3, "fail", None),
    "raises": (("--raise",), 1, "fail",
               "RuntimeError: vecadd: raised after the work, as asked (--raise)"),
}


@pytest.mark.parametrize("ending", list(ENDINGS))
@pytest.mark.gpu
@needs_triton
@needs_gpu
def test_the_capture_survives_how_the_script_ends(tmp_path: Path, ending: str) -> None:
    """Issue 12.2: Triton <= 3.6's CLI skipped finalize() on sys.exit() and on an exception,
    so `sys.exit(main())` left no capture. aorta's launcher writes it for every ending and
    passes the payload's own exit status through."""
    args, exit_code, verdict, last_line = ENDINGS[ending]
    result = run_sweep(tmp_path, {}, *args)
    assert "aorta.launchers.proton_run" in result["argv"]
    assert (result["exit_code"], result["signal"], result["verdict"]) == \
        (exit_code, None, verdict), result["reason"]
    assert_exact_capture(flat_metrics(result))
    if last_line is not None:
        tail = result["stderr_tail"] or ""
        assert last_line in tail.splitlines(), tail
        assert "proton_run.py" not in tail and "as_main.py" not in tail   # the payload's own


@pytest.mark.gpu
@needs_triton
@needs_gpu
def test_the_capture_survives_the_timeouts_sigterm(tmp_path: Path) -> None:
    """aorta's timeout sends SIGTERM; the launcher finalizes, then dies by SIGTERM. The payload
    finishes its kernels and sleeps (in Python, where the handler can run) until then."""
    result = run_sweep(tmp_path, {}, "--sleep-after", "600", timeout_s=TIMEOUT_CASE_S)
    assert result["timed_out"] is True and result["verdict"] == "error", result["reason"]
    assert result["signal"] == signal.SIGTERM, result["reason"]
    assert_exact_capture(flat_metrics(result))
