"""The built-in collectors: name -> "module:Class", loaded lazily by `aorta.collectors.registry`.
A module of its own so that listing them imports nothing."""

from __future__ import annotations

__all__ = ["BUILTIN"]

# Order here is only the listing order; wrap order is `wrap_rank`.
BUILTIN: dict[str, str] = {
    "rocprof": "aorta.collectors.rocprof:RocprofCollector",
    "nsys": "aorta.collectors.nsys:NsysCollector",
    "ncu": "aorta.collectors.ncu:NcuCollector",
    "proton": "aorta.collectors.proton:ProtonCollector",
    "torch": "aorta.collectors.torch:TorchCollector",
    "cprofile": "aorta.collectors.cprofile:CProfileCollector",
    "telemetry": "aorta.collectors.telemetry:TelemetryCollector",
}
