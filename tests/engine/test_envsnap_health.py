"""Issue 14: the environment snapshot records HIP/hipBLASLt, the container, the Python
environment and the GPUs' health; an absent, failing or hanging tool is recorded as
unavailable, never a crash, and nothing secret is written."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from aorta.host.health import _guarded, system_health
from aorta.host.stack import (NoAnswer, container_info, hipblaslt_info, python_env_info,
                                 tool_output)
from aorta_testing import run_aorta

# A stand-in nvidia-smi: a real executable answering the health query the way the real one
# does on an H200 (values from one), and failing anything else.
FAKE_SMI = f"""#!{sys.executable}
import sys
if any(a.startswith("--query-gpu=index,uuid,clocks.sm") for a in sys.argv):
    print("0, GPU-4a4f181d, 345, 3201, 1980, 35, 39, 79.70, P0, 0x0000000000000001, Enabled, 0, 0, [N/A]")
    sys.exit(0)
sys.exit(9)
"""


def _tool(folder: Path, name: str, body: str) -> None:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(body)
    path.chmod(0o755)


def test_aorta_env_records_the_new_blocks_and_absent_tools(tmp_path: Path):
    bin_dir = tmp_path / "bin"
    _tool(bin_dir, "nvidia-smi", FAKE_SMI)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.path.dirname(sys.executable)}",
           "HOME": str(tmp_path), "CONTAINER_IMAGE": "https://bot:hunter2-pass-word@registry.example/rocm:6.2",
           "CONDA_DEFAULT_ENV": "bench"}
    proc = run_aorta("env", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    snap = json.loads(proc.stdout)
    health = snap["system_health"]
    assert health["nvidia"] == [{
        "index": "0", "uuid": "GPU-4a4f181d", "clocks.sm": "345", "clocks.mem": "3201",
        "clocks.max.sm": "1980", "temperature.gpu": "35", "temperature.memory": "39",
        "power.draw": "79.70", "pstate": "P0",
        "clocks_event_reasons.active": "0x0000000000000001", "ecc.mode.current": "Enabled",
        "ecc.errors.corrected.volatile.total": "0", "ecc.errors.uncorrected.volatile.total": "0",
        "retired_pages.pending": None}]
    assert health["amd"] == {"unavailable": "no amd-smi or rocm-smi on PATH"}
    assert "kernel log" in health["xid"]["unavailable"]
    assert snap["hip"]["version"] is None and snap["hip"]["unavailable"]
    assert "hunter2-pass-word" not in proc.stdout
    assert snap["container"]["image"].startswith("https://bot:")
    assert snap["python_env"]["conda_env"] == "bench"
    assert snap["python_env"]["prefix"] == sys.prefix
    for key in ("hip", "hipblaslt", "container", "python_env", "system_health"):
        assert key not in snap["partial_reasons"]


def test_a_failing_or_hanging_tool_is_recorded_with_why(tmp_path: Path):
    _tool(tmp_path, "hangs", "#!/bin/sh\nexec sleep 30\n")
    started = time.monotonic()
    found = _guarded(lambda: tool_output([str(tmp_path / "hangs")], timeout=0.5), "hangs")
    assert time.monotonic() - started < 10
    assert found == {"unavailable": f"{tmp_path / 'hangs'} did not answer within 0.5 s"}
    _tool(tmp_path, "fails", "#!/bin/sh\necho broken >&2\nexit 4\n")
    failed = _guarded(lambda: tool_output([str(tmp_path / "fails")]), "fails")
    assert "exited 4: broken" in failed["unavailable"]


def test_no_tools_at_all_is_not_a_crash(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("PATH", str(tmp_path))
    health = system_health()
    assert health["nvidia"] == {"unavailable": "no nvidia-smi on PATH"}


def test_hipblaslt_version_from_its_header(tmp_path: Path):
    header = tmp_path / "include" / "hipblaslt"
    header.mkdir(parents=True)
    (header / "hipblaslt-version.h").write_text(
        "#define HIPBLASLT_VERSION_MAJOR 0\n#define HIPBLASLT_VERSION_MINOR 10\n"
        "#define HIPBLASLT_VERSION_PATCH 60200\n")
    assert hipblaslt_info({"ROCM_PATH": str(tmp_path)})["version"] == "0.10.60200"


def test_container_and_python_env_from_variables():
    info = container_info({"CONTAINER_IMAGE": "rocm/pytorch:latest", "CONTAINER_NAME": "b1"})
    assert info["image"] == "rocm/pytorch:latest" and info["name"] == "b1"
    assert python_env_info({})["kind"] in ("venv", "conda", "system")


def test_a_tool_that_times_out_leaves_no_process_behind(tmp_path: Path):
    """A snapshot tool is often a script with children (hipcc, rocm-smi): all of them go."""
    marker = tmp_path / "child.pid"
    script = tmp_path / "slow-tool"
    script.write_text(f"#!/bin/sh\nsleep 60 &\necho $! > {marker}\nsleep 60\n")
    script.chmod(0o755)
    with pytest.raises(NoAnswer):
        tool_output([str(script)], timeout=1.0)
    child = int(marker.read_text())
    # SIGKILL is sent to the whole group before run_tool returns; the kernel ends the
    # grandchild a moment later, so give it (not a live `sleep 60`) a few seconds.
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in "ZX"
    except (FileNotFoundError, ProcessLookupError):
        return False


def test_a_failing_tool_hands_over_to_the_next_source(monkeypatch, tmp_path: Path):
    bin_dir = tmp_path / "bin"
    _tool(bin_dir, "hipconfig", "#!/bin/sh\necho 'hipconfig: cannot find HIP_PATH' >&2\nexit 1\n")
    _tool(bin_dir, "hipcc", "#!/bin/sh\necho 'HIP version: 6.2.41133-dd7f95766'\n")
    _tool(bin_dir, "amd-smi", "#!/bin/sh\necho 'AMDSMI_STATUS_DRIVER_NOT_LOADED'\n")
    _tool(bin_dir, "rocm-smi", "#!/bin/sh\necho '{\"card0\": {\"Temperature (Sensor edge) (C)\": \"35.0\"}}'\n")
    monkeypatch.setenv("PATH", str(bin_dir))
    from aorta.host.stack import hip_info

    assert hip_info({"ROCM_PATH": str(tmp_path)}) == {
        "version": "6.2.41133-dd7f95766", "source": "hipcc --version"}
    assert system_health()["amd"] == {
        "tool": "rocm-smi", "data": {"card0": {"Temperature (Sensor edge) (C)": "35.0"}}}
    # Both failing: one line with each tool's reason.
    _tool(bin_dir, "rocm-smi", "#!/bin/sh\nexit 2\n")
    why = system_health()["amd"]["unavailable"]
    assert why.startswith("RuntimeError: amd-smi: ") and "rocm-smi: rocm-smi --showtemp exited 2" in why
    _tool(bin_dir, "hipcc", "#!/bin/sh\nexit 5\n")
    missing = hip_info({"ROCM_PATH": str(tmp_path)})
    assert missing["version"] is None
    assert "hipconfig --version exited 1: hipconfig: cannot find HIP_PATH" in missing["unavailable"]
    assert "hipcc --version exited 5" in missing["unavailable"]


def test_the_newest_hipblaslt_library_wins_by_number_not_text(tmp_path: Path):
    lib = tmp_path / "lib"
    lib.mkdir()
    for name in ("libhipblaslt.so.0.9.60100", "libhipblaslt.so.0.10.60200"):
        (lib / name).write_text("")
    info = hipblaslt_info({"ROCM_PATH": str(tmp_path)})
    assert info == {"version": "0.10.60200", "source": str(lib / "libhipblaslt.so.0.10.60200")}


def test_the_snapshot_reads_nvidia_smi_and_nvcc(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from aorta.host.snapshot import snapshot

    bin_dir = tmp_path / "bin"
    _tool(bin_dir, "nvidia-smi", (
        '#!/bin/sh\ncase "$1" in\n'
        '  --query-gpu=index,uuid,*) echo "0, GPU-4a4f, 345, 3201, 1980, 35, 39, 79.70, P0, '
        '0x0000000000000001, Enabled, 0, 0, [N/A]";;\n'
        '  *) echo "0, NVIDIA H200, GPU-4a4f, 580.159.04, 143771, 345, 1980, 3201, 700.00, 35, '
        '00000000:19:00.0";;\nesac\n'))
    _tool(bin_dir, "nvcc", '#!/bin/sh\necho "Cuda compilation tools, release 13.0, V13.0.48"\n')
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    snap = snapshot()
    assert snap["nvidia"][0]["name"] == "NVIDIA H200", snap["partial_reasons"]
    assert snap["cuda_version"] == "13.0"
    assert snap["system_health"]["nvidia"][0]["clocks.sm"] == "345"
