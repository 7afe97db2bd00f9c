"""Figures from Kineto chrome traces (`torch.profiler` `export_chrome_trace`): GPU kernels, kernel
launch calls, and CPU operators with nesting resolved.

Events read (times in microseconds):

    {"ph": "X", "cat": "kernel", "name": "Kernel2", "pid": 0, "tid": 7, "ts": 5377821669790.5, "dur": 26.3}
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 5639, "tid": 5639, ...}
    {"ph": "X", "cat": "cpu_op", "name": "aten::matmul", "pid": 5639, "tid": 5639,
     "ts": 5378246538999.932, "dur": 905.032}

CPU operators nest (`aten::matmul` calls `aten::mm` on the same thread, inside its interval),
so summing every `cpu_op` would count the inner time twice. CPU time here is the sum of
top-level operators per thread, which equals the sum of every operator's self time.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aorta.parsers.chrome_trace import KERNEL_CATEGORIES, TraceEvent, read_events
from aorta.parsers.kernel_table import TOP_N, KernelTable

__all__ = ["TraceFigures", "OpRow", "read_trace_figures", "LAUNCH_CATEGORIES"]

CPU_OP = "cpu_op"
#: Host API calls; on ROCm builds Kineto files HIP calls under the same names.
LAUNCH_CATEGORIES = frozenset({"cuda_runtime", "cuda_driver"})
# cudaLaunchKernel, cudaLaunchKernelExC, cuLaunchKernelEx, hipLaunchKernel, hipModuleLaunchKernel...
_LAUNCH_CALL = re.compile(r"Launch\w*Kernel")


@dataclass
class OpRow:
    name: str
    calls: int = 0
    self_us: float = 0.0       # time in the operator, minus its child operators


@dataclass
class TraceFigures:
    """What one or more traces of a trial hold."""

    kernels: KernelTable = field(default_factory=KernelTable)
    launches: int = 0                # host-side kernel launch calls
    cpu_us: float = 0.0              # top-level operators' durations, summed
    op_count: int = 0                # top-level operator calls
    ops: dict[str, OpRow] = field(default_factory=dict)

    def cpu_metrics(self, prefix: str, rows: int) -> dict[str, Any]:
        """`<prefix>_cpu_time_ms`, `_cpu_op_count` (top-level calls), `_top_op_ms` and
        `_top_ops` (by self time, up to 5 names), `_ops` (up to `rows` rows: name, calls, self_ms).
        Empty when there is no operator or the total is not finite."""
        if not self.op_count or not math.isfinite(self.cpu_us):
            return {}
        ranked = sorted(self.ops.values(), key=lambda r: -r.self_us)
        return {
            f"{prefix}_cpu_time_ms": self.cpu_us / 1e3,
            f"{prefix}_cpu_op_count": self.op_count,
            f"{prefix}_top_op_ms": ranked[0].self_us / 1e3,
            f"{prefix}_top_ops": [r.name for r in ranked[:TOP_N]],
            f"{prefix}_ops": [{"name": r.name, "calls": r.calls, "self_ms": r.self_us / 1e3}
                              for r in ranked[:rows]],
        }


def read_trace_figures(paths: Iterable[Path]) -> TraceFigures:
    """Totals over every trace in `paths` (one per recorded cycle). Raises `ValueError` for a
    file that is not trace-event JSON. Operators are held per thread until nesting is known."""
    figures = TraceFigures()
    wanted = KERNEL_CATEGORIES | LAUNCH_CATEGORIES | {CPU_OP}
    for index, path in enumerate(paths):
        threads: dict[tuple[str, str], list[TraceEvent]] = defaultdict(list)
        for ev in read_events(path, wanted):
            if ev.cat in KERNEL_CATEGORIES:
                figures.kernels.add(ev.name, ev.dur_us * 1e3)
            elif ev.cat == CPU_OP:
                threads[(repr(ev.pid), repr(ev.tid))].append(ev)
            elif _LAUNCH_CALL.search(ev.name):
                figures.launches += 1
        for events in threads.values():
            _add_thread(events, figures)
    return figures


def _add_thread(events: list[TraceEvent], figures: TraceFigures) -> None:
    """Nesting on one thread: an operator starting before the enclosing one ends is its child."""
    events.sort(key=lambda e: (e.ts_us, -e.dur_us))
    own = [e.dur_us for e in events]
    open_ops: list[int] = []
    for i, ev in enumerate(events):
        while open_ops and events[open_ops[-1]].ts_us + events[open_ops[-1]].dur_us <= ev.ts_us:
            open_ops.pop()
        if open_ops:
            own[open_ops[-1]] -= ev.dur_us
        else:
            figures.cpu_us += ev.dur_us
            figures.op_count += 1
        open_ops.append(i)
    for ev, self_us in zip(events, own):
        row = figures.ops.get(ev.name)
        if row is None:
            row = figures.ops[ev.name] = OpRow(ev.name)
        row.calls += 1
        row.self_us += max(self_us, 0.0)   # a child that outlasts its parent by rounding
