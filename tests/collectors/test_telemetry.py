"""The `telemetry` collector: GPU state sampled beside the payload (issue 12.4).

No GPU here: NVML is replaced by a stand-in `pynvml` module (it answers the calls the source
makes with fixed values and a throttle mask of our choosing) so that the sampler, the runner's
hooks, the figures and the notes can be checked; tests/gpu/test_telemetry_gpu.py reads a real
H200 through the real NVML.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from aorta.cli import main
from aorta.collectors.telemetry.collector import TelemetryCollector, telemetry_metrics
from aorta.run.gpu_notes import gpu_state_notes
from aorta_testing import fake_nvidia_smi


def standin_nvml(throttle: int = 0, sm_clock: int = 1980, fail_read: bool = False,
                 running: dict[str, Callable[[], list[int]]] | None = None
                 ) -> types.ModuleType:
    """`running`: handle ("h0", "h1") -> the pids NVML lists on it (no process listing at all
    when None); a GPU listed in it reports 97% utilisation, the others 3%."""
    nv = types.ModuleType("pynvml")
    nv.NVML_CLOCK_SM, nv.NVML_CLOCK_MEM, nv.NVML_TEMPERATURE_GPU = 1, 2, 0  # type: ignore[attr-defined]
    calls: dict[str, int] = {"reads": 0}

    def clock(handle: Any, which: int) -> int:
        calls["reads"] += 1
        if fail_read:
            raise RuntimeError("NVML_ERROR_GPU_IS_LOST")
        return sm_clock if which == 1 else 3201

    functions = {
        "nvmlInit": lambda: None, "nvmlShutdown": lambda: None,
        "nvmlDeviceGetCount": lambda: 2, "nvmlDeviceGetHandleByIndex": lambda i: f"h{i}",
        "nvmlDeviceGetName": lambda h: b"NVIDIA H200",
        "nvmlDeviceGetUUID": lambda h: f"GPU-{h}", "nvmlDeviceGetClockInfo": clock,
        "nvmlDeviceGetPowerUsage": lambda h: 350_000, "nvmlDeviceGetTemperature": lambda h, k: 41,
        "nvmlDeviceGetUtilizationRates": lambda h: types.SimpleNamespace(
            gpu=97 if running is None or h in running else 3, memory=40),
        "nvmlDeviceGetCurrentClocksEventReasons": lambda h: throttle,
    }
    if running is not None:
        functions["nvmlDeviceGetComputeRunningProcesses"] = lambda h: [
            types.SimpleNamespace(pid=pid, usedGpuMemory=None)
            for pid in running.get(h, list)()]
    for name, fn in functions.items():
        setattr(nv, name, fn)
    nv.calls = calls  # type: ignore[attr-defined]
    return nv


def _sweep(tmp_path: Path, recipe: str, *argv: str,
           code: str = "import time; time.sleep(0.3)") -> int:
    (tmp_path / "r.yaml").write_text(recipe)
    return main(["sweep", "run", "--recipe", str(tmp_path / "r.yaml"), "--output",
                 str(tmp_path / "out"), *argv, "--", sys.executable, "-c", code])


def pids_running(marker: str) -> list[int]:
    """Processes whose command line holds `marker` (the payload below, and its children)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and marker.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                found.append(int(entry))
        except OSError:
            continue
    return found


def test_samples_beside_the_payload_and_publishes_figures(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", standin_nvml(throttle=0x4 | 0x1))
    recipe = ("schema_version: 1\nticket: t\ntrials: 2\n"
              "collect: {telemetry: {interval_ms: 20}}\naxes: {v: {a: {}, b: {}}}\n")
    assert _sweep(tmp_path, recipe) == 0
    trial = tmp_path / "out/t/cells/a/trial_0"
    result = json.loads((trial / "result.json").read_text())
    assert result["captures"]["telemetry"]["state"] == "ok"
    assert result["argv"][:2] == [sys.executable, "-c"]      # a sampler: argv untouched
    m = result["metrics"]
    samples = json.loads((trial / "telemetry/samples.json").read_text())
    assert [d["index"] for d in samples["devices"]] == ["0", "1"]    # not pinned: every GPU
    assert m["telemetry_samples"] == sum(len(d["samples"]) for d in samples["devices"])
    assert m["telemetry_samples"] >= 2 * 10          # ~0.3 s at 20 ms, on two GPUs
    assert (m["telemetry_sm_clock_mhz_median"], m["telemetry_power_w_max"]) == (1980, 350.0)
    assert m["telemetry_throttled_fraction"] == 1.0
    assert m["telemetry_throttle_reasons"] == ["sw_power_cap"]   # idle (0x1) is not a slowdown
    assert any("slowed itself down (sw_power_cap)" in w for w in result["warnings"])
    perf = (tmp_path / "out/t/perf.md").read_text()
    assert "## GPU state" in perf and "throttled" in perf
    # this NVML lists no processes: which of the two GPUs the trial used is not known
    assert "telemetry_used_devices" not in m
    assert any("which of them ran the trial's processes is not known: the figures cover all 2"
               in w for w in result["warnings"])


# The payload runs a child of its own too, so that the trial's processes are found below it.
_BUSY = ("import subprocess, sys, time; child = subprocess.Popen([sys.executable, '-c', "
         "'import time; time.sleep(1.5)  # telemetry-busy']); time.sleep(0.6); child.kill()"
         "  # telemetry-busy")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_figures_come_from_the_gpu_the_trial_ran_on(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", standin_nvml(
        running={"h1": lambda: pids_running("telemetry-busy")}))
    assert _sweep(tmp_path, "schema_version: 1\nticket: u\ncollect: {telemetry: "
                  "{interval_ms: 20}}\n", code=_BUSY) == 0
    trial = tmp_path / "out/u/cells/default/trial_0"
    result = json.loads((trial / "result.json").read_text())
    m = result["metrics"]
    samples = json.loads((trial / "telemetry/samples.json").read_text())["devices"]
    assert m["telemetry_used_devices"] == ["1"]
    assert m["telemetry_samples"] == len(samples[1]["samples"])      # GPU 0's are left out
    assert m["telemetry_gpu_util_pct_median"] == 97
    assert max(s["own_procs"] for s in samples[1]["samples"]) == 2   # the payload and its child
    assert m["telemetry_shared_fraction"] == 0 and "telemetry_shared_note" not in m
    assert not [w for w in result["warnings"] if "GPU" in w]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_another_program_on_the_trials_gpu_is_a_warning(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]) as other:
        try:
            monkeypatch.setitem(sys.modules, "pynvml", standin_nvml(
                running={"h0": lambda: [other.pid, *pids_running("telemetry-busy")]}))
            assert _sweep(tmp_path, "schema_version: 1\nticket: s\ncollect: {telemetry: "
                          "{interval_ms: 20}}\n", code=_BUSY) == 0
        finally:
            other.kill()
    result = json.loads((tmp_path / "out/s/cells/default/trial_0/result.json").read_text())
    m = result["metrics"]
    assert m["telemetry_used_devices"] == ["0"]
    assert m["telemetry_shared_fraction"] == 1.0
    warning = next(w for w in result["warnings"] if "another program ran on GPU 0" in w)
    assert f"(pids {other.pid})" in warning and "may include the contention" in warning


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("listed", [[], [2 ** 31 - 7]], ids=["nothing", "a pid /proc lacks"])
def test_no_process_of_the_trial_seen_covers_every_gpu_with_a_warning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listed: list[int]) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", standin_nvml(
        running={"h0": lambda: listed, "h1": list}))
    assert _sweep(tmp_path, "schema_version: 1\nticket: n\ncollect: [telemetry]\n") == 0
    result = json.loads((tmp_path / "out/n/cells/default/trial_0/result.json").read_text())
    assert "telemetry_used_devices" not in result["metrics"]
    samples = json.loads((tmp_path / "out/n/cells/default/trial_0/telemetry/samples.json")
                         .read_text())["devices"]
    assert result["metrics"]["telemetry_samples"] == sum(len(d["samples"]) for d in samples)
    assert any("no process of this trial was seen on any of them" in w
               for w in result["warnings"])


def test_a_pinned_trial_samples_only_its_gpu(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", standin_nvml())
    monkeypatch.setenv("PATH", fake_nvidia_smi(tmp_path / "bin")["PATH"])
    assert _sweep(tmp_path, "schema_version: 1\nticket: p\ncollect: [telemetry]\n",
                  "--gpus", "1") == 0
    samples = json.loads((tmp_path / "out/p/cells/default/trial_0/telemetry/samples.json")
                         .read_text())
    assert [d["index"] for d in samples["devices"]] == ["1"]


def test_a_failing_sampler_leaves_an_unparsed_capture_not_a_lost_trial(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", standin_nvml())

    def broken(*args: Any) -> None:
        raise RuntimeError("NVML_ERROR_DRIVER_NOT_LOADED")

    monkeypatch.setattr(TelemetryCollector, "sample", broken)
    assert _sweep(tmp_path, "schema_version: 1\nticket: f\ncollect: [telemetry]\n") == 0
    result = json.loads((tmp_path / "out/f/cells/default/trial_0/result.json").read_text())
    assert result["verdict"] == "pass"
    assert result["captures"]["telemetry"]["state"] == "unparsed"
    assert "NVML_ERROR_DRIVER_NOT_LOADED" in result["captures"]["telemetry"]["reason"]


def test_without_nvml_or_amdsmi_the_sweep_is_refused_before_any_trial(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if TelemetryCollector().probe().usable:
        pytest.skip("this machine has GPU telemetry")
    assert _sweep(tmp_path, "schema_version: 1\nticket: n\ncollect: [telemetry]\n") == 2
    err = capsys.readouterr().err
    assert "collector telemetry cannot measure on this machine" in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_figures_from_samples() -> None:
    doc = {"schema_version": 1, "devices": [{"index": "0", "name": "X", "samples": [
        {"t": 0, "sm_clock_mhz": 1000, "power_w": 100, "throttle": 0},
        {"t": 1, "sm_clock_mhz": 2000, "power_w": 300, "throttle": 0x40},
        {"t": 2, "sm_clock_mhz": 1500, "throttle": 0x2}]}]}
    m = telemetry_metrics(doc)
    assert (m["telemetry_sm_clock_mhz_min"], m["telemetry_sm_clock_mhz_median"],
            m["telemetry_sm_clock_mhz_max"]) == (1000, 1500, 2000)
    assert m["telemetry_power_w_median"] == 200       # a sample without power is left out
    assert m["telemetry_throttled_fraction"] == pytest.approx(1 / 3)
    assert m["telemetry_throttle_reasons"] == ["hw_thermal_slowdown"]
    assert "telemetry_temp_c_median" not in m         # never reported: never guessed
    assert m["telemetry_capture"] == "ok"
    empty = telemetry_metrics({"schema_version": 1, "devices": [{"samples": []}]})
    assert empty["telemetry_capture"] == "empty"
    with pytest.raises(ValueError):
        telemetry_metrics({"devices": []})


def test_notes_on_clocks_that_differ_between_cells() -> None:
    same = {"a": {"telemetry_sm_clock_mhz_median": 1980},
            "b": {"telemetry_sm_clock_mhz_median": 1970}}
    assert gpu_state_notes(same) == []
    apart = {"a": {"telemetry_sm_clock_mhz_median": 1980},
             "b": {"telemetry_sm_clock_mhz_median": 1500, "telemetry_throttled_fraction": 0.5}}
    notes = gpu_state_notes(apart)
    assert any("throttled during trials of b (50% of samples)" in n for n in notes)
    assert any("1500 MHz in b against 1980 MHz in a" in n for n in notes)


def test_real_h200_samples_tell_busy_from_idle() -> None:
    """Samples NVML gave on an H200 (tests/fixtures/telemetry/README.md): a GPU at work and one
    asleep read apart, the power cap is named, and the idle reason alone is not throttling."""
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "telemetry"
    busy, idle = (telemetry_metrics(json.loads((fixtures / f"h200-{n}.json").read_text()))
                  for n in ("busy", "idle"))
    assert busy["telemetry_capture"] == idle["telemetry_capture"] == "ok"
    assert (busy["telemetry_samples"], idle["telemetry_samples"]) == (248, 63)
    assert busy["telemetry_gpu_util_pct_median"] >= 95 and idle["telemetry_gpu_util_pct_median"] == 0
    assert busy["telemetry_power_w_median"] > 4 * idle["telemetry_power_w_median"]
    assert busy["telemetry_throttle_reasons"] == ["sw_power_cap"]
    assert 0.5 < busy["telemetry_throttled_fraction"] < 0.8
    assert idle["telemetry_throttled_fraction"] == 0 and "telemetry_throttle_note" not in idle
    assert busy["telemetry_sm_clock_mhz_median"] > 2 * idle["telemetry_sm_clock_mhz_median"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_process_listed_before_the_payload_is_known_is_nobodys_yet(tmp_path: Path) -> None:
    # The GPU may list the payload before the warden's word that it started reaches the
    # sampler: it must not be named as another program (nor may anything else be, since no
    # trial work can be contended with before the payload runs).
    from aorta.collectors.telemetry.collector import _Recorder
    from aorta.collectors.telemetry.sources import DeviceInfo
    from aorta.host.proc_table import proc_info

    sleeper = [sys.executable, "-c", "import time; time.sleep(30)"]
    with subprocess.Popen(sleeper) as payload, subprocess.Popen(sleeper) as other:
        listed = [payload.pid]

        class OneGpu:
            vendor = "nvidia"
            devices = [DeviceInfo("0", "stand-in", None)]

            def read(self, position: int) -> dict[str, float]:
                return {"sm_clock_mhz": 1.0}

            def processes(self, position: int) -> list[int]:
                return list(listed)

            def close(self) -> None:
                pass

        try:
            recorder = _Recorder(OneGpu(), 3600.0, (tmp_path, ()))   # samples once at once
            info = proc_info(payload.pid)
            assert info is not None
            recorder.payload_started(payload.pid, info.start_ticks, "token-x")
            listed.append(other.pid)
            recorder.stop()                                          # and once at the stop
        finally:
            payload.kill()
            other.kill()
    before, after = recorder.samples[0]
    assert (before["own_procs"], before["other_procs"]) == (0, 0)
    assert (after["own_procs"], after["other_procs"]) == (1, 1)
    assert recorder.other_pids == [{other.pid}]
