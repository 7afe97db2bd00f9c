"""Reading a rocprofv3 kernel trace with the compiled scanner: `scan_trace`'s result, in C.

Optional: `aorta.parsers._rocprof_scan` is built from `_rocprof_scan.c` when aorta is installed
with a C compiler at hand (`setup.py` marks it optional, so an install without one still
works and reads with Python). It reads the same blocks of whole lines as
`rocprof_trace_scan.scan_trace` and parses each with the csv module's default dialect, state
by state, then checks every row as `_csv_row` does. So the two give the same kernels, in the
same order, and leave out the same rows for the same reasons, worded as the csv path words
them ("row 7: End_Timestamp before Start_Timestamp"); the Python scanner stays the reference
and the fallback.
"""

from __future__ import annotations

import csv
import functools
import importlib
from types import ModuleType
from typing import BinaryIO

from aorta.parsers import rocprof_trace_scan as scanner
from aorta.parsers.rocprof_trace_scan import CUT_ROW, TraceColumns, TraceScan
from aorta.parsers.skips import MAX_EXAMPLES, Skips

__all__ = ["c_available", "scan_trace_c"]


@functools.cache
def _module() -> ModuleType | None:
    try:
        return importlib.import_module("aorta.parsers._rocprof_scan")
    except ImportError:
        return None


def c_available() -> bool:
    """True when the compiled scanner was built and imports."""
    return _module() is not None


@functools.cache
def _nul_error() -> str | None:
    """What this Python's csv module says of a NUL character (None: it reads it as text)."""
    try:
        next(csv.reader(["a\0b"]))
    except csv.Error as exc:
        return str(exc)
    return None


def scan_trace_c(fh: BinaryIO, columns: TraceColumns) -> TraceScan:
    """Read the data rows of an open trace file positioned just after its header, as
    `scan_trace` does. Raises ImportError when the compiled scanner is not built."""
    module = _module()
    if module is None:
        raise ImportError("aorta.parsers._rocprof_scan is not built (install aorta with a C "
                          "compiler at hand)")
    kernels, rows, used, filtered, skipped, examples, cut = module.scan(
        fh, -1 if columns.kind is None else columns.kind, columns.name, columns.start,
        columns.end, columns.width, scanner.BLOCK_BYTES, scanner.MAX_LINE_BYTES,
        csv.field_size_limit(),
        _nul_error(), MAX_EXAMPLES)
    scan = TraceScan(kernels, rows, used, filtered, Skips(skipped, examples))
    if cut:
        scan.rows += 1
        scan.skips.cut_short(CUT_ROW)
    return scan
