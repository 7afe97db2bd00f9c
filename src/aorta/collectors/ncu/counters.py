"""May this process read NVIDIA's GPU performance counters (ncu's ERR_NVGPUCTRPERM)?"""

from __future__ import annotations

import re
from pathlib import Path

CAP_SYS_ADMIN = 21          # bit in /proc/<pid>/status CapEff
_PARAMS = Path("/proc/driver/nvidia/params")
_PROFILING_FLAG = re.compile(r"^RmProfilingAdminOnly:\s*(\d+)", re.MULTILINE)

#: How to let a process read NVIDIA's performance counters (ncu's ERR_NVGPUCTRPERM).
PERMISSION_FIX = ("run as root (in a container: with CAP_SYS_ADMIN), or load the nvidia kernel "
                  "module with NVreg_RestrictProfilingToAdminUsers=0; see "
                  "https://developer.nvidia.com/ERR_NVGPUCTRPERM")


def counter_access(params_text: str | None, cap_eff_hex: str | None) -> tuple[bool | None, str]:
    """Can this process read GPU performance counters? (True / False / None: unknown, reason).
    The driver's `RmProfilingAdminOnly: 1` (`/proc/driver/nvidia/params`) admits only holders of
    CAP_SYS_ADMIN (root, or a container given it), `0` everyone; else unknown until a run."""
    if (match := _PROFILING_FLAG.search(params_text or "")) is None:
        return None, "counter permission unknown until a run (driver parameters unreadable)"
    if match.group(1) == "0":
        return True, "the driver lets every user read GPU performance counters"
    try:
        has_admin = bool(int(cap_eff_hex or "", 16) >> CAP_SYS_ADMIN & 1)
    except ValueError:
        return None, "counter permission unknown until a run (capabilities unreadable)"
    if has_admin:
        return True, ("counters are limited to admin users and this process has CAP_SYS_ADMIN; "
                      "confirmed only by a run")
    return False, ("the driver limits GPU performance counters to admin users "
                   "(RmProfilingAdminOnly: 1) and this process lacks CAP_SYS_ADMIN")


def host_counter_access() -> tuple[bool | None, str]:
    try:
        params = _PARAMS.read_text(errors="replace")
    except OSError:
        params = None
    try:
        status = Path("/proc/self/status").read_text(errors="replace")
        cap = re.search(r"^CapEff:\s*([0-9a-fA-F]+)", status, re.MULTILINE)
    except OSError:
        cap = None
    return counter_access(params, cap.group(1) if cap else None)
