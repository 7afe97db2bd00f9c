"""Records for report tests: trial results as the engine writes them, and hostile text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aorta.store.records import TrialResult

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "report"
HOSTILE = "<script>alert('x')</script> & \"quoted\" | pipe ``` fence \x1b[31mred\x1b[0m"

ENV = {
    "schema_version": 1, "aorta_version": "0.1.0",
    "host": {"hostname": "gpu-node-7", "os": "Linux", "kernel": "6.8.0", "machine": "x86_64",
             "distro": "Ubuntu 24.04.3 LTS", "cpu": "Intel(R) Xeon(R) Processor",
             "cpu_count": 16, "memory_gib": 125.85},
    "python": {"version": "3.12.3", "executable": "/usr/bin/python3",
               "implementation": "CPython"},
    "packages": {"torch": "2.11.0", "triton": "3.6.0", "numpy": "2.5.2"},
    "nvidia": [{"index": "0", "name": "NVIDIA H200", "driver_version": "580.159.04",
                "memory.total": "143771"}],
    "amd": None, "cuda_version": "13.0", "rocm_version": None,
    "env_vars": {"CUDA_VISIBLE_DEVICES": "0", "HF_TOKEN": "<redacted>"},
    "partial_reasons": {"amd": "no amd tool found on PATH"}, "partial": False,
}


def trial(cell: str, index: int, verdict: str = "pass", wall_s: float = 1.0,
          metrics: dict[str, Any] | None = None, **fields: Any) -> TrialResult:
    """A TrialResult as the engine writes it; `verdict` decides the exit code unless given."""
    exit_code = fields.pop("exit_code", 0 if verdict == "pass" else 1)
    reason = fields.pop("reason", "exit code 0" if verdict == "pass" else f"exit code {exit_code}")
    return TrialResult(cell=cell, index=index, verdict=verdict,  # type: ignore[arg-type]
                       reason=reason, argv=["python3", "bench.py"], command=["python3", "bench.py"],
                       env_overlay={}, env_unset=[], exit_code=exit_code, launched=True,
                       wall_s=wall_s, cpu_user_s=wall_s / 2, cpu_sys_s=0.01, max_rss_mib=100.0,
                       metrics=metrics or {}, **fields)



def kernels(*rows: tuple[str, int | None, float]) -> list[dict[str, Any]]:
    return [{"name": n, "calls": c, "total_ms": ms} for n, c, ms in rows]
