"""Reading rocprofv3 CSV output: the per-kernel stats file and the per-dispatch kernel trace.

Stats (`*kernel_stats.csv`), one row per kernel, durations in ns:

    "Name","Calls","TotalDurationNs","AverageNs","Percentage","MinNs","MaxNs","StdDev"
    "JacobiIterationKernel",1000,537449866,537449.866000,43.30,520003,560324,6504.934470

Trace (`*kernel_trace.csv`), one row per dispatch, timestamps in ns. ROCm 6.x:

    "Kind","Agent_Id","Queue_Id","Thread_Id","Dispatch_Id","Kernel_Id","Kernel_Name",
        "Correlation_Id","Start_Timestamp","End_Timestamp","Private_Segment_Size",...
    "KERNEL_DISPATCH",4,1,74441,2,18,"taylor_base(float*, float*, unsigned long, unsigned long)",
        14,1614963488155186,1614963547425378,1024,...

ROCm 7.x adds `Guid` and `Stream_Id`, writes `Agent_Id` as `"Agent 4"` and replaces the segment
sizes with LDS/scratch/VGPR/SGPR columns. Columns are found by name, so both generations (and
any reordering) parse. Sources: rocprofiler-sdk `source/docs/how-to/using-rocprofv3.rst` and
the ROCm 7 rocpd how-to (https://rocm.docs.amd.com/projects/rocprofiler-sdk/).

A trace can be gigabytes, so it is streamed in blocks; memory grows with the number of distinct
kernel names. The pure-Python scanner and its exact fallback are in `rocprof_trace_scan`; with
pyarrow installed (the `fast` extra), `rocprof_trace_arrow` reads the same numbers faster.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from aorta.parsers.kernel_table import KernelTable
from aorta.parsers.rocprof_trace_arrow import arrow_available, scan_trace_arrow
from aorta.parsers.rocprof_trace_scan import TraceColumns, TraceScan, scan_trace

__all__ = ["FileReport", "TraceColumns", "read_stats", "read_trace", "trace_columns",
           "trace_layout", "STATS_COLUMNS", "TRACE_COLUMNS", "TRACE_READERS"]

STATS_COLUMNS = ("Name", "Calls", "TotalDurationNs")
TRACE_COLUMNS = ("Kernel_Name", "Start_Timestamp", "End_Timestamp")
TRACE_READERS = ("auto", "arrow", "python")
_MAX_COUNT = 2**63 - 1
_HEADER_LIMIT = 1 << 16                # a header longer than this is not a rocprofv3 header
_ROCM7_ONLY = {"guid", "stream_id", "lds_block_size", "scratch_size", "vgpr_count",
               "accum_vgpr_count", "sgpr_count"}
_ROCM6_ONLY = {"private_segment_size", "group_segment_size"}


@dataclass
class FileReport:
    """What one CSV file gave. Counts are rows; `note` says why rows or the file were refused."""

    file: str
    rows: int = 0              # data rows seen
    used: int = 0              # rows that added a kernel duration
    skipped: int = 0           # malformed rows: bad number, wrong field count, end < start, ...
    filtered: int = 0          # trace rows of another Kind than KERNEL_DISPATCH
    untrusted_calls: int = 0   # stats rows whose Calls is not a non-negative integer
    layout: str | None = None  # trace only: "rocm6", "rocm7" or "unknown"
    overflow: bool = False     # a total too large for a float: the file's numbers are not used
    note: str = ""


# --- stats ----------------------------------------------------------------------------------

def read_stats(path: Path, table: KernelTable) -> FileReport:
    """Add every usable row of a `*kernel_stats.csv` to `table` (durations in ns).

    A row is usable with a name and a finite, non-negative `TotalDurationNs`. A missing, negative,
    fractional or non-numeric `Calls` leaves that kernel's count untrusted (None), never guessed.
    Raises OSError when the file cannot be read; a malformed file gives a report with a note."""
    report = FileReport(path.name)
    with open(path, "rb") as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace", newline="")
        reader = csv.reader(text)
        header = _first_row(reader, report)
        if header is None:
            return report
        index = {name.strip().lower(): i for i, name in enumerate(header)}
        missing = [c for c in ("Name", "TotalDurationNs") if c.lower() not in index]
        if missing:
            report.note = f"no column {' or '.join(missing)} (header: {', '.join(header)[:200]})"
            return report
        name_at, total_at = index["name"], index["totaldurationns"]
        calls_at, max_at = index.get("calls"), index.get("maxns")
        try:
            for row in reader:
                report.rows += 1
                _add_stats_row(row, name_at, total_at, calls_at, max_at, table, report)
        except csv.Error as exc:
            report.note = f"stopped at data row {report.rows + 1}: {exc}"
    return report


def _first_row(reader: Iterator[list[str]], report: FileReport) -> list[str] | None:
    try:
        header: list[str] | None = next(reader, None)
    except csv.Error as exc:
        report.note = f"unreadable header: {exc}"
        return None
    if not header:
        report.note = "empty file"
        return None
    return header


def _add_stats_row(row: list[str], name_at: int, total_at: int, calls_at: int | None,
                   max_at: int | None, table: KernelTable, report: FileReport) -> None:
    name = row[name_at].strip() if name_at < len(row) else ""
    total = _finite(row[total_at]) if total_at < len(row) else None
    if not name or total is None or total < 0:
        report.skipped += 1
        return
    calls = _count(row[calls_at]) if calls_at is not None and calls_at < len(row) else None
    if calls is None:
        report.untrusted_calls += 1
    longest = _finite(row[max_at]) if max_at is not None and max_at < len(row) else None
    table.add(name, total, calls, longest if longest is not None and longest >= 0 else None)
    report.used += 1


def _finite(text: str) -> float | None:
    try:
        value = float(text)
    except (ValueError, OverflowError):
        return None
    return value if math.isfinite(value) else None


def _count(text: str) -> int | None:
    """A trusted call count: a whole number from 0 to 2**63 - 1 ("12" or "12.0"), else None.
    A larger one cannot come from a real run: it marks a corrupt file."""
    text = text.strip()
    if text.isascii() and text.isdigit():
        count = int(text) if len(text) < 20 else _MAX_COUNT + 1
    else:
        value = _finite(text)
        if value is None or value < 0 or not value.is_integer():
            return None
        count = int(value)
    return count if count <= _MAX_COUNT else None


# --- trace ----------------------------------------------------------------------------------

def trace_columns(header: bytes | str) -> TraceColumns:
    """The trace columns aorta reads, found by name in a header line.

    Raises ValueError naming the missing columns."""
    if isinstance(header, bytes):
        header = header.decode("utf-8", errors="replace")
    fields = next(csv.reader([header.lstrip("\ufeff").strip("\r\n")]), [])
    names = [f.strip() for f in fields]
    index = {n.lower(): i for i, n in enumerate(names)}
    missing = [c for c in TRACE_COLUMNS if c.lower() not in index]
    if missing:
        raise ValueError(f"no column {', '.join(missing)} (header: {', '.join(names)[:200]})")
    return TraceColumns(kind=index.get("kind"), name=index["kernel_name"],
                        start=index["start_timestamp"], end=index["end_timestamp"],
                        width=len(names), layout=trace_layout(names))


def trace_layout(names: list[str]) -> str:
    """"rocm7" when the header has a column only ROCm 7 writes, "rocm6" for ROCm 6 only ones."""
    lowered = {n.lower() for n in names}
    if lowered & _ROCM7_ONLY:
        return "rocm7"
    if lowered & _ROCM6_ONLY:
        return "rocm6"
    return "unknown"


def read_trace(path: Path, table: KernelTable, *, reader: str = "auto") -> FileReport:
    """Add every `KERNEL_DISPATCH` row of a `*kernel_trace.csv` to `table`: one launch of
    `End_Timestamp - Start_Timestamp` ns per row.

    Rows with a non-integer timestamp, end < start, an empty name or the wrong number of fields
    are skipped and counted; rows of another Kind are counted as filtered. Streams the file.
    `reader` picks the scanner: "auto" (pyarrow's when it imports, else Python's), "arrow"
    (ImportError without pyarrow) or "python"; they give the same numbers.
    Raises OSError when the file cannot be read."""
    report = FileReport(path.name)
    with open(path, "rb") as fh:
        header = fh.readline(_HEADER_LIMIT)
        if not header.strip():
            report.note = "empty file"
            return report
        if not header.endswith(b"\n") and len(header) >= _HEADER_LIMIT:
            report.note = "no header line (the first line is too long)"
            return report
        try:
            columns = trace_columns(header)
        except ValueError as exc:
            report.note = str(exc)
            return report
        report.layout = columns.layout
        scan = _scan(fh, columns, reader)
    report.rows, report.used = scan.rows, scan.used
    report.skipped, report.filtered, report.note = scan.skipped, scan.filtered, scan.note
    for name, (total, calls, longest) in scan.kernels.items():
        try:
            total_ns, longest_ns = float(total), float(longest)
        except OverflowError:
            report.overflow = True
            report.note = f"the total of {name.decode('utf-8', 'replace')[:80]!r} overflows"
            continue
        table.add(name.decode("utf-8", errors="replace"), total_ns, calls, longest_ns)
    return report


def _scan(fh: BinaryIO, columns: TraceColumns, reader: str) -> TraceScan:
    if reader not in TRACE_READERS:
        raise ValueError(f"reader must be one of {', '.join(TRACE_READERS)}, got {reader!r}")
    if reader == "python" or (reader == "auto" and not arrow_available()):
        return scan_trace(fh, columns)
    data_start = fh.tell()
    scan = scan_trace_arrow(fh, columns)
    if scan is None:      # something pyarrow might read differently from the csv module
        fh.seek(data_start)
        scan = scan_trace(fh, columns)
    return scan
