"""Reading Chrome trace-event JSON (Kineto's `export_chrome_trace`, Proton's `data: trace`).

A file is `{"traceEvents": [...], ...}` or a bare list of events. Complete events look like

    {"ph": "X", "cat": "kernel", "name": "add_kernel", "ts": 35050.782, "dur": 2.272, ...}

with `ts`/`dur` in microseconds (the format fixes the unit; `displayTimeUnit` only changes how
viewers print it). Format: the Trace Event Format document (Google, linked from Perfetto's
docs) and Kineto's `output_json.cpp`. The file is streamed (`json_stream.ArrayStream`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from aorta.parsers.json_stream import ArrayStream, open_trace
from aorta.parsers.skips import Skips, kind, short

KERNEL_CATEGORIES = frozenset({"kernel"})
#: Early torch.profiler (PyTorch 1.8's Kineto) capitalised categories: read as today's names.
OLD_CATEGORIES = {"Kernel": "kernel", "Memcpy": "gpu_memcpy", "Memset": "gpu_memset",
                  "Runtime": "cuda_runtime", "Operator": "cpu_op"}


class TraceEvent(NamedTuple):
    cat: str
    name: str
    ts_us: float
    dur_us: float
    args: dict[str, Any]
    pid: Any = None            # process and thread as the trace names them (int or label)
    tid: Any = None


def read_events(path: Path, categories: frozenset[str] | None, skips: Skips,
                seen: dict[str, int] | None = None) -> Iterator[TraceEvent]:
    """Complete (`ph: X`) events of `categories` (all when None) with a name, a finite `ts` and
    a non-negative `dur` (us); the rest, and a cut or broken tail, are counted in `skips`, and
    `seen` counts complete events per category. Raises `ValueError` for a file that is not
    trace-event JSON (plain or gzipped), OSError when it cannot be opened."""
    with open_trace(path) as fh:
        stream = ArrayStream(fh, "traceEvents", path.name)
        for index, ev in enumerate(stream.elements()):
            if type(ev) is not dict:
                skips.skip(f"{path.name}: event {index} is {kind(ev)}, not an object")
                continue
            ph = ev.get("ph")
            if ph != "X":
                if not isinstance(ph, str):
                    skips.skip(f"{path.name}: event {index} has ph {short(ph)}")
                continue
            cat = ev.get("cat")
            if not isinstance(cat, str):
                if cat is not None:
                    skips.skip(f"{path.name}: event {index} has cat {short(cat)}")
                continue
            if cat == "Operator" and str(ev.get("name")).startswith("ProfilerStep#"):
                cat = "user_annotation"     # what Kineto files a step under today
            cat = OLD_CATEGORIES.get(cat, cat)
            if seen is not None:
                seen[cat] = seen.get(cat, 0) + 1
            if categories is not None and cat not in categories:
                continue
            event = _complete(ev, cat)
            if isinstance(event, str):
                skips.skip(f"{path.name}: {cat} event {index} {event}")
                continue
            yield event
        if stream.cut:
            skips.cut_short(f"{path.name}: {stream.cut}")
        elif stream.broken:
            skips.skip(f"{path.name}: {stream.broken}; the rest is not read")


def _complete(ev: dict[str, Any], cat: str) -> TraceEvent | str:
    """The event, or why it cannot be read."""
    name, dur, ts = ev.get("name"), _number(ev.get("dur")), _number(ev.get("ts"))
    if not isinstance(name, str) or not name:
        return f"has name {short(name)}"
    if dur is None or dur < 0:
        return f"{name[:60]!r} has dur {short(ev.get('dur'))}"
    if ts is None:
        return f"{name[:60]!r} has ts {short(ev.get('ts'))}"
    args = ev.get("args")
    return TraceEvent(cat, name, ts, dur, args if type(args) is dict else {}, ev.get("pid"),
                      ev.get("tid"))


def _number(value: Any) -> float | None:
    """A JSON number as a finite float (an int too large for one is None; a bool is not one)."""
    if type(value) is not float and type(value) is not int:
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None
