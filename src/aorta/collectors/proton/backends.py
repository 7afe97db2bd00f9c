"""Proton's backends: their names, and which of them can measure here, one by one, for `aorta
doctor` (the proton collector's `details["backends"]`): a backend must be offered by the
installed Triton's CLI and match the machine's GPU vendor. Imports no schema library, so
that `aorta collectors` can probe Proton without loading the options models."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

BACKENDS = ("auto", "cupti", "roctracer", "rocprofiler", "instrumentation")
#: Backends that install an HSA queue interceptor on AMD (`auto` resolves to one of them there).
QUEUE_INTERCEPTING = frozenset({"auto", "rocprofiler", "roctracer"})
#: Backends that subscribe to CUPTI on NVIDIA (`auto` resolves to cupti there).
CUPTI_BACKENDS = frozenset({"auto", "cupti"})

_VENDOR = {"cupti": ("nvidia",), "roctracer": ("amd",), "rocprofiler": ("amd",),
           "instrumentation": ("nvidia", "amd")}
_NAMES = {"nvidia": "an NVIDIA GPU", "amd": "an AMD GPU"}


def backend_table(offered: Sequence[str], vendor: str | None, triton: str | None
                  ) -> dict[str, dict[str, Any]]:
    """backend -> {usable, reason, fix} for every backend aorta knows (`auto` aside)."""
    table: dict[str, dict[str, Any]] = {}
    here = {"nvidia", "amd"} if vendor == "both" else {vendor} if vendor else set()
    for backend in BACKENDS:
        if backend == "auto":
            continue
        needs = _VENDOR.get(backend, ("nvidia", "amd"))
        if offered and backend not in offered:
            table[backend] = {"usable": False,
                              "reason": f"Triton {triton}'s CLI does not offer it "
                                        f"(it offers {', '.join(offered)})",
                              "fix": "install a Triton that has it, or use another backend"}
        elif not here & set(needs):
            table[backend] = {"usable": False,
                              "reason": f"needs {' or '.join(_NAMES[v] for v in needs)}",
                              "fix": "run on a machine with that GPU"}
        else:
            table[backend] = {"usable": True, "reason": "offered by Triton and the GPU matches"
                              if offered else "the GPU matches (Triton's offer unknown)",
                              "fix": ""}
    return table
