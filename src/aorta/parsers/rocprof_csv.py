"""Reading rocprofv3 CSV output: `*kernel_stats.csv` (one row per kernel, ns; sample at
`read_stats`) and `*kernel_trace.csv` (one row per dispatch, ns timestamps). ROCm 6.x trace:

    "Kind","Agent_Id","Queue_Id","Thread_Id","Dispatch_Id","Kernel_Id","Kernel_Name",
        "Correlation_Id","Start_Timestamp","End_Timestamp","Private_Segment_Size",...
    "KERNEL_DISPATCH",4,1,74441,2,18,"taylor_base(float*, float*, unsigned long, unsigned long)",
        14,1614963488155186,1614963547425378,1024,...

ROCm 7.x adds columns and renames some; they are found by name. Sources: rocprofiler-sdk
`source/docs/how-to/using-rocprofv3.rst` and the ROCm 7 rocpd how-to
(https://rocm.docs.amd.com/projects/rocprofiler-sdk/). Rows left out: docs/collectors/rocprof.md.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from aorta.parsers.kernel_table import KernelTable
from aorta.parsers.rocprof_trace_scan import CUT_ROW, TraceColumns, ends_with_newline, scan_trace
from aorta.parsers.skips import NUL_MARK, NUL_ROW, Shares, Skips, nul_marked

TRACE_COLUMNS = ("Kernel_Name", "Start_Timestamp", "End_Timestamp")
_MAX_COUNT = 2**63 - 1
_HEADER_LIMIT = 1 << 16                # a header longer than this is not a rocprofv3 header
_ONLY_IN = {"rocm7": {"guid", "stream_id", "lds_block_size", "scratch_size", "vgpr_count",
                      "accum_vgpr_count", "sgpr_count"},
            "rocm6": {"private_segment_size", "group_segment_size"}}


@dataclass
class FileReport:
    """What one CSV file gave. Counts are rows; `note` says why the whole file was refused,
    `skips` which rows (or values) were left out and why."""

    file: str
    rows: int = 0              # data rows seen
    used: int = 0              # rows that added a kernel duration
    filtered: int = 0          # trace rows of another Kind than KERNEL_DISPATCH
    untrusted_calls: int = 0   # stats rows whose Calls is not a non-negative integer
    layout: str | None = None  # trace only: "rocm6", "rocm7", "mixed" or "unknown"
    overflow: bool = False     # a total too large for a float: the file's numbers are not used
    note: str = ""
    skips: Skips = field(default_factory=Skips)


# --- stats ----------------------------------------------------------------------------------

def read_stats(path: Path, table: KernelTable) -> FileReport:
    """Add every whole row of a `*kernel_stats.csv` to `table` (durations in ns):

        "Name","Calls","TotalDurationNs","AverageNs","Percentage","MinNs","MaxNs","StdDev"
        "JacobiIterationKernel",1000,537449866,537449.866000,43.30,520003,560324,6504.934470

    Rows left out go to the report's `skips` (rules: docs/collectors/rocprof.md); a file that
    is not a stats CSV gives a note. Raises OSError when the file cannot be read."""
    report = FileReport(path.name)
    with open(path, "rb") as raw:
        ends_whole = ends_with_newline(raw)
        text = io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace", newline="")
        reader = csv.reader(nul_marked(text))
        if (header := _first_row(reader, report)) is None:
            return report
        try:
            index = _column_index([name.strip() for name in header], ("Name", "TotalDurationNs"),
                                  ("Calls", "MaxNs", "Percentage"))
        except ValueError as exc:
            report.note = str(exc)
            return report
        columns = _StatsColumns(len(header), index["name"], index["totaldurationns"],
                                index.get("calls"), index.get("maxns"), index.get("percentage"))
        shares = Shares(0.0 if columns.percent is not None else None)
        previous: tuple[list[str], int] | None = None     # a row and its number
        for row in _rows(reader, report):
            if previous is not None:
                _add_stats_row(*previous, columns, table, report, shares)
            previous = row, report.rows
        if previous is not None:
            if ends_whole:
                _add_stats_row(*previous, columns, table, report, shares)
            else:
                report.skips.cut_short(CUT_ROW)
    # rocprofv3 prints each share with two decimals: at most 0.005 a row of rounding.
    shares.check(report.skips, report.used, 0.005, "Percentage")
    return report


@dataclass(frozen=True)
class _StatsColumns:
    width: int
    name: int
    total: int
    calls: int | None
    longest: int | None
    percent: int | None


def _rows(reader: Iterator[list[str]], report: FileReport) -> Iterator[list[str]]:
    """Data rows (blank lines dropped); a row the csv module refuses is counted and passed."""
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            report.rows += 1
            report.skips.skip(f"row {report.rows}: unreadable CSV ({exc})")
            continue
        if row:
            report.rows += 1
            yield row


def _first_row(reader: Iterator[list[str]], report: FileReport) -> list[str] | None:
    try:
        header: list[str] | None = next(reader, None)
    except csv.Error as exc:
        report.note = f"unreadable header: {exc}"
        return None
    if not header:
        report.note = "empty file"
        return None
    if any(NUL_MARK in name for name in header):
        report.note = "unreadable header: a NUL byte"
        return None
    return header


def _add_stats_row(row: list[str], number: int, c: _StatsColumns, table: KernelTable,
                   report: FileReport, shares: Shares) -> None:
    at = f"row {number}"
    if len(row) != c.width:
        report.skips.skip(f"{at}: {len(row)} fields, the header has {c.width}")
        return
    if NUL_MARK in "".join(row):
        report.skips.skip(f"{at}: {NUL_ROW}")
        return
    name, total = row[c.name].strip(), _finite(row[c.total])
    if not name:
        report.skips.skip(f"{at}: empty Name")
        return
    if total is None or total < 0:
        report.skips.skip(f"{at}: TotalDurationNs is {row[c.total][:40]!r}")
        return
    calls = _count(row[c.calls]) if c.calls is not None else None
    if calls is None:
        report.untrusted_calls += 1
        if c.calls is not None:
            report.skips.skip(f"{at}: Calls is {row[c.calls][:40]!r} (the time is kept, the "
                              f"count is not)")
    longest = _finite(row[c.longest]) if c.longest is not None else None
    table.add(name, total, calls, longest if longest is not None and longest >= 0 else None)
    report.used += 1
    shares.add(_finite(row[c.percent]) if c.percent is not None else None)


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
    """The trace columns aorta reads, found by name in a header line, and the layout: "rocm7"
    when a column only ROCm 7 writes is there, "rocm6" for ROCm 6 only ones, "mixed" for both.
    Raises ValueError naming the missing columns, or those named twice."""
    if isinstance(header, bytes):
        header = header.decode("utf-8", errors="replace")
    if "\0" in header:
        raise ValueError("unreadable header (a NUL byte)")
    try:
        fields = next(csv.reader([header.lstrip("\ufeff").strip("\r\n")]), [])
    except csv.Error as exc:          # e.g. a bare carriage return inside the line
        raise ValueError(f"unreadable header ({exc})") from None
    names = [f.strip() for f in fields]
    index = _column_index(names, TRACE_COLUMNS, ("Kind",))
    found = [gen for gen, only in _ONLY_IN.items() if index.keys() & only]
    layout = "mixed" if len(found) == 2 else found[0] if found else "unknown"
    return TraceColumns(kind=index.get("kind"), name=index["kernel_name"],
                        start=index["start_timestamp"], end=index["end_timestamp"],
                        width=len(names), layout=layout)


def _column_index(names: list[str], needed: tuple[str, ...],
                  optional: tuple[str, ...]) -> dict[str, int]:
    """Each column's place by lower-cased name. Raises ValueError when a needed column is
    missing, or a column read is named twice (which one holds the values cannot be told)."""
    lower, header = [n.lower() for n in names], f"(header: {', '.join(names)[:200]})"
    missing = [c for c in needed if c.lower() not in lower]
    twice = [c for c in needed + optional if lower.count(c.lower()) > 1]
    if missing or twice:
        raise ValueError(f"no column {', '.join(missing)} {header}" if missing else
                         f"the header names {', '.join(twice)} more than once {header}")
    return {name: i for i, name in enumerate(lower)}


def read_trace(path: Path, table: KernelTable) -> FileReport:
    """Add every `KERNEL_DISPATCH` row of a `*kernel_trace.csv` to `table`: one launch of
    `End_Timestamp - Start_Timestamp` ns per row; rows left out go to `report.skips`.
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
        scan = scan_trace(fh, columns)
    report.rows, report.used, report.filtered = scan.rows, scan.used, scan.filtered
    report.skips = scan.skips
    for name, (total, calls, longest) in scan.kernels.items():
        try:
            total_ns, longest_ns = float(total), float(longest)
        except OverflowError:
            report.overflow = True
            report.note = f"the total of {name.decode('utf-8', 'replace')[:80]!r} overflows"
            continue
        table.add(name.decode("utf-8", errors="replace"), total_ns, calls, longest_ns)
    return report

