"""The GPUs' health when a run starts, for the environment snapshot: clocks, temperatures, ECC
error counts and throttling, from nvidia-smi or amd-smi / rocm-smi, so a reader can tell a
number measured on a hot, throttled or faulty GPU. Each vendor's entry is what its tool said
or `{"unavailable": "<why>"}`: a missing, failing or hanging tool (each call has a timeout) is
recorded, never raised. Xid errors (NVIDIA) live in the kernel log, which needs privileges to
read, so they are listed as unavailable rather than guessed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from aorta.host.stack import NoAnswer, tool_output

#: nvidia-smi --query-gpu fields. "[N/A]" / "[Not Supported]" values are kept as null.
NV_HEALTH_FIELDS = ("index", "uuid", "clocks.sm", "clocks.mem", "clocks.max.sm",
                    "temperature.gpu", "temperature.memory", "power.draw", "pstate",
                    "clocks_event_reasons.active", "ecc.mode.current",
                    "ecc.errors.corrected.volatile.total",
                    "ecc.errors.uncorrected.volatile.total", "retired_pages.pending")
_NOT_VALUES = ("[N/A]", "[Not Supported]", "N/A", "[Unknown Error]", "")


def system_health() -> dict[str, Any]:
    """`{"nvidia": [...] | {"unavailable": why}, "amd": {...} | {"unavailable": why},
    "xid": {"unavailable": why}}`."""
    return {"nvidia": _guarded(_nvidia_health, "nvidia-smi"),
            "amd": _guarded(_amd_health, "amd-smi or rocm-smi"),
            "xid": {"unavailable": "Xid errors are in the kernel log (dmesg, journalctl -k), "
                                   "which nvidia-smi does not report"}}


def _guarded(reader: Callable[[], Any], tools: str) -> Any:
    try:
        found = reader()
    except NoAnswer as exc:        # "nvidia-smi did not answer within 10 s"
        return {"unavailable": str(exc)}
    except Exception as exc:  # a snapshot must never stop a run
        return {"unavailable": f"{type(exc).__name__}: {str(exc)[:300]}"}
    return found if found is not None else {"unavailable": f"no {tools} on PATH"}


def _nvidia_health() -> list[dict[str, str | None]] | None:
    try:
        rows = nvidia_rows(NV_HEALTH_FIELDS)
    except RuntimeError as exc:
        if "valid field" not in str(exc):
            raise
        # Drivers before R535 call the throttle field by its older name.
        rows = nvidia_rows(tuple(f.replace("clocks_event", "clocks_throttle")
                                 for f in NV_HEALTH_FIELDS))
    return None if rows is None else [
        {k: None if v in _NOT_VALUES else v for k, v in zip(NV_HEALTH_FIELDS, row.values())}
        for row in rows]


def nvidia_rows(fields: tuple[str, ...]) -> list[dict[str, str]] | None:
    """These fields of every GPU, as nvidia-smi reports them; None when it is not on PATH."""
    out = tool_output(["nvidia-smi", f"--query-gpu={','.join(fields)}",
                       "--format=csv,noheader,nounits"])
    # "0, GPU-5f1..., 1980, 3201, 1980, 31, 40, 120.45, P0, 0x0000000000000000, Enabled, 0, 0, No"
    return None if out is None else [dict(zip(fields, (v.strip() for v in line.split(","))))
                                     for line in out.splitlines() if line.strip()]


def _amd_health() -> dict[str, Any] | None:
    """amd-smi: clocks (-c), temperatures (-t), ECC counts (-e); rocm-smi for older stacks,
    and whenever amd-smi fails, hangs or answers something that is not JSON. None when
    neither is on PATH; raises with every tool's reason when none answered."""
    failures = []
    for argv in (["amd-smi", "metric", "-c", "-t", "-e", "--json"],
                 ["rocm-smi", "--showtemp", "--showclocks", "--showrasinfo", "all", "--json"]):
        try:
            if (out := tool_output(argv)) is not None:
                return {"tool": argv[0], "data": json.loads(out)}
        except NoAnswer as exc:    # an OSError: its own words, not prefixed as below
            failures.append(str(exc))
        except (RuntimeError, OSError, ValueError) as exc:
            failures.append(f"{argv[0]}: {str(exc)[:200]}")
    if failures:
        raise RuntimeError("; ".join(failures))
    return None
