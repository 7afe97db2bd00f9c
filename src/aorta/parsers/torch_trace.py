"""Figures from Kineto chrome traces (`torch.profiler` `export_chrome_trace`): GPU kernels, kernel
launch calls, and CPU operators with nesting resolved. Events read (times in microseconds):

    {"ph": "X", "cat": "kernel", "name": "Kernel2", "pid": 0, "tid": 7, "ts": 5377821669790.5, "dur": 26.3}
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 5639, "tid": 5639, ...}
    {"ph": "X", "cat": "cpu_op", "name": "aten::matmul", "pid": 5639, "tid": 5639,
     "ts": 5378246538999.932, "dur": 905.032}

CPU operators nest, so CPU time sums each thread's top-level operators, nested while streaming
(Kineto writes a thread's operators in start order); a thread out of order is read again, sorted.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aorta.parsers.chrome_trace import KERNEL_CATEGORIES, TraceEvent, read_events
from aorta.parsers.kernel_table import TOP_N, KernelTable
from aorta.parsers.skips import Skips

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
    categories: dict[str, int] = field(default_factory=dict)   # complete events per `cat`

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


def read_trace_figures(paths: Iterable[Path], skips: Skips) -> TraceFigures:
    """Totals over every trace in `paths` (one per recorded cycle); events left out are counted
    in `skips`. Raises `ValueError` for a file that is not trace-event JSON at all."""
    figures = TraceFigures()
    wanted = KERNEL_CATEGORIES | LAUNCH_CATEGORIES | {CPU_OP}
    for path in paths:
        threads: dict[tuple[str, str], _Thread] = {}
        for ev in read_events(path, wanted, skips, figures.categories):
            if ev.cat in KERNEL_CATEGORIES:
                figures.kernels.add(ev.name, ev.dur_us * 1e3)
            elif ev.cat == CPU_OP:
                key = (repr(ev.pid), repr(ev.tid))
                thread = threads.get(key)
                if thread is None:
                    thread = threads[key] = _Thread()
                thread.add(ev)
            elif _LAUNCH_CALL.search(ev.name):
                figures.launches += 1
        unordered = {key for key, thread in threads.items() if thread.unordered}
        for key, thread in threads.items():
            if key not in unordered:
                thread.finish(figures)
        if unordered:
            _second_pass(path, unordered, figures)
    return figures


class _Thread:
    """One thread's operators, nested on the fly while they come in start order."""

    def __init__(self) -> None:
        self.open: list[list[Any]] = []     # [end_us, name, own_us] of the enclosing ops
        self.last: tuple[float, float] | None = None
        self.unordered = False
        self.cpu_us, self.op_count = 0.0, 0
        self.ops: dict[str, list[float]] = {}   # name -> [calls, self_us]

    def add(self, ev: TraceEvent) -> None:
        if self.unordered:
            return
        key = (ev.ts_us, -ev.dur_us)
        if self.last is not None and key < self.last:
            self.unordered = True           # read again in a second pass, sorted
            return
        self.last = key
        while self.open and self.open[-1][0] <= ev.ts_us:
            self._close()
        if self.open:
            self.open[-1][2] -= ev.dur_us
        else:
            self.cpu_us += ev.dur_us
            self.op_count += 1
        self.open.append([ev.ts_us + ev.dur_us, ev.name, ev.dur_us])

    def _close(self) -> None:
        _end, name, own = self.open.pop()
        row = self.ops.setdefault(name, [0, 0.0])
        row[0] += 1
        row[1] += max(own, 0.0)             # a child that outlasts its parent by rounding

    def finish(self, figures: TraceFigures) -> None:
        while self.open:
            self._close()
        figures.cpu_us += self.cpu_us
        figures.op_count += self.op_count
        for name, (calls, self_us) in self.ops.items():
            row = figures.ops.setdefault(name, OpRow(name))
            row.calls += int(calls)
            row.self_us += self_us


def _second_pass(path: Path, keys: set[tuple[str, str]], figures: TraceFigures) -> None:
    """The operators of threads that came out of order, held and sorted, then nested."""
    held: dict[tuple[str, str], list[TraceEvent]] = {key: [] for key in keys}
    for ev in read_events(path, frozenset({CPU_OP}), Skips()):   # counted in the first pass
        if (events := held.get((repr(ev.pid), repr(ev.tid)))) is not None:
            events.append(ev)
    for events in held.values():
        events.sort(key=lambda e: (e.ts_us, -e.dur_us))
        thread = _Thread()
        for ev in events:
            thread.add(ev)
        thread.finish(figures)
