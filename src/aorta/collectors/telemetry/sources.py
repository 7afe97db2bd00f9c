"""Reading a GPU's state once: SM and memory clocks, power, temperature, utilisation and the
reasons its clocks are held down, through NVML (`nvidia-ml-py`, imported as `pynvml`) or AMD SMI's
Python library (`amdsmi`). A field a device or driver cannot give is left out, never guessed.

Calls and units per the NVML API reference and the AMD SMI Python API reference (the AMD path not
run on AMD hardware here): docs/collectors/telemetry.md, "What is read".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

#: NVML's clock event reasons that mean "slower than it could be" (not idle, not a setting).
SLOWDOWN_BITS = {0x4: "sw_power_cap", 0x8: "hw_slowdown", 0x20: "sw_thermal_slowdown",
                 0x40: "hw_thermal_slowdown", 0x80: "hw_power_brake_slowdown"}


def reasons_of(mask: int) -> list[str]:
    return [name for bit, name in SLOWDOWN_BITS.items() if mask & bit]


@dataclass(frozen=True)
class DeviceInfo:
    """One GPU: its index among the driver's devices, name and UUID (None: not reported)."""

    index: str
    name: str
    uuid: str | None


class Source(Protocol):
    vendor: str
    devices: list[DeviceInfo]

    def read(self, position: int) -> dict[str, float]:
        """One sample of device `position` in `devices`: sm_clock_mhz, mem_clock_mhz,
        power_w, temp_c, gpu_util_pct, mem_util_pct, throttle (a bit mask of
        SLOWDOWN_BITS)."""

    def processes(self, position: int) -> list[int] | None:
        """The pids of the processes running work on device `position` now, or None when
        the library cannot tell."""

    def close(self) -> None: ...


def _try(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception:   # a field this device or driver does not report: left out
        return None


class NvmlSource:
    vendor = "nvidia"

    def __init__(self, wanted: Sequence[str] | None) -> None:
        import pynvml

        self.nv = pynvml
        pynvml.nvmlInit()
        count = pynvml.nvmlDeviceGetCount()
        indices = [int(i) for i in wanted if i.isdigit()] if wanted else list(range(count))
        self.handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in indices if i < count]
        self.devices = [DeviceInfo(str(i), _text(_try(pynvml.nvmlDeviceGetName, h)) or "?",
                                   _text(_try(pynvml.nvmlDeviceGetUUID, h)))
                        for i, h in zip(indices, self.handles)]
        self.reasons = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
            pynvml.nvmlDeviceGetCurrentClocksThrottleReasons

    def read(self, position: int) -> dict[str, float]:
        nv, h = self.nv, self.handles[position]
        util = _try(nv.nvmlDeviceGetUtilizationRates, h)
        power = _try(nv.nvmlDeviceGetPowerUsage, h)
        fields = {"sm_clock_mhz": _try(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_SM),
                  "mem_clock_mhz": _try(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_MEM),
                  "power_w": power / 1000.0 if power is not None else None,
                  "temp_c": _try(nv.nvmlDeviceGetTemperature, h, nv.NVML_TEMPERATURE_GPU),
                  "gpu_util_pct": util.gpu if util is not None else None,
                  "mem_util_pct": util.memory if util is not None else None,
                  "throttle": _try(self.reasons, h)}
        return {k: float(v) for k, v in fields.items() if v is not None}

    def processes(self, position: int) -> list[int] | None:
        listing = getattr(self.nv, "nvmlDeviceGetComputeRunningProcesses", None)
        found = _try(listing, self.handles[position]) if listing else None
        return None if found is None else [int(p.pid) for p in found]

    def close(self) -> None:
        _try(self.nv.nvmlShutdown)


class AmdSmiSource:
    vendor = "amd"

    def __init__(self, wanted: Sequence[str] | None) -> None:
        import amdsmi

        self.smi = amdsmi
        amdsmi.amdsmi_init()
        handles = amdsmi.amdsmi_get_processor_handles()
        indices = [int(i) for i in wanted if i.isdigit()] if wanted else list(range(len(handles)))
        self.handles = [handles[i] for i in indices if i < len(handles)]
        self.devices = [DeviceInfo(str(i), _amd_name(amdsmi, h), None)
                        for i, h in zip(indices, self.handles)]

    def read(self, position: int) -> dict[str, float]:
        smi, h = self.smi, self.handles[position]
        gfx = _try(smi.amdsmi_get_clock_info, h, smi.AmdSmiClkType.GFX) or {}
        mem = _try(smi.amdsmi_get_clock_info, h, smi.AmdSmiClkType.MEM) or {}
        power = _try(smi.amdsmi_get_power_info, h) or {}
        activity = _try(smi.amdsmi_get_gpu_activity, h) or {}
        metrics = _try(smi.amdsmi_get_gpu_metrics_info, h) or {}
        temp = _try(smi.amdsmi_get_temp_metric, h, smi.AmdSmiTemperatureType.HOTSPOT,
                    smi.AmdSmiTemperatureMetric.CURRENT)
        fields = {"sm_clock_mhz": gfx.get("clk", gfx.get("cur_clk")),
                  "mem_clock_mhz": mem.get("clk", mem.get("cur_clk")),
                  "power_w": power.get("current_socket_power", power.get("average_socket_power")),
                  "temp_c": temp, "gpu_util_pct": activity.get("gfx_activity"),
                  "mem_util_pct": activity.get("umc_activity"),
                  # AMD reports one throttle flag, not NVML's reasons: read as a power cap.
                  "throttle": 0x4 if metrics.get("throttle_status") else 0}
        return {k: float(v) for k, v in fields.items() if isinstance(v, (int, float))}

    def processes(self, position: int) -> list[int] | None:
        return None   # not read on AMD yet: the figures then cover every sampled GPU

    def close(self) -> None:
        _try(self.smi.amdsmi_shut_down)


def _amd_name(smi: Any, handle: Any) -> str:
    info = _try(smi.amdsmi_get_gpu_asic_info, handle) or {}
    return str(info.get("market_name") or "AMD GPU")


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value.decode() if isinstance(value, bytes) else str(value)


def open_source(wanted: Sequence[str] | None) -> Source:
    """NVML where it initialises, else AMD SMI. Raises RuntimeError saying what is missing."""
    problems = []
    for kind in (NvmlSource, AmdSmiSource):
        try:
            source: Source = kind(wanted)
        except ImportError as exc:
            problems.append(f"{kind.vendor}: {exc.name} is not installed")
            continue
        except Exception as exc:   # the library is there but the driver or device is not
            problems.append(f"{kind.vendor}: {type(exc).__name__}: {exc}")
            continue
        if source.devices:
            return source
        source.close()
        problems.append(f"{kind.vendor}: no device{' among ' + ','.join(wanted) if wanted else ''}")
    raise RuntimeError("; ".join(problems))
