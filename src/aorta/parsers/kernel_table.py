"""Per-kernel totals accumulated from any profiler, and the common metrics they give.

Memory grows with the number of distinct kernel names, never with the number of launches.
Names are published demangled (`aorta.parsers.demangle`), so Proton's `_ZN7cutlass7Kernel2I...`
reads as torch's and ncu's `void cutlass::Kernel2<...>(...)`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from aorta.parsers.demangle import demangle_all

TOP_N = 5


@dataclass
class KernelRow:
    name: str
    total_ns: float = 0.0
    calls: int | None = 0      # None: some source gave an untrusted count for this kernel
    max_ns: float = 0.0         # the longest single entry seen (a launch, or a stats row's max)
    mangled: str | None = None  # the name as the profiler wrote it, when demangling changed it


@dataclass
class KernelTable:
    """Accumulates kernel durations; `metrics(prefix)` publishes the common scheme."""

    rows: dict[str, KernelRow] = field(default_factory=dict)

    def add(self, name: str, duration_ns: float, calls: int | None = 1,
            max_ns: float | None = None) -> bool:
        """Add one launch (or one aggregated row). Returns False (and adds nothing) for a value
        that cannot be a duration: empty name, NaN, infinite or negative."""
        if not name or not math.isfinite(duration_ns) or duration_ns < 0:
            return False
        row = self.rows.get(name)
        if row is None:
            row = self.rows[name] = KernelRow(name)
        row.total_ns += duration_ns
        row.max_ns = max(row.max_ns, duration_ns if max_ns is None else max_ns)
        if row.calls is not None:
            row.calls = None if calls is None else row.calls + calls
        return True

    def demangled(self) -> KernelTable:
        """The same table under demangled names (rows whose names demangle alike merge); a row
        whose name changed keeps the original in `mangled`."""
        names = demangle_all(self.rows)
        out = KernelTable()
        for row in self.rows.values():
            plain = names[row.name]
            if out.add(plain, row.total_ns, row.calls, row.max_ns):
                own = out.rows[plain]
                own.mangled = own.mangled or (row.name if plain != row.name else row.mangled)
        return out

    def __len__(self) -> int:
        return len(self.rows)

    def ranked(self) -> list[KernelRow]:
        """Rows by total time, longest first; ties keep first-seen order."""
        return sorted(self.rows.values(), key=lambda r: -r.total_ns)

    def total_ns(self) -> float:
        return sum(r.total_ns for r in self.rows.values())

    def metrics(self, prefix: str) -> dict[str, Any]:
        """The common scheme (`_gpu_time_ms`, `_kernel_count` when every count is trusted, ...),
        demangled. A total that overflows publishes nothing: no number beats a wrong one."""
        total = self.total_ns()
        if not self.rows or not math.isfinite(total):
            return {}
        ranked = self.demangled().ranked()
        out: dict[str, Any] = {
            f"{prefix}_gpu_time_ms": total / 1e6,
            f"{prefix}_top_kernel_ms": ranked[0].total_ns / 1e6,
            f"{prefix}_top_kernels": [r.name for r in ranked[:TOP_N]],
        }
        if all(r.calls is not None for r in ranked):
            out[f"{prefix}_kernel_count"] = sum(r.calls or 0 for r in ranked)
        out[f"{prefix}_kernels"] = [_row(r) for r in ranked]
        return out


def _row(row: KernelRow) -> dict[str, Any]:
    out: dict[str, Any] = {"name": row.name, "calls": row.calls, "total_ms": row.total_ns / 1e6}
    if row.mangled:
        out["mangled"] = row.mangled
    return out
