"""`aorta.collectors.probes`: the light probes answer what the tools they stand in for answer."""

from __future__ import annotations

import os
import shutil
import stat
import time
from pathlib import Path

import pytest

from aorta.collectors.probes import PROBES, which
from aorta.collectors.registry import get, names


def test_which_is_shutils(tmp_path: Path) -> None:
    run = tmp_path / "bin" / "tool"
    run.parent.mkdir()
    run.write_text("#!/bin/sh\n")
    run.chmod(run.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "bin" / "plain").write_text("")
    (tmp_path / "bin" / "adir").mkdir()
    paths = [str(tmp_path / "bin"), f"/nonexistent{os.pathsep}{tmp_path / 'bin'}", "", None,
             os.pathsep, f"{tmp_path / 'bin'}{os.pathsep}{tmp_path / 'bin'}"]
    for cmd in ("tool", "plain", "adir", "missing", str(run), "sh", "python3"):
        for path in paths:
            assert which(cmd, path=path) == shutil.which(cmd, path=path), (cmd, path)


def test_module_spec_is_find_specs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util
    import sys
    import types

    from aorta.pathsearch import module_spec

    (tmp_path / "apkg").mkdir()
    (tmp_path / "apkg" / "__init__.py").write_text("")
    (tmp_path / "amod.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, "stand_in", types.ModuleType("stand_in"))
    monkeypatch.setattr(sys.modules["stand_in"], "__spec__", None)

    class Finder:          # as an editable install's finder: known to no sys.path entry
        @staticmethod
        def find_spec(name: str, path: object, target: object = None) -> object:
            return importlib.util.spec_from_loader(name, None) if name == "by_finder" else None

    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder()])
    for name in ("json", "sys", "aorta", "pytest", "apkg", "amod", "no_such_module_x",
                 "stand_in", "by_finder"):
        try:
            expected = importlib.util.find_spec(name)
        except ValueError as exc:
            with pytest.raises(ValueError, match="__spec__ is None"):
                module_spec(name)
            assert "__spec__ is None" in str(exc)
            continue
        found = module_spec(name)
        assert (found is None) == (expected is None), name
        if expected is not None and found is not None:
            assert (found.name, found.origin, found.submodule_search_locations) == \
                (expected.name, expected.origin, expected.submodule_search_locations), name


@pytest.mark.parametrize("name", sorted(PROBES))
def test_each_collector_probes_with_its_light_probe(name: str) -> None:
    cap = get(name).probe()
    light = PROBES[name]()
    assert (cap.name, cap.usable, cap.version, cap.reason, cap.fix, dict(cap.details)) == \
        (name, light["usable"], light["version"], light["reason"], light["fix"], light["details"])
    assert cap.reason or cap.usable


def test_every_built_in_has_a_probe() -> None:
    assert set(PROBES) <= set(names())


def test_the_telemetry_probe_does_not_import_pynvml_without_the_nvidia_driver():
    import ctypes
    import subprocess
    import sys

    try:
        ctypes.CDLL("libnvidia-ml.so.1")
        pytest.skip("NVIDIA's driver is here: the probe imports pynvml and asks NVML")
    except OSError:
        pass
    code = ("import sys; from aorta.collectors.probes import telemetry; p = telemetry(); "
            "print(p['usable'], 'pynvml' in sys.modules); print(p['reason'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[0] == "False False"
    import importlib.util

    if importlib.util.find_spec("pynvml") is not None:
        assert "nvidia: LibraryNotFound: NVML (libnvidia-ml.so.1" in out[1]
    else:
        assert "nvidia: pynvml is not installed" in out[1]


@pytest.mark.parametrize("text, build", [
    ("__version__ = '2.11.0+cu130'\ndebug = False\ncuda: Optional[str] = '13.0'\n"
     "git_version = 'abc'\nhip: Optional[str] = None\nxpu: Optional[str] = None\n", "cuda 13.0"),
    ("cuda = None\nhip = '6.2.41133-dd7f95766'\n", "rocm 6.2.41133-dd7f95766"),
    ("cuda_version = '12'\ncuda: str = None\nhip: str = None\n", "cpu"),
    ("cuda =\n  cuda = '1'\nxpu:str='20250101'\r\n", "xpu 20250101"),
    ("", "cuda"),                                  # unreadable: the version's local tag
])
def test_torch_build_read_from_version_py(tmp_path: Path, text: str, build: str) -> None:
    from aorta.collectors.probes import torch_build_at

    version_py = tmp_path / "version.py"
    version_py.write_text(text, newline="")
    assert torch_build_at(version_py if text else tmp_path / "none.py", "2.11.0+cu130") == build


_NVML_STUB = r"""
/* A stand-in for NVIDIA's libnvidia-ml.so.1 (the calls pynvml and the light probe make). */
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
import json, sys
if sys.argv[1] == "pynvml":
    import pynvml      # loaded first: the probe then asks pynvml, as the collector does
from aorta.collectors.probes import telemetry
print(json.dumps({"probe": telemetry(), "pynvml": "pynvml" in sys.modules}))
"""


@pytest.mark.parametrize("init_result", [0, 9], ids=["driver", "driver-not-loaded"])
def test_the_telemetry_probe_lists_gpus_as_pynvml_does(tmp_path: Path, init_result: int) -> None:
    # The light probe asks NVIDIA's library with ctypes instead of importing pynvml (70 ms on
    # an H200 host); against a compiled stand-in of that library both must answer alike, and
    # a failing NVML must be reported in pynvml's own words.
    import importlib.util
    import json
    import subprocess
    import sys

    if importlib.util.find_spec("pynvml") is None or shutil.which("cc") is None:
        pytest.skip("needs nvidia-ml-py and a C compiler")
    source = tmp_path / "nvml_stub.c"
    source.write_text(_NVML_STUB.replace("INIT_RESULT", str(init_result)))
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(tmp_path / "libnvidia-ml.so.1"),
                    str(source)], check=True, timeout=120)
    env = {**os.environ, "LD_LIBRARY_PATH": str(tmp_path)}
    answers = {}
    for how in ("light", "pynvml"):
        done = subprocess.run([sys.executable, "-c", _PROBE_TELEMETRY, how], env=env,
                              capture_output=True, text=True, timeout=120, check=True)
        answers[how] = json.loads(done.stdout)
    assert answers["light"]["probe"] == answers["pynvml"]["probe"]
    if init_result == 0:
        assert answers["light"] == {"pynvml": False, "probe": {
            "usable": True, "version": "nvidia", "reason": "", "fix": "",
            "details": {"devices": "NVIDIA H200, NVIDIA Stand-in B"}}}
    else:
        assert answers["light"]["probe"]["usable"] is False
        assert "nvidia: NVMLError" in answers["light"]["probe"]["reason"]


def _standin_ncu(tmp_path: Path) -> Path:
    """An `ncu` that notes its start and pid, takes 0.3 s, and answers like ncu --version."""
    script = tmp_path / "ncu"
    script.write_text(f"#!/bin/sh\necho $$ > '{tmp_path}/ncu.pid'\nsleep 0.3\n"
                      "echo 'NVIDIA (R) Nsight Compute Command Line Profiler'\n"
                      "echo 'Version 2099.1.0.0 (build 1) (public-release)'\n")
    script.chmod(0o755)
    return script


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_profilers_answer_their_version_while_the_other_probes_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from aorta.collectors.probes import run_probes
    from aorta.collectors.tool_process import tool_version

    monkeypatch.setenv("NCU_BIN", str(_standin_ncu(tmp_path)))
    order: list[str] = []

    def probe(name: str) -> str | None:
        order.append(name)
        if name == "ncu":
            return tool_version(os.environ["NCU_BIN"], r"Version\s+(\S+)")
        # the other probe runs while ncu is already running: its pid file is there
        for _ in range(1000):
            if (tmp_path / "ncu.pid").is_file() and (tmp_path / "ncu.pid").read_text().strip():
                return "saw ncu running"
            time.sleep(0.01)
        return "ncu never started"

    answers = run_probes(["ncu", "torch"], probe)
    assert list(answers) == ["ncu", "torch"] and order == ["torch", "ncu"]
    assert answers == {"ncu": "2099.1.0.0", "torch": "saw ncu running"}


def test_a_started_version_nobody_took_is_ended(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from aorta.collectors.probes import run_probes

    monkeypatch.setenv("NCU_BIN", str(_standin_ncu(tmp_path)))

    def probe(name: str) -> None:
        if name == "ncu":
            raise RuntimeError("a probe that fails before asking")
        for _ in range(1000):         # cprofile's turn: wait until ncu has surely started
            if (tmp_path / "ncu.pid").is_file() and (tmp_path / "ncu.pid").read_text().strip():
                return
            time.sleep(0.01)

    with pytest.raises(RuntimeError):
        run_probes(["cprofile", "ncu"], probe)
    pid = int((tmp_path / "ncu.pid").read_text())
    assert _gone(pid)      # killed and reaped: not even a zombie is left


def test_a_taken_version_interrupted_while_waited_for_is_ended(tmp_path: Path) -> None:
    from aorta.collectors.tool_process import _spawn_merged, start_versions
    from aorta.early_tools import EarlyTools

    ncu = str(_standin_ncu(tmp_path))
    with pytest.raises(KeyboardInterrupt):
        with start_versions([ncu]):
            proc = EarlyTools.take(_spawn_merged, [ncu, "--version"])
            assert proc is not None
            raise KeyboardInterrupt    # as a Ctrl-C would, while run_tool waited for it
    assert proc.returncode is not None and _gone(proc.pid)


def test_a_tool_that_overruns_is_stopped_even_if_a_descendant_left_its_session(
        tmp_path: Path) -> None:
    # The descendant keeps the pipe open for 30 s: the run ends within the drain, not then.
    from aorta.collectors.tool_process import run_tool
    from aorta_testing import session_leaver

    tool, marker = session_leaver(tmp_path)
    started = time.monotonic()
    result = run_tool([str(tool)], timeout_s=0.5)
    assert time.monotonic() - started < 10
    assert result.timed_out and result.returncode is None
    os.kill(int(marker.read_text()), 9)
