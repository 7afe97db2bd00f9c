"""Every collector's `probe()`: it answers for this machine, with a reason when it cannot
measure, and the telemetry probe lists GPUs in NVML's own words."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from aorta.collectors.registry import get, names

BUILT_IN = ["cprofile", "ncu", "nsys", "proton", "rocprof", "telemetry", "torch"]


def test_the_built_in_collectors_are_registered_through_entry_points() -> None:
    assert set(BUILT_IN) <= set(names())


@pytest.mark.parametrize("name", BUILT_IN)
def test_each_collector_probes_this_machine(name: str) -> None:
    cap = get(name).probe()
    assert cap.name == name
    assert cap.reason or cap.usable
    assert cap.usable or cap.fix or name == "proton"


def test_the_cprofile_probe_names_this_python() -> None:
    import platform

    cap = get("cprofile").probe()
    assert (cap.usable, cap.version) == (True, platform.python_version())


def test_a_profiler_binary_answers_its_version(tmp_path: Path, monkeypatch) -> None:
    script = tmp_path / "ncu"
    script.write_text("#!/bin/sh\necho 'NVIDIA (R) Nsight Compute Command Line Profiler'\n"
                      "echo 'Version 2099.1.0.0 (build 1) (public-release)'\n")
    script.chmod(0o755)
    monkeypatch.setenv("NCU_BIN", str(script))
    assert get("ncu").probe().version == "2099.1.0.0"


_NVML_STUB = r"""
/* A stand-in for NVIDIA's libnvidia-ml.so.1 (the calls pynvml makes). */
#include <string.h>
typedef void *nvmlDevice_t;
static int devices[2];
int nvmlInit_v2(void) { return INIT_RESULT; }
int nvmlInitWithFlags(unsigned int flags) { (void)flags; return INIT_RESULT; }
int nvmlShutdown(void) { return 0; }
int nvmlErrorString(int r) { (void)r; return 0; }
int nvmlDeviceGetCount_v2(unsigned int *count) { *count = 2; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d) {
    if (i >= 2) return 2; *d = &devices[i]; return 0; }
int nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int n) {
    strncpy(name, d == &devices[0] ? "NVIDIA H200" : "NVIDIA Stand-in B", n); return 0; }
int nvmlDeviceGetUUID(nvmlDevice_t d, char *u, unsigned int n) {
    strncpy(u, d == &devices[0] ? "GPU-0" : "GPU-1", n); return 0; }
"""

_PROBE_TELEMETRY = """
import json
from aorta.collectors.registry import get
cap = get("telemetry").probe()
print(json.dumps([cap.usable, cap.version, cap.reason, dict(cap.details)]))
"""


@pytest.mark.parametrize("init_result", [0, 9], ids=["driver", "driver-not-loaded"])
def test_the_telemetry_probe_lists_the_gpus_nvml_lists(tmp_path: Path, init_result: int) -> None:
    if importlib.util.find_spec("pynvml") is None or shutil.which("cc") is None:
        pytest.skip("needs nvidia-ml-py and a C compiler")
    source = tmp_path / "nvml_stub.c"
    source.write_text(_NVML_STUB.replace("INIT_RESULT", str(init_result)))
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(tmp_path / "libnvidia-ml.so.1"),
                    str(source)], check=True, timeout=120)
    env = {**os.environ, "LD_LIBRARY_PATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", _PROBE_TELEMETRY], env=env,
                          capture_output=True, text=True, timeout=120, check=True)
    usable, version, reason, details = json.loads(done.stdout)
    if init_result == 0:
        assert (usable, version, details) == (True, "nvidia",
                                              {"devices": "NVIDIA H200, NVIDIA Stand-in B"})
    else:
        assert usable is False and "nvidia: NVMLError" in reason
