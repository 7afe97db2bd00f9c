"""Reading Chrome trace-event JSON (Kineto's `export_chrome_trace`, Proton's `data: trace`).

A file is `{"traceEvents": [...], ...}` or a bare list of events. Complete events look like

    {"ph": "X", "cat": "kernel", "name": "add_kernel", "ts": 35050.782, "dur": 2.272, ...}

with `ts`/`dur` in microseconds (the format fixes the unit; `displayTimeUnit` only changes how
viewers print it). Format: the Trace Event Format document (Google, linked from Perfetto's
docs) and Kineto's `output_json.cpp`.

The file is streamed (`json_stream.ArrayStream`): memory is one block of the file plus one
event, whatever the trace's size. An event that is not an object, or a complete event of a
wanted category whose `name` is not a non-empty string or whose `ts`/`dur` is not a finite
number (`dur` also non-negative), is left out and counted in the caller's `Skips`, and so is
the rest of a file cut short or that stops being JSON.
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from aorta.parsers.json_stream import ArrayStream
from aorta.parsers.kernel_table import KernelTable
from aorta.parsers.skips import Skips

KERNEL_CATEGORIES = frozenset({"kernel"})


class TraceEvent(NamedTuple):
    cat: str
    name: str
    ts_us: float
    dur_us: float
    args: dict[str, Any]
    pid: Any = None            # process and thread as the trace names them (int or label)
    tid: Any = None


def read_events(path: Path, categories: frozenset[str] | None,
                skips: Skips) -> Iterator[TraceEvent]:
    """Complete (`ph: X`) events of `categories` (all when None) with a name, a finite `ts`
    and a finite, non-negative `dur`; every event left out is counted in `skips` with its
    reason. Raises `ValueError` for a file that is not trace-event JSON at all (not JSON, no
    `traceEvents` list), OSError when it cannot be opened."""
    with _open_regular(path) as fh:
        stream = ArrayStream(fh, "traceEvents", path.name)
        for index, ev in enumerate(stream.elements()):
            if type(ev) is not dict:
                skips.skip(f"{path.name}: event {index} is {_kind(ev)}, not an object")
                continue
            ph = ev.get("ph")
            if ph != "X":
                if not isinstance(ph, str):
                    skips.skip(f"{path.name}: event {index} has ph {_short(ph)}")
                continue
            cat = ev.get("cat")
            if not isinstance(cat, str):
                if cat is not None:
                    skips.skip(f"{path.name}: event {index} has cat {_short(cat)}")
                continue
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


def kernel_table(path: Path, skips: Skips,
                 categories: frozenset[str] = KERNEL_CATEGORIES) -> KernelTable:
    """Every GPU kernel event of one trace, totalled per name (one event = one launch)."""
    table = KernelTable()
    for ev in read_events(path, categories, skips):
        table.add(ev.name, ev.dur_us * 1e3)
    return table


def _complete(ev: dict[str, Any], cat: str) -> TraceEvent | str:
    """The event, or why it cannot be read."""
    name, dur, ts = ev.get("name"), _number(ev.get("dur")), _number(ev.get("ts"))
    if not isinstance(name, str) or not name:
        return f"has name {_short(name)}"
    if dur is None or dur < 0:
        return f"{name[:60]!r} has dur {_short(ev.get('dur'))}"
    if ts is None:
        return f"{name[:60]!r} has ts {_short(ev.get('ts'))}"
    args = ev.get("args")
    return TraceEvent(cat, name, ts, dur, args if type(args) is dict else {}, ev.get("pid"),
                      ev.get("tid"))


def _number(value: Any) -> float | None:
    kind = type(value)
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is int:
        try:
            return float(value)
        except OverflowError:
            return None
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _kind(value: Any) -> str:
    return "null" if value is None else f"a {type(value).__name__} ({_short(value)})"


class _open_regular:
    """Open `path` for reading only if it is a regular file (no FIFO, no device)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> Any:
        fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ValueError(f"{self.path.name}: not a regular file")
            os.set_blocking(fd, True)
            self.fh = os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise
        return self.fh

    def __exit__(self, *exc: object) -> None:
        self.fh.close()
