"""Reading Nsight Systems' CUDA kernel summary (`nsys stats --report cuda_gpu_kern_sum`, CSV).

One row per kernel name (`gpukernsum` up to 2022; some releases add grid and block columns);
names are quoted when they hold commas or quotes; columns and time unit come from the header:

    Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name
    62.1,186176,3,62058.7,62016.0,62016,62144,73.9,"void gemm<float, 128>(int, float *)"

nsys' own lines before the table (`Generating SQLite file ...`, `Processing [report.sqlite] with
[.../cuda_gpu_kern_sum.py]...`) are skipped; a report without kernels prints
`SKIPPED: report.sqlite does not contain CUDA kernel data.` instead.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from aorta.parsers.kernel_table import KernelTable
from aorta.parsers.nv_numbers import TIME_BASE, parse_number, to_base
from aorta.parsers.skips import NUL_MARK, NUL_ROW, Shares, Skips, nul_marked

NO_KERNELS = "does not contain CUDA kernel data"

_TIMED = re.compile(r"^(?P<label>.*?)\s*\((?P<unit>[^()]+)\)\s*$")   # "Total Time (ns)"
_TOTAL, _INSTANCES, _NAME, _PERCENT = "Total Time", "Instances", "Name", "Time"
_MAX = ("Max", "Maximum")


@dataclass
class KernelSummary:
    """The kernel table of one summary, plus what could not be read."""

    table: KernelTable = field(default_factory=KernelTable)
    rows: int = 0            # data rows seen
    skips: Skips = field(default_factory=Skips)   # rows (or counts) left out, and why
    no_kernels: bool = False  # nsys said the report holds no CUDA kernel data
    header_found: bool = False


def read_kern_sum(path: Path) -> KernelSummary:
    """Read one summary file (or captured stdout). A row cut short or whose total is not a
    finite, non-negative number is left out and counted; an unreadable `Instances` keeps the
    time but not the count. Raises `ValueError` if a header row was found but lacks the
    `Total Time (<unit>)` or `Name` column, or names a unit not of time."""
    with open(path, newline="", encoding="utf-8", errors="replace") as fh:
        return read_kern_sum_lines(fh, path.name)


def read_kern_sum_lines(lines: Iterable[str], label: str = "<stdout>") -> KernelSummary:
    """`read_kern_sum` over lines already open (a file object or a list of strings)."""
    summary = KernelSummary()
    rows = _rows(lines, summary)
    if (header := next(rows, None)) is None:
        return summary
    summary.header_found = True
    columns = _columns(header, label)
    shares = Shares(0.0 if columns.percent is not None else None)
    for row in rows:
        summary.rows += 1
        if why := _add(row, columns, summary, shares):
            summary.skips.skip(f"row {summary.rows}: {why}")
    # nsys prints each share with one decimal: at most 0.05 a row of rounding.
    shares.check(summary.skips, summary.rows, 0.05, "Time (%)")
    return summary


@dataclass(frozen=True)
class _Columns:
    total: int
    total_scale: float       # ns per unit of the Total column
    name: int
    instances: int | None
    max: int | None
    width: int
    percent: int | None


def _rows(lines: Iterable[str], summary: KernelSummary) -> Iterator[list[str]]:
    """The header row then the data rows; nsys' own lines before the header are dropped. A row
    the csv module cannot read ends the table and counts as bad."""
    def table_lines() -> Iterator[str]:
        in_table = False
        for line in lines:
            if not in_table:
                if NO_KERNELS in line:
                    summary.no_kernels = True
                if not (_TOTAL in line and _NAME in line and "," in line):
                    continue
                in_table = True
            if line.strip():
                yield line

    try:
        yield from csv.reader(nul_marked(table_lines()), strict=True)
    except csv.Error as exc:
        summary.skips.skip(f"unreadable CSV after row {summary.rows} ({exc}); the rest is not "
                           f"read")


def _columns(header: list[str], label: str) -> _Columns:
    by_label: dict[str, tuple[int, str]] = {}
    for i, cell in enumerate(header):
        match = _TIMED.match(cell.strip())
        by_label[match["label"] if match else cell.strip()] = (i, match["unit"] if match else "")
    if _TOTAL not in by_label or _NAME not in by_label:
        raise ValueError(f"{label}: header lacks {_TOTAL!r} or {_NAME!r}: {header!r}")
    total_at, unit = by_label[_TOTAL]
    scale, base = to_base(1.0, unit)
    if base != TIME_BASE:
        raise ValueError(f"{label}: {_TOTAL!r} is in {unit!r}, not a unit of time")
    max_at = next((by_label[m][0] for m in _MAX if m in by_label), None)
    instances = by_label.get(_INSTANCES)
    percent = by_label.get(_PERCENT)
    return _Columns(total_at, scale, by_label[_NAME][0],
                    instances[0] if instances else None, max_at, len(header),
                    percent[0] if percent and percent[1] == "%" else None)


def _add(row: list[str], c: _Columns, summary: KernelSummary, shares: Shares) -> str:
    """Add one kernel row; why not, when it is cut short or its total is unreadable. An
    unreadable instance count keeps the time, leaves the count untrusted and is counted too."""
    if len(row) < c.width:
        return f"{len(row)} fields, the header has {c.width} (cut short?)"
    if NUL_MARK in "".join(row):
        return NUL_ROW
    total = parse_number(row[c.total])
    if not (name := row[c.name]):
        return "empty Name"
    if total is None or total < 0:
        return f"Total Time is {row[c.total][:40]!r}"
    calls = _count(row[c.instances]) if c.instances is not None else None
    longest = parse_number(row[c.max]) if c.max is not None else None
    if not summary.table.add(name, total * c.total_scale, calls,
                             longest * c.total_scale if longest is not None else None):
        return "a total that is not a duration"
    if calls is None and c.instances is not None:
        summary.skips.skip(f"{name[:60]!r}: Instances is {row[c.instances][:40]!r} (the time "
                           f"is kept, the count is not)")
    shares.add(parse_number(row[c.percent]) if c.percent is not None else None)
    return ""


def _count(text: str) -> int | None:
    value = parse_number(text)
    return None if value is None or value < 0 or not value.is_integer() else int(value)
