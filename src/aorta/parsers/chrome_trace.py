"""Reading Chrome trace-event JSON (Kineto's `export_chrome_trace`, Proton's `data: trace`).

A file is `{"traceEvents": [...], ...}` or a bare list of events. Complete events look like

    {"ph": "X", "cat": "kernel", "name": "add_kernel", "ts": 35050.782, "dur": 2.272, ...}

with `ts`/`dur` in microseconds (the format fixes the unit; `displayTimeUnit` only changes how
viewers print it).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aorta.parsers.kernel_table import KernelTable

__all__ = ["TraceEvent", "read_events", "kernel_table", "KERNEL_CATEGORIES"]

KERNEL_CATEGORIES = frozenset({"kernel"})


@dataclass(frozen=True)
class TraceEvent:
    cat: str
    name: str
    ts_us: float
    dur_us: float
    args: dict[str, Any]
    pid: Any = None            # process and thread as the trace names them (int or label)
    tid: Any = None


def read_events(path: Path, categories: frozenset[str] | None = None) -> Iterator[TraceEvent]:
    """Complete (`ph: X`) events of `categories` (all when None) with a finite, non-negative
    duration. Raises `ValueError` for a file that is not trace-event JSON."""
    try:
        with open(path, "rb") as fh:
            doc = json.load(fh)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path.name}: not JSON ({exc})") from None
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        raise ValueError(f"{path.name}: no traceEvents list")
    for ev in events:
        if not isinstance(ev, dict) or ev.get("ph") != "X":
            continue
        cat = ev.get("cat")
        if categories is not None and cat not in categories:
            continue
        name, dur, ts = ev.get("name"), _number(ev.get("dur")), _number(ev.get("ts"))
        if not isinstance(name, str) or not name or dur is None or dur < 0:
            continue
        args = ev.get("args")
        yield TraceEvent(str(cat), name, ts if ts is not None else 0.0, dur,
                         args if isinstance(args, dict) else {}, ev.get("pid"), ev.get("tid"))


def kernel_table(path: Path, categories: frozenset[str] = KERNEL_CATEGORIES) -> KernelTable:
    """Every GPU kernel event of one trace, totalled per name (one event = one launch)."""
    table = KernelTable()
    for ev in read_events(path, categories):
        table.add(ev.name, ev.dur_us * 1e3)
    return table


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None
